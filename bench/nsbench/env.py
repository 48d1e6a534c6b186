"""The machine and the software a report's header names."""

import datetime
import os
import platform
import shlex
import subprocess

from .cli import progress
from .procfs import read_text


def dpkg_version(pkg):
    """The installed version of a Debian package, or None."""
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Status} ${Version}", pkg],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        text = r.stdout.decode().strip()
        if r.returncode == 0 and text.startswith("install ok installed "):
            return text.split()[-1]
    except OSError:
        pass
    return None


def cmd_output(argv, first_line=True, cwd=None, timeout=10, default="?"):
    """A command's output (its first line, stripped, by default) whatever its exit status
    (wrk -v exits 1), or `default` if it cannot run or prints nothing."""
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, cwd=cwd)
        text = r.stdout.decode("utf-8", "replace").strip()
        return text.splitlines()[0].strip() if first_line else text
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return default


def cpu_model():
    try:
        for line in read_text("/proc/cpuinfo").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def mem_gib():
    try:
        for line in read_text("/proc/meminfo").splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "?"


def apt_install(pkgs):
    """apt-get install -y PKGS (apt-get update first only if the plain install fails, e.g. for
    lack of package lists). Returns None on success, else the last lines of apt's output."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    argv = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + pkgs
    progress(f"installing {' '.join(pkgs)}: {shlex.join(argv)}")
    out = ""
    for attempt in range(2):
        if attempt:
            progress("apt-get install failed; running apt-get update and trying again")
            try:
                subprocess.run(["apt-get", "update", "-qq"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=env, timeout=300)
            except (OSError, subprocess.TimeoutExpired) as e:
                return f"apt-get update: {e}"
        try:
            r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                               timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            return str(e)
        if r.returncode == 0:
            return None
        out = r.stdout.decode("utf-8", "replace").strip()
    return " / ".join(out.splitlines()[-3:]) or "apt-get failed"


def report_head(title, agent, servers, base=None):
    """The lines a report starts with: the date, the machine, agent (the nodescope build's
    --version and sha256 prefix), base (the same of the --base-agent, and its path) and the
    versions of the Debian packages named in servers."""
    version, sha = agent
    return [title, "",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"- machine: {os.cpu_count()} CPUs, {cpu_model()}, {mem_gib()} RAM; kernel {os.uname().release}",
            f"- nodescope: `{version}` (sha256 {sha}…)",
            *([f"- base agent (nodescope-base): `{base[0]}` ({base[2]}, sha256 {base[1]}…)"]
              if base else []),
            "- " + ", ".join(f"{s} {dpkg_version(s) or '?'}" for s in servers)]
