"""The wipe-out kernel: per-trial correctness, chunk/device independence, and MC vs exact theory."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spare_jax import theory
from spare_jax.model.cluster import Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.prng import key_words, times_from_bits, trial_bits
from spare_jax.model.placement import make_placement
from spare_jax.kernels.wipeout import simulate_wipeout, wipeout_from_bits


def _t_by_sorting(bits_row, holders):
    order = np.argsort(bits_row, kind="stable")
    failed = np.zeros(bits_row.size, dtype=bool)
    for i, g in enumerate(order, start=1):
        failed[g] = True
        if failed[holders].all(axis=1).any():
            return i
    raise AssertionError("no wipe-out")


@pytest.mark.parametrize("kind,n,r", [("stacked", 30, 3), ("block", 30, 5), ("random", 30, 4), ("stacked", 17, 1),
                                      ("stacked", 9, 9)])
def test_kernel_equals_sorted_replay(kind, n, r):
    pl = make_placement(kind, n, r, seed=5)
    bits = trial_bits(key_words(jax.random.key(7)), jnp.arange(200, dtype=jnp.uint32), n)
    t_count, _ = wipeout_from_bits(bits, pl)
    bits = np.asarray(bits)
    want = [_t_by_sorting(bits[i], pl.holders) for i in range(bits.shape[0])]
    np.testing.assert_array_equal(np.asarray(t_count), want)


@pytest.mark.slow
def test_same_seed_any_chunk_size_identical_histogram():
    pl = make_placement("stacked", 64, 3)
    a = simulate_wipeout(pl, Sampling(5000, 11, chunk_size=128))
    b = simulate_wipeout(pl, Sampling(5000, 11, chunk_size=1000))
    c = simulate_wipeout(pl, Sampling(5000, 11, chunk_size=4096))
    np.testing.assert_array_equal(a.histogram, b.histogram)
    np.testing.assert_array_equal(a.histogram, c.histogram)
    assert a.uptime_sum_min == b.uptime_sum_min == c.uptime_sum_min
    d = simulate_wipeout(pl, Sampling(5000, 12, chunk_size=128))
    assert not np.array_equal(a.histogram, d.histogram)


def test_first_trials_do_not_depend_on_total():
    pl = make_placement("stacked", 32, 2)
    small = simulate_wipeout(pl, Sampling(300, 3, chunk_size=256))
    big = simulate_wipeout(pl, Sampling(600, 3, chunk_size=256))
    assert np.all(big.histogram >= small.histogram)


@pytest.mark.parametrize("kind,n,r,trials", [
    ("stacked", 600, 2, 40000), ("stacked", 600, 8, 40000), ("stacked", 600, 20, 20000),
    ("block", 600, 4, 40000), ("block", 600, 20, 20000),
    pytest.param("stacked", 6000, 8, 4000, marks=pytest.mark.slow),
    pytest.param("block", 6000, 12, 4000, marks=pytest.mark.slow),
])
def test_mc_agrees_with_exact_within_4_standard_errors(kind, n, r, trials):
    res = simulate_wipeout(make_placement(kind, n, r), Sampling(trials, 2024))
    mean, var = theory.moments_from_survival(theory.survival_exact(kind, n, r))
    z = (res.mean - mean) / res.stderr
    assert abs(z) < 4, (res.mean, mean, res.stderr)
    # the variance too: its estimator's standard error is about var * sqrt(2 / trials) (near-normal T)
    assert abs(res.var - var) < 5 * var * np.sqrt(2.5 / trials)


def test_mc_survival_curve_matches_exact_pointwise():
    n, r, trials = 600, 6, 40000
    res = simulate_wipeout(make_placement("stacked", n, r), Sampling(trials, 9))
    exact = theory.survival_stacked(n, r)
    emp = res.survival()
    se = np.sqrt(np.maximum(exact * (1 - exact), 1e-12) / trials)
    assert np.max(np.abs(emp - exact) / se) < 5.0


def test_random_placement_poisson_approximation_is_close():
    res = simulate_wipeout(make_placement("random", 600, 6, seed=1), Sampling(20000, 4))
    approx = theory.expected_failures_asymptotic("random", 600, 6)
    assert abs(res.mean - approx) / approx < 0.03  # stated accuracy of the approximation at N = 600


def test_uptime_mc_matches_theory_exponential():
    model = FailureModel()
    pl = make_placement("stacked", 600, 4)
    res = simulate_wipeout(pl, Sampling(40000, 5), model=model)
    want = theory.expected_uptime(theory.survival_stacked(600, 4), 600, model.group_rate_per_min)
    assert abs(res.uptime_mean_min - want) < 4 * res.uptime_stderr_min


def test_weibull_times_have_the_requested_mean():
    model = FailureModel("weibull", weibull_shape=0.7)
    bits = trial_bits(key_words(jax.random.key(0)), jnp.arange(400, dtype=jnp.uint32), 1000)
    t = np.asarray(times_from_bits(bits, model), dtype=np.float64)
    assert abs(t.mean() - model.group_mtbf_min) < 4 * t.std() / np.sqrt(t.size)


def test_failure_model_validation():
    with pytest.raises(ValueError, match="mtbf"):
        FailureModel(system_mtbf_min=float("nan"))
    with pytest.raises(ValueError, match="distribution"):
        FailureModel("gamma")
    with pytest.raises(ValueError, match="trials"):
        simulate_wipeout(make_placement("stacked", 10, 2), Sampling(0))


def test_bits_are_uniform_enough():
    bits = np.asarray(trial_bits(key_words(jax.random.key(1)), jnp.arange(2000, dtype=jnp.uint32), 600))
    top = bits >> 28  # 16 equiprobable cells
    counts = np.bincount(top.ravel(), minlength=16)
    expected = bits.size / 16
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 50  # 15 dof: p < 1e-5 beyond this
    # neighbouring trials and groups are not correlated
    u = bits.astype(np.float64) / 2**32
    assert abs(np.corrcoef(u[:-1].ravel(), u[1:].ravel())[0, 1]) < 0.01
    assert abs(np.corrcoef(u[:, :-1].ravel(), u[:, 1:].ravel())[0, 1]) < 0.01


def test_second_call_does_not_recompile_and_jit_matches_eager():
    from spare_jax.kernels.wipeout import _jitted, wipeout_kernel

    pl = make_placement("stacked", 40, 3)
    model = FailureModel()
    from spare_jax.kernels.driver import _BLOCK_FNS

    simulate_wipeout(pl, Sampling(1000, 1, chunk_size=256))
    (block,) = [f for k, f in _BLOCK_FNS.items() if k[0][0] == "wipeout" and k[0][1] is pl]
    size = block._cache_size()
    simulate_wipeout(pl, Sampling(3000, 2, chunk_size=256))  # another seed and length: the same compiled block
    assert block._cache_size() == size == 1
    fn = _jitted(pl, model)
    words = key_words(jax.random.key(3))
    ids = jnp.arange(64, dtype=jnp.uint32)
    eager = wipeout_kernel(words, ids, pl, model)
    jitted = fn(words, ids)
    np.testing.assert_array_equal(np.asarray(eager[0]), np.asarray(jitted[0]))
    np.testing.assert_allclose(np.asarray(eager[1]), np.asarray(jitted[1]), rtol=1e-6)


def test_sample_failure_times_is_a_pure_function_of_the_key():
    from spare_jax import sample_failure_times

    a = sample_failure_times(jax.random.key(4), (1000,), FailureModel())
    b = sample_failure_times(jax.random.key(4), (1000,), FailureModel())
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert abs(float(a.mean()) - FailureModel().group_mtbf_min) < 5 * FailureModel().group_mtbf_min / np.sqrt(1000)
