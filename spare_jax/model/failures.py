"""Failure arrivals (docs/model.md#failures-wipe-out-depth-overhead, docs/model.md#kernels-and-random-numbers).

Per-group times to failure are i.i.d. Between two global restarts a failed group stays failed, so with
continuous i.i.d. times the failure *order* is a uniform random permutation whatever the distribution; the
distribution only sets the clock.

The random numbers the kernels draw these times from are ``model.prng``'s.

Clock
-----
``system_mtbf_min`` is the MTBF of the whole reference cluster (default 5 min at 600k GPUs). The per-GPU
MTBF is ``system_mtbf_min * reference_gpus`` (3e6 min, about 50,000 h) and a group of ``gpus_per_group`` GPUs
fails at rate ``lambda = gpus_per_group / (system_mtbf_min * reference_gpus)``; a cluster of another size
keeps the per-GPU figure. Weibull with shape ``k`` keeps the same mean per group.
"""

from __future__ import annotations

import dataclasses
import math

from .coverage import COVERED, Coverage

DISTRIBUTIONS = ("exponential", "weibull")

def check_positive(name: str, value) -> float:
    """``value`` as a positive finite float (ValueError naming ``name`` otherwise; booleans refused)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return v


@dataclasses.dataclass(frozen=True)
class FailureModel:
    """I.i.d. per-group failure times.

    Attributes:
      distribution: ``exponential`` or ``weibull``.
      system_mtbf_min: MTBF of the reference cluster, minutes (default 5).
      reference_gpus: GPUs in the reference cluster (default 600,000).
      gpus_per_group: GPUs per data-parallel group (default 1,000).
      weibull_shape: shape k of the Weibull (1 = exponential).
    """

    distribution: str = "exponential"
    system_mtbf_min: float = 5.0
    reference_gpus: float = 600_000.0
    gpus_per_group: float = 1_000.0
    weibull_shape: float = 1.0

    def __post_init__(self):
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)}, got {self.distribution!r}")
        check_positive("mtbf (system_mtbf_min)", self.system_mtbf_min)
        check_positive("reference_gpus", self.reference_gpus)
        check_positive("gpus_per_group", self.gpus_per_group)
        check_positive("weibull_shape", self.weibull_shape)

    def coverage(self, ages: str = "kept") -> Coverage:
        """What follows these clocks: the exact closed form for exponential ones (memoryless: ``ages`` is the
        same model); for others the renewal-reward form (approximate) where every clock is renewed at a restart
        (``ages`` renewed), else whole runs (a run starts with every clock new and the clocks keep running
        during a restart, which no pool of epochs cut from a stationary chain follows)."""
        if self.distribution == "exponential":
            return COVERED
        if ages == "renewed":
            return Coverage("closed_form_approx", "the closed-form time-to-train needs exponential failures (a "
                                                  "Weibull epoch is not memoryless): use the renewal-reward form of "
                                                  "the renewed model or whole training runs")
        return Coverage("whole_runs", "Weibull clocks with kept ages: a run starts with every clock new and the "
                                      "clocks keep running during a restart, which no pool of epochs follows")

    @property
    def per_gpu_mtbf_min(self) -> float:
        return self.system_mtbf_min * self.reference_gpus

    @property
    def group_mtbf_min(self) -> float:
        """Mean time to failure of one group, minutes."""
        return self.per_gpu_mtbf_min / self.gpus_per_group

    @property
    def group_rate_per_min(self) -> float:
        """lambda: failure rate of one group, per minute (exponential)."""
        return 1.0 / self.group_mtbf_min

    def cluster_mtbf_min(self, groups: int) -> float:
        """MTBF of a cluster of ``groups`` groups, minutes (mean time to its first failure, exponential)."""
        return self.group_mtbf_min / groups

    @property
    def weibull_scale_min(self) -> float:
        """Weibull scale with the same mean as ``group_mtbf_min``."""
        return self.group_mtbf_min / math.gamma(1.0 + 1.0 / self.weibull_shape)
