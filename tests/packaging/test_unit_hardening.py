"""The systemd unit's hardening: systemd rates it (`systemd-analyze security --offline`, the
exposure README "Packages" states, at most EXPOSURE here), and the agent runs fully with exactly
the unit's privileges. PID 1 need not be systemd here, so the agent is started by setpriv with the
unit's capability bounding set and no_new_privs, its file limit and umask (as root: its
capabilities are then exactly that set), and it loads its BPF programs, lists a process started
after it and counts a TCP connection; its log has no complaint about privileges that the agent run
as full root does not also have.

Run by `make test-packaging` (in `make check`); as root.
"""
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ports import free_port  # noqa: E402  (tests/ports.py)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("NODESCOPE_BUILD", os.path.join(ROOT, "build"))
# Another unit (one with a capability or a protection taken out) shows this test failing.
UNIT = os.environ.get("NODESCOPE_UNIT", os.path.join(ROOT, "packaging", "nodescope.service"))
AGENT = os.path.join(BUILD, "nodescope")
# README "Packages" states 3.5; systemd's own scale is 0 (safe) to 10 (unsafe), 10 times this.
EXPOSURE = 3.5
PRIVILEGE_COMPLAINT = re.compile(r"Permission denied|Operation not permitted|privilege|CAP_")


def unit_settings(path):
    """The [Service] section's settings, each a list of its values in order."""
    out, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line
            elif section == "[Service]":
                k, _, v = line.partition("=")
                out.setdefault(k, []).append(v)
    return out


def cap_numbers():
    """Capability names to numbers, as libcap knows them (capsh lists a mask's names in bit order)."""
    r = subprocess.run(["capsh", "--decode=0xffffffffff"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    names = r.stdout.strip().split("=", 1)[1].split(",")
    return {n.upper(): i for i, n in enumerate(names) if n.startswith("cap_")}


def start(argv_prefix, preexec=None):
    """The agent under argv_prefix; returns (process, port, its stderr lines, ready event)."""
    port = free_port()
    p = subprocess.Popen(argv_prefix + [AGENT, "run", "--listen", f"127.0.0.1:{port}",
                                        "--keep-standalone-processes", "--ephemeral-port-range", ""],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         preexec_fn=preexec)
    lines, ready = [], threading.Event()

    def read():
        for line in p.stderr:
            lines.append(line.rstrip("\n"))
            if line.rstrip().endswith(" nodescope: ready"):
                ready.set()
        ready.set()  # exited

    p.reader = threading.Thread(target=read, daemon=True)
    p.reader.start()
    ready.wait(120)
    assert p.poll() is None, "\n".join(lines)
    return p, port, lines


def stop(p):
    """SIGTERM; its exit code, once every line it wrote has been read."""
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    p.reader.join(60)
    return rc


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
        return r.read().decode()


def test_unit_hardening_rated():
    r = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager",
                        f"--threshold={int(EXPOSURE * 10)}", UNIT], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d)", r.stdout)
    assert m and float(m.group(1)) <= EXPOSURE, r.stdout[-500:]


def test_agent_runs_with_the_units_privileges():
    s = unit_settings(UNIT)
    caps = " ".join(s["CapabilityBoundingSet"]).split()
    assert caps and all(c.startswith("CAP_") for c in caps), caps
    assert s.get("NoNewPrivileges") == ["yes"]
    numbers = cap_numbers()
    # Less any capability this test has not itself (a sandbox may lack CAP_SYS_RESOURCE).
    with open("/proc/self/status") as f:
        own = int(next(l for l in f if l.startswith("CapBnd:")).split()[1], 16)
    want = sum(1 << numbers[c] for c in caps) & own
    nofile = int(s["LimitNOFILE"][-1])
    umask = int(s.get("UMask", ["0022"])[-1], 8)

    def as_the_unit():
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        n = nofile if hard == resource.RLIM_INFINITY else min(nofile, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
        os.umask(umask)

    bounding = "-all," + ",".join("+" + c[4:].lower() for c in caps)
    setpriv = ["setpriv", "--bounding-set", bounding, "--inh-caps", "-all", "--ambient-caps",
               "-all", "--no-new-privs"]
    # The same agent as full root first: what it says about privileges whatever its set.
    p, port, root_lines = start([])
    assert stop(p) == 0, "\n".join(root_lines)
    strip = lambda ls: {l.split(" ", 1)[1] for l in ls if PRIVILEGE_COMPLAINT.search(l)}

    p, port, lines = start(setpriv, as_the_unit)
    sleeper = server = client = None
    try:
        with open(f"/proc/{p.pid}/status") as f:
            status = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
        assert int(status["CapEff"], 16) == want, (status["CapEff"], hex(want))
        assert int(status["CapBnd"], 16) == want, (status["CapBnd"], hex(want))
        assert status["NoNewPrivs"].strip() == "1"
        # A process and a TCP connection, both after the agent is ready.
        sleeper = subprocess.Popen(["sleep", "300"])
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        dport = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", dport))
        server.accept()[0].close()
        for _ in range(600):  # its events may still be on their way
            procs = get(port, "/api/processes")
            text = get(port, "/metrics")
            connects = re.search(r'^container_net_tcp_successful_connects_total\{[^}]*'
                                 rf'destination="127\.0\.0\.1:{dport}"[^}}]*\}} (\d+)', text, re.M)
            if f'"pid":{sleeper.pid},' in procs.replace(" ", "") and connects:
                break
            threading.Event().wait(0.1)
        else:
            raise AssertionError(f"the process {sleeper.pid} or the connection to port {dport} "
                                 f"never reported:\n" + "\n".join(lines))
        assert int(connects.group(1)) >= 1
    finally:
        for x in (client, server):
            if x:
                x.close()
        if sleeper:
            sleeper.kill()
            sleeper.wait()
        rc = stop(p)
    assert rc == 0, "\n".join(lines)
    assert not [l for l in lines if " error " in l], "\n".join(lines)
    # Nothing it could not do with the unit's set that it could as root.
    assert strip(lines) <= strip(root_lines), "\n".join(strip(lines) - strip(root_lines))
