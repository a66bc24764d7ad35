"""Micro-batch granularity (SPEC §10.6) and the proactive restart (§10.7).

Every claim is checked against something that does not share the code under test: the queue test and the
kernels against networkx max-flow on every failure state of small N; the thresholds against the host
matcher along random failure orders; the queue DP against exhaustive enumeration of k-subsets; the Monte
Carlo against the theory (z-bound) and against the independent NumPy reference of
``tests/reference_microbatch.py``; the controller's capacity against the kernel on replayed traces and its
moves against a second min-cost-flow backend; the proactive restart against a brute-force walk written here.
"""

from __future__ import annotations

import itertools
import json
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from maxflow_depth import capacity_maxflow
from spare_jax import theory
from spare_jax.kernels.depth import WIPED_OUT, capacity_block, capacity_host, feasible_stacked
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.prng import trial_bits
from spare_jax.kernels.overhead import _feasible_stacked_lanes, depth_thresholds, level_depths, simulate_overhead
from spare_jax.model.placement import make_placement
from spare_jax.model.scenario import Scenario
from spare_jax.kernels.wipeout import wipeout_from_bits
from spare_jax.model.prng import WIPEOUT_STREAM
from spare_jax.kernels.driver import as_uint32_key_words


def capacity_stacked(alive, redundancy: int, microbatches: int = 1):
    """c*(S) in micro-batches for ``stacked`` by the queue test at every capacity m..r m (``alive``:
    ``bool[..., N]``); ``WIPED_OUT`` (0) where a shard is lost. ``microbatches = 1`` is ``depth_stacked``."""
    m = int(microbatches)
    cs = jnp.arange(m, redundancy * m + 1, dtype=jnp.int32)
    ok = jax.vmap(lambda c: feasible_stacked(alive, c, redundancy, m), out_axes=-1)(cs)
    first = jnp.argmax(ok, axis=-1)
    return jnp.where(ok.any(axis=-1), first + m, WIPED_OUT).astype(jnp.int32)


def _all_states(n):
    return np.array(list(itertools.product([False, True], repeat=n)), bool)


@pytest.mark.parametrize("kind,n,r,m", [("stacked", 7, 3, 2), ("stacked", 6, 2, 3),
                                        pytest.param("stacked", 8, 4, 3, marks=pytest.mark.slow),
                                        pytest.param("stacked", 9, 3, 4, marks=pytest.mark.slow), ("block", 6, 3, 2),
                                        pytest.param("block", 8, 4, 3, marks=pytest.mark.slow)])
def test_capacity_kernels_equal_maxflow_on_every_state(kind, n, r, m):
    pl = make_placement(kind, n, r)
    states = _all_states(n)
    fn = capacity_stacked if kind == "stacked" else capacity_block
    dev = np.asarray(fn(jnp.asarray(states), r, m))
    for s, c in zip(states, dev):
        ref = capacity_maxflow(pl, s, m)
        assert c == ref, (s.astype(int), c, ref)
        assert capacity_host(pl, s, m) == ref
    assert (dev == WIPED_OUT).any() and (dev > m).any()  # the sweep covers wipe-outs and deeper states


@pytest.mark.slow
def test_capacity_with_one_microbatch_is_the_depth_and_integer_depths_do_not_change():
    from spare_jax.kernels.depth import depth_stacked

    states = jnp.asarray(_all_states(8))
    d1 = np.asarray(depth_stacked(states, 3))
    assert np.array_equal(np.asarray(capacity_stacked(states, 3, 1)), d1)
    for m in (2, 3, 5):
        c = np.asarray(capacity_stacked(states, 3, m))
        # capacity d m is feasible iff depth d is: ceil(c / m) is the whole-shard depth
        assert np.array_equal(np.where(c > 0, -(-c // m), 0), d1)


def test_queue_lanes_equal_the_cumulative_form_with_microbatches():
    rng = np.random.default_rng(3)
    n, r, m = 20, 4, 3
    bits = jnp.asarray(rng.integers(0, 2**32, size=(16, n), dtype=np.uint32))
    thr = jnp.asarray(np.sort(rng.integers(0, 2**32, size=(16, 5), dtype=np.uint32), axis=1))
    cs = jnp.arange(m, r * m + 1, 2, dtype=jnp.int32)[:5]
    lanes = np.asarray(_feasible_stacked_lanes(bits, thr, cs, r, m))
    for t in range(16):
        for i in range(5):
            alive = np.asarray(bits[t] > thr[t, i])
            assert lanes[t, i] == bool(feasible_stacked(jnp.asarray(alive), int(cs[i]), r, m))


@pytest.mark.parametrize("kind,n,r,m", [pytest.param("stacked", 24, 4, 3, marks=pytest.mark.slow),
                                         pytest.param("stacked", 30, 3, 4, marks=pytest.mark.slow),
                                         pytest.param("block", 24, 4, 3, marks=pytest.mark.slow)])
def test_depth_thresholds_follow_the_capacity_along_failure_orders(kind, n, r, m):
    pl = make_placement(kind, n, r)
    words = as_uint32_key_words(5)
    ids = jnp.arange(8, dtype=jnp.uint32)
    bits = trial_bits(words, ids, n, stream=WIPEOUT_STREAM)
    t_count, _ = wipeout_from_bits(bits, pl)
    k = np.asarray(depth_thresholds(bits, t_count, pl, m))
    k1 = np.asarray(depth_thresholds(bits, t_count, pl, 1))
    levels = (r - 1) * m + 1
    assert k.shape == (8, levels + 1)
    assert np.array_equal(k[:, 1::m], k1[:, 1:])  # integer depths: the m = 1 thresholds
    bits = np.asarray(bits)
    for row in range(8):
        order = np.argsort(bits[row])
        alive = np.ones(n, bool)
        level_at = []
        for kk in range(int(t_count[row])):
            level_at.append(capacity_host(pl, alive, m) - m + 1)
            alive[order[kk]] = False
        level_at = np.array(level_at)
        for i in range(1, levels):  # K_i = first k whose level exceeds i (T if none)
            above = np.nonzero(level_at > i)[0]
            assert k[row, i] == (above[0] if above.size else int(t_count[row])), (row, i)


@pytest.mark.parametrize("kind,n,r,m", [("stacked", 10, 3, 2), ("stacked", 9, 4, 3), ("block", 8, 4, 2)])
def test_queue_dp_equals_enumeration_of_k_subsets(kind, n, r, m):
    pl = make_placement(kind, n, r)
    cdf = theory.depth_cdf(kind, n, r, m)
    levels = (r - 1) * m + 1
    count = np.zeros((n + 1, levels + 1))
    for s in _all_states(n):
        c = capacity_maxflow(pl, s, m)
        k = n - int(s.sum())
        if c:
            count[k, c - m + 1:] += 1
    total = np.array([math.comb(n, k) for k in range(n + 1)], float)
    np.testing.assert_allclose(cdf, count / total[:, None], atol=1e-12)


def test_transfer_matrices_equal_the_k_resolved_mixture_with_microbatches():
    p = np.array([0.02, 0.1, 0.3, 0.5])
    for kind, n, r, m in (("stacked", 30, 4, 3), ("stacked", 24, 3, 2), ("block", 24, 4, 2)):
        mix = theory.binomial_mixture(theory.depth_cdf(kind, n, r, m), n, p)
        np.testing.assert_allclose(theory.depth_cdf_bernoulli(kind, n, r, p, microbatches=m), mix, atol=1e-12)


@pytest.mark.slow
def test_overhead_with_one_microbatch_is_bit_for_bit_the_default():
    pl = make_placement("stacked", 24, 3)
    a = simulate_overhead(pl, Sampling(500, 3))
    b = simulate_overhead(pl, Sampling(500, 3), scenario=Scenario(microbatches=1))
    assert a.overhead == b.overhead and a.time_avg_depth == b.time_avg_depth
    assert np.array_equal(a.depth_at_wipeout_hist, b.depth_at_wipeout_hist)
    th = theory.overhead_theory("stacked", 24, 3)
    assert th == theory.overhead_theory("stacked", 24, 3, microbatches=1)


@pytest.mark.parametrize("kind,n,r,m", [pytest.param("stacked", 64, 4, 2, marks=pytest.mark.slow),
                                        pytest.param("stacked", 64, 4, 4, marks=pytest.mark.slow),
                                        ("block", 32, 4, 3)])  # stacked N = 64 also below, vs the reference
@pytest.mark.slow
def test_overhead_monte_carlo_agrees_with_theory(kind, n, r, m):
    res = simulate_overhead(make_placement(kind, n, r), Sampling(4000, 11), scenario=Scenario(microbatches=m))
    th = theory.overhead_theory(kind, n, r, microbatches=m)
    z = (res.overhead - th["overhead"]) / res.overhead_stderr
    assert abs(z) < 4, (res.overhead, res.overhead_stderr, th["overhead"])
    zd = (res.time_avg_depth - th["time_avg_depth"]) / res.time_avg_depth_stderr
    assert abs(zd) < 4
    # finer granularity never costs more (same epochs): Omega(m) <= Omega(1)
    assert th["overhead"] < theory.overhead_theory(kind, n, r)["overhead"]
    assert res.microbatches == m and len(res.level_depths) == (r - 1) * m + 1


def test_any_n_theory_equals_the_k_resolved_sum():
    a = theory.overhead_theory("stacked", 64, 4, microbatches=3)
    b = theory.overhead_theory_any_n("stacked", 64, 4, microbatches=3)
    assert abs(a["overhead"] - b["overhead"]) < 1e-4 * a["overhead"]


@pytest.mark.slow
def test_host_matcher_path_with_microbatches_agrees_with_theory_on_stacked():
    # the random-placement path (host matcher) run on a stacked layout against the exact theory
    pl = make_placement("stacked", 12, 3)
    from spare_jax.kernels.overhead import _simulate_overhead_host

    res = _simulate_overhead_host(pl, 400, 2, FailureModel(), False, 2)
    th = theory.overhead_theory("stacked", 12, 3, microbatches=2)
    assert abs(res.overhead - th["overhead"]) < 4 * res.overhead_stderr


# --- against the independent reference (tests/reference_microbatch.py, written from SPEC alone) ----------

_REF = os.path.join(os.path.dirname(__file__), "data", "microbatch_reference.json")


def _reference_rows():
    with open(_REF) as f:
        data = json.load(f)
    return [row for row in data["cases"].values() if row["placement"] == "stacked"]


def _check_against_reference(row, trials):
    n, r, m = row["N"], row["r"], row["m"]
    res = simulate_overhead(make_placement("stacked", n, r), Sampling(trials, 1), scenario=Scenario(microbatches=m))
    se = math.hypot(res.overhead_stderr, row["overhead_stderr"])
    assert abs(res.overhead - row["overhead"]) < 4 * se, (row, res.overhead, res.overhead_stderr)
    th = theory.overhead_theory("stacked", n, r, microbatches=m)
    assert abs(th["overhead"] - row["overhead"]) < 4 * row["overhead_stderr"]


@pytest.mark.slow
def test_overhead_agrees_with_the_independent_reference_small_n():
    rows = [row for row in _reference_rows() if row["N"] <= 64 and row["m"] == 4]
    assert rows, "tests/data/microbatch_reference.json holds no small-N rows"
    for row in rows:
        _check_against_reference(row, 5000)


@pytest.mark.slow
def test_overhead_agrees_with_the_independent_reference_small_n_every_m():
    for row in [row for row in _reference_rows() if row["N"] <= 64]:
        _check_against_reference(row, 20_000)


@pytest.mark.slow
def test_overhead_agrees_with_the_independent_reference_n600():
    rows = [row for row in _reference_rows() if row["N"] == 600]
    assert {row["m"] for row in rows} >= {2, 4, 8}
    for row in rows:
        _check_against_reference(row, 20_000)


# --- the micro-batch controller ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind,n,r,m", [("stacked", 16, 4, 3), ("block", 12, 3, 4), ("random", 12, 3, 2)])
def test_controller_capacity_equals_the_kernel_and_moves_are_minimal(kind, n, r, m):
    from spare_jax.rectlr.reorder_mb import MicrobatchController

    pl = make_placement(kind, n, r, seed=1)
    rng = np.random.default_rng(7)
    for _ in range(3):
        ctl = MicrobatchController(pl, m)
        alive = np.ones(n, bool)
        for g in rng.permutation(n):
            before = ctl.alloc.copy()
            state_alive = ctl.alive.copy()
            rec = ctl.fail(int(g))
            alive[g] = False
            assert rec.capacity == (ctl.capacity if not rec.wiped_out else rec.capacity)
            if rec.wiped_out:
                assert capacity_maxflow(pl, alive, m) == WIPED_OUT
                break
            assert rec.capacity == capacity_maxflow(pl, alive, m)
            ctl.check_schedule()
            if rec.phase == 2:  # the other backend finds the same least number of moves from the same state
                other = MicrobatchController(pl, m, solver="networkx")
                other.alive = ctl.alive.copy()
                alloc = other._mcmf(rec.capacity, before, other.alive[other.holders])
                assert int(np.maximum(alloc - before, 0).sum()) == rec.moved
            del state_alive


def test_controller_with_one_microbatch_matches_rectlr_depths():
    from spare_jax.rectlr.reorder import replay
    from spare_jax.rectlr.reorder_mb import replay_microbatches

    pl = make_placement("stacked", 20, 4)
    trace = list(np.random.default_rng(1).permutation(20))
    a, _ = replay(pl, trace)
    b, _ = replay_microbatches(pl, trace, 1)
    assert [x.depth for x in a] == [x.capacity for x in b]


# --- proactive restart: the pool estimate against a brute-force walk ----------------------------------------

def _brute_restart_epochs(n, r, m, d_max, epochs, seed, mtbf):
    """Independent walk: exponential failure times, capacity by max-flow after each failure, the epoch ends
    at the wipe-out or when the depth reaches d_max; returns (U, voluntary, segments [(t0, t1, depth)])."""
    rng = np.random.default_rng(seed)
    pl = make_placement("stacked", n, r)
    out = []
    for _ in range(epochs):
        t = np.sort(rng.exponential(mtbf, n))
        order = rng.permutation(n)
        alive = np.ones(n, bool)
        segs, start, depth = [], 0.0, 1.0
        for k in range(n):
            alive[order[k]] = False
            c = capacity_host(pl, alive, m)  # the matcher (itself checked against max-flow above)
            if c == WIPED_OUT:
                segs.append((start, t[k], depth))
                out.append((t[k], False, segs))
                break
            if c / m != depth:
                segs.append((start, t[k], depth))
                start, depth = t[k], c / m
                if depth >= d_max:
                    out.append((t[k], True, segs))
                    break
    return out


def _brute_ttt(walk, tau, cfg):
    period = tau + cfg.ckpt_cost_min

    def compute(x):
        return np.floor(x / period) * tau + np.minimum(x % period, tau)

    ys, cyc = [], []
    for up, vol, segs in walk:
        upto = up if vol else math.floor(up / period) * period
        ys.append(sum((compute(min(b, upto)) - compute(min(a, upto))) / d for a, b, d in segs))
        cyc.append(up + (cfg.ckpt_cost_min if vol else 0.0) + cfg.restart_min)
    ys, cyc = np.array(ys), np.array(cyc)
    ratio = cyc.mean() / ys.mean()
    se = math.sqrt(np.var(cyc - ratio * ys, ddof=1) / ys.size) / ys.mean()
    return cfg.work_hours * 60 * ratio, cfg.work_hours * 60 * se


@pytest.mark.slow
def test_proactive_restart_pool_agrees_with_a_brute_force_walk():
    from spare_jax.ttt import Training
    from spare_jax.ttt.montecarlo import sample_epochs_iid
    from spare_jax.ttt.epochs import apply_restart_depth
    from spare_jax.ttt.pool import pool_ttt

    n, r, m, d_max = 12, 3, 2, 2.0  # about 73% of the epochs end voluntarily
    model = FailureModel()
    cfg = Training(restart_min=20.0)
    tau = 60.0
    cluster = Cluster(n, model, Scenario(microbatches=m))
    pool = apply_restart_depth(sample_epochs_iid(cluster, "spare", r, Sampling(3000, 4)), d_max)
    ttt, se, _ = pool_ttt(pool, [tau], cfg, n * model.gpus_per_group)
    walk = _brute_restart_epochs(n, r, m, d_max, 1200, 9, model.group_mtbf_min)
    b_ttt, b_se = _brute_ttt(walk, tau, cfg)
    assert abs(ttt[0] - b_ttt) < 4 * math.hypot(se[0], b_se), (ttt[0], se[0], b_ttt, b_se)
    vol_pool = pool.voluntary.mean()
    vol_walk = np.mean([v for _, v, _ in walk])
    assert abs(vol_pool - vol_walk) < 4 * math.sqrt(vol_walk * (1 - vol_walk) * (1 / 3000 + 1 / 1200))
    # no restart: apply_restart_depth(None) is the identity
    base = sample_epochs_iid(cluster, "spare", r, Sampling(200, 4))
    assert apply_restart_depth(base, None) is base


def test_level_depths():
    assert level_depths(3, 1) == [1.0, 2.0, 3.0]
    assert level_depths(3, 2) == [1.0, 1.5, 2.0, 2.5, 3.0]
    np.testing.assert_allclose(theory.level_depths(4, 3), np.array(level_depths(4, 3)))


# --- the command line ----------------------------------------------------------------------------------------

def _cli(args, capsys):
    from spare_jax.cli import main

    code = main(args + ["--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args,needle", [
    (["overhead", "-N", "20", "-r", "3", "--microbatches", "0"], "--microbatches"),
    (["overhead", "-N", "20", "-r", "3", "--microbatches", "2.5"], "--microbatches"),
    (["wipeout", "-N", "20", "-r", "3", "--microbatches", "4"], "unrecognized"),  # does not apply: refused
    (["ttt", "-N", "20", "-r", "3", "--restart-depth", "1"], "--restart-depth"),
    (["ttt", "-N", "20", "-r", "4", "--scheme", "rep", "--restart-depth", "2"], "--restart-depth"),
    (["ttt", "-N", "20", "-r", "4", "--scheme", "rep", "--microbatches", "2"], "--microbatches"),
    (["optimize", "-N", "20", "--microbatches", "1,,2"], "--microbatches"),
    (["optimize", "-N", "20", "--restart-depth", "0.5"], "--restart-depth"),
    (["reorder", "-N", "12", "-r", "3", "--failed", "1,2", "--microbatches", "2", "--solver", "scipy"], "scipy"),
])
def test_bad_microbatch_flags_are_refused(args, needle, capsys):
    code, out, err = _cli(args, capsys)
    assert code == 2 and out == "", (code, out, err)
    assert needle in err, err


@pytest.mark.slow
def test_overhead_cli_with_microbatches(capsys):
    code, out, err = _cli(["overhead", "-N", "24", "-r", "3", "--microbatches", "2", "--trials", "1000", "--json"],
                          capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["microbatches"] == 2
    assert abs(res["z_score"]) < 4
    assert set(res["depth_at_wipeout"]) <= {"1", "1.5", "2", "2.5", "3"}
    assert res["theory_overhead"] < theory.overhead_theory("stacked", 24, 3)["overhead"]


def test_reorder_cli_with_microbatches(capsys):
    code, out, err = _cli(["reorder", "-N", "12", "-r", "3", "--failed", "3,4,7", "--microbatches", "4", "--json"],
                          capsys)
    assert code == 0, err
    res = json.loads(out)
    pl = make_placement("stacked", 12, 3)
    alive = np.ones(12, bool)
    alive[[3, 4, 7]] = False
    assert res["capacity"] == capacity_maxflow(pl, alive, 4) and res["depth"] == res["capacity"] / 4
