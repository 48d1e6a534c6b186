"""The OCI image as a node runs it: `make image`'s archive loaded by Debian's podman and run with
the DaemonSet manifest's pod made into podman options (hostPID, its host mounts, its environment,
its memory limit, its grace period), once `--privileged` and once with exactly the manifest's
securityContext (capabilities, no privilege escalation, read-only root). Each time the agent inside
lists a process started on the host and one started in another container, and stops cleanly.

Everything podman keeps (images, containers, runtime state) is in a directory of the test's own,
never the machine's containers/storage. How podman is run here, and why (README "Packages"):
  - runc, not crun (podman's default here): crun refuses a hybrid cgroup layout (v1 controllers
    with a v2 tree at /sys/fs/cgroup/unified) with "cgroups in hybrid mode not supported";
  - cgroupfs, not systemd, as the cgroup manager: PID 1 need not be systemd;
  - --ulimit nofile and nproc at this process's own hard limits, nproc at most pid_max (more
    means nothing): podman's defaults are above what this machine's root may set, which runc
    fails on ("error setting rlimit type 7: operation not permitted"; type 6, nproc, past
    pid_max);
  - the agent's own network namespace (`--network none`: loopback only), as a pod's without
    hostNetwork; POD_IP is then 127.0.0.1 and the test reaches /metrics through that namespace.

Run by `make test-packaging` (in `make check`) after `make image`; as root.
"""
import json
import os
import re
import resource
import shutil
import subprocess
import time

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("NODESCOPE_BUILD", os.path.join(ROOT, "build"))
MANIFEST = os.environ.get("NODESCOPE_MANIFEST",
                          os.path.join(ROOT, "packaging", "kubernetes", "daemonset.yaml"))
PODMAN = shutil.which("podman") or "/usr/bin/podman"
POD_IP = "127.0.0.1"  # the container's address in its network namespace of its own


def run(*argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


class Podman:
    def __init__(self, d):
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
    try:
        yield p
    finally:
        p("rm", "-a", "-f", "-t", "0", check=False)
        shutil.rmtree(d, ignore_errors=True)


def quantity(q):
    """A Kubernetes memory quantity ("512Mi") in bytes."""
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi)?", q)
    assert m, q
    return int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}[m.group(2)]


def expand(value, env):
    """Kubernetes' $(VAR) in an env value: a variable defined before it, else left as is."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), value)


def pod_options(privileged):
    """The DaemonSet's pod as `podman run` options, and its grace period: what a kubelet would
    give the container, but that the pod network is the container's own loopback."""
    with open(MANIFEST) as f:
        ds = next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    opts = []
    if pod.get("hostPID"):
        opts.append("--pid=host")
    opts += ["--network", "host" if pod.get("hostNetwork") else "none"]
    vols = {v["name"]: v["hostPath"]["path"] for v in pod.get("volumes", [])}
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
            opts.append("--read-only")
        if "runAsUser" in sc:
            opts += ["--user", str(sc["runAsUser"])]
    port = {p["name"]: p["containerPort"] for p in c["ports"]}["metrics"]
    return opts, c.get("args", []), env, port, pod.get("terminationGracePeriodSeconds", 30)


def get(pid, port, path):
    """GET path from the agent's port in the network namespace of the container's process pid."""
    r = run("nsenter", f"--net=/proc/{pid}/ns/net", "curl", "-sS", "--max-time", "30",
            "-w", "\n%{http_code}", f"http://{POD_IP}:{port}{path}")
    body, _, code = r.stdout.rpartition("\n")
    return (int(code) if code.isdigit() else 0), body


def wait_until(what, fn, tries=600):
    """fn() until it returns something true (its events may still be on their way)."""
    for _ in range(tries):
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"never: {what}")


@pytest.mark.parametrize("privileged", [True, False], ids=["privileged", "manifest-capabilities"])
def test_image_under_podman_sees_host_and_container_processes(podman, privileged):
    opts, args, env, port, grace = pod_options(privileged)
    name = f"nodescope-test-agent-{os.getpid()}"
    other = f"nodescope-test-other-{os.getpid()}"
    # A host process running before the agent starts: found in /proc, which hostPID makes the host's.
    before = subprocess.Popen(["sleep", "300"])
    sleeper = None
    podman("run", "-d", "--name", name, *limits(), *opts, podman.image, *args)
    try:
        pid = int(podman("inspect", "--format", "{{.State.Pid}}", name).stdout)
        logs = lambda: podman("logs", name, check=False).stderr

        def ready():
            state = podman("inspect", "--format", "{{.State.Status}}", name).stdout.strip()
            assert state == "running", (state, logs())
            return re.search(r" info nodescope: ready$", logs(), re.M)

        wait_until("the agent in the image ready", ready)
        code, body = get(pid, port, "/healthz")
        assert code == 200, (code, body, logs())

        # A process of the host's, and one in another container, both started after the agent.
        sleeper = subprocess.Popen(["sleep", "300"])
        podman("run", "-d", "--name", other, "--network", "none", *limits(), podman.busybox,
               "/bin/busybox", "sleep", "300")
        cid = podman("inspect", "--format", "{{.Id}}", other).stdout.strip()
        other_pid = int(podman("inspect", "--format", "{{.State.Pid}}", other).stdout)

        def both_listed():
            code, body = get(pid, port, "/api/processes")
            assert code == 200, (code, body, logs())
            procs = {p["pid"]: p for p in json.loads(body)}
            if sleeper.pid in procs and other_pid in procs:
                return procs

        procs = wait_until("the agent listing both processes", both_listed)
        assert procs[sleeper.pid]["comm"] == "sleep", procs[sleeper.pid]
        assert procs.get(before.pid, {}).get("comm") == "sleep", \
            f"the host process {before.pid} running before the agent is not listed (hostPID)"
        # The other container's process, under that container's cgroup (its full id).
        assert procs[other_pid]["exe"] == "/bin/busybox", procs[other_pid]
        assert cid in procs[other_pid]["container"], (cid, procs[other_pid])
        # Its memory, read from the host's cgroup tree the manifest mounts (CGROUPFS_ROOT).
        rss = re.compile(r'^container_resources_memory_rss_bytes\{[^}]*container_id="[^"]*' + cid +
                         r'"[^}]*\} [1-9]', re.M)

        def scraped():
            code, text = get(pid, port, "/metrics")
            assert code == 200, (code, text[:2000])
            return rss.search(text) and text

        text = wait_until("the other container's memory in /metrics", scraped)
        assert re.search(r'^node_agent_info\{.*\} 1$', text, re.M), text[:2000]
        # The tracepoints' ids were read from the manifest's tracefs mount: the agent did not
        # have to mount one itself (which AppArmor's runtime profiles deny).
        assert "mounted tracefs" not in logs(), logs()
    finally:
        for p in (before, sleeper):
            if p:
                p.kill()
                p.wait()
        podman("rm", "-f", "-t", "0", other, check=False)
        # Stopped as the kubelet stops it: SIGTERM, then the grace period.
        podman("stop", "-t", str(grace), name, check=False, timeout=grace + 60)
        exit_code = podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
        err = podman("logs", name, check=False).stderr
        podman("rm", "-f", name, check=False)
    assert exit_code == "0", err
    assert not re.search(r" error ", err), err
