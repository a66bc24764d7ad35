"""Helpers of the measurements: how the work was split over processes."""

from __future__ import annotations


def work_split(res, unit: str = "trials") -> dict:
    """How the work was split: the processes of a multi-process run and the trials (epochs for overhead)
    each one's devices ran."""
    return {"processes": res.processes, f"{unit}_per_process": list(res.trials_per_process) or [res.trials]}


def rate_per_s(res, elapsed: float, count=None):
    """A rate per second of this call's own work: ``count`` (default the trials) times the share of the
    trials this call computed (a resumed run counts only what it added, not what earlier calls did), over
    ``elapsed``; None where this call computed nothing or took no time."""
    done = sum(res.trials_per_process) if res.trials_per_process else res.trials
    if not done or elapsed <= 0 or not res.trials:
        return None
    total = res.trials if count is None else count
    return total * (done / res.trials) / elapsed
