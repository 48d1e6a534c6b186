"""The one way a test waits for a condition (e2e, packaging): asked again every 0.2 s until it
holds or the deadline passes, so nothing is asserted before it is due and nothing waits forever.
Standard library only."""

import time


def wait_until(pred, what, timeout=30, proc=None, detail=None):
    """pred() until it is truthy; returns that value. Fails naming what at the deadline, or at
    once when proc (a Popen the condition needs) has exited; detail() is added to the failure
    (an agent's stderr, say)."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        more = f"\n{detail()}" if detail else ""
        assert proc is None or proc.poll() is None, f"{what}: {proc.args[0]} exited{more}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}{more}"
        time.sleep(0.2)
