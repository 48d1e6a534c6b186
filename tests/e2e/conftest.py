"""Shared fixtures for the end-to-end tests: the real agent, as root, with its real BPF programs."""
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import warnings

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ports import free_port  # noqa: E402,F401  (tests/ports.py; the tests take it from here)
from wait import wait_until  # noqa: E402,F401  (tests/wait.py; likewise)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The agent under test: ./build's, or another build of it (make check-asan sets build-asan's).
AGENT = os.environ.get("NODESCOPE_AGENT") or os.path.join(ROOT, "build", "nodescope")
# The agent sees the sockets from the socket hooks where the kernel has them (6.3+: their
# tracepoints are in its BTF), else from the syscall hooks. make test-e2e-syscall-hooks runs the
# suite again with every agent on the syscall hooks (the agent reads its hidden
# --debug-syscall-hooks from the environment). What the socket hooks cannot see is marked with
# not_seen_by_socket_hooks, and skipped where they run, with the reason.
SYSCALL_HOOKS = os.environ.get("NODESCOPE_DEBUG_SYSCALL_HOOKS", "") not in ("", "0", "no", "false")


def _kernel_has_socket_hooks():
    with open("/sys/kernel/btf/vmlinux", "rb") as f:
        return b"btf_trace_sock_send_length\0" in f.read()


KERNEL_HAS_SOCKET_HOOKS = _kernel_has_socket_hooks()
SOCKET_HOOKS = KERNEL_HAS_SOCKET_HOOKS and not SYSCALL_HOOKS


def not_seen_by_socket_hooks(why):
    return pytest.mark.skipif(SOCKET_HOOKS, reason=f"the socket hooks: {why}")


def _sanitized(path):
    """Whether the agent was built with AddressSanitizer (its runtime's entry point is named in it)."""
    try:
        with open(path, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


SANITIZED = _sanitized(AGENT)
if SANITIZED:
    # The first report aborts the agent (so it is never missed for a later one), and
    # LeakSanitizer runs at its exit. Options already in the environment are kept.
    os.environ.setdefault("ASAN_OPTIONS", "halt_on_error=1:abort_on_error=1:detect_leaks=1")
    os.environ.setdefault("UBSAN_OPTIONS", "halt_on_error=1:abort_on_error=1:print_stacktrace=1")

# A report of AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer on stderr.
SANITIZER_REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|: runtime error: |"
                              r"SUMMARY: \w+Sanitizer")
# Exits by a signal that means the agent crashed (abort_on_error gives SIGABRT).
CRASH_SIGNALS = {signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE}


def pytest_sessionstart(session):
    # Fail loudly, never skip: these tests are the proof that the BPF side works.
    if os.geteuid() != 0:
        pytest.exit("e2e tests must run as root (sudo make check)", returncode=1)
    if not os.access(AGENT, os.X_OK):
        pytest.exit(f"{AGENT} is missing: run make first", returncode=1)
    # The agent takes every option from the environment too (LISTEN, NODESCOPE_...): none may
    # leak in from the shell that runs the tests (make run LISTEN=... exports it). Its --help
    # names them.
    out = subprocess.run([AGENT, "--help"], capture_output=True, text=True, check=True).stdout
    for name in re.findall(r"^ +env (\w+)$", out, re.M):
        os.environ.pop(name, None)


def pytest_report_header(config):
    return f"agent: {AGENT}" + (" (AddressSanitizer, UBSan, LeakSanitizer)" if SANITIZED else "")


# The node's identity on every series, and app_id derived from container_id (checked in
# test_node_identity.py and test_containers.py): left out of the keys unless asked for.
NODE_LABELS = {"machine_id", "system_uuid", "app_id"}


def parse_metrics(text, keep_node_labels=False):
    """Prometheus text -> {name: {frozenset(labels.items()): value}}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, value = line.rsplit(" ", 1)
        labels = {}
        if "{" in head:
            name, rest = head.split("{", 1)
            rest = rest.rstrip("}")
            i = 0
            while i < len(rest):
                eq = rest.index("=", i)
                key = rest[i:eq]
                j = eq + 2
                val = []
                while rest[j] != '"':
                    if rest[j] == "\\":
                        j += 1
                        val.append({"n": "\n"}.get(rest[j], rest[j]))
                    else:
                        val.append(rest[j])
                    j += 1
                if keep_node_labels or key not in NODE_LABELS:
                    labels[key] = "".join(val)
                i = j + 2  # past '",'
        else:
            name = head
        out.setdefault(name, {})[frozenset(labels.items())] = float(value)
    return out


class Agent:
    """One running nodescope, its JSON lines collected by a reader thread.

    When it has exited (stop(), or at the end of the test that started it), its stderr
    and exit code are checked: a sanitizer report or a crash fails the test.
    """

    started = []  # the Agents of the running test (and of wider fixtures), checked at its end

    def __init__(self, *args, trace=True, listen=True, ephemeral_ports="", keep_standalone=True,
                 prefix=(), listen_host="127.0.0.1"):
        # listen_host: an address of the agent's network namespace the tests reach it at (an
        # agent in a namespace of its own is scraped at its veth's address, as a pod is).
        self.port = free_port() if listen else None
        self.listen_host = listen_host
        # prefix: a command that sets the agent's surroundings up and execs it (same pid)
        cmd = [*prefix, AGENT] + (["trace"] if trace else [])
        if listen:
            cmd += ["--listen", f"{listen_host}:{self.port}"]
        # The test servers listen on ports the kernel hands out, which the default
        # --ephemeral-port-range leaves out of the metrics (test_tcp.py tests that default):
        # none unless asked (None: the agent's default).
        if ephemeral_ports is not None and not any(str(a).startswith("--ephemeral-port-range")
                                                   for a in args):
            cmd += ["--ephemeral-port-range", ephemeral_ports]
        # The tests' own processes may run outside any container (a CI runner in "/" or a user
        # session), which Coroot's rules leave out of the metrics: kept unless a test says
        # otherwise (test_containers.py tests that default).
        if keep_standalone:
            cmd += ["--keep-standalone-processes"]
        cmd += list(args)
        self.cmd = cmd
        self.events = []
        self.bad_lines = []  # stdout lines that are not JSON (each fails the test)
        self.cond = threading.Condition()
        self.ready = False
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr_lines = []
        self.checked = False
        Agent.started.append(self)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        self._wait_ready(trace)

    def _read_stdout(self):
        for raw in self.proc.stdout:
            try:
                ev = json.loads(raw)
            except ValueError as e:
                # Kept, not raised: the reader goes on, and the test fails saying so.
                with self.cond:
                    self.bad_lines.append(f"{e}: {raw[:500]!r}")
                    self.cond.notify_all()
                continue
            with self.cond:
                if ev.get("type") == "ready":
                    self.ready = True
                self.events.append(ev)
                self.cond.notify_all()

    def _read_stderr(self):
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            with self.cond:
                self.stderr_lines.append(line)
                if line.endswith(" nodescope: ready"):  # after the time and level
                    self.ready = True
                self.cond.notify_all()

    def stderr(self):
        with self.cond:
            return "\n".join(self.stderr_lines)

    def _wait_ready(self, trace):
        deadline = time.monotonic() + 30
        with self.cond:
            while not self.ready:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    break
                self.cond.wait(0.2)
        if not self.ready:
            self.stop()
            pytest.fail(f"agent did not become ready: {self.cmd}\nstderr:\n{self.stderr()}")

    def wait_for(self, pred, timeout=20, what="event"):
        """Waits until pred(events) is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                self.assert_json_lines()
                v = pred(self.events)
                if v:
                    return v
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}")
                self.cond.wait(min(left, 0.5))

    def assert_json_lines(self):
        """Every line the agent wrote to stdout so far was one JSON object."""
        if self.bad_lines:
            raise AssertionError(f"agent {self.cmd} wrote {len(self.bad_lines)} line(s) that are not "
                                 f"JSON; the first: {self.bad_lines[0]}")

    def snapshot(self):
        with self.cond:
            return list(self.events)

    def metrics(self, keep_node_labels=False):
        url = f"http://{self.listen_host}:{self.port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as r:
            return parse_metrics(r.read().decode(), keep_node_labels)

    def metric(self, name, **labels):
        series = self.metrics().get(name, {})
        return series.get(frozenset(labels.items()), 0.0)

    def metric_sum(self, name, **labels):
        """Sum of the series of name whose labels include the given ones."""
        want = set(labels.items())
        return sum(v for k, v in self.metrics().get(name, {}).items() if want <= set(k))

    def has_series(self, name, **labels):
        """Whether some series of name has labels including the given ones."""
        want = set(labels.items())
        return any(want <= set(k) for k in self.metrics().get(name, {}))

    def stop(self, timeout=5):
        killed = False
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                # A sanitized agent exits slower: it checks for leaks and symbolizes reports.
                self.proc.wait(timeout * (6 if SANITIZED else 1))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                killed = True
        self.check_exit(killed)
        return self.proc.returncode

    def check_exit(self, killed=False):
        """Once the agent has exited: fails the test on a sanitizer report or a crash."""
        rc = self.proc.poll()
        if rc is None or self.checked:
            return
        self.checked = True
        self._stderr_reader.join(10)  # the whole report
        if self.bad_lines:
            pytest.fail(f"agent {self.cmd} wrote {len(self.bad_lines)} stdout line(s) that are not "
                        f"JSON; the first: {self.bad_lines[0]}", pytrace=False)
        err = self.stderr()
        m = SANITIZER_REPORT.search(err)
        if m or -rc in CRASH_SIGNALS:
            start = err.rfind("\n", 0, m.start()) + 1 if m else 0
            pytest.fail(f"agent {self.cmd} exited with {rc} "
                        f"({'sanitizer report' if m else 'crashed'}):\n{err[start:][-20000:]}",
                        pytrace=False)
        if killed and SANITIZED:
            # Not a report, but no leak check either: said in the warnings summary.
            warnings.warn(f"agent {self.cmd} did not exit within its stop timeout after SIGTERM "
                          f"and was killed: its leak check did not run")


@pytest.fixture(autouse=True)
def _agents_exit_cleanly():
    """Checks the agents a test started and left exited (waited for itself) without stop()."""
    n = len(Agent.started)
    yield
    mine = Agent.started[n:]
    del Agent.started[n:]  # an agent still running checks itself at its stop()
    for a in mine:
        a.check_exit()


@pytest.fixture
def agent_factory():
    agents = []

    def make(*args, **kw):
        a = Agent(*args, **kw)
        agents.append(a)
        return a

    yield make
    for a in agents:
        a.stop()


@pytest.fixture(scope="module")
def tracer():
    """A tracing agent shared by the tests of one module."""
    a = Agent("--events", "proc")
    yield a
    a.stop()


@contextlib.contextmanager
def loopback_dnat(back_port):
    """Connections to 127.0.0.1:<front> rewritten to 127.0.0.1:<back_port> (nftables, loopback
    only) for the block; yields front."""
    table = f"nodescope_e2e_{os.getpid()}_{back_port}"
    front = free_port()
    cmds = [f"add table ip {table}",
            f"add chain ip {table} out {{ type nat hook output priority -100; }}",
            f"add rule ip {table} out ip daddr 127.0.0.1 tcp dport {front} dnat to 127.0.0.1:{back_port}"]
    for c in cmds:
        subprocess.run(["nft"] + c.split(), check=True)
    try:
        yield front
    finally:
        subprocess.run(["nft", "delete", "table", "ip", table])


def cgroup2_root():
    """Where the unified (v2) cgroup hierarchy is mounted."""
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return mnt
    pytest.fail("no cgroup2 hierarchy mounted")


def by_pid(events, pid, type_=None):
    return [e for e in events if e.get("pid") == pid and (type_ is None or e["type"] == type_)]


@pytest.fixture(scope="session")
def build_client(tmp_path_factory):
    """Compiles tests/e2e/clients/NAME with cc and the given flags; returns the program's path."""
    built = {}

    def build(name, *flags, libs=()):
        key = (name, flags, tuple(libs))
        if key not in built:
            out = str(tmp_path_factory.mktemp("clients") / os.path.splitext(name)[0])
            src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients", name)
            p = subprocess.run(["cc", "-O2", *flags, "-o", out, src, *libs], capture_output=True)
            assert p.returncode == 0, f"cc {' '.join(flags)} {name}: " + p.stderr.decode(errors="replace")
            built[key] = out
        return built[key]

    return build


@pytest.fixture(scope="session")
def build_go(tmp_path_factory):
    """Builds tests/e2e/clients/NAME with Debian's go (standard library only, no cgo) and the given
    flags; returns the program's path. Built when asked: a test that needs a program the agent
    has never seen asks after starting the agent."""
    go = shutil.which("go") or "/usr/bin/go"
    if not os.access(go, os.X_OK):
        pytest.fail("go is missing: apt-get install golang-go (scripts/install-deps.sh)")
    d = str(tmp_path_factory.mktemp("go"))
    env = dict(os.environ, HOME=d, GOCACHE=os.path.join(d, "cache"), GO111MODULE="off", GOFLAGS="",
               CGO_ENABLED="0")
    built = {}

    def build(name, *flags, out=None):
        key = (name, flags, out)
        if key not in built:
            exe = out or os.path.join(d, os.path.splitext(name)[0] + str(len(built)))
            src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients", name)
            p = subprocess.run([go, "build", *flags, "-o", exe, src], env=env, capture_output=True, cwd=d)
            assert p.returncode == 0, f"go build {name}: " + p.stderr.decode(errors="replace")
            built[key] = exe
        return built[key]

    return build
