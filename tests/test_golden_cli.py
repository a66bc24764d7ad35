"""Every command's ``--json`` on fixed seeds equals the recorded output (timing keys aside): a reorganisation
of the code moves files and signatures, never numbers. See tests/golden_cli.py.

Integers, strings, booleans, nulls and the shape of every object are compared exactly. Floats are compared
to 1e-12 relative: the host-side float64 theory sums in numpy, whose SIMD summation order depends on the
processor (AVX-512 or not), so the same code on another machine can differ in the last unit in the last place.
The Monte Carlo's device sums are exact and order-independent, so they agree to far better than that; a real
change of a number moves it by many orders of magnitude more.
"""
import json
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_cli import CASES, golden, run_case, run_cases  # noqa: E402

REL = 1e-12


def differences(got, want, path="$"):
    """Where ``got`` and ``want`` differ (a list of ``path: got != want``), floats within ``REL`` equal."""
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        same = math.isclose(got, want, rel_tol=REL, abs_tol=0.0) or (math.isnan(got) and math.isnan(want))
        return [] if same else [f"{path}: {got!r} != {want!r}"]
    if type(got) is not type(want):
        return [f"{path}: {got!r} != {want!r}"]
    if isinstance(want, dict):
        if set(got) != set(want):
            return [f"{path}: keys {sorted(set(got) ^ set(want))} differ"]
        return [d for k in want for d in differences(got[k], want[k], f"{path}.{k}")]
    if isinstance(want, list):
        if len(got) != len(want):
            return [f"{path}: length {len(got)} != {len(want)}"]
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in differences(g, w, f"{path}[{i}]")]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def test_the_comparison_sees_a_moved_number():
    """The comparison itself: an ulp passes, a real change, a missing key and a changed type do not."""
    assert not differences({"a": [1.0, 2]}, {"a": [1.0 + 1e-16, 2]})
    assert differences({"a": 1.001}, {"a": 1.0})
    assert differences({"a": 1.0}, {"a": 1.0, "b": 2})
    assert differences({"a": 1}, {"a": "1"})
    assert differences({"a": True}, {"a": 1})


# the heavier invocations run in the slow tier (the fast tier keeps wipeout, overhead, reorder, ttt, optimize
# and presets)
SLOW_CASES = ("wipeout_scenario", "wipeout_repair", "overhead_microbatches", "place", "plan", "ttt_none",
              # the modes that add keys (tests/test_vocabulary_keys.py reads their recorded outputs in the fast tier)
              "ttt_repair", "ttt_spares", "ttt_elastic", "ttt_scenario", "ttt_microbatches", "overhead_repair",
              "optimize_curves", "optimize_repair", "plan_failure_log", "plan_scenario", "plan_sensitivity",
              "ttt_trace", "optimize_trace")


FAST_CASES = tuple(c for c in sorted(CASES) if c not in SLOW_CASES)


def _check(got, name):
    got = json.loads(json.dumps(got))  # the same float round trip as the recorded file
    return [f"{name}: {d}" for d in differences(got, golden(name))]


def test_json_unchanged_fast_cases():
    """The fast tier's cases, in one process (see ``golden_cli.run_cases``): every difference of every case."""
    got = run_cases(FAST_CASES)
    diff = [d for name in FAST_CASES for d in _check(got[name], name)]
    assert not diff, "; ".join(diff[:20])


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW_CASES)
def test_json_unchanged(name):
    diff = _check(run_case(name), name)
    assert not diff, "; ".join(diff[:10])


MOVED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "golden_cli", "moved")


def moved_too_far(new, old, z_max=4.0):
    """Where a re-recorded Monte Carlo golden ``new`` left its ``old`` record: a Monte Carlo number ``mc_X``
    that moved by more than ``z_max`` of its standard error (``mc_X_stderr`` or ``mc_X_stderr_min`` in
    ``old``), or any other difference (``differences``: only the Monte Carlo may move, a standard error by
    less than 1e-3 of itself, a Monte Carlo mean without one by float32 rounding, 1e-6 of itself)."""
    out = []
    for key, want in old.items():
        got = new.get(key)
        se = old.get(key + "_stderr", old.get(key.replace("_min", "_stderr_min")))
        if key.startswith("mc_") and isinstance(want, float) and isinstance(se, float) and "stderr" not in key:
            if abs(got - want) > z_max * se:
                out.append(f"{key}: {got!r} is {abs(got - want) / se:.1f} standard errors from {want!r}")
        elif key.startswith("mc_") and isinstance(want, float):  # a standard error, or a mean without one:
            if not math.isclose(got, want, rel_tol=1e-3 if "stderr" in key else 1e-6):  # float32 rounding
                out.append(f"{key}: {got!r} != {want!r}")
        else:
            out += differences(got, want, key)
    return out


def test_moved_monte_carlo_goldens_moved_within_four_standard_errors():
    """The goldens re-recorded when epochs with repair moved to the one event kernel (a float32 multiply-add
    there is fused, one rounding instead of two: some epochs' times move by an ulp); their records before the
    move are in tests/data/golden_cli/moved/. The check itself sees a move of 5 standard errors."""
    names = sorted(f[:-5] for f in os.listdir(MOVED) if f.endswith(".json"))
    assert names == ["overhead_repair", "wipeout_repair"]
    for name in names:
        with open(os.path.join(MOVED, name + ".json")) as f:
            old = json.load(f)
        new = golden(name)
        assert new != old and not moved_too_far(new, old), moved_too_far(new, old)
    far = dict(old, mc_epoch_uptime_min=old["mc_epoch_uptime_min"] + 5 * old["mc_epoch_uptime_stderr_min"])
    assert moved_too_far(far, old) and not moved_too_far(old, old)
