"""Every command's ``--json`` on fixed seeds equals the recorded output (timing keys aside): a reorganisation
of the code moves files and signatures, never numbers. See tests/golden_cli.py."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_cli import CASES, golden, run_case  # noqa: E402


# the heavier invocations run in the slow tier (the fast tier keeps wipeout, overhead, reorder, ttt, optimize
# and presets)
SLOW_CASES = ("wipeout_scenario", "wipeout_repair", "overhead_microbatches", "place", "plan", "ttt_none")


@pytest.mark.parametrize("name", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CASES else c
                                  for c in sorted(CASES)])
def test_json_unchanged(name):
    got = json.loads(json.dumps(run_case(name)))  # the same float round trip as the recorded file
    assert got == golden(name)
