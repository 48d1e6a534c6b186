"""The one way the tests pick a port for a server they start (e2e, the kernel matrix's smoke
suite, packaging): below the kernel's range of ephemeral ports, which a client's connect may
take between the pick and the server's bind (nghttpd once found its port, picked by bind(0),
taken: "Address already in use"). Random, so the servers of one test get different ones;
bindable now, TCP and UDP both. Standard library only: the smoke suite runs it inside VMs."""

import random
import socket


def free_port():
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(10000, low)
        try:
            with socket.socket() as t, socket.socket(type=socket.SOCK_DGRAM) as u:
                t.bind(("127.0.0.1", port))
                u.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
    raise RuntimeError(f"no free port in 10000-{low}")
