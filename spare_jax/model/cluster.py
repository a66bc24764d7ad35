"""A cluster, and how a Monte Carlo over it runs: the values the library's answers take.

``Cluster`` is what the hardware and its failures are (N data-parallel groups, the failure law with its MTBF
and GPUs per group, the scenario, the repair law); ``Sampling`` is how a Monte Carlo estimate is made (sample
size, seed, chunks, devices, resumable directory, progress). Results depend on the cluster, the sample size
and the seed only, never on the rest of ``Sampling``.
"""

from __future__ import annotations

import dataclasses

from .coverage import COVERED, Coverage, widest
from .failures import FailureModel
from .repair import Repair
from .scenario import Scenario


@dataclasses.dataclass(frozen=True)
class Cluster:
    """N data-parallel groups, their failure law (``FailureModel``: MTBF, distribution, GPUs per group), the
    ``Scenario`` (job-wide failures, domains, ring order, uneven groups, micro-batches) and the repair law
    (``None``: a failed group waits for the next global restart)."""

    groups: int = 600
    model: FailureModel = FailureModel()
    scenario: Scenario = Scenario()
    repair: Repair | None = None

    @property
    def gpus(self) -> float:
        return self.groups * self.model.gpus_per_group

    @property
    def epoch_kernel(self) -> str:
        """The kernel that samples this cluster's epochs: ``"repair"`` with a repair (failed groups rejoin during
        the epoch), else ``"scenario"`` (the base model's kernels, or the scenario's where it has parts)."""
        return "scenario" if self.repair is None else "repair"

    @property
    def stationary_downs(self) -> bool:
        """Whether in the long run each group is down independently with p = D / (MTBF + D): a repair time, no
        finite spare pool (its restarts would couple the groups) and groups alike (``Scenario.iid``)."""
        rep = self.repair
        return rep is not None and rep.repair_time_min is not None and rep.spares is None and self.scenario.iid

    def coverage(self, scheme: str, ages: str = "kept") -> Coverage:
        """What follows a run of ``scheme`` on this cluster: the widest of its parts (the clocks at ``ages``,
        the scenario, the repair), and whole runs for clocks other than exponential under a scenario with no
        closed form (no epoch pool follows Weibull clocks under domains, lemons or a ring order)."""
        clocks, scenario = self.model.coverage(ages), self.scenario.coverage()
        both = COVERED
        if clocks.rank() > 0 and scenario.rank() > 0:
            both = Coverage("whole_runs", "Weibull clocks under domains, lemons or a ring order: no epoch pool "
                                          "follows them")
        return widest(clocks, scenario, COVERED if self.repair is None else self.repair.coverage(scheme), both)

    def failure_clock(self) -> dict:
        """The resolved failure clock reported beside results: per-group MTBF, the MTBF of the N groups run,
        and the per-GPU MTBF (GPU-hours per group failure); empty where per-group MTBFs replace the model's."""
        if self.scenario.group_mtbf_min is not None:
            return {}
        model = self.model
        return {"group_mtbf_min": model.group_mtbf_min, "cluster_mtbf_min": model.cluster_mtbf_min(self.groups),
                "gpu_mtbf_hours": model.group_mtbf_min * model.gpus_per_group / 60.0}


@dataclasses.dataclass(frozen=True)
class Sampling:
    """How a Monte Carlo runs: ``count`` samples (wipe-out trials, or epochs), ``seed``, and the execution
    (``chunk_size``, ``devices``, ``out_dir`` to resume, ``progress`` bar) that never changes a number."""

    count: int = 100_000
    seed: int = 0
    chunk_size: int | None = None
    devices: int | None = None
    out_dir: str | None = None
    progress: bool = False
