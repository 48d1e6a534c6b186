"""What /proc says about a process, its threads and the machine."""

import os
import time


def read_text(path):
    with open(path) as f:
        return f.read()


def status_fields(text):
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        out[k.strip()] = v.strip()
    return out


def sample(pid):
    """Sum utime+stime (ticks), schedstat ns and context switches over /proc/PID/task/*.

    Keys: ticks, sched_ns, sched_ok (False if a thread had no schedstat), vol and invol
    (voluntary and involuntary context switches), tids (the threads read) and t (when,
    time.monotonic()). ProcessLookupError if the process is gone."""
    s = {"ticks": 0, "sched_ns": 0, "sched_ok": True, "vol": 0, "invol": 0, "tids": set(),
         "t": time.monotonic()}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        raise ProcessLookupError(pid)
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            stat = read_text(f"{base}/stat")
            status = status_fields(read_text(f"{base}/status"))
            try:
                sched = read_text(f"{base}/schedstat")
            except FileNotFoundError:
                sched = None
        except (FileNotFoundError, ProcessLookupError):
            continue  # thread exited between listdir and read
        # comm (field 2) may contain spaces and parentheses: split after the last ')'.
        rest = stat[stat.rindex(")") + 2:].split()
        # rest[0] is field 3 (state); utime is field 14, stime field 15.
        s["ticks"] += int(rest[11]) + int(rest[12])
        s["vol"] += int(status.get("voluntary_ctxt_switches", 0))
        s["invol"] += int(status.get("nonvoluntary_ctxt_switches", 0))
        if sched is None:
            s["sched_ok"] = False
        else:
            s["sched_ns"] += int(sched.split()[0])
        s["tids"].add(tid)
    if not s["tids"]:
        raise ProcessLookupError(pid)
    return s


def bpf_fd_kinds(pid):
    """Counts of BPF-ish fds of a process: used to tell when a tool has attached."""
    kinds = {}
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                t = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if t.startswith("anon_inode:"):
                kinds[t] = kinds.get(t, 0) + 1
    except OSError:
        pass
    return kinds


def other_bpf_processes(exclude):
    """[(pid, programs, cmdline)] of processes holding BPF programs, but those in exclude:
    other tracers' probes add cost to everything a benchmark does."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in exclude:
            continue
        try:
            fds = os.listdir(f"/proc/{d}/fd")
        except OSError:
            continue
        n = 0
        for fd in fds:
            try:
                if os.readlink(f"/proc/{d}/fd/{fd}") == "anon_inode:bpf-prog":
                    n += 1
            except OSError:
                pass
        if n:
            try:
                cmd = read_text(f"/proc/{d}/cmdline").replace("\0", " ").strip()
            except OSError:
                cmd = "?"
            found.append((int(d), n, cmd))
    return found


def ppid_of(pid):
    try:
        stat = read_text(f"/proc/{pid}/stat")
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[1])


def children_of(pid):
    return [int(d) for d in os.listdir("/proc") if d.isdigit() and ppid_of(int(d)) == pid]


def loadavg():
    try:
        return " ".join(read_text("/proc/loadavg").split()[:3])
    except OSError:
        return "?"


def cpu_times():
    """(busy, total) jiffies of all CPUs from /proc/stat (idle and iowait are not busy), or None."""
    try:
        f = [int(x) for x in read_text("/proc/stat").splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    total = sum(f[:8])    # user nice system idle iowait irq softirq steal (guest is in user)
    return total - f[3] - f[4], total


def vm_hwm_mib(pid):
    """Peak RSS (VmHWM) of a process in MiB, or None."""
    try:
        for line in read_text(f"/proc/{pid}/status").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None
