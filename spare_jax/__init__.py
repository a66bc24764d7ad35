"""spare-jax: SPARe (Stacked Parallelism with Adaptive Reordering) reliability engine in JAX.

The public API, by concept (each module's docstring carries its model and derivations):
placements, failure clocks, the wipe-out and overhead Monte Carlo, exact theory, the reorder controller
(RECTLR) and time-to-train with checkpointing.
"""

__version__ = "0.1.0"

from .model.failures import FailureModel, sample_failure_times, times_from_bits, trial_bits  # noqa: F401
from .model.placement import PLACEMENTS, Placement, make_placement, validate_stack  # noqa: F401
from .kernels.wipeout import WipeoutResult, simulate_wipeout, wipeout_kernel  # noqa: F401
from .kernels.depth import depth_block, depth_host, depth_kernel, depth_stacked, feasible_stacked  # noqa: F401
from .kernels.overhead import OverheadResult, depth_thresholds, overhead_kernel, simulate_overhead  # noqa: F401
from .rectlr.reorder import ReorderController, read_trace, replay  # noqa: F401
from .ttt import (Training, epoch_profile, optimize, optimize_tau, sample_epochs,  # noqa: F401
                  simulate_ttt, ttt_theory, young_daly)
from . import theory  # noqa: F401
