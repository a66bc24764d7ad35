"""A training run's costs: work, checkpoints, restarts and the checkpoint interval (``Training``)."""

from __future__ import annotations

import dataclasses
import math

from .coverage import COVERED, Coverage

RESTART_SCALING = ("none", "linear", "quadratic")


@dataclasses.dataclass(frozen=True)
class Training:
    """A training run's costs (minutes unless named otherwise): W hours of failure-free work, a blocking
    checkpoint of C, a global restart of R (scaled with the GPU count relative to ``reference_gpus`` by
    ``restart_scaling``), the checkpoint interval tau (``None``: the optimum) and the stalls: the wall time the
    whole job pauses after each group failure that does not end in a global restart (``failure_stall_min``)
    and after each group's return from repair (``rejoin_stall_min``)."""

    work_hours: float = 720.0
    ckpt_cost_min: float = 5.0
    restart_min: float = 60.0
    restart_scaling: str = "none"  # restart time vs GPU count relative to the reference cluster
    reference_gpus: float = 600_000.0
    ckpt_interval_min: float | None = None  # tau; None: chosen optimally
    failure_stall_min: float = 0.0  # the job's pause per group failure survived without a restart
    rejoin_stall_min: float = 0.0  # the job's pause per group's return from repair

    def __post_init__(self):
        for name in ("work_hours", "ckpt_cost_min", "restart_min", "failure_stall_min", "rejoin_stall_min"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or (name == "work_hours" and v <= 0):
                raise ValueError(f"{name} must be a finite number {'> 0' if name == 'work_hours' else '>= 0'}, "
                                 f"got {v!r}")
        tau = self.ckpt_interval_min
        if tau is not None and (not isinstance(tau, (int, float)) or not math.isfinite(tau) or tau <= 0):
            raise ValueError(f"ckpt_interval_min must be a finite number > 0 (or None), got {tau!r}")
        if self.restart_scaling not in RESTART_SCALING:
            raise ValueError(f"restart_scaling must be one of {', '.join(RESTART_SCALING)}, got "
                             f"{self.restart_scaling!r}")

    @property
    def stalls(self) -> bool:
        """Whether the job pauses on failures or rejoins (a stall no closed form or epoch pool models)."""
        return self.failure_stall_min > 0 or self.rejoin_stall_min > 0

    def coverage(self, scheme: str) -> Coverage:
        """What follows the stalls of ``scheme``'s run: whole runs only, except for checkpointing alone, where
        every failure is a global restart and nothing stalls."""
        if self.stalls and scheme != "none":
            return Coverage("whole_runs", "the closed-form time-to-train has no stalls (failure_stall_min, "
                                          "rejoin_stall_min): whole runs answer")
        return COVERED

    def restart_for(self, gpus: float) -> float:
        """Restart cost R for a cluster of ``gpus`` GPUs."""
        power = RESTART_SCALING.index(self.restart_scaling)
        return self.restart_min * (gpus / self.reference_gpus) ** power
