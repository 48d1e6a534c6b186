"""A real nginx (Debian's package) for the e2e tests: run as root in the foreground, its config and
files in a temporary directory, stopped and removed by stop()."""
import http.client
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time

import pytest

from conftest import cgroup2_root, free_port

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

# What every config template starts with; {d} is the directory, {port} the listening port.
NGINX_MAIN = """
user www-data;
worker_processes {workers};
pid {d}/nginx.pid;
lock_file {d}/nginx.lock;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
"""

TEMP_PATHS = """
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
"""


def ppid_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[1])


def self_signed_cert(directory, name="localhost"):
    """A key and self-signed certificate made with the openssl command; returns their paths."""
    key, crt = os.path.join(directory, f"{name}.key"), os.path.join(directory, f"{name}.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", f"/CN={name}", "-keyout", key, "-out", crt],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return key, crt


class Nginx:
    """http_block: the config's http {...} text, formatted with d, port and the extra keywords.
    files: {relative path: bytes} written under the directory first. tls: the server speaks TLS."""

    def __init__(self, http_block, files=None, workers=2, tls=False, **fmt):
        if not os.access(NGINX, os.X_OK):
            pytest.fail("nginx is missing: apt-get install nginx (scripts/install-deps.sh)")
        self.dir = tempfile.mkdtemp(prefix="nodescope-e2e-nginx.")
        os.chmod(self.dir, 0o755)  # the workers run as www-data
        os.makedirs(os.path.join(self.dir, "www"))
        os.makedirs(os.path.join(self.dir, "tmp"))
        for rel, data in (files or {}).items():
            with open(os.path.join(self.dir, rel), "wb") as f:
                f.write(data)
        self.tls = tls
        self.key, self.crt = self_signed_cert(self.dir) if tls else (None, None)
        self.port = free_port()
        self.addr = f"127.0.0.1:{self.port}"
        self.workers_wanted = workers
        self.conf = os.path.join(self.dir, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(NGINX_MAIN.format(d=self.dir, workers=workers))
            f.write(http_block.format(d=self.dir, port=self.port, temp_paths=TEMP_PATHS.format(d=self.dir),
                                      key=self.key, crt=self.crt, **fmt))
        self.log = open(os.path.join(self.dir, "stderr"), "wb")
        # Its own cgroup, as a service has: its metrics are told from those of the test process
        # (and of the agent, which serves /metrics over HTTP from the test's cgroup).
        self.container = f"/nodescope-e2e-nginx-{self.port}"
        self.cgroup = cgroup2_root() + self.container
        os.makedirs(self.cgroup, exist_ok=True)
        procs = os.path.join(self.cgroup, "cgroup.procs")

        def enter_cgroup():
            with open(procs, "w") as f:
                f.write("0")

        self.proc = subprocess.Popen([NGINX, "-p", self.dir, "-e", os.path.join(self.dir, "error.log"),
                                      "-c", self.conf, "-g", "daemon off;"],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                     preexec_fn=enter_cgroup)
        deadline = time.monotonic() + 15
        while True:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"nginx did not start: {self.proc.args}\n{self.logs()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                if len(self.workers()) == workers:
                    break
            except OSError:
                pass
            time.sleep(0.05)

    def workers(self):
        """Pids of the master's children (the workers)."""
        out = []
        for d in os.listdir("/proc"):
            if d.isdigit() and ppid_of(int(d)) == self.proc.pid:
                out.append(int(d))
        return out

    def logs(self):
        text = ""
        for name in ("stderr", "error.log"):
            try:
                with open(os.path.join(self.dir, name), errors="replace") as f:
                    text += f"--- {name}:\n" + f.read()
            except OSError:
                pass
        return text

    def connection(self, timeout=10):
        if self.tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def stub_requests(self):
        """nginx's own count of requests (stub_status at /nginx_status), including this one."""
        c = self.connection()
        c.request("GET", "/nginx_status")
        text = c.getresponse().read().decode()
        c.close()
        # "server accepts handled requests\n 1 1 3 \n"
        return int(re.search(r"accepts handled requests\s+(\d+)\s+(\d+)\s+(\d+)", text).group(3))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        # Workers may outlive the master by a moment; the cgroup goes once they have.
        for _ in range(100):
            try:
                os.rmdir(self.cgroup)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
