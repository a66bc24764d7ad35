"""Helpers of the measurements: how the work was split over processes."""

from __future__ import annotations


def work_split(res, unit: str = "trials") -> dict:
    """How the work was split: the processes of a multi-process run and the trials (epochs for overhead)
    each one's devices ran."""
    return {"processes": res.processes, f"{unit}_per_process": list(res.trials_per_process) or [res.trials]}
