"""The group clocks and their law (docs/runs.md#what-a-run-is): a new clock of a ring position from an instant,
exponential (its mean ``scale``) or Weibull (``scale (-ln(1-u))^(1/k)``), or in a replay the first period of
the trace that starts then (``run_trace``); and the repair law's end of a repair (``kernels.repair_law``;
none: +inf, a group waits for the next global restart; from a trace: read where the group fails)."""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from .repair_law import sample_repair


class Params(NamedTuple):
    scale: np.ndarray  # float32[N]: each ring position's clock scale (the mean when exponential)
    inv_shape: np.ndarray  # float32[]: 1/k of the Weibull clocks (unused when exponential)
    repair: np.ndarray  # float32[3]: the repair law's numbers (``kernels.repair_law.repair_numbers``)


def lower(setup) -> Params:
    """The clocks' numbers of a ``model.runsetup.RunSetup`` (host arrays)."""
    from .repair_law import repair_numbers

    return Params(setup.clock_scale(), np.float32(1.0 / setup.weibull_shape),
                  repair_numbers(setup.repair_time_min, setup.repair_law, setup.repair_sigma))


def clock(kx, u, start, cols, ids):
    """``(time, end)``: a new group clock from ``start`` for ring positions ``cols`` (``end``: the end of its
    period in a replay, else None)."""
    if kx.replay:  # the first period starting at or after ``start``, and its end
        from .run_trace import clock as trace_clock

        return trace_clock(kx, cols, start, ids)
    sc = kx.p.clocks.scale[cols]
    if kx.shape.weibull:
        return start + sc * (-jnp.log1p(-u)) ** kx.p.clocks.inv_shape, None
    return start + sc * (-jnp.log1p(-u)), None


def repair_end(kx, u, start):
    """The end of a repair that starts at ``start`` (+inf: none, or from the trace: ``fend``)."""
    if kx.shape.repair_law in (None, "trace"):
        return jnp.full(jnp.shape(u), jnp.float32(jnp.inf))
    return start + sample_repair(kx.shape.repair_law, kx.p.clocks.repair, u)
