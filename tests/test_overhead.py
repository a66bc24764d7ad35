"""Overhead Monte Carlo against the semi-analytic theory, and its invariances."""
import numpy as np
import pytest

from spare_jax import theory
from spare_jax.model.cluster import Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.kernels.overhead import simulate_overhead
from spare_jax.model.placement import make_placement


@pytest.mark.parametrize("kind,r,trials", [("stacked", 2, 2000), ("stacked", 8, 2000), ("stacked", 16, 1000),
                                           ("block", 12, 2000)])
@pytest.mark.slow
def test_mc_overhead_agrees_with_theory_at_n600(kind, r, trials):
    res = simulate_overhead(make_placement(kind, 600, r), Sampling(trials, 7))
    th = theory.overhead_theory(kind, 600, r)
    assert abs(res.overhead - th["overhead"]) < 4 * res.overhead_stderr, (res.overhead, th)
    assert abs(res.time_avg_depth - th["time_avg_depth"]) < 4 * res.time_avg_depth_stderr
    # expected and sampled sojourns estimate the same Omega
    diff = res.overhead - res.overhead_sampled
    assert abs(diff) < 4 * np.hypot(res.overhead_stderr, res.overhead_sampled_stderr)


def test_overhead_small_n_against_exact_theory():
    res = simulate_overhead(make_placement("stacked", 40, 5), Sampling(8000, 3))
    th = theory.overhead_theory("stacked", 40, 5)
    assert abs(res.overhead - th["overhead"]) < 4 * res.overhead_stderr


@pytest.mark.parametrize("kind", ["stacked", "block"])
@pytest.mark.slow
def test_overhead_chunk_independent(kind):
    # r = 6: the per-trial float32 sums over r segments once went through an XLA reduce whose order changed
    # with the chunk shape (8th digit between chunk <= 256 and 700); now a fixed chain of additions
    pl = make_placement(kind, 60, 6)
    a = simulate_overhead(pl, Sampling(700, 1, chunk_size=64))
    b = simulate_overhead(pl, Sampling(700, 1, chunk_size=700))
    for key in ("overhead", "overhead_stderr", "overhead_sampled", "time_avg_depth", "time_avg_depth_stderr"):
        assert getattr(a, key) == getattr(b, key), key
    np.testing.assert_array_equal(a.depth_at_wipeout_hist, b.depth_at_wipeout_hist)


@pytest.mark.slow
def test_replication_and_trivial_cases():
    assert theory.overhead_theory("stacked", 50, 1)["overhead"] == pytest.approx(1.0)
    res = simulate_overhead(make_placement("stacked", 50, 1), Sampling(200, 0))
    assert res.overhead == pytest.approx(1.0)
    # SPARe overhead is below replication's r and above 1 for r >= 2
    for r in (2, 5, 10):
        om = theory.overhead_theory("stacked", 100, r)["overhead"]
        assert 1.0 < om < r


@pytest.mark.slow
def test_weibull_overhead_runs_with_sampled_sojourns():
    res = simulate_overhead(make_placement("stacked", 200, 4), Sampling(1000, 2),
                            model=FailureModel("weibull", weibull_shape=0.7))
    assert res.distribution == "weibull"
    assert res.overhead == res.overhead_sampled and 1.0 < res.overhead < 4.0


@pytest.mark.slow
def test_random_placement_uses_host_matcher():
    res = simulate_overhead(make_placement("random", 30, 3, seed=1), Sampling(60, 1))
    assert 1.0 < res.overhead < 3.0


@pytest.mark.parametrize("kind,n,r", [("stacked", 200, 5), ("stacked", 600, 12), ("block", 120, 6)])
def test_time_integrated_theory_equals_sojourn_sum(kind, n, r):
    a = theory.overhead_theory(kind, n, r)
    b = theory.overhead_theory_any_n(kind, n, r)
    assert b["overhead"] == pytest.approx(a["overhead"], rel=1e-4)
    assert b["time_avg_depth"] == pytest.approx(a["time_avg_depth"], rel=1e-4)


@pytest.mark.slow
def test_large_n_overhead_theory_against_mc():
    res = simulate_overhead(make_placement("stacked", 4000, 8), Sampling(400, 11))
    th = theory.overhead_theory_any_n("stacked", 4000, 8)
    assert abs(res.overhead - th["overhead"]) < 4 * res.overhead_stderr
