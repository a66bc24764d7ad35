"""One failure trace through the reorder controller: ``reorder(placement, failed, ...)``, a ``Report`` whose
``to_json()`` is what ``spare-jax reorder --json`` prints."""

from __future__ import annotations

from ..results import Report


def reorder(placement, failed, times=None, solver: str = "ortools", microbatches: int = 1) -> Report:
    """Replay the failure order ``failed`` (group ids; ``times``: their minutes, optional) through RECTLR on
    ``placement``: the state after the last event, the totals, and each event (phase, depth, shards moved,
    latency). With ``microbatches`` m > 1 the micro-batch controller schedules micro-batches instead."""
    if microbatches > 1:
        return _microbatches(placement, failed, times, solver, microbatches)
    from .reorder import replay

    records, _ = replay(placement, failed, times, solver=solver)
    last = records[-1]
    return Report({
        "depth": last.depth, "phase": last.phase, "moved": last.moved, "moved_naive": last.moved_naive,
        "wiped_out": last.wiped_out, "lost_shards": last.lost_shards, "latency_ms": last.latency_ms,
        "groups": placement.groups, "redundancy": placement.redundancy, "placement": placement.kind,
        "solver": solver, "events": len(records), "ignored_after_wipeout": len(failed) - len(records),
        "total_moved": sum(r.moved for r in records), "total_moved_naive": sum(r.moved_naive for r in records),
        "phases": {str(p): sum(1 for r in records if r.phase == p) for p in (0, 2, -1)
                   if any(r.phase == p for r in records)},
        "per_event": [{"group": r.group, "phase": r.phase, "depth": r.depth, "moved": r.moved,
                       "moved_naive": r.moved_naive, "latency_ms": round(r.latency_ms, 3),
                       **({"time_min": r.time_min} if r.time_min is not None else {})} for r in records],
    })


def _microbatches(placement, failed, times, solver: str, microbatches: int) -> Report:
    from .reorder_mb import replay_microbatches

    if solver == "scipy":
        raise ValueError("--solver scipy has no capacities: use ortools or networkx with --microbatches")
    records, ctl = replay_microbatches(placement, failed, microbatches, times, solver=solver)
    last = records[-1]
    return Report({
        "microbatches": ctl.m, "capacity": last.capacity, "depth": last.depth, "phase": last.phase,
        "moved_microbatches": last.moved, "wiped_out": last.wiped_out, "lost_shards": last.lost_shards,
        "latency_ms": last.latency_ms, "groups": placement.groups, "redundancy": placement.redundancy,
        "placement": placement.kind, "solver": solver, "events": len(records),
        "ignored_after_wipeout": len(failed) - len(records),
        "total_moved_microbatches": sum(r.moved for r in records),
        "per_event": [{"group": r.group, "phase": r.phase, "capacity": r.capacity, "depth": r.depth,
                       "moved_microbatches": r.moved, "latency_ms": round(r.latency_ms, 3),
                       **({"time_min": r.time_min} if r.time_min is not None else {})} for r in records],
    })
