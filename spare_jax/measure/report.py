"""The result of a measurement: named values, ``to_json()`` for ``--json``."""

from __future__ import annotations

import math


class Report:
    """An answer: its values by name (``report["mc_mean"]``) and ``to_json()``, the JSON object a command
    prints (NaN and infinities already ``None``)."""

    def __init__(self, values: dict):
        self._values = dict(values)

    def __getitem__(self, key):
        return self._values[key]

    def __contains__(self, key) -> bool:
        return key in self._values

    def keys(self):
        return self._values.keys()

    def to_json(self) -> dict:
        return dict(self._values)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in list(self._values.items())[:6])
        return f"Report({shown}, ...)"


def finite_or_none(v):
    """NaN/inf -> None so that the JSON is strict."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def check_work_inputs(groups: int, sampling, width: int, bytes_per_item: int) -> None:
    """Up front, before any work: the chunk's working set fits the memory and ``out_dir`` can hold a run."""
    from ..model.bounds import chunk_bytes, memory_budget_bytes

    budget = memory_budget_bytes()
    chunk = sampling.chunk_size
    if chunk is not None and chunk_bytes(chunk, width, bytes_per_item) > budget:
        fit = budget // chunk_bytes(1, width, bytes_per_item)
        raise ValueError(f"--chunk-size {chunk}: a chunk needs about "
                         f"{chunk_bytes(chunk, width, bytes_per_item) / 2**30:.3g} GiB here, more than half the RAM "
                         f"({budget / 2**30:.3g} GiB); use at most {fit}")
    if chunk_bytes(64, width, bytes_per_item) > budget:
        raise ValueError(f"--groups {groups} (with --redundancy): even a 64-trial chunk needs about "
                         f"{chunk_bytes(64, width, bytes_per_item) / 2**30:.3g} GiB, more than half the RAM")
    if sampling.out_dir is not None:
        from ..kernels.driver import ChunkStore

        ChunkStore.check_dir(sampling.out_dir)


def work_split(res, unit: str = "trials") -> dict:
    """How the work was split: the processes of a multi-process run and the trials (epochs for overhead)
    each one's devices ran."""
    return {"processes": res.processes, f"{unit}_per_process": list(res.trials_per_process) or [res.trials]}


def failure_clock(cluster) -> dict:
    """The resolved failure clock beside the results: per-group MTBF, the MTBF of the N groups run, and the
    per-GPU MTBF (GPU-hours per group failure)."""
    model = cluster.model
    return {"group_mtbf_min": model.group_mtbf_min, "cluster_mtbf_min": model.cluster_mtbf_min(cluster.groups),
            "gpu_mtbf_hours": model.group_mtbf_min * model.gpus_per_group / 60.0}
