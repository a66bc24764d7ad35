r"""A failure trace as the down periods of a run's units (docs/traces.md#units-scale-and-the-circle).

A replay does not read nodes: it reads *units*, one per data-parallel group, each a slot of the cluster whose
down periods fail whatever group occupies it. ``trace_units`` maps a trace's merged node periods
(``model.trace.NodePeriods``) to the N units of a run, scales time, and merges again on the circle that a
replay wraps round. ``UnitPeriods.arrays()`` is the device-ready form (``TraceArrays``).

Units
-----
* ``group`` (the default): one node per group. Group g is node g, so the trace needs M >= N nodes; groups
  0..N-1 use nodes 0..N-1 and nodes N..M-1 are not read.
* ``node``: group g is the n nodes ``g n .. g n + n - 1``, n = GPUs per group / GPUs per node
  (``nodes_per_group``; a whole number); the trace needs M >= N n nodes. A group is down while any of its
  nodes is down: a unit's periods are the union of its nodes' periods.

Scale, and the circle
---------------------
``time_scale`` s multiplies every failure time and the window by s and keeps the length of each down period
(s < 1 compresses the time between failures, not the repairs). The replay's circle has length
``P = H s`` hours. Per unit:

1. each node's records are merged first (``NodePeriods``: overlap or touch, on the line [0, H]);
2. each merged period ``[a, b)`` becomes ``[a s, a s + (b - a))``: its start is in [0, P) and its end may
   pass P (it then wraps round onto the start of the circle);
3. the unit's periods are merged again (overlap or touch) on the circle: sorted by start, merged on the
   line, and then the last period, if its end less P reaches the first start (``end - P >= first start``:
   overlap or touch across the wrap point), absorbs the first (repeatedly).

Every period of a unit is then stored as ``[start, end)`` with ``0 <= start < P`` and
``start < end < start + P``; within a unit the starts increase and ``end < next start``, and the last end
less P is below the first start. A unit down on the whole circle (a merged period of length P or more) is
refused (``ValueError`` naming the unit and the trace line of its earliest record): a group in it could
never come up. ``unit_merges`` counts the periods merged in steps 2-3 (those of several nodes of one unit
and those that the scaling makes overlap), beside the trace's own ``node_merges``.

The device form (``TraceArrays``)
---------------------------------
Per unit (row g = group g), the period starts and ends in **minutes**, float32, sorted, padded with +inf
to a common width K (``width``, at least the largest count, at least 1); the period counts; P in minutes.
A time that float32 rounds so that two periods of a unit would touch is merged again there
(``rounding_merges``), so the device form keeps the invariants above exactly in float32. ``bucket_width``
rounds the width up to a power of two, so that traces of about one size share one compiled shape.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .trace import NodePeriods

UNITS = ("group", "node")
TIME_SCALE_RANGE = (1e-6, 1e6)
ARRAY_CELLS_MAX = 2**27  # N x K float32 cells of the device form: 512 MiB for starts and ends together


def bucket_width(count: int) -> int:
    """The padded width K for a largest period count: the next power of two (at least 1), so that traces of
    about one size share one compiled shape."""
    return 1 << max(0, int(count) - 1).bit_length()


def nodes_per_group(gpus_per_group: float, gpus_per_node: float) -> int:
    """n = GPUs per group / GPUs per node, the nodes of one group with ``unit = "node"``; ValueError unless it
    is a whole number >= 1."""
    for name, v in (("gpus_per_group", gpus_per_group), ("gpus_per_node", gpus_per_node)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not (
                math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a positive number, got {v!r}")
    n = float(gpus_per_group) / float(gpus_per_node)
    if n < 1 or abs(n - round(n)) > 1e-9 * n:
        raise ValueError(f"trace unit 'node': GPUs per group / GPUs per node must be a whole number >= 1, got "
                         f"{gpus_per_group:g} / {gpus_per_node:g} = {n:g}")
    return int(round(n))


def circle_merge(starts, ends, period: float, tags=None) -> tuple[list, list, list, int]:
    """Merge half-open periods ``[start, end)`` (``0 <= start < period``, ``end > start``) on a circle of length
    ``period``: ``(starts, ends, tags, merges)``, sorted by start, ends unwrapped (an end beyond ``period``
    wraps round), each merged period's tag the least of its periods' ``tags`` (default 0), and ``merges`` =
    periods in - periods out. Overlap or touch merges, across the wrap point too. A merged period of length
    ``>= period`` means the circle is down throughout."""
    tags = [0] * len(starts) if tags is None else list(tags)
    triples = sorted(zip(starts, ends, tags))
    out_s, out_e, out_t = [], [], []
    for a, b, t in triples:
        if out_s and a <= out_e[-1]:
            if b > out_e[-1]:
                out_e[-1] = b
            if t < out_t[-1]:
                out_t[-1] = t
        else:
            out_s.append(a)
            out_e.append(b)
            out_t.append(t)
    # the wrap point: the last period's end beyond the period reaches into the first ones
    while len(out_s) > 1 and out_e[-1] - period >= out_s[0]:
        out_e[-1] = max(out_e[-1], out_e[0] + period)
        out_t[-1] = min(out_t[-1], out_t[0])
        del out_s[0], out_e[0], out_t[0]
    return out_s, out_e, out_t, len(triples) - len(out_s)


@dataclasses.dataclass(frozen=True, eq=False)
class TraceArrays:
    """The device-ready form of a unit trace (times in minutes).

    Attributes:
      starts_min: ``float32[N, K]``, row g = group g's unit: its period starts, ascending, in [0, P); +inf
        beyond its count.
      ends_min: ``float32[N, K]``: each period's end, ``start < end < start + P`` (above P: the period wraps
        round); +inf beyond the count.
      counts: ``int32[N]``, the periods of each unit (0..K).
      circle_min: P in minutes (a float32 value, as a Python float).
      records, node_merges, unit_merges, rounding_merges: the trace's counts (``UnitPeriods``) and the
        periods merged again after float32 rounding.
    """

    starts_min: np.ndarray
    ends_min: np.ndarray
    counts: np.ndarray
    circle_min: float
    records: int
    node_merges: int
    unit_merges: int
    rounding_merges: int

    @property
    def width(self) -> int:
        """K, the padded width (the static shape a kernel compiles for)."""
        return int(self.starts_min.shape[1])

    @property
    def units(self) -> int:
        return int(self.starts_min.shape[0])


@dataclasses.dataclass(frozen=True, eq=False)
class UnitPeriods:
    """A trace's down periods per unit, scaled and merged on the circle (the module docstring).

    Attributes:
      units: N (unit g is group g's slot).
      circle_hours: P = H s, the circle's length.
      time_scale: s. window_hours: H (unscaled). trace_unit: ``group`` or ``node``. nodes_per_unit: n.
      unit: ``int64[K]``; start_hours, end_hours: ``float64[K]``, sorted by unit, then start, with
        ``0 <= start < P``, ``start < end < start + P``.
      lines: ``int64[K]``, the trace line of each period's earliest record.
      records: the trace's records; node_merges: records merged per node; unit_merges: periods merged per
        unit after the mapping and the scaling (module docstring).
      path: the trace file.
    """

    units: int
    circle_hours: float
    time_scale: float
    window_hours: float
    trace_unit: str
    nodes_per_unit: int
    unit: np.ndarray
    start_hours: np.ndarray
    end_hours: np.ndarray
    lines: np.ndarray
    records: int
    node_merges: int
    unit_merges: int
    path: str = ""

    def __len__(self) -> int:
        return int(self.unit.size)

    @property
    def counts(self) -> np.ndarray:
        """``int64[N]``: the periods of each unit."""
        return np.bincount(self.unit, minlength=self.units).astype(np.int64)

    @property
    def lengths_hours(self) -> np.ndarray:
        """``float64[K]``: each period's length (the down time it stands for)."""
        return self.end_hours - self.start_hours

    def unit_slices(self):
        """``[(start_hours, end_hours)]`` per unit, float64 arrays (views)."""
        bounds = np.searchsorted(self.unit, np.arange(self.units + 1))
        return [(self.start_hours[bounds[g]:bounds[g + 1]], self.end_hours[bounds[g]:bounds[g + 1]])
                for g in range(self.units)]

    def arrays(self, width: int | None = None) -> TraceArrays:
        """The device form (``TraceArrays``): minutes, float32, padded with +inf to ``width`` (default: the
        largest count, at least 1); ValueError when ``width`` is below a unit's count or the arrays would
        exceed ``ARRAY_CELLS_MAX`` cells."""
        p32 = float(np.float32(self.circle_hours * 60.0))
        rows, rounding = [], 0
        for s, e in self.unit_slices():
            s32 = (s * 60.0).astype(np.float32).astype(np.float64)
            e32 = (e * 60.0).astype(np.float32).astype(np.float64)
            wrap = s32 >= p32
            s32, e32 = np.where(wrap, s32 - p32, s32), np.where(wrap, e32 - p32, e32)
            if s32.size > 1 and (np.any(e32[:-1] >= s32[1:]) or np.any(wrap) or e32[-1] - p32 >= s32[0]):
                s_l, e_l, _, merged = circle_merge(s32.tolist(), e32.tolist(), p32)
                rounding += merged
                s32, e32 = np.asarray(s_l), np.asarray(e_l)
            rows.append((s32, e32))
        counts = np.asarray([s.size for s, _ in rows], np.int32)
        need = max(1, int(counts.max(initial=0)))
        k = need if width is None else int(width)
        if k < need:
            raise ValueError(f"width {k} is below the largest period count of a unit ({need})")
        if self.units * k > ARRAY_CELLS_MAX:
            raise ValueError(f"the trace's device form would hold {self.units:,} x {k:,} periods, more than "
                             f"{ARRAY_CELLS_MAX:,}: a unit has too many down periods")
        starts = np.full((self.units, k), np.inf, np.float32)
        ends = np.full((self.units, k), np.inf, np.float32)
        for g, (s, e) in enumerate(rows):
            starts[g, :s.size] = s
            ends[g, :e.size] = e
        return TraceArrays(starts, ends, counts, p32, self.records, self.node_merges, self.unit_merges, rounding)


def trace_units(periods: NodePeriods, groups: int, unit: str = "group", nodes_per_group: int = 1,
                time_scale: float = 1.0) -> UnitPeriods:
    """Map a trace's merged node periods to the N units of a run, scale time by s and merge on the circle of
    length P = H s (the module docstring). ValueError: a trace with too few nodes, an unknown unit, a bad
    scale, or a unit down on the whole circle."""
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or int(groups) < 1:
        raise ValueError(f"groups must be a whole number >= 1, got {groups!r}")
    n_units = int(groups)
    if unit not in UNITS:
        raise ValueError(f"trace unit must be one of {', '.join(UNITS)}, got {unit!r}")
    if isinstance(nodes_per_group, bool) or not isinstance(nodes_per_group, (int, np.integer)) or nodes_per_group < 1:
        raise ValueError(f"nodes per group must be a whole number >= 1, got {nodes_per_group!r}")
    n = int(nodes_per_group)
    if unit == "group" and n != 1:
        raise ValueError("trace unit 'group' is one node per group; nodes per group > 1 needs trace unit 'node'")
    s = time_scale
    lo, hi = TIME_SCALE_RANGE
    if isinstance(s, bool) or not isinstance(s, (int, float, np.integer, np.floating)) or not (
            math.isfinite(s) and lo <= s <= hi):
        raise ValueError(f"trace time scale must be a number in [{lo:g}, {hi:g}], got {s!r}")
    s = float(s)
    name = periods.path or "the trace"
    need = n_units * n
    if periods.nodes < need:
        what = f"{n_units:,} groups" if unit == "group" else f"{n_units:,} groups of {n} nodes"
        raise ValueError(f"{name} watches {periods.nodes:,} nodes; {what} need {need:,} (# nodes = M)")
    period = periods.window_hours * s
    keep = periods.node < need
    u = periods.node[keep] // n
    a = periods.start_hours[keep] * s
    # lengths kept; at s = 1 the ends are the trace's own (a + (b - a) may differ from b by a rounding)
    b = periods.end_hours[keep] if s == 1.0 else a + (periods.end_hours[keep] - periods.start_hours[keep])
    wrap = a >= period  # float rounding only (a start below H scales to below P in exact arithmetic)
    a, b = np.where(wrap, a - period, a), np.where(wrap, b - period, b)
    line = periods.lines[keep]
    order = np.lexsort((b, a, u))
    u_l, a_l, b_l, line_l = u[order].tolist(), a[order].tolist(), b[order].tolist(), line[order].tolist()
    out_u, out_a, out_b, out_line, merges = [], [], [], [], 0
    i, k = 0, len(u_l)
    while i < k:
        j = i
        while j < k and u_l[j] == u_l[i]:
            j += 1
        ss, ee, tt, merged = circle_merge(a_l[i:j], b_l[i:j], period, line_l[i:j])
        merges += merged
        for x, y, ln in zip(ss, ee, tt):
            if y - x >= period:
                raise ValueError(f"{name} line {ln}: unit {u_l[i]} ({'node' if n == 1 else 'nodes'} "
                                 f"{u_l[i] * n}{'' if n == 1 else f'..{u_l[i] * n + n - 1}'}) is down on the "
                                 f"whole circle of {period:g} h (window x time scale): no group could come up "
                                 "in it")
        out_line += tt
        out_u += [u_l[i]] * len(ss)
        out_a += ss
        out_b += ee
        i = j
    return UnitPeriods(n_units, period, s, periods.window_hours, unit, n, np.asarray(out_u, np.int64),
                       np.asarray(out_a, np.float64), np.asarray(out_b, np.float64), np.asarray(out_line, np.int64),
                       periods.records, periods.merges, merges, periods.path)
