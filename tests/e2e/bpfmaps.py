"""The agent's BPF maps as bpftool shows them: found by the map ids in the agent's fds."""
import json
import os
import subprocess


def agent_maps(agent, name):
    """The agent's BPF maps of this name (by the map ids in its fds' fdinfo)."""
    ids = set()
    for fd in os.listdir(f"/proc/{agent.proc.pid}/fdinfo"):
        try:
            with open(f"/proc/{agent.proc.pid}/fdinfo/{fd}") as f:
                ids |= {int(l.split()[1]) for l in f if l.startswith("map_id:")}
        except OSError:
            pass
    maps = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True,
                                     check=True).stdout)
    return [m for m in maps if m.get("name") == name and m["id"] in ids]


def map_keys(map_id):
    """Every key of the map, as a little-endian integer."""
    dump = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "id", str(map_id)],
                                     capture_output=True, text=True, check=True).stdout)
    return {int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little") for e in dump}
