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


def test_zone_on_container_series_when_known(agent_factory):
    """As Coroot: az and region on container series (and ip_to_fqdn) when both are known, never on
    node series."""
    a = agent_factory("--events", "proc", "--availability-zone", "zone-a1", "--region", "region-1")
    assert os.system("true") == 0
    a.wait_for(lambda evs: any(e["type"] == "exit" for e in evs), what="a process")
    metrics = a.metrics()
    container = [dict(k) for name, fam in metrics.items() if name.startswith("container_") for k in fam]
    assert container
    assert all(l.get("az") == "zone-a1" and l.get("region") == "region-1" for l in container), container
    # node_cloud_info's own region label (Coroot's) is the one exception; ip_to_fqdn is in
    # Coroot's container registry (test_cloud_metadata.py has it).
    others = [dict(k) for name, fam in metrics.items()
              if not name.startswith("container_") and name not in ("node_cloud_info", "ip_to_fqdn")
              for k in fam]
    assert not [l for l in others if "az" in l or "region" in l]
    b = agent_factory("--events", "proc", "--region", "region-1")  # one of the two: neither
    assert not [k for name, fam in b.metrics().items() if name != "node_cloud_info" for k in fam
                if "region" in dict(k)]
