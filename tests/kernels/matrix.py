#!/usr/bin/env python3
"""The kernel matrix (`make test-kernels`, and `make check-arm64` for arm64): the smoke suite
(smoke.py) on this machine, then inside each kernel of tests/kernels/ARCH.list booted under qemu
(scripts/vm-run.sh), each run's summary compared with this machine's. For an ARCH this machine is
not (arm64 here) there is no host run: the reference is the suite's own verdict, every check
passing (smoke.py's ALL_CHECKS, as a host run that passes has them); the VMs' root is then
--root, a userland of ARCH from scripts/vm/rootfs.sh, and --vm-smoke-arg names the agent and Go
client built for ARCH. Every VM gets this checkout shared read-only at its own path. A check
"off" (not run for want of a kernel feature: smoke.py's NEEDS) is accepted only on a kernel whose
list column lacks that feature; where the reference is "off" (this machine lacks the feature, as
a kernel with IA32 emulation off does), a kernel with it must pass the check. A kernel fails when
any check differs from the reference, when its features differ from the list's column, or when
its VM does not run the suite to the end; a kernel marked load-failure must fail exactly there
(the agent exits 5), and the matrix prints what did not load. Results: build/kernels/run/ARCH/NAME/
(summary.json, console.log, agent.stderr, agent.events.jsonl, agent.metrics).

Usage: matrix.py [--arch ARCH] [--root DIR] [--jobs N] [--cpus N] [--timeout S] [--run-dir DIR]
                 [--vm-smoke-arg ARG]... [NAME...]
(NAMEs: the kernels to run, default all)
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(ROOT, "build", "kernels")
SMOKE = os.path.join(ROOT, "tests", "kernels", "smoke.py")
FETCH = os.path.join(ROOT, "scripts", "fetch-kernels.sh")
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(SMOKE))
from smoke import ALL_CHECKS, NEEDS  # noqa: E402


def read_list(arch):
    rows = []
    with open(os.path.join(ROOT, "tests", "kernels", f"{arch}.list")) as f:
        for line in f:
            if line.startswith("#") or len(line.split()) < 6:
                continue
            name, suite, version, expect, features, packages = line.split()[:6]
            if expect not in ("pass", "load-failure"):
                sys.exit(f"matrix: {arch}.list: {name}: expect must be pass or load-failure")
            rows.append({"name": name, "suite": suite, "version": version, "expect": expect,
                         "features": set() if features == "-" else set(features.split(","))})
    return rows


def run_vm(k, a, run_dir):
    """Extracts kernel k and boots it with the smoke suite; returns (vm-run's exit code, or
    "fetch" when the kernel could not be extracted; seconds, extracting included)."""
    out = os.path.join(run_dir, k["name"])
    os.makedirs(out)
    t = time.monotonic()
    with open(os.path.join(out, "fetch.stderr"), "wb") as err:
        if subprocess.run([FETCH, a.arch, k["name"]], stdin=subprocess.DEVNULL, stderr=err).returncode:
            return "fetch", time.monotonic() - t
    # The checkout (agent, Go client, suite) is shared read-only on its own: another
    # architecture's root lacks it, and on this machine's root it would sit in the VM's overlay
    # of a 9p lower and a tmpfs upper, where a program's /proc/PID/exe names the overlay's
    # device but the kernel's exec event the layer's, so a program run from there is never
    # opened for TLS probes (counted as file_gone).
    checkout = ["--share-ro", ROOT]
    with open(os.path.join(out, "vm-run.stderr"), "wb") as err:
        rc = subprocess.run([os.path.join(ROOT, "scripts", "vm-run.sh"), "--arch", a.arch,
                             "--root", a.root, *checkout, "--quiet", "--cpus", str(a.cpus),
                             "--timeout", str(a.timeout), "--log", os.path.join(out, "console.log"),
                             "--share", out, os.path.join(KERNELS, a.arch, k["name"]), "--",
                             "python3", SMOKE, "--out", os.path.join(out, "summary.json"),
                             *a.vm_smoke_args],
                            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=err).returncode
    return rc, time.monotonic() - t


def load_summary(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def what_failed_to_load(out):
    """The agent's own error lines and libbpf's lines naming a program, from its stderr."""
    try:
        with open(os.path.join(out, "agent.stderr"), errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ["(no agent.stderr)"]
    keep = [l for l in lines if " nodescope: " in l or
            (" libbpf: " in l and ("prog '" in l or "failed" in l or "map '" in l))]
    return keep[:40] or lines[-20:] or ["(agent.stderr is empty)"]


def judge(k, rc, summary, ref, out):
    """(verdict, [reasons]): verdict is ok, expected-failure or FAIL."""
    if rc == "fetch":
        return "FAIL", ["cannot extract the kernel:"] + tail(os.path.join(out, "fetch.stderr"), 20)
    if summary is None:
        return "FAIL", [f"no summary: vm-run exit {rc}; see {out}/vm-run.stderr, console.log"] + \
            tail(os.path.join(out, "vm-run.stderr"), 30)
    reasons = []
    have = {f for f, v in summary["kernel_features"].items() if v}
    if have != k["features"]:
        reasons.append(f"kernel features {','.join(sorted(have)) or '-'}, the list says "
                       f"{','.join(sorted(k['features'])) or '-'}")
    # "off": a check not run for want of a kernel feature (TLS probing turned off by the agent
    # without attach cookies, a 32-bit program refused without IA32 emulation): right only where
    # the kernel lacks it, and where the reference lacks it the check is judged as it passes.
    def lacks(c):
        return c in NEEDS and NEEDS[c] not in k["features"]

    diff = [f"{c}: {summary['checks'].get(c)} here, {v} {ref['name']}"
            + (f" (the list says this kernel has {NEEDS[c]}: it must pass)" if v == "off" else "")
            for c, v in sorted(ref["checks"].items())
            if summary["checks"].get(c) != (True if v == "off" else v) and
            not (summary["checks"].get(c) == "off" and lacks(c))]
    diff += [f"{c}: not checked {ref['name']}" for c in summary["checks"] if c not in ref["checks"]]
    reported = summary["agent_features"].get("reported")
    if isinstance(reported, dict):
        for f, on in sorted(reported.items()):
            if f in summary["kernel_features"] and on != summary["kernel_features"][f]:
                reasons.append(f"agent reports {f}={on}, the kernel has {f}="
                               f"{summary['kernel_features'][f]}")
    loads = summary["checks"].get("agent.loads_and_attaches")
    if k["expect"] == "load-failure":
        if loads:
            reasons.append("the agent loads here now: change expect to pass in the list")
        elif summary["info"].get("agent_exit") != 5:
            reasons.append(f"the agent failed to start with exit {summary['info'].get('agent_exit')}"
                           ", not 5 (a program failed to load or attach)")
        return ("FAIL", reasons) if reasons else ("expected-failure", [])
    reasons += diff
    if not reasons and rc != 0:
        reasons.append(f"vm-run exit {rc}")
    return ("FAIL", reasons) if reasons else ("ok", [])


def tail(path, n):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-n:]
    except OSError:
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="amd64")
    ap.add_argument("--root", default="/", help="the VMs' root filesystem (a userland of ARCH)")
    ap.add_argument("--jobs", type=int, default=2, help="VMs at a time")
    # Two CPUs a VM (on one host thread, scripts/vm-run.sh): how the preemptible 7.2 kernel showed
    # a preempted program's per-CPU l7 record overwritten by another task's (docs/ARCHITECTURE.md,
    # "Preemptible kernels"), an HTTPS client's plaintext lost in about 3 runs of 20; 0 of 12 since
    # each run takes a record of its own.
    ap.add_argument("--cpus", type=int, default=2, help="CPUs of each VM")
    ap.add_argument("--timeout", type=int, default=420, help="seconds a VM may take")
    ap.add_argument("--run-dir", help="where results go (default build/kernels/run/ARCH)")
    # (tests/kernels/test_vm_run.sh also makes the suite fail in the VMs with it.)
    ap.add_argument("--vm-smoke-arg", dest="vm_smoke_args", action="append", default=[],
                    metavar="ARG", help="an argument for the VMs' smoke suite only (repeatable; "
                    "as --vm-smoke-arg=--agent=build-arm64/nodescope)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    t0 = time.monotonic()
    rows = [k for k in read_list(a.arch) if not a.names or k["name"] in a.names]
    missing = set(a.names) - {k["name"] for k in rows}
    if missing:
        sys.exit(f"matrix: not in tests/kernels/{a.arch}.list: {' '.join(sorted(missing))}")

    # Downloads first (apt runs one at a time); each kernel is extracted by its own VM job, so
    # extracting one overlaps another's VM.
    t = time.monotonic()
    subprocess.run([FETCH, "--download-only", a.arch, *[k["name"] for k in rows]], check=True)
    download_s = time.monotonic() - t

    run_dir = a.run_dir or os.path.join(KERNELS, "run", a.arch)
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    host_arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                               text=True).stdout.strip()
    if a.arch == host_arch:
        # The reference: this machine's kernel. Run alone, before the VMs load both cores.
        os.makedirs(os.path.join(run_dir, "host"))
        t = time.monotonic()
        r = subprocess.run([sys.executable, SMOKE, "--out", os.path.join(run_dir, "host",
                                                                         "summary.json")], cwd=ROOT)
        host_s = time.monotonic() - t
        host = load_summary(os.path.join(run_dir, "host", "summary.json"))
        if r.returncode != 0 or host is None:
            sys.exit(f"matrix: the smoke suite fails on this machine itself (exit {r.returncode}); "
                     f"see {run_dir}/host/")
        ref = {"name": "on the host", "checks": host["checks"]}
        ref_line = f"host {host['info']['kernel']} in {host_s:.0f} s"
    else:
        # No host of this architecture: each check as the suite passes it.
        ref = {"name": "in a passing run", "checks": {c: True for c in ALL_CHECKS}}
        ref_line = f"no {a.arch} host: every check must pass"
        if not os.path.isfile(os.path.join(a.root, "usr", "bin", "python3")):
            sys.exit(f"matrix: {a.root} is no {a.arch} userland with python3 "
                     f"(--root; scripts/vm/rootfs.sh {a.arch} DIR builds one)")

    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        runs = {k["name"]: pool.submit(run_vm, k, a, run_dir) for k in rows}
        results = {n: f.result() for n, f in runs.items()}

    failed = 0
    print(f"\nkernel matrix ({a.arch}): {ref_line}; "
          f"download {download_s:.0f} s; {a.jobs} VM(s) at a time, {a.cpus} CPU(s) each")
    print(f"{'kernel':8} {'version':28} {'uprobes':13} {'hooks':8} {'s':>5} {'result':17} features")
    for k in rows:
        out = os.path.join(run_dir, k["name"])
        rc, secs = results[k["name"]]
        s = load_summary(os.path.join(out, "summary.json"))
        verdict, reasons = judge(k, rc, s, ref, out)
        failed += verdict == "FAIL"
        kver = s["info"]["kernel"] if s else "?"
        path = s["agent_features"].get("uprobe_path", "-") if s else "?"
        hooks = s["agent_features"].get("hooks", "-") if s else "?"
        print(f"{k['name']:8} {kver:28} {path:13} {hooks:8} {secs:5.0f} {verdict:17} "
              f"{','.join(sorted(k['features'])) or '-'}")
        for line in reasons:
            print(f"    {line}")
        # What the agent said on this kernel (its start-up line on features turned off, once
        # it has one), unless it only failed to load, which is printed below.
        if s and s["checks"].get("agent.loads_and_attaches"):
            said = [l for l in tail(os.path.join(out, "agent.stderr"), 100)
                    if " nodescope: serving " not in l]
            for line in said[:20]:
                print(f"    agent: {line}")
        if verdict == "expected-failure" or (verdict == "FAIL" and s and
                                             not s["checks"].get("agent.loads_and_attaches")):
            print(f"    what did not load ({out}/agent.stderr):")
            for line in what_failed_to_load(out):
                print(f"      {line}")
    print(f"kernel matrix: {len(rows) - failed}/{len(rows)} kernels as expected, "
          f"{time.monotonic() - t0:.0f} s in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
