"""The agent run as Kubernetes DaemonSets run it (ours, packaging/kubernetes/daemonset.yaml, and
the Coroot operator's): the host's PID namespace and no host network, i.e. a network namespace of
its own, linked to the host by a veth as a pod is. What it reports must still be the host's:

- actual_destination through a DNAT rule in the host's namespace (a pod -> Service connection:
  the translation is in the host's conntrack, not in the agent's), and through one inside the
  pod's own namespace (found there: the host's conntrack sees that connection translated);
- loopback connections and listens of the host's processes (127.0.0.1 is a service of the node
  in the host's namespace only, whichever namespace the agent is in);
- node_net_* of the host's interfaces;
- per-process resources read through taskstats (genetlink) for a host process.

The agent is started by podns_run.py, which also gives it a /proc/1/ns/net it can read (see
there). Interfaces, namespaces and nftables tables are named after this pytest process.
"""
import os
import random
import socket
import threading

import pytest

import conftest
from conftest import wait_until
from netns import PYTHON, host_linked, run, tool  # noqa: F401  (fixture)
from test_container_resources import check_cpu_contention_delay, container  # noqa: F401
from test_node_metrics import NET_RE
from test_tcp_netns import CLIENT, EVENT_TIMEOUT, SERVER, start, wait_event

HERE = os.path.dirname(os.path.abspath(__file__))
# The agent's veth: its end in the root namespace looks like a NIC (Coroot's node_net_* filter
# keeps it) and so does the one in the agent's namespace, which the root namespace lacks.
AGENT_HOST_IF = f"eth{65000 + os.getpid() % 5000}"
AGENT_IF = f"eth{70000 + os.getpid() % 5000}"
POD_HOST_IF = f"vds{os.getpid() % 100000}"  # a pod's veth: no NIC's name, as on a node
SERVICE_IP = "10.217.0.10"  # a made-up ClusterIP: only the host's DNAT rule knows it


def ino(path):
    return os.stat(path).st_ino


@pytest.fixture
def pod_agent(agent_factory, host_linked, monkeypatch, tmp_path):
    """pod_agent(*args) -> the agent in a network namespace of its own with the host's PIDs,
    scraped at its veth's address; its namespace is .link (a HostLinked)."""
    def make(*args):
        link = host_linked("dsagent", 1, AGENT_HOST_IF, AGENT_IF)
        wrapper = tmp_path / "agent"
        wrapper.write_text(f'#!/bin/sh\nexec {PYTHON} {HERE}/podns_run.py {link.ns} '
                           f'{conftest.AGENT} "$@"\n')
        wrapper.chmod(0o755)
        monkeypatch.setattr(conftest, "AGENT", str(wrapper))
        a = agent_factory(*args, listen_host=link.inner_ip)
        pid = a.proc.pid
        # As the DaemonSet has it: not the host's network namespace, the host's PID namespace.
        assert ino(f"/proc/{pid}/ns/net") == ino(f"/run/netns/{link.ns}")
        assert ino(f"/proc/{pid}/ns/net") != ino("/proc/self/ns/net")
        assert ino(f"/proc/{pid}/ns/pid") == ino("/proc/self/ns/pid")
        a.link = link
        return a
    return make


def tcp_series(agent, name, **labels):
    """The series of name whose labels include the given ones: [(labels, value)]."""
    want = set(labels.items())
    return [(dict(k), v) for k, v in agent.metrics().get(name, {}).items() if want <= set(k)]


def wait_series(agent, name, what, **labels):
    return wait_until(lambda: tcp_series(agent, name, **labels), what, timeout=EVENT_TIMEOUT)


class ReplyServer:
    """A listener in this process (the host's network namespace) that reads each connection to
    EOF and answers "received N", in a thread."""

    def __init__(self, host):
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.sock.settimeout(60)
        self.addr = "%s:%d" % self.sock.getsockname()
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return  # shut down, or nobody came within 60 s
            with c:
                c.settimeout(60)
                n = 0
                while chunk := c.recv(65536):
                    n += len(chunk)
                c.sendall(b"received %d" % n)

    def close(self):
        # The accept is woken by the shutdown, and the thread ended before the fd is closed: a
        # blocked accept on a closed fd would be on the next file given that number (a pipe).
        self.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(10)
        assert not self.thread.is_alive()
        self.sock.close()


def test_nat_through_the_hosts_dnat(pod_agent, host_linked):
    """A pod's client connects to a Service IP that only the host's nftables DNAT knows: the
    agent, in a namespace of its own, reports destination = the Service IP and actual_destination
    = the real server, from the host's conntrack."""
    a = pod_agent("--events", "tcp,proc")
    pod = host_linked("dspod", 2, POD_HOST_IF, "eth0")
    server = ReplyServer(pod.host_ip)
    svc_port = random.randrange(20000, 60000)
    table = f"nodescope_ds_{os.getpid()}"
    run(tool("nft"), "-f", "-", input=f"""
table ip {table} {{
    chain pre {{
        type nat hook prerouting priority -100;
        iifname "{POD_HOST_IF}" ip daddr {SERVICE_IP} tcp dport {svc_port} dnat to {server.addr}
    }}
}}
""")
    try:
        client = start(a, pod, pod.ns, CLIENT, SERVICE_IP, svc_port, 1000)
        out = client.json(EVENT_TIMEOUT)
        assert out["errno"] == 0 and out["reply"] == "received 1000", out
        service = f"{SERVICE_IP}:{svc_port}"
        wait_event(a, "connect", f"the client's connect to {service}", since=client.since,
                   pid=client.pid, dst=service)
        got = wait_series(a, "container_net_tcp_successful_connects_total",
                          f"a connect to {service} with its actual destination",
                          destination=service)
        assert [(s["actual_destination"], v) for s, v in got] == [(server.addr, 1)], got
    finally:
        run(tool("nft"), "delete", "table", "ip", table, check=False)
        server.close()


def test_nat_inside_the_pods_namespace(pod_agent, host_linked):
    """NAT in the pod's own namespace (an output DNAT there, as a sidecar's redirect is): found
    in the connecting process's namespace, which the host's conntrack knows only translated."""
    a = pod_agent("--events", "tcp,proc")
    pod = host_linked("dspod", 2, POD_HOST_IF, "eth0")
    server = ReplyServer(pod.host_ip)
    try:
        svc_port = random.randrange(20000, 60000)
        pod.nft(pod.ns, f"""
table ip nodescope_ds {{
    chain out {{
        type nat hook output priority -100;
        ip daddr {SERVICE_IP} tcp dport {svc_port} dnat to {server.addr}
    }}
}}
""")
        client = start(a, pod, pod.ns, CLIENT, SERVICE_IP, svc_port, 1000)
        out = client.json(EVENT_TIMEOUT)
        assert out["errno"] == 0 and out["reply"] == "received 1000", out
        service = f"{SERVICE_IP}:{svc_port}"
        got = wait_series(a, "container_net_tcp_successful_connects_total",
                          f"a connect to {service} with its actual destination",
                          destination=service)
        assert [(s["actual_destination"], v) for s, v in got] == [(server.addr, 1)], got
    finally:
        server.close()


def test_host_loopback_connections_and_listens(pod_agent, host_linked):
    """Loopback listens and connections of the host's processes are the node's services, as
    Coroot judges them (against PID 1's namespace), with the agent in a namespace of its own: a
    listen on 127.0.0.1, a wildcard listen (expanded, 127.0.0.1 among its addresses) and a
    connect to each. A pod's own loopback listen is still none of the node's."""
    a = pod_agent("--events", "tcp,proc")
    lo, wildcard = ReplyServer("127.0.0.1"), ReplyServer("0.0.0.0")
    try:
        for port in (lo.port, wildcard.port):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                c.shutdown(socket.SHUT_WR)
                assert c.recv(100) == b"received 0"
        for port in (lo.port, wildcard.port):
            addr = f"127.0.0.1:{port}"
            wait_series(a, "container_net_tcp_listen_info", f"the listen on {addr}",
                        listen_addr=addr)
            got = wait_series(a, "container_net_tcp_successful_connects_total",
                              f"the connect to {addr}", destination=addr)
            assert [(s["actual_destination"], v) for s, v in got] == [(addr, 1)], got
    finally:
        lo.close()
        wildcard.close()

    pod = host_linked("dspod", 2, POD_HOST_IF, "eth0")
    port = random.randrange(20000, 60000)
    inner = start(a, pod, pod.ns, SERVER, "127.0.0.1", port)
    # Its listen event is printed after its listen_info was decided on.
    wait_event(a, "listen", "the pod's loopback listen", since=inner.since, pid=inner.pid,
               addr=f"127.0.0.1:{port}")
    assert not tcp_series(a, "container_net_tcp_listen_info", listen_addr=f"127.0.0.1:{port}")


def test_node_network_metrics_are_the_hosts(pod_agent):
    """node_net_* show the host's interfaces (one only the root namespace has is there), not the
    agent's own (its veth end is named like a NIC too, and is up with an address)."""
    a = pod_agent()
    link = a.link
    m = a.metrics()
    shown = {dict(k)["interface"] for k in m["node_net_interface_up"]}
    assert link.host_if in shown and link.inner_if not in shown, shown
    assert all(NET_RE.match(n.lower()) for n in shown), shown
    ips = {dict(k)["ip"] for k in m["node_net_interface_ip"]
           if dict(k)["interface"] == link.host_if}
    assert ips == {link.host_ip}, ips
    assert not [k for k in m["node_net_interface_ip"] if dict(k)["ip"] == link.inner_ip]


def test_per_process_resources_of_a_host_process(pod_agent, container):
    """Taskstats (genetlink) answers for the host's processes with the agent in a namespace of
    its own: two burners of the host pinned to one CPU wait for each other, and their
    container's CPU delay is the sum of their run delays (/proc/PID/schedstat)."""
    a = pod_agent("--events", "proc")
    check_cpu_contention_delay(a, container("dsdelay"))
    assert "no taskstats" not in a.stderr() and "taskstats refused" not in a.stderr()
