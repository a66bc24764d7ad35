"""One quantity of a cluster, measured: the Monte Carlo estimate beside every closed form that applies.

``wipeout(cluster, r, ...)`` (failures endured and the epoch's uptime) and ``overhead(cluster, r, ...)`` (the
compute overhead and the time-averaged depth) pick the kernel the cluster needs (static, scenario, repair)
and return a ``Report`` whose ``to_json()`` is what ``spare-jax wipeout|overhead --json`` prints.

May import ``model``, ``kernels`` and ``theory``; not ``ttt`` or ``rectlr`` (its siblings) nor any wing above.
"""

from .overhead import overhead
from ..results import Report
from .wipeout import clopper_pearson, wipeout

__all__ = ["Report", "clopper_pearson", "overhead", "wipeout"]
