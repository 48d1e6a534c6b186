"""Network namespaces for the end-to-end tests: veth-linked pairs that each test
creates for itself and that are torn down even when the test fails.

Names are nstcp-<pid of the pytest process>-<tag><n>-{c,s}; the veth ends are
created inside those namespaces, so nothing is added to the root namespace, but
by HostLinked: a namespace linked to the root one, as a pod is to its node.
Namespaces left over by a crashed run (their pid is gone) are deleted before new
ones are made; the programs run in them end when the test's pipes close (a
server still waiting for its client gives up after 60 s).
"""
import itertools
import json
import os
import queue
import re
import shutil
import subprocess
import threading

import pytest

PREFIX = "nstcp-"
PYTHON = "/usr/bin/python3"
_serial = itertools.count(1)


def tool(name):
    """Absolute path of a required tool; fails (never skips) when it is missing."""
    path = shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if not path:
        package = {"ip": "iproute2", "nft": "nftables", "sysctl": "procps"}[name]
        pytest.fail(f"{name} is required by the network namespace tests: apt-get install {package}")
    return path


def run(*argv, input=None, check=True, timeout=30):
    r = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.strip()}")
    return r


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def netns_names(ip):
    out = run(ip, "netns", "list").stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def delete_stale(ip):
    """Deletes our namespaces whose creating pytest process no longer exists."""
    for name in netns_names(ip):
        m = re.fullmatch(re.escape(PREFIX) + r"(\d+)-.*", name)
        if m and not _alive(int(m.group(1))):
            run(ip, "netns", "delete", name, check=False)


class NsProcess:
    """A python3 program running inside a namespace; it prints JSON lines on stdout."""

    def __init__(self, argv):
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.pid = self.proc.pid
        self.lines = queue.Queue()
        self.err = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # EOF

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.err.append(line)

    def json(self, timeout):
        """The next JSON line the program prints, within timeout seconds."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout}s from {self.what()}\n"
                                 f"stderr: {''.join(self.err)}") from None
        if line is None:
            self.proc.wait(5)
            raise AssertionError(f"{self.what()} exited {self.proc.returncode} early\n"
                                 f"stderr: {''.join(self.err)}")
        return json.loads(line)

    def what(self):
        return f"python3 {' '.join(self.argv[7:])} in {self.argv[3]}"

    def finish(self, timeout=10):
        """Closes its stdin (the programs exit on EOF) and reaps it."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


class Namespaces:
    """What NetPair and HostLinked share: the programs they run in their namespaces, ended at
    teardown."""

    def __init__(self):
        self.ip = tool("ip")
        self.procs = []

    def exec(self, ns, *argv, **kw):
        return run(self.ip, "netns", "exec", ns, *argv, **kw)

    def nft(self, ns, ruleset):
        self.exec(ns, tool("nft"), "-f", "-", input=ruleset)

    def spawn(self, ns, code, *args):
        p = NsProcess([self.ip, "netns", "exec", ns, PYTHON, "-c", code, *map(str, args)])
        self.procs.append(p)
        return p

    def end_procs(self):
        for p in self.procs:
            if p.proc.poll() is None:
                p.proc.kill()
            p.proc.wait()


def torn_down(cls):
    """A fixture's body: make(*args) -> a set-up cls(*args), each torn down when the test ends
    (a half-made one too)."""
    made = []

    def make(*args):
        n = cls(*args)
        made.append(n)
        return n.setup()

    try:
        yield make
    finally:
        for n in made:
            n.teardown()


class NetPair(Namespaces):
    """Two namespaces, client (10.213.N.1) and server (10.213.N.2), linked by a veth pair."""

    def __init__(self, tag, subnet):
        super().__init__()
        base = f"{PREFIX}{os.getpid()}-{tag}{next(_serial)}"
        self.client, self.server = base + "-c", base + "-s"
        self.client_ip, self.server_ip = f"10.213.{subnet}.1", f"10.213.{subnet}.2"
        self.client_if, self.server_if = "nsc0", "nss0"
        self.created = []

    def setup(self):
        delete_stale(self.ip)
        existing = set(netns_names(self.ip))
        for ns in (self.client, self.server):
            if ns in existing:  # same pid as an earlier, crashed run: not ours to keep
                run(self.ip, "netns", "delete", ns, check=False)
            run(self.ip, "netns", "add", ns)
            self.created.append(ns)
            run(self.ip, "-n", ns, "link", "set", "lo", "up")
        run(self.ip, "-n", self.client, "link", "add", self.client_if, "type", "veth",
            "peer", "name", self.server_if, "netns", self.server)
        for ns, addr, dev in ((self.client, self.client_ip, self.client_if),
                              (self.server, self.server_ip, self.server_if)):
            run(self.ip, "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
        run(self.ip, "-n", self.client, "link", "set", self.client_if, "up")
        run(self.ip, "-n", self.server, "link", "set", self.server_if, "up")
        return self

    def teardown(self):
        self.end_procs()
        for ns in self.created:
            run(self.ip, "netns", "delete", ns, check=False)
        self.created = []

    def sysctl(self, ns, key, value):
        """Sets a per-namespace sysctl and checks it took (in that namespace only)."""
        sysctl = tool("sysctl")
        self.exec(ns, sysctl, "-qw", f"{key}={value}")
        got = self.exec(ns, sysctl, "-n", key).stdout.strip()
        assert got == str(value), f"{key} in {ns} is {got!r}, wanted {value}"


@pytest.fixture
def netpair():
    """netpair(tag, subnet) -> a set-up NetPair, deleted when the test ends."""
    yield from torn_down(NetPair)


class HostLinked(Namespaces):
    """A namespace linked to the root one by a veth, as a pod is to its node: host_if in the root
    namespace (10.216.<subnet>.1/24), inner_if inside (10.216.<subnet>.2/24, its default route
    through the host's end). Interface names are the caller's: make them unique to the module."""

    def __init__(self, tag, subnet, host_if, inner_if):
        super().__init__()
        self.ns = f"{PREFIX}{os.getpid()}-{tag}{next(_serial)}"
        self.host_if, self.inner_if = host_if, inner_if
        self.host_ip, self.inner_ip = f"10.216.{subnet}.1", f"10.216.{subnet}.2"
        self.created = False

    def setup(self):
        delete_stale(self.ip)
        run(self.ip, "link", "delete", self.host_if, check=False)  # ours, from a run that died
        run(self.ip, "netns", "delete", self.ns, check=False)
        run(self.ip, "netns", "add", self.ns)
        self.created = True
        run(self.ip, "-n", self.ns, "link", "set", "lo", "up")
        run(self.ip, "link", "add", self.host_if, "type", "veth", "peer", "name", self.inner_if,
            "netns", self.ns)
        run(self.ip, "addr", "add", f"{self.host_ip}/24", "dev", self.host_if)
        run(self.ip, "-n", self.ns, "addr", "add", f"{self.inner_ip}/24", "dev", self.inner_if)
        run(self.ip, "link", "set", self.host_if, "up")
        run(self.ip, "-n", self.ns, "link", "set", self.inner_if, "up")
        run(self.ip, "-n", self.ns, "route", "add", "default", "via", self.host_ip)
        return self

    def teardown(self):
        self.end_procs()
        if self.created:
            run(self.ip, "link", "delete", self.host_if, check=False)
            run(self.ip, "netns", "delete", self.ns, check=False)
            self.created = False


@pytest.fixture
def host_linked():
    """host_linked(tag, subnet, host_if, inner_if) -> a set-up HostLinked, deleted when the test
    ends."""
    yield from torn_down(HostLinked)
