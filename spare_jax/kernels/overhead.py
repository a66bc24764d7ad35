r"""Depth trajectories and the compute overhead of SPARe (docs/model.md#failures-wipe-out-depth-overhead,
docs/model.md#kernels-and-random-numbers).

Per trial (one epoch: restart -> wipe-out) the kernel finds, for every depth d, the failure count

.. math::  K_d = \min\{k : d^*(S_k) > d\} \wedge T,

where ``S_k`` is the set of the first k failures (d* never decreases as failures accumulate, so a binary
search over k works; ``K_0 = 0``, ``K_1 = 1``, ``K_r = T``). The depth is d while ``K_{d-1} <= k < K_d``.
Useful work accrues at rate ``1/d``:

.. math::  U = \sum_{k<T} s_k, \qquad W = \sum_{d=1}^{r} \frac{1}{d} \sum_{k=K_{d-1}}^{K_d - 1} s_k,
           \qquad \Omega = E[U] / E[W],

with ``s_k`` the sojourn with k groups down: its *expected* value ``1/((N-k) lambda)`` (exponential) or the
*sampled* gap between order statistics of the failure times (any distribution). Both are reported and must
agree for exponential failures. The time-averaged depth is ``E[sum_k s_k d_k] / E[U]``.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np


from . import exact_sums
from .driver import Execution, Reduction, as_uint32_key_words, run_reduced
from .host_sums import ExactSum
from ..model.cluster import Sampling
from ..model.failures import FailureModel
from ..model.placement import Placement, check_int
from ..model.prng import WIPEOUT_STREAM, times_from_bits, trial_bits
from .wipeout import wipeout_from_bits
from ..results import Result


def _feasible_block(alive, d, redundancy: int, microbatches: int = 1):
    """``alive``: ``bool[..., N]``, ``d``: broadcastable to ``alive.shape[:-1]`` (the capacity in micro-batches
    when ``microbatches > 1``)."""
    n, m = alive.shape[-1], int(microbatches)
    surv = alive.reshape(alive.shape[:-1] + (n // redundancy, redundancy)).sum(axis=-1)
    d = jnp.asarray(d)
    return jnp.all(d[..., None] * surv >= redundancy * m, axis=-1) & (d * alive.sum(axis=-1) >= n * m)


def _feasible_stacked_lanes(bits, thresholds, ds, redundancy: int, microbatches: int = 1, sorted_bits=None):
    """Queue test for many (trial, depth) lanes at once: lane (c, i) has failed set
    ``bits[c] <= thresholds[c, i]`` and depth ``ds[i]`` (or ``ds[c, i]``; a capacity in micro-batches when
    ``microbatches`` m > 1: the queue gains m per group and a survivor serves it). The Lindley recursion of
    ``depth.feasible_stacked`` runs as one ``lax.scan`` over two laps of the ring, all lanes in parallel; it
    is equivalent to the cumulative-sum/maximum form there (tested) and faster on CPU (see the README's
    performance notes). The scan's state is lane-major (``[lanes, C]``): the trials are the minor axis, so a
    step vectorises over them however few the lanes. The survivors for the capacity test are counted outside
    the scan, by binary search in ``sorted_bits`` (each trial's ranks sorted) when given.
    """
    n = bits.shape[1]
    m = int(microbatches)
    thr = thresholds.T  # (lanes, C)
    ds = jnp.asarray(ds)
    ds = jnp.broadcast_to(ds if ds.ndim == 2 else ds[None, :], thresholds.shape)
    serve = (m - ds).T.astype(jnp.int32)  # q + m - d for an alive position
    limit = (redundancy - 1) * m
    cols = jnp.concatenate([bits.T, bits.T], axis=0)  # (2N, C): ring positions, two laps

    def step(carry, col):
        q, bad = carry
        q = jnp.where(col[None, :] > thr, jnp.maximum(q + serve, 0), q + m)
        return (q, bad | (q > limit)), None

    (_, bad), _ = jax.lax.scan(step, (jnp.zeros(thr.shape, jnp.int32), jnp.zeros(thr.shape, bool)), cols)
    if sorted_bits is None:
        alive = (bits[:, None, :] > thresholds[:, :, None]).sum(axis=-1, dtype=jnp.int32)
    else:
        alive = n - jax.vmap(lambda s, t: jnp.searchsorted(s, t, side="right"))(sorted_bits, thresholds)
    return ~bad.T & (ds * alive >= n * m)


SUBLEVEL_SLOTS = 16  # capacities of a trial searched per step of the sub-level search
SUBLEVEL_SHRINK = 2  # the sub-level search goes on with the trials still searching once they are 1/2
SUBLEVEL_MIN_ROWS = 16


def _put(x, chosen, values):
    """``x`` (``[C, L]``) with the entries that ``chosen`` (one-hot ``[C, S, L]``) picks replaced by
    ``values`` (``[C, S]``)."""
    hit = chosen.any(axis=1)
    return jnp.where(hit, (chosen * values[:, :, None]).sum(axis=1, dtype=x.dtype), x)


def level_depths(redundancy: int, microbatches: int = 1) -> list[float]:
    """The depth of each level 1..L of ``depth_thresholds`` (``L = (r - 1) m + 1``): level i is capacity
    ``m + i - 1`` micro-batches per group, depth ``(m + i - 1) / m``; for m = 1 the depths 1..r."""
    m = int(microbatches)
    return [(m + i) / m for i in range((redundancy - 1) * m + 1)]


def depth_thresholds(bits, t_count, placement: Placement, microbatches: int = 1):
    """``int32[C, L + 1]``: ``K_0 .. K_L`` per trial (``bits``: ``uint32[C, N]`` failure ranks, ``T``), the
    failure count at which each level stops being feasible; level i (``level_depths``) holds on
    ``K_{i-1} <= k < K_i``. With one micro-batch per shard (m = 1) the levels are the depths 1..r
    (``L = r``); with m they are the capacities m .. r m (``L = (r - 1) m + 1``).

    For each depth d in 2..r-1 a binary search over k in ``[0, min(T, floor(N - N/d) + 1)]`` (beyond the
    second bound ``d * alive < N``), ``ceil(log2(N + 1))`` fixed steps, vectorised over trials and depths.
    With m > 1 the integer depths come first (capacity ``d m`` is feasible iff depth d is:
    ``depth.py``), then every capacity c strictly between ``(d-1) m`` and ``d m`` is searched inside the
    bracket ``[K_{(d-1)m} - 1, K_{dm}]`` its integer neighbours give (and below the capacity bound
    ``c (N - k) >= N m``). Most of these brackets are closed or narrow, so a step of the ``while_loop``
    bisects only the first ``SUBLEVEL_SLOTS`` still open of each trial, and every result tightens its
    neighbours (``K_c`` is nondecreasing in c: a feasible count holds for every larger capacity, an infeasible
    one for every smaller). Once at most half of the trials are still searching, those alone are gathered
    and go on (again, down to ``SUBLEVEL_MIN_ROWS``), so a few long searches do not keep the whole chunk
    busy. The result is the same bisection's, whatever the order of the probes.
    """
    n, r = placement.groups, placement.redundancy
    m = int(microbatches)
    c = bits.shape[0]
    parts = [jnp.zeros((c, 1), jnp.int32)]
    if r >= 2:
        parts.append(jnp.minimum(1, t_count)[:, None].astype(jnp.int32))
    sorted_bits = jnp.sort(bits, axis=1) if (r >= 3 or m > 1) else None

    def feasible(thr, ds, rows=(bits, sorted_bits)):
        if placement.kind == "stacked":
            return _feasible_stacked_lanes(rows[0], thr, ds, r, m, rows[1])
        alive = rows[0][:, None, :] > thr[:, :, None]
        return _feasible_block(alive, ds if ds.ndim == 2 else ds[None, :], r, m)

    def at(k, rows=(bits, sorted_bits)):
        return jnp.take_along_axis(rows[1], jnp.maximum(k, 1) - 1, axis=1)

    if r >= 3:
        parts.append(_depth_levels(t_count, n, r, m, feasible, at))
    parts.append(t_count[:, None].astype(jnp.int32))
    integer = jnp.concatenate(parts, axis=1)[:, : r + 1]
    if m == 1 or r == 1:
        return integer
    return _sublevels(integer, bits, sorted_bits, n, r, m, feasible, at)


def _depth_levels(t_count, n, r, m, feasible, at):
    """``K_2 .. K_{r-1}`` (``int32[C, r - 2]``): for each depth d in 2..r-1 the bisection over the failure
    count (``depth_thresholds``' docstring), ``ceil(log2(N + 1))`` fixed steps."""
    c = t_count.shape[0]
    ds = jnp.arange(2, r, dtype=jnp.int32)
    ub = (n - (n + ds - 1) // ds) + 1  # floor(N - N/d) + 1 in integers
    lo = jnp.zeros((c, ds.size), jnp.int32)
    hi = jnp.minimum(t_count[:, None], ub[None, :]).astype(jnp.int32)
    iters = max(1, math.ceil(math.log2(n + 1)))

    def body(_, lohi):
        lo, hi = lohi
        mid = (lo + hi) // 2
        ok = feasible(at(mid), ds * m)
        active = hi - lo > 1
        return jnp.where(active & ok, mid, lo), jnp.where(active & ~ok, mid, hi)

    _, hi = jax.lax.fori_loop(0, iters, body, (lo, hi))
    return hi


def _sublevels(integer, bits, sorted_bits, n, r, m, feasible, at):
    """The thresholds of every capacity between the integer depths' (``integer``: ``K_0 .. K_r``), searched
    inside the brackets those give, the open ones of each trial a few at a time, in phases over fewer trials
    (``depth_thresholds``' docstring); ``int32[C, L + 1]`` in level order."""
    c = bits.shape[0]
    # capacities (d-1) m + j, d = 2..r, j = 1..m-1, inside the brackets of the integer depths
    cap = np.array([(d - 1) * m + j for d in range(2, r + 1) for j in range(1, m)], np.int32)
    below = np.array([d - 1 for d in range(2, r + 1) for _ in range(1, m)])
    ub = jnp.asarray(n - (n * m + cap - 1) // cap + 1, jnp.int32)
    lo = jnp.maximum(integer[:, below] - 1, 0)
    hi = jnp.minimum(integer[:, below + 1], ub[None, :])
    lo = jnp.minimum(lo, hi)
    cap_j = jnp.asarray(cap)

    levels = cap.size
    slots = min(levels, SUBLEVEL_SLOTS)
    pick = jnp.arange(slots, dtype=jnp.int32)[:, None]  # slot p takes the p-th open capacity of its trial
    col = jnp.arange(levels, dtype=jnp.int32)

    def body2(state, rows):
        lo, hi = state
        open_ = hi - lo > 1
        rank = jnp.cumsum(open_, axis=1, dtype=jnp.int32) - 1
        chosen = open_[:, None, :] & (rank[:, None, :] == pick[None, :, :])  # (C, slots, levels), one-hot
        sel = (chosen * col).sum(axis=2, dtype=jnp.int32)
        used = chosen.any(axis=2)
        lo_s, hi_s = jnp.take_along_axis(lo, sel, axis=1), jnp.take_along_axis(hi, sel, axis=1)
        mid = (lo_s + hi_s) // 2
        ok = feasible(at(mid, rows), cap_j[sel], rows)
        lo = _put(lo, chosen, jnp.where(used & ok, mid, lo_s))
        hi = _put(hi, chosen, jnp.where(used & ~ok, mid, hi_s))
        # K_c is nondecreasing in c: a lower end holds for every larger capacity, an upper for every smaller
        return jax.lax.cummax(lo, axis=1), jax.lax.cummin(hi, axis=1, reverse=True)

    # phases: the whole chunk until at most half of its trials is still searching, then those trials
    # alone (gathered once), and so on, so that the few trials with the most probes do not keep every row busy
    sizes = [c]
    while sizes[-1] // SUBLEVEL_SHRINK >= SUBLEVEL_MIN_ROWS:
        sizes.append(sizes[-1] // SUBLEVEL_SHRINK)
    sub = hi
    index = None  # rows of the current phase in the chunk (None: all)
    rows = (bits, sorted_bits)
    for ph, size in enumerate(sizes):
        nxt = sizes[ph + 1] if ph + 1 < len(sizes) else 0

        def cond(state, nxt=nxt):
            still = jnp.any(state[1] - state[0] > 1, axis=1)
            return still.sum() > nxt

        lo, hi = jax.lax.while_loop(cond, functools.partial(body2, rows=rows), (lo, hi))
        sub = hi if index is None else sub.at[index].set(hi, mode="drop")
        if not nxt:
            break
        still = jnp.any(hi - lo > 1, axis=1)
        pos = jnp.nonzero(still, size=nxt, fill_value=size)[0]  # the trials still searching, padded
        keep = pos < size
        src = jnp.minimum(pos, size - 1)
        lo, hi = jnp.where(keep[:, None], lo[src], 0), jnp.where(keep[:, None], hi[src], 0)  # padding: closed
        rows = (rows[0][src], rows[1][src])
        index = jnp.where(keep, src if index is None else index[src], c)
    cols = [integer[:, :2]]
    for d in range(2, r + 1):
        cols.append(sub[:, (d - 2) * (m - 1): (d - 1) * (m - 1)])
        cols.append(integer[:, d: d + 1])
    return jnp.concatenate(cols, axis=1)


def row_sum(x, weights=None):
    """Sum over the last axis (each column times ``weights[i]``, Python floats rounded to float32) as a
    left-to-right chain of elementwise float32 multiplications and additions.

    ``x.sum(axis=-1)`` lowers to an XLA reduce, whose association order is unspecified and does change with
    the shape (the chunk per device): the overhead differed in the 8th digit between chunk sizes and device
    counts. A chain of elementwise additions has one IEEE result per element, whatever the shape. The
    weights are multiplications by float32 constants (``1/d`` rounded once), never divisions: XLA's SPMD
    partitioner rewrote ``seg / depth`` differently on 4 devices than on 1 (a last-bit difference in a few
    trials, tested)."""
    def col(i):
        return x[..., i] if weights is None else x[..., i] * jnp.float32(weights[i])

    total = col(0)
    for i in range(1, x.shape[-1]):
        total = total + col(i)
    return total


def overhead_kernel(words, trial_ids, placement: Placement, model: FailureModel, harmonic, microbatches: int = 1):
    """Pure kernel: per trial ``(K int32[C, L+1], stats float32[C, 7])`` (``L = r`` for one micro-batch per
    shard; ``(r - 1) m + 1`` levels with ``microbatches`` m, see ``depth_thresholds``).

    ``stats`` columns: U, W, U*depth (expected sojourns, minutes), then the same three with sampled
    sojourns, then the *level* at the wipe-out (the level just before the fatal failure: the depth for m = 1).
    ``harmonic[k] = sum_{i<k} 1/((N-i) lambda)`` (minutes, float32, length N + 1).
    """
    n, r = placement.groups, placement.redundancy
    bits = trial_bits(words, trial_ids, n, stream=WIPEOUT_STREAM)
    t_count, _ = wipeout_from_bits(bits, placement)
    thresholds = depth_thresholds(bits, t_count, placement, microbatches)
    levels = thresholds.shape[1] - 1
    times = times_from_bits(jnp.sort(bits, axis=1), model)
    times = jnp.concatenate([jnp.zeros((times.shape[0], 1), times.dtype), times], axis=1)  # t_(0) = 0
    dep = level_depths(r, microbatches)
    inv = [1.0 / d for d in dep]
    lo, hi = thresholds[:, :-1], thresholds[:, 1:]
    seg_exp = harmonic[hi] - harmonic[lo]
    seg_smp = jnp.take_along_axis(times, hi, axis=1) - jnp.take_along_axis(times, lo, axis=1)
    depth_at_wipeout = 1 + (thresholds[:, 1:levels] <= (t_count - 1)[:, None]).sum(axis=1)
    stats = jnp.stack([
        row_sum(seg_exp), row_sum(seg_exp, inv), row_sum(seg_exp, dep),
        row_sum(seg_smp), row_sum(seg_smp, inv), row_sum(seg_smp, dep),
        depth_at_wipeout.astype(jnp.float32)], axis=1)
    return thresholds, stats


def scenario_depth_path(words, trial_ids, placement: Placement, model: FailureModel, scenario):
    """The depth path of an epoch under a ``Scenario``: ``(thresholds int32[C, L+1], times float32[C, N+1],
    t_end int32[C])``, the depth d lasting from ``times[K_{d-1}]`` to ``times[K_d]`` (minutes; ``times[0] = 0``
    and every time capped at the epoch's end). Shared by ``scenario_overhead_kernel`` and the time-to-train
    epoch pools (``ttt.pool``); see ``scenario_overhead_kernel`` for the construction."""
    from ..model.prng import scenario_failure_times
    from .wipeout import shard_loss_bits

    keys, _, job_key, to_time = scenario_failure_times(words, trial_ids, placement.groups, model, scenario)
    w = shard_loss_bits(keys, placement).min(axis=1)
    ended_by_job = job_key < w
    end = jnp.minimum(w, job_key)
    t_end = (keys <= end[:, None]).sum(axis=1, dtype=jnp.int32) + ended_by_job.astype(jnp.int32)
    thresholds = depth_thresholds(keys, t_end, placement, scenario.microbatches)
    times = to_time(jnp.minimum(jnp.sort(keys, axis=1), end[:, None]))
    times = jnp.concatenate([jnp.zeros((times.shape[0], 1), times.dtype), times], axis=1)  # t_(0) = 0
    return thresholds, times, t_end


def scenario_overhead_kernel(words, trial_ids, placement: Placement, model: FailureModel, scenario):
    """Pure kernel under a ``Scenario``: the same outputs as ``overhead_kernel``, sojourns sampled.

    The failure keys in ring order come from ``prng.scenario_failure_times``; the epoch ends at
    ``e = min(w, J)`` (wipe-out or job-wide interruption). Let ``T_e`` be the index of the end in the sorted
    failure sequence: ``T`` (the groups failed by the wipe-out, a fatal domain event counting every group it
    took down) or ``T + 1`` at a job-wide end (the depth after the T failures lasts until J). The depth
    thresholds ``K_d`` are searched in ``[0, T_e]`` exactly as without a scenario, and the time of index k is
    ``min(t_(k), e)``. Without the i.i.d. law there are no expected sojourns: both column groups of ``stats``
    hold the sampled ones. Ties (a domain event fails several groups at one instant) give zero-length
    segments, so the time integrals are unaffected by where a threshold falls inside a tie.
    """
    r = placement.redundancy
    thresholds, times, t_end = scenario_depth_path(words, trial_ids, placement, model, scenario)
    levels = thresholds.shape[1] - 1
    seg = (jnp.take_along_axis(times, thresholds[:, 1:], axis=1)
           - jnp.take_along_axis(times, thresholds[:, :-1], axis=1))
    depth_at_end = 1 + (thresholds[:, 1:levels] <= (t_end - 1)[:, None]).sum(axis=1)
    dep = level_depths(r, scenario.microbatches)
    inv = [1.0 / d for d in dep]
    sums = [row_sum(seg), row_sum(seg, inv), row_sum(seg, dep)]
    return thresholds, jnp.stack(sums + sums + [depth_at_end.astype(jnp.float32)], axis=1)


@functools.lru_cache(maxsize=32)
def _jitted(placement, model, scenario=None, microbatches: int = 1):
    if scenario is None or scenario.is_default:
        return jax.jit(functools.partial(overhead_kernel, placement=placement, model=model,
                                         microbatches=microbatches))
    kernel = functools.partial(scenario_overhead_kernel, placement=placement, model=model, scenario=scenario)
    return jax.jit(lambda words, ids, harmonic: kernel(words, ids))


def harmonic_sojourns(groups: int, rate: float) -> np.ndarray:
    """``h[k] = sum_{i<k} 1/((N - i) lambda)``, k = 0..N (float64)."""
    h = np.zeros(groups + 1)
    h[1:] = np.cumsum(1.0 / ((groups - np.arange(groups)) * rate))
    return h


class ExactRatio:
    """Exact sums of (U, W) pairs (``host_sums.ExactSum``): the ratio E[U]/E[W] and its delta-method standard
    error, computed in exact rationals (no overflow at any scale, no cancellation in the variance)."""

    def __init__(self):
        self.sums = [ExactSum() for _ in range(5)]

    def add(self, u, w):
        u = np.asarray(u, np.float64)  # float32 values from the kernel: products are exact in float64
        w = np.asarray(w, np.float64)
        for s, v in zip(self.sums, (u, w, u * u, w * w, u * w)):
            s.add(v)

    def state(self):
        return [s.total for s in self.sums]

    def load(self, totals):
        for s, t in zip(self.sums, totals):
            s.total += int(t)

    def result(self, n: int):
        su, sw, suu, sww, suw = (s.fraction() for s in self.sums)
        if sw == 0:
            raise ValueError("no useful work was sampled (all epochs empty)")
        ratio = su / sw
        # sum_i (u_i - R w_i)^2 / (n - 1), exactly; then the delta method
        resid = suu - 2 * ratio * suw + ratio * ratio * sww
        var = resid / (n - 1) if n > 1 else 0
        mw = sw / n
        return float(ratio), math.sqrt(max(float(var), 0.0) / n) / float(mw), float(su / n), float(mw)


@dataclasses.dataclass
class OverheadResult(Result):
    """Monte Carlo overhead and depth statistics over ``trials`` epochs."""

    groups: int
    redundancy: int
    placement: str
    trials: int
    seed: int
    overhead: float  # expected sojourns (exponential) or sampled (other distributions)
    overhead_stderr: float
    overhead_sampled: float
    overhead_sampled_stderr: float
    time_avg_depth: float
    time_avg_depth_stderr: float
    uptime_mean_min: float
    work_mean_min: float
    depth_at_wipeout_hist: np.ndarray  # int64[L + 1]: by level (the depth for m = 1)
    threshold_mean: np.ndarray  # float64[L + 1]: E[K_i]
    distribution: str = "exponential"
    microbatches: int = 1
    processes: int = 1  # processes that ran the trials together (jax.distributed)
    trials_per_process: tuple = ()  # the trials each process's devices computed in this call

    @property
    def level_depths(self) -> list[float]:
        """Depth of levels 1..L (``depth_at_wipeout_hist[i]`` counts level i; ``level_depths(r, m)``)."""
        return level_depths(self.redundancy, self.microbatches)


def _result(placement, trials, seed, model, ratios, hist, ksum, microbatches: int = 1) -> "OverheadResult":
    """Assemble the result from the three ``ExactRatio`` (expected sojourns, sampled sojourns, depth):
    expected sojourns for exponential failures, sampled ones otherwise."""
    exp_ratio, smp_ratio, depth_ratio = ratios
    om_e, se_e, mu_e, mw_e = exp_ratio.result(trials)
    om_s, se_s, mu_s, mw_s = smp_ratio.result(trials)
    dep, dep_se, _, _ = depth_ratio.result(trials)  # E[sum s_k d_k] / E[U]
    use_exp = model.distribution == "exponential"
    return OverheadResult(placement.groups, placement.redundancy, placement.kind, trials, seed,
                          om_e if use_exp else om_s, se_e if use_exp else se_s, om_s, se_s, dep, dep_se,
                          mu_e if use_exp else mu_s, mw_e if use_exp else mw_s, hist, ksum / trials,
                          model.distribution, microbatches)


def simulate_overhead(placement: Placement, sampling: Sampling = Sampling(count=20_000), *,
                      model: FailureModel = FailureModel(), scenario=None) -> OverheadResult:
    """Monte Carlo of depth trajectories and the overhead Omega = E[uptime] / E[useful work] over
    ``sampling.count`` epochs (chunks, devices, resumable ``out_dir`` and progress from ``sampling``).

    A non-default ``scenario`` (``scenario.Scenario``) runs ``scenario_overhead_kernel`` (sampled sojourns; the epoch
    ends at the wipe-out or the first job-wide interruption). ``scenario.microbatches`` = m > 1 schedules
    micro-batches (docs/microbatches.md#how-it-works): the depth is c*/m on the levels of ``depth_thresholds``.
    """
    from ..model.scenario import Scenario

    scenario = Scenario() if scenario is None else scenario
    trials = check_int("trials", sampling.count)
    seed = check_int("seed", sampling.seed, lo=0)
    n, r = placement.groups, placement.redundancy
    scenario.check(n)
    m = scenario.microbatches
    levels = (r - 1) * m + 1
    if placement.kind not in ("stacked", "block"):
        if not scenario.is_default:
            raise ValueError("scenarios need the stacked or block placement for the overhead (no device depth "
                             "kernel for random/custom placements)")
        return _simulate_overhead_host(placement, trials, seed, model, sampling.progress, m)
    words = as_uint32_key_words(seed)
    harmonic = jnp.asarray(harmonic_sojourns(n, model.group_rate_per_min), jnp.float32)
    fn = _jitted(placement, model, None if scenario.is_default else scenario, m)
    sampled = model.distribution != "exponential" or not scenario.is_default
    params = {"kind": "overhead", "kernel": "row-sum-2", "placement": placement.kind, "groups": n, "redundancy": r,
              "trials": trials, "seed": seed, "model": dataclasses.asdict(model),
              **({} if scenario.is_default else {"scenario": repr(scenario)}),
              **({} if m == 1 else {"microbatches": m})}
    limb_keys = tuple(f"{name}_{part}" for name in _RATIOS for part in _RATIO_PARTS)
    totals, info = run_reduced(lambda aux, ids: fn(aux[0], ids, harmonic=aux[1]),
                               Reduction(_reduce_overhead(levels, sampled), _zeros_overhead(levels), limb_keys,
                                         count_bound=n), trials,
                               Execution(overhead_width(n, r, m), sampling.chunk_size, sampling.devices,
                                         desc=f"overhead N={n} r={r}" + (f" m={m}" if m > 1 else ""),
                                         progress=sampling.progress, out_dir=sampling.out_dir, params=params,
                                         bytes_per_item=8),
                               aux=(words, harmonic),
                               cache_key=("overhead", placement, model, None if scenario.is_default else scenario, m))
    if totals["bad"][0]:
        raise ValueError("a non-finite value reached an accumulation (a float32 overflow in the kernel: "
                         "the parameters are outside the range the model handles)")
    ratios = []
    for name in _RATIOS:
        ratio = ExactRatio()
        ratio.load([totals[f"{name}_{part}"] << (ExactSum.SHIFT - (exact_sums.X_UNIT_SHIFT if len(part) == 1
                                                                    else exact_sums.X2_UNIT_SHIFT))
                    for part in _RATIO_PARTS])
        ratios.append(ratio)
    hist = np.array(totals["hist"], np.int64)
    ksum = np.array(totals["ksum"], np.int64)
    return dataclasses.replace(_result(placement, trials, seed, model, ratios, hist, ksum, m),
                               processes=info["processes"], trials_per_process=tuple(info["trials_per_process"]))


def overhead_width(groups: int, redundancy: int, microbatches: int = 1) -> int:
    """Numbers per trial the overhead kernel keeps: the N r holders, and with m > 1 micro-batches the
    sub-level search's (slots x levels) probes (``depth_thresholds``), which dominate at large m: the
    default chunk shrinks with them, so that a few epochs at m = 1,024 do not compute a chunk of 65,536."""
    levels = (redundancy - 1) * (microbatches - 1)
    return groups * redundancy + (min(levels, SUBLEVEL_SLOTS) * levels if microbatches > 1 else 0)


_RATIOS = ("exp", "smp", "depth")
_RATIO_PARTS = ("u", "w", "uu", "ww", "uw")  # the order of ExactRatio.sums


def _reduce_overhead(r: int, sampled: bool):
    """Device-side statistics of a sub-chunk of ``overhead_kernel`` results (``r``: the number of levels L,
    r itself for m = 1): for each ratio the exact sums
    of u, w, u^2, w^2, u w (``exact_sums`` limbs), the histogram of the level at the wipe-out (length L + 1),
    the sums of the thresholds K_0..K_L (int32 per block: ``count_bound`` keeps them exact) and the count
    of non-finite values."""
    from .exact_sums import exact_product_sums, exact_sums_f32, histogram

    def reduce(out, valid):
        thresholds, stats = out
        cols = {"exp": (0, 1), "smp": (3, 4), "depth": (5, 3) if sampled else (2, 0)}
        res, bad = {}, jnp.int32(0)
        for name in _RATIOS:
            u, w = stats[:, cols[name][0]], stats[:, cols[name][1]]
            res[f"{name}_u"], res[f"{name}_uu"], b1 = exact_sums_f32(u, valid)
            res[f"{name}_w"], res[f"{name}_ww"], b2 = exact_sums_f32(w, valid)
            res[f"{name}_uw"], _ = exact_product_sums(u, w, valid)
            bad = bad + b1 + b2
        res["hist"] = histogram(stats[:, 6].astype(jnp.int32), valid, r + 1)
        res["ksum"] = jnp.where(valid[:, None], thresholds, 0).sum(axis=0, dtype=jnp.int32)
        res["bad"] = bad[None]
        return res

    return reduce


def _zeros_overhead(r: int):
    def zeros():
        res = {f"{name}_{part}": jnp.zeros(exact_sums.X_LIMBS if len(part) == 1 else exact_sums.X2_LIMBS, jnp.uint32)
               for name in _RATIOS for part in _RATIO_PARTS}
        res.update(hist=jnp.zeros(r + 1, jnp.int32), ksum=jnp.zeros(r + 1, jnp.int32), bad=jnp.zeros(1, jnp.int32))
        return res

    return zeros


def _simulate_overhead_host(placement, trials, seed, model, progress, microbatches: int = 1):
    """``random``/``custom`` placements: depth by the host matcher (slow; for modest trial counts)."""
    from .depth import capacity_host
    from .progress import Progress

    m = int(microbatches)
    n, r = placement.groups, placement.redundancy
    words = as_uint32_key_words(seed)
    harmonic = harmonic_sojourns(n, model.group_rate_per_min)
    exp_ratio, smp_ratio, depth_ratio = ExactRatio(), ExactRatio(), ExactRatio()
    levels = (r - 1) * m + 1
    hist = np.zeros(levels + 1, np.int64)
    ksum = np.zeros(levels + 1, np.int64)
    bar = Progress(trials, f"overhead (host matcher) N={n} r={r}", enabled=progress)
    for start in range(0, trials, 256):
        ids = jnp.arange(start, min(trials, start + 256), dtype=jnp.uint32)
        bits = np.asarray(trial_bits(words, ids, n, stream=WIPEOUT_STREAM))
        t_counts = np.asarray(wipeout_from_bits(jnp.asarray(bits), placement)[0])
        for b, t in zip(bits, t_counts):
            order = np.argsort(b)
            alive = np.ones(n, bool)
            depths = []
            for k in range(int(t)):
                depths.append(capacity_host(placement, alive, m) - m + 1)  # the level
                alive[order[k]] = False
            level = np.array(depths, dtype=np.int64)
            depths = (level + m - 1) / m
            times = np.concatenate([[0.0], np.sort(np.asarray(times_from_bits(jnp.asarray(b), model), np.float64))])
            s_exp = np.diff(harmonic[: int(t) + 1])
            s_smp = np.diff(times[: int(t) + 1])
            exp_ratio.add([s_exp.sum()], [(s_exp / depths).sum()])
            smp_ratio.add([s_smp.sum()], [(s_smp / depths).sum()])
            s = s_exp if model.distribution == "exponential" else s_smp
            depth_ratio.add([(s * depths).sum()], [s.sum()])
            hist[int(level[-1])] += 1
            for d in range(levels + 1):
                ksum[d] += int(np.searchsorted(level, d, side="right")) if d < levels else int(t)
        bar.update(len(ids))
    bar.close()
    return _result(placement, trials, seed, model, (exp_ratio, smp_ratio, depth_ratio), hist, ksum, m)
