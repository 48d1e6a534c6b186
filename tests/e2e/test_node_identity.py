"""Node identity (issue: Coroot drop-in): machine_id and system_uuid on every series, node_agent_info.

The Coroot server keys a node by these two labels; a series without them belongs to no node.
"""
import os


def expected_identity():
    machine_id = ""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            with open(path) as f:
                machine_id = f.read().strip()
        except OSError:
            continue
        if machine_id:
            break
    try:
        with open("/sys/devices/virtual/dmi/id/product_uuid") as f:
            uuid = f.read().strip()
    except OSError:
        uuid = ""
    return machine_id or uuid.replace("-", ""), uuid


def test_every_series_carries_the_node_identity(agent_factory):
    a = agent_factory("--events", "proc")
    machine_id, uuid = expected_identity()
    assert machine_id, "this machine has no machine id to check against"
    metrics = a.metrics(keep_node_labels=True)
    series = [(name, dict(k)) for name, fam in metrics.items() for k in fam]
    assert len(series) > 20, series
    for name, labels in series:
        assert labels.get("machine_id") == machine_id, (name, labels)
        assert labels.get("system_uuid") == uuid, (name, labels)
    info = [dict(k) for k in metrics["node_agent_info"]]
    assert len(info) == 1 and info[0]["version"], info
