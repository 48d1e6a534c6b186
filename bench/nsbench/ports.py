"""A TCP port of 127.0.0.1 for an agent's /metrics or a server: below the ephemeral range (no
connection of the machine takes it meanwhile), free now, and not used before in this run."""

import random
import socket

from .procfs import read_text


def free_port(used, low=10000, high=None):
    """The port (added to the set `used`), or None if 200 tries found none."""
    if high is None:
        try:
            eph_low = int(read_text("/proc/sys/net/ipv4/ip_local_port_range").split()[0])
        except (OSError, ValueError, IndexError):
            eph_low = 32768
        high = eph_low - 1 if eph_low - 1 > low + 100 else 65000
    for _ in range(200):
        port = random.randint(low, high)
        if port in used:
            continue
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        used.add(port)
        return port
    return None


def need_port(used, low=10000, high=None):
    """free_port, or the script dies."""
    from .cli import die
    port = free_port(used, low, high)
    if port is None:
        die("cannot find a free TCP port on 127.0.0.1")
    return port
