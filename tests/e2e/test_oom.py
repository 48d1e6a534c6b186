"""An OOM kill in a memory-limited cgroup is reported in trace and counted per container."""
import os
import subprocess

import pytest

CG = "nodescope-e2e-oom"
HIERARCHIES = ["memory", "cpu"]  # a container has the same path in each v1 hierarchy


@pytest.fixture
def memcg():
    base = "/sys/fs/cgroup/memory"
    if not os.path.isdir(base):
        pytest.fail("this test needs the cgroup v1 memory hierarchy at /sys/fs/cgroup/memory")
    dirs = []
    for h in HIERARCHIES:
        d = f"/sys/fs/cgroup/{h}/{CG}"
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
    with open(f"{base}/{CG}/memory.limit_in_bytes", "w") as f:
        f.write(str(48 << 20))
    yield dirs
    for d in dirs:
        for _ in range(50):
            try:
                os.rmdir(d)
                break
            except OSError:
                import time
                time.sleep(0.1)


def test_oom_kill_reported_and_counted(agent_factory, memcg):
    agent = agent_factory("--events", "proc")
    join = " ".join(f"echo $$ > {d}/cgroup.procs;" for d in memcg)
    hog = "s=[]\nwhile True: s.append(b'x' * (1 << 20))\n"
    p = subprocess.Popen(["/bin/sh", "-c", f"{join} exec /usr/bin/python3 -c \"{hog}\""])
    p.wait(60)
    assert p.returncode == -9, "the memory hog should have been OOM-killed"

    oom = agent.wait_for(
        lambda evs: next((e for e in evs if e["type"] == "oom_kill" and e["pid"] == p.pid), None),
        what="oom_kill event")
    assert oom["container"] == f"/{CG}"
    ex = agent.wait_for(
        lambda evs: next((e for e in evs if e["type"] == "exit" and e["pid"] == p.pid), None),
        what="exit of the OOM-killed process")
    assert ex["signal"] == 9
    assert agent.metric("container_oom_kills_total", container_id=f"/{CG}") == 1
    assert agent.metric("container_process_exits_total", container_id=f"/{CG}",
                        status="signal") == 1
