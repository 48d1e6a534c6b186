"""Coroot's per-process opt-outs: a process started with COROOT_EBPF_TRACES=disabled in its
environment (a value containing "disabled", as Coroot's proc/flags.go reads it) makes no trace
lines for its requests; its requests are still counted, and other processes' are traced. Read
at the process's exec, and by the start-up scan for one that was running before the agent.
COROOT_LOG_MONITORING and COROOT_EBPF_PROFILING are kept per process too, for features
nodescope does not have yet: nothing observable to test."""
import os
import shutil
import socket
import subprocess

from conftest import Agent, free_port, wait_until

CURL = shutil.which("curl") or "/usr/bin/curl"
PYTHON = "/usr/bin/python3"


def http_server(port, opt_out):
    env = dict(os.environ)
    env.pop("COROOT_EBPF_TRACES", None)
    if opt_out:
        env["COROOT_EBPF_TRACES"] = "traces-disabled"
    p = subprocess.Popen([PYTHON, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                         cwd="/", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def listening():
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0
    wait_until(listening, "http.server to listen", timeout=20, proc=p)
    return p


def curl(port):
    """GET / from a curl not opted out; returns its pid and its local address."""
    p = subprocess.run([CURL, "-sS", "--noproxy", "*", "-o", "/dev/null", "-w", "%{local_port}",
                        f"http://127.0.0.1:{port}/"], capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    return f"127.0.0.1:{p.stdout.strip()}"


def l7(events, **want):
    return [e for e in events if e.get("type") == "l7" and all(e.get(k) == v for k, v in want.items())]


def test_coroot_ebpf_traces_disabled_keeps_a_process_requests_out_of_traces():
    ports = [free_port() for _ in range(3)]
    before = http_server(ports[0], opt_out=True)  # found by the start-up scan
    servers = [before]
    a = Agent("--events", "l7")
    try:
        servers += [http_server(ports[1], opt_out=True), http_server(ports[2], opt_out=False)]
        srcs = [curl(port) for port in ports]  # one after the other: their records in order
        # The last server's request, both sides, comes after the others' in the l7 stream.
        evs = a.wait_for(lambda evs: l7(evs, dir="in", src=srcs[2]) and l7(evs, dir="out", src=srcs[2])
                         and evs, what="the traced server's request")
        for port, src, srv in zip(ports, srcs, servers):
            dst = f"127.0.0.1:{port}"
            ins = l7(evs, dir="in", dst=dst)
            assert l7(evs, dir="out", src=src, dst=dst), f"curl to {dst} is traced"
            if srv is servers[2]:
                assert [e["pid"] for e in ins] == [srv.pid], ins
            else:
                assert ins == [], f"{dst}'s server opted out: {ins}"
        # Their requests still count (Coroot keeps the metrics, only the traces go): the three
        # servers are in this test's container.
        assert a.metric_sum("container_http_inbound_requests_total", status="2xx") >= 3
    finally:
        a.stop()
        for s in servers:
            s.kill()
            s.wait(10)
