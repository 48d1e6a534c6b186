"""ZooKeeper against a real server (Debian's zookeeper, started by the test) with python3-kazoo:
each operation paired with its answer by xid, its status from the error code, counted in Coroot's
container_zookeeper_requests_total and traced with its op and path."""
import pytest

from srv_zookeeper import ZooKeeper


@pytest.fixture
def zookeeper():
    z = ZooKeeper()
    yield z.addr
    z.stop()


def l7(events, **want):
    return [e for e in events if e.get("type") == "l7" and all(e.get(k) == v for k, v in want.items())]


def test_operations_and_failures(agent_factory, zookeeper):
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoNodeError

    agent = agent_factory()
    ev0 = len(agent.snapshot())
    zk = KazooClient(hosts=zookeeper, timeout=10)
    zk.start()
    n = 10
    for i in range(n):
        zk.create(f"/nodescope-{i}", b"secret-value")
    for i in range(n):
        assert zk.get(f"/nodescope-{i}")[0] == b"secret-value"
    with pytest.raises(NoNodeError):
        zk.get("/nowhere")
    for i in range(n):
        zk.delete(f"/nodescope-{i}")
    zk.stop()
    zk.close()

    def mine(evs, **kw):
        return l7(evs[ev0:], proto="zookeeper", dst=zookeeper, dir="out", **kw)
    evs = agent.wait_for(lambda evs: len(mine(evs, op="delete")) >= n and evs, what="the deletes")
    # the statement is the op and its path
    assert sorted(e["statement"] for e in mine(evs, op="create")) == sorted(f"create /nodescope-{i}" for i in range(n))
    assert [e["status"] for e in mine(evs, op="create")] == ["ok"] * n
    gets = mine(evs, op="getData")
    assert sorted((e["statement"], e["status"]) for e in gets) == \
        sorted([(f"getData /nodescope-{i}", "ok") for i in range(n)] + [("getData /nowhere", "failed")])
    assert not any("secret-value" in str(e) for e in evs)
    m = agent.metrics()
    fam = m.get("container_zookeeper_requests_total", {})
    failed = sum(v for k, v in fam.items() if ("destination", zookeeper) in k and ("status", "failed") in k)
    assert failed == 1
    ins = l7(evs[ev0:], proto="zookeeper", dir="in", op="create")
    assert len(ins) == n  # the server's side
