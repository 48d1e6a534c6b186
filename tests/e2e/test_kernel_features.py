"""Kernel features (issue: kernel matrix): what the agent does on a kernel that lacks one.

Each feature is probed at start-up; a missing one turns its part down or off, says so on stderr and
in nodescope_feature_enabled, and the agent runs the rest. On this machine's kernel the older paths
are run with --debug-kernel-lacks, which takes features away from what the probe found, so every
degraded path is exercised on every run (the kernel matrix, tests/kernels, runs real old kernels).
"""
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from bpfmaps import agent_maps, map_keys
from conftest import AGENT, by_pid
from nginx import Nginx
from test_tls import NGINX_TLS, PY_THREADED, assert_each_reported, curl_argv, run_clients

FEATURES = ["ring_buffer", "current_task_btf", "task_storage", "attach_cookie", "uprobe_multi",
            "exit_group_dead", "tp_btf", "socket_hooks"]
# What a 5.10 kernel lacks that this agent can run without.
OLD_KERNEL = "current_task_btf,task_storage,uprobe_multi,exit_group_dead"
# And a 5.4-like one: no ring buffers either, so every stream is a per-CPU perf buffer, and no
# BTF-typed raw tracepoints, so the syscall hooks are raw_tp programs.
OLDER_KERNEL = "ring_buffer,tp_btf," + OLD_KERNEL
KERNELS = pytest.mark.parametrize("lacks", [OLD_KERNEL, OLDER_KERNEL], ids=["5.10", "5.4"])


def lacks_lines(agent):
    return [l for l in agent.stderr().splitlines() if " lacks " in l]


def enabled(agent):
    return {f: agent.metric("nodescope_feature_enabled", feature=f) for f in FEATURES + ["tls"]}


@pytest.fixture(scope="module")
def server():
    n = Nginx(NGINX_TLS, tls=True, workers=1)
    yield n
    n.stop()


def test_features_reported_as_probed(agent_factory):
    """The metric and the start-up lines say the same: a feature at 0 has its line, one at 1 none."""
    a = agent_factory("--events", "proc")
    got = enabled(a)
    assert set(got.values()) <= {0, 1}, got
    missing = {f for f in FEATURES if got[f] == 0}
    lines = lacks_lines(a)
    assert sorted(l.split(" lacks ")[1].split(" ")[0] for l in lines) == sorted(missing), lines
    assert got["ring_buffer"] == 1
    assert got["tls"] == got["attach_cookie"]


def test_pretended_missing_features_are_reported(agent_factory):
    a = agent_factory("--events", "proc", "--debug-kernel-lacks", OLDER_KERNEL + ",attach_cookie")
    got = enabled(a)
    for f in OLDER_KERNEL.split(",") + ["attach_cookie", "tls"]:
        assert got[f] == 0, (f, got)
    lines = "\n".join(lacks_lines(a))
    assert "ring_buffer (5.8+): every stream is a per-CPU perf buffer" in lines, lines
    assert "task_storage (5.13+): per-thread call state lives in an LRU hash" in lines, lines
    assert "attach_cookie (5.15+): no TLS plaintext" in lines, lines
    assert len(lacks_lines(a)) == len(OLDER_KERNEL.split(",")) + 1, lines
    assert "cannot run" not in a.stderr()


def test_streams_are_perf_buffers_without_ring_buffers(agent_factory):
    """Every stream's buffer is a perf event array, with one perf event fd per CPU read by the agent."""
    a = agent_factory("--events", "proc", "--debug-kernel-lacks", "ring_buffer")
    cpus = os.sysconf("SC_NPROCESSORS_ONLN")
    for stream in ("proc", "tcp", "l7", "files"):
        maps = agent_maps(a, "rb_" + stream)
        assert len(maps) == 1 and maps[0]["type"] == "perf_event_array", maps
    # Two perf buffers (records and doorbell) per stream, an event per online CPU in each.
    events = [fd for fd in os.listdir(f"/proc/{a.proc.pid}/fd")
              if os.readlink(f"/proc/{a.proc.pid}/fd/{fd}") == "anon_inode:[perf_event]"]
    assert len(events) >= 4 * 2 * cpus, events
    b = agent_factory("--events", "proc")
    assert all(agent_maps(b, "rb_" + s)[0]["type"] == "ringbuf" for s in ("proc", "tcp", "l7", "files"))


def test_unknown_feature_is_a_usage_error():
    p = subprocess.run([AGENT, "trace", "--debug-kernel-lacks", "task_storage,warp_drive"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 2, p
    assert "unknown feature 'warp_drive'" in p.stderr and "task_storage" in p.stderr, p.stderr


@KERNELS
def test_old_kernel_paths_capture_the_same(agent_factory, server, build_client, lacks):
    """Per-thread state in hashes, task fields copied out, exits claimed in a map, perf-event
    uprobes (and on "5.4" perf buffers for every stream): HTTPS from short-lived and threaded
    clients, and one exit per process, as on 6.18."""
    a = agent_factory("--events", "proc,l7,files", "--debug-kernel-lacks", lacks)
    pids = run_clients(curl_argv(server, "/old"), 20, "/old")
    assert_each_reported(a, pids, "/old", 404)

    threads, each = 8, 50
    p = subprocess.run([sys.executable, "-c", PY_THREADED, str(server.port), str(threads), str(each)],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")

    def threaded(evs):
        return sum(1 for e in evs if e.get("type") == "l7" and e.get("dir") == "out"
                   and e.get("path") == "/threaded" and e.get("tls"))

    a.wait_for(lambda evs: threaded(evs) >= threads * each, what="threaded requests")
    time.sleep(0.3)
    assert threaded(a.snapshot()) == threads * each

    threads_exit = build_client("threads_exit.c", "-pthread")
    runs = []
    for i in range(50):
        q = subprocess.Popen([threads_exit, "16", "exit", "7"])
        assert q.wait(30) == 7
        runs.append(q.pid)
    for pid in runs:
        a.wait_for(lambda evs, pid=pid: by_pid(evs, pid, "exit"), what=f"exit of {pid}")
    time.sleep(0.5)
    evs = a.snapshot()
    assert all(len(by_pid(evs, pid, "exit")) == 1 for pid in runs)
    assert_thread_slots_freed(a)
    assert a.metric_sum("nodescope_events_lost_total") == 0


class Listener:
    """Accepts connections; reads each to EOF, answers `reply` bytes and closes it."""

    def __init__(self, reply):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self.reply = reply
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            while c.recv(1 << 16):
                pass
            c.sendall(b"r" * self.reply)
            c.close()


@KERNELS
def test_old_kernel_paths_tcp_and_http(agent_factory, lacks):
    """Exec and exit with its code, exact TCP connects, accepts and bytes both ways, and plain HTTP
    seen from both sides, with the older kernels' paths (on "5.4" every stream a perf buffer)."""
    a = agent_factory("--events", "proc,tcp,l7", "--debug-kernel-lacks", lacks)
    p = subprocess.Popen(["sh", "-c", "exit 3"])
    assert p.wait(10) == 3
    a.wait_for(lambda evs: [e for e in by_pid(evs, p.pid, "exit") if e["code"] == 3],
               what="exit 3")
    assert len(by_pid(a.snapshot(), p.pid, "exec")) == 1

    srv, n = Listener(reply=777), 100
    try:
        for _ in range(n):
            c = socket.create_connection(("127.0.0.1", srv.port))
            c.sendall(b"s" * 1000)
            c.shutdown(socket.SHUT_WR)
            got = b""
            while True:
                d = c.recv(1 << 16)
                if not d:
                    break
                got += d
            assert len(got) == 777
            c.close()
        dst = f"127.0.0.1:{srv.port}"

        def of(evs, t, d):
            return [e for e in evs if e["type"] == t and e.get("dst") == dst and e.get("dir") == d]

        a.wait_for(lambda evs: len(of(evs, "close", "out")) == n and len(of(evs, "close", "in")) == n,
                   what=f"{n} closes each side")
        evs = a.snapshot()
        assert len(of(evs, "connect", "out")) == n and len(of(evs, "accept", "in")) == n
        assert a.metric_sum("container_net_tcp_successful_connects_total", destination=dst) == n
        assert a.metric_sum("container_net_tcp_bytes_sent_total", destination=dst) == 1000 * n
        assert a.metric_sum("container_net_tcp_bytes_received_total", destination=dst) == 777 * n
    finally:
        srv.sock.close()

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        for i in range(20):
            with urllib.request.urlopen(f"http://127.0.0.1:{web.server_port}/old/{i}") as r:
                assert r.status == 200

        def requests(evs, d):
            return {e["path"] for e in evs if e["type"] == "l7" and e.get("dir") == d
                    and e.get("path", "").startswith("/old/") and e.get("status") == 200}

        want = {f"/old/{i}" for i in range(20)}
        a.wait_for(lambda evs: requests(evs, "out") == want and requests(evs, "in") == want,
                   what="20 requests from both sides")
    finally:
        web.shutdown()
    assert a.metric_sum("nodescope_events_lost_total") == 0
    assert enabled(a)["ring_buffer"] == (0 if "ring_buffer" in lacks else 1)


class Hello(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        body = b"hello\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def live_tids():
    return {int(t) for pid in os.listdir("/proc") if pid.isdigit()
            for t in (os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else [])}


def assert_thread_slots_freed(agent):
    """Without task storage, a thread's slots go at its exit. An entry is stale when it is in a
    dump, its thread is gone at a listing after that dump, and it is still in a dump after the
    listing (a thread that merely exited in between is in neither the listing nor the second)."""
    for name in ("tls_calls",):
        maps = agent_maps(agent, name)
        assert len(maps) == 1 and maps[0]["type"] == "lru_hash", maps
        before = map_keys(maps[0]["id"])
        live = live_tids()
        stale = (before & map_keys(maps[0]["id"])) - live
        assert not stale, (name, sorted(stale)[:10])
