"""Time-to-train: closed form against the classical formula and the Monte Carlo; tau* by optax."""
import json
import math

import numpy as np
import pytest

from spare_jax import ttt
from spare_jax.cli import main
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel


def test_none_closed_form_equals_classical_formula():
    cfg = ttt.Training(work_hours=100.0, ckpt_cost_min=2.0, restart_min=30.0)
    prof = ttt.epoch_profile("none", 60, 1)
    lam = 60 / FailureModel().group_mtbf_min  # system rate
    for tau in (3.0, 10.0, 25.0):
        want = (cfg.work_hours * 60 / tau) * (1 / lam + cfg.restart_min) * math.expm1(lam * (tau + 2.0)) / 60
        assert ttt.ttt_theory(prof, tau, cfg)["ttt_hours"] == pytest.approx(want, rel=2e-3)


def test_committed_work_counts_exact_checkpoint_boundaries_once():
    tau, period = 154.6, 159.6
    upto = np.array([12 * period])  # a checkpoint time that floor/mod round inconsistently
    b = np.array([[0.0, 2.5, 12 * period + 17.0]])
    got = ttt.epochs.committed_work(b, upto, tau, period)[0]
    want = 2.5 + (12 * tau - 2.5) / 2  # depth 1 until 2.5 min, depth 2 after
    assert got == pytest.approx(want, rel=1e-12)
    # and against a per-segment loop on random epochs
    rng = np.random.default_rng(0)
    bps = np.sort(rng.uniform(0, 3000, size=(200, 5)), axis=1)
    bps[:, 0] = 0.0
    m = np.floor(bps[:, -1] / period)
    vec = ttt.epochs.committed_work(bps, m * period, tau, period)
    for e in range(200):
        w = 0.0
        for i in range(1, int(m[e]) + 1):
            s0, s1 = (i - 1) * period, (i - 1) * period + tau
            for d in range(1, 5):
                w += max(0.0, min(s1, bps[e, d]) - max(s0, bps[e, d - 1])) / d
        assert vec[e] == pytest.approx(w, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("scheme,r", [("spare", 4), pytest.param("spare", 12, marks=pytest.mark.slow), ("rep", 2),
                                      ("rep", 6), ("none", 1)])
def test_mc_agrees_with_closed_form_within_3_percent(scheme, r):
    cfg = ttt.Training(work_hours=300.0)
    prof = ttt.epoch_profile(scheme, 600, r)
    tau = ttt.best_tau_grid(prof, cfg)[0]
    th = ttt.ttt_theory(prof, tau, cfg)
    rate = 1 / r if scheme == "rep" else (1.0 if scheme == "none" else 0.4)
    runs = 12 if scheme == "none" else 60
    pool = ttt.sample_epochs(Cluster(600), scheme, r,
                             Sampling(ttt.epochs_needed(prof.mean_uptime_min, cfg, runs, rate), seed=3))
    mc = ttt.simulate_ttt(pool, tau, cfg)
    gap = abs(th["ttt_hours"] / mc["ttt_hours"] - 1)
    assert gap < 0.03 or abs(th["ttt_hours"] - mc["ttt_hours"]) < 4 * mc["ttt_stderr_hours"], (th, mc)
    assert abs(th["availability"] - mc["availability"]) < 0.02


@pytest.mark.slow
def test_optax_tau_matches_grid_and_mc_best():
    cfg = ttt.Training(work_hours=300.0)
    prof = ttt.epoch_profile("spare", 200, 6)
    opt = ttt.optimize_tau(prof, cfg)
    grid_tau, grid_ttt = ttt.best_tau_grid(prof, cfg)
    assert opt["ckpt_interval_min"] == pytest.approx(grid_tau, rel=0.03)
    assert opt["ttt_hours"] * 60 == pytest.approx(grid_ttt, rel=1e-4)
    # the MC's optimum over a tau grid (common random numbers) is flat around the optax tau
    pool = ttt.sample_epochs(Cluster(200), "spare", 6, Sampling(6000, seed=1))
    taus = opt["ckpt_interval_min"] * np.array([0.5, 0.8, 1.0, 1.25, 2.0])
    mcs = [ttt.simulate_ttt(pool, t, cfg) for t in taus]
    best = int(np.argmin([m["ttt_hours"] for m in mcs]))
    assert mcs[2]["ttt_hours"] <= mcs[best]["ttt_hours"] + 3 * mcs[2]["ttt_stderr_hours"]
    yd = ttt.young_daly(prof, cfg)
    assert yd["young_min"] < yd["daly_min"]


def test_training_config_validation():
    with pytest.raises(ValueError, match="work_hours"):
        ttt.Training(work_hours=0)
    with pytest.raises(ValueError, match="restart_scaling"):
        ttt.Training(restart_scaling="cubic")
    with pytest.raises(ValueError, match="scheme"):
        ttt.scheme_placement("raid", 10, 2)
    assert ttt.Training(restart_scaling="linear").restart_for(1_200_000) == pytest.approx(120.0)


def test_optimize_small(capsys):
    assert main(["optimize", "-N", "60", "--r-max", "5", "--json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["schemes"]) == {"spare", "rep", "none"}
    for s in data["schemes"].values():
        assert {"r_star", "ckpt_interval_min", "ttt_hours", "availability_pct"} <= set(s)
    assert "ttt_reduction_vs_rep" in data


def test_cli_ttt_keys(capsys):
    assert main(["ttt", "-N", "60", "-r", "3", "--runs", "30", "--work-hours", "100", "--json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("scheme", "groups", "redundancy", "ckpt_interval_min", "runs", "mc_ttt_hours",
                "mc_ttt_stderr_hours", "theory_ttt_hours", "availability_pct", "goodput"):
        assert key in data
    assert abs(data["theory_ttt_hours"] / data["mc_ttt_hours"] - 1) < 0.05


@pytest.mark.parametrize("argv,word", [(["--scheme", "raid"], "scheme"), (["--ckpt-cost", "-1"], "ckpt-cost"),
                                       (["--work-hours", "0"], "work-hours"), (["-r", "0"], "redundancy"),
                                       (["-N", "10", "-r", "11"], "redundancy")])
def test_cli_ttt_bad_input(argv, word, capsys):
    assert main(["ttt", "--quiet", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and word in err[0]
