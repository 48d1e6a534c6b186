"""The packages, as a user gets them: the .deb installs on this machine, its agent starts, serves
/metrics and stops cleanly, its systemd unit verifies, and it purges without a trace; the OCI
image's rootfs holds an agent that runs, under Coroot's command name too, with Debian's CA
certificates; the DaemonSet manifest asks for what the agent needs.

Run by `make test-packaging` (in `make check`) after `make deb image`; as root.
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ports import free_port  # noqa: E402  (tests/ports.py)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("NODESCOPE_BUILD", os.path.join(ROOT, "build"))
# Another manifest (one with a mount or a probe taken out) shows this test failing.
MANIFEST = os.environ.get("NODESCOPE_MANIFEST",
                          os.path.join(ROOT, "packaging", "kubernetes", "daemonset.yaml"))


def run(*argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def start_and_scrape(argv, also=None):
    """Starts an agent, waits for its ready line, scrapes /metrics (and calls also(port) if
    given), stops it with SIGTERM. Returns (the exposition, its exit code, its stderr)."""
    port = free_port()
    p = subprocess.Popen(argv + ["--listen", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    lines, ready = [], threading.Event()

    def read():
        for line in p.stderr:
            lines.append(line)
            if line.rstrip().endswith(" nodescope: ready"):
                ready.set()
        ready.set()  # exited

    threading.Thread(target=read, daemon=True).start()
    try:
        ready.wait(60)
        assert p.poll() is None, "".join(lines)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
            text = r.read().decode()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as r:
            assert r.status == 200
        if also:
            also(port)
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
    return text, rc, "".join(lines)


def test_daemonset_manifest():
    with open(MANIFEST) as f:
        raw = f.read()
    docs = [d for d in yaml.safe_load_all(raw) if d]
    ds = next(d for d in docs if d["kind"] == "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    assert ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()
    # The host's PIDs (BPF reports them; /proc/1/root is the host's root), not its network.
    assert pod["hostPID"] is True and not pod.get("hostNetwork")
    assert pod["automountServiceAccountToken"] is False
    (c,) = pod["containers"]
    sc = c["securityContext"]
    # Not privileged: exactly the capabilities the manifest explains, everything else dropped.
    assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert set(sc["capabilities"]["add"]) == {"SYS_ADMIN", "SYS_PTRACE", "DAC_READ_SEARCH",
                                              "SYS_RESOURCE", "NET_ADMIN", "SYS_NICE"}
    assert sc["seccompProfile"]["type"] == "RuntimeDefault"
    # Each capability added says why, in the comment right above it.
    for cap in sc["capabilities"]["add"]:
        m = re.search(rf"((?:^ *#.*\n)+)^ *- {cap}$", raw, re.M)
        assert m and len(m.group(1)) > 40, f"capability {cap} without its reason"
    # Three host mounts: tracefs and the cgroup tree (which CGROUPFS_ROOT names) read-only, and
    # the remote-write spool (WAL_DIR), kept on the node across the pod's restarts, the one
    # writable path.
    vols = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"]}
    assert vols == {"tracefs": "/sys/kernel/tracing", "cgroup": "/sys/fs/cgroup",
                    "spool": "/var/lib/nodescope"}
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    assert set(mounts) == set(vols)
    assert [n for n, m in mounts.items() if not m.get("readOnly")] == ["spool"]
    env = {e["name"]: e for e in c["env"]}
    assert env["CGROUPFS_ROOT"]["value"] == mounts["cgroup"]["mountPath"]
    assert env["WAL_DIR"]["value"] == mounts["spool"]["mountPath"]
    assert mounts["tracefs"]["mountPath"] == "/sys/kernel/tracing"
    # It listens on the pod's address, where the probes and Prometheus reach it.
    assert env["LISTEN"]["value"] == "$(POD_IP):9645"
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    port = {p["name"]: p["containerPort"] for p in c["ports"]}["metrics"]
    assert port == 9645
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}, probe
    # Bounded memory, a CPU request; no CPU limit (a throttled agent loses events).
    res = c["resources"]
    assert res["requests"]["cpu"] and res["requests"]["memory"] and res["limits"]["memory"]
    assert "cpu" not in res["limits"]
    # Remote write, commented out: uncommented, its entries are env entries; the endpoints and
    # the API key, the key from a Secret.
    m = re.search(r"((?:^ +# - name: .*\n(?:^ +#  .*\n)*)+)", raw, re.M)
    assert m, "no commented remote-write env"
    remote = {e["name"]: e for e in yaml.safe_load(re.sub(r"^( +)# ", r"\1", m.group(1), flags=re.M))}
    assert set(remote) == {"COLLECTOR_ENDPOINT", "METRICS_ENDPOINT", "API_KEY"}, remote
    assert remote["METRICS_ENDPOINT"]["value"].startswith(("http://", "https://"))
    assert remote["API_KEY"]["valueFrom"]["secretKeyRef"]["key"]
    # Every option the manifest sets, or has commented out, is one the agent reads (its --help
    # names the variables).
    helptext = run(os.path.join(BUILD, "nodescope"), "--help").stdout
    for name in [*env, *remote]:
        assert name == "POD_IP" or re.search(rf"^ +env {name}$", helptext, re.M), name


@pytest.fixture
def installed_deb():
    debs = glob.glob(os.path.join(BUILD, "deb", "nodescope_*.deb"))
    assert len(debs) == 1, f"make deb first: {debs}"
    assert run("dpkg-query", "-W", "nodescope").returncode != 0, \
        "nodescope is installed on this machine already: this test installs and purges its own"
    r = run("dpkg", "-i", debs[0])
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        yield debs[0]
    finally:
        r = run("dpkg", "--purge", "nodescope")
        assert r.returncode == 0, r.stdout + r.stderr


def test_deb_installs_runs_and_purges(installed_deb):
    files = run("dpkg", "-L", "nodescope").stdout.split()
    for f in ("/usr/sbin/nodescope", "/lib/systemd/system/nodescope.service",
              "/etc/default/nodescope", "/usr/share/man/man8/nodescope.8.gz"):
        assert f in files and os.path.exists(f), f
    # The man page is the --help text (help2man): every option is in it.
    man = run("man", "-P", "cat", "-l", "/usr/share/man/man8/nodescope.8.gz",
              env={**os.environ, "MANWIDTH": "200"}).stdout
    for opt in re.findall(r"^  (?:-\w, )?(--[\w-]+)", run("/usr/sbin/nodescope", "--help").stdout, re.M):
        assert opt in man, opt
    # systemd accepts the unit as installed (its binary and man page are there now).
    r = run("systemd-analyze", "verify", "/lib/systemd/system/nodescope.service")
    assert r.returncode == 0, r.stdout + r.stderr
    # This machine's PID 1 is not systemd everywhere: the installed binary, started directly.
    text, rc, err = start_and_scrape(["/usr/sbin/nodescope", "run"])
    assert rc == 0, err
    assert re.search(r'^node_agent_info\{.*version="[^"]+".*\} 1$', text, re.M), text[:2000]
    assert "process_start_time_seconds" in text


def test_deb_purged_leaves_nothing():
    # Runs after the one above purged it (pytest keeps file order).
    for f in ("/usr/sbin/nodescope", "/lib/systemd/system/nodescope.service",
              "/etc/default/nodescope"):
        assert not os.path.exists(f), f


def buildah(*args):
    d = os.path.join(BUILD, "image")
    return run("buildah", "--root", os.path.join(d, "storage"), "--runroot", os.path.join(d, "run"),
               "--storage-driver", "vfs", *args)


@pytest.fixture
def image_root():
    version = run(os.path.join(BUILD, "nodescope"), "--version").stdout.split()[1]
    assert os.path.exists(os.path.join(BUILD, "image", f"nodescope-{version}.oci.tar")), "make image first"
    r = buildah("from", f"nodescope:{version}")
    assert r.returncode == 0, r.stderr
    c = r.stdout.strip()
    try:
        r = buildah("mount", c)
        assert r.returncode == 0, r.stderr
        yield r.stdout.strip(), version
    finally:
        buildah("umount", c)
        buildah("rm", c)


def test_image_holds_a_running_agent(image_root):
    root, version = image_root
    # Nothing but the agent, its loader and its libraries (and their licences).
    r = run("chroot", root, "/usr/sbin/nodescope", "--version")
    assert r.returncode == 0 and r.stdout == f"nodescope {version}\n", r
    # The image's own agent, run in its rootfs with the host's /proc and /sys as the DaemonSet
    # gives it (hostPID; /sys with tracefs), in a private mount namespace: it loads, attaches,
    # serves /metrics and stops cleanly.
    script = (f"mount --rbind /proc {root}/proc && mount --rbind /sys {root}/sys && "
              f"exec chroot {root} /usr/sbin/nodescope \"$@\"")
    # A process of the host's, started after the agent: the agent in the image sees it.
    seen = []

    def host_process_seen(port):
        sleeper = subprocess.Popen(["sleep", "60"])
        try:
            for _ in range(100):  # its exec event may still be on its way
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/processes", timeout=30) as r:
                    if any(p["pid"] == sleeper.pid and p["comm"] == "sleep" for p in json.load(r)):
                        seen.append(sleeper.pid)
                        return
                time.sleep(0.1)
        finally:
            sleeper.kill()
            sleeper.wait()

    text, rc, err = start_and_scrape(["unshare", "-m", "--propagation", "private", "sh", "-c",
                                      script, "sh", "run"], also=host_process_seen)
    assert rc == 0, err
    assert f'version="{version}"' in text
    assert seen, "the agent in the image did not list a process started on the host"


def pems(text):
    return set(re.findall(r"-----BEGIN CERTIFICATE-----\n.*?-----END CERTIFICATE-----", text, re.S))


def test_image_has_what_coroot_daemonsets_ask(image_root):
    """What Coroot's DaemonSets ask of the image besides the agent: the command name
    coroot-node-agent in PATH, Debian's CA certificates for an https endpoint, and a spool on
    the operator's writable /tmp."""
    root, version = image_root
    r = run("chroot", root, "/usr/bin/coroot-node-agent", "--version")
    assert r.returncode == 0 and r.stdout == f"nodescope {version}\n", r
    assert os.path.realpath(f"{root}/usr/bin/coroot-node-agent") == f"{root}/usr/sbin/nodescope"
    # The bundle at libcurl's default path holds the ca-certificates package's certificates,
    # and nothing this machine added to its own.
    shipped = [f for f in run("dpkg-query", "-L", "ca-certificates").stdout.split()
               if f.startswith("/usr/share/ca-certificates/") and f.endswith(".crt")]
    assert len(shipped) > 100, shipped
    want = set()
    for f in shipped:
        with open(f) as fh:
            want |= pems(fh.read())
    with open(f"{root}/etc/ssl/certs/ca-certificates.crt") as f:
        assert pems(f.read()) == want
    assert "/etc/ssl/certs/ca-certificates.crt" in run("curl-config", "--ca").stdout
    with open(f"{root}/etc/nsswitch.conf") as f:
        assert re.search(r"^hosts: +files dns$", f.read(), re.M)
    config = json.loads(buildah("inspect", "--type", "image", f"nodescope:{version}").stdout)
    env = dict(e.split("=", 1) for e in config["OCIv1"]["config"]["Env"])
    assert "/usr/bin" in env["PATH"].split(":")
    assert env["WAL_DIR"].startswith("/tmp/")
    assert os.stat(f"{root}/tmp").st_mode & 0o7777 == 0o1777
