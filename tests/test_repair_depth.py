"""Depth, overhead and time-to-train with repair (SPEC §1, §5, §10.5): the event kernel's epochs with repair, tracking the depth, against
an independent brute-force event walk with d* by Hall's condition (tests/reference_repair_depth.py), the
static overhead kernel (D -> inf), brute-force training runs, and the rare-wipe-out interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reference_repair_depth import simulate_depth_epochs, simulate_training_runs
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.kernels.overhead import simulate_overhead
from spare_jax.model.placement import make_placement
from spare_jax.model.repair import Repair
from spare_jax.model.scenario import Scenario
from spare_jax.kernels.repair import EpochOptions, simulate_repair


def model_with_group_mtbf(mtbf_min: float) -> FailureModel:
    return FailureModel(system_mtbf_min=mtbf_min * 1000.0 / 600_000.0)


def ratio_se(u, w):
    """E[u]/E[w] and its delta-method standard error."""
    q = u.mean() / w.mean()
    return q, math.sqrt(np.var(u - q * w, ddof=1) / u.size) / w.mean()


def z(a, se_a, b, se_b=0.0):
    return (a - b) / math.sqrt(se_a ** 2 + se_b ** 2)


@pytest.mark.slow
@pytest.mark.parametrize("kind,n,r,law", [("stacked", 8, 3, "exp"), ("block", 9, 3, "fixed")])
def test_depth_with_repair_matches_hall_reference(kind, n, r, law):
    res = simulate_repair(make_placement(kind, n, r), Sampling(8000, 3), model=model_with_group_mtbf(100.0),
                          repair=Repair(30.0, law), options=EpochOptions(track_depth=True))
    u, w, dint = simulate_depth_epochs(n, r, 2000, 1, mtbf=100.0, repair_mean=30.0, law=law, placement=kind)
    om, om_se = ratio_se(u, w)
    dep, dep_se = ratio_se(dint, u)
    zo = z(res.overhead, res.overhead_stderr, om, om_se)
    zd = z(res.time_avg_depth, res.time_avg_depth_stderr, dep, dep_se)
    print(f"{kind} {law}: Omega {res.overhead:.4f} vs {om:.4f} (z {zo:+.2f}); depth {res.time_avg_depth:.4f} vs "
          f"{dep:.4f} (z {zd:+.2f})")
    assert abs(zo) < 4 and abs(zd) < 4
    assert 1 < res.overhead < r and 1 < res.time_avg_depth < r


@pytest.mark.slow
def test_depth_never_repaired_equals_static_overhead():
    pl = make_placement("stacked", 60, 4)
    model = FailureModel()
    st = simulate_overhead(pl, Sampling(2048, 3), model=model)
    res = simulate_repair(pl, Sampling(2048, 5), model=model, repair=Repair(1e12, "fixed"),
                          options=EpochOptions(track_depth=True))
    zo = z(res.overhead, res.overhead_stderr, st.overhead_sampled, st.overhead_sampled_stderr)
    zd = z(res.time_avg_depth, res.time_avg_depth_stderr, st.time_avg_depth, st.time_avg_depth_stderr)
    print(f"D=inf: Omega {res.overhead:.4f} vs static {st.overhead_sampled:.4f} (z {zo:+.2f}); depth "
          f"{res.time_avg_depth:.4f} vs {st.time_avg_depth:.4f} (z {zd:+.2f})")
    assert abs(zo) < 4 and abs(zd) < 4


def test_ttt_with_repair_matches_brute_force_runs():
    """Training runs assembled from the pool (work rate W/U constant within an epoch) against exact runs on
    the brute-force depth path (checkpoint-granular commits). Stated approximation bound: the per-epoch error
    of Y is at most (1 - 1/r) P (the tail after the last checkpoint) plus a phase term. Measured here (N = 8,
    epochs ~8 checkpoint periods long, so the start at depth 1 weighs heavily): the pool's TTT is ~1.8 % high
    (z ~ +5 on its own); we allow 4 s.e. plus 3 % of TTT. At N = 600 the epochs are far longer than the start
    transient and the bias is smaller."""
    from spare_jax.ttt.config import Training
    from spare_jax.ttt.montecarlo import simulate_ttt
    from spare_jax.ttt.pool import pool_ttt, sample_repair_epochs

    n, r, tau = 8, 3, 20.0
    cfg = Training(work_hours=10.0, ckpt_cost_min=2.0, restart_min=10.0)
    model = model_with_group_mtbf(100.0)
    pool = sample_repair_epochs(Cluster(n, model, repair=Repair(30.0, "exp")), "spare", r, Sampling(8000, 3))
    mc = simulate_ttt(pool, tau, cfg, gpus=600_000.0)
    walls = simulate_training_runs(n, r, 400, 5, tau, 2.0, 10.0, 600.0, mtbf=100.0, repair_mean=30.0, law="exp")
    ref, ref_se = walls.mean() / 60, walls.std(ddof=1) / math.sqrt(walls.size) / 60
    zz = z(mc["ttt_hours"], mc["ttt_stderr_hours"], ref, ref_se)
    rr, rr_se, _ = pool_ttt(pool, [tau], cfg, gpus=600_000.0)
    print(f"TTT runs {mc['ttt_hours']:.3f} +- {mc['ttt_stderr_hours']:.3f} h ({mc['runs']} runs), renewal "
          f"{rr[0] / 60:.3f} +- {rr_se[0] / 60:.3f} h, brute force {ref:.3f} +- {ref_se:.3f} h (z {zz:+.2f})")
    tol = 4 * math.hypot(mc["ttt_stderr_hours"], ref_se) + 0.03 * ref
    assert abs(mc["ttt_hours"] - ref) < tol
    assert abs(rr[0] / 60 - ref) < 4 * math.hypot(rr_se[0] / 60, ref_se) + 0.03 * ref + 0.05 * ref  # + run-end effect


@pytest.mark.slow
def test_rare_wipeout_interval_known_answer():
    """r = 1: every failure is a wipe-out, so P(a wipe-out by W) = 1 - exp(-N W / MTBF) exactly; the epochs
    censored at W give a Clopper-Pearson interval that must hold it (and a binomial z within 4)."""
    from spare_jax.cli import clopper_pearson

    n, mtbf, horizon, trials = 8, 100.0, 0.64, 20_000
    res = simulate_repair(make_placement("stacked", n, 1), Sampling(trials, 7), model=model_with_group_mtbf(mtbf),
                          repair=Repair(30.0, "fixed"), options=EpochOptions(max_time=horizon))
    p_true = 1 - math.exp(-n * horizon / mtbf)
    k = res.wiped
    lo, hi = clopper_pearson(k, trials)
    zz = (k / trials - p_true) / math.sqrt(p_true * (1 - p_true) / trials)
    print(f"P(wipe-out by W) {k / trials:.4f} [{lo:.4f}, {hi:.4f}] vs exact {p_true:.4f} (z {zz:+.2f})")
    assert res.censored == trials - k and lo <= p_true <= hi and abs(zz) < 4
    assert res.uptime_mean_min <= horizon
    # the interval itself: k = 0 gives [0, 1 - (alpha/2)^(1/n)]
    assert clopper_pearson(0, 100) == (0.0, pytest.approx(1 - 0.025 ** (1 / 100)))


@pytest.mark.slow
def test_cli_repair_overhead_ttt_optimize_and_rare(capsys):
    import json

    from spare_jax.cli import main

    mtbf = repr(100 * 1000 / 600_000)
    base = ["-N", "8", "--mtbf", mtbf, "--quiet", "--json", "--repair-time", "30", "--repair-law", "exp"]
    assert main(["overhead", "-r", "3", "--epochs", "2000", *base]) == 0
    out = json.loads(capsys.readouterr().out)
    assert 1 < out["mc_overhead"] < 3 and out["censored"] == 0
    assert main(["ttt", "-r", "3", "--runs", "20", "--work-hours", "10", "--ckpt-cost", "2",
                 "--restart", "10", *base]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"] == 20 and out["mc_ttt_hours"] > 10
    assert main(["optimize", "--r-max", "2", "--work-hours", "10", "--ckpt-cost", "2",
                 "--restart", "10", *base]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["schemes"]["spare"]["r_star"] in (1, 2)
    assert main(["wipeout", "-r", "2", "--trials", "500", "--work-hours", "1", "-N", "8", "--reference-mtbf-min",
                 repr(3000 * 1000 / 600_000), "--quiet", "--json", "--repair-time", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rare_wipeouts"] is True
    lo, hi = out["p_wipeout_within_run_ci95_low"], out["p_wipeout_within_run_ci95_high"]
    assert lo <= out["p_wipeout_within_run"] <= hi


@pytest.mark.slow
def test_microbatch_depth_never_repaired_equals_static_overhead():
    """With m = 4 micro-batches the epochs with repair track the capacity c*/m; a repair that never comes
    (D -> inf) is the static epoch, whose overhead the static kernel measures independently."""
    pl = make_placement("stacked", 40, 3)
    model = FailureModel()
    scen = Scenario(microbatches=4)
    st = simulate_overhead(pl, Sampling(2048, 3), model=model, scenario=scen)
    res = simulate_repair(pl, Sampling(2048, 5), model=model, scenario=scen, repair=Repair(1e12, "fixed"),
                          options=EpochOptions(track_depth=True))
    zo = z(res.overhead, res.overhead_stderr, st.overhead_sampled, st.overhead_sampled_stderr)
    zd = z(res.time_avg_depth, res.time_avg_depth_stderr, st.time_avg_depth, st.time_avg_depth_stderr)
    print(f"m=4, D=inf: Omega {res.overhead:.4f} vs static {st.overhead_sampled:.4f} (z {zo:+.2f}); depth "
          f"{res.time_avg_depth:.4f} vs {st.time_avg_depth:.4f} (z {zd:+.2f})")
    assert abs(zo) < 4 and abs(zd) < 4
    # and the depth is finer than whole shards: below the m = 1 overhead of the same epochs
    whole = simulate_repair(pl, Sampling(2048, 5), model=model, repair=Repair(1e12, "fixed"),
                            options=EpochOptions(track_depth=True))
    assert res.overhead < whole.overhead
