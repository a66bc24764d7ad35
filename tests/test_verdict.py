"""The planner's verdict: a strategy is named only where the 95% interval of its difference with checkpointing
alone excludes 0; ties are decided on the paired difference of common runs; the limit is the ideal scheme at
alive/N in the same kernel (elastic shrink at its best tau); numbers in sentences are never in scientific
notation; the looser figure (group failures cost nothing) is the exact TTT of job-wide interruptions alone."""
import json
import math
import os
import re

import numpy as np
import pytest

from spare_jax.cli import main
from spare_jax.planner.verdict import Z95, bound, compare, limit, sample_of, t95, verdict
from spare_jax.ttt.closed_form import none_ttt_exact

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SCIENTIFIC = re.compile(r"\d[eE][+-]?\d")


def check_lines(text: str) -> None:
    """The verdict in short lines, the answer first: the first line names what to run and its expected TTT
    with the 95% interval (or says it is exact) in under 200 characters, every other line under 160; "±", never
    "+-"."""
    from spare_jax.planner.verdict import FIRST_LINE_MAX, LINE_MAX, NAMES

    first, *rest = text.split("\n")
    assert len(first) < FIRST_LINE_MAX, first
    assert first.startswith("Run ") and any(first.startswith(f"Run {n}:") for n in NAMES.values()), first
    assert "expected TTT" in first and ("95% CI" in first or "exact closed form" in first), first
    assert rest, text
    for line in rest:
        assert len(line) < LINE_MAX, line
    assert "+-" not in text and "Looser" not in text and not SCIENTIFIC.search(text)


def _entry(r, tau, mean, se):
    return {"r_star": r, "ckpt_interval_min": tau, "ttt_hours": mean, "mc_ttt_hours": mean,
            "mc_ttt_stderr_hours": se}


def _listed(r, tau, runs):
    runs = np.asarray(runs, np.float64)
    return {"r_star": r, "ckpt_interval_min": tau, "ttt_hours": float(runs.mean()), "mc_runs": runs.size,
            "mc_ttt_runs_hours": [float(x) for x in runs]}


def test_a_clear_winner_is_named_with_its_margin():
    v = verdict({"spare": _entry(4, 20.0, 800.0, 2.0), "rep": _entry(2, 25.0, 900.0, 2.0),
                 "none": _entry(1, 30.0, 1000.0, 3.0)})
    assert v["scheme"] == "spare" and v["r_star"] == 4 and v["ckpt_interval_min"] == 20.0
    assert v["mc_ttt_ci95_low"] == pytest.approx(800 - Z95 * 2) and v["mc_ttt_ci95_high"] == pytest.approx(800 + Z95 * 2)
    assert v["text"].startswith("Run SPARe: r = 4, a checkpoint every 20 min; expected TTT 800.0 h (95% CI 796.1-803.9).")
    assert "faster than replication" in v["text"] and "faster than checkpointing alone" in v["text"]
    ahead = {g["scheme"]: g for g in v["ahead_of"]}
    assert ahead["none"]["ahead_hours"] == pytest.approx(200.0)
    assert ahead["none"]["ahead_stderr_hours"] == pytest.approx(math.hypot(2.0, 3.0))
    assert not SCIENTIFIC.search(v["text"])


def test_overlapping_intervals_say_checkpointing_alone_is_as_good():
    v = verdict({"spare": _entry(3, 20.0, 995.0, 4.0), "rep": _entry(2, 25.0, 1100.0, 2.0),
                 "none": _entry(1, 30.0, 1000.0, 4.0)})
    assert v["scheme"] == "none" and v["r_star"] == 1 and v["not_shown_better"] == "spare"
    assert v["text"].startswith("Run checkpointing alone: a checkpoint every 30 min; expected TTT")
    assert "SPARe (r = 3, a checkpoint every 20 min) at 995.0 h" in v["text"] and "is not shown to beat it" in v["text"]
    assert "95% interval of the difference contains 0" in v["text"]
    # a difference whose interval excludes 0: named
    v = verdict({"spare": _entry(3, 20.0, 980.0, 4.0), "none": _entry(1, 30.0, 1000.0, 4.0)})
    assert v["scheme"] == "spare"


def test_every_r_star_one_is_checkpointing_alone_and_says_why():
    v = verdict({"spare": _entry(1, 30.0, 999.0, 3.0), "rep": _entry(1, 30.0, 999.5, 3.0),
                 "none": _entry(1, 30.0, 1000.0, 3.0)})
    assert v["scheme"] == "none" and "best r is 1" in v["text"]
    assert [g["scheme"] for g in v["ahead_of"]] == []


def test_an_interval_from_n_runs_uses_students_t():
    runs = [10.0, 11.0, 12.0, 9.5, 10.5]
    s = sample_of(_listed(1, 5.0, runs))
    assert s.n == 5 and s.half == pytest.approx(2.776445 * np.std(runs, ddof=1) / math.sqrt(5), rel=1e-5)
    assert t95(200) == pytest.approx(1.971957, rel=1e-5)


def test_a_tie_is_decided_on_the_paired_difference():
    """Two schemes on common random numbers: run i of each shares its failures (a large common part), so the
    difference of their means is far more precise paired than as two independent samples."""
    rng = np.random.default_rng(1)
    common = rng.normal(0.0, 5.0, 40)
    a = 800.0 + common + rng.normal(0.0, 0.01, 40)
    b = 800.05 + common + rng.normal(0.0, 0.01, 40)
    schemes = {"elastic": _listed(1, 60.0, a), "spare": _listed(5, 60.0, b)}
    paired = verdict(schemes, sources={"elastic": "kernel", "spare": "kernel"})
    gap = paired["ahead_of"][0]
    assert paired["scheme"] == "elastic" and gap["paired"] and gap["common_runs"] == 40
    d = b - a
    assert gap["ahead_hours"] == pytest.approx(d.mean())
    assert gap["ahead_stderr_hours"] == pytest.approx(d.std(ddof=1) / math.sqrt(40))
    assert "faster than SPARe" in paired["text"] and "Level with" not in paired["text"]
    # the same numbers as independent samples (different sources): the difference is within the noise
    apart = verdict(schemes, sources={"elastic": "kernel", "spare": "pool"})
    assert not apart["ahead_of"][0]["paired"] and "Level with" in apart["text"]
    # paired, with the interval of the difference containing 0: level
    c = 800.0 + common + rng.normal(0.0, 0.01, 40)
    level = verdict({"elastic": _listed(1, 60.0, a), "spare": _listed(5, 60.0, c)},
                    sources={"elastic": "kernel", "spare": "kernel"})
    g = level["ahead_of"][0]
    assert abs(g["ahead_hours"]) <= g["ahead_half_hours"] and "Level with" in level["text"]
    # unequal run counts: only the common runs are compared
    g = compare(sample_of(_listed(1, 1.0, a), "kernel"), sample_of(_listed(1, 1.0, b[:16]), "kernel"))
    assert g["common_runs"] == 16 and g["diff"] == pytest.approx((b[:16] - a[:16]).mean())


def test_a_margin_needs_two_measured_sides():
    none = {"r_star": 1, "ckpt_interval_min": 4.0, "ttt_hours": 1.02e23, "mc_runs": 0, "mc_ttt_hours": None,
            "mc_ttt_stderr_hours": None}
    v = verdict({"spare": _listed(4, 30.0, [11800.0, 11850.0, 11790.0]), "none": none})
    assert v["scheme"] == "spare"
    assert "faster than checkpointing alone" not in v["text"] and "not measured" in v["text"]
    assert v["ahead_of"][0]["ahead_hours"] is None
    assert not SCIENTIFIC.search(v["text"])


def test_the_looser_figure_is_the_exact_optimum_of_job_wide_interruptions_alone():
    b = bound(100.0, 3.0, 10.0, 400.0)
    taus = 6000.0 / np.arange(1, 3000)
    brute = none_ttt_exact(1 / 400.0, taus, 3.0, 10.0, 6000.0)[0].min() / 60.0
    assert b["ttt_hours"] == pytest.approx(brute, rel=1e-12)
    assert bound(100.0, 3.0, 10.0, None)["ttt_hours"] == pytest.approx(100.0 + 3.0 / 60.0)
    lim = {"ttt_hours": 790.0, "mc_ttt_stderr_hours": 0.5, "mc_ttt_ci95_low": 789.0, "mc_ttt_ci95_high": 791.0,
           "mc_ttt_runs_hours": [789.5, 790.5], "what": "x"}
    v = verdict({"spare": _entry(4, 20.0, 800.0, 2.0), "none": _entry(1, 30.0, 1000.0, 3.0)}, b, lim)
    assert v["bound_ttt_hours"] == b["ttt_hours"] and "left to gain" in v["text"]
    assert v["limit_ttt_hours"] == 790.0 and v["left_to_gain_pct"] == pytest.approx(100 * 10 / 790)
    assert v["limit_exceeded"] is False and "Group failures cost nothing" in v["text"]
    check_lines(v["text"])
    v = verdict({"spare": _entry(4, 20.0, 780.0, 2.0), "none": _entry(1, 30.0, 1000.0, 3.0)}, b, lim)
    assert v["limit_exceeded"] is True and "Limit exceeded" in v["text"] and "780" in v["text"]


def test_the_limit_is_elastic_shrink_at_its_best_tau():
    """N = 16, job-wide MTBF 600 min, 2 spares with a 300-min hardware repair, a 30-min repair: the limit
    equals elastic shrink's TTT at its best tau (searched here on a finer grid, W included), within 4 paired
    standard errors (the same runs: seed and run ids)."""
    from spare_jax.kernels.run_driver import run_each
    from spare_jax.model.cluster import Cluster, Sampling
    from spare_jax.model.repair import Repair
    from spare_jax.model.runsetup import RunSetup
    from spare_jax.model.scenario import Scenario
    from spare_jax.planner.plan import _model
    from spare_jax.ttt import Training

    model = _model(16 * 1024, 1024, 50_000.0)
    cluster = Cluster(16, model, Scenario(job_mtbf_min=600.0), Repair(30.0, spares=2, hardware_repair_min=300.0))
    cfg = Training(50.0, 5.0, 60.0, "none", float(16 * 1024))
    runs = 48
    lim = limit(cluster, cfg, runs, 0)
    assert lim["restart_depth"] is None and lim["mc_runs"] == runs
    best = None
    for tau in sorted(set(np.geomspace(20.0, 400.0, 9)) | {3000.0}):
        setup = RunSetup.build(cluster, cfg, "elastic", 1, float(tau), None, "kept", "shrink")
        ttt = run_each(setup, Sampling(count=runs, seed=0, chunk_size=8))["ttt"] / 60.0
        if best is None or ttt.mean() < best.mean():
            best = np.asarray(ttt, np.float64)
    d = best - np.asarray(lim["mc_ttt_runs_hours"])
    se = d.std(ddof=1) / math.sqrt(runs)
    assert abs(d.mean()) <= 4 * se + 1e-9, (lim["ttt_hours"], best.mean(), se)
    assert lim["ttt_hours"] == pytest.approx(np.mean(lim["mc_ttt_runs_hours"]))


@pytest.mark.slow
def test_the_two_line_failure_log_gives_no_margin_against_an_unmeasured_scheme(capsys):
    log = os.path.join(DATA, "two_failures.csv")
    assert open(log).read().splitlines() == ["node,time_hours", "n1,12.5", "n2,30"]
    assert main(["plan", "--failure-log", log, "--runs", "20", "--no-sensitivity", "--quiet", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    text = data["verdict"]["text"]
    assert not SCIENTIFIC.search(text)
    for g in data["verdict"]["ahead_of"]:
        measured = data["schemes"][g["scheme"]]["mc_runs"] >= 2
        assert (g["ahead_hours"] is not None) == measured
        if not measured:
            assert f"faster than {'checkpointing alone' if g['scheme'] == 'none' else ''}" not in text


def test_plan_prints_the_verdict_first(capsys, tmp_path):
    args = ["plan", "--gpus", "4096", "--gpus-per-group", "256", "--node-mtbf-hours", "50000", "--restart", "20",
            "--ckpt-cost", "2", "--work-hours", "100", "--runs", "40", "--r-max", "3", "--no-sensitivity",
            "--quiet"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.startswith("verdict: ")
    assert "limit:" in text and "group failures cost nothing" in text
    check_lines("\n".join(ln[len("verdict: "):] if ln.startswith("verdict: ") else ln[2:]
                          for ln in text.split("\n\n")[0].splitlines()))
    assert "inputs (value, where it came from):" in text and "restart cost R: 20 min (user input)" in text
    report = tmp_path / "plan.html"
    assert main(args + ["--json", "--report", str(report)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data)[:3] == ["verdict", "bound", "limit"]
    v = data["verdict"]
    for key in ("scheme", "r_star", "microbatches", "ckpt_interval_min", "restart_depth", "ttt_hours", "mc_ttt_ci95_low",
                "mc_ttt_ci95_high", "text", "limit_ttt_hours", "left_to_gain_pct", "limit_exceeded"):
        assert key in v
    assert v["mc_ttt_ci95_low"] <= v["ttt_hours"] <= v["mc_ttt_ci95_high"]
    assert data["bound"]["ttt_hours"] <= v["mc_ttt_ci95_high"]
    check_lines(v["text"])
    for e in data["schemes"].values():  # quantiles are those of the runs listed
        runs = e["mc_ttt_runs_hours"]
        if e["mc_ttt_p05_hours"] is not None:
            assert e["mc_ttt_p05_hours"] == pytest.approx(float(np.quantile(runs, 0.05)), rel=1e-12)
            assert e["mc_ttt_p95_hours"] == pytest.approx(float(np.quantile(runs, 0.95)), rel=1e-12)
    assert "Verdict." in report.read_text()


@pytest.mark.slow  # the joint search compiles a dozen layouts (minutes on 2 shared cores)
def test_quantiles_with_repair_are_numpy_quantiles_of_the_listed_runs(capsys):
    """With repair (the joint search on whole runs): every row lists its runs' TTTs, its quantiles are
    numpy.quantile of them, its mean is theirs, failures_endured is null and failures_survived_per_run is
    what the runs survived; the batch assumed is stated; the limit is beside the verdict."""
    args = ["plan", "--gpus", "8192", "--gpus-per-group", "1024", "--gpu-mtbf-hours", "20000", "--repair-time", "30",
            "--work-hours", "20", "--runs", "16", "--schemes", "spare,elastic", "--r-max", "3",
            "--max-microbatches", "3", "--quiet", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["inputs"]["max_microbatches"] == 3
    assert data["inputs"]["search"]["space"]["microbatches_searched"] == [1, 2, 3]
    assert "Batch assumed: at most 3 micro-batches per shard" in data["verdict"]["text"]
    for e in data["schemes"].values():
        runs = np.asarray(e["mc_ttt_runs_hours"])
        assert runs.size == e["mc_runs"]
        assert e["mc_ttt_p05_hours"] == float(np.quantile(runs, 0.05))
        assert e["mc_ttt_p95_hours"] == float(np.quantile(runs, 0.95))
        assert e["mc_ttt_hours"] == pytest.approx(runs.mean(), rel=1e-6)
        assert e["failures_endured"] is None and e["failures_survived_per_run"] > 0
    v = data["verdict"]
    assert v["limit_ttt_hours"] == data["limit"]["ttt_hours"] and v["limit_exceeded"] is False
    assert v["left_to_gain_pct"] == pytest.approx(100 * (v["ttt_hours"] - v["limit_ttt_hours"]) / v["limit_ttt_hours"])
    check_lines(v["text"])
    assert "Assumes: no stall per group failure or rejoin; repair 30 min (fixed)" in v["text"]
    # the strategy named is measured on at least as many runs as every one it is compared with
    assert all(data["schemes"][v["scheme"]]["mc_runs"] >= e["mc_runs"] for e in data["schemes"].values())


def test_the_batch_bounds_the_micro_batches_searched(capsys):
    from spare_jax.planner.plan import _batch
    from spare_jax.ttt.search import SearchSpace

    b = _batch(2000, None, 600, object(), SearchSpace())
    assert b["microbatches"] == (1, 2, 3) and "2,000 sequences, 3 per group" in b["text"]
    assert _batch(None, 64, 600, object(), SearchSpace())["microbatches"] == (1, 2, 4, 8, 16, 32, 64)
    assert _batch(None, None, 600, object(), SearchSpace())["text"].startswith("Batch not given")
    with pytest.raises(ValueError, match="not both"):
        _batch(2000, 4, 600, object(), SearchSpace())
    with pytest.raises(ValueError, match="at least the number of groups"):
        _batch(100, None, 600, object(), SearchSpace())
    assert main(["plan", "--global-batch-seqs", "2000", "--max-microbatches", "4", "--repair-time", "30"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "not allowed with" in err[-1]


def test_every_line_is_short_with_every_setting_in_words():
    """The longest settings (r, micro-batches, a restart depth, an interval; one final checkpoint) and every
    kind of line (margins, level, not shown better, the limit, assumptions): the first line under 200
    characters naming what to run, the others under 160."""
    rng = np.random.default_rng(3)
    common = rng.normal(0.0, 3.0, 200)
    spare = {**_listed(6, 322.4, 1741.6 + common), "microbatches": 8, "restart_depth": 2.0}
    elastic = {**_listed(1, 6000.0, 1741.0 + common + rng.normal(0, 0.01, 200)), "microbatches": 8}
    rep = _listed(2, 44.2, 2228.0 + common)
    none = {"r_star": 1, "ckpt_interval_min": 7.7, "ttt_hours": 13585.0, "method": "closed_form", "mc_runs": 65}
    lim = {"ttt_hours": 922.43, "mc_ttt_stderr_hours": 0.1, "mc_ttt_ci95_low": 922.2, "mc_ttt_ci95_high": 922.6,
           "mc_ttt_runs_hours": list(922.43 + common[:50] / 30)}
    ctx = {"assumes": ["a stall of 1 min per group failure and 0 min per rejoin",
                       "repair 30 min (lognormal) without a global restart",
                       "120 spare node sets, each back 1440 min after it failed",
                       "job-wide MTBF 847 min; domains of 8 groups (switch), MTBF 20,000 min each"],
           "batch": "Batch assumed: a global batch of 1,048,576 sequences, 1,747 per group's shard; micro-batches "
                    "per shard searched over 1, 2, 4, ..., 1,024, 1,747.",
           "work_hours": 100.0}
    sources = {s: "kernel" for s in ("spare", "elastic", "rep")}
    for schemes in ({"spare": spare, "rep": rep, "none": none, "elastic": elastic},
                    {"spare": spare, "none": {**none, "ttt_hours": 1741.7}}):
        v = verdict(schemes, bound(100.0, 5.0, 60.0, 847.0), lim, sources, ctx)
        check_lines(v["text"])
    assert "one final checkpoint" in verdict({"elastic": elastic}, context=ctx)["text"].split("\n")[0]
