"""The repair law of a cluster: a failed group rejoins after a repair time, without a global restart.

The law (``Repair``) is part of the model; the event-driven kernel that simulates it is
``spare_jax.kernels.repair`` and its closed forms are in ``spare_jax.theory.repair``.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp

from .bounds import REPAIR_SIGMA_MAX
from .failures import check_positive

REPAIR_LAWS = ("fixed", "exp", "lognormal")


@dataclasses.dataclass(frozen=True)
class Repair:
    """Repair without a global restart (SPEC §10.5).

    Attributes:
      repair_time_min: mean repair time D, minutes.
      law: ``fixed``, ``exp`` or ``lognormal``.
      sigma: log-sd of the lognormal law (mean kept at D).
      spares: a finite spare pool (not implemented yet: refused).
      hardware_repair_min: time for a broken group's hardware to return to the pool (with ``spares``).
    """

    repair_time_min: float
    law: str = "fixed"
    sigma: float = 1.0
    spares: int | None = None
    hardware_repair_min: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "repair_time_min", check_positive("repair time (minutes)", self.repair_time_min))
        if self.law not in REPAIR_LAWS:
            raise ValueError(f"repair law must be one of {', '.join(REPAIR_LAWS)}, got {self.law!r}")
        s = self.sigma
        if (isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s)
                or not 0 < s <= REPAIR_SIGMA_MAX):
            raise ValueError(f"repair sigma must be a number in (0, {REPAIR_SIGMA_MAX:g}], got {s!r}")
        object.__setattr__(self, "sigma", float(s))
        if self.spares is not None or self.hardware_repair_min is not None:
            raise ValueError("a finite spare pool (spares, hardware_repair) is not implemented yet")

    def sample(self, u):
        """Repair times (float32 minutes) from uniforms on (0, 1) (one per repair)."""
        d = jnp.float32(self.repair_time_min)
        if self.law == "fixed":
            return jnp.broadcast_to(d, jnp.shape(u))
        if self.law == "exp":
            return d * -jnp.log1p(-u)
        m = math.log(self.repair_time_min) - 0.5 * self.sigma ** 2
        return jnp.exp(jnp.float32(m) + jnp.float32(self.sigma) * jax.scipy.special.ndtri(u))

    def describe(self) -> dict:
        out = {"repair_time_min": self.repair_time_min, "repair_law": self.law}
        if self.law == "lognormal":
            out["repair_sigma"] = self.sigma
        return out

