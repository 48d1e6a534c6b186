"""bench/'s shared round order and report header (bench/nsbench/steps.py, env.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from nsbench.env import report_head  # noqa: E402
from nsbench.steps import rotated  # noqa: E402


def test_each_round_starts_one_config_further_on():
    configs = ["none", "nodescope", "floor"]
    assert [rotated(configs, r) for r in range(4)] == [
        ["none", "nodescope", "floor"], ["nodescope", "floor", "none"],
        ["floor", "none", "nodescope"], ["none", "nodescope", "floor"]]
    assert configs == ["none", "nodescope", "floor"]  # not changed in place


def test_report_head_names_the_base_build_only_when_there_is_one():
    head = report_head("# T", ("nodescope abc", "0123"), ["no-such-package-here"])
    assert head[:2] == ["# T", ""]
    assert head[4] == "- nodescope: `nodescope abc` (sha256 0123…)"
    assert head[5] == "- no-such-package-here ?"
    assert len(head) == 6
    based = report_head("# T", ("nodescope abc", "0123"), ["no-such-package-here"],
                        base=("nodescope def", "4567", "/tmp/base"))
    assert based[5] == "- base agent (nodescope-base): `nodescope def` (/tmp/base, sha256 4567…)"
    assert based[6] == head[5]
