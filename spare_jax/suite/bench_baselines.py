"""The baselines ``bench`` measures the JAX kernels against (docs/performance.md#spare-jax-bench): a vectorised
NumPy wipe-out and depth-threshold computation, a per-event SimPy wipe-out simulation and a plain NumPy event
loop for epochs with repair, each a straightforward implementation of the same model."""

from __future__ import annotations

import math

import numpy as np

from ..model.placement import Placement


# --------------------------------------------------------------------------------------------------------
# NumPy references


def numpy_wipeout(placement: Placement, trials: int, rng: np.random.Generator) -> np.ndarray:
    """Straightforward vectorised NumPy: T per trial for ``trials`` epochs."""
    times = rng.exponential(1.0, size=(trials, placement.groups))
    loss = times[:, placement.holders].max(axis=2)  # (trials, shards)
    wipe = loss.min(axis=1)
    return (times <= wipe[:, None]).sum(axis=1)


def _np_feasible(alive, d, r):
    """NumPy queue test (cumulative sums and maxima), ``alive``: bool[..., N], ``d``: int[...]."""
    n = alive.shape[-1]
    a2 = np.concatenate([alive, alive], axis=-1).astype(np.int32)
    prefix = np.concatenate([np.zeros(a2.shape[:-1] + (1,), np.int32), np.cumsum(a2, axis=-1)], axis=-1)
    q = d[..., None] * prefix - np.arange(2 * n + 1)
    run_max = np.maximum.accumulate(q, axis=-1)
    ok = np.all(q[..., r:] - run_max[..., : 2 * n + 1 - r] >= -(r - 1), axis=-1)
    return ok & (d * prefix[..., n] >= n)


def numpy_depth_thresholds(placement: Placement, trials: int, rng: np.random.Generator):
    """NumPy version of the overhead kernel's core: T and K_d (d = 2..r-1) per trial."""
    n, r = placement.groups, placement.redundancy
    times = rng.random((trials, n))
    t_count = numpy_wipeout_from_times(placement, times)
    srt = np.sort(times, axis=1)
    ds = np.arange(2, r)
    ub = (n - (n + ds - 1) // ds) + 1
    lo = np.zeros((trials, ds.size), np.int64)
    hi = np.minimum(t_count[:, None], ub[None, :])
    for _ in range(max(1, math.ceil(math.log2(n + 1)))):
        mid = (lo + hi) // 2
        thr = np.take_along_axis(srt, np.maximum(mid, 1) - 1, axis=1)
        alive = times[:, None, :] > thr[:, :, None]
        ok = _np_feasible(alive, np.broadcast_to(ds, mid.shape), r)
        active = hi - lo > 1
        lo = np.where(active & ok, mid, lo)
        hi = np.where(active & ~ok, mid, hi)
    return t_count, hi


def numpy_wipeout_from_times(placement, times):
    loss = times[:, placement.holders].max(axis=2)
    return (times <= loss.min(axis=1)[:, None]).sum(axis=1)


# --------------------------------------------------------------------------------------------------------
# SimPy discrete-event simulation


def simpy_wipeout(placement: Placement, trials: int, seed: int = 0) -> np.ndarray:
    """One SimPy environment per epoch: N group processes fail at exponential times; T per trial."""
    import simpy

    rng = np.random.default_rng(seed)
    out = np.zeros(trials, dtype=np.int64)
    shards_of = [list(map(int, row)) for row in placement.stack]
    for trial in range(trials):
        env = simpy.Environment()
        alive_holders = np.full(placement.groups, placement.redundancy, dtype=np.int64)
        state = {"failed": 0}
        wiped = env.event()

        def group(env, g, ttf):
            yield env.timeout(ttf)
            if wiped.triggered:
                return
            state["failed"] += 1
            for j in shards_of[g]:
                alive_holders[j] -= 1
                if alive_holders[j] == 0 and not wiped.triggered:
                    wiped.succeed(state["failed"])

        for g, ttf in enumerate(rng.exponential(1.0, placement.groups)):
            env.process(group(env, g, ttf))
        env.run(until=wiped)
        out[trial] = wiped.value
    return out


def repair_events_numpy(placement: Placement, trials: int, group_mtbf_min: float, repair, rng):
    """A plain NumPy event loop for repair without a global restart (the baseline of ``bench_repair``).

    One epoch at a time; per event one ``argmin`` over the N groups' next times (an up group's failure, a
    down group's rejoin), a fresh exponential clock at a rejoin, a repair draw at a failure, and the
    wipe-out test over the r shards of the failed group. Returns ``(uptime, failures, events)`` arrays.
    """
    n = placement.groups
    shard_holders = placement.holders[placement.stack]  # (N, r, r): holders of each shard of each group
    d = repair.repair_time_min
    m = math.log(d) - 0.5 * repair.sigma ** 2
    uptime = np.zeros(trials)
    failures = np.zeros(trials, np.int64)
    events = np.zeros(trials, np.int64)
    for k in range(trials):
        next_t = rng.exponential(group_mtbf_min, n)
        down = np.zeros(n, bool)
        nf = ne = 0
        while True:
            i = int(next_t.argmin())
            t = next_t[i]
            ne += 1
            if down[i]:
                down[i] = False
                next_t[i] = t + rng.exponential(group_mtbf_min)
                continue
            down[i] = True
            nf += 1
            if down[shard_holders[i]].all(axis=1).any():
                break
            rep = d if repair.law == "fixed" else (rng.exponential(d) if repair.law == "exp"
                                                   else math.exp(m + repair.sigma * rng.standard_normal()))
            next_t[i] = t + rep
        uptime[k], failures[k], events[k] = t, nf, ne
    return uptime, failures, events
