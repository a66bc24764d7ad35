"""Input at the edges of the accepted ranges is answered, not refused, and the JSON stays strict (no NaN or
Infinity: null where a value is infinite or undefined): the largest per-group MTBF, an interval far shorter
than the epochs, a tiny MTBF, failure times in a trace, an abbreviated --preset, one group, a failure log
of thousands of nodes that never failed. Bad input: tests/test_cli_refusals_*.py."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from spare_jax.cli import main


def strict_loads(text):
    def bad(const):
        raise ValueError(f"non-strict JSON constant {const}")

    return json.loads(text, parse_constant=bad)


def test_optimize_json_strict_at_tiny_mtbf_and_no_warnings(capsys):
    assert main(["optimize", "-N", "20", "--r-max", "2", "--reference-mtbf-min", "0.01", "--json", "--quiet"]) == 0
    cap = capsys.readouterr()
    data = strict_loads(cap.out)
    # a group MTBF of minutes: every scheme's expected TTT is astronomically long (the interval form keeps it
    # finite where it is; an infinite one would print null), and the JSON stays strict
    for entry in data["schemes"].values():
        assert entry["ttt_hours"] is None or entry["ttt_hours"] > 1e4 * data["work_hours"]
    assert "Warning" not in cap.err and cap.err.strip() == ""


def test_reorder_json_strict_with_times(tmp_path, capsys):
    p = tmp_path / "t.csv"
    p.write_text("group,time_min\n3,1.5\n4,2.5\n")
    assert main(["reorder", "-N", "20", "-r", "2", "--trace", str(p), "--json"]) == 0
    data = strict_loads(capsys.readouterr().out)
    assert [e["time_min"] for e in data["per_event"]] == [1.5, 2.5]


def test_strict_json_helper():
    from spare_jax.cli import strict_json

    out = strict_json({"a": float("nan"), "b": [np.float32("inf"), np.int64(3)], "c": np.array([1.0, np.nan]),
                       1: -math.inf, "d": np.bool_(True)})
    assert json.dumps(out, allow_nan=False) == ('{"a": null, "b": [null, 3], "c": [1.0, null], "1": null, '
                                                '"d": true}')


def test_largest_group_mtbf_still_sums_exactly(capsys):
    """Per-group MTBF 1e7 min (the bound), N = 1: the epoch uptime is one exponential time, mean 1e7."""
    assert main(["wipeout", "-N", "1", "-r", "1", "--mtbf", "1e3", "--reference-gpus", "1e4", "--gpus-per-group", "1",
                 "--trials", "20000", "--quiet", "--json"]) == 0
    data = strict_loads(capsys.readouterr().out)
    assert abs(data["mc_epoch_uptime_min"] / data["theory_epoch_uptime_min"] - 1) < 0.05


@pytest.mark.slow
def test_ttt_interval_far_shorter_than_the_epochs_runs(capsys):
    # per-group MTBF 1e7 min, N = 2: epochs of ~5e6 min hold ~1e10 checkpoints of tau + C = 0.01 min; neither
    # the closed form (summed cell by cell) nor the Monte Carlo (bisection) walks over them: it runs, fast
    t0 = time.perf_counter()
    assert main(["ttt", "-N", "2", "-r", "1", "--scheme", "rep", "--mtbf", "1e3", "--reference-gpus", "1e4",
                 "--gpus-per-group", "1", "--ckpt-interval", "0.01", "--ckpt-cost", "0", "--json", "--quiet"]) == 0
    assert time.perf_counter() - t0 < 60
    d = json.loads(capsys.readouterr().out)
    assert abs(d["mc_ttt_hours"] - d["theory_ttt_hours"]) < max(4 * d["mc_ttt_stderr_hours"], 1e-3), d


def test_preset_abbreviation_is_applied_and_one_group_place_runs(capsys):
    assert main(["wipeout", "--pres", "llama3-16k", "-r", "2", "--trials", "200", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"] == 128
    assert main(["place", "-N", "1", "-r", "1", "--trials", "100", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["best_ring"] == [0]


def test_weighted_censoring_equals_listing_every_node(monkeypatch):
    """A log of thousands of nodes that never failed is fitted with weights, as if each were listed."""
    from failure_logs import synthetic_log
    from spare_jax.planner import fit

    log = synthetic_log(50, 2000.0, 800.0, shape=1.3, rng=np.random.default_rng(3))
    log = fit.FailureLog(log.times, log.window_hours, 5000, log.path)  # 4,9xx nodes that never failed
    listed = fit.fit_log(log)
    monkeypatch.setattr(fit, "_EXPAND_MAX", 10)
    weighted = fit.fit_log(log)
    assert weighted.exponential == listed.exponential

    def numbers(w):
        return [w.shape, w.scale_hours, w.mtbf_hours, *w.mtbf_ci_hours, *w.shape_ci, w.p_exponential]

    for a, b in zip(numbers(weighted.weibull), numbers(listed.weibull)):
        assert math.isclose(a, b, rel_tol=1e-7), (a, b)
