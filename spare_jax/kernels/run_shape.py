"""What a whole run is made of, for the kernel (``kernels.run``): ``RunShape``, the static part (a new value
compiles anew), and ``RunParams``, every number (traced: a new value compiles nothing), both from a
``model.runsetup.RunSetup`` (each part of the kernel, ``kernels.run_<part>``, lowers its own numbers from it)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..model.runsetup import RunSetup
from .depth import bisect_steps


class RunShape(NamedTuple):
    """What changes the compiled program of a run (static): a new value compiles anew.

    ``weibull``: the group clocks are Weibull (else exponential); ``renewed``: a global restart draws every
    group a new clock; ``domain_counts``: the number of domains at each level; ``job_wide``: a job-wide clock;
    ``repair_law``: ``fixed``, ``exp``, ``lognormal`` or None (no repair); ``spare_capacity``: the static size
    of a finite spare pool's buffers (None: an unlimited pool), any K up to it runs in the same program.
    ``redundancy``: rep's r (its blocks are shapes), 1 for ``stacked`` with r = 1, else 0: r and m are then
    numbers of the run (``RunParams``), so one program serves every r >= 2 and every m; ``wide_capacity``:
    N m reaches 2^24 (the depth's quotients are then taken in integers). ``epoch``: None for a whole run;
    ``wipeout`` or ``depth`` for an epoch with repair (``kernels.repair``): it runs from every group up to the
    first wipe-out or job-wide failure (or the time limit), with no checkpoint and no restart; ``wipeout``
    tests only for a lost shard, through ``RunParams.holders`` (any placement, ``scheme`` its kind),
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


class RunParams(NamedTuple):
    """Every number of a run (traced: a new value never compiles), shapes fixed by the ``RunShape``."""

    scale: np.ndarray  # float32[N]: each ring position's clock scale (the mean when exponential)
    inv_shape: np.ndarray  # float32[]: 1/k of the Weibull clocks (unused when exponential)
    domain_of: np.ndarray  # int32[L, N]: each ring position's global domain index at each level
    domain_mean: np.ndarray  # float32[max(1, domains)]: each domain's mean time between events
    job_mean: np.ndarray  # float32[]: the job-wide clock's mean
    repair: np.ndarray  # float32[3]: the repair law's numbers (``kernels.repair_law.repair_numbers``)
    ckpt_cost: np.ndarray  # float32[]: C
    restart: np.ndarray  # float32[]: R
    tau: np.ndarray  # float32[]: the checkpoint interval in computing time
    work: np.ndarray  # float32[]: W
    d_max: np.ndarray  # float32[]: the proactive restart depth (+inf: never)
    spares: np.ndarray  # int32[]: K (0 without a finite pool)
    hardware_repair: np.ndarray  # float32[]: H
    redundancy: np.ndarray  # int32[]: r
    microbatches: np.ndarray  # int32[]: m
    bisect_steps: np.ndarray  # int32[]: ``depth.bisect_steps(r, m)``
    ring: np.ndarray  # int32[N]: ring position -> physical group
    pos_of: np.ndarray  # int32[N]: physical group -> ring position
    failure_stall: np.ndarray  # float32[]: S, the job's pause after a group failure survived without a restart
    rejoin_stall: np.ndarray  # float32[]: S_j, the job's pause after a group's return from repair
    stack: np.ndarray  # int32[N, r]: an epoch's shards of each ring position (``[N, 0]`` for a whole run)
    holders: np.ndarray  # int32[N, r]: an epoch's ring positions holding each shard (``[N, 0]`` for a whole run)
    max_time: np.ndarray  # float32[]: an epoch's time limit (+inf: none)


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


def domain_tables(levels, ring, groups: int) -> tuple:
    """``(domain_of, domain_mean)`` of the failure domains ``levels`` (per level ``(members, mtbf)``,
    ``members[g]`` physical group g's domain) in the ring order ``ring``: ``int32[L, N]`` each ring position's
    global domain index at each level, ``float32[max(1, domains)]`` each domain's mean (one 1.0 without any):
    the tables of whole runs and of epochs alike."""
    dom_idx, dom_mean, offset = [], [], 0
    for members, mtbf in levels:
        members = np.asarray(members)
        dom_idx.append(members[ring] + offset)
        count = int(members.max()) + 1
        dom_mean += [mtbf] * count
        offset += count
    return (np.stack(dom_idx).astype(np.int32) if dom_idx else np.zeros((0, groups), np.int32),
            np.asarray(dom_mean if dom_mean else [1.0], np.float32))


def run_params(setup: RunSetup) -> RunParams:
    """Every number of ``setup`` (a whole run, or an epoch: ``setup.epoch``) as host arrays (the kernel's
    traced input)."""
    from .repair_law import repair_numbers

    ring, ep = np.asarray(setup.ring), setup.epoch
    dom_idx, dom_mean = domain_tables(setup.domains, ring, setup.groups)
    f32 = np.float32
    none = np.zeros((setup.groups, 0), np.int32)  # a whole run's shards: none (its depth comes from the scheme)
    return RunParams(
        scale=setup.clock_scale(), inv_shape=f32(1.0 / setup.weibull_shape), domain_of=dom_idx, domain_mean=dom_mean,
        job_mean=f32(setup.job_mtbf_min if setup.job_mtbf_min is not None else 1.0),
        repair=repair_numbers(setup.repair_time_min, setup.repair_law, setup.repair_sigma),
        ckpt_cost=f32(setup.ckpt_cost_min), restart=f32(setup.restart_min), tau=f32(setup.ckpt_interval_min),
        work=f32(setup.work_min), d_max=f32(np.inf if setup.restart_depth is None else setup.restart_depth),
        spares=np.int32(0 if setup.spares is None else setup.spares),
        hardware_repair=f32(0.0 if setup.hardware_repair_min is None else setup.hardware_repair_min),
        redundancy=np.int32(setup.redundancy), microbatches=np.int32(setup.microbatches),
        bisect_steps=np.int32(bisect_steps(setup.redundancy, setup.microbatches)),
        ring=ring.astype(np.int32), pos_of=np.argsort(ring).astype(np.int32),
        failure_stall=f32(setup.failure_stall_min), rejoin_stall=f32(setup.rejoin_stall_min),
        stack=none if ep is None else np.asarray(ep.stack, np.int32),
        holders=none if ep is None else np.asarray(ep.holders, np.int32),
        max_time=f32(np.inf if ep is None or ep.max_time_min is None else ep.max_time_min))


def lower(setup: RunSetup, capacity: int | None = None) -> tuple:
    """``(RunShape, RunParams)`` of ``setup``: the one lowering of whole runs and epochs alike (an epoch is a
    setup too, ``RunSetup.for_epoch``); ``capacity`` as for ``run_shape``."""
    return run_shape(setup, capacity), run_params(setup)
