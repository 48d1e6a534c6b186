"""node_cloud_info as Coroot reads it: the provider told by DMI, its instance metadata service asked
once at the start, the flags winning; az and region on container_* series and ip_to_fqdn.

The metadata service is a stand-in (srv_cloud_metadata.py) at the provider's real link-local
address (169.254.169.254; Alibaba's 100.100.100.200; Scaleway's 169.254.42.42), inside a network
namespace the test makes: a veth to the root namespace, and a /32 route for that address into it,
removed afterwards. The DMI values are the test's: the agent runs in a private mount namespace
(dmi_exec.py) where a directory of the test's making is /sys/class/dmi/id.
"""
import itertools
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time

import pytest

from conftest import wait_until
from l7db import msum
from netns import delete_stale, run, tool
from srv_dnsmasq import Dnsmasq

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "srv_cloud_metadata.py")
DMI_EXEC = os.path.join(HERE, "dmi_exec.py")
PIDNS_RUN = os.path.join(HERE, "pidns_run.py")
DNS = "127.0.0.83"
_serial = itertools.count(1)

LABELS = ("provider", "account_id", "instance_id", "instance_type", "instance_life_cycle", "region",
          "availability_zone", "availability_zone_id", "local_ipv4", "public_ipv4")

# provider: (the DMI file and value Coroot tells it by, the service's address, node_cloud_info)
PROVIDERS = {
    "AWS": (("board_vendor", "Amazon EC2"), "169.254.169.254",
            ("AWS", "123456789012", "i-0123456789abcdef0", "m5.large", "spot", "eu-west-1",
             "eu-west-1b", "euw1-az2", "10.0.1.23", "")),
    "GCP": (("board_vendor", "Google"), "169.254.169.254",
            ("GCP", "nodescope-test", "4567890123456789012", "e2-standard-4", "preemptible",
             "us-central1", "us-central1-a", "", "10.128.0.5", "34.1.2.3")),
    "Azure": (("board_vendor", "Microsoft Corporation"), "169.254.169.254",
              ("Azure", "8d10da13-8125-4ba9-a717-bf7490507b3d",
               "02aab8a4-74ef-476e-8182-f6d2ba4166a6", "Standard_D2s_v3", "", "westeurope", "2",
               "", "10.1.0.4", "20.1.2.3")),
    "Hetzner": (("sys_vendor", "Hetzner"), "169.254.169.254",
                ("Hetzner", "", "42424242", "", "", "eu-central", "hel1-dc2", "", "",
                 "95.216.1.2")),
    "DigitalOcean": (("board_vendor", "DigitalOcean"), "169.254.169.254",
                     ("DigitalOcean", "", "331234567", "", "", "fra1", "fra1", "", "", "")),
    "Alibaba": (("sys_vendor", "Alibaba Cloud"), "100.100.100.200",
                ("Alibaba", "1234567890123456", "i-bp67acfmxazb4ph3", "ecs.g7.large", "",
                 "cn-hangzhou", "cn-hangzhou-i", "", "172.16.0.10", "")),
    "Scaleway": (("sys_vendor", "Scaleway"), "169.254.42.42",
                 ("Scaleway", "", "5e2c1b9a-7f3d-4c51-9e8a-0b1c2d3e4f50", "DEV1-S", "", "fr-par",
                  "fr-par-2", "", "", "")),
    "Oracle": (("chassis_asset_tag", "OracleCloud.com"), "169.254.169.254",
               ("Oracle", "", "ocid1.instance.oc1.eu-frankfurt-1.abcdef", "VM.Standard.E4.Flex",
                "", "eu-frankfurt-1", "eu-frankfurt-1-ad-2", "", "", "")),
    # IBM's service has a name: the agent's /etc/hosts gives it the stand-in's address
    "IBM": (("chassis_vendor", "IBM:Cloud Compute Server 1.0"), "169.254.169.254",
            ("IBM", "", "0717_6d9a8b1c-2e3f-4a5b-9c8d-7e6f5a4b3c2d", "bx2-2x8", "", "us-south",
             "us-south-3", "", "", "")),
}
IBM_HOST = "api.metadata.cloud.ibm.com"
ADDRESSES = sorted({p[1] for p in PROVIDERS.values()})


class MetadataService:
    """The stand-in in a namespace of its own, reached from the root namespace through a /32
    route for address. requests() are those it has answered (or, silent, accepted)."""

    def __init__(self, provider, mode="serve"):
        self.ip = tool("ip")
        delete_stale(self.ip)
        n = next(_serial)
        self.ns = f"nstcp-{os.getpid()}-cloud{n}"
        tag = f"{os.getpid() % 100000}{n}"
        self.host_if, self.ns_if = f"ncl{tag}h", f"ncl{tag}n"
        self.address = PROVIDERS[provider][1]
        self.routed = False
        self.proc = None
        self.lines = queue.Queue()
        self.log = []
        try:
            self._start(provider, mode)
        except BaseException:
            self.close()
            raise

    def _start(self, provider, mode):
        ip, ns = self.ip, self.ns
        run(ip, "netns", "add", ns)
        run(ip, "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if, "netns", ns)
        run(ip, "link", "set", self.host_if, "up")
        run(ip, "-n", ns, "link", "set", "lo", "up")
        run(ip, "-n", ns, "link", "set", self.ns_if, "up")
        for a in ADDRESSES:
            run(ip, "-n", ns, "addr", "add", f"{a}/32", "dev", self.ns_if)
        run(ip, "-n", ns, "route", "add", "default", "dev", self.ns_if)
        run(ip, "route", "add", f"{self.address}/32", "dev", self.host_if)
        self.routed = True
        if mode == "closed":  # the address is there, nothing listens: connections are refused
            return
        self.proc = subprocess.Popen([ip, "netns", "exec", ns, sys.executable, SERVER, provider, mode],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        first = self.lines.get(timeout=20)
        assert first == {"ready": True}, (first, self.proc.stderr.read())

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def requests(self):
        while self.proc:
            try:
                self.log.append(self.lines.get_nowait())
            except queue.Empty:
                return list(self.log)
        return []

    def close(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
        if self.routed:
            run(self.ip, "route", "del", f"{self.address}/32", "dev", self.host_if, check=False)
        run(self.ip, "link", "del", self.host_if, check=False)
        run(self.ip, "netns", "delete", self.ns, check=False)


@pytest.fixture
def service():
    made = []

    def make(provider, mode="serve"):
        s = MetadataService(provider, mode)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


@pytest.fixture
def on_cloud(agent_factory, tmp_path):
    """An agent whose DMI says provider (or names no cloud: provider None)."""

    def start(provider, *args, dmi=None, in_pod=False, **kw):
        d = tmp_path / f"dmi{next(_serial)}"
        work = tmp_path / f"work{next(_serial)}"
        d.mkdir()
        work.mkdir()
        field, value = dmi or PROVIDERS[provider][0]
        (d / field).write_text(value + "\n")
        if provider == "IBM":
            with open("/etc/hosts") as f:
                (work / "hosts").write_text(f.read() + f"\n{PROVIDERS['IBM'][1]} {IBM_HOST}\n")
        prefix = (tool_unshare(), "-m", "--propagation", "private", sys.executable, DMI_EXEC,
                  str(d), str(work), "--")
        if in_pod:  # as a DaemonSet runs it: its own network namespace, PID 1 in the host's
            prefix += (sys.executable, PIDNS_RUN, "--own-net", os.uname().nodename)
        return agent_factory(*args, prefix=prefix, **kw)

    return start


def tool_unshare():
    path = shutil.which("unshare")
    if not path:
        pytest.fail("unshare (util-linux) is required")
    return path


def cloud_info(agent):
    fam = agent.metrics().get("node_cloud_info", {})
    assert len(fam) == 1, fam
    labels = dict(next(iter(fam)))
    return tuple(labels[k] for k in LABELS)


def errors(agent, reason):
    return msum(agent.metrics(), "nodescope_cloud_metadata_errors_total", reason=reason)


def wait_answered(agent, timeout=20):
    """node_cloud_info once the service's answer (or its failure) is in."""
    def answered():
        failed = msum(agent.metrics(), "nodescope_cloud_metadata_errors_total")
        info = cloud_info(agent)
        return (info[2] or failed) and info
    return wait_until(answered, "an answer from the metadata service taken", timeout,
                      detail=lambda: f"{cloud_info(agent)}\n{agent.stderr()}")


def test_aws_imdsv2_token_then_values(service, on_cloud):
    """AWS: a PUT for the IMDSv2 token, every GET with it (the stand-in answers 401 without), once."""
    svc = service("AWS")
    a = on_cloud("AWS", "--events", "proc")
    assert wait_answered(a) == PROVIDERS["AWS"][2]
    reqs = svc.requests()
    assert reqs[0]["method"] == "PUT" and reqs[0]["path"] == "/latest/api/token", reqs
    assert reqs[0]["headers"]["X-aws-ec2-metadata-token-ttl-seconds"] == "21600"
    gets = reqs[1:]
    assert len(gets) == 9 and all(r["method"] == "GET" for r in gets), reqs
    assert all(r["headers"].get("X-aws-ec2-metadata-token") == "AQAEAHtoken-of-the-stand-in=="
               and r["status"] in (200, 404) for r in gets), gets
    assert [r["path"] for r in gets if r["status"] == 404] == ["/latest/meta-data/public-ipv4"]
    assert errors(a, "unreachable") == 0 and errors(a, "bad_status") == 0
    assert "cloud metadata: AWS answered" in a.stderr()


def test_aws_stand_in_refuses_without_token(service):
    """The stand-in's 401 is real: a request without the token (here: ours) gets it."""
    svc = service("AWS")
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "5",
                          "http://169.254.169.254/latest/meta-data/instance-id"],
                         capture_output=True, text=True, timeout=20)
    assert out.stdout == "401", out
    assert svc.requests()[-1]["status"] == 401


def test_gcp_metadata_flavor(service, on_cloud):
    """GCP: every request with Metadata-Flavor: Google (403 without); the machine type and zone cut
    from their paths, the region from the zone, the life cycle from "preemptible"."""
    svc = service("GCP")
    a = on_cloud("GCP")
    assert wait_answered(a) == PROVIDERS["GCP"][2]
    reqs = svc.requests()
    assert len(reqs) == 7 and all(r["headers"].get("Metadata-Flavor") == "Google"
                                  and r["status"] == 200 for r in reqs), reqs


def test_azure_instance_document(service, on_cloud):
    """Azure: one JSON document (Metadata: True, api-version), keys matched as Go's decoder does."""
    svc = service("Azure")
    a = on_cloud("Azure")
    assert wait_answered(a) == PROVIDERS["Azure"][2]
    reqs = svc.requests()
    assert [(r["path"], r["headers"].get("Metadata"), r["status"]) for r in reqs] == [
        ("/metadata/instance?api-version=2021-05-01&format=json", "True", 200)]


@pytest.mark.parametrize("provider", ["Hetzner", "DigitalOcean", "Alibaba", "Scaleway", "Oracle",
                                      "IBM"])
def test_other_providers(service, on_cloud, provider):
    """Each other provider at its own address, read as Coroot reads it."""
    svc = service(provider)
    a = on_cloud(provider)
    assert wait_answered(a) == PROVIDERS[provider][2]
    reqs = svc.requests()
    assert reqs and all(r["status"] == 200 for r in reqs), reqs
    if provider == "IBM":  # a token's PUT, then the instance with it, by the service's name
        assert [(r["method"], r["path"].split("?")[0]) for r in reqs] == [
            ("PUT", "/instance_identity/v1/token"), ("GET", "/metadata/v1/instance")], reqs
        assert all(r["headers"]["Host"] == IBM_HOST for r in reqs), reqs


def test_asked_from_pid1s_network_namespace(service, on_cloud):
    """The agent in a network namespace of its own with nothing in it (a pod's), PID 1 in the one
    that reaches the service: the service is asked from PID 1's and answers."""
    service("GCP")
    a = on_cloud("GCP", "--events", "proc", in_pod=True, listen=False)
    want = 'cloud metadata: GCP answered: region "us-central1", zone "us-central1-a"'

    def answered():
        assert "cloud metadata: the GCP service did not answer" not in a.stderr(), a.stderr()
        return want in a.stderr()
    wait_until(answered, want, timeout=20, detail=a.stderr)
    assert "cannot enter" not in a.stderr(), a.stderr()
    assert a.stop() == 0


def test_flags_win_over_the_service(service, on_cloud):
    """--provider, --region, --availability-zone, --instance-type, --instance-life-cycle win; the
    service's other values stay; az/region labels are the flags'."""
    service("AWS")
    a = on_cloud("AWS", "--events", "proc", "--provider", "my-cloud", "--region", "r-flag",
                 "--availability-zone", "z-flag", "--instance-type", "t-flag",
                 "--instance-life-cycle", "on-demand")
    assert wait_answered(a) == ("my-cloud", "123456789012", "i-0123456789abcdef0", "t-flag",
                                "on-demand", "r-flag", "z-flag", "euw1-az2", "10.0.1.23", "")
    assert os.system("true") == 0
    a.wait_for(lambda evs: any(e["type"] == "exit" for e in evs), what="a process")
    container = [dict(k) for name, fam in a.metrics().items() if name.startswith("container_")
                 for k in fam]
    assert container and all(l.get("az") == "z-flag" and l.get("region") == "r-flag"
                             for l in container), container


def test_zone_labels_from_the_service(service, on_cloud):
    """az and region the service gave (no flag) are on container_* series and on ip_to_fqdn, not on
    node series."""
    service("GCP")
    dns = Dnsmasq(DNS)
    try:
        a = on_cloud("GCP")
        wait_answered(a)
        assert dns.dig("a.nodescope.test") == "10.1.2.3"
        wait_until(lambda: a.has_series("ip_to_fqdn", ip="10.1.2.3", fqdn="a.nodescope.test"),
                   "ip_to_fqdn for a.nodescope.test", timeout=20)
        m = a.metrics()
        fqdn = [dict(k) for k in m["ip_to_fqdn"] if dict(k).get("ip") == "10.1.2.3"]
        assert fqdn == [{"ip": "10.1.2.3", "fqdn": "a.nodescope.test", "az": "us-central1-a",
                         "region": "us-central1"}], fqdn
        container = [dict(k) for name, fam in m.items() if name.startswith("container_") for k in fam]
        assert container and all(l.get("az") == "us-central1-a" and l.get("region") == "us-central1"
                                 for l in container), container
        node = [dict(k) for name, fam in m.items() if name.startswith("node_")
                and name != "node_cloud_info" for k in fam]
        assert node and not [l for l in node if "az" in l or "region" in l]
    finally:
        dns.stop()


def test_service_that_never_answers(service, on_cloud):
    """DMI says AWS, the address accepts connections and answers nothing: the agent is ready and
    serves its metrics while it waits, then warns once, counts, and keeps DMI's provider."""
    svc = service("AWS", mode="silent")
    started = time.monotonic()
    a = on_cloud("AWS", "--events", "proc")
    assert cloud_info(a)[0] == "AWS"  # scraped while the ask may still be pending
    wait_until(lambda: errors(a, "unreachable") == 1, "one unreachable", timeout=30, detail=a.stderr)
    # one deadline (5 s) for the whole exchange, not one per request
    assert time.monotonic() - started < 20
    assert cloud_info(a) == ("AWS",) + ("",) * 9
    warned = [l for l in a.stderr().splitlines() if "cloud metadata: the AWS service did not answer" in l]
    assert len(warned) == 1, a.stderr()
    assert [r["path"] for r in svc.requests()] == ["(connection)"]  # the token's PUT, never answered
    assert os.system("true") == 0  # and the agent still captures events
    a.wait_for(lambda evs: any(e["type"] == "exit" for e in evs), what="a process")


def test_nothing_listens_at_the_address(service, on_cloud):
    """DMI says AWS, nothing listens at its address: one warning, one count, DMI's provider."""
    service("AWS", mode="closed")
    a = on_cloud("AWS")
    wait_until(lambda: errors(a, "unreachable") == 1, "one unreachable", timeout=20, detail=a.stderr)
    assert cloud_info(a) == ("AWS",) + ("",) * 9
    warned = [l for l in a.stderr().splitlines() if "cloud metadata: the AWS service did not answer" in l]
    assert len(warned) == 1 and "Couldn't connect" in warned[0], a.stderr()


def test_stop_while_the_service_is_asked(service, on_cloud):
    """SIGTERM just after the start, the ask likely pending: the agent exits at once (the asking
    thread is not waited for), and cleanly."""
    service("AWS", mode="silent")
    a = on_cloud("AWS", "--events", "proc")
    t0 = time.monotonic()
    assert a.stop(timeout=4) == 0
    assert time.monotonic() - t0 < 4


def test_service_answering_garbage(service, on_cloud):
    """A page that is no metadata (Azure's JSON expected): counted as malformed, warned, no labels."""
    service("Azure", mode="garbage")
    a = on_cloud("Azure")
    wait_until(lambda: errors(a, "malformed") == 1, "one malformed", timeout=20, detail=a.stderr)
    assert cloud_info(a) == ("Azure",) + ("",) * 9
    assert "cloud metadata: the Azure service did not answer" in a.stderr()


def test_no_provider_asks_nothing(service, on_cloud):
    """DMI names no cloud: nothing is asked, nothing counted (a stand-in listens all along)."""
    svc = service("AWS")
    a = on_cloud(None, dmi=("board_vendor", "QEMU"))
    m = a.metrics()
    assert msum(m, "nodescope_cloud_metadata_errors_total") == 0
    assert cloud_info(a) == ("",) * 10
    assert "cloud metadata" not in a.stderr()
    assert svc.requests() == []
