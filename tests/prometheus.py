"""Debian's Prometheus as a remote-write receiver, the one the tests send to (e2e's remote write,
packaging's image run as Coroot's operator runs it)."""
import json
import shutil
import subprocess
import urllib.parse
import urllib.request

import pytest

from ports import free_port
from wait import wait_until


class Prometheus:
    """Debian's prometheus with --web.enable-remote-write-receiver, no scrapes, on a loopback
    port and a storage directory that survive a stop() and start()."""

    def __init__(self, tmp_path, port=None):
        self.bin = shutil.which("prometheus")
        if not self.bin:
            pytest.fail("prometheus (Debian package) is not installed: make deps")
        self.port = port or free_port()
        self.cfg = tmp_path / "prometheus.yml"
        self.cfg.write_text("global: {}\n")
        self.data = tmp_path / "prometheus-data"
        self.proc = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/api/v1/write"

    def start(self):
        self.proc = subprocess.Popen(
            [self.bin, f"--config.file={self.cfg}", f"--storage.tsdb.path={self.data}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--web.enable-remote-write-receiver"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def ready():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=5) as r:
                    return r.status == 200
            except OSError:
                assert self.proc.poll() is None, \
                    "prometheus exited: " + self.proc.stderr.read().decode()
                return False
        wait_until(ready, "prometheus to be ready", timeout=60)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(60)
        self.proc = None

    def api(self, path, **params):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?" + urllib.parse.urlencode(params, doseq=True)
        with urllib.request.urlopen(url, timeout=30) as r:
            body = json.loads(r.read())
        assert body["status"] == "success", body
        return body["data"]

    def raw_samples(self, selector, window="1h"):
        """Every stored sample of the series of selector: {labels: [(t, value)]}."""
        data = self.api("query", query=f"{selector}[{window}]")
        return {frozenset(s["metric"].items()): [(float(t), float(v)) for t, v in s["values"]]
                for s in data["result"]}
