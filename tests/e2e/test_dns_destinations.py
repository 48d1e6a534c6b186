"""Destinations named by DNS, as Coroot forms them: a domain whose answer gave several addresses, all
external (a public service's fan-out), names connections to them "<domain>:<port>" with no actual
destination, and stays out of ip_to_fqdn; a domain with one address keeps the address and is in
ip_to_fqdn.

The addresses (TEST-NET-2, external by Coroot's rule) live on the loopback of a network namespace
the test makes: the connections never leave it. The names come from a dnsmasq of the test's own,
asked with dig from the root namespace; the agent's table of names is node-wide, as Coroot's is.
"""
import os
import subprocess

from l7db import msum, wait_value
from netns import run, tool
from srv_dnsmasq import DIG, Dnsmasq

SERVER = "127.0.0.80"
FAN = ("198.51.100.7", "198.51.100.8")
ONE = "198.51.100.9"
# a fan-out whose "<domain>:<port>" is longer than the label buffer (63 bytes): kept as an address
LONG = "l" * 50 + ".nodescope.test"
LONG_FAN = ("198.51.100.10", "198.51.100.11")
PORT = 8080

# In the namespace: an HTTP server on every address, and one request to each address given.
SERVE_AND_ASK = r"""
import http.server, socket, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a): pass
for addr in sys.argv[2:]:
    s = http.server.HTTPServer((addr, int(sys.argv[1])), H)
    threading.Thread(target=s.serve_forever, daemon=True).start()
for addr in sys.argv[2:]:
    c = socket.create_connection((addr, int(sys.argv[1])))
    c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while c.recv(4096):
        pass
    c.close()
"""


def test_fan_out_domains_name_their_connections(agent_factory):
    ip = tool("ip")
    ns = f"nstcp-{os.getpid()}-fqdn"
    dns = Dnsmasq(SERVER, *(f"--host-record=fan.nodescope.test,{a}" for a in FAN),
                  f"--host-record=one.nodescope.test,{ONE}",
                  *(f"--host-record={LONG},{a}" for a in LONG_FAN))
    run(ip, "netns", "add", ns)
    try:
        run(ip, "-n", ns, "link", "set", "lo", "up")
        for a in (*FAN, ONE, *LONG_FAN):
            run(ip, "-n", ns, "addr", "add", f"{a}/32", "dev", "lo")
        agent = agent_factory()
        for name, want in (("fan.nodescope.test", "\n".join(FAN)), ("one.nodescope.test", ONE),
                           (LONG, "\n".join(LONG_FAN))):
            assert sorted(dns.dig(name).split()) == sorted(want.split()), name
        # The answers are counted (so read) before any connection is made.
        for name in ("fan.nodescope.test", "one.nodescope.test", LONG):
            asked = lambda: msum(agent.metrics(), "container_dns_requests_total", domain=name, status="ok")
            assert wait_value(asked, 1) == 1, name
        subprocess.run([ip, "netns", "exec", ns, "/usr/bin/python3", "-c", SERVE_AND_ASK, str(PORT), *FAN, ONE, LONG_FAN[0]],
                       check=True, timeout=60)
        # and a connect refused: no one listens on the next port
        refuse = f"import socket\ntry:\n    socket.create_connection(('{FAN[0]}', {PORT + 1}))\nexcept ConnectionRefusedError:\n    pass"
        subprocess.run([ip, "netns", "exec", ns, "/usr/bin/python3", "-c", refuse], check=True, timeout=60)

        fan, one = f"fan.nodescope.test:{PORT}", f"{ONE}:{PORT}"
        connects = lambda m, d, a: msum(m, "container_net_tcp_successful_connects_total",
                                        destination=d, actual_destination=a)
        requests = lambda m, d, a: msum(m, "container_http_requests_total", destination=d,
                                        actual_destination=a, status="2xx")
        assert wait_value(lambda: requests(agent.metrics(), fan, ""), 2) == 2
        assert wait_value(lambda: requests(agent.metrics(), one, one), 1) == 1
        m = agent.metrics()
        assert connects(m, fan, "") == 2 and connects(m, one, one) == 1
        failed = lambda: msum(agent.metrics(), "container_net_tcp_failed_connects_total",
                              destination=f"fan.nodescope.test:{PORT + 1}")
        assert wait_value(failed, 1) == 1
        # the long name's connection keeps its address, counted
        long_dest = f"{LONG_FAN[0]}:{PORT}"
        assert wait_value(lambda: requests(agent.metrics(), long_dest, long_dest), 1) == 1
        assert msum(agent.metrics(), "nodescope_tcp_domain_too_long_total") >= 1
        # no series of the fan-out addresses themselves
        for a in FAN:
            assert msum(m, "container_net_tcp_successful_connects_total", destination=f"{a}:{PORT}") == 0
            assert msum(m, "container_http_requests_total", destination=f"{a}:{PORT}") == 0
        # ip_to_fqdn has the single address, not the fan-out's
        assert msum(m, "ip_to_fqdn", ip=ONE, fqdn="one.nodescope.test") == 1
        assert all(msum(m, "ip_to_fqdn", ip=a) == 0 for a in FAN)
    finally:
        run(ip, "netns", "delete", ns, check=False)
        dns.stop()
