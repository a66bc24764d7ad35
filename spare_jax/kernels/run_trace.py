r"""The failure trace as a part of the whole-run kernel (docs/traces.md#replaying-a-trace): a replay.

In a replay the group clocks of ``kernels.run`` are a trace's down periods. A ``model.trace_units.TraceArrays``
(per unit its period starts and ends in minutes, padded with +inf to a width K) goes to the device as a
``TraceDevice``, its rows in ring-position order (ring position p is physical group ``ring[p]``, whose unit is
unit ``ring[p]``). The arrays are traced values: a new trace of the same N and K compiles nothing
(``model.trace_units.bucket_width`` rounds K up to a power of two, so traces of about one size share one
program). What changes in the kernel is static, in ``RunShape``: ``trace = True``, and ``repair_law`` is
``trace`` (a group returns at the end of the period that failed it), ``fixed`` (D after its failure, or after
it obtains a spare) or None (no repair: down until the next global restart).

* **Runs.** Run k of K (run id k, K the run count) starts at trace time ``t0 = k P / K`` (float32), P the
  circle (window x time scale); wall time t is trace time ``t0 + t``, wrapping round every P. ``wraps`` =
  ``floor((t0 + TTT) / P)`` (``replay_each``, on the host in float64).
* **A group's next failure** (``next_period``): the first period of its unit that *starts* at or after the
  instant it is up (the run's start, its return, the end of a restart); a period in progress then is over for
  it; one starting at that instant fails it at once. Its end is kept per group (``State.fend``, this part's
  state, ``RunState.trace`` in ``kernels.run``) for repair from the trace.
* **One instant.** The phase's own event first (as in every run), then groups: a group's return before any
  failure, and failures in physical group order (the kernel scans the groups at the least time: O(N) per step,
  in a replay only).
* **No random numbers** are drawn unless job-wide failures are on (``RunShape.job_wide``; their draws are the
  whole-run kernel's). Weibull clocks, renewed ages (the same as kept with a trace: an up group's next period
  is the same either way), failure domains, uneven groups and a random repair law have no meaning with a trace
  and are refused (``check_replay``); so is repair from the trace with a finite spare pool. With a pool, a
  failed group's node set is away until the end of the period that failed it (``RunShape.trace_hardware``:
  the node sets away are then a set of return times, the earliest taken first, O(N + K) per step), or for a
  fixed H when one is given (the kernel's ring buffer, in the order they left).

Everything else (checkpoints, the final partial interval, stalls, the proactive restart, a finite spare pool,
the schemes) is the whole-run kernel's, unchanged. ``logged_periods`` turns a sampled run's event log
(``RunShape.log_events``) into trace records: a sampled run dumped as a trace replays to itself.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..model.runsetup import RunSetup
from ..model.trace_units import TraceArrays, bucket_width
from .run_shape import RunShape

REPAIRS = ("trace", "fixed", "none")


class TraceDevice(NamedTuple):
    """A trace on the device (traced): rows in ring-position order."""

    starts: np.ndarray  # float32[N, K] period starts (minutes, ascending in [0, P); +inf padding)
    ends: np.ndarray  # float32[N, K] their ends (may pass P: the period wraps round)
    counts: np.ndarray  # int32[N] periods per row
    circle: np.ndarray  # float32[] P (minutes)
    phys: np.ndarray  # int32[N] ring position -> physical group (the order of simultaneous failures)


def trace_device(arrays: TraceArrays, ring) -> TraceDevice:
    """The device form of ``arrays`` for a run whose ring is ``ring`` (ring position -> physical group)."""
    ring = np.asarray(ring, np.int64)
    if arrays.units != ring.size:
        raise ValueError(f"the trace has {arrays.units} units for {ring.size} groups")
    pad = ((0, 0), (0, device_width(arrays) - arrays.width))
    return TraceDevice(np.pad(np.asarray(arrays.starts_min[ring], np.float32), pad, constant_values=np.inf),
                       np.pad(np.asarray(arrays.ends_min[ring], np.float32), pad, constant_values=np.inf),
                       np.asarray(arrays.counts[ring], np.int32), np.float32(arrays.circle_min),
                       ring.astype(np.int32))


def device_width(arrays: TraceArrays) -> int:
    """K on the device: the width rounded up to a power of two (``model.trace_units.bucket_width``), so that
    traces of about one size share one compiled program."""
    return bucket_width(arrays.width)


def offsets(tr: TraceDevice, ids, total):
    """Each run's start on the circle, ``t0 = id P / total`` (float32)."""
    return ids.astype(jnp.float32) * jnp.asarray(tr.circle, jnp.float32) / jnp.asarray(total, jnp.uint32).astype(
        jnp.float32)


def next_period(tr: TraceDevice, cols, at, t0):
    """``(start, end)`` in wall time of the first period of ring positions ``cols`` that starts at or after wall
    time ``at`` (both clamped to at least ``at``; +inf for a unit with no period), for runs starting at trace
    time ``t0`` (``cols``, ``at`` and ``t0`` broadcast together)."""
    starts, ends = jnp.asarray(tr.starts, jnp.float32), jnp.asarray(tr.ends, jnp.float32)
    counts, p = jnp.asarray(tr.counts, jnp.int32), jnp.asarray(tr.circle, jnp.float32)
    cols, at, t0 = jnp.broadcast_arrays(jnp.asarray(cols, jnp.int32), jnp.asarray(at, jnp.float32),
                                        jnp.asarray(t0, jnp.float32))
    x = t0 + at
    lap = jnp.floor(x / p)
    ph = x - lap * p
    ph, lap = jnp.where(ph >= p, ph - p, ph), jnp.where(ph >= p, lap + 1, lap)  # float rounding at the wrap point
    row_s = starts[cols]  # [..., K]
    j = jnp.sum(row_s < ph[..., None], axis=-1, dtype=jnp.int32)
    cnt = counts[cols]
    wrap = j >= cnt
    j = jnp.where(wrap, 0, j)
    base = jnp.where(wrap, lap + 1, lap) * p
    s = jnp.take_along_axis(row_s, j[..., None], axis=-1)[..., 0]
    e = jnp.take_along_axis(ends[cols], j[..., None], axis=-1)[..., 0]
    inf = jnp.float32(jnp.inf)
    start = jnp.where(cnt > 0, jnp.maximum((s - t0) + base, at), inf)
    end = jnp.where(cnt > 0, jnp.maximum((e - t0) + base, at), inf)
    return start, end


def first_at_tie(nxt, down, gmin, phys):
    """The group a replay takes at its least time ``gmin``: a return (a down group) first, then the least
    physical group (``[C, N]`` scan)."""
    big = jnp.int32(np.iinfo(np.int32).max)
    key = jnp.where(nxt == gmin[:, None], jnp.where(down, -1, jnp.asarray(phys, jnp.int32)[None, :]), big)
    return jnp.argmin(key, axis=1).astype(jnp.int32)


# the trace clocks as a part of the kernel's step (``kernels.run``)
class State(NamedTuple):
    fend: jax.Array  # [C, N] the end of the period each group's ``nxt`` points to


def clock(kx, cols, start, ids):
    """``(start, end)`` of the first period of ring positions ``cols`` at or after ``start``."""
    return next_period(kx.trace, cols, start, offsets(kx.trace, ids, kx.total))


def first(kx, nxt, down, gmin):
    """The ring position a replay takes at its least time ``gmin``."""
    return first_at_tie(nxt, down, gmin, kx.trace.phys)


def check_replay(setup: RunSetup, repair: str) -> None:
    """Refuse what a replay cannot model (the module docstring), in one line."""
    if repair not in REPAIRS:
        raise ValueError(f"repair with a trace must be one of {', '.join(REPAIRS)}, got {repair!r}")
    if setup.domains:
        raise ValueError("failure domains with a failure trace: the trace's down periods are the group failures")
    if repair == "fixed":
        if setup.repair_time_min is None:
            raise ValueError("a fixed repair with a trace needs the repair time D")
        if setup.repair_law != "fixed":
            raise ValueError("a replay's repair is from the trace, a fixed time or none (a trace draws no random "
                             "repair times)")
    if repair == "none" and setup.scheme == "elastic":
        raise ValueError("elastic without repair is refused: a group that never rejoins makes it a slow none")
    if setup.spares is not None:
        if repair == "trace":
            raise ValueError("repair from the trace with a spare pool: the period's end is the hardware repair; "
                             "give the swap and restore as a fixed repair time")


def replay_setup(setup: RunSetup, repair: str) -> RunSetup:
    """``setup`` as a replay reads it: exponential clocks, kept ages, and the repair of ``repair``."""
    check_replay(setup, repair)
    rt = None if repair == "none" else (0.0 if repair == "trace" else setup.repair_time_min)
    return dataclasses.replace(setup, weibull_shape=1.0, ages="kept", repair_time_min=rt,
                               repair_law="trace" if repair == "trace" else "fixed")


def replay_shape(setup: RunSetup, repair: str, capacity: int | None = None) -> RunShape:
    """The static part of a replay of ``setup`` (``kernels.run_shape.run_shape`` with ``trace`` on)."""
    from .run_shape import run_shape

    return run_shape(replay_setup(setup, repair), capacity)._replace(
        trace=True, trace_hardware=setup.spares is not None and setup.hardware_repair_min is None)


def logged_periods(log_t, log_g, log_kind, ring, end_min: float) -> list:
    """A sampled run's down periods from its event log (``RunShape.log_events``: times, ring positions, kinds:
    1 a failure, 2 a return, 3 a restart's end, which brings every down group up): ``[(group, failed_min,
    returned_min)]`` by physical group; a period still open at the end closes at ``end_min``."""
    ring = np.asarray(ring)
    open_at: dict = {}
    out = []
    for t, g, k in zip(np.asarray(log_t, np.float64), np.asarray(log_g), np.asarray(log_kind)):
        if k == 1:
            open_at.setdefault(int(ring[g]), float(t))
        elif k == 2:
            phys = int(ring[g])
            if phys in open_at:
                out.append((phys, open_at.pop(phys), float(t)))
        elif k == 3:
            for phys, a in sorted(open_at.items()):
                out.append((phys, a, float(t)))
            open_at.clear()
    for phys, a in sorted(open_at.items()):
        out.append((phys, a, max(float(end_min), a + 1.0)))
    return sorted(out)
