"""TLS plaintext from Go programs (crypto/tls linked in, stripped or not), built here with Debian's go.

Every launch of a short-lived Go HTTPS client must be reported with its pid, method, path and status;
also through `sh -c 'exec ...'`, unstripped, built after the agent started, and as fresh copies (a new
inode each launch, the first-run case). A Go HTTPS server's inbound requests are reported by its pid.
"""
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import Agent, free_port
from nginx import Nginx, self_signed_cert
from test_tls import NGINX_TLS, assert_each_reported, probes_of, run_clients

LAUNCHES = 300


@pytest.fixture(scope="module")
def go_tracer():
    a = Agent("--events", "l7,files")
    yield a
    a.stop()


@pytest.fixture(scope="module")
def server(go_tracer):
    n = Nginx(NGINX_TLS, tls=True, workers=1)
    yield n
    n.stop()


@pytest.fixture(scope="module")
def go_bin(go_tracer, build_go):
    """The Go programs, built after the agent started: stripped and unstripped client, server."""
    d = tempfile.mkdtemp(prefix="nodescope-e2e-go.")
    out = {"dir": d}
    for name, src, flags in (("client_stripped", "go_get.go", ["-ldflags=-s -w"]),
                             ("client", "go_get.go", []),
                             ("serve", "go_serve.go", ["-ldflags=-s -w"])):
        out[name] = build_go(src, *flags, out=os.path.join(d, name))
    yield out
    shutil.rmtree(d, ignore_errors=True)


def go_argv(exe, server, path):
    return lambda i: [exe, f"https://{server.addr}{path}?i={i}"]


def first_launch_probed(agent, exe, argv_of, path, expect):
    """Launches exe once (built after the agent started: a first run) and waits for its probes.
    Whether that run beat its probes is a benchmark figure (bench/shortlived), not asserted; that
    it was probed from its own exec is. Returns the launch's pid."""
    pid = run_clients(argv_of, 1, path, expect=expect)[0]
    exact = lambda: [e for e in probes_of(agent, exe) if e["file"] == exe]
    agent.wait_for(lambda evs: exact(), timeout=20, what=f"{exe} probed")
    probes = exact()
    assert len(probes) == 1 and probes[0]["pid"] == pid, (probes, pid)
    return pid


def test_stripped_client_every_launch(go_tracer, server, go_bin):
    """Once a program is probed, every later launch is seen: no race is left."""
    exe = go_bin["client_stripped"]
    first_launch_probed(go_tracer, exe, go_argv(exe, server, "/ok"), "/ok", b"200")
    pids = run_clients(go_argv(exe, server, "/ok"), LAUNCHES, "/ok", expect=b"200")
    got = assert_each_reported(go_tracer, pids, "/ok", 200)
    for evs in got.values():
        assert evs[0]["dst"] == server.addr and evs[0]["duration_ns"] > 0, evs
    probes = [e for e in probes_of(go_tracer, exe) if e["file"] == exe]
    assert len(probes) == 1 and probes[0]["library"] == "go" and probes[0]["functions"] == 2, probes
    assert probes[0]["version"].startswith("go1."), probes


def test_status_and_path(go_tracer, server, go_bin):
    pids = run_clients(go_argv(go_bin["client_stripped"], server, "/boom"), 5, "/boom", expect=b"500")
    assert_each_reported(go_tracer, pids, "/boom", 500)
    pids = run_clients(go_argv(go_bin["client_stripped"], server, "/nope/x"), 5, "/nope/x", expect=b"404")
    assert_each_reported(go_tracer, pids, "/nope/x", 404)


def test_through_exec_wrapper(go_tracer, server, go_bin):
    exe = go_bin["client_stripped"]
    argv = lambda i: ["sh", "-c", f"exec {exe} 'https://{server.addr}/ok?w={i}'"]
    pids = run_clients(argv, 50, "/ok", expect=b"200")
    assert_each_reported(go_tracer, pids, "/ok", 200)


def test_unstripped_client(go_tracer, server, go_bin):
    exe = go_bin["client"]
    first_launch_probed(go_tracer, exe, go_argv(exe, server, "/unstripped"), "/unstripped", b"404")
    pids = run_clients(go_argv(exe, server, "/unstripped"), 20, "/unstripped", expect=b"404")
    assert_each_reported(go_tracer, pids, "/unstripped", 404)


def fresh_copies(src, n, directory):
    """n copies of src, each a new inode (a program never run before, as far as the agent knows)."""
    out = []
    for i in range(n):
        exe = os.path.join(directory, f"copy{i}")
        shutil.copy(src, exe)
        out.append(exe)
    return out


def test_fresh_copies_each_probed_from_its_own_exec(go_tracer, server, go_bin):
    """Each launch a new inode: probed from its own exec, with the plan made for the first copy.
    (How many of these first runs beat their probes is bench/shortlived's go-first row.)"""
    d = tempfile.mkdtemp(prefix="nodescope-e2e-gocopy.")
    reused = go_tracer.metric("nodescope_tls_plans_reused_total")
    try:
        pids = []
        for i, exe in enumerate(fresh_copies(go_bin["client_stripped"], 20, d)):
            # Alive until its probe line is out: a copy that exits first cannot be opened any
            # more, which is a race with the agent, not what this test is about.
            p = subprocess.Popen([exe, f"https://{server.addr}/first?i={i}", "linger"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert p.stdout.readline() == b"404\n"
            go_tracer.wait_for(lambda evs: [e for e in probes_of(go_tracer, d) if e["pid"] == p.pid],
                               timeout=30, what=f"the probe of copy {i}")
            p.stdin.close()
            assert p.wait(10) == 0
            pids.append(p.pid)
        probes = probes_of(go_tracer, d)
        assert sorted(e["pid"] for e in probes) == sorted(pids), (probes, pids)
        assert all(e["probes"] > 0 and e["library"] == "go" for e in probes), probes
        # Same program, same build id: each copy reuses a plan made before (the first copy
        # may plan afresh if other programs have rotated the plan cache since).
        assert go_tracer.metric("nodescope_tls_plans_reused_total") - reused >= 19
        delay = go_tracer.metrics()["nodescope_tls_probe_delay_seconds_count"][frozenset()]
        assert delay >= 20, delay
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_held_first_runs_are_all_captured(agent_factory, server, go_bin):
    """--hold-first-runs: each fresh copy waits at its exec until probed, so every first run's
    request is seen, and no process is left stopped."""
    a = agent_factory("--events", "l7,files", "--hold-first-runs")
    d = tempfile.mkdtemp(prefix="nodescope-e2e-gohold.")
    try:
        pids = []
        for i, exe in enumerate(fresh_copies(go_bin["client_stripped"], 20, d)):
            pids += run_clients(lambda _: [exe, f"https://{server.addr}/held?i={i}"], 1, "/held", expect=b"404")
        assert_each_reported(a, pids, "/held", 404)
        m = a.metrics()
        assert m["nodescope_first_run_hold_seconds_count"][frozenset()] >= 20
        assert m["nodescope_first_run_holds_orphaned_total"][frozenset()] == 0
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_go_server_inbound(go_tracer, go_bin):
    d = tempfile.mkdtemp(prefix="nodescope-e2e-goserve.")
    key, crt = self_signed_cert(d)
    port = free_port()
    srv = subprocess.Popen([go_bin["serve"], f"127.0.0.1:{port}", crt, key], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    try:
        assert srv.stdout.readline() == b"listening\n", srv.stderr.read()
        # A first run: its probes are attached from the files stream while it starts, and
        # whether they beat its first TLS read is a benchmark figure. Requests go once they are.
        exe = go_bin["serve"]
        go_tracer.wait_for(lambda evs: [e for e in probes_of(go_tracer, exe) if e["file"] == exe],
                           timeout=20, what=f"{exe} probed")
        n = 50
        for i in range(n):
            # HTTP/1.1: Go offers h2 by ALPN, and HTTP/2 is not parsed (yet).
            p = subprocess.run(["curl", "-sk", "--http1.1", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}",
                                f"https://127.0.0.1:{port}/ok?i={i}"], capture_output=True)
            assert p.stdout == b"200", p

        def inbound(evs):
            return [e for e in evs if e.get("type") == "l7" and e.get("dir") == "in" and e.get("pid") == srv.pid]

        go_tracer.wait_for(lambda evs: len(inbound(evs)) >= n, timeout=20, what=f"{n} inbound requests")
        time.sleep(0.3)
        evs = inbound(go_tracer.snapshot())
        assert len(evs) == n
        for e in evs:
            assert e["tls"] is True and e["path"] == "/ok" and e["status"] == 200, e
            assert e["dst"] == f"127.0.0.1:{port}", e
    finally:
        srv.kill()
        srv.wait()
        shutil.rmtree(d, ignore_errors=True)
