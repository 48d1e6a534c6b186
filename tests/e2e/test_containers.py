"""Container naming (issue: Coroot drop-in): processes are attributed to Coroot's container_id from
their cgroup and, for runtime containers, from the runtime's state files, from their first event.

The cgroups are made here in the cgroup v2 tree (this machine is hybrid: v1 hierarchies and v2 at
/sys/fs/cgroup/unified). The kubepods case uses a state file captured from a real containerd run
(tests/unit/data/containers/, see its README), placed where containerd keeps it. A real podman
container (Debian's podman with runc, an image built here from busybox-static) and a containerd one
(Debian's containerd, run with ctr as the CRI plugin lays containers out) are run too, and a
Docker one (Debian's docker.io engine, started here without networking or iptables).
"""
import contextlib
import os
import pytest
import random
import shutil
import signal
import socket
import subprocess
import time

from conftest import by_pid, cgroup2_root, wait_until

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unit", "data", "containers")


def run_in_cgroup(rel):
    """Runs /bin/true in the v2 cgroup rel (made here); returns its pid."""
    path = cgroup2_root() + rel
    os.makedirs(path, exist_ok=True)
    p = subprocess.Popen(["/bin/sh", "-c", f"echo $$ > {path}/cgroup.procs; exec /bin/true"])
    assert p.wait(10) == 0
    return p.pid


def remove_cgroups(rel):
    """rmdir rel and its parents up to the root (only the ones made here are empty)."""
    while rel and rel != "/":
        try:
            os.rmdir(cgroup2_root() + rel)
        except OSError:
            break
        rel = os.path.dirname(rel)


@contextlib.contextmanager
def containerd_state(rel, state):
    """Yields place(), which puts containerd's state of a container (the captured config.json)
    at state, a directory under /run/containerd. Afterwards the cgroup rel, the state and
    /run/containerd (unless it was there before) are removed."""
    made = not os.path.exists("/run/containerd")

    def place():
        os.makedirs(state, exist_ok=True)
        shutil.copy(os.path.join(DATA, "containerd.config.json"), os.path.join(state, "config.json"))
    try:
        yield place
    finally:
        remove_cgroups(rel)
        shutil.rmtree(state, ignore_errors=True)
        if made:
            shutil.rmtree("/run/containerd", ignore_errors=True)


def cri_options(cid, pod_uid, pod, namespace, name, image):
    """ctr run's options for a container as the CRI plugin lays it out: a kubepods cgroup and
    the CRI annotations."""
    return ["--cgroup", f"/kubepods/besteffort/pod{pod_uid}/{cid}",
            "--annotation", "io.kubernetes.cri.container-type=container",
            "--annotation", f"io.kubernetes.cri.container-name={name}",
            "--annotation", f"io.kubernetes.cri.sandbox-name={pod}",
            "--annotation", f"io.kubernetes.cri.sandbox-namespace={namespace}",
            "--annotation", f"io.kubernetes.cri.image-name={image}"]


def container_of(agent, pid):
    """The container of pid's last exec (the one in the cgroup: sh moved itself there before
    it) and of its exit: they must agree."""
    agent.wait_for(lambda evs: by_pid(evs, pid, "exit"), what=f"exit of {pid}")
    evs = by_pid(agent.snapshot(), pid)
    names = {[e for e in evs if e["type"] == "exec"][-1]["container"],
             [e for e in evs if e["type"] == "exit"][-1]["container"]}
    assert len(names) == 1, evs
    return names.pop()


def run_sh_in_cgroup(rel, script):
    """Runs script with sh moved into the v2 cgroup rel (made here) first; returns sh's Popen."""
    path = cgroup2_root() + rel
    os.makedirs(path, exist_ok=True)
    return subprocess.Popen(["/bin/sh", "-c", f"echo $$ > {path}/cgroup.procs; {script}"])


def test_container_named_at_its_first_exec_though_its_cgroup_is_gone_when_the_exec_is_read(
        agent_factory):
    """A set of cgroups' first exec is reported at once (a `first_exec` line, from the files
    stream) and names the container then. The exec's own record, read later (the proc stream is
    batched; --debug-batch-ms makes it 8 s here), still names it after the cgroup was removed,
    when the kernel no longer tells the cgroup's path by its id and /proc has no such process."""
    rel = f"/system.slice/nodescope-e2e-gone-{os.getpid()}.service"
    a = agent_factory("--events", "proc", "--debug-batch-ms", "8000")
    p = run_sh_in_cgroup(rel, "exec sleep 1000")
    try:
        # sh's own exec, before it moved, may be its first in the test's cgroups too.
        a.wait_for(lambda evs: [e for e in evs if e["type"] == "first_exec" and e["pid"] == p.pid
                                and e.get("container") == rel], what="the cgroup's first exec")
    finally:
        p.kill()
        p.wait(10)
    remove_cgroups(rel)
    assert not os.path.exists(cgroup2_root() + rel)
    assert container_of(a, p.pid) == rel
    assert a.metric("nodescope_proc_cgroups_first_execs_total") >= 1


def run_while_agent_stopped(agent, dirs, script="exec /bin/true"):
    """Runs script with sh moved into the cgroup directories dirs (made here) while the agent
    is stopped; the process exits and the cgroups are removed before the agent reads a record
    of it, as a `docker run --rm` container's on a busy node. Returns sh's pid."""
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    moves = "; ".join(f"echo $$ > {d}/cgroup.procs" for d in dirs)
    agent.proc.send_signal(signal.SIGSTOP)
    try:
        p = subprocess.Popen(["/bin/sh", "-c", f"{moves}; {script}"])
        assert p.wait(10) == 0
        for d in dirs:
            while d.count("/") > 4:  # the ones made here, deepest first; never a mount's root
                try:
                    os.rmdir(d)
                except OSError:
                    break
                d = os.path.dirname(d)
        assert not any(os.path.exists(d) for d in dirs)
    finally:
        agent.proc.send_signal(signal.SIGCONT)
    return p.pid


@pytest.mark.parametrize("hierarchies", ["v2", "v1 cpu and memory"])
def test_container_named_from_the_cgroup_path_the_kernel_gave_though_all_is_gone(
        agent_factory, hierarchies):
    """The first exec in a set of cgroups carries their paths, read in the kernel at the exec:
    a container whose process and cgroups are gone before the agent reads any record of it (the
    agent stopped here, a busy node or a slow build in life) is still named from them. Docker's
    cgroups on this hybrid machine are v1 (cpu, memory), a systemd host's v2."""
    rel = f"/system.slice/nodescope-e2e-path{os.getpid()}-{hierarchies[:2]}.service"
    roots = [cgroup2_root()] if hierarchies == "v2" else ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory"]
    a = agent_factory("--events", "proc")
    pid = run_while_agent_stopped(a, [r + rel for r in roots])
    assert container_of(a, pid) == rel
    first = a.wait_for(lambda evs: [e for e in evs if e["type"] == "first_exec" and e["pid"] == pid],
                       what="the cgroups' first exec")
    assert first[-1]["container"] == rel, first


def test_process_whose_container_cannot_be_named_is_attributed_to_none(agent_factory):
    """A cgroup deeper than the kernel side walks (10 levels) has no path in the record: gone
    before it is read, with the process gone from /proc, its exec cannot be named. It is
    counted and attributed to no container (""), never to its parent's."""
    deep = "".join(f"/nodescope-e2e-deep{os.getpid()}-{i}" for i in range(11))
    a = agent_factory("--events", "proc")
    pid = run_while_agent_stopped(a, [cgroup2_root() + deep])
    assert container_of(a, pid) == ""
    assert a.metric("nodescope_proc_unnamed_total") >= 1
    assert not a.has_series("container_process_exits_total", container_id="")


def test_standalone_processes_left_out_as_coroot_does(agent_factory):
    """A user session's process is traced under its cgroup path but makes no series (counted);
    a systemd service's does; --keep-standalone-processes reports both."""
    session = f"/user.slice/user-0.slice/session-e2e{os.getpid()}.scope"
    service = f"/system.slice/nodescope-e2e-{os.getpid()}.service"
    plain = agent_factory("--events", "proc", keep_standalone=False)
    keep = agent_factory("--events", "proc", keep_standalone=True)
    try:
        in_session, in_service = run_in_cgroup(session), run_in_cgroup(service)
        for a in (plain, keep):
            assert container_of(a, in_session) == session
            assert container_of(a, in_service) == service
        assert plain.metric("container_process_exits_total", container_id=service,
                            status="success") == 1
        assert not plain.has_series("container_process_exits_total", container_id=session)
        assert plain.metric("nodescope_metric_updates_unreported_total") >= 1
        assert keep.metric("container_process_exits_total", container_id=session,
                           status="success") == 1
        assert keep.metric("nodescope_metric_updates_unreported_total") == 0
    finally:
        remove_cgroups(session)
        remove_cgroups(service)


def test_min_container_age(agent_factory):
    """--min-container-age: a container's series are written once it has lived that long, or
    if it did before its last process left; a live younger one's are not."""
    rel = f"/system.slice/nodescope-e2e-age{os.getpid()}.service"
    old = agent_factory("--events", "proc", "--min-container-age", "1h")
    young = agent_factory("--events", "proc", "--min-container-age", "2s")
    sh = run_sh_in_cgroup(rel, "/bin/true; sleep 2.5; echo done")
    try:
        for a in (old, young):
            a.wait_for(lambda evs: [e for e in by_pid(evs, sh.pid, "exit")], what="sh's exit")
        exits = [e for e in young.snapshot() if e["type"] == "exit" and e.get("container") == rel]
        assert [e for e in exits if e["comm"] == "true"], "the /bin/true forked in the cgroup"
        # lived 2.5 s at least, 1 h at most: written by the 2 s agent, not by the 1 h one
        assert young.metric("container_process_exits_total", container_id=rel,
                            status="success") == len(exits)
        assert not old.has_series("container_process_exits_total", container_id=rel)
    finally:
        sh.wait(10)
        remove_cgroups(rel)


def test_systemd_service_named_as_coroot(agent_factory):
    rel = f"/system.slice/nodescope-e2e-{os.getpid()}.service"
    a = agent_factory("--events", "proc")
    try:
        pid = run_in_cgroup(rel)
        assert container_of(a, pid) == rel
        assert a.metric("container_process_exits_total", container_id=rel, status="success") == 1
    finally:
        remove_cgroups(rel)


def test_systemd_service_info_from_its_unit_files(agent_factory):
    """container_info's systemd labels, as Coroot asks systemd for them: the service's Type and
    the timer that triggers it, here from unit files the test writes in /run/systemd/system.
    A oneshot started by a timer is one of systemd's system services, which Coroot skips by
    default: kept here with --no-skip-systemd-system-services, left out (but traced) without."""
    name = f"nodescope-e2e-unit{os.getpid()}"
    rel = f"/system.slice/{name}.service"
    units = "/run/systemd/system"
    made = not os.path.isdir(units)
    os.makedirs(units, exist_ok=True)
    files = {f"{units}/{name}.service": "[Service]\nType=oneshot\nExecStart=/bin/true\n",
             f"{units}/{name}.timer": "[Timer]\nOnCalendar=daily\n"}
    try:
        for path, text in files.items():
            with open(path, "w") as f:
                f.write(text)
        a = agent_factory("--events", "proc", "--no-skip-systemd-system-services")
        skipping = agent_factory("--events", "proc")
        pid = run_in_cgroup(rel)
        assert container_of(a, pid) == rel
        assert a.metric("container_info", container_id=rel, image="",
                        systemd_triggered_by=f"{name}.timer", systemd_type="oneshot") == 1, \
            [dict(k) for k in a.metrics().get("container_info", {})]
        assert container_of(skipping, pid) == rel
        assert not skipping.has_series("container_info", container_id=rel)
        assert not skipping.has_series("container_process_exits_total", container_id=rel)
    finally:
        remove_cgroups(rel)
        for path in files:
            if os.path.exists(path):
                os.unlink(path)
        if made:
            os.removedirs(units)


def test_systemd_system_services_skipped_as_coroot_does(agent_factory, monkeypatch):
    """--skip-systemd-system-services (on by default): a unit named as systemd's own
    (systemd-*, no unit file needed) makes no series, another service does; turned off by its
    variable, both do."""
    own = f"/system.slice/systemd-e2e{os.getpid()}.service"
    other = f"/system.slice/nodescope-e2e-svc{os.getpid()}.service"
    default = agent_factory("--events", "proc")
    monkeypatch.setenv("SKIP_SYSTEMD_SYSTEM_SERVICES", "false")
    keep = agent_factory("--events", "proc")
    try:
        pids = {rel: run_in_cgroup(rel) for rel in (own, other)}
        for a in (default, keep):
            for rel, pid in pids.items():
                assert container_of(a, pid) == rel
        assert not default.has_series("container_process_exits_total", container_id=own)
        assert default.metric("container_process_exits_total", container_id=other,
                              status="success") == 1
        for rel in (own, other):
            assert keep.metric("container_process_exits_total", container_id=rel,
                               status="success") == 1
    finally:
        remove_cgroups(own)
        remove_cgroups(other)


def test_container_allowlist_and_denylist(agent_factory, monkeypatch):
    """Coroot's lists: regular expressions on container_id, repeatable, the variable one a
    line. A container the denylist matches, or that no allowlist pattern matches, makes no
    series; its events are traced all the same. A bad pattern stops the agent with exit 2."""
    base = f"/system.slice/nodescope-e2e-list{os.getpid()}"
    a_rel, b_rel, c_rel = (f"{base}-{x}.service" for x in "abc")
    deny = agent_factory("--events", "proc", "--container-denylist", r"list[0-9]+-a\.",
                         "--container-denylist", "-b[.]service$")
    monkeypatch.setenv("CONTAINER_ALLOWLIST", "^/nothing$\n-a\\.service\n")
    allow = agent_factory("--events", "proc")
    try:
        pids = {rel: run_in_cgroup(rel) for rel in (a_rel, b_rel, c_rel)}
        for ag in (deny, allow):
            for rel, pid in pids.items():
                assert container_of(ag, pid) == rel
        exits = lambda ag, rel: ag.has_series("container_process_exits_total", container_id=rel)
        assert [exits(deny, r) for r in (a_rel, b_rel, c_rel)] == [False, False, True]
        assert [exits(allow, r) for r in (a_rel, b_rel, c_rel)] == [True, False, False]
    finally:
        for rel in (a_rel, b_rel, c_rel):
            remove_cgroups(rel)
    bad = subprocess.run([deny.cmd[0], "--container-denylist", "(unclosed"], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2 and "--container-denylist '(unclosed'" in bad.stderr, bad.stderr


def test_kubernetes_container_named_from_containerd_state(agent_factory):
    """A kubepods cgroup whose id containerd's state names: /k8s/<namespace>/<pod>/<container>."""
    with open(os.path.join(DATA, "containerd.id")) as f:
        cid = f.read().strip()
    rel = f"/kubepods/besteffort/pod0d6c7a1e-5b2f-4e8a-9c3d-2f1e0a9b8c7d/{cid}"
    state = f"/run/containerd/io.containerd.runtime.v2.task/k8s.io/{cid}"
    with containerd_state(rel, state) as place:
        place()
        a = agent_factory("--events", "proc")
        pid = run_in_cgroup(rel)
        name = "/k8s/shop/web-7d4b9c8f6d-x2x7q/web"
        assert container_of(a, pid) == name
        assert a.metric_sum("nodescope_container_metadata_reads_total", result="ok") >= 1
        # app_id, as Coroot derives it (the deployment's pod suffix gone), beside container_id.
        series = [dict(k) for k in a.metrics(keep_node_labels=True)["container_process_exits_total"]]
        assert [s["app_id"] for s in series if s["container_id"] == name] == ["/k8s/shop/web"]
        assert all(s["app_id"] == "" for s in series if s["container_id"] != name), series
        assert a.metric("container_info", container_id=name, image="docker.io/library/busybox:fixture",
                        systemd_triggered_by="", systemd_type="") == 1


def test_runtime_container_without_state_is_withheld(agent_factory):
    """A docker cgroup whose runtime state is nowhere: its events carry its cgroup path, no series
    shows it (Coroot withholds a container its runtime does not name), and it is counted."""
    rel = "/docker/" + "ab" * 32
    a = agent_factory("--events", "proc")
    try:
        pid = run_in_cgroup(rel)
        assert container_of(a, pid) == rel
        assert a.metric_sum("nodescope_container_metadata_reads_total", result="missing") >= 1
        assert a.metric("nodescope_containers_unnamed") >= 1
        assert not any(dict(k).get("container_id") == rel for series in a.metrics().values()
                       for k in series)
    finally:
        remove_cgroups(rel)


def test_v1_container_named_after_its_process_is_gone(agent_factory):
    """A container only the v1 memory hierarchy knows (as on this hybrid machine, where the v2
    tree leaves every process at its root): its process execs and exits while the agent is
    stopped, so nothing of it is left in /proc when the agent reads its records. The cgroup ids
    the exec and exit records carry still name it, and no /proc read is needed for it."""
    memory = "/sys/fs/cgroup/memory"
    assert os.path.isfile(memory + "/cgroup.procs"), "this machine has a v1 memory hierarchy"
    rel = "/docker/" + "cd" * 32
    os.makedirs(memory + rel, exist_ok=True)
    a = agent_factory("--events", "proc")
    try:
        reads = a.metric_sum("nodescope_proc_cgroup_reads_total")
        a.proc.send_signal(signal.SIGSTOP)
        try:
            p = subprocess.Popen(["/bin/sh", "-c", f"echo $$ > {memory}{rel}/cgroup.procs; exec /bin/true"])
            assert p.wait(10) == 0
        finally:
            a.proc.send_signal(signal.SIGCONT)
        assert container_of(a, p.pid) == rel
        # Its exec needed no /proc read (which would have found nothing): other processes'
        # could, but every process here is in a non-root v1 memory cgroup, as this one.
        own = f"/proc/{os.getpid()}/cgroup"
        if any(l.split(":")[1] == "memory" and l.split(":")[2].strip() != "/" for l in open(own)):
            assert a.metric_sum("nodescope_proc_cgroup_reads_total") == reads
    finally:
        os.rmdir(memory + rel)


PODMAN = shutil.which("podman") or "/usr/bin/podman"
IMAGE = "localhost/nodescope-e2e-busybox:test"


@pytest.fixture(scope="module")
def busybox_image(tmp_path_factory):
    """An image built here from busybox-static (no registry is reachable), imported by podman."""
    if not os.access(PODMAN, os.X_OK):
        pytest.fail("podman is missing: apt-get install podman runc (scripts/install-deps.sh)")
    d = tmp_path_factory.mktemp("image")
    os.makedirs(d / "rootfs" / "bin")
    shutil.copy("/bin/busybox", d / "rootfs" / "bin" / "busybox")
    subprocess.run(["tar", "-C", str(d / "rootfs"), "-cf", str(d / "busybox.tar"), "."], check=True)
    subprocess.run([PODMAN, "import", str(d / "busybox.tar"), IMAGE], check=True, capture_output=True)
    yield IMAGE
    subprocess.run([PODMAN, "rmi", "-f", IMAGE], capture_output=True)


def podman(*args, timeout=60):
    # runc: crun refuses this machine's hybrid cgroups; the sandbox caps rlimits at 1024.
    p = subprocess.run([PODMAN, "--runtime", "runc", *args], capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, (args, p.stderr)
    return p.stdout.strip()


RUN = ("run", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024")


def listen_on(agent, port):
    """The listen of the busybox httpd serving 127.0.0.1:port (started in a container): its exec
    names its pid, so another process's socket on that port is never taken for it."""
    addr = f"127.0.0.1:{port}"
    pids = lambda evs: {e["pid"] for e in evs if e["type"] == "exec" and "httpd" in e.get("args", "")
                        and addr in e.get("args", "")}
    return agent.wait_for(lambda evs: next((e for e in evs if e["type"] == "listen"
                                            and e["addr"] == addr and e["pid"] in pids(evs)), None),
                          what="the server's listen")


def free_tcp_port():
    """A free port below the ephemeral range: no socket the kernel numbers can take it meanwhile."""
    for _ in range(100):
        port = random.randrange(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise AssertionError("no free port in 20000-32000")


def container_true_events(agent):
    """The exec of `/bin/busybox true` in a container and that process's exit. Not any exit in
    the container's cgroup: the runtime's own set-up processes (runc's init stages) leave it
    before the exec, and a batch read between the two has their exits and not yet the exec."""
    execs = agent.wait_for(lambda evs: [e for e in evs if e["type"] == "exec"
                                        and e["args"] == "/bin/busybox true"], what="the container's exec")
    exit_ = agent.wait_for(lambda evs: by_pid(evs, execs[-1]["pid"], "exit"), what="its exit")
    return execs + exit_


def test_podman_container_named_from_its_first_event(agent_factory, busybox_image):
    """A real podman container: a short-lived process and a server in it are attributed to
    /podman/<name> from their first event (exec, listen), with the image in container_info."""
    name = f"nodescope-e2e-{os.getpid()}"
    a = agent_factory("--events", "proc,tcp")
    podman(*RUN, "--rm", "--name", name, busybox_image, "/bin/busybox", "true")
    evs = container_true_events(a)
    assert all(e["container"] == f"/podman/{name}" for e in evs), evs
    assert a.metric("container_info", container_id=f"/podman/{name}", image=busybox_image,
                    systemd_triggered_by="", systemd_type="") == 1, \
        [dict(k) for k in a.metrics().get("container_info", {})]

    server = f"{name}-srv"
    port = free_tcp_port()
    podman(*RUN, "-d", "--network", "host", "--name", server, busybox_image,
           "/bin/busybox", "httpd", "-f", "-p", f"127.0.0.1:{port}")
    try:
        listen = listen_on(a, port)
        assert listen["container"] == f"/podman/{server}", listen
    finally:
        podman("rm", "-f", server)


CTR = shutil.which("ctr") or "/usr/bin/ctr"


@pytest.fixture(scope="module")
def containerd(busybox_image, tmp_path_factory):
    """Debian's containerd (started here unless one runs) with the image in namespace k8s.io."""
    if not os.access(CTR, os.X_OK):
        pytest.fail("containerd is missing: apt-get install containerd (scripts/install-deps.sh)")
    proc = None
    answers = lambda: subprocess.run([CTR, "--connect-timeout", "1s", "version"], capture_output=True,
                                     timeout=30).returncode == 0
    if not answers():  # (a socket file left by a containerd that died is no containerd)
        log = open(tmp_path_factory.mktemp("containerd") / "log", "wb")
        proc = subprocess.Popen(["containerd"], stdout=log, stderr=log)
        wait_until(answers, "containerd to start", timeout=20, proc=proc)
    archive = tmp_path_factory.mktemp("oci") / "image.tar"
    subprocess.run([PODMAN, "save", "--format", "oci-archive", "-o", str(archive), busybox_image],
                   check=True, capture_output=True)
    ref = "docker.io/library/nodescope-e2e:test"
    subprocess.run([CTR, "-n", "k8s.io", "image", "import", "--index-name", ref, str(archive)],
                   check=True, capture_output=True)
    yield ref
    subprocess.run([CTR, "-n", "k8s.io", "image", "rm", ref], capture_output=True)
    if proc:
        proc.terminate()
        proc.wait(20)


def test_containerd_pod_container_named_from_its_first_event(agent_factory, containerd):
    """A container run by containerd as the CRI plugin lays it out (namespace k8s.io, a kubepods
    cgroup, the CRI annotations): its short-lived process is /k8s/<ns>/<pod>/<container> from its
    exec, with app_id and the image."""
    cid = "%064x" % (os.getpid() * 7919)
    pod = "web-5d4b9c8f6d-k2x7q"  # a ReplicaSet hash and a suffix of k8s's alphabet (no vowels)
    name = f"/k8s/e2e/{pod}/app"
    a = agent_factory("--events", "proc,tcp")
    pod_uid = f"11111111-2222-3333-4444-{os.getpid():012d}"
    p = subprocess.run([CTR, "-n", "k8s.io", "run", "--rm",
                        *cri_options(cid, pod_uid, pod, "e2e", "app", containerd),
                        containerd, cid, "/bin/busybox", "true"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    evs = container_true_events(a)
    assert all(e["container"] == name for e in evs), evs
    series = [dict(k) for k in a.metrics(keep_node_labels=True)["container_process_exits_total"]]
    assert [s["app_id"] for s in series if s["container_id"] == name] == ["/k8s/e2e/web"], series
    assert a.metric("container_info", container_id=name, image=containerd,
                    systemd_triggered_by="", systemd_type="") == 1

    # A server in another container of the pod: its listen is the container's from the first event.
    sid = "%064x" % (os.getpid() * 7919 + 1)
    port = free_tcp_port()
    p = subprocess.run([CTR, "-n", "k8s.io", "run", "-d", "--net-host",
                        *cri_options(sid, pod_uid, pod, "e2e", "srv", containerd),
                        containerd, sid, "/bin/busybox", "httpd", "-f", "-p", f"127.0.0.1:{port}"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    try:
        listen = listen_on(a, port)
        assert listen["container"] == f"/k8s/e2e/{pod}/srv", listen
    finally:
        subprocess.run([CTR, "-n", "k8s.io", "task", "kill", "-s", "KILL", sid], capture_output=True)
        for _ in range(50):
            if subprocess.run([CTR, "-n", "k8s.io", "task", "delete", sid],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        subprocess.run([CTR, "-n", "k8s.io", "container", "rm", sid], capture_output=True)


DOCKER = shutil.which("docker", path="/usr/bin:/usr/local/bin") or "/usr/bin/docker"
DOCKERD = shutil.which("dockerd", path="/usr/sbin:/usr/bin") or "/usr/sbin/dockerd"


def docker(*args, timeout=60, check=True):
    p = subprocess.run([DOCKER, "-H", "unix:///run/docker.sock", *args], capture_output=True,
                       text=True, timeout=timeout)
    assert not check or p.returncode == 0, (args, p.stderr)
    return p


@pytest.fixture(scope="module")
def dockerd(busybox_image, tmp_path_factory):
    """Debian's Docker engine (started here unless one answers on /run/docker.sock; its state in
    /var/lib/docker, where nodescope reads it), with the busybox image imported."""
    if not os.access(DOCKERD, os.X_OK):
        pytest.fail("dockerd is missing: apt-get install docker.io (scripts/install-deps.sh)")
    proc = None
    answers = lambda: docker("version", timeout=30, check=False).returncode == 0
    if not answers():
        log = open(tmp_path_factory.mktemp("dockerd") / "log", "wb")
        # No bridge, no iptables: the test's containers use no network or the host's.
        proc = subprocess.Popen([DOCKERD, "--iptables=false", "--ip6tables=false", "--bridge=none",
                                 "--storage-driver=vfs"], stdout=log, stderr=log)
        wait_until(answers, "dockerd to start", timeout=30, proc=proc)
    d = tmp_path_factory.mktemp("docker-image")
    os.makedirs(d / "bin")
    shutil.copy("/bin/busybox", d / "bin" / "busybox")
    tar = subprocess.run(["tar", "-C", str(d), "-c", "."], capture_output=True, check=True).stdout
    ref = "nodescope-e2e-busybox:test"
    p = subprocess.run([DOCKER, "-H", "unix:///run/docker.sock", "import", "-", ref], input=tar,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    yield ref
    docker("rmi", "-f", ref, check=False)
    if proc:
        proc.terminate()
        proc.wait(30)


def test_docker_container_named_from_its_first_event(agent_factory, dockerd):
    """A real Docker container: its short-lived process is /docker/<name> from its exec, with
    the image in container_info (from the engine's config.v2.json)."""
    name = f"nodescope-e2e-{os.getpid()}"
    a = agent_factory("--events", "proc,tcp")
    docker("run", "--rm", "--network", "none", "--name", name, dockerd,
           "/bin/busybox", "sh", "-c", "/bin/busybox true")
    want = f"/docker/{name}"
    execs = a.wait_for(lambda evs: [e for e in evs if e["type"] == "exec"
                                    and e["args"] == "/bin/busybox true"], what="the exec of true")
    assert all(e["container"] == want for e in execs), execs
    for e in execs:
        a.wait_for(lambda evs: by_pid(evs, e["pid"], "exit"), what="the exit of true")
    assert a.metric("container_process_exits_total", container_id=want, status="success") >= 1
    assert a.metric("container_info", container_id=want, image=dockerd,
                    systemd_triggered_by="", systemd_type="") == 1, \
        [dict(k) for k in a.metrics().get("container_info", {})]

    server = f"{name}-srv"
    port = free_tcp_port()
    docker("run", "-d", "--network", "host", "--name", server, dockerd,
           "/bin/busybox", "httpd", "-f", "-p", f"127.0.0.1:{port}")
    try:
        listen = listen_on(a, port)
        assert listen["container"] == f"/docker/{server}", listen
    finally:
        docker("rm", "-f", server, check=False)
