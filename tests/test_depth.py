"""d* kernels against Hopcroft-Karp and an independent max-flow; the queue DP against enumeration."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spare_jax import theory
from maxflow_depth import depth_maxflow
from spare_jax.kernels.depth import depth_host, depth_kernel, feasible_stacked
from spare_jax.model.prng import key_words, trial_bits
from spare_jax.kernels.overhead import _feasible_stacked_lanes, depth_thresholds
from spare_jax.model.placement import make_placement
from spare_jax.kernels.wipeout import wipeout_from_bits


CONFIGS = [("stacked", 64, 8), ("stacked", 40, 3), ("stacked", 33, 11), ("stacked", 17, 2), ("stacked", 25, 25),
           ("stacked", 50, 1), ("block", 60, 6), ("block", 48, 4), ("block", 36, 12), ("block", 20, 2),
           ("random", 40, 5), ("random", 24, 3)]


def _alive_states(n, count, rng):
    """``count`` random alive masks with a uniformly random number of failures in 0..N-1."""
    alive = np.ones((count, n), dtype=bool)
    for row in alive:
        row[rng.choice(n, size=int(rng.integers(0, n)), replace=False)] = False
    return alive


@pytest.mark.slow
def test_kernel_depth_equals_hopcroft_karp_on_2000_states():
    rng = np.random.default_rng(0)
    checked = 0
    for kind, n, r in CONFIGS:
        pl = make_placement(kind, n, r, seed=1)
        alive = _alive_states(n, 200, rng)
        ref = np.array([depth_host(pl, a) for a in alive])
        if kind == "random":  # no device kernel: the host matcher is its depth; sanity bound only
            assert np.all((ref == 0) | (ref >= -(-n // alive.sum(axis=1))))
        else:
            got = np.asarray(depth_kernel(jnp.asarray(alive), pl))
            np.testing.assert_array_equal(got, ref)
        checked += len(alive)
    assert checked >= 2000


def test_host_matcher_and_kernel_equal_networkx_maxflow():
    rng = np.random.default_rng(1)
    for kind, n, r in [("stacked", 14, 4), ("block", 12, 3), ("random", 15, 3), ("stacked", 9, 2)]:
        pl = make_placement(kind, n, r, seed=2)
        alive = _alive_states(n, 30, rng)
        ref = np.array([depth_maxflow(pl, a) for a in alive])
        np.testing.assert_array_equal([depth_host(pl, a) for a in alive], ref)
        if kind != "random":
            np.testing.assert_array_equal(np.asarray(depth_kernel(jnp.asarray(alive), pl)), ref)


def test_lane_scan_equals_cumulative_form():
    rng = np.random.default_rng(3)
    n, r = 50, 6
    bits = jnp.asarray(rng.integers(0, 2**32, size=(40, n), dtype=np.uint64).astype(np.uint32))
    thr = jnp.asarray(rng.integers(0, 2**32, size=(40, 4), dtype=np.uint64).astype(np.uint32))
    ds = jnp.arange(2, 6, dtype=jnp.int32)
    lanes = _feasible_stacked_lanes(bits, thr, ds, r)
    for c in range(40):
        for i, d in enumerate(range(2, 6)):
            alive = bits[c] > thr[c, i]
            assert bool(lanes[c, i]) == bool(feasible_stacked(alive, d, r))


@pytest.mark.parametrize("kind,n,r", [pytest.param("stacked", 30, 5, marks=pytest.mark.slow),
                                      pytest.param("stacked", 24, 8, marks=pytest.mark.slow), ("block", 30, 5),
                                      ("stacked", 12, 2)])
def test_thresholds_equal_host_replay(kind, n, r):
    pl = make_placement(kind, n, r)
    bits = trial_bits(key_words(jax.random.key(5)), jnp.arange(40, dtype=jnp.uint32), n)
    t_count, _ = wipeout_from_bits(bits, pl)
    got = np.asarray(depth_thresholds(bits, t_count, pl))
    for b, t, row in zip(np.asarray(bits), np.asarray(t_count), got):
        order = np.argsort(b)
        alive = np.ones(n, dtype=bool)
        depths = []
        for k in range(int(t)):
            depths.append(depth_host(pl, alive))
            alive[order[k]] = False
        want = [int(np.searchsorted(depths, d, side="right")) for d in range(r)] + [int(t)]
        assert list(row) == want


@pytest.mark.parametrize("kind,n,r", [("stacked", 9, 3), ("stacked", 10, 4), ("stacked", 11, 6), ("stacked", 8, 2),
                                      ("stacked", 12, 5), ("block", 12, 4), ("block", 12, 6), ("block", 9, 3)])
def test_depth_cdf_equals_enumeration(kind, n, r):
    """Every failure subset, its d* from the kernel (itself checked against Hopcroft-Karp above)."""
    pl = make_placement(kind, n, r)
    masks = np.arange(1 << n)
    alive = ((masks[:, None] >> np.arange(n)[None, :]) & 1) == 0
    depth = np.asarray(depth_kernel(jnp.asarray(alive), pl))
    k = n - alive.sum(axis=1)
    total = np.bincount(k, minlength=n + 1)
    want = np.zeros((n + 1, r + 1))
    for d in range(1, r + 1):
        want[:, d] = np.bincount(k, weights=(depth >= 1) & (depth <= d), minlength=n + 1) / total
    np.testing.assert_allclose(theory.depth_cdf(kind, n, r), want, atol=1e-12)


def test_depth_cdf_top_level_is_the_survival():
    cdf = theory.depth_cdf("stacked", 200, 7)
    np.testing.assert_allclose(cdf[:, 7], theory.survival_stacked(200, 7), rtol=1e-9, atol=1e-15)
    # the DP at d = r reproduces the exact survival too (independent routes)
    from spare_jax.theory import depth_cdf_stacked_one
    np.testing.assert_allclose(depth_cdf_stacked_one(200, 7, 7), theory.survival_stacked(200, 7), rtol=1e-9,
                               atol=1e-15)


@pytest.mark.parametrize("kind,n,r", [("stacked", 30, 5), ("stacked", 50, 8), ("block", 30, 5), ("stacked", 9, 9),
                                      ("stacked", 7, 1), ("stacked", 12, 2)])
def test_bernoulli_transfer_matrix_equals_binomial_mixture_of_the_queue_dp(kind, n, r):
    from scipy.stats import binom

    cdf_k = theory.depth_cdf(kind, n, r)
    ps = np.array([0.0, 0.05, 0.2, 0.5, 0.8, 1.0])
    want = np.array([binom.pmf(np.arange(n + 1), n, p) @ cdf_k for p in ps])
    np.testing.assert_allclose(theory.depth_cdf_bernoulli(kind, n, r, ps), want, atol=1e-13)
    surv = theory.depth_cdf_bernoulli(kind, n, r, ps, survival_only=True)[:, r]
    np.testing.assert_allclose(surv, want[:, r], atol=1e-13)
