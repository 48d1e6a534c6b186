#!/usr/bin/env python3
"""The kernel matrix's smoke suite, run the same way on this machine and inside each VM
(tests/kernels/matrix.py), on every architecture: the agent (`nodescope trace`) against a known
workload — nginx on loopback over HTTP and HTTPS, curl (OpenSSL), a Go HTTPS client (Go's own
crypto/tls, whose probes read registers by the architecture's Go ABI), a short-lived process, a
refused connect, on x86 a 32-bit HTTP client (its syscalls from another table) — then SIGTERM.

It writes a summary (JSON) of what was seen, for the matrix to compare with the host's (another
architecture's with every check passing):
  checks           named booleans, each one thing the agent must do on every kernel
  kernel_features  what this kernel has of what the agent can use, read from its BTF and tracefs,
                   and whether it runs 32-bit x86 programs
  agent_features   what the agent used (the uprobe path, seen with bpftool; its own
                   nodescope_feature_enabled metric once it has one)
  info             figures that differ between machines (not compared)
and exits 1 if a check failed. Nothing here waits a fixed time: each step waits for what it needs,
bounded by a deadline generous enough for a kernel under TCG emulation.

Usage: smoke.py --out SUMMARY.json [--agent PATH] [--go-client PATH] [--ia32-client PATH]
                [--logs DIR]
(the agent and the Go client built for this machine's architecture: make's build/nodescope and
build/go-get, or build-arm64/ for arm64; on x86 the 32-bit client is make's build/http-get32)
"""
import argparse
import errno
import json
import re
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ports import free_port  # noqa: E402  (tests/ports.py)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
READY_S = 180      # agent start: loading and verifying the programs is slow under TCG
EVENTS_S = 30      # nginx's events, after the workload is done (in flight, not late)
SHUTDOWN_S = 60    # SIGTERM to exit: every probe detached (perf-event uprobes one at a time)
ROUNDS = 5         # workload rounds at most, while the agent counts losses
PROBE_S = 120      # a Go program's first exec to its tls_probe line (pclntab and return sites
                   # read under TCG)

# Kernel features: a name in the kernel's BTF (enum values of the BPF uapi), or a field of a
# tracepoint. The names are those of the agent's nodescope_feature_enabled{feature} metric; and
# ia32, not the agent's to use but what decides whether a check can run (runs_ia32).
BTF_FEATURES = {
    "task_storage": b"BPF_MAP_TYPE_TASK_STORAGE\0",
    "current_task_btf": b"BPF_FUNC_get_current_task_btf\0",
    "attach_cookie": b"BPF_FUNC_get_attach_cookie\0",
    "uprobe_multi": b"BPF_TRACE_UPROBE_MULTI\0",
    # the socket tracepoints (6.3): the agent then runs on the socket hooks, not the syscall hooks
    "socket_hooks": b"btf_trace_sock_send_length\0",
}
# What the workload must produce, in the order checked.
WORKLOAD_CHECKS = ("proc.exec", "proc.exit_code", "proc.fork", "proc.cgroup_path_from_kernel",
                   "tcp.listen", "tcp.connect",
                   "tcp.accept", "tcp.close_out", "tcp.close_in", "tcp.connect_refused",
                   "l7.http_out", "l7.http_in", "tls.libssl_probed", "tls.https_out",
                   "tls.https_in", "tls.go_probed", "tls.go_out", "compat.not_misread")
# What needs TLS probing, which needs attach cookies (5.15).
TLS_CHECKS = ("tls.libssl_probed", "tls.https_out", "tls.https_in", "tls.go_probed", "tls.go_out",
              "tls.no_attach_failures", "uprobe.path_matches_kernel")
# The checks that need a kernel feature: "off" where the kernel lacks it (the agent turns TLS off
# without attach cookies; no 32-bit program runs without IA32 emulation, none on arm64, so there
# are no compat syscalls to skip), a failure where it has it. The matrix accepts "off" only on a
# kernel whose list column lacks the feature.
NEEDS = {**{c: "attach_cookie" for c in TLS_CHECKS}, "compat.not_misread": "ia32"}
# The tcp events a process's syscalls can make or name (a retransmit is TCP's own: right whoever
# it names, and not certain to be none).
TCP_TYPES = ("connect", "connect_error", "accept", "close", "listen", "listen_close")
# Every check of a summary: the reference where no host run can be compared with (matrix.py:
# another architecture's VMs pass when each of these passes).
ALL_CHECKS = ("agent.loads_and_attaches",) + WORKLOAD_CHECKS + (
    "agent.no_silent_loss", "tls.no_attach_failures", "uprobe.path_matches_kernel",
    "hooks.match_kernel", "agent.clean_shutdown")
EXIT_FORMAT = "/sys/kernel/tracing/events/sched/sched_process_exit/format"


def kernel_features(ia32_client):
    with open("/sys/kernel/btf/vmlinux", "rb") as f:
        btf = f.read()
    have = {name: needle in btf for name, needle in BTF_FEATURES.items()}
    with open(EXIT_FORMAT) as f:
        have["exit_group_dead"] = " group_dead;" in f.read()
    have["ia32"] = runs_ia32(ia32_client)
    return have


def runs_ia32(client):
    """Whether this kernel runs a 32-bit x86 program: found by running one, as neither BTF nor
    the config tells whether IA32 emulation is on (ia32_emulation=0, or
    CONFIG_IA32_EMULATION_DEFAULT_DISABLED, turn a built one off: exec fails with ENOEXEC)."""
    if client is None:
        return False
    try:
        subprocess.run([client], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=60)
    except OSError as e:
        if e.errno != errno.ENOEXEC:
            raise
        return False
    return True


class Agent:
    """`nodescope trace` with its events collected by a thread; wait_for() blocks on a
    condition over them."""

    def __init__(self, path, logs):
        self.port = free_port()
        self.stderr_path = os.path.join(logs, "agent.stderr")
        self.events = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen([path, "trace", "--listen", f"127.0.0.1:{self.port}"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=open(self.stderr_path, "wb"))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            ev = json.loads(line)
            with self.cond:
                self.events.append(ev)
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, pred, timeout):
        """True once pred(events) holds; False at the deadline or when the agent has exited."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred(self.events):
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.reader.is_alive()):
                    return pred(self.events)
                self.cond.wait(min(left, 0.5))
            return True

    def metrics(self, save=None):
        # A plain socket: urllib's imports alone took 5 s under TCG on a loaded machine.
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            s.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.") or b" 200 " not in head.split(b"\r\n")[0]:
            sys.exit(f"smoke: GET /metrics answered {head[:80]!r}")
        text = body.decode()
        if save:
            with open(save, "w") as f:
                f.write(text)
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                key, value = line.rsplit(" ", 1)
                out[key] = float(value)
        return out

    def stderr_lines(self):
        with open(self.stderr_path, errors="replace") as f:
            return [l.rstrip("\n") for l in f]


NGINX_CONF = """
user www-data;
worker_processes 1;
pid {d}/nginx.pid;
lock_file {d}/nginx.lock;
error_log {d}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    server {{ listen 127.0.0.1:{http}; location / {{ return 200 "ok\\n"; }} }}
    server {{
        listen 127.0.0.1:{https} ssl;
        ssl_certificate {d}/cert.pem;
        ssl_certificate_key {d}/key.pem;
        location / {{ return 200 "ok\\n"; }}
    }}
}}
"""


def start_nginx(d):
    """nginx with one worker, HTTP and HTTPS on loopback; returns (proc, http, https ports) once
    both ports answer and the worker exists."""
    os.chmod(d, 0o755)  # the worker runs as www-data
    os.makedirs(os.path.join(d, "tmp"))
    # An EC key: an RSA one takes seconds to generate under TCG.
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=localhost", "-keyout", f"{d}/key.pem", "-out", f"{d}/cert.pem"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    http, https = free_port(), free_port()
    with open(f"{d}/nginx.conf", "w") as f:
        f.write(NGINX_CONF.format(d=d, http=http, https=https))
    proc = subprocess.Popen([NGINX, "-p", d, "-e", f"{d}/error.log", "-c", f"{d}/nginx.conf",
                             "-g", "daemon off;"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=open(f"{d}/stderr", "wb"))
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            sys.exit(f"smoke: nginx did not start; {d}/error.log says:\n"
                     + open(f"{d}/error.log", errors="replace").read())
        try:
            for port in (http, https):
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
            # The master listens before it forks its worker: wait for the worker too.
            if children(proc.pid):
                return proc, http, https
        except OSError:
            pass
        time.sleep(0.05)


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except (OSError, ValueError):
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(d))
    return out


def run_client(argv):
    """A client's pid, once it printed status 200; the pid is what the agent's events must
    name."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=60)
    if p.returncode != 0 or out.strip() != b"200":
        sys.exit(f"smoke: {' '.join(argv)}: exit {p.returncode}, status {out!r}: {err.decode()}")
    return p.pid


def first_go_run(agent, go_client, url, probed):
    """The Go client's first run, kept alive (go_get.go's "linger": it exits at the end of its
    stdin) until the agent has probed its file: one that exits first may be gone before the agent
    opens it (counted as file_gone; the next exec is probed). Returns whether it was probed."""
    p = subprocess.Popen([go_client, url, "linger"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = agent.wait_for(probed, PROBE_S)
    out, err = p.communicate(timeout=60)
    if p.returncode != 0 or out.strip() != b"200":
        sys.exit(f"smoke: {go_client} {url}: exit {p.returncode}, status {out!r}: {err.decode()}")
    return seen


def curl(url):
    return run_client(["curl", "-sS", "-k", "-o", "/dev/null", "-w", "%{http_code}", url])


def ia32_get(client, port, path):
    """The 32-bit client's (pid, whether it got status 200). Its failing is the check's, not the
    suite's: a misread syscall must not break it either."""
    p = subprocess.Popen([client, str(port), path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    out, _ = p.communicate(timeout=60)
    return p.pid, p.returncode == 0 and out.startswith(b"HTTP/1.1 200 ")


def bpftool_json(*args):
    r = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True)
    return json.loads(r.stdout or "[]") if r.returncode == 0 else []


def uprobe_path(agent_pid):
    """How the agent attached its TLS uprobes, seen from outside: perf-event uprobes are listed
    by `bpftool perf` with the agent's pid; a uprobe_multi link is an fd of the agent whose
    fdinfo names that link type (Debian 12's bpftool neither names the type nor the pids)."""
    perf = [p for p in bpftool_json("perf", "list")
            if p.get("pid") == agent_pid and p.get("fd_type") in ("uprobe", "uretprobe")]
    multi = 0
    fdinfo = f"/proc/{agent_pid}/fdinfo"
    for fd in os.listdir(fdinfo):
        try:
            with open(f"{fdinfo}/{fd}") as f:
                multi += "link_type:\tuprobe_multi\n" in f.read()
        except OSError:
            pass
    if perf and multi:
        return "both"
    return "perf_event" if perf else "uprobe_multi" if multi else "none"


def hooks_in_use(agent_pid):
    """Which hooks see the sockets, from the tracepoints of the agent's BPF links (their ids in
    its fds' fdinfo): "syscall" (sys_enter, sys_exit), "socket" (sock_send_length), "both" or
    "none"."""
    ids = set()
    fdinfo = f"/proc/{agent_pid}/fdinfo"
    for fd in os.listdir(fdinfo):
        try:
            with open(f"{fdinfo}/{fd}") as f:
                ids |= {int(l.split()[1]) for l in f if l.startswith("link_id:")}
        except OSError:
            pass
    tps = {link.get("tp_name") for link in bpftool_json("link", "show") if link.get("id") in ids}
    syscall, socket_ = bool(tps & {"sys_enter", "sys_exit"}), "sock_send_length" in tps
    return "both" if syscall and socket_ else "syscall" if syscall else "socket" if socket_ else "none"


def losses(m):
    """What the agent counts as lost: programs skipped for recursion, ring buffers full, state
    it could not keep."""
    return sum(v for k, v in m.items()
               if k.startswith(("nodescope_bpf_recursion_misses_total", "nodescope_events_lost_total",
                                "nodescope_bpf_tracking_dropped_total")))


def reported_features(m):
    """{feature: in use} from the agent's nodescope_feature_enabled{feature} series."""
    return {re.search(r'feature="([^"]*)"', k).group(1): v == 1 for k, v in m.items()
            if k.startswith("nodescope_feature_enabled{")}


def cgroup2_root():
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[2] == "cgroup2":
                return fields[1]
    return None


def run_in_gone_cgroup(agent, n):
    """A short-lived container: with the agent stopped, /bin/true runs in a cgroup v2 made here,
    which is removed before the agent reads anything of it. Its exec must still be named from
    the cgroup path the kernel read at the exec (the first exec in a set of cgroups carries it:
    kernfs names walked up, a field renamed in 6.15). Returns (path, pid)."""
    root = cgroup2_root()
    rel = f"/nodescope-smoke-{os.getpid()}-{n}/gone"
    if root is None:
        return rel, None
    os.makedirs(root + rel)
    agent.proc.send_signal(signal.SIGSTOP)
    try:
        p = subprocess.Popen(["/bin/sh", "-c", f"echo $$ > {root}{rel}/cgroup.procs; exec /bin/true"])
        p.wait()
        os.rmdir(root + rel)
        os.rmdir(os.path.dirname(root + rel))
    finally:
        agent.proc.send_signal(signal.SIGCONT)
    return rel, p.pid


def workload_round(agent, n, go_client, tls_on, ia32_client):
    """nginx (new ports), a short-lived process, a refused connect from this process, an HTTP
    request from the 32-bit client where the kernel runs it (ia32_client, else None), an HTTP and
    an HTTPS request with curl, and one with the Go client once its first run got it probed
    (whether that first run beat its probes is a benchmark figure, not checked); returns {check:
    seen}. Seen or not is decided after a barrier, never after a sleep: the exit of a process
    started after the workload, which the agent reports only after reading the tcp and l7 rings
    (README: "When a process exits, the batched streams are read first"), so every event of
    curl, sh and this process is printed by then. nginx's events are not ordered by it (curl may
    read a response before nginx's write returns, and nginx sees the FIN when it does): they are
    waited for up to the deadline."""
    cg_rel, cg_pid = run_in_gone_cgroup(agent, n)
    tmp = tempfile.mkdtemp(prefix="nodescope-smoke.")
    nginx, http_port, https_port = start_nginx(tmp)
    try:
        workers = set(children(nginx.pid))
        sh = subprocess.Popen(["/bin/sh", "-c", "exit 3", "nodescope-smoke"])
        sh.wait()
        refused = free_port()
        with socket.socket() as s:
            try:
                s.connect(("127.0.0.1", refused))
            except ConnectionRefusedError:
                pass
        # Right before curl: the 64-bit requests beside it must come out whole.
        ia32_pid, ia32_ok = ia32_get(ia32_client, http_port, "/smoke-ia32") if ia32_client \
            else (None, False)
        http_pid = curl(f"http://127.0.0.1:{http_port}/smoke-http")
        https_pid = curl(f"https://127.0.0.1:{https_port}/smoke-tls")
        go_probed = lambda evs: any(e["type"] == "tls_probe" and e.get("library") == "go" and
                                    e.get("file") == go_client for e in evs)
        go_pid = None
        first = f"https://127.0.0.1:{https_port}/smoke-go-first"
        if tls_on and first_go_run(agent, go_client, first, go_probed):
            go_pid = run_client([go_client, f"https://127.0.0.1:{https_port}/smoke-go"])
        barrier = subprocess.Popen(["/bin/sh", "-c", ":", f"nodescope-smoke-barrier-{n}"])
        barrier.wait()
        me = os.getpid()

        def has(**want):
            def match(e):
                return all(w(e.get(k)) if callable(w) else e.get(k) == w for k, w in want.items())
            return lambda evs: any(match(e) for e in evs)

        def port(p):
            return lambda addr: isinstance(addr, str) and addr.endswith(f":{p}")

        def worker(pid):
            return pid in workers

        def client(pid):
            """The address of pid's connection, from its connect event: nginx's side must name
            curl's connection, not one of start_nginx's probes. (Predicates run on
            agent.events with its lock held.)"""
            def match(src):
                return any(e["type"] == "connect" and e["pid"] == pid and e["src"] == src
                           for e in agent.events)
            return match

        def ia32_not_misread(evs):
            """As tests/e2e/test_http.py's test_32bit_process_syscalls_are_not_misread: its
            syscalls are another table's, so nothing is made of them — its getegid with a bound
            socket's fd in the register of our first argument is no listen, its read no close, no
            l7 record is its — while what TCP itself saw of it stays right (a connect and a close
            to nginx, from the socket tracepoint) and nginx's side of its request is seen once."""
            dst = f"127.0.0.1:{http_port}"
            tcp = sorted((e["type"], e.get("dst")) for e in evs
                         if e.get("pid") == ia32_pid and e["type"] in TCP_TYPES)
            # This round's nginx only (dst): a round run again finds the earlier rounds' too.
            inbound = [e for e in evs if e["type"] == "l7" and e.get("path") == "/smoke-ia32"
                       and e.get("dir") == "in" and e.get("dst") == dst]
            wrong_l7 = [e for e in evs if e["type"] == "l7" and (e.get("pid") == ia32_pid or (
                e.get("path") == "/smoke-ia32" and e.get("dir") == "out" and e.get("dst") == dst))]
            return (ia32_ok and tcp == [("close", dst), ("connect", dst)] and not wrong_l7 and
                    len(inbound) == 1 and worker(inbound[0]["pid"]) and
                    inbound[0].get("status") == 200 and client(ia32_pid)(inbound[0].get("src")))

        expected = {
            "proc.exec": has(type="exec", pid=sh.pid, exe="/bin/sh",
                             args=lambda s: s and "nodescope-smoke" in s),
            "proc.exit_code": has(type="exit", pid=sh.pid, code=3, signal=0),
            "proc.fork": has(type="fork", pid=http_pid, ppid=me),
            "proc.cgroup_path_from_kernel": has(type="exec", pid=cg_pid, exe="/bin/true",
                                                container=cg_rel),
            "tcp.listen": has(type="listen", addr=port(http_port)),
            "tcp.connect": has(type="connect", pid=http_pid, dst=port(http_port), dir="out"),
            "tcp.accept": has(type="accept", pid=worker, src=client(http_pid), dir="in"),
            "tcp.close_out": has(type="close", pid=http_pid, dst=port(http_port), dir="out",
                                 bytes_sent=lambda n: n and n > 0),
            "tcp.close_in": has(type="close", pid=worker, src=client(http_pid), dir="in"),
            "tcp.connect_refused": has(type="connect_error", pid=me, dst=port(refused),
                                       error="refused"),
            "l7.http_out": has(type="l7", pid=http_pid, dir="out", method="GET",
                               path="/smoke-http", status=200, tls=False),
            "l7.http_in": has(type="l7", pid=worker, dir="in", method="GET", path="/smoke-http",
                              status=200, tls=False, src=client(http_pid)),
            "tls.libssl_probed": has(type="tls_probe", library="openssl",
                                     file=lambda f: f and "libssl.so" in f),
            "tls.https_out": has(type="l7", pid=https_pid, dir="out", method="GET",
                                 path="/smoke-tls", status=200, tls=True),
            "tls.https_in": has(type="l7", pid=worker, dir="in", method="GET",
                                path="/smoke-tls", status=200, tls=True, src=client(https_pid)),
            "tls.go_probed": go_probed,
            "tls.go_out": has(type="l7", pid=lambda p: go_pid is not None and p == go_pid,
                              dir="out", method="GET", path="/smoke-go", status=200, tls=True),
            "compat.not_misread": ia32_not_misread,
        }
        assert tuple(expected) == WORKLOAD_CHECKS
        barrier_exit = has(type="exit", pid=barrier.pid)
        agent.wait_for(lambda evs: all(p(evs) for p in expected.values()) or barrier_exit(evs),
                       EVENTS_S)
        # (Without TLS no plaintext comes: nothing to wait for.)
        late = ("tcp.listen", "tcp.accept", "tcp.close_in", "l7.http_in") + \
            (("tls.https_in",) if tls_on else ()) + \
            (("compat.not_misread",) if ia32_client else ())
        agent.wait_for(lambda evs: all(p(evs) for k, p in expected.items() if k in late),
                       EVENTS_S)
        with agent.cond:
            return {name: pred(agent.events) for name, pred in expected.items()}
    finally:
        nginx.terminate()
        nginx.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--agent", default=os.path.join(ROOT, "build", "nodescope"))
    ap.add_argument("--go-client", default=os.path.join(ROOT, "build", "go-get"),
                    help="tests/e2e/clients/go_get.go built for this architecture")
    ap.add_argument("--ia32-client", default=os.path.join(ROOT, "build", "http-get32"),
                    help="tests/e2e/clients/http_get32.c built static with -m32 (x86 only)")
    ap.add_argument("--logs", help="directory for the agent's stderr (default: beside --out)")
    a = ap.parse_args()
    if not os.access(a.agent, os.X_OK):
        sys.exit(f"smoke: {a.agent} is missing: run make first")
    go_client = os.path.abspath(a.go_client)
    if not os.access(go_client, os.X_OK):
        sys.exit(f"smoke: {go_client} is missing: make {os.path.relpath(go_client, ROOT)}")
    ia32_client = None
    if os.uname().machine == "x86_64":
        ia32_client = os.path.abspath(a.ia32_client)
        if not os.access(ia32_client, os.X_OK):
            sys.exit(f"smoke: {ia32_client} is missing: "
                     f"make {os.path.relpath(ia32_client, ROOT)}")
    logs = a.logs or os.path.dirname(os.path.abspath(a.out))
    os.makedirs(logs, exist_ok=True)
    t0 = time.monotonic()
    info = {"kernel": os.uname().release}
    checks = {}
    agent_features = {}
    kf = kernel_features(ia32_client)

    agent = Agent(a.agent, logs)
    ready = agent.wait_for(lambda evs: any(e["type"] == "ready" for e in evs), READY_S)
    info["ready_s"] = round(time.monotonic() - t0, 1)
    checks["agent.loads_and_attaches"] = ready
    if ready:
        # Rounds of the workload: one is enough unless the agent counted a loss meanwhile (a
        # program skipped for recursion, which preemptible kernels make common under CPU
        # contention: see below), when the round is run again. A check that fails in a round
        # with no loss counted is a silent loss, and fails.
        # The agent turns TLS off on a kernel without attach cookies (and says so in
        # nodescope_feature_enabled): there no Go program is probed to wait for.
        tls_on = reported_features(agent.metrics()).get("tls") is not False
        # Checks not run here are "off" (NEEDS): TLS's where the agent has none, the 32-bit
        # client's where the kernel refuses it.
        off = (() if tls_on else TLS_CHECKS) + (() if kf["ia32"] else ("compat.not_misread",))
        for n in range(1, ROUNDS + 1):
            before = losses(agent.metrics())
            seen = workload_round(agent, n, go_client, tls_on,
                                  ia32_client if kf["ia32"] else None)
            counted = losses(agent.metrics()) - before
            info["rounds"] = n
            if all(v for c, v in seen.items() if c not in off) or not counted:
                break
        checks.update(seen)
        checks["agent.no_silent_loss"] = counted > 0 or all(
            v for c, v in seen.items() if c not in off)
        m = agent.metrics(save=os.path.join(logs, "agent.metrics"))
        info["probes_attached"] = int(m.get("nodescope_probes_attached", 0))
        info["tls_uprobes"] = int(m.get("nodescope_tls_uprobes", 0))
        checks["tls.no_attach_failures"] = \
            m.get('nodescope_tls_probe_failures_total{reason="attach"}', 0) == 0
        agent_features["uprobe_path"] = uprobe_path(agent.proc.pid)
        agent_features["hooks"] = hooks_in_use(agent.proc.pid)
        checks["hooks.match_kernel"] = agent_features["hooks"] == \
            ("socket" if kf["socket_hooks"] else "syscall")
        # What the agent says it uses (nodescope_feature_enabled): the matrix compares each
        # with the kernel's feature.
        reported = reported_features(m)
        agent_features["reported"] = reported or "not exported by this agent"
        for c in off:
            checks[c] = "off"
        info["loss_counters"] = losses(m)
    else:
        checks.update((name, False) for name in WORKLOAD_CHECKS +
                      ("tls.no_attach_failures", "agent.no_silent_loss", "hooks.match_kernel"))
    if checks.get("uprobe.path_matches_kernel") != "off":
        checks["uprobe.path_matches_kernel"] = agent_features.get("uprobe_path") == \
            ("uprobe_multi" if kf["uprobe_multi"] else "perf_event")

    # Clean shutdown: SIGTERM, exit 0 within the bound.
    t = time.monotonic()
    if agent.proc.poll() is None:
        agent.proc.send_signal(signal.SIGTERM)
    try:
        code = agent.proc.wait(SHUTDOWN_S)
    except subprocess.TimeoutExpired:
        agent.proc.kill()
        code = f"no exit {SHUTDOWN_S} s after SIGTERM"
        agent.proc.wait()
    info["shutdown_s"] = round(time.monotonic() - t, 1)
    info["agent_exit"] = code
    checks["agent.clean_shutdown"] = ready and code == 0
    if not ready:
        # What failed to load: the agent's own lines (libbpf's and the verifier's are in
        # agent.stderr beside the summary).
        info["load_errors"] = [l for l in agent.stderr_lines() if " nodescope: " in l]
    info["total_s"] = round(time.monotonic() - t0, 1)

    with open(os.path.join(logs, "agent.events.jsonl"), "w") as f, agent.cond:
        f.writelines(json.dumps(e) + "\n" for e in agent.events)
    assert set(checks) == set(ALL_CHECKS), set(checks) ^ set(ALL_CHECKS)
    summary = {"checks": checks, "kernel_features": kf, "agent_features": agent_features,
               "info": info}
    with open(a.out + ".tmp", "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    os.rename(a.out + ".tmp", a.out)
    failed = [k for k, v in checks.items()
              if not v or (v == "off" and kf.get(NEEDS.get(k), True))]
    not_run = sorted(k for k, v in checks.items() if v == "off" and k not in failed)
    print(f"smoke: {info['kernel']}: {len(checks) - len(failed) - len(not_run)}/{len(checks)} "
          "checks passed" + (f"; off: {', '.join(not_run)}" if not_run else "")
          + (f"; failed: {', '.join(failed)}" if failed else "")
          + f"; uprobe path {agent_features.get('uprobe_path', '-')}; {info['total_s']} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
