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
    # epochs with repair (SPEC §10.5): the depth is not monotone, so instead of breakpoints each epoch keeps its
    # work rate W/U (W the integral of 1/d*), taken as constant within the epoch: Y = (W/U) Phi(m P)
    work_rate: np.ndarray | None = None
    # micro-batches (SPEC §10.6): the depth of each breakpoint segment (float64[L]; None: 1..r)
    depths: np.ndarray | None = None
    # proactive restart (SPEC §10.7, ``apply_restart_depth``): the epoch ended voluntarily at ``uptime`` with a
    # checkpoint (all its work committed, the checkpoint's C added to the cycle) instead of a wipe-out
    voluntary: np.ndarray | None = None


def pool_committed(pool: "EpochPool", upto, tau, period, rows=None):
    """Committed work by time ``upto`` for the pool's epochs (``rows``: a subset, broadcast with ``upto``)."""
    if pool.work_rate is not None:
        rate = pool.work_rate if rows is None else pool.work_rate[rows]
        return rate * _compute_time(np.asarray(upto, np.float64), tau, period)
    b = pool.breakpoints if rows is None else pool.breakpoints[rows]
    return _committed(b, upto, tau, period, pool.depths)


def epoch_yield(pool: "EpochPool", tau, period, ckpt_cost: float):
    """Per epoch ``(committed work Y, cycle time without the restart)``: a wipe-out keeps the work of the
    completed checkpoints (``floor(U / T)`` of them) and lasts U; a voluntary end (``pool.voluntary``) commits
    everything computed by U and lasts ``U + C`` (its closing checkpoint)."""
    ups = pool.uptime
    upto = np.floor(ups / period) * period
    extra = 0.0
    if pool.voluntary is not None:
        upto = np.where(pool.voluntary, ups, upto)
        extra = np.where(pool.voluntary, ckpt_cost, 0.0)
    return pool_committed(pool, upto, tau, period), ups + extra


def apply_restart_depth(pool: "EpochPool", restart_depth: float | None) -> "EpochPool":
    """The proactive-restart policy (SPEC §10.7) on a ``spare`` pool: an epoch ends voluntarily (checkpoint,
    then restart) at the first breakpoint where the depth reaches ``restart_depth``, if that comes before its
    wipe-out. ``None`` (or a depth above the deepest level) returns the pool unchanged. Rep and none have a
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
    return dataclasses.replace(pool, uptime=up, breakpoints=np.minimum(b, up[:, None]), voluntary=voluntary)


def _level_depths(r: int, m: int):
    """``EpochPool.depths`` for m micro-batches (None for m = 1: the depths 1..r)."""
    from ..kernels.overhead import level_depths

    return None if m == 1 else np.asarray(level_depths(r, m), np.float64)


def _compute_time(t, tau, period):
    """Phi(t): compute (non-checkpoint) time in [0, t]. The remainder is taken from the same quotient
    (not a separate ``mod``), so t at an exact checkpoint time counts ``q tau`` whichever way it rounds."""
    q = np.floor(t / period)
    rem = np.clip(t - q * period, 0.0, None)
    return q * tau + np.minimum(rem, tau)


def _committed(breakpoints, upto, tau, period, depths=None):
    """Work committed by time ``upto`` (a checkpoint completion) for epochs with these breakpoints (segment
    i at depth ``depths[i]``, default i + 1)."""
    depth = np.arange(1, breakpoints.shape[1]) if depths is None else np.asarray(depths, np.float64)
    b = np.minimum(breakpoints, upto[..., None])
    phi = _compute_time(b, tau, period)
    return (np.diff(phi, axis=-1) / depth).sum(axis=-1)
