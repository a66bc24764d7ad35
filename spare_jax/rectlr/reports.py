"""The reorder controller's answers, each a ``Report`` whose ``to_json()`` is what its command prints with
``--json``: one failure trace through the controller, ``reorder(placement, failed, ...)`` (``spare-jax
reorder``), and the ring order searched for a cluster, ``place_report(cluster, r, ...)`` (``spare-jax place``)."""

from __future__ import annotations

from ..model.cluster import Cluster, Sampling
from ..results import Report
from .place import RingSearch


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
        raise ValueError("`solver` scipy has no capacities: use ortools or networkx with `microbatches`")
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


def place_report(cluster: Cluster, redundancy: int, placement: str = "stacked", search: RingSearch = RingSearch(),
                 sampling: Sampling = Sampling()) -> Report:
    """The ring order for ``cluster`` at redundancy ``redundancy`` (``place.search_ring``): every order
    evaluated on ``sampling.count`` fresh epochs, best first, the search's counts, the best order as
    ``best_ring`` (ring position i: physical group) and the cluster's failure clock. Refused up front when even
    a 64-epoch chunk of the cluster does not fit the memory."""
    from ..kernels.driver import check_work_inputs
    from .place import search_ring

    check_work_inputs(cluster.groups, sampling, cluster.groups, 16)
    found = search_ring(cluster, redundancy, placement, search, sampling).to_json()
    found["best_ring"] = list(found.pop("best_ring"))
    return Report({**found, **cluster.failure_clock()})
