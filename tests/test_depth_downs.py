"""The whole-run kernel's depth from each run's sorted list of down groups
(``kernels.depth.least_capacity_from_downs``) against the queue test on the down set
(``least_capacity_stacked``): every down set at small N, random ones at N = 40 kept up to date event by
event, and whole runs whose lists overflow (the down set then serves) equal to runs that never use the list."""

import dataclasses
import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
from spare_jax.kernels import run as runmod
from spare_jax.kernels.run_driver import run_each
from spare_jax.model.placement import make_placement
from spare_jax.kernels.depth import (
    DOWN_LIST_PAD, bisect_steps, capacity_host, down_list_insert, down_list_of, down_list_remove, least_capacity_from_downs,
    least_capacity_stacked)


@functools.lru_cache(maxsize=None)
def _both(n, k_max):
    """Both capacities, r and m traced (as the whole-run kernel gives them): one compile per (N, list)."""
    @jax.jit
    def fn(down, r, m, steps):
        listed = down_list_of(down, k_max)
        count = down.sum(axis=1, dtype=jnp.int32)
        return least_capacity_stacked(down, r, m, steps), least_capacity_from_downs(listed, count, n, r, m, True)
    return lambda down, r, m: fn(down, np.int32(r), np.int32(m), np.int32(bisect_steps(r, m)))


def test_capacity_from_the_down_list_equals_the_queue_test_on_every_down_set():
    """Every down set at N = 9, r and m traced, against the queue test with r and m compiled in (the form
    the epoch kernel uses) and, at r = 3, m = 2, against the host matcher."""
    n = 9
    masks = np.array(list(itertools.product([False, True], repeat=n)))
    static = jax.jit(lambda down: least_capacity_stacked(down, 5, 3))(jnp.asarray(masks))
    for r in (2, 3, 5, 8):
        for m in (1, 3, 8):
            ref, new = (np.asarray(x) for x in _both(n, n)(jnp.asarray(masks), r, m))
            bad = np.nonzero(ref != new)[0]
            assert bad.size == 0, (n, r, m, masks[bad[:3]].astype(int), ref[bad[:3]], new[bad[:3]])
            if (r, m) == (5, 3):
                np.testing.assert_array_equal(ref, np.asarray(static))
            if (r, m) == (3, 2):
                pl = make_placement("stacked", n, r)
                for i in range(0, len(masks), 7):
                    assert ref[i] == capacity_host(pl, ~masks[i], m), masks[i].astype(int)
    assert (ref == 0).any() and (ref > 8).any()  # wipe-outs and depths above 1 were both checked


def test_down_list_kept_event_by_event_equals_the_list_of_the_down_set():
    """Insert a failed group, remove a rejoined one: the list stays the sorted down set, and the capacity
    from it stays the queue test's (N = 40, r = 3, m = 4, 64 runs, 200 events each)."""
    n, k_max, runs = 40, 12, 64
    rng = np.random.default_rng(1)
    step = jax.jit(lambda dl, g, ins, rem: down_list_remove(down_list_insert(dl, g, ins), g, rem))
    both_rm = _both(n, k_max)
    both = lambda down: both_rm(down, 3, 4)  # noqa: E731
    cap = jax.jit(lambda dl, cnt: least_capacity_from_downs(dl, cnt, n, 3, 4))
    down = np.zeros((runs, n), bool)
    dl = jnp.full((runs, k_max), DOWN_LIST_PAD, jnp.int32)
    deepest = 0
    for _ in range(200):
        g = rng.integers(0, n, runs)
        was = down[np.arange(runs), g]
        ins = ~was & (down.sum(axis=1) < k_max)
        dl = step(dl, jnp.asarray(g, jnp.int32), jnp.asarray(ins), jnp.asarray(was))
        down[np.arange(runs)[ins], g[ins]] = True
        down[np.arange(runs)[was], g[was]] = False
        np.testing.assert_array_equal(np.asarray(dl), np.asarray(down_list_of(jnp.asarray(down), k_max)))
        ref = np.asarray(both(jnp.asarray(down))[0])
        np.testing.assert_array_equal(ref, np.asarray(cap(dl, jnp.asarray(down.sum(axis=1), jnp.int32))))
        deepest = max(deepest, int(ref.max()))
    assert deepest > 4  # some state deeper than 1


def test_runs_whose_down_lists_overflow_equal_runs_from_the_down_set(monkeypatch):
    """A list of 2 overflows in most steps (about 5 of 24 groups down, domains too): the kernel falls back to
    the down set there and rebuilds the list when it fits again. The runs equal, bit for bit, the same runs
    from the down set alone (no list)."""
    from spare_jax.model.cluster import Sampling
    from spare_jax.reference.simpyrun import bench_setup

    n = 24
    setup = dataclasses.replace(
        bench_setup(n, 4, 2), group_mtbf_min=(150.0,) * n, repair_time_min=30.0, work_min=600.0,
        domains=((tuple(i // 4 for i in range(n)), 900.0),), spares=3, hardware_repair_min=200.0)
    sampling = Sampling(count=64, seed=2, chunk_size=64)
    from spare_jax.kernels import run_rate

    monkeypatch.setattr(run_rate, "DOWN_LIST", 2)  # the state's list length (the rate part's, read off the state)
    runmod.jitted_run_kernel.cache_clear()
    short = run_each(setup, sampling)
    monkeypatch.setattr(runmod, "uses_down_list", lambda shape: False)
    runmod.jitted_run_kernel.cache_clear()
    plain = run_each(setup, sampling)
    runmod.jitted_run_kernel.cache_clear()
    assert plain["wipeouts"].sum() > 0 and plain["failures"].mean() > 20
    for key in plain:
        np.testing.assert_array_equal(short[key], plain[key], err_msg=key)
