"""The repair law of a cluster: a failed group rejoins after a repair time, without a global restart.

The law (``Repair``) is part of the model; the event-driven kernel that simulates it is
``spare_jax.kernels.repair`` and its closed forms are in ``spare_jax.theory.repair``. A finite spare pool
(``spares``, ``hardware_repair_min``) is simulated by whole training runs only (``spare_jax.kernels.run``).
"""

from __future__ import annotations

import dataclasses
import math

from .bounds import REPAIR_SIGMA_MAX
from .bounds import check as check_bound
from .coverage import COVERED, Coverage
from .failures import check_positive

REPAIR_LAWS = ("fixed", "exp", "lognormal")


@dataclasses.dataclass(frozen=True)
class Repair:
    """Repair without a global restart (docs/repair.md#repair-without-a-global-restart).

    Attributes:
      repair_time_min: mean repair time D, minutes (None: no repair, only with a finite spare pool: a failed
        group then claims a spare and holds it, down, until the next global restart).
      law: ``fixed``, ``exp`` or ``lognormal``.
      sigma: log-sd of the lognormal law (mean kept at D).
      spares: a finite spare pool of K node sets (None: unlimited, every failed group has one at once).
        Simulated by whole training runs only (``kernels.run``; docs/runs.md#spare-pool).
      hardware_repair_min: H, the time a failed group's node set spends in hardware repair before it returns
        to the pool as a spare (required with ``spares``, refused without).
    """

    repair_time_min: float | None
    law: str = "fixed"
    sigma: float = 1.0
    spares: int | None = None
    hardware_repair_min: float | None = None

    def __post_init__(self):
        if self.repair_time_min is None:
            if self.spares is None:
                raise ValueError("a repair needs a repair time (`repair_time_min`); without one it only describes a "
                                 "finite spare pool (`spares` with `hardware_repair_min`)")
        else:
            object.__setattr__(self, "repair_time_min",
                               check_positive("repair time (minutes)", self.repair_time_min))
        if self.law not in REPAIR_LAWS:
            raise ValueError(f"repair law must be one of {', '.join(REPAIR_LAWS)}, got {self.law!r}")
        s = self.sigma
        if (isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s)
                or not 0 < s <= REPAIR_SIGMA_MAX):
            raise ValueError(f"repair sigma must be a number in (0, {REPAIR_SIGMA_MAX:g}], got {s!r}")
        object.__setattr__(self, "sigma", float(s))
        if self.spares is None:
            if self.hardware_repair_min is not None:
                raise ValueError("`hardware_repair_min` goes with `spares`: it is the time a failed group's node set "
                                 "takes to come back to a finite spare pool; give `spares` K or drop it")
            return
        object.__setattr__(self, "spares", check_bound("spares", self.spares, "`spares`"))
        if self.hardware_repair_min is None:
            raise ValueError("`spares` needs `hardware_repair_min` H: the minutes a failed group's node set spends in "
                             "hardware repair before it returns to the pool as a spare")
        object.__setattr__(self, "hardware_repair_min",
                           float(check_bound("hardware_repair", self.hardware_repair_min, "`hardware_repair_min`")))

    @property
    def has_repair(self) -> bool:
        """Whether a failed group rejoins after a repair time (False: only a finite spare pool)."""
        return self.repair_time_min is not None

    def coverage(self, scheme: str | None = None) -> Coverage:
        """What follows a run with this repair: whole runs (a failed group rejoins, so the epochs are not
        i.i.d.), except for checkpointing alone (``scheme`` none) without a finite spare pool, answered as
        without repair: every failure is a global restart that replaces the group, so a repair never
        completes. ``scheme`` None: any scheme."""
        if scheme == "none" and self.spares is None:
            return COVERED
        return Coverage("whole_runs", "the closed-form time-to-train has no repair (epochs are not i.i.d.): whole "
                                      "runs answer")

    def check_epochs(self, what: str) -> None:
        """Refuse a finite spare pool where epochs with rejoins (``kernels.repair``) would ignore it."""
        if self.spares is not None:
            raise ValueError(f"{what}: a finite spare pool (`spares`, `hardware_repair_min`) is simulated by whole "
                             "training runs only (spare-jax ttt, optimize, plan); drop it here")

    def describe(self) -> dict:
        out = {"repair_time_min": self.repair_time_min}
        if self.repair_time_min is not None:
            out["repair_law"] = self.law
            if self.law == "lognormal":
                out["repair_sigma"] = self.sigma
        if self.spares is not None:
            out.update(spares=self.spares, hardware_repair_min=self.hardware_repair_min)
        return out

