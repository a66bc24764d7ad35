"""Self-checks of the independent micro-batch reference (tests/reference_microbatch.py).

* c* from Hall's condition on arcs (``cmin_hall``), from the linear-time unrolled form
  (``cmin_unrolled``) and, for ``block``, per block (``cmin_block``) equal the max-flow c* on
  every failure subset of small rings, and on random subsets of larger ones;
* for m = 1, c* equals a search over every assignment of shards to holders (no flow at all);
* the subset formula for the exact overhead equals enumeration of all failure orders;
* the incremental per-trial path equals c* recomputed from scratch at every step;
* the Monte Carlo agrees with the exact small-N values within 4 standard errors.
Every seed is fixed.
"""

import itertools
import math

import numpy as np
import pytest

import reference_microbatch as rm

Z = 4.0


def _masks(n):
    for mask in range(1, 1 << n):           # at least one group down; the all-up state is below
        yield np.array([not (mask >> g) & 1 for g in range(n)], dtype=bool)


@pytest.mark.parametrize("n, r, m", [(7, 3, 1), (7, 3, 2), (7, 3, 3), (8, 2, 4), (6, 6, 2),
                                     (5, 1, 3)])
def test_stacked_hall_equals_maxflow_on_every_subset(n, r, m):
    H = rm.holders_table(n, r, "stacked")
    assert rm.cmin_hall(n, r, np.ones(n, dtype=bool), m) == m
    checked = 0
    for alive in _masks(n):
        if not alive.any():
            assert rm.cmin_hall(n, r, alive, m) is None
            continue
        want = rm.cmin_bruteforce(H, alive, m)
        assert rm.cmin_hall(n, r, alive, m) == want, alive.astype(int)
        assert rm.cmin_unrolled(n, r, alive, m) == want, alive.astype(int)
        checked += want is not None
    assert checked > 0 or r == 1


@pytest.mark.parametrize("n, r, m", [(6, 3, 2), (6, 2, 3), (8, 4, 1)])
def test_block_formula_equals_maxflow_on_every_subset(n, r, m):
    H = rm.holders_table(n, r, "block")
    for alive in _masks(n):
        want = rm.cmin_bruteforce(H, alive, m) if alive.any() else None
        assert rm.cmin_block(n, r, alive, m) == want, alive.astype(int)


@pytest.mark.parametrize("n, r, m, seed", [(20, 4, 3, 1), (15, 5, 2, 2), (24, 3, 5, 3)])
def test_stacked_hall_equals_maxflow_on_random_subsets(n, r, m, seed):
    rng = np.random.default_rng(seed)
    H = rm.holders_table(n, r, "stacked")
    done = 0
    while done < 60:
        k = int(rng.integers(1, n))
        alive = np.ones(n, dtype=bool)
        alive[rng.choice(n, size=k, replace=False)] = False
        want = rm.cmin_bruteforce(H, alive, m)
        if want is None:
            assert rm.cmin_hall(n, r, alive, m) is None
            assert rm.cmin_unrolled(n, r, alive, m) is None
            continue
        assert rm.cmin_hall(n, r, alive, m) == want
        assert rm.cmin_unrolled(n, r, alive, m) == want
        done += 1


def _cmin_assignments(n, r, alive, m):
    """m = 1 only: the least max load over every choice of one alive holder per shard."""
    assert m == 1
    H = rm.holders_table(n, r, "stacked")
    choices = [[int(g) for g in H[j] if alive[g]] for j in range(n)]
    if any(not ch for ch in choices):
        return None
    best = n
    for pick in itertools.product(*choices):
        best = min(best, int(np.bincount(pick, minlength=n).max()))
    return best


def test_m1_overhead_exact_equals_assignment_search():
    n, r = 7, 3
    a = rm.overhead_exact_small(n, r, 1)
    b = rm.overhead_exact_small(n, r, 1, cmin_fn=_cmin_assignments)
    for key in ("overhead", "time_avg_depth", "mean_uptime", "mean_work", "mean_T"):
        assert a[key] == pytest.approx(b[key], rel=1e-12)


@pytest.mark.parametrize("n, r, m, placement", [(7, 3, 1, "stacked"), (7, 3, 2, "stacked"),
                                                (7, 2, 3, "stacked"), (6, 3, 2, "block")])
def test_subset_formula_equals_order_enumeration(n, r, m, placement):
    a = rm.overhead_exact_small(n, r, m, placement)
    b = rm.overhead_exact_orders(n, r, m, placement)
    for key in ("overhead", "time_avg_depth", "mean_uptime", "mean_work", "mean_T"):
        assert a[key] == pytest.approx(b[key], rel=1e-10)


def test_exact_limits():
    # r = 1: the first failure is the wipe-out; only the all-up state counts (depth 1).
    ex = rm.overhead_exact_small(6, 1, 3)
    assert ex["overhead"] == pytest.approx(1.0) and ex["mean_T"] == pytest.approx(1.0)
    assert ex["mean_uptime"] == pytest.approx(1.0 / 6)
    # stacked E[T] for N = 7, r = 3 from the survival of k-subsets (no 3 cyclically consecutive).
    ex = rm.overhead_exact_small(7, 3, 2)
    assert ex["survival"][:6] == pytest.approx([1, 1, 1, 28 / 35, 14 / 35, 0])
    # more micro-batches never increase the depth (c*(2m) <= 2 c*(m)): the overhead falls
    o = [rm.overhead_exact_small(9, 3, m)["overhead"] for m in (1, 2, 4)]
    assert o[0] >= o[1] >= o[2] > 1.0


def test_cstar_monotone_in_failed_set():
    n, r, m = 8, 3, 2
    c = {}
    for mask in range(1 << n):
        alive = np.array([not (mask >> g) & 1 for g in range(n)], dtype=bool)
        c[mask] = rm.cmin_hall(n, r, alive, m) if alive.any() else None
    for mask, v in c.items():
        for g in range(n):
            if v is None or mask >> g & 1:
                continue
            w = c[mask | 1 << g]
            assert w is None or w >= v


@pytest.mark.parametrize("n, r, m, placement", [(40, 4, 3, "stacked"), (31, 2, 2, "stacked"),
                                                (36, 4, 3, "block")])
def test_incremental_path_equals_recomputation(n, r, m, placement):
    assert rm.crosscheck_paths(n, r, m, 15, seed=5, placement=placement) > 15


@pytest.mark.parametrize("n, r, m, placement, trials", [
    (8, 3, 2, "stacked", 20000),
    pytest.param(9, 3, 3, "stacked", 20000, marks=pytest.mark.slow),
    pytest.param(8, 2, 1, "stacked", 20000, marks=pytest.mark.slow),
    pytest.param(9, 3, 1, "stacked", 20000, marks=pytest.mark.slow),
    (9, 3, 2, "block", 6000),
])
def test_simulation_matches_exact(n, r, m, placement, trials):
    ex = rm.overhead_exact_small(n, r, m, placement)
    sim = rm.simulate_overhead_reference(n, r, m, trials, seed=100 + 10 * n + m,
                                         placement=placement)
    for key in ("overhead", "time_avg_depth", "mean_uptime", "mean_work", "mean_T"):
        se = sim[key + "_stderr"]
        assert se > 0
        z = (sim[key] - ex[key]) / se
        assert abs(z) < Z, (key, sim[key], se, ex[key], z)
    assert sum(sim["final_depth_counts"]) == trials


def test_simulation_r1_and_rep_bounds():
    sim = rm.simulate_overhead_reference(10, 1, 4, 50, seed=1)
    assert (sim["T"] == 1).all() and sim["overhead"] == 1.0
    assert math.isclose(sim["mean_uptime"], 0.1)
    # depth never exceeds r (each alive group computes at most its whole stack)
    sim = rm.simulate_overhead_reference(30, 3, 2, 200, seed=2)
    assert (sim["c_final"] <= 3 * 2).all() and 1.0 < sim["overhead"] < 3.0


@pytest.mark.parametrize("n, r", [(7, 3), (9, 3), (12, 4), (10, 1), (8, 8), (11, 2)])
def test_stacked_survival_closed_count_equals_enumeration(n, r):
    got = rm.stacked_survival_exact(n, r)
    want = rm.overhead_exact_small(n, r, 1)["survival"]
    assert got == pytest.approx(want, abs=1e-15)


def test_stored_reference_numbers_are_consistent():
    """tests/data/microbatch_reference.json: E[T] and E[U] agree with the exact count (4 SE), the
    fields the acceptance test reads are there, and a fresh short run (another seed) of the
    N = 64, m = 2 case agrees with the stored value within 4 combined standard errors."""
    import json
    import os
    path = os.path.join(os.path.dirname(__file__), "data", "microbatch_reference.json")
    with open(path) as f:
        cases = json.load(f)["cases"]
    assert {"N600_r8_m1_stacked", "N600_r8_m8_stacked", "N64_r4_m2_stacked"} <= set(cases)
    for case in cases.values():
        for key in ("N", "r", "m", "trials", "seed", "overhead", "overhead_stderr",
                    "time_avg_depth", "time_avg_depth_stderr", "mean_T", "command"):
            assert key in case
        eu, et = rm.stacked_uptime_T_exact(case["N"], case["r"])
        assert abs(case["mean_T"] - et) < Z * case["mean_T_stderr"]
        assert abs(case["mean_uptime"] - eu) < Z * case["mean_uptime_stderr"]
        assert 1.0 < case["overhead"] < case["time_avg_depth"] <= case["r"]
    ref = cases["N64_r4_m2_stacked"]
    sim = rm.simulate_overhead_reference(64, 4, 2, 3000, seed=12345)
    se = math.hypot(sim["overhead_stderr"], ref["overhead_stderr"])
    assert abs(sim["overhead"] - ref["overhead"]) < Z * se
