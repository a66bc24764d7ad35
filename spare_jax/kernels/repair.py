r"""Repair without a global restart (docs/repair.md#repair-without-a-global-restart): failed groups rejoin, and the
wipe-out becomes a race.

Model (minutes)
---------------
An epoch starts at ``t = 0`` with all N groups up. An up group fails after an exponential time (mean the
group MTBF divided by its rate multiplier, ``Scenario.rate_multipliers``); its clock is fresh every time it
comes back (memoryless). A failed group is down for a repair time drawn from the repair law, then rejoins,
its stack restored, while the others keep going:

* ``fixed``: exactly ``D``;
* ``exp``: exponential with mean ``D``;
* ``lognormal``: ``exp(m + sigma Z)``, ``m = ln D - sigma^2/2`` (mean ``D``).

Failure domains (``Scenario.domains``) have Poisson clocks for the whole epoch; an event downs every group
of the domain that is up, as one event, each starting its own repair. The first job-wide interruption ends
the epoch. The epoch ends at the *wipe-out*: the first failure event after which all r holders of some
shard are down. Ring order: the state is kept per ring position (as in ``failures.scenario_failure_times``).

Kernel
------
``repair_kernel`` is a pure function of the seed words and the trial ids, vectorised over a chunk of
trials: per trial the state is O(N) (``next_t[N]``: the next failure time of an up group or the rejoin
time of a down one, with the minimum of every block of about sqrt(N) of them, so that the next group event
is the least of the block minima and an update recomputes one block: O(sqrt N) per event; ``down[N]``;
``dom_t``: each domain's next event; the job-wide time). A fixed number of *lanes* run trials at once and an
idle lane takes the chunk's next trial. Every step of a ``lax.while_loop`` takes, for every lane still
running, the next event (the least of the group, domain and job-wide times) and applies it:

* a group's rejoin: it is up again and draws a fresh failure clock;
* a group's failure: it goes down and draws its repair time; the wipe-out test looks only at the r shards
  of that group (``stack[g]``) and their ``r x r`` holders;
* a domain event: its up members go down (each draws a repair time), the domain draws its next event, and
  the wipe-out test runs over all shards (``down[holders].all(-1).any()``), in a ``lax.cond`` taken only
  when some trial of the chunk has a domain event;
* the job-wide interruption: the epoch ends (``ended_by_job``).

Random numbers. The initial clocks are the static kernels' (``failures.scenario_failure_times``'s streams:
own clocks stream 0 in ring order, domain level l stream 1 + l, job-wide stream 1 + L), so with a repair
time that never comes (``D -> inf``) every trial reproduces the static wipe-out kernel's epoch. The k-th
event of a trial uses ``trial_bits(words, ids, 2, stream=REPAIR_STREAM + k)`` (and, at a domain event,
``trial_bits(words, ids, N, stream=DOMAIN_REPAIR_STREAM + k)`` for its members' repair times). A trial
processes exactly one event per step, so its k-th event is at step k whatever the chunk: results depend only
on (seed, trial id), never on the chunk size or the device count.

A trial runs at most ``max_events`` events; one still running then is returned *censored* (its uptime is the
time reached, a lower bound) and counted, never dropped (per trial, so censoring is chunk-independent too).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import exact_sums as devsum
from .driver import (
    Execution, ExactSum, Reduction, as_uint32_key_words, exact_mean_var, run_chunked, run_reduced)
from .events import all_block_mins, block_width, min_first, row_bits
from ..model.failures import (
    FailureModel, bits_to_uniform, check_positive, exponential_from_bits, trial_bits)
from ..model.cluster import Sampling
from ..model.placement import Placement
from ..model.repair import REPAIR_LAWS, Repair  # noqa: F401  (part of this module's API)
from ..results import Result

REPAIR_STREAM = 0x10000000  # + event index: the per-event draws (repair time or a fresh clock, domain clock)
DOMAIN_REPAIR_STREAM = 0x20000000  # + event index: the repair times of a domain event's members
DEFAULT_MAX_EVENTS = 1 << 24
DEFAULT_CHUNK = 4096


@dataclasses.dataclass(frozen=True)
class EpochOptions:
    """How far each epoch with repair is followed, and what is recorded: at most ``max_events`` events (a trial
    still running then is censored), up to ``max_time`` minutes (``None``: until the wipe-out or the
    job-wide end; a trial reaching it is censored there), and with ``track_depth`` the time integrals of
    1/d* and d* over the epoch (a separate compiled variant of the kernel)."""

    max_events: int = DEFAULT_MAX_EVENTS
    track_depth: bool = False
    max_time: float | None = None


def repair_numbers(repair_time_min, law: str = "fixed", sigma: float = 1.0) -> np.ndarray:
    """``float32[3]``: the traced numbers of a repair law, ``(D, mu, sigma)`` with ``mu = ln D - sigma^2/2``
    (lognormal; 0 otherwise), computed on the host in float64 as ``Repair.sample`` does (zeros: no repair)."""
    if repair_time_min is None:
        return np.zeros(3, np.float32)
    mu = math.log(repair_time_min) - 0.5 * sigma ** 2 if law == "lognormal" else 0.0
    return np.asarray([repair_time_min, mu, sigma], np.float32)


def sample_repair(law: str, numbers, u):
    r"""Repair times (float32 minutes) from uniforms on (0, 1) under the law ``law`` (static) with the traced
    ``numbers`` of ``repair_numbers``: the same operations as ``model.repair.Repair.sample``.

    .. math:: D \ (fixed), \quad -D \ln(1 - u) \ (exp), \quad e^{\mu + \sigma \Phi^{-1}(u)} \ (lognormal)"""
    d = numbers[0]
    if law == "fixed":
        return jnp.broadcast_to(d, jnp.shape(u))
    if law == "exp":
        return d * -jnp.log1p(-u)
    return jnp.exp(numbers[1] + numbers[2] * jax.scipy.special.ndtri(u))


class EpochShape(NamedTuple):
    """What changes the compiled repair kernel (static): the placement kind, N, r, m (with ``track_depth``),
    Weibull clocks or not, the domains per level, a job-wide clock or not, the repair law, and the options
    (without the time limit, which is a number)."""

    kind: str
    groups: int
    redundancy: int
    microbatches: int
    weibull: bool
    domain_counts: tuple
    job_wide: bool
    repair_law: str
    max_events: int
    track_depth: bool


class EpochParams(NamedTuple):
    """Every number of the repair kernel (traced), in ring-position order."""

    clock_scale: np.ndarray  # float32[N]: each position's clock mean (exponential) or Weibull scale
    inv_shape: np.ndarray  # float32[]: 1/k of the Weibull clocks
    stack: np.ndarray  # int32[N, r]: the shards of each ring position
    holders: np.ndarray  # int32[N, r]: the ring positions holding each shard
    domain_of: np.ndarray  # int32[L, N]: each position's global domain index per level
    domain_mean: np.ndarray  # float32[max(1, domains)]
    job_mean: np.ndarray  # float32[]: the job-wide clock's mean
    repair: np.ndarray  # float32[3]: ``repair_numbers``
    max_time: np.ndarray  # float32[]: the time limit (+inf: none)


def epoch_shape(placement: Placement, model: FailureModel, scenario, repair: Repair,
                options: EpochOptions) -> EpochShape:
    n = placement.groups
    return EpochShape(placement.kind, n, placement.redundancy, int(scenario.microbatches),
                      model.distribution != "exponential", tuple(int(level.count(n)) for level in scenario.domains),
                      scenario.job_rate_per_min(n, model.group_mtbf_min) > 0, repair.law, int(options.max_events),
                      bool(options.track_depth))


def epoch_params(placement: Placement, model: FailureModel, scenario, repair: Repair,
                 options: EpochOptions) -> EpochParams:
    n = placement.groups
    mean, dom_of_pos, dom_mean = _static_tables(placement, model, scenario)
    if model.distribution == "exponential":
        scale, inv_k = mean, np.float32(1.0)
    else:  # Weibull: the scale of each group's mean (lemons: the model's scale / multiplier)
        scale = mean * np.float32(model.weibull_scale_min / model.group_mtbf_min)
        inv_k = np.float32(1.0 / model.weibull_shape)
    job_rate = scenario.job_rate_per_min(n, model.group_mtbf_min)
    return EpochParams(
        clock_scale=np.asarray(scale, np.float32), inv_shape=inv_k,
        stack=np.asarray(placement.stack, np.int32), holders=np.asarray(placement.holders, np.int32),
        domain_of=(np.stack(dom_of_pos).astype(np.int32) if dom_of_pos else np.zeros((0, n), np.int32)),
        domain_mean=dom_mean if dom_mean.size else np.ones(1, np.float32),
        job_mean=np.float32(1.0 / job_rate) if job_rate > 0 else np.float32(1.0),
        repair=repair_numbers(repair.repair_time_min, repair.law, repair.sigma),
        max_time=np.float32(np.inf if options.max_time is None else options.max_time))


def _static_tables(placement: Placement, model: FailureModel, scenario):
    """Host constants in ring-position order: group means, domain membership and means."""
    n = placement.groups
    ring = scenario.ring_order(n)
    mult = scenario.rate_multipliers(n, model.group_mtbf_min)[ring]
    mean = (model.group_mtbf_min / mult).astype(np.float32)
    dom_of_pos, dom_mean = [], []
    offset = 0
    for level in scenario.domains:
        dom_of_pos.append(level.members(n)[ring] + offset)
        dom_mean += [level.mtbf_min] * level.count(n)
        offset += level.count(n)
    return mean, dom_of_pos, np.asarray(dom_mean, np.float32)


def _depth_of_down(down, placement, microbatches: int = 1):
    """d*(down set) per lane (``down``: ``bool[L, N]`` in ring positions, no shard lost): 1 when nothing is
    down; for ``stacked`` the least d in 2..r-1 passing the queue test (``depth.feasible_stacked``), else r;
    for ``block`` max over blocks of ceil(r / survivors). With ``microbatches = m > 1``: the least capacity
    c* in micro-batches per group (depth c*/m; ``depth.least_capacity_stacked``, ``depth.capacity_block``)."""
    from .depth import capacity_block, depth_block, feasible_stacked, least_capacity_stacked

    r = placement.redundancy
    alive = ~down
    m = int(microbatches)
    if m > 1:
        if placement.kind == "block":
            return jnp.maximum(capacity_block(alive, r, m), m).astype(jnp.int32)
        if placement.kind != "stacked":
            raise ValueError("depth with repair needs the stacked or block placement")
        return jnp.maximum(least_capacity_stacked(down, r, m), m).astype(jnp.int32)
    if placement.kind == "block":
        return jnp.maximum(depth_block(alive, r), 1).astype(jnp.int32)
    if placement.kind != "stacked":
        raise ValueError("depth with repair needs the stacked or block placement")
    any_down = down.any(axis=1)
    if r <= 2:
        return jnp.where(any_down, r, 1).astype(jnp.int32)
    ok2 = feasible_stacked(alive, 2, r)
    d = jnp.where(ok2, 2, r).astype(jnp.int32)
    if r > 3:
        def deeper(d):  # the least feasible d in 3..r-1 for the lanes that fail depth 2
            for k in range(r - 1, 2, -1):
                d = jnp.where(~ok2 & feasible_stacked(alive, k, r), k, d)
            return d

        # with repair only a few groups are down at a time: depth 2 almost always holds, so the deeper
        # tests run only in the steps where some lane fails it
        d = jax.lax.cond(jnp.any(~ok2 & any_down), deeper, lambda d: d, d)
    return jnp.where(any_down, d, 1).astype(jnp.int32)


def repair_kernel(words, trial_ids, params: EpochParams, shape: EpochShape, lanes: int | None = None):
    """Per trial: ``(uptime float32, failures int32, ended_by_job bool, censored bool, events int32)``, and
    with ``options.track_depth`` also ``(work float32, depth_time float32)``: the time integrals of
    1/d*(down set) and of d*(down set) over the epoch (d* recomputed after every event, O(r N) per event: a
    separate compiled variant, the plain kernel keeps its speed).

    ``options.max_time`` (minutes): an epoch still running at that time ends there, censored (an event after
    it is not applied; its uptime is ``max_time``).

    ``failures`` counts group failures (each group a domain event downs counts once; the fatal event's
    included); ``events`` the events processed (failures, rejoins, domain events, the job-wide end). A trial
    still running after ``options.max_events`` events is censored (uptime = the time reached).

    Work layout: ``lanes`` trials run at once (default 256 on CPU, a quarter of the chunk otherwise); a lane
    whose epoch ended takes the next trial of the chunk (lanes are refilled in batches, when an eighth of
    them is idle), so a long epoch does not hold the others up; a finished lane keeps its results until the
    refill writes them out. The next group event of a lane is a two-level minimum over its N groups' times
    (blocks of about sqrt(N) leaves, ``events.block_width``; the least of the block minima): a failure or a rejoin
    updates one leaf and recomputes its block's minimum; a domain event recomputes every block. A trial's
    results depend only on its id (its k-th event uses stream ``REPAIR_STREAM + k``).
    """
    max_events, track_depth = shape.max_events, shape.track_depth
    max_time = jnp.asarray(params.max_time, jnp.float32)
    n, r = shape.groups, shape.redundancy
    mb = shape.microbatches  # with track_depth: the depth is c*/m
    c = trial_ids.shape[0]
    if lanes is None:  # on CPU the per-step cost grows faster than the lanes past a few hundred
        lanes = 256 if jax.default_backend() == "cpu" else c // 4
    lanes = max(1, min(c, int(lanes)))
    width = block_width(n)
    nb = -(-n // width)
    size = nb * width
    scale_j = jnp.asarray(params.clock_scale, jnp.float32)
    inv_k = jnp.asarray(params.inv_shape, jnp.float32)
    rnums = jnp.asarray(params.repair, jnp.float32)
    if not shape.weibull:
        def clock(e, i=slice(None)):  # a fresh group clock from a standard exponential e
            return e * scale_j[i]
    else:  # Weibull: scale x e^(1/k), the scale of each group's mean (lemons: the model's scale / multiplier)
        def clock(e, i=slice(None)):
            return e ** inv_k * scale_j[i]

    def repair_time(u):
        return sample_repair(shape.repair_law, rnums, u)

    stack = jnp.asarray(params.stack, jnp.int32)  # shards of each ring position
    holders = jnp.asarray(params.holders, jnp.int32)  # ring positions holding each shard
    dom_of_pos = jnp.asarray(params.domain_of, jnp.int32)
    inf = jnp.float32(jnp.inf)
    nd = sum(shape.domain_counts)
    # every trial's initial clocks: the static kernels' streams
    init_t = clock(exponential_from_bits(trial_bits(words, trial_ids, n, stream=0)))
    if size > n:
        init_t = jnp.concatenate([init_t, jnp.full((c, size - n), inf)], axis=1)
    dom_mean_j = jnp.asarray(params.domain_mean, jnp.float32)
    if nd:
        offsets = np.cumsum((0,) + shape.domain_counts)
        init_dom = jnp.concatenate(
            [exponential_from_bits(trial_bits(words, trial_ids, count, stream=1 + i))
             * dom_mean_j[None, offsets[i]:offsets[i] + count]
             for i, count in enumerate(shape.domain_counts)], axis=1)
    else:
        init_dom = jnp.full((c, 1), inf)
    if shape.job_wide:
        init_job = exponential_from_bits(trial_bits(words, trial_ids, 1, stream=1 + len(shape.domain_counts))[:, 0]) \
            * jnp.asarray(params.job_mean, jnp.float32)
    else:
        init_job = jnp.full((c,), inf)
    init_bv, init_bi = all_block_mins(init_t, width)
    rows = jnp.arange(lanes)
    base = rows * size
    lane_blocks = rows * nb
    in_block = jnp.arange(width, dtype=jnp.int32)
    no = jnp.zeros((lanes,), bool)

    def body(st):
        (slot, active, next_slot, lt, bv, bi, down, dom_t, job_t, ev, nfail, acc, res) = st
        nfail_before = nfail
        # lt, bv, bi, down are flat (lane-major) so that the per-lane updates are 1-D scatters, done in place
        ids = trial_ids[jnp.minimum(slot, c - 1)]
        tg, kb = min_first(bv.reshape(lanes, nb))
        i = bi[lane_blocks + kb]
        if nd:
            td, k = min_first(dom_t)
        else:
            td = jnp.full((lanes,), inf)
        is_job = active & (job_t <= jnp.minimum(tg, td)) if shape.job_wide else no
        is_dom = active & ~is_job & (td < tg) if nd else no
        is_grp = active & ~is_job & ~is_dom
        bits = row_bits(words, ids, REPAIR_STREAM + ev, 2 if nd else 1)
        was_down = down[rows * n + i]
        fresh = tg + clock(exponential_from_bits(bits[:, 0]), i)  # a rejoined group's next failure
        back = tg + repair_time(bits_to_uniform(bits[:, 0]))  # a failed group's rejoin
        new = jnp.where(is_grp, jnp.where(was_down, fresh, back), tg)
        down = down.at[rows * n + i].set(was_down ^ is_grp, unique_indices=True)
        lt = lt.at[base + i].set(new, unique_indices=True)
        blk = i // width  # the changed leaf's block: its minimum again
        vals = lt[(base + blk * width)[:, None] + in_block[None, :]]
        vmin, j = min_first(vals)
        bv = bv.at[lane_blocks + blk].set(vmin, unique_indices=True)
        bi = bi.at[lane_blocks + blk].set(blk * width + j, unique_indices=True)
        failed = is_grp & ~was_down
        # wipe-out after a single failure: only the r shards of group i, through their holders
        hs = holders[stack[i]].reshape(lanes, r * r)
        wiped = failed & down[rows[:, None] * n + hs].reshape(lanes, r, r).all(axis=2).any(axis=1)
        nfail = nfail + failed.astype(jnp.int32)

        def domain_event(args):
            lt, bv, bi, down, dom_t, nfail = args
            lt, down = lt.reshape(lanes, size), down.reshape(lanes, n)
            member = jnp.zeros((lanes, n), bool)
            for level in range(len(shape.domain_counts)):
                member = member | (dom_of_pos[level][None, :] == k[:, None])
            hit = member & ~down & is_dom[:, None]
            rep = td[:, None] + repair_time(bits_to_uniform(row_bits(words, ids, DOMAIN_REPAIR_STREAM + ev, n)))
            lt = lt.at[:, :n].set(jnp.where(hit, rep, lt[:, :n]))
            bv, bi = all_block_mins(lt, width)
            down = down | hit
            nfail = nfail + hit.sum(axis=1, dtype=jnp.int32)
            new_clock = td + exponential_from_bits(bits[:, 1]) * dom_mean_j[k]
            dom_t = jnp.where((jnp.arange(dom_t.shape[1])[None, :] == k[:, None]) & is_dom[:, None],
                              new_clock[:, None], dom_t)
            lost = is_dom & down[:, holders].all(axis=2).any(axis=1)
            return lt.reshape(-1), bv.reshape(-1), bi.reshape(-1), down.reshape(-1), dom_t, nfail, lost

        if nd:
            lt, bv, bi, down, dom_t, nfail, lost = jax.lax.cond(
                is_dom.any(), domain_event, lambda a: (*a, no), (lt, bv, bi, down, dom_t, nfail))
            wiped = wiped | lost
        ev = ev + active.astype(jnp.int32)
        t_event = jnp.where(is_job, job_t, jnp.where(is_dom, td, tg))
        # an event past the horizon (+inf: none) is not applied: the epoch ends there, censored
        late = active & (t_event > max_time)
        is_job, wiped = is_job & ~late, wiped & ~late
        t_event = jnp.where(late, max_time, t_event)
        nfail = jnp.where(late, nfail_before, nfail)
        ev = jnp.where(late, ev - 1, ev)
        censor = active & ~is_job & ~wiped & ((ev >= max_events) | late)
        finish = is_job | wiped | censor
        if track_depth:  # the segment [t_prev, t_event) ran at depth d_cur; then the new down set's depth
            t_prev, d_cur, work, dint = acc
            seg = jnp.where(active, t_event - t_prev, 0.0)
            dc = d_cur.astype(jnp.float32)
            if mb == 1:
                work, dint = work + seg / dc, dint + seg * dc
            else:  # d_cur is the capacity c* in micro-batches: depth c*/m
                work, dint = work + seg * jnp.float32(mb) / dc, dint + seg * dc / jnp.float32(mb)
            d_new = _depth_of_down(down.reshape(lanes, n), shape, mb)
            acc = (jnp.where(active, t_event, t_prev), jnp.where(active & ~finish, d_new, d_cur), work, dint)
        # a finished lane keeps its end (time, job-wide, censored) until the refill writes it out
        t_end, job_end, cens_end = res
        res = (jnp.where(finish, t_event, t_end), jnp.where(finish, is_job, job_end),
               jnp.where(finish, censor, cens_end))
        active = active & ~finish
        return (slot, active, next_slot, lt, bv, bi, down, dom_t, job_t, ev, nfail, acc, res)

    thresh = max(1, lanes // 8)
    zeros_f = jnp.zeros((lanes,), jnp.float32)
    acc0 = (zeros_f, jnp.full((lanes,), mb, jnp.int32), zeros_f, zeros_f) if track_depth else ()

    def inner_cond(st):  # run events until an eighth of the lanes is idle (or, at the end, all are)
        n_idle = lanes - st[1].sum(dtype=jnp.int32)
        return st[1].any() & ((st[2] >= c) | (n_idle < thresh))

    def load(st):  # finished lanes write their results; idle lanes take the next trials of the chunk
        (slot, active, next_slot, lt, bv, bi, down, dom_t, job_t, ev, nfail, acc, res), out = st
        # every idle lane holds a finished trial (one left idle at the chunk's end writes the same again)
        at = jnp.where(active, c, slot)  # out of range: dropped
        t_end, job_end, cens_end = res
        written = (t_end, nfail, job_end, cens_end, ev) + ((acc[2], acc[3]) if track_depth else ())
        out = tuple(o.at[at].set(w, mode="drop") for o, w in zip(out, written))
        idle = ~active
        n_idle = idle.sum(dtype=jnp.int32)
        new_slot = next_slot + jnp.cumsum(idle.astype(jnp.int32)) - 1
        take = idle & (new_slot < c)
        src = jnp.minimum(new_slot, c - 1)
        leaves = jnp.where(take[:, None], init_t[src], lt.reshape(lanes, size))
        bv = jnp.where(take[:, None], init_bv[src], bv.reshape(lanes, nb))
        bi = jnp.where(take[:, None], init_bi[src], bi.reshape(lanes, nb))
        st = (jnp.where(take, new_slot, slot), active | take, jnp.minimum(next_slot + n_idle, c),
              leaves.reshape(-1), bv.reshape(-1), bi.reshape(-1),
              (down.reshape(lanes, n) & ~take[:, None]).reshape(-1),
              jnp.where(take[:, None], init_dom[src], dom_t), jnp.where(take, init_job[src], job_t),
              jnp.where(take, 0, ev), jnp.where(take, 0, nfail),
              tuple(jnp.where(take, z, a) for a, z in zip(acc, acc0)), res)
        return st, out

    def outer_body(st):
        return load((jax.lax.while_loop(inner_cond, body, st[0]), st[1]))

    def cond(st):
        return st[0][1].any() | (st[0][2] < c)

    first = jnp.arange(lanes, dtype=jnp.int32)
    bv, bi = init_bv[:lanes], init_bi[:lanes]
    zeros_i = jnp.zeros((lanes,), jnp.int32)
    out = (jnp.zeros((c,), jnp.float32), jnp.zeros((c,), jnp.int32), jnp.zeros((c,), bool), jnp.zeros((c,), bool),
           jnp.zeros((c,), jnp.int32))
    if track_depth:
        out = out + (jnp.zeros((c,), jnp.float32), jnp.zeros((c,), jnp.float32))
    st = (first, jnp.ones((lanes,), bool), jnp.int32(lanes), init_t[:lanes].reshape(-1), bv.reshape(-1),
          bi.reshape(-1), jnp.zeros((lanes * n,), bool), init_dom[:lanes], init_job[:lanes], zeros_i, zeros_i,
          acc0, (zeros_f, no, no))
    return jax.lax.while_loop(cond, outer_body, (st, out))[1]


@functools.lru_cache(maxsize=64)
def jitted_repair_kernel(shape: EpochShape):
    """``repair_kernel`` compiled for one shape: ``fn(words, trial_ids, params)``."""
    return jax.jit(functools.partial(repair_kernel, shape=shape))


@dataclasses.dataclass
class RepairResult(Result):
    """Monte Carlo summary of epochs with repair: uptime (restart to wipe-out or job-wide end), failures seen."""

    groups: int
    redundancy: int
    placement: str
    trials: int
    seed: int
    repair: Repair
    uptime_mean_min: float
    uptime_var_min2: float
    failures_mean: float
    failures_var: float
    ended_by_job: int
    censored: int
    events: int
    chunk_size: int = 0
    devices: int = 1
    max_time_min: float | None = None
    # with options.track_depth (simulate_repair): Omega = E[U]/E[W], the time-averaged depth
    overhead: float | None = None
    overhead_stderr: float | None = None
    time_avg_depth: float | None = None
    time_avg_depth_stderr: float | None = None
    work_mean_min: float | None = None
    processes: int = 1
    trials_per_process: tuple = ()

    @property
    def wiped(self) -> int:
        """Epochs that ended by a wipe-out (not by a job-wide interruption, not censored)."""
        return self.trials - self.ended_by_job - self.censored

    @property
    def uptime_stderr_min(self) -> float:
        return math.sqrt(self.uptime_var_min2 / self.trials)

    @property
    def failures_stderr(self) -> float:
        return math.sqrt(self.failures_var / self.trials)

    @property
    def p_ended_by_job(self) -> float:
        return self.ended_by_job / self.trials


def simulate_repair(placement: Placement, sampling: Sampling = Sampling(count=10_000), *,
                    model: FailureModel = FailureModel(), scenario=None, repair: Repair | None = None,
                    options: EpochOptions = EpochOptions()) -> RepairResult:
    """Monte Carlo of ``sampling.count`` epochs with repair (``repair_kernel``) through the chunked driver;
    exact sums, so the numbers for a seed do not depend on ``sampling.chunk_size`` or the devices; resumable
    with ``sampling.out_dir``.

    ``options.track_depth``: also the overhead Omega = E[U]/E[W] (W the integral of 1/d*) and the
    time-averaged depth (stacked/block). ``options.max_time``: epochs censored at that time (minutes), e.g. a
    training run's length for the probability of a wipe-out during it (``wiped``/``trials``)."""
    from ..model.placement import check_int as _check_int
    from ..model.scenario import Scenario

    if repair is None:
        raise ValueError("simulate_repair needs a Repair (repair time and law)")
    trials = _check_int("trials", sampling.count)
    seed = _check_int("seed", sampling.seed, lo=0)
    max_events = _check_int("max_events", options.max_events)
    if max_events >= REPAIR_STREAM:
        raise ValueError(f"max_events must be < {REPAIR_STREAM} (the per-event streams)")
    scenario = Scenario() if scenario is None else scenario
    n = placement.groups
    scenario.check(n)
    words = as_uint32_key_words(seed)
    max_time, track_depth = options.max_time, bool(options.track_depth)
    if max_time is not None:
        max_time = float(check_positive("max_time (minutes)", max_time))
    if track_depth and placement.kind not in ("stacked", "block"):
        raise ValueError("depth with repair needs the stacked or block placement")
    opts = EpochOptions(max_events, track_depth, max_time)
    shape = epoch_shape(placement, model, scenario, repair, opts)
    fn = jitted_repair_kernel(shape)
    from .driver import select_devices

    chunk_size = sampling.chunk_size
    if chunk_size is None:  # lockstep trials: a smaller chunk wastes fewer steps on the longest epoch; chunks
        ndev = len(select_devices(sampling.devices))  # of equal size, so the last one is not mostly padding
        chunks = -(-trials // DEFAULT_CHUNK)
        chunk_size = -(-(-(-trials // chunks)) // ndev) * ndev
    params = {"kind": "repair", "placement": placement.kind, "groups": n, "redundancy": placement.redundancy,
              "trials": trials, "seed": seed, "model": dataclasses.asdict(model), "scenario": repr(scenario),
              "repair": repr(repair), "max_events": max_events,
              **({"track_depth": True} if track_depth else {}), **({} if max_time is None else {"max_time": max_time})}
    zeros = _zeros_repair(track_depth)
    totals, info = run_reduced(lambda aux, ids: fn(aux[0], ids, aux[1]),
                               Reduction(_reduce_repair(track_depth), zeros,
                                         limb_keys=tuple(k for k in zeros() if k not in _COUNT_KEYS)), trials,
                               Execution(n, chunk_size, sampling.devices, desc=f"repair N={n} r={placement.redundancy}",
                                         progress=sampling.progress, out_dir=sampling.out_dir, params=params,
                                         bytes_per_item=4),
                               aux=(words, epoch_params(placement, model, scenario, repair, opts)),
                               cache_key=("repair", shape))
    if totals["bad"][0]:
        raise ValueError("a non-finite value reached an accumulation (a float32 overflow in the kernel: "
                         "the parameters are outside the range the model handles)")

    def exact(key):  # a device limb total as an ExactSum (units 2^-1126)
        out = ExactSum()
        shift = devsum.X2_UNIT_SHIFT if key in _SQUARE_KEYS else devsum.X_UNIT_SHIFT
        out.total = totals[key] << (ExactSum.SHIFT - shift)
        return out

    up, up2, fl, fl2 = (exact(k) for k in ("up", "up2", "fl", "fl2"))
    counts = [totals["ended_by_job"][0], totals["censored"][0], round(exact("events").value)]
    if track_depth:
        from .overhead import ExactRatio as _Ratio

        om_ratio, dep_ratio = _Ratio(), _Ratio()
        om_ratio.sums = [up, exact("work"), up2, exact("work2"), exact("up_work")]
        dep_ratio.sums = [exact("dint"), up, exact("dint2"), up2, exact("dint_up")]
    um, uv = exact_mean_var(up, up2, trials)
    fm, fv = exact_mean_var(fl, fl2, trials)
    res = RepairResult(n, placement.redundancy, placement.kind, trials, seed, repair, um, uv, fm, fv,
                       int(counts[0]), int(counts[1]), int(counts[2]), info["chunk_size"], info["devices"], max_time,
                       processes=info["processes"], trials_per_process=tuple(info["trials_per_process"]))
    if track_depth:
        res.overhead, res.overhead_stderr, _, res.work_mean_min = om_ratio.result(trials)
        res.time_avg_depth, res.time_avg_depth_stderr, _, _ = dep_ratio.result(trials)
    return res


_COUNT_KEYS = ("ended_by_job", "censored", "bad")
_SQUARE_KEYS = ("up2", "fl2", "work2", "dint2", "up_work", "dint_up")


def _reduce_repair(track_depth: bool):
    """Device-side sums of a sub-chunk of epochs: exact limb sums (``devsum``) of the uptime, the failures
    and the events with the squares the standard errors need (with ``track_depth`` also the work and depth
    integrals, their squares and products with the uptime: ``overhead._Ratio``'s five sums), and the counts
    of epochs ended by a job-wide failure or censored. The same exact totals as summing the host arrays."""

    def reduce(out, valid):
        up, fails = out[0], out[1].astype(jnp.float32)
        stats = {}
        stats["up"], stats["up2"], bad = devsum.exact_sums_f32(up, valid)
        stats["fl"], stats["fl2"], _ = devsum.exact_sums_f32(fails, valid)
        stats["events"] = devsum.exact_sums_f32(out[4].astype(jnp.float32), valid)[0]
        if track_depth:
            work, dint = out[5], out[6]
            stats["work"], stats["work2"], bad_w = devsum.exact_sums_f32(work, valid)
            stats["dint"], stats["dint2"], bad_d = devsum.exact_sums_f32(dint, valid)
            stats["up_work"] = devsum.exact_product_sums(up, work, valid)[0]
            stats["dint_up"] = devsum.exact_product_sums(dint, up, valid)[0]
            bad = bad + bad_w + bad_d
        stats["ended_by_job"] = (out[2] & valid).sum(dtype=jnp.int32)[None]
        stats["censored"] = (out[3] & valid).sum(dtype=jnp.int32)[None]
        stats["bad"] = bad[None]
        return stats

    return reduce


def _zeros_repair(track_depth: bool):
    def zeros():
        z = {k: jnp.zeros(devsum.X2_LIMBS if k in _SQUARE_KEYS else devsum.X_LIMBS, jnp.uint32)
             for k in ("up", "up2", "fl", "fl2", "events")
             + (("work", "work2", "dint", "dint2", "up_work", "dint_up") if track_depth else ())}
        z.update({k: jnp.zeros(1, jnp.int32) for k in _COUNT_KEYS})
        return z

    return zeros


def repair_epochs(placement: Placement, sampling: Sampling, *, model: FailureModel = FailureModel(),
                  scenario=None, repair: Repair, options: EpochOptions = EpochOptions(track_depth=True)):
    """Per-epoch arrays ``(uptime, work, censored)`` (float64, float64, bool) of ``sampling.count`` epochs with
    repair (``work`` the integral of 1/d*; without ``options.track_depth`` it is ``uptime / r`` for a constant
    depth r). The epochs are kept in memory: no ``sampling.out_dir``."""
    from ..model.scenario import Scenario

    if sampling.out_dir is not None:
        raise ValueError("repair_epochs keeps its epochs in memory: it takes no out_dir")
    scenario = Scenario() if scenario is None else scenario
    scenario.check(placement.groups)
    epochs, track_depth = int(sampling.count), bool(options.track_depth)
    opts = EpochOptions(int(options.max_events), track_depth,
                        None if options.max_time is None else float(options.max_time))
    shape = epoch_shape(placement, model, scenario, repair, opts)
    fn = jitted_repair_kernel(shape)
    words = as_uint32_key_words(sampling.seed)
    ups, works, cens = [], [], []

    def consume(index, host, saved=None):
        ups.append(np.asarray(host[0], np.float64))
        works.append(np.asarray(host[5], np.float64) if track_depth else None)
        cens.append(np.asarray(host[3], bool))
        return {}

    run_chunked(lambda aux, ids: fn(aux[0], ids, aux[1]), epochs, consume,
                Execution(placement.groups, sampling.chunk_size or min(DEFAULT_CHUNK, epochs), sampling.devices,
                          desc=f"repair epochs N={placement.groups} r={placement.redundancy}",
                          progress=sampling.progress, bytes_per_item=4),
                aux=(words, epoch_params(placement, model, scenario, repair, opts)), cache_key=("repair", shape))
    up = np.concatenate(ups)
    work = np.concatenate(works) if track_depth else up / placement.redundancy
    return up, work, np.concatenate(cens)
