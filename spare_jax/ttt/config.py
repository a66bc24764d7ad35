"""The configuration of a training run: work, checkpoint and restart costs, the schemes, what a restart does
to the failure clocks. Shared by every time-to-train path (closed forms, epoch pools, Monte Carlo)."""

from __future__ import annotations

import dataclasses
import math


SCHEMES = ("spare", "rep", "none")
RESTART_SCALING = ("none", "linear", "quadratic")
AGES = ("kept", "renewed")
"""What a global restart does to the groups' failure clocks.

``kept`` (default): the restart re-initialises every collective and replaces the *failed* hardware (those
groups start at age 0); the surviving groups' GPUs are not rejuvenated and keep their age, so with an ageing
law (Weibull k != 1) the next epoch's failure times are residual lifetimes conditional on the ages, and
successive epochs are a Markov chain in the age vector, not i.i.d. ``renewed``: every group's clock
restarts at each global restart (i.i.d. epochs; the model of the paper's closed forms). For exponential
failures the two are the same model (memorylessness), so the defaults reproduce every exponential number.
"""


def check_ages(ages) -> str:
    if ages not in AGES:
        raise ValueError(f"ages must be one of {', '.join(AGES)}, got {ages!r}")
    return ages


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """Time-to-train parameters (minutes unless named otherwise)."""

    work_hours: float = 720.0
    ckpt_cost_min: float = 5.0
    restart_min: float = 60.0
    restart_scaling: str = "none"  # restart time vs GPU count relative to the reference cluster
    reference_gpus: float = 600_000.0

    def __post_init__(self):
        for name in ("work_hours", "ckpt_cost_min", "restart_min"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or (name == "work_hours" and v <= 0):
                raise ValueError(f"{name} must be a finite number {'> 0' if name == 'work_hours' else '>= 0'}, "
                                 f"got {v!r}")
        if self.restart_scaling not in RESTART_SCALING:
            raise ValueError(f"restart_scaling must be one of {', '.join(RESTART_SCALING)}, got "
                             f"{self.restart_scaling!r}")

    def restart_for(self, gpus: float) -> float:
        """Restart cost R for a cluster of ``gpus`` GPUs."""
        power = RESTART_SCALING.index(self.restart_scaling)
        return self.restart_min * (gpus / self.reference_gpus) ** power


def scheme_placement(scheme: str, groups: int, redundancy: int) -> tuple[str, int]:
    """(placement kind, r) used by a scheme: rep uses block (replica sets, so r must divide N), none r = 1.

    ``rep`` with r not dividing N is refused: classic replication has no layout there (a silent fallback to
    ``stacked`` would report a different scheme under the name ``rep``)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    if scheme == "none":
        return "stacked", 1
    if scheme == "rep":
        if redundancy < 1 or groups % redundancy:
            raise ValueError(f"scheme 'rep' (replica sets, block placement) needs redundancy (r) to divide "
                             f"groups (N): r={redundancy}, N={groups}")
        return "block", redundancy
    return "stacked", redundancy
