"""Container metadata found where each runtime keeps it, and Coroot's policy for containers not
named yet (issue: right in a real cluster).

- A Docker engine with another data root, and a containerd with another state dir (each started
  here with its own sockets, so no other engine is disturbed), name their containers from the
  first event: the agent finds their roots from the daemons' command lines.
- A container whose metadata is nowhere yet has no series (counted), and once its state appears
  it is named, with what it did meanwhile attributed to it (its state placed by the test, as
  containerd writes it: the captured state file of tests/unit/data/containers/).
- Docker's published ports are the container's listens with proxy="dockerd", as Coroot reports
  them: 127.0.0.1:<port> as bound, 0.0.0.0:<port> as every IPv4 address of the host. Docker's
  bridge is one made here, and its userland proxy forwards (no iptables rules are touched).
"""
import json
import os
import random
import shutil
import socket
import subprocess
import tempfile

import pytest

from conftest import by_pid, wait_until
from test_containers import (CTR, DOCKER, DOCKERD, PODMAN, container_true_events, containerd_state,
                             cri_options, free_tcp_port, run_in_cgroup)


def series_of(metrics, container_id):
    """Every series (family, labels) whose container_id is container_id."""
    return [(name, dict(k)) for name, series in metrics.items() for k in series
            if dict(k).get("container_id") == container_id]


def test_unnamed_container_withheld_until_named_then_what_it_did_is_its_own(agent_factory):
    """A kubepods container whose state is nowhere: no series, counted in
    nodescope_containers_unnamed; its state placed after its process exited (in containerd's v1
    layout): asked again on the backoff timer, it is named, and its exit is counted under its
    name."""
    cid = "%064x" % random.getrandbits(256)
    rel = f"/kubepods/besteffort/pod7e1a0c3d-{os.getpid() % 10000:04d}-4e8a-9c3d-2f1e0a9b8c7d/{cid}"
    state = f"/run/containerd/io.containerd.runtime.v1.linux/k8s.io/{cid}"
    name = "/k8s/shop/web-7d4b9c8f6d-x2x7q/web"
    a = agent_factory("--events", "proc")
    with containerd_state(rel, state) as place:
        pid = run_in_cgroup(rel)
        a.wait_for(lambda evs: by_pid(evs, pid, "exit"), what=f"exit of {pid}")
        # Its events carry its cgroup path; its series are withheld, as Coroot withholds them.
        assert [e["container"] for e in by_pid(a.snapshot(), pid, "exit")] == [rel]
        wait_until(lambda: a.metrics().get("nodescope_containers_unnamed", {}).get(frozenset(), 0) >= 1,
                   "the unnamed container counted")
        m = a.metrics()
        assert series_of(m, rel) == [], series_of(m, rel)
        assert series_of(m, name) == []
        late = a.metric("nodescope_containers_named_late_total")

        place()
        # Its exit, read before it was named, is its own now (the retries are 1, 2, 4 s apart).
        exit_named = frozenset({"container_id": name, "status": "success"}.items())

        def named():
            m = a.metrics()
            return m if m.get("container_process_exits_total", {}).get(exit_named) else None
        m = wait_until(named, "the exit under the container's name")
        assert m["container_process_exits_total"][exit_named] == 1
        assert series_of(m, rel) == [], series_of(m, rel)
        assert a.metric("nodescope_containers_named_late_total") >= late + 1
        assert a.metric("container_info", container_id=name, image="docker.io/library/busybox:fixture",
                        systemd_triggered_by="", systemd_type="") == 1


@pytest.fixture(scope="module")
def rootfs(tmp_path_factory):
    """A root file system of busybox-static (no registry is reachable): a tar of it."""
    d = tmp_path_factory.mktemp("rootfs")
    os.makedirs(d / "fs" / "bin")
    shutil.copy("/bin/busybox", d / "fs" / "bin" / "busybox")
    subprocess.run(["tar", "-C", str(d / "fs"), "-cf", str(d / "rootfs.tar"), "."], check=True)
    return d / "rootfs.tar"


@pytest.fixture(scope="module")
def oci_archive(rootfs, tmp_path_factory):
    """The image as an OCI archive, by podman (under a name of this module's)."""
    if not os.access(PODMAN, os.X_OK):
        pytest.fail("podman is missing: apt-get install podman runc (scripts/install-deps.sh)")
    image = "localhost/nodescope-e2e-meta:test"
    subprocess.run([PODMAN, "import", str(rootfs), image], check=True, capture_output=True)
    archive = tmp_path_factory.mktemp("oci") / "image.tar"
    try:
        subprocess.run([PODMAN, "save", "--format", "oci-archive", "-o", str(archive), image],
                       check=True, capture_output=True)
    finally:
        subprocess.run([PODMAN, "rmi", "-f", image], capture_output=True)
    return archive


@pytest.fixture(scope="module")
def own_containerd(oci_archive):
    """Debian's containerd with its state, root and sockets in a directory of its own: the state
    dir set in its own config file (`state`), given with --config."""
    if not os.access(CTR, os.X_OK):
        pytest.fail("containerd is missing: apt-get install containerd (scripts/install-deps.sh)")
    d = tempfile.mkdtemp(prefix="nsmeta-ctrd-", dir="/tmp")
    sock = f"{d}/containerd.sock"
    with open(f"{d}/config.toml", "w") as f:
        f.write(f'version = 2\nroot = "{d}/root"\nstate = "{d}/state"\n\n[grpc]\n  address = "{sock}"\n')
    log = open(f"{d}/log", "wb")
    proc = subprocess.Popen(["containerd", "--config", f"{d}/config.toml"], stdout=log, stderr=log)
    ctr = lambda *args, **kw: subprocess.run([CTR, "--address", sock, "-n", "k8s.io", *args],
                                              capture_output=True, text=True, timeout=60, **kw)
    try:
        wait_until(lambda: ctr("version").returncode == 0, "containerd", proc=proc)
        ref = "docker.io/library/nodescope-e2e-meta:test"
        p = ctr("image", "import", "--index-name", ref, str(oci_archive))
        assert p.returncode == 0, p.stderr
        yield ctr, ref, f"{d}/state"
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(d, ignore_errors=True)


def test_containerd_with_its_own_state_dir_names_its_container(agent_factory, own_containerd):
    """containerd whose config file puts its state elsewhere: the agent reads that dir (the config
    file from containerd's command line, its `state` from the file) and names the container at its
    first exec."""
    ctr, ref, state = own_containerd
    cid = "%064x" % random.getrandbits(256)
    pod = "api-5d4b9c8f6d-m2x7q"
    name = f"/k8s/meta/{pod}/app"
    a = agent_factory("--events", "proc")
    p = ctr("run", "--rm",
            *cri_options(cid, f"22222222-3333-4444-5555-{os.getpid():012d}", pod, "meta", "app", ref),
            ref, cid, "/bin/busybox", "true")
    assert p.returncode == 0, p.stderr
    evs = container_true_events(a)
    assert all(e["container"] == name for e in evs), evs
    assert os.path.isdir(f"{state}/io.containerd.runtime.v2.task"), "containerd kept its tasks there"
    assert a.metric("container_info", container_id=name, image=ref, systemd_triggered_by="",
                    systemd_type="") == 1


BRIDGE = "nsmeta0"
BRIDGE_NET = "10.239.77"


@pytest.fixture(scope="module")
def own_dockerd(rootfs):
    """Debian's Docker engine with its data root, exec root, pid file and socket in a directory of
    its own (and its own containerd), on a bridge made here, iptables untouched: published ports
    go through its userland proxy."""
    if not os.access(DOCKERD, os.X_OK):
        pytest.fail("dockerd is missing: apt-get install docker.io (scripts/install-deps.sh)")
    d = tempfile.mkdtemp(prefix="nsmeta-dk-", dir="/tmp")
    sock = f"{d}/docker.sock"
    subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)
    subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True)
    subprocess.run(["ip", "addr", "add", f"{BRIDGE_NET}.1/24", "dev", BRIDGE], check=True)
    subprocess.run(["ip", "link", "set", BRIDGE, "up"], check=True)
    with open(f"{d}/daemon.json", "w") as f:
        json.dump({}, f)
    log = open(f"{d}/log", "wb")
    proc = subprocess.Popen([DOCKERD, "--data-root", f"{d}/data", "--exec-root", f"{d}/exec",
                             "--pidfile", f"{d}/pid", "-H", f"unix://{sock}", "--bridge", BRIDGE,
                             "--iptables=false", "--ip6tables=false", "--storage-driver=vfs",
                             "--config-file", f"{d}/daemon.json"], stdout=log, stderr=log)
    docker = lambda *args, **kw: subprocess.run([DOCKER, "-H", f"unix://{sock}", *args],
                                                capture_output=True, timeout=60, **kw)
    try:
        wait_until(lambda: docker("version").returncode == 0, "dockerd", proc=proc)
        ref = "nodescope-e2e-meta:test"
        p = docker("import", str(rootfs), ref)
        assert p.returncode == 0, p.stderr
        yield docker, ref, f"{d}/data"
    finally:
        ps = docker("ps", "-aq")
        if ps.returncode == 0 and ps.stdout.split():
            docker("rm", "-f", *ps.stdout.decode().split())
        proc.terminate()
        proc.wait(30)
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


def test_docker_with_its_own_data_root_names_its_container(agent_factory, own_dockerd):
    """dockerd run with --data-root elsewhere: the agent reads its config.v2.json there (the root
    from dockerd's command line) and names the container: its process is counted under
    /docker/<name>, with the image in container_info. (Naming a container from an exec that is
    gone at once is test_containers.py's test_docker_container_named_from_its_first_event's
    business: this container's process lives on for 2 s.)"""
    docker, ref, data = own_dockerd
    name = f"nsmeta-{os.getpid()}"
    cid = f"/docker/{name}"
    a = agent_factory("--events", "proc")
    p = docker("run", "--rm", "--network", "none", "--name", name, ref,
               "/bin/busybox", "sh", "-c", "/bin/busybox true; exec /bin/busybox sleep 2")
    assert p.returncode == 0, p.stderr
    assert os.path.isdir(f"{data}/containers"), "the engine kept its containers there"
    execs = a.wait_for(lambda evs: [e for e in evs if e["type"] == "exec"
                                    and e["args"] == "/bin/busybox sleep 2"], what="the exec of sleep")
    exit_ = a.wait_for(lambda evs: by_pid(evs, execs[-1]["pid"], "exit"), what="its exit")
    assert exit_[-1]["container"] == cid, exit_
    wait_until(lambda: a.metrics().get("container_process_exits_total", {}).get(
        frozenset({"container_id": cid, "status": "success"}.items()), 0) >= 1,
        "the container's exits under its name")
    assert a.metric("container_info", container_id=cid, image=ref,
                    systemd_triggered_by="", systemd_type="") == 1


def host_ipv4_addresses():
    """The IPv4 addresses of this namespace's interfaces that are up (not link-local)."""
    out = subprocess.run(["ip", "-j", "addr"], capture_output=True, text=True, check=True).stdout
    addrs = set()
    for link in json.loads(out):
        if link.get("operstate") == "DOWN":
            continue
        for a in link.get("addr_info", []):
            if a["family"] == "inet" and not a["local"].startswith("169.254."):
                addrs.add(a["local"])
    return addrs


def test_docker_published_ports_are_the_containers_listens(agent_factory, own_dockerd):
    """docker run -p: the container listens, for the server, where Docker publishes it:
    listen_info{proxy="dockerd"} on 127.0.0.1:<port> as bound, a port Docker picks once it is
    picked, and a port published on every address as each IPv4 address of the host; a client of the published port reaches the
    container's server through the engine's proxy."""
    docker, ref, _ = own_dockerd
    name = f"nsmeta-web-{os.getpid()}"
    lo_port, any_port = free_tcp_port(), free_tcp_port()
    a = agent_factory("--events", "proc")
    p = docker("run", "-d", "--name", name, "-p", f"127.0.0.1:{lo_port}:80", "-p", f"{any_port}:81",
               "-p", "127.0.0.1::82", ref, "/bin/busybox", "sh", "-c",
               "/bin/busybox httpd -p 80 -h /bin & exec /bin/busybox httpd -f -p 81 -h /bin")
    assert p.returncode == 0, p.stderr
    cid = f"/docker/{name}"
    try:
        # 82 is published on a port Docker picks as it starts the container, after its first exec
        # named it: known from its state once it runs.
        picked = docker("port", name, "82/tcp").stdout.decode().split()[0]
        assert picked.startswith("127.0.0.1:"), picked
        want = {f"127.0.0.1:{lo_port}", picked} | {f"{ip}:{any_port}" for ip in host_ipv4_addresses()}
        assert f"127.0.0.1:{any_port}" in want

        def proxied(m):
            got = {dict(k)["listen_addr"] for k in m.get("container_net_tcp_listen_info", {})
                   if dict(k)["container_id"] == cid and dict(k)["proxy"] == "dockerd"}
            return got if want <= got else None
        got = wait_until(lambda: proxied(a.metrics()), "the published ports as listens")
        # Only the host's IPv4 addresses and the ports published: nothing else.
        ports = (str(lo_port), str(any_port), picked.rsplit(":", 1)[1])
        assert all(x.rsplit(":", 1)[1] in ports for x in got), got
        assert {x for x in got if x.endswith(f":{lo_port}")} == {f"127.0.0.1:{lo_port}"}, got
        # The ports do lead to the container.
        with socket.create_connection(("127.0.0.1", lo_port), timeout=10) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            assert s.recv(64).startswith(b"HTTP/1."), "the container's httpd answers"
    finally:
        docker("rm", "-f", name)
    # Gone with the container's processes.
    wait_until(lambda: not any(dict(k)["container_id"] == cid and dict(k)["proxy"] == "dockerd"
                               for k in a.metrics().get("container_net_tcp_listen_info", {})),
               "the container's listens gone")
