"""spare-jax: SPARe (Stacked Parallelism with Adaptive Reordering) reliability engine in JAX.

The public API, by concept (each module's docstring carries its model and derivations):
placements, failure clocks, the wipe-out and overhead Monte Carlo, exact theory, the reorder controller
(RECTLR) and time-to-train with checkpointing.
"""

__version__ = "0.1.0"

# The public names, loaded on first use (PEP 562): ``import spare_jax`` and the command line (``spare_jax.cli``)
# import only what they use, so a command starts without loading every wing, SciPy's statistics among them
# (about 1.5 s of every ``spare-jax`` call), and ``from spare_jax import make_placement`` still works.
_PUBLIC = {
    "model.failures": ("FailureModel",),
    "model.prng": ("sample_failure_times", "times_from_bits", "trial_bits"),
    "model.placement": ("PLACEMENTS", "Placement", "make_placement", "validate_stack"),
    "kernels.wipeout": ("WipeoutResult", "simulate_wipeout", "wipeout_kernel"),
    "kernels.depth": ("depth_block", "depth_host", "depth_kernel", "depth_stacked", "feasible_stacked"),
    "kernels.overhead": ("OverheadResult", "depth_thresholds", "overhead_kernel", "simulate_overhead"),
    "rectlr.reorder": ("ReorderController", "read_trace", "replay"),
    "ttt": ("Training", "epoch_profile", "optimize", "optimize_tau", "sample_epochs", "simulate_ttt", "ttt_theory",
            "young_daly"),
}
_WHERE = {name: module for module, names in _PUBLIC.items() for name in names}
__all__ = sorted(_WHERE) + ["theory"]


def __getattr__(name):
    import importlib

    if name == "theory":
        return importlib.import_module(".theory", __name__)
    if name in _WHERE:
        value = getattr(importlib.import_module("." + _WHERE[name], __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
