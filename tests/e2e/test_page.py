"""The web page's service map in a real browser (Debian's chromium, headless, over its DevTools
protocol) against the real agent and a known workload: a curl loop to nginx, with a path and a
cgroup named like markup, and a connect to a closed port.

The map must show the client and nginx with an HTTP edge of non-zero rate and an edge to the
closed port with failed connects; a click opens a container's details (processes, listens,
recent exits, top requests); updates arrive without a reload; every hostile name shows as
text; the page runs under its Content-Security-Policy with no violation. A screenshot is saved
to build/e2e/map.png (docs/map.png is the latest one, committed).
"""
import json
import os
import re
import signal
import subprocess
import time
import urllib.request

from browser import Browser
from conftest import cgroup2_root, free_port
from nginx import Nginx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCREENSHOT = os.path.join(ROOT, "build", "e2e", "map.png")

NGINX_HTTP = """
http {{
    access_log off;
    default_type text/plain;
{temp_paths}
    server {{
        listen 127.0.0.1:{port};
        root {d}/www;
        location = /ok {{ return 200 "ok\\n"; }}
        location = /boom {{ return 500; }}
    }}
}}
"""

# A cgroup and a request path that are markup if a page ever inserts them as HTML. (A cgroup
# name has no '/'.) Either would set window.pwned if it ran.
HOSTILE_CGROUP = "nodescope-e2e-<img src=x onerror=window.pwned=1>"
HOSTILE_PATH = "/<script>window.pwned=2</script>"

# The client: curl to nginx (ok, a 500, the hostile path) and to a closed port, over and over.
LOOP = """
while :; do
  curl -s -o /dev/null http://127.0.0.1:{port}/ok
  curl -s -o /dev/null http://127.0.0.1:{port}/ok
  curl -s -o /dev/null http://127.0.0.1:{port}/boom
  curl -s -o /dev/null 'http://127.0.0.1:{port}{path}'
  curl -s -o /dev/null http://127.0.0.1:{closed}/
  sleep 0.2
done
"""

MODEL = """(() => {
  const m = window.nodescopeMap && window.nodescopeMap.state.model;
  if (!m) return null;
  const cy = window.nodescopeMap.cy;
  return {
    nodes: [...m.nodes.keys()].filter((id) => cy.getElementById(id).length === 1),
    edges: [...m.edges.values()].filter((e) => cy.getElementById(e.id).length === 1).map((e) => ({
      source: e.source, target: e.target, destination: e.destination, rate: e.rate,
      failed: e.failedRate, protos: Object.keys(e.protos), label: cy.getElementById(e.id).data('label') })),
  };
})()"""


def details_text(b):
    return b.eval("document.getElementById('details').hidden ? '' : "
                  "document.getElementById('details-body').textContent")


def center_of(b, selector_expr):
    return b.eval(f"(() => {{ const r = {selector_expr}.getBoundingClientRect(); "
                  f"return [r.left + r.width / 2, r.top + r.height / 2]; }})()")


def node_position(b, node_id):
    return b.eval(f"""(() => {{
        const n = window.nodescopeMap.cy.getElementById({json.dumps(node_id)});
        const p = n.renderedPosition();
        const r = document.getElementById('map').getBoundingClientRect();
        return [r.left + p.x, r.top + p.y];
    }})()""")


def test_service_map(agent_factory):
    agent = agent_factory(trace=False)
    nginx = Nginx(NGINX_HTTP)
    closed = free_port()
    cgroup = os.path.join(cgroup2_root(), HOSTILE_CGROUP)
    os.makedirs(cgroup, exist_ok=True)
    client_id = "/" + HOSTILE_CGROUP

    def enter_cgroup():
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write("0")

    client = subprocess.Popen(
        ["sh", "-c", LOOP.format(port=nginx.port, path=HOSTILE_PATH, closed=closed)],
        preexec_fn=enter_cgroup, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    browser = None
    try:
        url = f"http://127.0.0.1:{agent.port}/"
        # The page: a strict policy, and no inline script for it to forbid.
        with urllib.request.urlopen(url, timeout=10) as r:
            csp = r.headers["Content-Security-Policy"]
            html = r.read().decode()
        assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe" not in csp
        assert not re.search(r"<script(?![^>]*\ssrc=)", html), "an inline script in the page"
        assert "http" not in re.sub(r'href="/[^"]*"', "", html).replace("http-equiv", ""), \
            "the page refers to another origin"

        browser = b = Browser()
        b.call("Page.addScriptToEvaluateOnNewDocument", source=(
            "window.__csp = []; document.addEventListener('securitypolicyviolation', "
            "(e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"))
        b.navigate(url)

        # The map: both containers, an HTTP edge with a rate, an edge with failed connects.
        def found():
            m = b.eval(MODEL)
            if not m:
                return None
            http = [e for e in m["edges"] if e["source"] == client_id and e["target"] == nginx.container
                    and "http" in e["protos"] and e["rate"] > 0]
            refused = [e for e in m["edges"] if e["source"] == client_id
                       and e["destination"] == f"127.0.0.1:{closed}" and e["failed"] > 0]
            if http and refused and nginx.container in m["nodes"] and client_id in m["nodes"]:
                return m, http[0], refused[0]
            return None

        b.wait(MODEL, what="the page's first map")
        deadline = time.monotonic() + 90
        while not (got := found()):
            assert time.monotonic() < deadline, f"the map lacks the workload's edges: {b.eval(MODEL)}"
            time.sleep(0.5)
        m, http, refused = got
        assert re.search(r"http [0-9.]+/s", http["label"]), http
        assert "failed" in refused["label"], refused

        # An update arrives without a reload: the same document, a newer map.
        n = b.eval("window.__same = 1; window.nodescopeMap.state.updates")
        b.wait(f"window.__same === 1 && window.nodescopeMap.state.updates > {n}",
               what="a pushed update")

        # A click on nginx opens its details.
        x, y = node_position(b, nginx.container)
        b.click(x, y)
        b.wait(f"document.querySelector('#details h2') && "
               f"document.querySelector('#details h2').textContent === {json.dumps(nginx.container)} && "
               f"document.getElementById('details-body').textContent.includes('Top requests')",
               what="nginx's details")
        text = details_text(b)
        assert "nginx" in text and "Listening on" in text and nginx.addr in text, text
        assert "GET /ok" in text and "GET " + HOSTILE_PATH in text, text

        # The hostile container, found with the search box: its name and exits as text.
        b.eval("document.getElementById('search').focus()")
        b.type("onerror")
        b.key("Enter", "Enter", 13)
        b.wait(f"document.querySelector('#details h2') && "
               f"document.querySelector('#details h2').textContent === {json.dumps(client_id)} && "
               f"document.getElementById('details-body').textContent.includes('Recent exits')",
               what="the client's details")
        text = details_text(b)
        assert "curl" in text and "code 7" in text, text  # curl's exit when its connect is refused

        # Markup in names stayed text: no element made of it, nothing of it ran.
        assert b.eval("document.querySelectorAll('img').length") == 0
        assert b.eval("document.querySelectorAll('script').length") == 2  # vendor.js and map.js
        assert b.eval("typeof window.pwned") == "undefined"

        # The window toggle.
        b.click(*center_of(b, "document.querySelector('#window button[data-window=\"0\"]')"))
        b.wait("document.getElementById('status').textContent.includes('since start')",
               what="the since-start window")
        b.click(*center_of(b, "document.querySelector('#window button[data-window=\"300\"]')"))
        b.wait("document.getElementById('status').textContent.includes('last')",
               what="the 5-minute window")
        b.eval("document.getElementById('search').value = ''; "
               "document.getElementById('search').dispatchEvent(new Event('input'))")
        assert b.eval("window.__csp") == []
        b.screenshot(SCREENSHOT)
    finally:
        if browser:
            browser.close()
        os.killpg(client.pid, signal.SIGKILL)
        client.wait()
        nginx.stop()
        for _ in range(100):
            try:
                os.rmdir(cgroup)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
