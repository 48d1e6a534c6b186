"""Coroot's options, held against Coroot's list (tests/e2e/data/coroot_flags.json, facts from its
source): every one is accepted by its name and by its variable, the ones nodescope does not do
yet with one start-up warning each; our own unknown options still exit 2. And the semantics of
the ones it implements, observed on real traffic: several ephemeral port ranges, a remote write
every 500 ms, --track-public-network (with "public" destinations in network namespaces the test
makes), --exclude-http-requests-by-path against a real HTTP server, --disable-l7-tracing, and the
log rate limit."""
import http.client
import http.server
import json
import os
import re
import socket
import subprocess
import threading

import pytest

from conftest import AGENT, Agent, free_port, wait_until
from netns import netpair  # noqa: F401  (fixture)

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "coroot_flags.json")) as f:
    COROOT = json.load(f)
FLAGS = COROOT["flags"]
WARNING = re.compile(r" warn nodescope: (\S+): not implemented yet, ignored \(Coroot's --([a-z0-9-]+): ")


def help_text():
    return subprocess.run([AGENT, "--help"], capture_output=True, text=True, timeout=30).stdout


def in_table(flag, help_=None):
    """Whether --help lists the option."""
    return f"  --{flag['flag']}" in (help_ or help_text())


def warnings_of(agent):
    return [m.groups() for m in map(WARNING.search, agent.stderr().splitlines()) if m]


def test_data_is_coroots_list():
    """43 options; each variable is the name in upper case with '_' (kingpin's Envar), but --version."""
    assert len(FLAGS) == 43
    assert len({f["flag"] for f in FLAGS}) == 43
    for f in FLAGS:
        want = None if f["flag"] == "version" else f["flag"].upper().replace("-", "_")
        assert f["env"] == want, f
        assert f["nodescope"] in ("implemented", "not_implemented"), f
    h = help_text()
    for f in FLAGS:
        assert in_table(f, h), f
        if f["env"]:
            assert f"env {f['env']}\n" in h, f


def accepted(flags, h):
    """The options of the data this build has, but --version, which prints and exits."""
    return [f for f in flags if f["flag"] != "version"]


def sample(f, tmp_path, port):
    """A value of the right form that runs here: endpoints to a port nothing listens on."""
    if f["flag"] == "wal-dir":
        return str(tmp_path / "wal")
    if f["type"] == "url":
        return re.sub(r"127\.0\.0\.1:9\b", f"127.0.0.1:{port}", f["sample"])
    return f["sample"]


def test_every_coroot_option_by_flag(tmp_path):
    """All of Coroot's options at once on the command line: the agent runs, and says which it ignores."""
    h = help_text()
    down = free_port()
    args = []
    for f in accepted(FLAGS, h):
        if f["flag"] == "listen":
            continue  # the test's Agent gives its own
        args += [f"--{f['flag']}"] + ([sample(f, tmp_path, down)] if f["sample"] is not None else [])
    a = Agent(*args, trace=False)
    try:
        want = sorted((f"--{f['flag']}", f["flag"]) for f in FLAGS if f["nodescope"] == "not_implemented")
        assert sorted(warnings_of(a)) == want
        assert a.metric("nodescope_feature_enabled", feature="l7") == 0  # --disable-l7-tracing
    finally:
        assert a.stop() == 0


def test_every_coroot_option_by_environment(tmp_path, monkeypatch):
    """The same by Coroot's variables only, booleans as Go's ParseBool spells them."""
    h = help_text()
    down, port = free_port(), free_port()
    for i, f in enumerate(accepted(FLAGS, h)):
        if f["flag"] == "listen":
            value = f"127.0.0.1:{port}"
        elif f["sample"] is None:
            value = ["1", "t", "TRUE", "true", "True"][i % 5]
        else:
            value = sample(f, tmp_path, down)
        monkeypatch.setenv(f["env"], value)
    a = Agent(trace=False, listen=False, ephemeral_ports=None, keep_standalone=False)
    a.port = port
    try:
        assert a.cmd == [AGENT]
        want = sorted((f["env"], f["flag"]) for f in FLAGS if f["nodescope"] == "not_implemented")
        assert sorted(warnings_of(a)) == want
        assert a.metric("nodescope_feature_enabled", feature="l7") == 0
    finally:
        assert a.stop() == 0


def test_operator_variables_warn(monkeypatch):
    """What the Coroot operator sets and nodescope does not do says so, once each, never silence."""
    operator = {"TRACES_ENDPOINT": "http://coroot:8080/v1/traces", "LOGS_ENDPOINT": "http://coroot:8080/v1/logs",
                "PROFILES_ENDPOINT": "http://coroot:8080/v1/profiles", "DISABLE_LOG_PARSING": "true",
                "TRACES_SAMPLING": "0.1"}
    for k, v in operator.items():
        monkeypatch.setenv(k, v)
    a = Agent("--disable-pinger", "--go-heap-profiler", "force", trace=False)
    try:
        got = warnings_of(a)
        assert sorted(got) == sorted([(k, k.lower().replace("_", "-")) for k in operator]
                                     + [("--disable-pinger", "disable-pinger"),
                                        ("--go-heap-profiler", "go-heap-profiler")])
    finally:
        assert a.stop() == 0


def run_agent(*args, **env):
    return subprocess.run([AGENT, *args], env=dict(os.environ, **env), capture_output=True, text=True,
                          timeout=30)


def test_unknown_options_exit_2_but_never_coroots():
    p = run_agent("--no-such-option")
    assert p.returncode == 2, p
    assert "unknown option '--no-such-option'" in p.stderr
    # a Coroot value of the wrong form is a usage error too, naming what it takes
    p = run_agent("--traces-sampling", "2")
    assert p.returncode == 2 and p.stderr == "nodescope: bad --traces-sampling '2' (a number 0..1)\n", p
    p = run_agent(SCRAPE_INTERVAL="10ms")
    assert p.returncode == 2, p
    assert p.stderr.startswith("nodescope: bad SCRAPE_INTERVAL='10ms' (100ms..24h, Go's form"), p.stderr
    p = run_agent(EPHEMERAL_PORT_RANGE="1024-23768 x")
    assert p.returncode == 2 and "bad EPHEMERAL_PORT_RANGE" in p.stderr, p


# ---- several ephemeral ranges ----

def listener(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(16)
    return s


def port_in(lo, hi):
    for port in range(lo, hi):
        try:
            return port, listener(port)
        except OSError:
            continue
    raise AssertionError(f"no free port in {lo}-{hi}")


def test_several_ephemeral_ranges(monkeypatch):
    """EPHEMERAL_PORT_RANGE="A B": listens and destinations in either range are left out, the gap between kept."""
    # Below the kernel's own range (32768+), so no client socket takes them meanwhile.
    p1, s1 = port_in(20100, 20200)
    p2, s2 = port_in(24100, 24200)
    p3, s3 = port_in(22100, 22200)  # between the two ranges
    monkeypatch.setenv("EPHEMERAL_PORT_RANGE", "20000-20999 24000-24999")
    a = Agent(trace=False, ephemeral_ports=None)
    try:
        for p in (p1, p2, p3):  # the kept one last: its series means the others were read
            c = socket.create_connection(("127.0.0.1", p))
            c.close()
        wait_until(lambda: a.has_series("container_net_tcp_successful_connects_total", destination=f"127.0.0.1:{p3}"),
                   "the connect to the port between the ranges")
        m = a.metrics()
        dests = {dict(k).get("destination") for k in m.get("container_net_tcp_successful_connects_total", {})}
        listens = {dict(k).get("listen_addr") for k in m.get("container_net_tcp_listen_info", {})}
        assert f"127.0.0.1:{p1}" not in dests and f"127.0.0.1:{p2}" not in dests, dests
        assert f"127.0.0.1:{p3}" in listens
        assert f"127.0.0.1:{p1}" not in listens and f"127.0.0.1:{p2}" not in listens, listens
    finally:
        a.stop()
        for s in (s1, s2, s3):
            s.close()


# ---- SCRAPE_INTERVAL=500ms ----

def test_remote_write_every_500ms(tmp_path, monkeypatch):
    """SCRAPE_INTERVAL=500ms: collections half a second apart, as written to the receiver."""
    from prometheus import Prometheus
    prom = Prometheus(tmp_path)
    prom.start()
    try:
        monkeypatch.setenv("SCRAPE_INTERVAL", "500ms")
        a = Agent("--metrics-endpoint", prom.url, "--wal-dir", str(tmp_path / "wal"), trace=False)
        try:
            assert "every 500ms" in a.stderr()
            sel = "node_agent_info"  # the receiver is this test's own: one agent

            def times():
                s = prom.raw_samples(sel, window="5m")
                return sorted({t for v in s.values() for t, _ in v}) if s else []
            # The start-up line says the interval as parsed; the collections show it is used. A
            # whole-second interval can never put two collections less than 0.9 s apart, while
            # a 500 ms one does so at every tick it is not delayed: one such gap of many is asked.
            ts = wait_until(lambda: (lambda t: t if len(t) >= 12 else None)(times()), "12 collections", timeout=120)
            gaps = [b - a_ for a_, b in zip(ts, ts[1:])]
            assert min(gaps) < 0.9, gaps
        finally:
            assert a.stop() == 0
    finally:
        prom.stop()


# ---- --track-public-network ----

# Server side of the public-network test: one listener on every address of the namespace.
ANY_SERVER = r"""
import json, socket, sys
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", int(sys.argv[1])))
s.listen(64)
print(json.dumps({"ready": True}), flush=True)
while True:
    c, _ = s.accept()
    c.close()
"""

# Connects to each address in turn (after a "go" line), printing one JSON line when done.
CONNECTS = r"""
import json, socket, sys
port = int(sys.argv[1])
sys.stdin.readline()
for host in sys.argv[2:]:
    c = socket.create_connection((host, port), timeout=10)
    c.close()
print(json.dumps({"done": True}), flush=True)
sys.stdin.readline()
"""

# TEST-NET-2/3 and 2001:db8::/32 are public to Coroot (not RFC 1918, 100.64.0.0/10, fc00::/7,
# loopback or link-local). The node's own public networks are kept too: this machine's
# interfaces are read by the agent, so none of these may be on one (checked below).
KEPT_V4, OTHER_V4, PUBLIC_V6, PRIVATE_V6 = "198.51.100.7", "203.0.113.7", "2001:db8::7", "fd42:77::7"


def public_setup(net):
    for addr in (KEPT_V4, OTHER_V4):
        net.exec(net.server, net.ip, "addr", "add", f"{addr}/32", "dev", "lo")
        net.exec(net.client, net.ip, "route", "add", f"{addr}/32", "via", net.server_ip)
    net.exec(net.client, net.ip, "addr", "add", "fd42:77:1::1/64", "dev", net.client_if, "nodad")
    net.exec(net.server, net.ip, "addr", "add", "fd42:77:1::2/64", "dev", net.server_if, "nodad")
    for addr in (PUBLIC_V6, PRIVATE_V6):
        net.exec(net.server, net.ip, "addr", "add", f"{addr}/128", "dev", "lo")
        net.exec(net.client, net.ip, "-6", "route", "add", f"{addr}/128", "via", "fd42:77:1::2")


def test_track_public_network(netpair, monkeypatch):
    """Coroot's rule: private destinations always kept; public ones only in --track-public-network
    (default 0.0.0.0/0: every IPv4 one, no IPv6 one). Two agents watch the same connects."""
    own = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
    assert not re.search(r"inet6? (198\.51\.100\.|203\.0\.113\.|2001:db8:)", own), own
    net = netpair("pub", 77)
    public_setup(net)
    default = Agent(trace=False)
    # as the Coroot operator passes it: newline-separated
    monkeypatch.setenv("TRACK_PUBLIC_NETWORK", f"198.51.100.0/24\n2001:db8::/32\n")
    given = Agent(trace=False)
    monkeypatch.delenv("TRACK_PUBLIC_NETWORK")
    try:
        port = 7777
        server = net.spawn(net.server, ANY_SERVER, port)
        assert server.json(timeout=20)["ready"]
        # The ones some agent leaves out first: once the last is seen, the earlier ones were read.
        order = [OTHER_V4, PUBLIC_V6, KEPT_V4, PRIVATE_V6, net.server_ip]
        client = net.spawn(net.client, CONNECTS, port, *order)
        client.proc.stdin.write("go\n")
        client.proc.stdin.flush()
        assert client.json(timeout=30)["done"]

        def dest(addr):
            return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"
        last = dest(net.server_ip)
        for a in (default, given):
            wait_until(lambda: a.has_series("container_net_tcp_successful_connects_total", destination=last),
                       f"{last} in {a.cmd}")

        def kept(a):
            series = a.metrics().get("container_net_tcp_successful_connects_total", {})
            seen = {dict(k)["destination"] for k in series}
            return {addr for addr in order if dest(addr) in seen}
        assert kept(default) == {OTHER_V4, KEPT_V4, PRIVATE_V6, net.server_ip}
        assert kept(given) == {KEPT_V4, PUBLIC_V6, PRIVATE_V6, net.server_ip}
        for a in (default, given):
            assert a.metric("nodescope_tcp_public_destinations_skipped_total") >= 1
    finally:
        given.stop()
        default.stop()


# ---- --exclude-http-requests-by-path ----

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        body = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def http_server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def requests(agent, dst):
    return agent.metric_sum("container_http_requests_total", destination=dst)


# Paths no other test asks for: the excluded count is the agent's, over every request it sees.
P = "/opt39"


def test_exclude_http_requests_by_path(http_server, monkeypatch):
    """Requests whose path matches a glob are not counted; the others are, on the same connection."""
    port = http_server.server_address[1]
    dst = f"127.0.0.1:{port}"
    monkeypatch.setenv("EXCLUDE_HTTP_REQUESTS_BY_PATH", f"{P}/{{ready,live}}z\n{P}/metrics")
    a = Agent("--exclude-http-requests-by-path", f"{P}/health*",
              "--exclude-http-requests-by-path", f"{P}/internal/*/ping", trace=False)
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        excluded = [f"{P}/healthz", f"{P}/health/deep", f"{P}/internal/a/b/ping"]
        # the variable is not read (the flags win); the query is no part of the path
        counted = [f"{P}/readyz", f"{P}/metrics", f"{P}/api/health", f"{P}/ok?{P}/health"]
        for path in excluded + counted:  # in this order: the last counted means all were read
            c.request("GET", path)
            assert c.getresponse().read() == b"ok\n"
        c.close()
        wait_until(lambda: requests(a, dst) >= len(counted), "the counted requests")
        assert requests(a, dst) == len(counted)
        assert a.metric("nodescope_l7_http_requests_excluded_total") == len(excluded)
    finally:
        assert a.stop() == 0


def test_exclude_http_requests_by_path_from_environment(http_server, monkeypatch):
    """EXCLUDE_HTTP_REQUESTS_BY_PATH newline-separated, as Kubernetes passes a list."""
    port = http_server.server_address[1]
    dst = f"127.0.0.1:{port}"
    monkeypatch.setenv("EXCLUDE_HTTP_REQUESTS_BY_PATH", f"{P}/{{ready,live}}z\n{P}/metrics\n")
    a = Agent(trace=False)
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for path in (f"{P}/readyz", f"{P}/livez", f"{P}/metrics", f"{P}/ok"):
            c.request("GET", path)
            assert c.getresponse().read() == b"ok\n"
        c.close()
        wait_until(lambda: requests(a, dst) >= 1, "/ok")
        assert requests(a, dst) == 1
        assert a.metric("nodescope_l7_http_requests_excluded_total") == 3
    finally:
        assert a.stop() == 0


# ---- --disable-l7-tracing ----

def test_disable_l7_tracing(http_server, monkeypatch):
    """No L7 capture at all (no hook, no stream, no TLS probing); the TCP metrics stay."""
    port = http_server.server_address[1]
    dst = f"127.0.0.1:{port}"
    on = Agent(trace=False)
    monkeypatch.setenv("DISABLE_L7_TRACING", "true")
    off = Agent(trace=False)
    monkeypatch.delenv("DISABLE_L7_TRACING")
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/ok")
        assert c.getresponse().read() == b"ok\n"
        c.close()
        wait_until(lambda: requests(on, dst) == 1, "the request in the agent with L7")
        wait_until(lambda: off.has_series("container_net_tcp_successful_connects_total", destination=dst),
                   "the connect in the agent without L7")
        m = off.metrics()
        assert not any(dict(k).get("destination") == dst for k in m.get("container_http_requests_total", {}))
        assert not any(dict(k).get("stream") == "l7" for k in m.get("nodescope_events_total", {}))
        assert off.metric("nodescope_feature_enabled", feature="l7") == 0
        assert off.metric("nodescope_feature_enabled", feature="tls") == 0
        assert on.metric("nodescope_feature_enabled", feature="l7") == 1
        # the L7 hooks are not attached at all
        assert off.metric("nodescope_probes_attached") < on.metric("nodescope_probes_attached")
    finally:
        off.stop()
        on.stop()


# ---- --log-per-second / --log-burst ----

def test_log_rate_limit():
    """--log-burst 2 --log-per-second 0: two lines, the rest counted (the start-up says more)."""
    a = Agent("--log-burst", "2", "--log-per-second", "0", "--disable-pinger", "--enable-java-tls",
              "--disable-gpu-monitoring")  # trace: ready on stdout, as stderr says too little
    try:
        assert a.metric("nodescope_log_lines_suppressed_total") >= 3
        lines = [line for line in a.stderr().splitlines() if " nodescope: " in line]
        assert len(lines) == 2, lines
    finally:
        assert a.stop() == 0
