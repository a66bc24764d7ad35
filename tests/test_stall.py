"""Stalls (docs/runs.md#stalls): the whole job pauses S after each group failure it survives without a global
restart and S_j after each group's return from repair. Sanity properties of the whole-run kernel (stall 0
changes nothing; the time-to-train grows with the stall; checkpointing alone never stalls; at a small stall
the stalled time is S per failure survived), the stationary share ``theory.stalls`` against an exactly
computable case and against whole runs (z-score), and the method chooser giving way to whole runs. The
comparison with the independent simulator is tests/test_refrun.py's. Every kernel run here shares one
compiled shape (spare, N = 16, r = 3, fixed repair) but the ``none`` check."""

from __future__ import annotations

import dataclasses
import functools
import json
import math

import numpy as np
import pytest

from spare_jax.kernels.run_driver import run_each
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.runsetup import RunSetup
from spare_jax.model.training import Training
from spare_jax.theory.stalls import quiet_probability, stalled_share

N = 16


def _cluster(group_mtbf=200.0, repair=30.0, law="fixed") -> Cluster:
    model = FailureModel(system_mtbf_min=group_mtbf / N, reference_gpus=1000.0 * N)
    return Cluster(groups=N, model=model, repair=None if repair is None else Repair(repair, law))


def _training(stall=0.0, rejoin=0.0, work_hours=24.0, ckpt=2.0) -> Training:
    return Training(work_hours=work_hours, ckpt_cost_min=ckpt, restart_min=10.0, reference_gpus=1000.0 * N,
                    failure_stall_min=stall, rejoin_stall_min=rejoin)


@functools.lru_cache(maxsize=None)
def _runs(stall=0.0, rejoin=0.0, scheme="spare", group_mtbf=200.0, runs=200, work_hours=24.0, ckpt=2.0,
          repair=30.0):
    setup = RunSetup.build(_cluster(group_mtbf, repair), _training(stall, rejoin, work_hours, ckpt), scheme, 3, 60.0)
    return run_each(setup, Sampling(count=runs, seed=11, chunk_size=runs))


def test_zero_stalls_change_nothing_and_count_nothing():
    """The stall fields default to 0 and a setup built with them at 0 is the setup of before (same runs);
    nothing is counted as stalled."""
    base = RunSetup.build(_cluster(), Training(work_hours=24.0, ckpt_cost_min=2.0, restart_min=10.0,
                                               reference_gpus=1000.0 * N), "spare", 3, 60.0)
    assert base == RunSetup.build(_cluster(), _training(), "spare", 3, 60.0)
    assert base.failure_stall_min == 0.0 and base.rejoin_stall_min == 0.0
    out = _runs()
    assert not out["failure_stall"].any() and not out["rejoin_stall"].any()


def test_the_time_to_train_grows_with_the_stall():
    """Common random numbers (same seed): the mean TTT rises with S (0, 0.5, 1 min), each step by more than 4
    standard errors of the paired difference; a rejoin stall alone is counted as such and costs time too."""
    ttts = [_runs(s)["ttt"].astype(float) for s in (0.0, 0.5, 1.0)]
    for lo, hi in zip(ttts, ttts[1:]):
        d = hi - lo
        assert d.mean() / (d.std(ddof=1) / math.sqrt(d.size)) > 4
    rej = _runs(0.0, 1.0)
    assert not rej["failure_stall"].any() and rej["rejoin_stall"].mean() > 0
    assert rej["ttt"].mean() > ttts[0].mean()


def test_a_small_stall_is_paid_once_per_failure_survived():
    """At S = 0.01 min stalls never overlap: the stalled time is S per failure survived while computing, at
    most S per failure; the failures that end in a restart (wipe-outs), happen during a restart or during
    a checkpoint (C = 2 of every 62 min) pay none of it."""
    s = 0.01
    out = _runs(s)
    paid = out["failure_stall"].sum() / (s * out["failures"].sum())
    assert 0.8 < paid <= 1.0 + 1e-4
    assert out["rejoin_stall"].sum() == 0


def test_the_stalled_time_is_spent_outside_computing():
    """The computing time is the same work at the same rate: stalls lengthen the wall time, not the
    computing time per unit of work (the slowdown keeps its meaning), and stall + compute + checkpoints +
    restarts never exceed the wall time."""
    out = _runs(1.0, 0.5)
    slow0 = _runs()["compute"].sum() / _runs()["work"].sum()
    slow1 = out["compute"].sum() / out["work"].sum()
    assert abs(slow1 - slow0) < 0.02 * slow0
    used = out["compute"] + out["failure_stall"] + out["rejoin_stall"] + 10.0 * out["restarts"] + 2.0 * out["ckpts"]
    assert (used <= out["ttt"] * (1 + 1e-5) + 1e-3).all()


@pytest.mark.slow
def test_checkpointing_alone_never_stalls():
    """Every failure of ``none`` is a global restart: a stall changes no number, run by run."""
    a, b = _runs(0.0, scheme="none", runs=64, repair=None), _runs(2.0, 1.0, scheme="none", runs=64, repair=None)
    for k in a:
        assert np.array_equal(a[k], b[k]), k


def test_quiet_probability_exact_cases():
    """One group, stationary. (a) Fixed repair D >= S, S_j = 0: a group fails at most once within S, so
    q = 1 - S / (M + D) exactly (likewise a rejoin within S_j <= D). (b) Exponential repair: the two-state
    chain is reversible, and looking back from t no failure within S and no return within S_j is a product
    of matrix exponentials of the generator with those jumps killed."""
    from scipy.linalg import expm

    m, d = 200.0, 30.0
    assert quiet_probability(m, d, 1.0, 0.0) == pytest.approx(1 - 1.0 / (m + d), rel=1e-12)
    assert quiet_probability(m, d, 0.0, 7.0) == pytest.approx(1 - 7.0 / (m + d), rel=1e-12)
    lam, mu = 1 / m, 1 / d
    pi = np.array([m, d]) / (m + d)
    for s, sj in [(1.0, 0.0), (0.0, 1.0), (2.0, 0.5), (0.5, 2.0), (40.0, 5.0), (5.0, 40.0)]:
        a, b = min(s, sj), max(s, sj)
        killed = np.diag([-lam, -mu])
        # reversed time: a failure (up -> down) looks like a return, and back
        partly = np.array([[-lam, lam], [0.0, -mu]]) if s > sj else np.array([[-lam, 0.0], [mu, -mu]])
        exact = pi @ expm(killed * a) @ expm(partly * (b - a)) @ np.ones(2)
        assert quiet_probability(m, d, s, sj, "exp") == pytest.approx(exact, abs=1e-8)


def test_stalled_share_against_whole_runs():
    """The stationary share stalled against whole runs where restarts are rare (group MTBF 1,000 min, r = 3,
    30-min repair, S = 1, S_j = 0.5, W = 48 h, C = 2, tau = 60): within 4 standard errors of the runs' ratio
    of sums, and within 5% of it."""
    out = _runs(1.0, 0.5, group_mtbf=1000.0, runs=200, work_hours=48.0)
    stalled = (out["failure_stall"] + out["rejoin_stall"]).astype(float)
    wall = out["ttt"].astype(float)
    ratio = stalled.sum() / wall.sum()
    resid = stalled - ratio * wall
    se = math.sqrt((resid ** 2).sum() / (resid.size - 1) / resid.size) / wall.mean()
    theory = stalled_share(np.full(N, 1000.0), 30.0, 1.0, 0.5, 60.0, 2.0)
    assert abs(theory - ratio) / se < 4, (theory, ratio, se)
    assert abs(theory - ratio) < 0.05 * ratio


@pytest.mark.slow
def test_ttt_with_a_stall_runs_whole_runs_and_reports_it(capsys):
    """``ttt --failure-stall``: the chooser gives way to whole runs (no closed form or epoch pool models a
    stall) and says why; the JSON carries the stalls, their share and the stationary estimate; availability
    counts the stalls as down time."""
    from spare_jax.cli import main
    from spare_jax.model.scenario import Scenario
    from spare_jax.ttt.answer import ttt_method
    from spare_jax.ttt.config import Policy

    plain = Cluster(groups=N, model=_cluster().model, scenario=Scenario())
    assert ttt_method(plain, Policy("spare", 3), training=_training()) == "epoch_pool"
    assert ttt_method(plain, Policy("spare", 3), training=_training(0.5)) == "whole_runs"
    assert ttt_method(plain, Policy("rep", 2), optimum=True, training=_training(0.0, 0.5)) == "whole_runs"
    assert ttt_method(plain, Policy("none", 1), optimum=True, training=_training(0.5)) == "closed_form"
    argv = ["ttt", "-N", "16", "-r", "3", "--runs", "16", "--work-hours", "12", "--ckpt-interval", "60",
            "--group-mtbf-min", "200", "--ckpt-cost", "2", "--restart", "10", "--repair-time", "30", "--quiet",
            "--json", "--failure-stall", "1", "--rejoin-stall", "0.5"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "whole_runs" and "stall" in out["method_detail"]
    assert out["failure_stall_hours"] > 0 and out["rejoin_stall_hours"] > 0
    wall = out["mc_ttt_hours"]
    assert out["stall_pct"] == pytest.approx(100 * (out["failure_stall_hours"] + out["rejoin_stall_hours"]) / wall)
    assert 0 < out["theory_stall_pct"] < 100 and out["failure_stall_min"] == 1.0
    down = out["restarts_mean"] * out["restart_min"] / 60 + out["failure_stall_hours"] + out["rejoin_stall_hours"]
    assert out["availability_pct"] == pytest.approx(100 * (wall - down) / wall, rel=1e-4)


def test_closed_form_refuses_a_stall():
    from spare_jax.model.scenario import Scenario
    from spare_jax.ttt.exact import closed_form_ttt

    plain = Cluster(groups=N, model=_cluster().model, scenario=Scenario())
    with pytest.raises(ValueError, match="stall"):
        closed_form_ttt(plain, _training(1.0), "rep", 2, 60.0)
    assert closed_form_ttt(plain, _training(1.0), "none", 1, 60.0)["ttt_hours"] == \
        closed_form_ttt(plain, _training(), "none", 1, 60.0)["ttt_hours"]


def test_training_refuses_a_negative_or_nan_stall():
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="failure_stall_min"):
            Training(failure_stall_min=bad)
        with pytest.raises(ValueError, match="rejoin_stall_min"):
            Training(rejoin_stall_min=bad)
    assert dataclasses.replace(Training(), failure_stall_min=1.0).stalls
