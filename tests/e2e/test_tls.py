"""TLS plaintext (issue: OpenSSL-family libraries) against a real nginx with TLS on loopback.

Short-lived clients - curl, openssl s_client, gnutls-cli, Python's ssl - each make one HTTPS request and
exit; every request must be reported with the client's pid, method, path and status, decrypted from
the library calls (tls: true). Also through `sh -c 'exec ...'`, with a copy of libssl at a new path
(a new inode, probed when it is first mapped), a threaded Python client under load, and the server's
(nginx's) inbound side.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from conftest import Agent
from nginx import Nginx

CURL = shutil.which("curl") or "/usr/bin/curl"
OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
GNUTLS_CLI = shutil.which("gnutls-cli") or "/usr/bin/gnutls-cli"
LIBSSL = "/usr/lib/x86_64-linux-gnu/libssl.so.3"
SHORT_LIVED = 300

NGINX_TLS = """
http {{
    access_log off;
    keepalive_requests 100000;
    default_type text/plain;
{temp_paths}
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {crt};
        ssl_certificate_key {key};
        root {d}/www;
        location = /ok {{ return 200 "ok\\n"; }}
        location = /boom {{ return 500; }}
        location /in/ {{ return 200 "in\n"; }}
        location = /nginx_status {{ stub_status; }}
    }}
}}
"""


@pytest.fixture(scope="module")
def tls_tracer():
    # Held first runs: a library copy's or a new program's first run is seen as surely as a
    # repeat launch (test_go_tls.py covers the default, where a first run may beat its probes).
    a = Agent("--events", "l7,files", "--hold-first-runs")
    yield a
    a.stop()


@pytest.fixture(scope="module")
def server(tls_tracer):
    n = Nginx(NGINX_TLS, tls=True, workers=1)
    yield n
    n.stop()


def tls_out(events, pids, path):
    """The client-side l7 events of these pids for path, by pid."""
    out = {}
    for e in events:
        if e.get("type") == "l7" and e.get("dir") == "out" and e.get("pid") in pids and e.get("path") == path:
            out.setdefault(e["pid"], []).append(e)
    return out


def run_clients(argv_of, n, path, stdin=None, expect=None, env=None):
    """Runs n clients one after the other; each must succeed (and print expect). Returns their pids."""
    pids = []
    for i in range(n):
        p = subprocess.Popen(argv_of(i), stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        out, err = p.communicate(stdin, timeout=30)
        assert p.returncode == 0, (argv_of(i), p.returncode, err.decode(errors="replace"))
        assert expect is None or expect in out, (argv_of(i), out, err.decode(errors="replace"))
        pids.append(p.pid)
    return pids


def assert_each_reported(agent, pids, path, status, timeout=30):
    want = set(pids)

    def done(evs):
        got = tls_out(evs, want, path)
        return len(got) == len(want)

    try:
        agent.wait_for(done, timeout=timeout, what=f"{len(want)} TLS requests for {path}")
    finally:
        got = tls_out(agent.snapshot(), want, path)
        missing = sorted(want - set(got))
        assert not missing, f"{len(missing)} of {len(want)} requests not reported, pids {missing[:10]}"
    time.sleep(0.3)
    got = tls_out(agent.snapshot(), want, path)
    for pid, evs in got.items():
        assert len(evs) == 1, evs
        e = evs[0]
        assert e["tls"] is True and e["proto"] == "http" and e["method"] == "GET", e
        assert e["status"] == status, e
    return got


def curl_argv(server, path):
    return lambda i: [CURL, "-sk", "--max-time", "10", "-o", "/dev/null", f"https://{server.addr}{path}?i={i}"]


def test_curl_short_lived_every_request(tls_tracer, server):
    pids = run_clients(curl_argv(server, "/ok"), SHORT_LIVED, "/ok")
    got = assert_each_reported(tls_tracer, pids, "/ok", 200)
    for e in (evs[0] for evs in got.values()):
        assert e["dst"] == server.addr and e["duration_ns"] > 0, e


def test_status_and_path_through_tls(tls_tracer, server):
    pids = run_clients(curl_argv(server, "/boom"), 5, "/boom")
    assert_each_reported(tls_tracer, pids, "/boom", 500)
    pids = run_clients(curl_argv(server, "/nope/x"), 5, "/nope/x")
    assert_each_reported(tls_tracer, pids, "/nope/x", 404)


def test_through_exec_wrapper(tls_tracer, server):
    url = f"https://{server.addr}/ok"
    argv = lambda i: ["sh", "-c", f"exec {CURL} -sk --max-time 10 -o /dev/null '{url}?w={i}'"]
    pids = run_clients(argv, 50, "/ok")  # exec keeps the pid: the request is the wrapper's pid
    assert_each_reported(tls_tracer, pids, "/ok", 200)


def test_openssl_s_client(tls_tracer, server):
    req = b"GET /ok HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    # -ign_eof: wait for the server to close rather than quit at the end of stdin, before the answer.
    argv = lambda i: [OPENSSL, "s_client", "-quiet", "-ign_eof", "-connect", server.addr]
    pids = run_clients(argv, 30, "/ok", stdin=req, expect=b"200 OK")
    assert_each_reported(tls_tracer, pids, "/ok", 200)


def test_gnutls_cli(tls_tracer, server):
    if not os.access(GNUTLS_CLI, os.X_OK):
        pytest.fail("gnutls-cli is missing: apt-get install gnutls-bin (scripts/install-deps.sh)")
    req = b"GET /ok HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    argv = lambda i: [GNUTLS_CLI, "--insecure", "--logfile=/dev/null", "-p", str(server.port), "127.0.0.1"]
    pids = run_clients(argv, 30, "/ok", stdin=req, expect=b"200 OK")
    assert_each_reported(tls_tracer, pids, "/ok", 200)


PY_CLIENT = """
import http.client, ssl, sys
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), context=ctx, timeout=10)
c.request("GET", sys.argv[2]); r = c.getresponse(); r.read(); sys.exit(0 if r.status == 200 else 1)
"""


def test_python_ssl_short_lived(tls_tracer, server):
    argv = lambda i: [sys.executable, "-c", PY_CLIENT, str(server.port), "/ok"]
    pids = run_clients(argv, 30, "/ok")
    assert_each_reported(tls_tracer, pids, "/ok", 200)


PY_THREADED = """
import http.client, ssl, sys, threading
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
port, threads, each = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
bad = []
def work(t):
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
    for i in range(each):
        c.request("GET", f"/threaded?t={t}&i={i}"); r = c.getresponse(); r.read()
        if r.status != 404: bad.append(r.status)
    c.close()
ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
[t.start() for t in ts]; [t.join() for t in ts]
sys.exit(1 if bad else 0)
"""


def test_threaded_python_client_under_load(tls_tracer, server):
    """Return-site probes, not uretprobes: a threaded client must neither crash nor lose a request."""
    threads, each = 8, 250
    p = subprocess.run([sys.executable, "-c", PY_THREADED, str(server.port), str(threads), str(each)],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    want = threads * each

    def count(evs):
        return sum(1 for e in evs if e.get("type") == "l7" and e.get("dir") == "out" and e.get("path") == "/threaded"
                   and e.get("status") == 404 and e.get("tls"))

    tls_tracer.wait_for(lambda evs: count(evs) >= want, timeout=30, what=f"{want} threaded requests")
    time.sleep(0.3)
    assert count(tls_tracer.snapshot()) == want


def test_libssl_copy_at_new_path(tls_tracer, server):
    """A libssl that no process had mapped when the agent started: probed at its first mapping."""
    d = tempfile.mkdtemp(prefix="nodescope-e2e-libssl.")
    try:
        shutil.copy(LIBSSL, os.path.join(d, "libssl.so.3"))
        env = dict(os.environ, LD_LIBRARY_PATH=d)
        pids = run_clients(curl_argv(server, "/copy"), 10, "/copy", env=env)
        assert_each_reported(tls_tracer, pids, "/copy", 404)
        probes = [e for e in tls_tracer.snapshot() if e.get("type") == "tls_probe" and d in e.get("file", "")]
        assert len(probes) == 1 and probes[0]["library"] == "openssl" and probes[0]["probes"] > 4, probes
        assert probes[0]["pid"] == pids[0], (probes, pids[0])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_library_probed_after_its_loader_closed_the_fd(agent_factory):
    """The agent reads a library's mapping only after the loader has closed its fd (the agent
    stopped meanwhile, as a busy one is late): it opens the file through the mapping, which the
    socket hooks name by the loader's first, read-only mapping of it, the syscall hooks by its
    executable segment."""
    a = agent_factory("--events", "files")
    d = tempfile.mkdtemp(prefix="nodescope-e2e-libssl-late.")
    lib = os.path.join(d, "libssl.so.3")
    shutil.copy(LIBSSL, lib)
    p = None
    a.proc.send_signal(signal.SIGSTOP)
    try:
        p = subprocess.Popen([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1]); "
                              "print('mapped', flush=True); sys.stdin.read()", lib],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "mapped"
        # dlopen has returned: the loader closed the library's fd, the mapping stays.
        assert not [f for f in os.listdir(f"/proc/{p.pid}/fd")
                    if os.path.realpath(f"/proc/{p.pid}/fd/{f}") == lib]
    finally:
        a.proc.send_signal(signal.SIGCONT)
    try:
        probes = a.wait_for(lambda evs: [e for e in evs if e.get("type") == "tls_probe" and
                                         e.get("pid") == p.pid and d in e.get("file", "")],
                            what="the late library's tls_probe line")
        assert probes[0]["library"] == "openssl" and probes[0]["probes"] > 4, probes
    finally:
        p.stdin.close()
        p.wait(timeout=10)
        shutil.rmtree(d, ignore_errors=True)


def test_server_inbound_requests(tls_tracer, server):
    """nginx (started after the agent, long-running): its inbound TLS requests, by worker pid."""
    n = 100
    before = tls_tracer.metric_sum("container_http_inbound_requests_total", container_id=server.container, status="2xx")
    c = server.connection()
    for i in range(n):
        c.request("GET", f"/in/x?i={i}")
        r = c.getresponse()
        r.read()
        assert r.status == 200
    c.close()
    workers = set(server.workers())

    def inbound(evs):
        return [e for e in evs if e.get("type") == "l7" and e.get("dir") == "in" and e.get("path") == "/in/x"]

    tls_tracer.wait_for(lambda evs: len(inbound(evs)) >= n, timeout=20, what=f"{n} inbound TLS requests")
    time.sleep(0.3)
    evs = inbound(tls_tracer.snapshot())
    assert len(evs) == n
    for e in evs:
        assert e["tls"] is True and e["pid"] in workers and e["dst"] == server.addr and e["status"] == 200, e
    after = tls_tracer.metric_sum("container_http_inbound_requests_total", container_id=server.container, status="2xx")
    assert after - before == n


def test_probe_metrics(tls_tracer, server):
    m = tls_tracer.metrics()
    assert m["nodescope_tls_uprobes"][frozenset()] >= 10
    assert m["nodescope_tls_probed_files"][frozenset()] >= 2  # libssl and libgnutls at least
    assert m["nodescope_tls_files_inspected_total"][frozenset()] >= 2
    for reason in ("file_gone", "unreadable", "return_sites", "attach", "table_full"):
        assert frozenset({("reason", reason)}) in m["nodescope_tls_probe_failures_total"]
    assert m["nodescope_tls_probe_failures_total"][frozenset({("reason", "attach")})] == 0
    assert m["nodescope_tls_probe_failures_total"][frozenset({("reason", "return_sites")})] == 0


@pytest.fixture(scope="module")
def static_client(build_client):
    """tls_get.c linked statically: SSL_write/SSL_read in the executable itself."""
    return build_client("tls_get.c", "-static", libs=("-lssl", "-lcrypto", "-lpthread"))


def probes_of(agent, needle):
    return [e for e in agent.snapshot() if e.get("type") == "tls_probe" and needle in e.get("file", "")]


def test_statically_linked_client_probed_at_exec(tls_tracer, server, static_client):
    """A program built after the agent started, with OpenSSL linked in: probed from its exec event."""
    pids = run_clients(lambda i: [static_client, str(server.port), f"/static/{i}"], 1, "/static/0")
    tls_tracer.wait_for(lambda evs: probes_of(tls_tracer, static_client), timeout=10, what="exe probed")
    first = probes_of(tls_tracer, static_client)
    assert len(first) == 1 and first[0]["library"] == "openssl" and first[0]["functions"] >= 2, first
    # Probed from its first process's exec, which was held until then: its request was seen too.
    assert first[0]["pid"] == pids[0] and first[0]["since_ns"] > 0, first
    assert_each_reported(tls_tracer, pids, "/static/0", 404)
    for i in range(1, 21):
        p = run_clients(lambda _: [static_client, str(server.port), f"/static/{i}"], 1, f"/static/{i}")
        assert_each_reported(tls_tracer, p, f"/static/{i}", 404)
    assert len(probes_of(tls_tracer, static_client)) == 1  # one file, probed once


def test_library_only_visible_in_another_mount_namespace(tls_tracer, server):
    """Like a container's: a libssl on a tmpfs mounted in a private mount namespace, reached through /proc."""
    script = f"""
set -e
mount -t tmpfs nodescope-e2e /mnt
cp {LIBSSL} /mnt/libssl.so.3
for i in 1 2 3 4 5; do
    LD_LIBRARY_PATH=/mnt {CURL} -sk --max-time 10 -o /dev/null -w 'code %{{http_code}}\\n' https://{server.addr}/mntns/$i &
    echo pid $!
    wait $!
done
"""
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    # Each line says what it is: a pid can have three digits, as a status code does.
    words = p.stdout.decode().split()
    pids = [int(v) for k, v in zip(words[::2], words[1::2]) if k == "pid"]
    assert len(pids) == 5, p.stdout
    for i, pid in enumerate(pids, 1):
        assert_each_reported(tls_tracer, [pid], f"/mntns/{i}", 404)
    probes = probes_of(tls_tracer, "/mnt/libssl.so.3")
    assert len(probes) == 1 and probes[0]["pid"] == pids[0], probes


def test_probes_released_when_unused_and_kept_while_mapped(agent_factory, server, static_client):
    """--tls-release-after: a file no process maps loses its probes (and gets them back when run
    again); one a running process still maps keeps them; the host's libssl is never released."""
    a = agent_factory("--events", "l7,files", "--tls-release-after", "1")
    d = tempfile.mkdtemp(prefix="nodescope-e2e-release.")
    holder = None
    try:
        exe = os.path.join(d, "tls_get")
        shutil.copy(static_client, exe)
        os.mkdir(os.path.join(d, "lib"))
        shutil.copy(LIBSSL, os.path.join(d, "lib", "libssl.so.3"))
        # A long-running process mapping its own libssl copy (Python's ssl module loads it).
        holder = subprocess.Popen([sys.executable, "-c", "import ssl, time; print('up', flush=True); time.sleep(60)"],
                                  env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(d, "lib")),
                                  stdout=subprocess.PIPE)
        assert holder.stdout.readline() == b"up\n"
        run_clients(lambda i: [exe, str(server.port), "/release/1"], 1, "/release/1")
        a.wait_for(lambda evs: probes_of(a, exe) and probes_of(a, "/lib/libssl.so.3"), timeout=10,
                   what="both files probed")
        time.sleep(1.5)
        # Any new executable mapping brings the check along: no timer does it.
        trigger = os.path.join(d, "true")
        shutil.copy("/bin/true", trigger)
        subprocess.run([trigger], check=True)
        released = lambda evs: [e for e in evs if e.get("type") == "tls_release"]
        a.wait_for(released, timeout=10, what="a tls_release line")
        time.sleep(0.3)
        rel = released(a.snapshot())
        # Not the copy the holder maps, not the host's (other programs of the node may go too).
        assert [e["file"] for e in rel if e["file"].startswith(d)] == [exe], rel
        assert a.metric("nodescope_tls_files_released_total") == len(released(a.snapshot()))
        # Run again: probed afresh from its exec, and its requests seen.
        pids = run_clients(lambda i: [exe, str(server.port), "/release/2"], 1, "/release/2")
        a.wait_for(lambda evs: len(probes_of(a, exe)) == 2, timeout=10, what="probed again")
        pids += run_clients(lambda i: [exe, str(server.port), "/release/3"], 1, "/release/3")
        assert_each_reported(a, pids[1:], "/release/3", 404)
    finally:
        if holder:
            holder.kill()
            holder.wait()
        shutil.rmtree(d, ignore_errors=True)


def test_no_tls_flag(agent_factory, server):
    a = agent_factory("--events", "l7,files", "--no-tls")
    pids = run_clients(curl_argv(server, "/notls"), 3, "/notls")
    time.sleep(0.5)
    evs = a.snapshot()
    assert not [e for e in evs if e.get("type") == "tls_probe"], evs
    # Neither plaintext (no probes) nor ciphertext (recognised and skipped) of these requests.
    assert not [e for e in evs if e.get("type") == "l7" and e.get("dst") == server.addr], evs
    assert "nodescope_tls_uprobes" not in a.metrics()


def test_perf_event_uprobes_as_on_older_kernels(agent_factory, server):
    """Kernels before 6.6 have no uprobe_multi links: one perf-event uprobe per site works the same."""
    a = agent_factory("--events", "l7,files", "--debug-kernel-lacks", "uprobe_multi")
    pids = run_clients(curl_argv(server, "/perf"), 5, "/perf")
    assert_each_reported(a, pids, "/perf", 404)
    uprobes = a.metric("nodescope_tls_uprobes")
    assert uprobes >= 8
    # The kernel detaches perf-event uprobes one at a time, two grace periods each: the stop
    # takes as long as the node has TLS files mapped (a figure, printed; not a pass mark).
    started = time.monotonic()
    assert a.stop(timeout=300) == 0
    print(f"shutdown with {uprobes:.0f} perf-event uprobes took {time.monotonic() - started:.2f} s")


def test_new_program_on_a_reused_inode_number_is_probed(tls_tracer, static_client):
    """A deleted file's inode number is soon given to a new file: one program run and deleted,
    then a TLS program landing on the same number must still be inspected and probed (the
    inode generation tells them apart)."""
    d = tempfile.mkdtemp(prefix="nodescope-e2e-reuse.", dir=os.path.dirname(static_client))
    reused = []
    try:
        for i in range(10):
            first = os.path.join(d, f"true{i}")
            shutil.copy("/bin/true", first)
            subprocess.run([first], check=True)
            ino = os.stat(first).st_ino
            os.unlink(first)
            exe = os.path.join(d, f"tls{i}")
            shutil.copy(static_client, exe)
            if os.stat(exe).st_ino != ino:
                continue
            reused.append(exe)
            subprocess.run([exe, "1", "/"], capture_output=True, timeout=30)
            tls_tracer.wait_for(lambda evs: [e for e in probes_of(tls_tracer, exe) if e["file"] == exe],
                                timeout=20, what=f"{exe} (reused inode {ino}) probed")
        # The filesystem under the test's temporary dir reuses inode numbers (ext4 and tmpfs do).
        assert reused, "no inode number was reused: the case was not exercised"
    finally:
        shutil.rmtree(d, ignore_errors=True)
