"""BPF run-time statistics (kernel.bpf_stats_enabled): what a process's BPF programs cost the
processes they run in."""
import json
import os
import re
import subprocess
from pathlib import Path

from nsbench.cli import warn
from nsbench.fmt import fmt, med


def bpf_prog_stats(pid):
    """run_time_ns and run_cnt of pid's BPF programs (the fdinfo of its program fds), by
    program name (from bpftool's JSON)."""
    progs = {}
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return {}
    for fd in fds:
        try:
            info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
        except OSError:
            continue
        f = dict(re.findall(r"^(\w+):\s*(\S+)", info, re.M))
        if "prog_id" in f and "run_cnt" in f:
            progs[int(f["prog_id"])] = (int(f["run_time_ns"]), int(f["run_cnt"]))
    try:
        out = subprocess.run(["bpftool", "-j", "prog", "show"], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=30).stdout
        names = {p["id"]: p.get("name", "?") for p in json.loads(out or b"[]")}
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        warn(f"bpftool prog show: {e}")
        names = {}
    res = {}
    for pid_, (t, n) in progs.items():
        name = names.get(pid_, f"id {pid_}")
        t0, n0 = res.get(name, (0, 0))
        res[name] = (t0 + t, n0 + n)
    return res


def set_bpf_stats(on):
    """Sets kernel.bpf_stats_enabled; returns its previous value (None if it cannot)."""
    path = "/proc/sys/kernel/bpf_stats_enabled"
    try:
        old = Path(path).read_text().strip()
        Path(path).write_text("1" if on else "0")
        return old
    except OSError as e:
        warn(f"cannot set {path}: {e}")
        return None


def bpf_delta(before, after):
    """What each program ran between two bpf_prog_stats: {name: (run_time_ns, run_cnt)}."""
    return {k: (t - before.get(k, (0, 0))[0], n - before.get(k, (0, 0))[1]) for k, (t, n) in after.items()}


def bpf_per_unit(runs):
    """runs: (bpf_delta, units) of each run, units the requests or queries it served. The medians:
    (BPF µs per unit, {program: (ns per run, runs per unit)})."""
    runs = [(d, u) for d, u in runs if u]
    if not runs:
        return None, {}
    us = med([sum(t for t, _ in d.values()) / u / 1000.0 for d, u in runs])
    names = sorted({k for d, _ in runs for k in d})
    progs = {k: (med([d[k][0] / d[k][1] for d, _ in runs if d.get(k, (0, 0))[1]]),
                 med([d[k][1] / u for d, u in runs if k in d]))
             for k in names}
    return us, progs


def format_progs(progs):
    """"name: ns × runs; ..." for a table cell, the costliest program first."""
    rows = sorted(((k, v) for k, v in progs.items() if v[1]), key=lambda kv: -(kv[1][0] or 0) * (kv[1][1] or 0))
    return "; ".join(f"{k}: {fmt(ns, '.0f')} × {fmt(n, '.2f')}" for k, (ns, n) in rows
                     if ns is not None and n is not None and n >= 0.01)
