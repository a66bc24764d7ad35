"""A repair law's numbers on the device (docs/repair.md#repair-without-a-global-restart): ``repair_numbers``
packs a law's traced numbers, ``sample_repair`` draws repair times from uniforms, as
``model.repair.Repair.sample`` does on the host."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np


def repair_numbers(repair_time_min, law: str = "fixed", sigma: float = 1.0) -> np.ndarray:
    """``float32[3]``: the traced numbers of a repair law, ``(D, mu, sigma)`` with ``mu = ln D - sigma^2/2``
    (lognormal; 0 otherwise), computed on the host in float64 as ``Repair.sample`` does (zeros: no repair)."""
    if repair_time_min is None:
        return np.zeros(3, np.float32)
    mu = math.log(repair_time_min) - 0.5 * sigma ** 2 if law == "lognormal" else 0.0
    return np.asarray([repair_time_min, mu, sigma], np.float32)


def sample_repair(law: str, numbers, u):
    r"""Repair times (float32 minutes) from uniforms on (0, 1) under the law ``law`` (static) with the traced
    ``numbers`` of ``repair_numbers``: the same operations as ``model.repair.Repair.sample``.

    .. math:: D \ (fixed), \quad -D \ln(1 - u) \ (exp), \quad e^{\mu + \sigma \Phi^{-1}(u)} \ (lognormal)"""
    d = numbers[0]
    if law == "fixed":
        return jnp.broadcast_to(d, jnp.shape(u))
    if law == "exp":
        return d * -jnp.log1p(-u)
    return jnp.exp(numbers[1] + numbers[2] * jax.scipy.special.ndtri(u))
