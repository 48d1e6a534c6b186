"""Container naming (issue: Coroot drop-in): processes are attributed to Coroot's container_id from
their cgroup and, for runtime containers, from the runtime's state files, from their first event.

The cgroups are made here in the cgroup v2 tree (this machine is hybrid: v1 hierarchies and v2 at
/sys/fs/cgroup/unified). The kubepods case uses a state file captured from a real containerd run
(tests/unit/data/containers/, see its README), placed where containerd keeps it.
"""
import os
import shutil
import subprocess

from conftest import by_pid, cgroup2_root

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


def container_of(agent, pid):
    """The container of pid's last exec (the one in the cgroup: sh moved itself there before
    it) and of its exit: they must agree."""
    agent.wait_for(lambda evs: by_pid(evs, pid, "exit"), what=f"exit of {pid}")
    evs = by_pid(agent.snapshot(), pid)
    names = {[e for e in evs if e["type"] == "exec"][-1]["container"],
             [e for e in evs if e["type"] == "exit"][-1]["container"]}
    assert len(names) == 1, evs
    return names.pop()


def test_systemd_service_named_as_coroot(agent_factory):
    rel = f"/system.slice/nodescope-e2e-{os.getpid()}.service"
    a = agent_factory("--events", "proc")
    try:
        pid = run_in_cgroup(rel)
        assert container_of(a, pid) == rel
        assert a.metric("container_process_exits_total", container_id=rel, status="success") == 1
    finally:
        remove_cgroups(rel)


def test_kubernetes_container_named_from_containerd_state(agent_factory):
    """A kubepods cgroup whose id containerd's state names: /k8s/<namespace>/<pod>/<container>."""
    with open(os.path.join(DATA, "containerd.id")) as f:
        cid = f.read().strip()
    rel = f"/kubepods/besteffort/pod0d6c7a1e-5b2f-4e8a-9c3d-2f1e0a9b8c7d/{cid}"
    state = f"/run/containerd/io.containerd.runtime.v2.task/k8s.io/{cid}"
    made = not os.path.exists("/run/containerd")
    os.makedirs(state, exist_ok=True)
    shutil.copy(os.path.join(DATA, "containerd.config.json"), os.path.join(state, "config.json"))
    a = agent_factory("--events", "proc")
    try:
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
    finally:
        remove_cgroups(rel)
        shutil.rmtree(state, ignore_errors=True)
        if made:
            shutil.rmtree("/run/containerd", ignore_errors=True)


def test_runtime_container_without_state_keeps_its_cgroup_path(agent_factory):
    """A docker cgroup whose runtime state is nowhere: named by its cgroup path, and counted."""
    rel = "/docker/" + "ab" * 32
    a = agent_factory("--events", "proc")
    try:
        pid = run_in_cgroup(rel)
        assert container_of(a, pid) == rel
        assert a.metric_sum("nodescope_container_metadata_reads_total", result="missing") >= 1
    finally:
        remove_cgroups(rel)
