"""The static part of a run, for the kernel (``kernels.run``): ``RunShape`` (a new value compiles anew), from a
``model.runsetup.RunSetup`` (``run_shape``); its numbers are lowered by each part (``kernels.lower``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..model.runsetup import RunSetup


class RunShape(NamedTuple):
    """What changes the compiled program of a run (static): a new value compiles anew.

    ``weibull``: the group clocks are Weibull (else exponential); ``renewed``: a global restart draws every
    group a new clock; ``domain_counts``: the number of domains at each level; ``job_wide``: a job-wide clock;
    ``repair_law``: ``fixed``, ``exp``, ``lognormal`` or None (no repair); ``spare_capacity``: the static size
    of a finite spare pool's buffers (None: an unlimited pool), any K up to it runs in the same program.
    ``redundancy``: rep's r (its blocks are shapes), 1 for ``stacked`` with r = 1, else 0: r and m are then
    numbers of the run (``kernels.lower.Params``), so one program serves every r >= 2 and every m; ``wide_capacity``:
    N m reaches 2^24 (the depth's quotients are then taken in integers). ``epoch``: None for a whole run;
    ``wipeout`` or ``depth`` for an epoch with repair (``kernels.repair``): it runs from every group up to the
    first wipe-out or job-wide failure (or the time limit), with no checkpoint and no restart; ``wipeout``
    tests only for a lost shard, through the rate part's ``holders`` (any placement, ``scheme`` its kind),
    ``depth`` also keeps the depth (``scheme`` ``spare`` for the stacked placement, ``block``). ``trace``: the
    group clocks are a failure trace's down periods (``kernels.run_trace``; ``repair_law`` ``trace``: a group
    returns at the end of the period that failed it; ``trace_hardware``: with a finite pool, a failed group's
    node set is away until the end of the period that failed it, not for a fixed H); ``log_events``: keep each run's first that many group
    events (failures, returns, restart ends) in its outputs (for dumping a sampled run as a trace). ``parts``:
    parts a caller adds to a whole run (``kernels.run.run_kernel``; docs/architecture.md#adding-a-mechanism)."""

    scheme: str
    groups: int
    redundancy: int
    wide_capacity: bool
    weibull: bool
    renewed: bool
    domain_counts: tuple
    job_wide: bool
    repair_law: str | None
    spare_capacity: int | None
    elastic_data: str
    epoch: str | None = None
    trace: bool = False
    log_events: int = 0
    trace_hardware: bool = False
    parts: tuple = ()


def spare_capacity(spares: int) -> int:
    """The static size of a spare pool of ``spares`` node sets: a power of 2, at least 8 (K within it shares
    one compiled kernel)."""
    return max(8, 1 << max(0, int(spares) - 1).bit_length())


def run_shape(setup: RunSetup, capacity: int | None = None) -> RunShape:
    """The static part of ``setup`` (a whole run, or an epoch: ``setup.epoch``); ``capacity``: a spare pool's
    static size at least this (a sweep over K up to it then shares one compiled program)."""
    r, ep = int(setup.redundancy), setup.epoch
    if setup.scheme in ("rep", "block") or (ep is not None and ep.kind == "wipeout"):
        static_r = r  # rep's blocks, and an epoch's wipe-out test on the holders, are shapes
    else:
        static_r = int(setup.scheme in ("spare", "none") and r == 1)
    law = setup.repair_law if ep is not None or setup.repair_time_min is not None else None
    return RunShape(
        scheme=setup.scheme, groups=int(setup.groups), redundancy=static_r,
        wide_capacity=int(setup.groups) * int(setup.microbatches) >= 2 ** 24,
        weibull=ep.weibull if ep is not None else setup.weibull_shape != 1.0, renewed=setup.ages == "renewed",
        domain_counts=tuple(int(np.asarray(members).max()) + 1 for members, _ in setup.domains),
        job_wide=setup.job_mtbf_min is not None, repair_law=law,
        spare_capacity=None if setup.spares is None else spare_capacity(max(setup.spares, capacity or 0)),
        elastic_data=setup.elastic_data, epoch=None if ep is None else ep.kind)
