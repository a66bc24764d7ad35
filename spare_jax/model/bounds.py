"""Input bounds: the ranges where the model and the numerics hold, in one table
(docs/model.md#inputs-and-their-ranges).

The CLI checks every flag against this table (exit 2, one line naming the flag, the range in ``--help``);
library functions use ``check`` for the same values where it is cheap. Why each bound is what it is:

* ``seed``: ``jax.random.key`` takes a C long (0..2^63-1).
* ``trials``: trial ids are uint32 on the device, so at most 2^32 - 1 (they would wrap otherwise).
* ``groups``: N <= 200,000. One trial's state is N (wipe-out) or N*r (overhead) words and the exact
  theory grows faster than N: at N = 10^6 a 64-trial ``wipeout`` did not finish in 5 minutes on 2 cores.
* ``redundancy``/``r_max``: r <= 64 (the closed forms and the depth kernels are tested to r = 20; the
  optimiser builds one profile per r and scheme, so r_max bounds its time).
* ``weibull_shape``: 0.2..10. Outside it the float32 sampler loses the tails (k < 0.2: E^(1/k) spans
  > 40 decades; k > 10: E^(1/k) rounds to ties) and gamma(1 + 1/k) overflows for tiny k.
* ``mtbf``, ``gpus_per_group``, ``reference_gpus``: per-flag ranges plus the derived per-group MTBF
  (``GROUP_MTBF_RANGE``, 1e-3..1e7 min), where the float32 failure times on the device stay finite and
  resolvable (the host sums are exact at any magnitude: ``host_sums.ExactSum``).
* scenario rates (``job_mtbf``, ``domain_mtbf``) up to 1e12-1e15 min: "practically never" (the limit tests
  use them) while the float32 clocks stay finite; ``lemon_factor`` 1e-3..1e4.
* ``work_hours``, ``ckpt_cost``, ``restart``, ``ckpt_interval``: minutes/hours in ranges where the
  closed form sums a bounded number of checkpoints; the time-to-train Monte Carlo is further refused up
  front when the closed form says the runs would need more epochs than ``TTT_EPOCHS_MAX`` (or more
  sampling than ``TTT_CELLS_MAX``).
* ``repair_sigma``: at most ``REPAIR_SIGMA_MAX`` = 3 (see there); the repair theory's work is bounded too
  (``theory.repair.TRANSIENT_CLI_WORK``: beyond it the CLI reports the theory as skipped, with the reason).
* ``spares``: K <= 200,000 (as N): the whole-run kernel keeps N + K hardware-repair return times per run;
  ``hardware_repair``: H in minutes, the range of ``repair_time``.
* ``failure_stall``, ``rejoin_stall``: 0..1,440 min (a day): a pause of the whole job per failure or rejoin,
  far below any group MTBF the model resolves; longer is an outage, which the restart R models.
* ``trace_time_scale``: 1e-6..1e6, the range ``model.trace_units`` takes; ``trace_nodes_per_group`` as
  ``gpus_per_node``; ``burst_window``: up to a week of scaled time (wider, every failure is in one burst).
* ``chunk_size``: at most 2^24 trials, and its working set (``chunk_bytes``) must fit half the RAM.
* epochs with repair followed to their wipe-out (``overhead --repair-time``): the first-order theory's events
  per epoch at most ``REPAIR_EPOCH_EVENTS_MAX`` and in all at most ``REPAIR_EVENTS_MAX``, checked before any
  compile (a short repair makes wipe-outs so rare that an epoch never ends within the kernel's event limit).
* ``overhead --microbatches``: at most ``OVERHEAD_SUBLEVELS_MAX`` sub-levels (r - 1)(m - 1), and a bounded
  ``OVERHEAD_SUBLEVEL_WORK_MAX`` of epochs x sub-levels x probes, checked before any compile.
"""

from __future__ import annotations

import math
import os

# the lognormal repair's log-sd: its mean is kept at D, so the median is D e^(-sigma^2/2) and the mean is carried
# by ever rarer long repairs: at sigma = 3 the longest 1 in 10^4 repairs carry 24 % of it, at sigma = 5 90 %
# (1,000 trials then see none of them), and the theory's repair-time grid spans D e^(7 sigma - sigma^2/2)
REPAIR_SIGMA_MAX = 3.0

# name: (kind, low, high, unit/comment for --help)
BOUNDS = {
    "groups": ("int", 1, 200_000, ""),
    "redundancy": ("int", 1, 64, ""),
    "r_max": ("int", 1, 64, ""),
    "trials": ("int", 1, 2**32 - 1, ""),
    "ttt_trials": ("int", 2, 10_000, "training runs (>= 2 for a standard error)"),
    "seed": ("int", 0, 2**63 - 1, ""),
    "chunk_size": ("int", 1, 2**24, ""),
    "devices": ("int", 1, 65_536, ""),
    "peer_timeout": ("float", 1.0, 86_400.0, "s"),
    "num_processes": ("int", 1, 65_536, "processes"),
    "process_id": ("int", 0, 65_535, ""),
    "mtbf": ("float", 1e-2, 1e6, "min"),
    "group_mtbf": ("float", 1e-3, 1e7, "min"),
    "gpu_mtbf_hours": ("float", 1e-3, 1e10, "h"),
    "gpus_per_group": ("float", 1.0, 1e6, ""),
    "reference_gpus": ("float", 1.0, 1e9, ""),
    "weibull_shape": ("float", 0.2, 10.0, ""),
    "work_hours": ("float", 1e-2, 1e6, "h"),
    "ckpt_cost": ("float", 0.0, 1e5, "min"),
    "restart": ("float", 0.0, 1e6, "min"),
    "ckpt_interval": ("float", 1e-3, 1e7, "min"),
    # scenarios (docs/scenarios.md#real-clusters-scenarios): rates where float32 clocks stay finite and resolvable
    # against the group clocks
    "job_mtbf": ("float", 1e-2, 1e12, "min"),
    "job_fraction": ("float", 0.0, 0.99, ""),
    "domain_size": ("int", 1, 200_000, "groups"),
    "domain_mtbf": ("float", 1e-2, 1e15, "min"),
    "lemon_fraction": ("float", 0.0, 1.0, ""),
    "lemon_factor": ("float", 1e-3, 1e4, ""),
    "lemon_seed": ("int", 0, 2**63 - 1, ""),
    # micro-batch granularity and proactive restart (docs/microbatches.md#how-it-works)
    "microbatches": ("int", 1, 1024, "micro-batches per shard"),
    "restart_depth": ("float", 1.0001, 1e4, "depth"),
    # repair without a global restart (docs/repair.md#repair-without-a-global-restart): float32 times stay finite and
    # resolvable; 1e12 = "never"
    "repair_time": ("float", 1e-3, 1e12, "min"),
    "repair_sigma": ("float", 1e-3, REPAIR_SIGMA_MAX, ""),
    # a finite spare pool (docs/runs.md#spare-pool): the whole-run kernel keeps N + K return times per run
    "spares": ("int", 0, 200_000, ""),
    "hardware_repair": ("float", 1e-3, 1e12, "min"),
    # stalls per failure and per rejoin (docs/runs.md#stalls): up to a day, the range of a pause, not an outage
    "failure_stall": ("float", 0.0, 1440.0, "min"),
    "rejoin_stall": ("float", 0.0, 1440.0, "min"),
    # a failure trace replayed (docs/traces.md#replaying-a-trace): the time scale of model.trace_units; a burst
    # window up to a week
    "trace_time_scale": ("float", 1e-6, 1e6, ""),
    "trace_nodes_per_group": ("int", 1, 1_000_000, "nodes"),
    "burst_window": ("float", 1e-3, 10_080.0, "min"),
    "max_spare_wait": ("float", 1e-3, 1e12, "min"),  # plan --spares auto: the longest wait for a spare allowed
    "spare_runs": ("int", 299, 100_000, "whole runs per pool size"),  # 299: the fewest that can meet the wait bound
    "pool_epochs": ("int", 100, 10_000_000, "epochs per (scheme, r) when there is no closed form"),
    # ring search (spare-jax place)
    "search_steps": ("int", 0, 1_000_000, "swap steps"),
    "search_trials": ("int", 10, 1_000_000, "epochs per search step"),
    "proposals": ("int", 1, 1024, "swaps proposed per step"),
    "random_orders": ("int", 0, 100, ""),
    "eval_trials": ("int", 2, 2**32 - 1, "epochs per final evaluation of each order"),
    # spare-jax plan (docs/planning.md#inputs): a cluster in GPUs and hours (the derived group MTBF is checked against
    # GROUP_MTBF_RANGE, N = gpus / gpus_per_group against "groups")
    "gpus": ("int", 1, 10**9, "GPUs"),
    "gpu_mtbf_hours": ("float", 1e-3, 1e10, "h"),
    "node_mtbf_hours": ("float", 1e-3, 1e10, "h"),
    "gpus_per_node": ("int", 1, 1_000_000, "GPUs"),
    "log_window_hours": ("float", 1e-6, 1e9, "h"),
    "log_nodes": ("int", 1, 10**9, "nodes"),
    "gpu_hour_price": ("float", 0.0, 1e6, "per GPU-hour"),
    "deadline_hours": ("float", 1e-3, 1e9, "h"),
}

# epochs with repair (``overhead --repair-time``, each followed to its wipe-out): the events one epoch may need
# (first-order theory, before any compile; a step of the event kernel is sequential within an epoch) and the
# events of the whole request (the epoch mode ran below 10^6 events per second at N = 16 on 2 busy cores)
REPAIR_EPOCH_EVENTS_MAX = 2**16
REPAIR_EVENTS_MAX = 2e7

# the overhead kernel with m micro-batches searches (r - 1)(m - 1) sub-levels per epoch: at most this many (at
# 1,023, r = 2 and m = 1,024, its program took over 14 GiB before its first epoch), and epochs x sub-levels x
# the probes a step makes at most the work below (about a minute on 2 cores)
OVERHEAD_SUBLEVELS_MAX = 255
OVERHEAD_SUBLEVEL_WORK_MAX = 1e8

# per-group MTBF (minutes) = mtbf * reference_gpus / gpus_per_group
GROUP_MTBF_RANGE = (1e-3, 1e7)
# time-to-train Monte Carlo: most epochs it may sample (the closed form estimates the need up front)
TTT_EPOCHS_MAX = 2_000_000
# ... and most epochs x N x max(r, 2) failure times (about 2 minutes of sampling on a 2-core CPU)
TTT_CELLS_MAX = 2.5e9


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def describe(name: str) -> str:
    """'range 1..64' for --help."""
    kind, lo, hi, unit = BOUNDS[name]
    f = (lambda v: f"{v:,}") if kind == "int" else (lambda v: f"{v:g}")
    if name == "trials":
        return "range 1..2^32-1"
    if name == "seed":
        return "range 0..2^63-1"
    return f"range {f(lo)}..{f(hi)}" + (f" {unit}" if unit else "")


def shown(value) -> str:
    """A number as a refusal quotes it: huge integers in scientific form (1.000e+308, not 309 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        try:
            return f"{float(value):.3e}"
        except OverflowError:
            return f"about {'-' if value < 0 else ''}1e+{len(str(abs(value))) - 1}"
    return repr(value)


def check(name: str, value, label: str | None = None):
    """``value`` within ``BOUNDS[name]`` (ValueError naming ``label`` or the parameter otherwise)."""
    kind, lo, hi, _ = BOUNDS[name]
    label = label or name
    if isinstance(value, bool):
        raise ValueError(f"{label} must be a number, got {value!r}")
    if kind == "int":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) and not (hasattr(value, "__index__") and not isinstance(value, float)):
            raise ValueError(f"{label} must be an integer, got {value!r}")
        value = int(value)
    else:
        try:
            value = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{label} must be a number, got {value!r}") from None
        if not math.isfinite(value):
            raise ValueError(f"{label} must be a finite number, got {value!r}")
    if value < lo or value > hi:
        raise ValueError(f"{label} must be in {describe(name).removeprefix('range ')}, got {shown(value)}")
    return value


def memory_budget_bytes() -> int:
    """Half the physical memory (8 GiB when unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return 8 * 2**30


def chunk_bytes(chunk: int, width: int, bytes_per_item: int = 16) -> int:
    """Rough peak working set of one chunk (the kernels keep a few arrays of ``chunk x width``)."""
    return 4 * int(chunk) * int(width) * int(bytes_per_item)
