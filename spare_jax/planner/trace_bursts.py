r"""Bursts and neighbours in a failure trace, each beside what independent units would give
(docs/traces.md#the-fitted-model-beside-the-replay).

The failures are the starts of down periods, ``(unit, start)``; ``span`` is the length of the time they were
watched over (the window H of raw records, or the circle P = H s of a scaled trace) and ``window`` w the
burst window (default 10 min of scaled time), in the same unit (hours).

Bursts
------
A failure is *in a burst* when a failure of **another** unit starts within w of it, before or after
(``|t_j - t_i| <= w``, up to a rounding of ``1e-9`` of the times' range: a time converted from minutes to
hours is not exact). ``burst_pct`` is the share of failures in a burst.

*Expected if independent* (``burst_independent_pct``). Let unit v fail at the rate ``rho_v = n_v / span``
(its failures over the time watched: the rate of its period starts per hour of wall time, down time
included). If the units are independent, the failures of the other units near a failure of unit u at time t
do not depend on t; over the ``2w`` around it unit v starts on average ``2 w rho_v`` periods. Treating the
superposition of the other units' sparse starts as a Poisson process of rate ``Lambda - rho_u``
(``Lambda = sum_v rho_v``), the chance that none of them starts within w is ``exp(-2 w (Lambda - rho_u))``,
so

.. math::  E[\text{burst share}] = \frac{1}{n} \sum_u n_u \left(1 - e^{-2 w (\Lambda - \rho_u)}\right),

with n the failures. On a line, the failures within w of either end see a window cut short; that edge term
is of order ``w / span`` and left out. On a circle (``circular``: the trace wraps round, as a replay reads it)
times are compared modulo ``span`` and there is no edge.

Neighbours
----------
The *pairs* are the unordered pairs of failures of two different units that start within w of each other.
``neighbour_pct`` is the share of pairs whose units sit within ``radius`` ring positions
(ring distance ``min(|i - j|, N - |i - j|)`` between ring positions i and j, N the units).

*Expected if independent* (``neighbour_independent_pct``). For independent units (Poisson, as above) the pairs
of units u, v within w of each other arrive at the rate ``2 w rho_u rho_v`` per hour, whatever their
distance, so the share of pairs at ring distance ``<= radius`` is

.. math::  \frac{\sum_{u < v,\ d(u, v) \le radius} \rho_u \rho_v}{\sum_{u < v} \rho_u \rho_v}, \qquad
           \sum_{u < v} \rho_u \rho_v = \frac{(\sum_u \rho_u)^2 - \sum_u \rho_u^2}{2}.

With even rates this is the share of unit pairs within ``radius``: ``2 radius / (N - 1)`` when
``2 radius < N`` (``neighbour_even_pct``, reported beside it: uneven rates move the figure when the
most-failing units sit near each other).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..results import Result

BURST_WINDOW_MIN = 10.0
RING_RADIUS = 3
PAIRS_MAX = 50_000_000  # pairs enumerated (a burst of k simultaneous failures makes k(k-1)/2)


@dataclasses.dataclass(frozen=True)
class BurstFit(Result):
    """Bursts and neighbours of a trace (the module docstring); shares in percent."""

    failures: int
    burst_window_min: float
    ring_radius: int
    burst_pct: float
    burst_independent_pct: float
    pairs: int
    neighbour_pct: float | None  # None without pairs
    neighbour_independent_pct: float
    neighbour_even_pct: float


def ring_distance(pos_a, pos_b, units: int) -> np.ndarray:
    """The distance between ring positions on a ring of ``units`` positions."""
    d = np.abs(np.asarray(pos_a, np.int64) - np.asarray(pos_b, np.int64))
    return np.minimum(d, units - d)


def coincident_pairs(unit, start, window: float, span: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(i, j)``, the index pairs (into ``unit``/``start``) of failures of two different units that start within
    ``window`` of each other, each unordered pair once; ``span``: times are on a circle of that length (pairs
    across the wrap point count), None for a line."""
    unit = np.asarray(unit, np.int64)
    start = np.asarray(start, np.float64)
    n = start.size
    order = np.argsort(start, kind="stable")
    t = start[order]
    u = unit[order]
    if span is not None:
        if not 2 * window < span:
            raise ValueError(f"the burst window ({window:g} h) must be below half the circle ({span:g} h)")
        head = int(np.searchsorted(t, window, side="right"))  # the failures a wrap can pair with
        t = np.concatenate([t, t[:head] + span])
        u = np.concatenate([u, u[:head]])
        idx = np.concatenate([order, order[:head]])
    else:
        idx = order
    # "within w" includes w itself; times converted from minutes to hours differ from w by a rounding, so the
    # comparison allows a relative 1e-9 of the times' range (a few microseconds at a few years)
    reach = window + 1e-9 * max(1.0, float(t[-1]) if t.size else 1.0)
    out_i, out_j, total = [], [], 0
    for d in range(1, t.size):
        if d >= n:  # on a circle, offset n is the failure's own copy
            break
        m = min(n, t.size - d)
        close = (t[d:d + m] - t[:m]) <= reach
        if not close.any():  # the times are sorted: no pair at offset d means none further
            break
        close &= u[d:d + m] != u[:m]
        a = np.flatnonzero(close)
        total += a.size
        if total > PAIRS_MAX:
            raise ValueError(f"more than {PAIRS_MAX:,} pairs of failures within {window:g} h of each other: a burst "
                             "window this wide pairs almost every failure")
        out_i.append(idx[a])
        out_j.append(idx[a + d])
    if not out_i:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(out_i), np.concatenate(out_j)


def burst_statistics(unit, start, units: int, span: float, window: float, radius: int = RING_RADIUS,
                     circular: bool = False, ring=None) -> BurstFit:
    """Bursts and neighbours of the failures ``(unit, start)`` of ``units`` units watched over ``span`` (the
    module docstring); ``window`` w in the unit of the times (hours), ``ring`` the unit at each ring position
    (default: unit i at position i)."""
    unit = np.asarray(unit, np.int64)
    start = np.asarray(start, np.float64)
    n = int(unit.size)
    if not (math.isfinite(window) and window > 0):
        raise ValueError(f"the burst window must be a positive number, got {window!r}")
    if isinstance(radius, bool) or not isinstance(radius, (int, np.integer)) or radius < 0:
        raise ValueError(f"the ring radius must be a whole number >= 0, got {radius!r}")
    position = np.arange(units, dtype=np.int64)
    if ring is not None:
        ring = np.asarray(ring, np.int64)
        if ring.shape != (units,) or not np.array_equal(np.sort(ring), position):
            raise ValueError(f"the ring order must be a permutation of the {units} units")
        position[ring] = np.arange(units)
    i, j = coincident_pairs(unit, start, window, span if circular else None)
    in_burst = np.zeros(n, bool)
    in_burst[i] = True
    in_burst[j] = True
    counts = np.bincount(unit, minlength=units).astype(np.float64)
    rho = counts / span
    total = rho.sum()
    expected = float(np.sum(counts * -np.expm1(-2.0 * window * (total - rho)))) / n if n else 0.0
    near = ring_distance(position[unit[i]], position[unit[j]], units) <= radius
    # rho at each ring position, and the rate-weighted share of unit pairs within the radius
    rho_ring = np.empty(units)
    rho_ring[position] = rho
    all_pairs = (total * total - float(np.sum(rho * rho))) / 2.0
    reach = min(int(radius), units // 2)
    close = 0.0
    for d in range(1, reach + 1):
        term = float(np.sum(rho_ring * np.roll(rho_ring, -d)))
        close += term / 2.0 if 2 * d == units else term  # the antipode of an even ring is one pair, seen twice
    unit_pairs = units * (units - 1) / 2.0
    even_close = sum(units / 2.0 if 2 * d == units else float(units) for d in range(1, reach + 1))
    return BurstFit(
        failures=n, burst_window_min=float(window) * 60.0, ring_radius=int(radius),
        burst_pct=100.0 * float(in_burst.mean()) if n else 0.0,
        burst_independent_pct=100.0 * float(expected), pairs=int(i.size),
        neighbour_pct=100.0 * float(near.mean()) if i.size else None,
        neighbour_independent_pct=100.0 * close / float(all_pairs) if all_pairs > 0 else 0.0,
        neighbour_even_pct=100.0 * even_close / unit_pairs if unit_pairs > 0 else 0.0)
