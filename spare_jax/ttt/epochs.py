"""Epoch pools: sampled epochs (uptime, depth breakpoints) and the work a training run commits from them.

The data type every time-to-train Monte Carlo path shares (``montecarlo`` samples pools, ``pool`` evaluates
them under a scenario, ``policy`` applies the proactive restart)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np


@dataclasses.dataclass
class EpochPool:
    """Sampled epochs: uptime ``U`` (minutes, float64[E]) and depth breakpoints ``b`` (float64[E, r+1]).

    ``chain`` (int64[E], kept ages only): the chain (independent sequence of epochs from one cluster) each
    epoch belongs to; a chain's epochs are contiguous and in order, and a training run never spans two.
    """

    scheme: str
    groups: int
    redundancy: int
    uptime: np.ndarray
    breakpoints: np.ndarray
    chain: np.ndarray | None = None
    ages: str = "renewed"
    # epochs with repair (docs/repair.md#repair-without-a-global-restart): the depth is not monotone, so instead of
    # breakpoints each epoch keeps its work rate W/U (W the integral of 1/d*), taken as constant within the epoch:
    # Y = (W/U) Phi(m P)
    work_rate: np.ndarray | None = None
    # micro-batches (docs/microbatches.md#how-it-works): the depth of each breakpoint segment (float64[L]; None: 1..r)
    depths: np.ndarray | None = None
    # proactive restart (``apply_restart_depth``): the depth reached D_max at ``uptime`` before the wipe-out at
    # ``wipeout`` (float64[E], the epoch's own end): computing stops there and a checkpoint starts (or the
    # regular one in progress serves); it is exposed to the wipe-out like any other (``epoch_ends``)
    voluntary: np.ndarray | None = None
    wipeout: np.ndarray | None = None


def pool_committed(pool: "EpochPool", upto, tau, period, rows=None):
    """Committed work by time ``upto`` for the pool's epochs (``rows``: a subset, broadcast with ``upto``)."""
    if pool.work_rate is not None:
        rate = pool.work_rate if rows is None else pool.work_rate[rows]
        return rate * compute_time(np.asarray(upto, np.float64), tau, period)
    b = pool.breakpoints if rows is None else pool.breakpoints[rows]
    return committed_work(b, upto, tau, period, pool.depths)


def epoch_ends(pool: "EpochPool", tau, period, ckpt_cost: float):
    """Per epoch, at checkpoint interval tau: ``(committed work Y, busy time, lost time, reach)``.

    A wipe-out at U keeps the work of the completed checkpoints (``floor(U / T)`` of them, T = tau + C),
    lasts U and loses ``U - floor(U / T) T``. An epoch whose depth reached D_max at s (``pool.voluntary``)
    stops computing there: a checkpoint starts at s (or, at s within a regular checkpoint, that one serves,
    ending at ``(floor(s / T) + 1) T``); if it completes before the epoch's wipe-out it commits everything
    and ends the epoch (voluntary, nothing lost), else the wipe-out abandons it. ``reach``: the latest time
    by which the final checkpoint of a run can start and still complete in this epoch (``U - C``; ``s`` and
    ``U - C`` whichever is first, with D_max)."""
    ups = pool.uptime
    upto = np.floor(ups / period) * period
    busy, reach = ups, np.maximum(ups - ckpt_cost, 0.0)
    lost = ups - upto
    if pool.voluntary is not None:
        vol, s = pool.voluntary, ups
        end = pool.wipeout if pool.wipeout is not None else np.full(ups.shape, np.inf)
        k = np.floor(s / period)
        in_ckpt = s - k * period >= tau
        done_at = np.where(in_ckpt, (k + 1) * period, s + ckpt_cost)  # the proactive (or serving) checkpoint
        ok = vol & (done_at <= end)
        failed = vol & ~ok  # abandoned: the wipe-out at ``end`` keeps the checkpoints completed before s
        upto = np.where(ok, s, np.where(failed, k * period, upto))
        busy = np.where(ok, done_at, np.where(failed, end, busy))
        lost = np.where(ok, 0.0, np.where(failed, end - k * period, lost))
        reach = np.where(vol, np.minimum(s, np.maximum(end - ckpt_cost, 0.0)), reach)
    return pool_committed(pool, upto, tau, period), busy, lost, reach


def epoch_yield(pool: "EpochPool", tau, period, ckpt_cost: float):
    """Per epoch ``(committed work Y, cycle time without the restart)`` (``epoch_ends``)."""
    y, busy, _, _ = epoch_ends(pool, tau, period, ckpt_cost)
    return y, busy


def apply_restart_depth(pool: "EpochPool", restart_depth: float | None) -> "EpochPool":
    """The proactive-restart policy on a ``spare`` pool: an epoch stops computing (checkpoint, then restart)
    at the first breakpoint where the depth reaches ``restart_depth``, if that comes before its wipe-out
    (kept in ``wipeout``: the checkpoint is exposed to it, ``epoch_ends``). ``None`` (or a depth above the deepest level) returns the pool unchanged. Rep and none have a
    constant depth and are returned unchanged."""
    import dataclasses

    if restart_depth is None or pool.work_rate is not None or pool.scheme != "spare" or pool.redundancy < 2:
        return pool
    if not (math.isfinite(restart_depth) and restart_depth > 1):
        raise ValueError(f"restart_depth must be a number > 1, got {restart_depth!r}")
    b = pool.breakpoints
    depths = pool.depths if pool.depths is not None else np.arange(1, b.shape[1], dtype=np.float64)
    reach = np.nonzero(depths >= restart_depth - 1e-12)[0]
    if reach.size == 0:
        return pool
    start = b[:, reach[0]]  # the level with depth >= D_max begins here (level i spans b[i] .. b[i+1])
    voluntary = start < pool.uptime
    up = np.where(voluntary, start, pool.uptime)
    return dataclasses.replace(pool, uptime=up, breakpoints=np.minimum(b, up[:, None]), voluntary=voluntary,
                               wipeout=pool.uptime.copy())


def pool_depths(r: int, m: int):
    """``EpochPool.depths`` for m micro-batches (None for m = 1: the depths 1..r)."""
    from ..kernels.overhead import level_depths

    return None if m == 1 else np.asarray(level_depths(r, m), np.float64)


def compute_time(t, tau, period):
    """Phi(t): compute (non-checkpoint) time in [0, t]. The remainder is taken from the same quotient
    (not a separate ``mod``), so t at an exact checkpoint time counts ``q tau`` whichever way it rounds."""
    q = np.floor(t / period)
    rem = np.clip(t - q * period, 0.0, None)
    return q * tau + np.minimum(rem, tau)


def committed_work(breakpoints, upto, tau, period, depths=None):
    """Work committed by time ``upto`` (a checkpoint completion) for epochs with these breakpoints (segment
    i at depth ``depths[i]``, default i + 1)."""
    depth = np.arange(1, breakpoints.shape[1]) if depths is None else np.asarray(depths, np.float64)
    b = np.minimum(breakpoints, upto[..., None])
    phi = compute_time(b, tau, period)
    return (np.diff(phi, axis=-1) / depth).sum(axis=-1)
