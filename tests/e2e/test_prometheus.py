"""/metrics scraped by a real Prometheus server on loopback, values read back through its API."""
import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from conftest import Agent, free_port


def query(port, expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.loads(r.read())
    assert body["status"] == "success", body
    return body["data"]["result"]


def test_prometheus_scrapes_agent(tmp_path):
    prom = shutil.which("prometheus")
    if not prom:
        pytest.fail("prometheus (Debian package) is not installed")
    agent = Agent(trace=False)
    pport = free_port()
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(
        "global:\n  scrape_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: nodescope\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{agent.port}']\n")
    server = subprocess.Popen(
        [prom, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{pport}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(10):
            subprocess.run(["/bin/true"], check=True)
        deadline = time.monotonic() + 90
        result = []
        while time.monotonic() < deadline:
            try:
                result = query(pport, 'nodescope_events_total{stream="proc"}')
            except OSError:
                result = []
            if result and float(result[0]["value"][1]) >= 30:
                break
            time.sleep(1)
        assert result, "prometheus never got nodescope_events_total"
        assert float(result[0]["value"][1]) >= 30  # 10 x (fork, exec, exit)
        up = query(pport, 'up{job="nodescope"}')
        assert up and up[0]["value"][1] == "1"
        info = query(pport, "node_agent_info")
        assert info and info[0]["metric"]["version"]
        # The node key of the Coroot server, on every series.
        with open("/etc/machine-id") as f:
            assert info[0]["metric"]["machine_id"] == f.read().strip()
        # (up and scrape_* are Prometheus' own series about the scrape, not the agent's.)
        unkeyed = query(pport, 'count({job="nodescope",machine_id="",__name__!~"up|scrape_.*"})')
        assert not unkeyed, unkeyed
    finally:
        server.terminate()
        server.wait(30)
        agent.stop()


def test_promtool_check_metrics(agent_factory):
    """promtool's lint of /metrics: clean but for Coroot's histogram names, which end in _total
    and are kept so its queries work unchanged."""
    a = agent_factory("--events", "proc")
    # The scrapes are inbound HTTP requests too: once one has been paired (the l7 stream is
    # read on its own schedule), the histograms have series.
    deadline = time.monotonic() + 30
    while True:
        text = urllib.request.urlopen(f"http://127.0.0.1:{a.port}/metrics", timeout=10).read()
        if b"_duration_seconds_total_bucket" in text:
            break
        assert time.monotonic() < deadline, "no HTTP histogram series after 30 s of scrapes"
        time.sleep(0.2)
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, timeout=30)
    findings = [l for l in (p.stdout + p.stderr).decode().splitlines() if l.strip()]
    coroot_names = [f for f in findings
                    if f.endswith('_duration_seconds_total non-counter metrics should not have "_total" suffix')]
    assert findings == coroot_names and coroot_names, findings
