"""What the rate-step benchmarks (bench/exec, bench/tcp) share: their rate lists, the agent run
from a copy, one config's agent started and ready, medians over repeats and the highest step
with no loss."""

import argparse
import hashlib
import shlex
import shutil
import time
from pathlib import Path

from .cli import die
from .env import cmd_output
from .fmt import fmt, med


def rate_label(r):
    return "max" if r == 0 else str(r)


def parse_rates(text, unit):
    """Ascending rates, 'max' (0) last, no duplicates; `unit` names them in errors (execs/s)."""
    rates = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        if part == "max":
            rates.append(0)
            continue
        try:
            v = int(float(part.rstrip("k")) * (1000 if part.endswith("k") else 1))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a rate: {part!r} (a number of {unit} or 'max')")
        if v <= 0:
            raise argparse.ArgumentTypeError(f"rate must be > 0 or 'max': {part!r}")
        rates.append(v)
    if not rates:
        raise argparse.ArgumentTypeError("no rates given")
    out = sorted(set(r for r in rates if r > 0))
    if 0 in rates:
        out.append(0)
    return out


def parse_only(text, order):
    """The configs of a comma-separated list, in `order`'s order."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in order]
    if bad:
        raise argparse.ArgumentTypeError(
            f"unknown config {', '.join(bad)}; choose from {', '.join(order)}")
    if not names:
        raise argparse.ArgumentTypeError("no configs given")
    return [n for n in order if n in names]


def rotated(configs, rnd):
    """The configs in round rnd's order: each round starts one further on, so no config
    always runs first or right after the same other."""
    k = rnd % len(configs)
    return configs[k:] + configs[:k]


def copy_agent(path, tmp, subdir=None):
    """Run a copy, so a rebuild of build/ during the run cannot swap or remove the binary
    between configs: (the copy's path, its --version, its sha256 prefix). subdir: a directory
    of tmp to copy into, made here (a second build, the --base-agent, keeps the same name)."""
    if subdir:
        tmp = Path(tmp) / subdir
        tmp.mkdir()
    copy = Path(tmp) / "nodescope"
    try:
        shutil.copy2(path, copy)
    except OSError as e:
        die(f"cannot copy the agent {path}: {e}")
    version = cmd_output([str(copy), "--version"])
    with open(copy, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()[:12]
    return copy, version, sha


def start_ready(name, kind, argv_for, spawn, free_port, settle_s, shown_agent):
    """Starts a config's agent and waits until it is ready and settled.

    argv_for(port) gives the argv (port is None but for nodescope, which gets a fresh
    /metrics port from free_port()); spawn(argv, port) starts it. Returns (agent, argv as
    shown, error): nodescope is shown with shown_agent, the path the user gave, though a
    copy of it runs. Exit status 6 (nodescope could not listen: the port was taken
    meanwhile) is retried with another port."""
    shown = None
    for attempt in range(3):
        port = free_port() if kind == "nodescope" else None
        argv = argv_for(port)
        shown = [str(shown_agent)] + argv[1:] if kind == "nodescope" else argv
        try:
            agent = spawn(argv, port)
        except OSError as e:
            return None, shown, f"cannot start {shlex.join(argv)}: {e}"
        err = agent.wait_ready()
        if err is None:
            break
        agent.stop()
        if kind == "nodescope" and agent.proc.returncode == 6 and attempt < 2:
            continue
        return None, shown, err
    time.sleep(settle_s)
    if agent.proc.poll() is not None:
        return None, shown, agent.exited_msg() + "\n(it exited during the settle period after ready)"
    return agent, shown, None


def aggregate(configs, rates, all_results, fields):
    """Medians over repeats of `fields`, per (config, rate), with n, lost_all (every repeat's
    loss) and extra (name -> [value per repeat]); the runs themselves under "_runs"."""
    agg = {}
    for c in configs:
        for rate in rates:
            runs = [r[rate] for r in all_results[c] if rate in r]
            if not runs:
                continue
            a = {f: med([r.get(f) for r in runs]) for f in fields}
            a["n"] = len(runs)
            a["lost_all"] = [r.get("lost") for r in runs]
            a["extra"] = {}
            for r in runs:
                for k, v in r.get("extra", {}).items():
                    a["extra"].setdefault(k, []).append(v)
            agg[(c, rate)] = a
    return agg


def loss_free_steps(ns_configs, rates, agg):
    """Per config: (highest step with no loss in any repeat, first lossy step); None if none."""
    out = {}
    for c in ns_configs:
        best, first_bad = None, None
        for rate in rates:
            a = agg.get((c, rate))
            if a is None:
                continue
            if all(v == 0 for v in a["lost_all"]):
                if first_bad is None:
                    best = rate
            elif first_bad is None:
                first_bad = rate
        out[c] = (best, first_bad)
    return out


def loss_free_table(ns_configs, loss_free, agg, repeat, unit):
    """The Markdown lines of the highest loss-free step per config (unit: exec/s, conn/s)."""
    out = ["", "Highest rate step at which nodescope lost no events "
           + ("(lost = 0 in every repeat):" if repeat > 1 else "(lost = 0):"), "",
           f"| config | highest loss-free step | achieved {unit} there | first lossy step | lost there |",
           "|---|---|---:|---|---:|"]
    for c in ns_configs:
        best, first_bad = loss_free[c]
        if best is None and first_bad is None:
            out.append(f"| {c} | not run | | | |")
            continue
        out.append(
            f"| {c} | {rate_label(best) if best is not None else 'none (lost at the first step)'} "
            f"| {fmt(agg[(c, best)]['achieved'], '.0f') if best is not None else '—'} "
            f"| {rate_label(first_bad) if first_bad is not None else 'none'} "
            f"| {fmt(agg[(c, first_bad)]['lost'], '.0f') if first_bad is not None else '—'} |")
    return out


def loss_free_json(loss_free, agg):
    return {c: {"highest": rate_label(b) if b is not None else None,
                "achieved": agg[(c, b)]["achieved"] if b is not None else None,
                "first_lossy": rate_label(f) if f is not None else None,
                "lost_there": agg[(c, f)]["lost"] if f is not None else None}
            for c, (b, f) in loss_free.items()}
