"""The fast paths of ``ttt`` (closed forms, epoch pools) follow a training run as it happens: the last
interval is partial, the proactive checkpoint is exposed to failures, kept Weibull ages run whole runs;
and they agree with the independent whole-run reference (``reference.refrun``) where a number has no closed
form."""
import json
import math

import numpy as np
import pytest

from spare_jax import ttt
from spare_jax.cli import main
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.runsetup import RunSetup
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training
from spare_jax.reference.refrun import reference_runs, summary
from spare_jax.ttt.answer import time_to_train
from spare_jax.ttt.config import Policy
from spare_jax.ttt.epochs import EpochPool, apply_restart_depth, epoch_ends, pool_committed


def _cluster(n=16, mtbf=200.0, dist="exponential", shape=1.0, m=1, repair=None):
    model = FailureModel(distribution=dist, system_mtbf_min=mtbf / n, reference_gpus=1000.0 * n,
                         weibull_shape=shape)
    return Cluster(groups=n, model=model, scenario=Scenario(microbatches=m), repair=repair)


def _training(work_hours=48.0, tau=60.0):
    return Training(work_hours=work_hours, ckpt_cost_min=2.0, restart_min=10.0, reference_gpus=16000.0,
                    ckpt_interval_min=tau)


@pytest.mark.parametrize("scheme,r", [("spare", 3), ("rep", 4), ("none", 1)])
def test_pool_runs_end_with_the_partial_last_interval(scheme, r):
    """No failures: TTT = d W + ceil(d W / tau) C exactly (d = r for rep, else 1: the final checkpoint
    starts when the work reaches W), not the first regular checkpoint after W."""
    rep = time_to_train(_cluster(mtbf=1e12), _training(work_hours=10.0, tau=70.0),
                        Policy(scheme=scheme, redundancy=r), Sampling(count=4, seed=1)).to_json()
    compute = 600.0 * (r if scheme == "rep" else 1)
    assert rep["mc_ttt_hours"] == pytest.approx((compute + math.ceil(compute / 70.0) * 2.0) / 60.0, rel=1e-9)


def test_none_closed_form_is_exact_with_a_partial_last_interval():
    """K = ceil(W / tau) intervals, the last partial, against a plain event loop (geometric retries)."""
    rate, tau, ckpt, restart, work = 1 / 50.0, 25.0, 3.0, 7.0, 160.0  # K = 7, the last 10 min of work
    got, fails = ttt.closed_form.none_ttt_exact(rate, [tau], ckpt, restart, work)
    rng = np.random.default_rng(5)
    runs = 20000
    total = np.zeros(runs)
    failures = np.zeros(runs)
    lengths = [tau] * 6 + [work - 6 * tau]
    for i in range(runs):
        t = 0.0
        for a in lengths:
            while True:
                x = rng.exponential(1 / rate)
                if x >= a + ckpt:
                    t += a + ckpt
                    break
                t += x + restart
                failures[i] += 1
        total[i] = t
    se = total.std(ddof=1) / math.sqrt(runs)
    assert abs(total.mean() - got[0]) < 4 * se, (total.mean(), got[0], se)
    assert abs(failures.mean() - fails[0]) < 4 * failures.std(ddof=1) / math.sqrt(runs)
    # a whole number of intervals (tau = W / K) is the renewal form; the optimum is such an even split
    even, _ = ttt.closed_form.none_ttt_exact(rate, [work / 7], ckpt, restart, work)
    assert even[0] == pytest.approx(work / (work / 7) * (1 / rate + restart) * math.expm1(rate * (work / 7 + ckpt)))


def test_none_closed_form_and_monte_carlo_agree(capsys):
    """The closed form and the Monte Carlo at an interval just short of an even split (the last interval
    a few minutes long, and its checkpoint paid in full)."""
    args = ["ttt", "--scheme", "none", "-N", "64", "--group-mtbf-min", "19200", "--restart", "30",
            "--ckpt-cost", "5", "--work-hours", "720", "--runs", "4000", "--ckpt-interval", "51.486712459365535",
            "--json", "--quiet"]
    assert main(args) == 0
    d = json.loads(capsys.readouterr().out)
    exact, _ = ttt.closed_form.none_ttt_exact(1 / 300.0, [51.486712459365535], 5.0, 30.0, 720 * 60.0)
    assert d["theory_ttt_hours"] == pytest.approx(exact[0] / 60.0, rel=1e-9)
    assert abs(d["mc_ttt_hours"] - d["theory_ttt_hours"]) < 4 * d["mc_ttt_stderr_hours"], d
    # the optimum interval is an even split of W
    assert main(args[:-4] + ["--json", "--quiet"]) == 0
    best = json.loads(capsys.readouterr().out)
    k = 720 * 60.0 / best["ckpt_interval_min"]
    assert k == pytest.approx(round(k), abs=1e-6)
    assert best["theory_ttt_hours"] < d["theory_ttt_hours"]


@pytest.mark.parametrize("scheme,r", [("spare", 3), ("rep", 4), ("none", 1)])
@pytest.mark.parametrize("tau,ckpt", [(0.004, 0.001), (0.3, 2.0), (0.02, 30.0)])
def test_closed_form_by_cells_equals_the_checkpoint_sum(scheme, r, tau, ckpt):
    """The O(grid) geometric sum of tiny intervals gives the checkpoint-by-checkpoint sum."""
    prof = ttt.epoch_profile(scheme, 16, r, FailureModel(system_mtbf_min=600 / 16, reference_gpus=16000.0))
    log_s = np.log(np.maximum(prof.survival, 1e-300))
    by_cells = ttt.closed_form._expected_work_by_cells(tau, ckpt, prof.t, log_s, prof.work)
    period = tau + ckpt
    i = np.arange(1, ttt.closed_form._ckpts_to_grid_end(float(prof.t[-1]), tau, ckpt) + 1, dtype=np.float64)
    c = i * period
    terms = np.exp(np.interp(c, prof.t, log_s, right=-1e4)) * (np.interp(c - ckpt, prof.t, prof.work)
                                                               - np.interp(c - period, prof.t, prof.work))
    assert by_cells == pytest.approx(terms.sum(), rel=1e-10)


def test_tiny_interval_runs_and_agrees_with_the_closed_form(capsys):
    """tau = 0.001 min: the Monte Carlo finds each run's final checkpoint by bisection (no walk over a
    million checkpoints) and agrees with the closed form."""
    assert main(["ttt", "-N", "16", "-r", "3", "--group-mtbf-min", "600", "--ckpt-cost", "0.001",
                 "--restart", "10", "--work-hours", "12", "--runs", "300", "--ckpt-interval", "0.001",
                 "--json", "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert abs(d["mc_ttt_hours"] - d["theory_ttt_hours"]) < max(4 * d["mc_ttt_stderr_hours"],
                                                               0.01 * d["theory_ttt_hours"]), d


def _pool(uptime, breakpoints):
    up = np.asarray(uptime, np.float64)
    return EpochPool("spare", 16, 2, up, np.asarray(breakpoints, np.float64))


def test_the_proactive_checkpoint_is_exposed_to_the_wipe_out():
    """D_max = 2 is reached at s = 50 (computing, tau 30, C 5: period 35, s in period 1's compute phase)."""
    tau, ckpt = 30.0, 5.0
    period = tau + ckpt
    # epoch 0: the wipe-out at 53 hits the proactive checkpoint [50, 55]: it is abandoned, the checkpoint
    # completed at 35 keeps tau of work, the epoch lasts 53. Epoch 1: the wipe-out at 80 comes after it.
    pool = apply_restart_depth(_pool([53.0, 80.0], [[0, 50, 53], [0, 50, 80]]), 2.0)
    y, busy, lost, reach = epoch_ends(pool, tau, period, ckpt)
    assert list(pool.voluntary) == [True, True]
    assert y[0] == pytest.approx(30.0) and busy[0] == pytest.approx(53.0) and lost[0] == pytest.approx(18.0)
    assert y[1] == pytest.approx(30.0 + 15.0) and busy[1] == pytest.approx(55.0) and lost[1] == 0.0
    assert reach[0] == pytest.approx(48.0) and reach[1] == pytest.approx(50.0)
    # D_max reached during the regular checkpoint [30, 35]: that checkpoint serves and ends the epoch at 35
    pool = apply_restart_depth(_pool([90.0, 33.0], [[0, 32, 90], [0, 32, 33]]), 2.0)
    y, busy, lost, _ = epoch_ends(pool, tau, period, ckpt)
    assert y[0] == pytest.approx(30.0) and busy[0] == pytest.approx(35.0) and lost[0] == 0.0
    # ... unless the wipe-out comes first (at 33): abandoned, nothing committed
    assert y[1] == 0.0 and busy[1] == pytest.approx(33.0) and lost[1] == pytest.approx(33.0)
    assert pool_committed(pool, np.array([35.0]), tau, period, rows=np.array([0]))[0] == pytest.approx(30.0)


def _against_reference(cluster, policy, runs, seed, work_hours=48.0):
    training = _training(work_hours)
    rep = time_to_train(cluster, training, policy, Sampling(count=runs, seed=seed)).to_json()
    setup = RunSetup.build(cluster, training, policy.scheme, policy.redundancy, 60.0, policy.restart_depth,
                           policy.ages)
    ref = summary(reference_runs(setup, runs, seed=seed + 7919))
    z = (rep["mc_ttt_hours"] - ref["ttt_hours"]) / math.hypot(rep["mc_ttt_stderr_hours"], ref["ttt_stderr_hours"])
    assert abs(z) < 4, (z, rep["mc_ttt_hours"], ref)
    return z


CASES = {
    "paper": (dict(), dict()),
    "weibull-kept": (dict(dist="weibull", shape=0.7), dict()),
    "m4-dmax1.5": (dict(m=4), dict(restart_depth=1.5)),
    "fixed-repair": (dict(repair=Repair(30.0, "fixed")), dict()),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_ttt_agrees_with_the_reference_runs(case):
    """N = 16, r = 3, group MTBF 200 min, W = 48 h, C = 2, R = 10, tau = 60: 2,000 runs on each side."""
    c_kw, p_kw = CASES[case]
    _against_reference(_cluster(**c_kw), Policy(scheme="spare", redundancy=3, **p_kw), 2000, seed=21)


def test_ttt_agrees_with_the_reference_runs_quick():
    """The proactive restart (an epoch-pool path) at D_max = 2, fewer and shorter runs."""
    _against_reference(_cluster(), Policy(scheme="spare", redundancy=3, restart_depth=2.0), 300, seed=4,
                       work_hours=12.0)
