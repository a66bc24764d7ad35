"""The 95% interval of a mean TTT stays in the support [W + checkpoints, inf) (``ttt.interval``): no interval
below its least count of runs, the low end never below the least run, on skewed laws and few runs."""
import numpy as np
import pytest

from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.training import Training
from spare_jax.ttt import Policy, time_to_train
from spare_jax.ttt.interval import MIN_RUNS, ttt_interval


def test_no_interval_below_the_least_count_of_runs():
    for n in range(MIN_RUNS):
        ci = ttt_interval(np.full(n, 10.0) + np.arange(n))
        assert ci["low"] is None and ci["high"] is None and f"{n} run" in ci["why"]
    assert ttt_interval(np.arange(MIN_RUNS) + 10.0)["why"] is None
    assert ttt_interval([10.0, np.inf, 11, 12, 13])["low"] is None  # a run beyond the recorded range


@pytest.mark.parametrize("law", ["lognormal", "point_mass_and_tail", "pareto"])
def test_every_interval_lies_in_the_support_on_skewed_laws(law):
    """A sweep over small run counts: the symmetric t interval leaves [W, inf) on these; this one never."""
    rng = np.random.default_rng(7)
    w = 10.0
    draw = {"lognormal": lambda k: w + np.exp(rng.normal(0.0, 2.0, k)),
            "point_mass_and_tail": lambda k: w + (rng.random(k) < 0.2) * rng.exponential(1e4, k),
            "pareto": lambda k: w + rng.pareto(1.1, k) * 50.0}[law]
    for n in range(MIN_RUNS, 13):
        for _ in range(20):
            x = draw(n)
            ci = ttt_interval(x, floor=w)
            assert x.min() <= ci["low"] <= x.mean() <= ci["high"] <= x.max()


def test_binned_runs_give_the_same_interval_shape_and_keep_the_floor():
    x = np.array([10.0, 10.0, 10.0, 11.0, 30.0, 10.0])
    a = ttt_interval(x)
    b = ttt_interval([10.0, 11.0, 30.0], counts=[4, 1, 1])
    assert a["low"] == pytest.approx(b["low"], rel=0.02) and a["high"] == pytest.approx(b["high"], rel=0.1)
    assert ttt_interval([10.0, 11.0], counts=[5, 1], floor=10.01, mean=10.0)["low"] == 10.01


def test_ttt_intervals_from_few_runs_stay_above_the_work():
    """``ttt -N 2 -r 2 --work-hours 10`` over small run counts (its runs: mostly W plus checkpoints, a
    restart now and then): every interval printed lies in [W, inf), and none is printed from too few runs."""
    w = 10.0
    for runs in (2, 4, 5, 8):
        rep = time_to_train(Cluster(2), Training(work_hours=w), Policy("spare", 2),
                            Sampling(runs, seed=3, progress=False)).to_json()
        if runs < MIN_RUNS:
            assert rep["mc_ttt_ci95_low"] is None and rep["mc_ttt_ci95_high"] is None
            assert any("no 95% interval" in n for n in rep["notes"])
        else:
            assert w <= rep["mc_ttt_ci95_low"] <= rep["mc_ttt_hours"] <= rep["mc_ttt_ci95_high"]
