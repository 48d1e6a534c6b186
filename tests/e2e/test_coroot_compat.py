"""Coroot compatibility (issue: drop-in): every family both agents export, scraped while a workload
runs, against a machine-readable copy of Coroot's catalog (tests/e2e/data/coroot_catalog.json):
name, type, label set, and label values where Coroot fixes them."""
import json
import os
import socket
import subprocess
import urllib.request

from conftest import parse_metrics
from nginx import Nginx
from srv_redis import Redis

HERE = os.path.dirname(os.path.abspath(__file__))
NGINX_HTTP = """
http {{
    access_log off;
{temp_paths}
    server {{
        listen 127.0.0.1:{port};
        location = /ok {{ return 200 "ok\\n"; }}
        location = /boom {{ return 500; }}
    }}
}}
"""


def types_of(text):
    return {l.split()[2]: l.split()[3] for l in text.splitlines() if l.startswith("# TYPE ")}


def test_families_match_coroots_catalog(agent_factory):
    with open(os.path.join(HERE, "data", "coroot_catalog.json")) as f:
        catalog = json.load(f)
    a = agent_factory("--events", "tcp,l7")
    n = Nginx(NGINX_HTTP, workers=1)
    r = Redis(tls=False)
    try:
        # a database's families too: a query that succeeds and one that fails
        c = r.client()
        c.set("k", "v")
        try:
            c.execute_command("NO-SUCH-COMMAND")
        except Exception:
            pass
        c.close()
        for path in ("/ok", "/boom", "/none"):
            assert subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://{n.addr}{path}"],
                                  timeout=10).returncode == 0
        refused = socket.socket()
        refused.bind(("127.0.0.1", 0))
        port = refused.getsockname()[1]
        refused.close()
        assert subprocess.run(["curl", "-s", f"http://127.0.0.1:{port}/"], timeout=10).returncode != 0
        a.wait_for(lambda evs: sum(1 for e in evs if e.get("type") == "l7" and e.get("dir") == "in") >= 3
                   and any(e.get("type") == "connect_error" for e in evs)
                   and sum(1 for e in evs if e.get("type") == "close" and e.get("dst") == n.addr) >= 3
                   and all(sum(1 for e in evs if e.get("type") == "l7" and e.get("proto") == "redis"
                               and e.get("dir") == d) >= 2 for d in ("in", "out")),
                   what="the requests, their connections' closes, the refused connect and the redis queries")
        text = urllib.request.urlopen(f"http://127.0.0.1:{a.port}/metrics", timeout=10).read().decode()
    finally:
        n.stop()
        r.stop()
    types = types_of(text)
    metrics = parse_metrics(text, keep_node_labels=True)
    seen = 0
    for name, want in catalog["families"].items():
        assert types.get(name) == want["type"], (name, types.get(name))
        labels = set(catalog["every_series"]) | set(want["labels"])
        if want.get("container", True):
            labels |= set(catalog["container_series"])
        series = metrics.get(name + ("_count" if want["type"] == "histogram" else ""), {})
        for key in series:
            got = dict(key)
            assert set(got) == labels, (name, sorted(got), sorted(labels))
            for label, allowed in want.get("values", {}).items():
                assert got[label] in allowed, (name, label, got[label])
        if want["type"] == "histogram" and series:
            les = {dict(k)["le"] for k in metrics[name + "_bucket"]}
            assert les == set(want["buckets"]), (name, sorted(les))
        seen += bool(series)
    # the database's series were among those checked, not only its families' types
    for name in ("container_redis_queries_total", "container_redis_inbound_queries_total"):
        assert {dict(k)["status"] for k in metrics.get(name, {})} == {"ok", "failed"}, name
    # The workload gives series to most of them (not container_info or OOM kills, say).
    assert seen >= 10, (seen, sorted(metrics))
