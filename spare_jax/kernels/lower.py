"""The one lowering of a run (``lower``): a ``model.runsetup.RunSetup``, a whole run or an epoch with repair
(``RunSetup.for_epoch``), to the kernel's ``(RunShape, Params)``: the static part (``run_shape.run_shape``: a
new value compiles anew) and every number (traced: a new value compiles nothing), each part's ``Params``
lowered by the part itself (``kernels.run_<part>.lower(setup)``), None for a part that is off (no domains,
no job-wide clock, no finite pool, an epoch's stalls). A number keeps its name from the setup to the part
(``RunSetup.failure_stall_min`` is ``run_stalls.Params.failure_stall_min``)."""

from __future__ import annotations

from typing import NamedTuple

from ..model.runsetup import RunSetup
from . import run_clocks as clocks
from . import run_domains as domains
from . import run_job as job
from . import run_phase as phase
from . import run_pool as pool
from . import run_rate as rate
from . import run_stalls as stalls
from .run_shape import run_shape


class Params(NamedTuple):
    """Every part's numbers (host arrays; the kernel's traced input), each lowered by its part (None: the
    part is off)."""

    clocks: clocks.Params
    domains: domains.Params | None
    job: job.Params | None
    pool: pool.Params | None
    stalls: stalls.Params | None
    phase: phase.Params
    rate: rate.Params


def lower(setup: RunSetup, capacity: int | None = None) -> tuple:
    """``(RunShape, Params)`` of ``setup``, a whole run or an epoch (``setup.epoch``); ``capacity``: a spare
    pool's static size at least this (``run_shape``)."""
    shape = run_shape(setup, capacity)
    return shape, Params(
        clocks=clocks.lower(setup), domains=domains.lower(setup) if sum(shape.domain_counts) else None,
        job=job.lower(setup) if shape.job_wide else None,
        pool=pool.lower(setup) if shape.spare_capacity is not None else None,
        stalls=None if shape.epoch else stalls.lower(setup), phase=phase.lower(setup), rate=rate.lower(setup))
