"""Helpers of the measurements: how the work was split over processes."""

from __future__ import annotations

from ..kernels.driver import check_work_inputs  # noqa: F401
from ..results import Report, finite_or_none  # noqa: F401


def work_split(res, unit: str = "trials") -> dict:
    """How the work was split: the processes of a multi-process run and the trials (epochs for overhead)
    each one's devices ran."""
    return {"processes": res.processes, f"{unit}_per_process": list(res.trials_per_process) or [res.trials]}
