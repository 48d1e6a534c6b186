"""The OCI image as a node runs it: `make image`'s archive loaded by Debian's podman and run with
the DaemonSet manifest's pod made into podman options (hostPID, its host mounts, its environment,
its memory limit, its grace period), once `--privileged` and once with exactly the manifest's
securityContext (capabilities, no privilege escalation, read-only root). Each time the agent inside
lists a process started on the host and one started in another container, remote-writes (turned
on as the manifest's commented lines say) through its spool volume, and stops cleanly.
Then as Coroot's operator runs Coroot's agent (its DaemonSet's facts, read from its source, in
data/coroot_operator_node_agent.json): the image unchanged, with the operator's command, args,
environment, mounts and privileges; the agent comes up healthy, keeps running with the Coroot
options it does not implement, and remote-writes to the operator's endpoint with its API key.
The remote-write receiver is a stand-in Coroot server that hands each request on to Debian's
Prometheus, which decodes and stores the series.

Everything podman keeps (images, containers, runtime state) is in a directory of the test's own,
never the machine's containers/storage. How podman is run here, and why (README "Packages"):
  - runc, not crun (podman's default here): crun refuses a hybrid cgroup layout (v1 controllers
    with a v2 tree at /sys/fs/cgroup/unified) with "cgroups in hybrid mode not supported";
  - cgroupfs, not systemd, as the cgroup manager: PID 1 need not be systemd;
  - --ulimit nofile and nproc at this process's own hard limits, nproc at most pid_max (more
    means nothing): podman's defaults are above what this machine's root may set, which runc
    fails on ("error setting rlimit type 7: operation not permitted"; type 6, nproc, past
    pid_max);
  - the pod's network namespace is one the test makes (`--network ns:PATH`, loopback only), as a
    pod's without hostNetwork: POD_IP is 127.0.0.1, the test reaches /metrics through it, and
    the stand-in Coroot server listens there, its name in /etc/hosts (`--add-host`) as the
    cluster's DNS would give a Service's;
  - tracefs mounted on the host where it is not (a node's systemd mounts it at boot), so the
    manifests' hostPath of /sys/kernel/tracing hands on what it does on a node.

Run by `make test-packaging` (in `make check`) after `make image`; as root.
"""
import contextlib
import ctypes
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from prometheus import Prometheus  # noqa: E402  (tests/prometheus.py)
from receiver import PostReceiver  # noqa: E402  (tests/receiver.py)
from wait import wait_until  # noqa: E402  (tests/wait.py)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("NODESCOPE_BUILD", os.path.join(ROOT, "build"))
MANIFEST = os.environ.get("NODESCOPE_MANIFEST",
                          os.path.join(ROOT, "packaging", "kubernetes", "daemonset.yaml"))
PODMAN = shutil.which("podman") or "/usr/bin/podman"
POD_IP = "127.0.0.1"  # the container's address in its network namespace of its own
OPERATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                        "coroot_operator_node_agent.json")


def run(*argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


class Podman:
    def __init__(self, d):
        self.storage = f"{d}/storage"  # the containers' state, where the agent names them from
        self.argv = [PODMAN, "--root", f"{d}/storage", "--runroot", f"{d}/run", "--tmpdir",
                     f"{d}/tmp", "--storage-driver", "vfs", "--runtime", "runc",
                     "--cgroup-manager", "cgroupfs", "--events-backend", "file"]

    def __call__(self, *args, check=True, timeout=120):
        r = subprocess.run(self.argv + list(args), capture_output=True, text=True, timeout=timeout)
        if check:
            assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r


def limits():
    """--ulimit options at this process's hard limits (podman's defaults may be above them)."""
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    out = []
    for name, res, cap in (("nofile", resource.RLIMIT_NOFILE, None),
                           ("nproc", resource.RLIMIT_NPROC, pid_max)):
        hard = resource.getrlimit(res)[1]
        if cap and (hard == resource.RLIM_INFINITY or hard > cap):
            hard = cap
        if hard != resource.RLIM_INFINITY:
            out += ["--ulimit", f"{name}={hard}:{hard}"]
    return out


@pytest.fixture(scope="module")
def podman(tmp_path_factory):
    if not os.access(PODMAN, os.X_OK):
        pytest.fail("podman is missing: apt-get install podman runc (make deps)")
    d = tmp_path_factory.mktemp("podman")
    p = Podman(d)
    version = run(os.path.join(BUILD, "nodescope"), "--version").stdout.split()[1]
    archive = os.path.join(BUILD, "image", f"nodescope-{version}.oci.tar")
    assert os.path.exists(archive), "make image first"
    # The archive `make image` wrote, as a user loads it (not buildah's own storage).
    out = p("load", "-i", archive).stdout
    assert f"localhost/nodescope:{version}" in out, out
    p.image = f"localhost/nodescope:{version}"
    # Another container's image: Debian's busybox-static, imported (no registry is reachable).
    rootfs = d / "busybox"
    os.makedirs(rootfs / "bin")
    shutil.copy("/bin/busybox", rootfs / "bin" / "busybox")
    subprocess.run(["tar", "-C", str(rootfs), "-cf", str(d / "busybox.tar"), "."], check=True)
    p("import", str(d / "busybox.tar"), "localhost/nodescope-test-busybox:1")
    p.busybox = "localhost/nodescope-test-busybox:1"
    tracefs = "/sys/kernel/tracing"
    mounted = not os.path.exists(f"{tracefs}/events")
    if mounted:
        subprocess.run(["mount", "-t", "tracefs", "tracefs", tracefs], check=True)
    try:
        yield p
    finally:
        p("rm", "-a", "-f", "-t", "0", check=False)
        shutil.rmtree(d, ignore_errors=True)
        if mounted:  # lazily: a process of another test may be reading it
            subprocess.run(["umount", "-l", tracefs], check=False)


def quantity(q):
    """A Kubernetes memory quantity ("512Mi") in bytes."""
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi)?", q)
    assert m, q
    return int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}[m.group(2)]


def expand(value, env):
    """Kubernetes' $(VAR) in an env value: a variable defined before it, else left as is."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), value)


def pod_options(privileged, pod_dir, netns):
    """The DaemonSet's pod as `podman run` options, and its grace period: what a kubelet would
    give the container, but that the pod network is netns (loopback only), and that a host
    directory the kubelet would create (DirectoryOrCreate: the spool) is one of pod_dir, not
    this machine's."""
    with open(MANIFEST) as f:
        ds = next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    opts = []
    if pod.get("hostPID"):
        opts.append("--pid=host")
    opts += ["--network", "host" if pod.get("hostNetwork") else f"ns:{netns}"]
    vols = {}
    for v in pod.get("volumes", []):
        vols[v["name"]] = v["hostPath"]["path"]
        if v["hostPath"].get("type") == "DirectoryOrCreate":
            vols[v["name"]] = str(pod_dir / v["name"])
            os.makedirs(vols[v["name"]])
    for m in c.get("volumeMounts", []):
        opts += ["-v", f"{vols[m['name']]}:{m['mountPath']}" + (":ro" if m.get("readOnly") else "")]
    env = {}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = expand(e["value"], env)
        elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "status.podIP":
            env[e["name"]] = POD_IP
        else:
            raise AssertionError(f"an env entry this test cannot give: {e}")
        opts += ["-e", f"{e['name']}={env[e['name']]}"]
    mem = c.get("resources", {}).get("limits", {}).get("memory")
    if mem:
        opts += ["--memory", str(quantity(mem))]
    if privileged:
        opts.append("--privileged")
    else:
        sc = c["securityContext"]
        assert not sc.get("privileged")
        opts += ["--cap-drop", ",".join(sc["capabilities"].get("drop", []))]
        opts += ["--cap-add", ",".join(sc["capabilities"].get("add", []))]
        if sc.get("allowPrivilegeEscalation") is False:
            opts += ["--security-opt", "no-new-privileges"]
        if sc.get("readOnlyRootFilesystem"):
            # Nothing writable but the pod's volumes: no tmpfs of podman's on /tmp either.
            opts += ["--read-only", "--read-only-tmpfs=false"]
        if "runAsUser" in sc:
            opts += ["--user", str(sc["runAsUser"])]
    port = {p["name"]: p["containerPort"] for p in c["ports"]}["metrics"]
    grace = pod.get("terminationGracePeriodSeconds", 30)
    return opts, c.get("args", []), env, port, grace, vols


def get(pid, port, path):
    """GET path from the agent's port in the network namespace of the container's process pid."""
    r = run("nsenter", f"--net=/proc/{pid}/ns/net", "curl", "-sS", "--max-time", "30",
            "-w", "\n%{http_code}", f"http://{POD_IP}:{port}{path}")
    body, _, code = r.stdout.rpartition("\n")
    return (int(code) if code.isdigit() else 0), body


def run_agent(podman, name, opts, args, port):
    """Runs the image as the agent's container; once its log says it is ready and /healthz at
    port answers 200: its pid, and running() (which asserts it still runs)."""
    podman("run", "-d", "--name", name, *limits(), *opts, podman.image, *args)
    pid = int(podman("inspect", "--format", "{{.State.Pid}}", name).stdout)
    running = lambda: is_running(podman, name)
    wait_until(lambda: running() and
               re.search(r" info nodescope: ready$", logs(podman, name), re.M),
               "the agent in the image ready", timeout=60)
    code, body = get(pid, port, "/healthz")
    assert code == 200, (code, body, logs(podman, name))
    return pid, running


def logs(podman, name):
    return podman("logs", name, check=False).stderr


def is_running(podman, name):
    state = podman("inspect", "--format", "{{.State.Status}}", name).stdout.strip()
    assert state == "running", (state, logs(podman, name))
    return True


def stop(podman, name, grace):
    """Stops the container as the kubelet does (SIGTERM, then the grace period) and removes
    it: its exit code and its log."""
    podman("stop", "-t", str(grace), name, check=False, timeout=grace + 60)
    exit_code = podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
    err = logs(podman, name)
    podman("rm", "-f", name, check=False)
    return exit_code, err


# The pod's network namespace, and a Coroot server in it.

API_KEY = "c0r00t-pr0ject-api-key"
CLONE_NEWNET = 0x40000000


def listen_in_netns(netns, port):
    """A TCP socket listening on 127.0.0.1:port in the network namespace at netns. Only this
    thread enters it, for the socket's making (a socket stays in the namespace it was made in),
    and comes back at once."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(netns, os.O_RDONLY)
    try:
        if libc.setns(target, CLONE_NEWNET):
            raise OSError(ctypes.get_errno(), f"setns into {netns}")
        try:
            return socket.create_server(("127.0.0.1", port))
        finally:
            if libc.setns(own, CLONE_NEWNET):
                raise OSError(ctypes.get_errno(), "setns back into the test's own namespace")
    finally:
        os.close(own)
        os.close(target)


class CorootStandin(PostReceiver):
    """The Coroot server as the node agent's metrics reach it: POST /v1/metrics, its body handed
    on to Prometheus' remote-write receiver (which decodes it and stores the series) and its
    answer given back. Listens in the pod's network namespace, over TLS when given a certificate
    and key."""

    HANDED_ON = ("Content-Type", "Content-Encoding", "X-Prometheus-Remote-Write-Version")

    def __init__(self, netns, port, prometheus, tls_files=None):
        self.prometheus = prometheus
        super().__init__(self.hand_on, listen_in_netns(netns, port), tls_files)

    def hand_on(self, path, headers, body):
        if path != "/v1/metrics":
            return 404
        kept = {k: headers[k] for k in self.HANDED_ON if k in headers}
        req = urllib.request.Request(self.prometheus.url, data=body, headers=kept)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code


@pytest.fixture
def pod_netns():
    """A network namespace of the test's own, loopback up: the pod's."""
    name = f"nodescope-test-pod-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield f"/run/netns/{name}"
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


@contextlib.contextmanager
def coroot_server(tmp_path, netns, url, tls_files=None):
    """A stand-in Coroot server at url's port in netns, before a Prometheus of its own."""
    prometheus = Prometheus(tmp_path)
    prometheus.start()
    try:
        coroot = CorootStandin(netns, urllib.parse.urlsplit(url).port, prometheus, tls_files)
        try:
            yield coroot
        finally:
            coroot.close()
    finally:
        prometheus.stop()


def stored_through(coroot, what, running, timeout=60):
    """Until Prometheus holds node_agent_info sent through coroot (running() asserts the
    agent still runs); then the checks that every write went to its metrics endpoint with the
    API key, and the number of series stored."""
    def stored():
        running()
        return coroot.prometheus.api("query",
                                     query='node_agent_info{job="coroot-node-agent"}')["result"]

    wait_until(stored, what, timeout=timeout)
    up = coroot.prometheus.api("query", query="up")["result"]
    assert [(u["metric"]["job"], u["value"][1]) for u in up] == [("coroot-node-agent", "1")], up
    seen = coroot.seen()
    assert seen and all(p == "/v1/metrics" for p, _, _ in seen), [p for p, _, _ in seen]
    assert all(h.get("X-Api-Key") == API_KEY for _, h, _ in seen)
    return len(coroot.prometheus.api("series", **{"match[]": '{job="coroot-node-agent"}'}))


@pytest.mark.parametrize("privileged", [True, False], ids=["privileged", "manifest-capabilities"])
def test_image_under_podman_sees_host_and_container_processes(podman, tmp_path, pod_netns,
                                                              privileged):
    opts, args, env, port, grace, vols = pod_options(privileged, tmp_path / "pod", pod_netns)
    # Remote write as the manifest's commented lines turn it on (the key as its Secret would
    # give it), to a Coroot server in the pod's network; collected every second, not 15.
    url = "http://coroot-coroot.coroot:8080"
    opts += ["-e", f"COLLECTOR_ENDPOINT={url}", "-e", f"API_KEY={API_KEY}",
             "-e", "SCRAPE_INTERVAL=1s", "--add-host", "coroot-coroot.coroot:127.0.0.1"]
    name = f"nodescope-test-agent-{os.getpid()}"
    other = f"nodescope-test-other-{os.getpid()}"
    # A host process running before the agent starts: in /proc, which hostPID makes the host's.
    before = subprocess.Popen(["sleep", "300"])
    sleeper = None
    # The agent names the other container from podman's state in this test's storage root, which
    # it reads through /proc/1/root on a node; here PID 1 is the sandbox's, whose root the agent
    # cannot enter, so the storage is mounted where the host has it (read-only).
    opts += ["-v", f"{podman.storage}:{podman.storage}:ro"]
    with coroot_server(tmp_path, pod_netns, url) as coroot:
        try:
            pid, running = run_agent(podman, name, opts, args, port)

            # A process of the host's, and one in another container, both started after the agent.
            sleeper = subprocess.Popen(["sleep", "300"])
            podman("run", "-d", "--name", other, "--network", "none", *limits(), podman.busybox,
                   "/bin/busybox", "sleep", "300")
            other_pid = int(podman("inspect", "--format", "{{.State.Pid}}", other).stdout)

            def both_listed():
                code, body = get(pid, port, "/api/processes")
                assert code == 200, (code, body, logs(podman, name))
                procs = {p["pid"]: p for p in json.loads(body)}
                if sleeper.pid in procs and other_pid in procs:
                    return procs

            procs = wait_until(both_listed, "the agent listing both processes", timeout=60)
            assert procs[sleeper.pid]["comm"] == "sleep", procs[sleeper.pid]
            assert procs.get(before.pid, {}).get("comm") == "sleep", \
                f"the host process {before.pid} running before the agent is not listed (hostPID)"
            # The other container's process once it has exec'd busybox (it is listed from its
            # fork on), named from podman's state in this test's storage root (found through its
            # conmon's bundle: podman --root is no default path).
            want = f"/podman/{other}"

            def named():
                ps = both_listed()
                o = ps and ps[other_pid]
                return o if o and o["exe"] == "/bin/busybox" and o["container"] == want else None

            wait_until(named, "the other container's busybox, named", timeout=60,
                       detail=lambda: str((both_listed() or {}).get(other_pid)))
            # Its memory, read from the host's cgroup tree the manifest mounts (CGROUPFS_ROOT).
            rss = re.compile(r'^container_resources_memory_rss_bytes\{[^}]*container_id="' +
                             re.escape(want) + r'"[^}]*\} [1-9]', re.M)

            def scraped():
                code, text = get(pid, port, "/metrics")
                assert code == 200, (code, text[:2000])
                return rss.search(text) and text

            text = wait_until(scraped, "the other container's memory in /metrics", timeout=60)
            assert re.search(r'^node_agent_info\{.*\} 1$', text, re.M), text[:2000]
            # The tracepoints' ids were read from the manifest's tracefs mount: the agent did not
            # have to mount one itself (which AppArmor's runtime profiles deny).
            assert "mounted tracefs" not in logs(podman, name), logs(podman, name)
            # Remote write through the read-only root: the spool on the manifest's volume.
            assert stored_through(coroot, "series stored through the Coroot server", running) > 100
            assert os.path.isdir(os.path.join(vols["spool"], "spool")), os.listdir(vols["spool"])
        finally:
            for p in (before, sleeper):
                if p:
                    p.kill()
                    p.wait()
            podman("rm", "-f", "-t", "0", other, check=False)
            # Stopped as the kubelet stops it: SIGTERM, then the grace period.
            exit_code, err = stop(podman, name, grace)
    assert exit_code == "0", err
    assert not re.search(r" error ", err), err


# Coroot's operator's DaemonSet, from data/coroot_operator_node_agent.json.

def cpus(q):
    """A Kubernetes CPU quantity ("500m", "2") in CPUs."""
    m = re.fullmatch(r"(\d+)(m)?", q)
    assert m, q
    return int(m.group(1)) / (1000 if m.group(2) else 1)


def operator_pod(values, node_env, pod_dir):
    """The operator's pod as `podman run` options, and its container's command and args: its
    host mounts, its emptyDir (a directory of the pod's own, as the kubelet makes it), its
    environment filled in from values (an entry with a `when` only if values["on"] names it)
    and then node_env (spec.nodeAgent.env), its privileges and limits. No network options: the
    caller gives the pod's namespace."""
    with open(OPERATOR) as f:
        spec = json.load(f)
    pod, c = spec["pod"], spec["container"]
    assert pod["hostNetwork"] is False
    opts = ["--pid=host"] if pod["hostPID"] else []
    vols = {}
    for v in spec["volumes"]:
        if "hostPath" in v:
            vols[v["name"]] = v["hostPath"]["path"]
        else:
            assert v.keys() == {"name", "emptyDir"}, v
            vols[v["name"]] = str(pod_dir / v["name"])
            os.makedirs(vols[v["name"]])
    for m in c["volumeMounts"]:
        opts += ["-v", f"{vols[m['name']]}:{m['mountPath']}" + (":ro" if m.get("readOnly") else "")]
    for e in c["env"]:
        if "when" not in e or e["name"] in values["on"]:
            opts += ["-e", f"{e['name']}={e['value'].format(**values)}"]
    for name, value in node_env:
        opts += ["-e", f"{name}={value}"]
    assert c["securityContext"] == {"privileged": True}
    opts.append("--privileged")
    lim = c["resources"]["limits"]
    opts += ["--memory", str(quantity(lim["memory"])), "--cpus", str(cpus(lim["cpu"]))]
    # Neither ports nor probes: the kubelet asks nothing of the agent.
    assert c["ports"] == [] and c["probes"] == []
    mounts = {m["mountPath"]: vols[m["name"]] for m in c["volumeMounts"]}
    return opts, c["command"], c["args"], mounts


@pytest.fixture(scope="module")
def coroot_cert(tmp_path_factory):
    """A self-signed certificate for the Coroot server's name outside the cluster (agentsOnly)."""
    d = tmp_path_factory.mktemp("coroot-tls")
    key, crt = str(d / "key.pem"), str(d / "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=coroot.example.test",
                    "-addext", "subjectAltName=DNS:coroot.example.test",
                    "-keyout", key, "-out", crt], check=True, capture_output=True)
    return crt, key


# Every node-agent option of the operator's on (the tracer with a sampling rate, the public
# networks to track, log-based metrics off), as a Coroot resource asking for all of them does.
ALL_ON = {"DISABLE_LOG_PARSING", "LOGS_ENDPOINT", "TRACES_ENDPOINT", "TRACES_SAMPLING",
          "PROFILES_ENDPOINT", "TRACK_PUBLIC_NETWORK"}
OPERATOR_CASES = {
    # A Coroot in the cluster: its Service's name, the operator's default port and scrape
    # interval; the container's command left to the image, as the operator leaves it.
    "in-cluster": dict(url="http://coroot-coroot.coroot:8080", scrape_interval="15s", on=ALL_ON),
    # The same started by the name Coroot's image's entrypoint and Coroot's Helm chart give,
    # looked up in PATH.
    "coroot-node-agent-command": dict(url="http://coroot-coroot.coroot:8080",
                                      scrape_interval="1s", on=ALL_ON,
                                      command=["coroot-node-agent"]),
    # agentsOnly: a Coroot elsewhere over https, its certificate not verified (tlsSkipVerify).
    "agents-only-tls-skip-verify": dict(url="https://coroot.example.test:8443",
                                        scrape_interval="1s",
                                        on=ALL_ON | {"INSECURE_SKIP_VERIFY"}),
    # agentsOnly over https, verified by the image's CA certificates: the test's CA in place of
    # Debian's bundle, at the path where the image keeps it.
    "agents-only-image-ca": dict(url="https://coroot.example.test:8443", scrape_interval="1s",
                                 on=ALL_ON, ca_bundle="/etc/ssl/certs/ca-certificates.crt"),
}


@pytest.mark.parametrize("case", list(OPERATOR_CASES))
def test_image_as_coroot_operator_runs_it(podman, tmp_path, pod_netns, coroot_cert, case):
    cfg = OPERATOR_CASES[case]
    url = urllib.parse.urlsplit(cfg["url"])
    values = dict(on=cfg["on"], coroot_url=cfg["url"], scrape_interval=cfg["scrape_interval"],
                  api_key=API_KEY, traces_sampling="0.3",
                  track_public_networks="203.0.113.0/24\n198.51.100.0/24")
    opts, command, args, mounts = operator_pod(values, [], tmp_path / "pod")
    opts += ["--network", f"ns:{pod_netns}", "--add-host", f"{url.hostname}:127.0.0.1"]
    if cfg.get("ca_bundle"):
        opts += ["-v", f"{coroot_cert[0]}:{cfg['ca_bundle']}:ro"]
    command = cfg.get("command", command)
    if command:
        opts += ["--entrypoint", json.dumps(command)]
    name = f"nodescope-test-operator-{os.getpid()}"
    tls = coroot_cert if url.scheme == "https" else None
    with coroot_server(tmp_path, pod_netns, cfg["url"], tls) as coroot:
        try:
            # Where it listens by default, in the pod's namespace (the operator asks no port).
            pid, running = run_agent(podman, name, opts, args, 9645)
            interval = int(cfg["scrape_interval"].rstrip("s"))
            n = stored_through(coroot, "node_agent_info stored through the Coroot server",
                               running, timeout=60 + 2 * interval)
            assert n > 100, n
            code, text = get(pid, 9645, "/metrics")
            assert code == 200
            failed = re.compile(r"^nodescope_remote_write_requests_failed_total(\{.*\})? 0$", re.M)
            assert failed.search(text), [ln for ln in text.splitlines() if "requests_failed" in ln]
            # The spool is on the operator's /tmp (an emptyDir: kept across container restarts).
            assert os.path.isdir(os.path.join(mounts["/tmp"], "nodescope", "spool")), \
                os.listdir(mounts["/tmp"])
            running()  # with every Coroot option the operator sets, implemented or not
        finally:
            # The operator sets no grace period: the kubelet's default, 30 s.
            exit_code, err = stop(podman, name, 30)
    assert exit_code == "0", err
    assert not re.search(r" error ", err), err
