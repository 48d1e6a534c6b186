"""What the database and cache servers of the e2e tests share: a server started by a test on
127.0.0.1, with a free port, a temporary directory, and its own cgroup (as a service has, so its
metrics are told from the test process' own), run as root or as the Debian package's user when
the server refuses root, and stopped cleanly by stop(). One module per server builds on it
(srv_postgres.py, srv_mariadb.py, srv_redis.py, srv_memcached.py, srv_clickhouse.py)."""
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import cgroup2_root, free_port
from nginx import self_signed_cert


def need(path, package):
    """The path of a server's program, or a failed test naming the package (never a skip)."""
    found = shutil.which(path) or path
    if not os.access(found, os.X_OK):
        pytest.fail(f"{path} is missing: apt-get install {package} (scripts/install-deps.sh)")
    return found


def port_open(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


class Service:
    """name: for the directory and cgroup; user: the account the server runs as (None: root),
    which owns the directory."""

    def __init__(self, name, user=None):
        self.name = name
        self.user = pwd.getpwnam(user) if user else None
        self.dir = tempfile.mkdtemp(prefix=f"nodescope-e2e-{name}.")
        os.chmod(self.dir, 0o755)
        self.chown(self.dir)
        self.port = free_port()
        self.addr = f"127.0.0.1:{self.port}"
        self.container = f"/nodescope-e2e-{name}-{self.port}"
        self.cgroup = cgroup2_root() + self.container
        os.makedirs(self.cgroup, exist_ok=True)
        self.proc = None
        self.log_path = os.path.join(self.dir, "stderr")
        self.log = open(self.log_path, "wb")

    def path(self, *rel):
        return os.path.join(self.dir, *rel)

    def chown(self, p):
        if self.user:
            os.chown(p, self.user.pw_uid, self.user.pw_gid)

    def write(self, rel, text, mode=0o644):
        p = self.path(rel)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)
        self.chown(p)
        return p

    def cert(self):
        """A self-signed key and certificate in the directory, readable by the server's user."""
        key, crt = self_signed_cert(self.dir)
        for p in (key, crt):
            self.chown(p)
        os.chmod(key, 0o600)
        return key, crt

    def _preexec(self, enter_cgroup, drop_user=True):
        def fn():
            if enter_cgroup:
                with open(os.path.join(self.cgroup, "cgroup.procs"), "w") as f:
                    f.write("0")
            if self.user and drop_user:
                os.setgroups([])
                os.setgid(self.user.pw_gid)
                os.setuid(self.user.pw_uid)
        return fn

    def run(self, argv, as_user=True, **kw):
        """Runs a setup command (initdb, ...) to completion, as the server's user; fails the
        test with its output when it fails."""
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, cwd=self.dir,
                           preexec_fn=self._preexec(False) if as_user else None, **kw)
        if p.returncode != 0:
            self.stop()
            pytest.fail(f"{argv} exited with {p.returncode}:\n"
                        f"{p.stdout.decode(errors='replace')}{p.stderr.decode(errors='replace')}")
        return p

    def start(self, argv, ready=None, timeout=60, drop_user=True, env=None):
        """Starts the server in its cgroup (as its user unless drop_user is False: servers that
        drop privileges themselves) and waits until ready() (default: its port accepts)."""
        ready = ready or (lambda: port_open(self.port))
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                     cwd=self.dir, env=env,
                                     preexec_fn=self._preexec(True, drop_user))
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                logs = self.logs()
                self.stop()
                pytest.fail(f"{self.name} did not start: {argv}\n{logs}")
            time.sleep(0.05)

    def logs(self, *extra):
        text = ""
        for p in (self.log_path,) + extra:
            try:
                with open(p, errors="replace") as f:
                    text += f"--- {os.path.basename(p)}:\n" + f.read()[-20000:]
            except OSError:
                pass
        return text

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        # Helpers the server forked (a database's backends) leave its cgroup as they exit.
        for _ in range(200):
            try:
                os.rmdir(self.cgroup)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
        shutil.rmtree(self.dir, ignore_errors=True)


class StandIn(Service):
    """One of the stand-in servers written for the tests (a script using standin.py) on a free
    port: argv after the script, "{port}" replaced, then the path of its request log, which
    requests() reads (one dict per request)."""

    def __init__(self, name, script, *args):
        super().__init__(name)
        self.log_file = self.path("requests.jsonl")
        self.start([sys.executable, script] + [a.format(port=self.port) for a in args] + [self.log_file])

    def requests(self):
        with open(self.log_file) as f:
            return [json.loads(line) for line in f]


class ClientCgroup:
    """A cgroup of its own for client programs (pgbench, redis-benchmark, ...), so the agent's
    outbound series of that container_id count exactly what they sent. run() starts a program
    in it; remove() deletes the cgroup once they have exited."""

    def __init__(self, name):
        self.container = f"/nodescope-e2e-{name}-{os.getpid()}-{free_port()}"
        self.cgroup = cgroup2_root() + self.container
        os.makedirs(self.cgroup, exist_ok=True)

    def _enter(self):
        with open(os.path.join(self.cgroup, "cgroup.procs"), "w") as f:
            f.write("0")

    def run(self, argv, timeout=300, env=None, check=True):
        """Runs a client to completion in the cgroup; returns the CompletedProcess (text)."""
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                           timeout=timeout, preexec_fn=self._enter)
        if check:
            assert p.returncode == 0, f"{argv} exited with {p.returncode}:\n{p.stdout}{p.stderr}"
        return p

    def popen(self, argv, **kw):
        return subprocess.Popen(argv, preexec_fn=self._enter, **kw)

    def remove(self):
        for _ in range(200):
            try:
                os.rmdir(self.cgroup)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)
