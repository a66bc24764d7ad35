"""A training run's costs: work, checkpoints, restarts and the checkpoint interval (``Training``)."""

from __future__ import annotations

import dataclasses
import math

RESTART_SCALING = ("none", "linear", "quadratic")


@dataclasses.dataclass(frozen=True)
class Training:
    """A training run's costs (minutes unless named otherwise): W hours of failure-free work, a blocking
    checkpoint of C, a global restart of R (scaled with the GPU count relative to ``reference_gpus`` by
    ``restart_scaling``) and the checkpoint interval tau (``None``: the optimum)."""

    work_hours: float = 720.0
    ckpt_cost_min: float = 5.0
    restart_min: float = 60.0
    restart_scaling: str = "none"  # restart time vs GPU count relative to the reference cluster
    reference_gpus: float = 600_000.0
    ckpt_interval_min: float | None = None  # tau; None: chosen optimally

    def __post_init__(self):
        for name in ("work_hours", "ckpt_cost_min", "restart_min"):
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

    def restart_for(self, gpus: float) -> float:
        """Restart cost R for a cluster of ``gpus`` GPUs."""
        power = RESTART_SCALING.index(self.restart_scaling)
        return self.restart_min * (gpus / self.reference_gpus) ** power
