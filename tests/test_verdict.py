"""The planner's verdict: a strategy is named only where its 95% interval lies below checkpointing alone's;
the bound is the exact TTT of a run whose group failures cost nothing."""
import json
import math

import numpy as np
import pytest

from spare_jax.cli import main
from spare_jax.planner.verdict import Z95, bound, verdict
from spare_jax.ttt.closed_form import none_ttt_exact


def _entry(r, tau, mean, se):
    return {"r_star": r, "ckpt_interval_min": tau, "ttt_hours": mean, "mc_ttt_hours": mean,
            "mc_ttt_stderr_hours": se}


def test_a_clear_winner_is_named_with_its_margin():
    v = verdict({"spare": _entry(4, 20.0, 800.0, 2.0), "rep": _entry(2, 25.0, 900.0, 2.0),
                 "none": _entry(1, 30.0, 1000.0, 3.0)})
    assert v["scheme"] == "spare" and v["r_star"] == 4 and v["ckpt_interval_min"] == 20.0
    assert v["mc_ttt_ci95_low"] == pytest.approx(800 - Z95 * 2) and v["mc_ttt_ci95_high"] == pytest.approx(800 + Z95 * 2)
    assert v["text"].startswith("Run SPARe (r = 4, tau = 20 min)")
    assert "faster than replication" in v["text"] and "faster than checkpointing alone" in v["text"]
    ahead = {g["scheme"]: g for g in v["ahead_of"]}
    assert ahead["none"]["ahead_hours"] == pytest.approx(200.0)
    assert ahead["none"]["ahead_stderr_hours"] == pytest.approx(math.hypot(2.0, 3.0))


def test_overlapping_intervals_say_checkpointing_alone_is_as_good():
    v = verdict({"spare": _entry(3, 20.0, 995.0, 4.0), "rep": _entry(2, 25.0, 1100.0, 2.0),
                 "none": _entry(1, 30.0, 1000.0, 4.0)})
    assert v["scheme"] == "none" and v["r_star"] == 1 and v["not_shown_better"] == "spare"
    assert v["text"].startswith("Checkpointing alone is as good here")
    assert "within the Monte Carlo's 95% intervals" in v["text"]
    # separated intervals: named
    v = verdict({"spare": _entry(3, 20.0, 980.0, 4.0), "none": _entry(1, 30.0, 1000.0, 4.0)})
    assert v["scheme"] == "spare"


def test_every_r_star_one_is_checkpointing_alone_and_says_why():
    v = verdict({"spare": _entry(1, 30.0, 999.0, 3.0), "rep": _entry(1, 30.0, 999.5, 3.0),
                 "none": _entry(1, 30.0, 1000.0, 3.0)})
    assert v["scheme"] == "none" and "best r is 1" in v["text"]
    assert [g["scheme"] for g in v["ahead_of"]] == []


def test_the_bound_is_the_exact_optimum_of_job_wide_interruptions_alone():
    b = bound(100.0, 3.0, 10.0, 400.0)
    taus = 6000.0 / np.arange(1, 3000)
    brute = none_ttt_exact(1 / 400.0, taus, 3.0, 10.0, 6000.0)[0].min() / 60.0
    assert b["ttt_hours"] == pytest.approx(brute, rel=1e-12)
    assert bound(100.0, 3.0, 10.0, None)["ttt_hours"] == pytest.approx(100.0 + 3.0 / 60.0)
    v = verdict({"spare": _entry(4, 20.0, 800.0, 2.0), "none": _entry(1, 30.0, 1000.0, 3.0)}, b)
    assert v["bound_ttt_hours"] == b["ttt_hours"] and "left to gain" in v["text"]


def test_plan_prints_the_verdict_first(capsys, tmp_path):
    args = ["plan", "--gpus", "4096", "--gpus-per-group", "256", "--node-mtbf-hours", "50000", "--restart", "20",
            "--ckpt-cost", "2", "--work-hours", "100", "--runs", "40", "--r-max", "3", "--no-sensitivity",
            "--quiet"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.startswith("verdict: ")
    assert "bound:" in text
    report = tmp_path / "plan.html"
    assert main(args + ["--json", "--report", str(report)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data)[:2] == ["verdict", "bound"]
    v = data["verdict"]
    for key in ("scheme", "r_star", "microbatches", "ckpt_interval_min", "restart_depth", "ttt_hours", "mc_ttt_ci95_low",
                "mc_ttt_ci95_high", "text"):
        assert key in v
    assert v["mc_ttt_ci95_low"] <= v["ttt_hours"] <= v["mc_ttt_ci95_high"]
    assert data["bound"]["ttt_hours"] <= v["mc_ttt_ci95_high"]
    assert "Verdict." in report.read_text()
