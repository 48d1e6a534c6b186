"""The running script's name and how it talks: progress and warnings on stderr, die on fatal errors."""

import sys

PROG = "bench"


def set_prog(name):
    """Name the messages of this process (e.g. "bench/exec")."""
    global PROG
    PROG = name


def die(msg, code=1):
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    sys.exit(code)


def warn(msg):
    print(f"{PROG}: warning: {msg}", file=sys.stderr, flush=True)


def progress(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)
