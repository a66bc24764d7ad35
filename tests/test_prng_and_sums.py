"""The trial PRNG (Threefry-2x32-20 on (trial, column-pair) counters) and the exact accumulations.

The generator tests are the ones that would have caught the earlier hash, whose rows were shifted copies
of each other for trials whose 32-bit states differed by a multiple of a constant.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from spare_jax import theory
from spare_jax.kernels.host_sums import ExactSum, exact_mean_var, exact_units
from spare_jax.model.cluster import Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.prng import key_words, threefry2x32, trial_bits
from spare_jax.model.placement import make_placement
from spare_jax.kernels.wipeout import simulate_wipeout, wipeout_kernel


def test_threefry_matches_jax_reference():
    from jax.extend.random import threefry_2x32

    rng = np.random.default_rng(0)
    for _ in range(5):
        key = rng.integers(0, 2**32, size=2, dtype=np.uint32)
        count = rng.integers(0, 2**32, size=64, dtype=np.uint32)
        ref = np.asarray(threefry_2x32(jnp.asarray(key), jnp.asarray(count)))
        a, b = threefry2x32(key[0], key[1], count[:32], count[32:])
        np.testing.assert_array_equal(np.concatenate([np.asarray(a), np.asarray(b)]), ref)


def test_bits_depend_only_on_trial_and_column():
    words = key_words(jax.random.key(11))
    ids = np.array([5, 0, 123456, 2**32 - 1, 7], dtype=np.uint32)
    full = np.asarray(trial_bits(words, ids, 601))
    one = np.asarray(trial_bits(words, ids[2:3], 601))
    np.testing.assert_array_equal(full[2], one[0])
    assert not np.array_equal(np.asarray(trial_bits(words, ids, 601, stream=1)), full)
    # a traced stream id gives the same bits as a Python one
    traced = jax.jit(lambda s: trial_bits(words, ids, 601, stream=s))(jnp.uint32(3))
    np.testing.assert_array_equal(np.asarray(traced), np.asarray(trial_bits(words, ids, 601, stream=3)))


@pytest.mark.slow
def test_no_two_rows_share_an_adjacent_pair_of_words():
    """10^5 trials x 600 columns: every adjacent word pair (a 64-bit value) occurs once. Random 64-bit values
    collide with probability ~ (6e7)^2 / 2^65 = 1e-4; the earlier hash had ~1,400 shared pairs here."""
    words = key_words(jax.random.key(0))
    fn = jax.jit(lambda ids: trial_bits(words, ids, 600))
    pairs = []
    for start in range(0, 100_000, 10_000):
        b = np.asarray(fn(jnp.arange(start, start + 10_000, dtype=jnp.uint32))).astype(np.uint64)
        pairs.append(((b[:, :-1] << np.uint64(32)) | b[:, 1:]).ravel())
    pairs = np.concatenate(pairs)
    pairs.sort()
    assert not np.any(pairs[1:] == pairs[:-1])


@pytest.mark.slow
def test_t_of_neighbouring_trials_is_uncorrelated():
    pl = make_placement("stacked", 600, 8)
    words = key_words(jax.random.key(2))
    fn = jax.jit(lambda ids: wipeout_kernel(words, ids, pl)[0])
    n = 200_000
    t = np.concatenate([np.asarray(fn(jnp.arange(s, s + 20_000, dtype=jnp.uint32)))
                        for s in range(0, n, 20_000)]).astype(np.float64)
    for lag in (1, 2, 600):
        rho = np.corrcoef(t[:-lag], t[lag:])[0, 1]
        assert abs(rho) * math.sqrt(n - lag) < 4.5, (lag, rho)


@pytest.mark.slow
def test_batch_means_scatter_as_the_reported_standard_error():
    """Means of 100 independent seeds: their variance against the reported stderr^2 is chi-square(99)/99."""
    pl = make_placement("stacked", 600, 8)
    means, ses = [], []
    for seed in range(100):
        res = simulate_wipeout(pl, Sampling(8192, seed))
        means.append(res.mean)
        ses.append(res.stderr)
    ratio = np.var(means, ddof=1) / np.mean(np.square(ses))
    lo, hi = stats.chi2.ppf([1e-4, 1 - 1e-4], 99) / 99
    assert lo < ratio < hi, ratio
    exact = theory.moments_from_survival(theory.survival_stacked(600, 8))[0]
    assert abs(np.mean(means) - exact) < 4 * np.sqrt(np.mean(np.square(ses)) / 100)


# ---------------------------------------------------------------------------------------------------------
# exact sums


def test_exact_sum_is_exact_and_order_independent_at_any_scale():
    from fractions import Fraction

    rng = np.random.default_rng(3)
    values = np.concatenate([rng.standard_normal(5000) * 10.0 ** rng.integers(-300, 300, 5000),
                             [1e308, 1e308, -1e308, 5e-324, 0.0, -0.0]])
    want = sum(Fraction(float(v)) for v in values)
    s = ExactSum()
    s.add(values)
    assert s.fraction() == want
    t = ExactSum()
    for part in np.array_split(rng.permutation(values), 7):
        t.add(part)
    assert t.total == s.total
    with pytest.raises(ValueError, match="non-finite"):
        exact_units([1.0, np.inf])


def test_exact_variance_has_no_cancellation():
    """float32-sized values (squares exact in float64) with a variance 10^-13 of the mean^2."""
    y = np.float64(2.0 ** 23) + np.arange(10, dtype=np.float64) * 0.5
    a, b = ExactSum(), ExactSum()
    for part in (y[:3], y[3:]):
        a.add(part)
        b.add(part * part)
    mean, var = exact_mean_var(a, b, 10)
    assert mean == 2.0 ** 23 + 2.25
    assert var == np.var(np.arange(10) * 0.5, ddof=1)


@pytest.mark.parametrize("kwargs", [dict(groups=8, redundancy=8, gpus_per_group=1.0),
                                    pytest.param(dict(groups=40, redundancy=2, system_mtbf_min=1e9), marks=pytest.mark.slow)])
def test_wipeout_uptime_sums_do_not_overflow(kwargs):
    """Regression: a fixed-point int64 sum overflowed: stderr 0 for -N 8 -r 8 --gpus-per-group 1, a negative
    uptime for --mtbf 1e9."""
    n, r = kwargs.pop("groups"), kwargs.pop("redundancy")
    model = FailureModel(**kwargs)
    pl = make_placement("stacked", n, r)
    res = simulate_wipeout(pl, Sampling(20_000, 1), model=model)
    other = simulate_wipeout(pl, Sampling(20_000, 1, chunk_size=64), model=model)
    assert res.uptime_sum_min == other.uptime_sum_min and res.uptime_stderr_min == other.uptime_stderr_min
    want = theory.expected_uptime(theory.survival_exact("stacked", n, r), n, model.group_rate_per_min)
    assert res.uptime_stderr_min > 0
    assert abs(res.uptime_mean_min - want) < 4 * res.uptime_stderr_min


@pytest.mark.slow
def test_overhead_does_not_overflow_at_a_huge_mtbf():
    from spare_jax.kernels.overhead import simulate_overhead

    model = FailureModel(system_mtbf_min=1e8)
    res = simulate_overhead(make_placement("stacked", 60, 4), Sampling(2000, 0), model=model)
    ref = simulate_overhead(make_placement("stacked", 60, 4), Sampling(2000, 0))
    assert res.overhead == pytest.approx(ref.overhead, rel=1e-4)  # Omega does not depend on the clock's unit
    assert 1.0 < res.overhead < 4.0


def test_the_registered_streams_do_not_overlap():
    """Every kernel's trial_bits stream ids are registered in model.prng; no two ranges share an id."""
    from spare_jax.model import prng

    spans = sorted(prng.STREAMS.values())
    assert spans[0][0] == 0 and all(count >= 1 for _, count in spans)
    for (a, na), (b, _) in zip(spans, spans[1:]):
        assert a + na <= b, (a, na, b)
    assert spans[-1][0] + spans[-1][1] <= 1 << 32
