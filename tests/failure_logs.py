"""Synthetic failure logs for the tests of ``plan --failure-log``: drawn from a known renewal model, and
written in the file format ``spare_jax.planner.fit.read_failure_log`` reads."""

from __future__ import annotations

import math

import numpy as np

from spare_jax.planner.fit import FailureLog


def synthetic_log(nodes: int, window_hours: float, mtbf_hours: float, shape: float = 1.0,
                  rng: np.random.Generator | None = None) -> FailureLog:
    """A log drawn from the renewal model: each node's gaps i.i.d. Weibull(shape) with mean ``mtbf_hours``
    (exponential at shape 1), over ``[0, window_hours]``."""
    rng = np.random.default_rng() if rng is None else rng
    scale = mtbf_hours / math.gamma(1.0 + 1.0 / shape)
    cols = max(4, int(3 * window_hours / mtbf_hours) + 4)
    t = np.zeros((nodes, 0))
    while t.shape[1] == 0 or np.any(t[:, -1] <= window_hours):
        more = scale * rng.weibull(shape, size=(nodes, cols))
        start = t[:, -1:] if t.shape[1] else np.zeros((nodes, 1))
        t = np.concatenate([t, start + np.cumsum(more, axis=1)], axis=1)
    times = {}
    for i in range(nodes):
        row = t[i][t[i] <= window_hours]
        if row.size:
            times[f"n{i}"] = tuple(float(v) for v in row)
    return FailureLog(times, float(window_hours), int(nodes), "<synthetic>")


def format_log(log: FailureLog) -> str:
    """The text of a log in the file format (directives for the window and the node count)."""
    lines = [f"# window_hours = {log.window_hours:.17g}", f"# nodes = {log.nodes}", "node,time_hours"]
    for node, ts in log.times.items():
        lines.extend(f"{node},{t:.17g}" for t in ts)
    return "\n".join(lines) + "\n"
