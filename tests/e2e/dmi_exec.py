"""Runs a command with DMI values of the test's making: run under `unshare -m` (a private mount
namespace), it mounts DIR over /sys/class/dmi/id and an empty directory over /sys/hypervisor, and
WORKDIR/hosts over /etc/hosts when the test made one (a name for a stand-in's address), then execs
the command (same pid).

    unshare -m --propagation private python3 dmi_exec.py DIR WORKDIR -- COMMAND...

A machine without DMI has no /sys/class/dmi to mount on: then /sys/class is rebuilt in a tmpfs
under WORKDIR, each of its classes bound back in, with dmi/id from DIR.
"""
import os
import subprocess
import sys


def mount(*argv):
    subprocess.run(["mount", *argv], check=True)


def main():
    dmi, work = sys.argv[1], sys.argv[2]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    if os.path.isdir("/sys/class/dmi/id"):
        mount("--bind", dmi, "/sys/class/dmi/id")
    else:
        top = os.path.join(work, "class")
        os.makedirs(top, exist_ok=True)
        mount("-t", "tmpfs", "tmpfs", top)
        for entry in os.listdir("/sys/class"):
            os.mkdir(os.path.join(top, entry))
            mount("--bind", os.path.join("/sys/class", entry), os.path.join(top, entry))
        os.makedirs(os.path.join(top, "dmi", "id"))
        mount("--bind", dmi, os.path.join(top, "dmi", "id"))
        mount("--rbind", top, "/sys/class")
    if os.path.isdir("/sys/hypervisor"):
        empty = os.path.join(work, "hypervisor")
        os.makedirs(empty, exist_ok=True)
        mount("--bind", empty, "/sys/hypervisor")
    hosts = os.path.join(work, "hosts")
    if os.path.exists(hosts):
        mount("--bind", hosts, "/etc/hosts")
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
