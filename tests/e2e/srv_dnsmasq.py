"""A private dnsmasq (Debian's dnsmasq-base) for the e2e tests and bench/dns: answers on ADDRESS:53
from the test's own records only, in a cgroup of its own (service.py)."""
import shutil
import subprocess

from service import Service, need

DIG = shutil.which("dig") or "/usr/bin/dig"
DNSMASQ = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"


class Dnsmasq(Service):
    """Names under nodescope.test are its: a.nodescope.test is 10.1.2.3, both.nodescope.test
    10.1.2.4 and fd00::4, other names under it NXDOMAIN; names elsewhere REFUSED (no upstream)
    unless extra arguments add a --server."""

    def __init__(self, address, *extra):
        super().__init__("dnsmasq")
        need(DIG, "bind9-dnsutils")
        self.address = address
        self.start([need(DNSMASQ, "dnsmasq-base"), "--keep-in-foreground", "--conf-file=/dev/null",
                    f"--listen-address={address}", "--bind-interfaces", "--port=53", "--no-resolv",
                    "--no-hosts", "--user=root", "--local=/nodescope.test/",
                    "--host-record=a.nodescope.test,10.1.2.3", "--host-record=both.nodescope.test,10.1.2.4,fd00::4",
                    *extra, f"--log-facility={self.path('log')}"],
                   ready=lambda: self.dig("a.nodescope.test") == "10.1.2.3", timeout=15)

    def dig(self, name, *opts):
        """dig +short's answer (one try, 1 s)."""
        return subprocess.run([DIG, "+short", "+time=1", "+tries=1", *opts, f"@{self.address}", name],
                              capture_output=True, text=True).stdout.strip()
