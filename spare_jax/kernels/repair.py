r"""Repair without a global restart (docs/repair.md#repair-without-a-global-restart): failed groups rejoin, and the
wipe-out becomes a race.

Model (minutes)
---------------
An epoch starts at ``t = 0`` with all N groups up. An up group fails after an exponential time (mean the
group MTBF divided by its rate multiplier, ``Scenario.rate_multipliers``); its clock is fresh every time it
comes back (memoryless). A failed group is down for a repair time drawn from the repair law, then rejoins,
its stack restored, while the others keep going:

* ``fixed``: exactly ``D``;
* ``exp``: exponential with mean ``D``;
* ``lognormal``: ``exp(m + sigma Z)``, ``m = ln D - sigma^2/2`` (mean ``D``).

Failure domains (``Scenario.domains``) have Poisson clocks for the whole epoch; an event downs every group
of the domain that is up, as one event, each starting its own repair. The first job-wide interruption ends
the epoch. The epoch ends at the *wipe-out*: the first failure event after which all r holders of some
shard are down. Ring order: the state is kept per ring position (as in ``prng.scenario_failure_times``).

Kernel
------
The epochs run on the event kernel of whole runs (``kernels.run.run_kernel``) in its epoch mode
(``RunShape.epoch``; ``epoch_setup``): every group up at ``t = 0``, no checkpoint and no restart; the epoch
ends at the wipe-out (``wipeout``: a lost shard, tested after a group's failure on its r shards and their
``r x r`` holders, after a domain event on every shard, any placement), at the job-wide interruption
(``ended_by_job``) or at the time limit (``max_time``: censored there, an event after it not applied).
``depth`` (``options.track_depth``, stacked or block) also keeps the depth ``d*`` of the down set (the least
capacity in micro-batches, ``kernels.depth``) and its time integrals, 1/d* (the work) and d*. A fixed
number of lanes (256 on CPU) run epochs at once and an idle lane takes the chunk's next epoch
(``events.in_lanes``), so a long epoch does not hold the others up. Every number is traced: a new repair
time, MTBF, domain rate, time limit or event limit compiles nothing.

Random numbers. The initial clocks are the static kernels' (``prng.scenario_failure_times``'s streams:
own clocks stream 0 in ring order, domain level l stream 1 + l, job-wide stream 1 + L), so with a repair
time that never comes (``D -> inf``) every trial reproduces the static wipe-out kernel's epoch. The k-th
event of a trial uses ``trial_bits(words, ids, 2, stream=EPOCH_STREAM + k)`` (a repair time or a fresh
clock; a domain's next event) and, at a domain event, ``trial_bits(words, ids, N, stream=EPOCH_WIDE_STREAM +
k)`` for its members' repair times. A trial processes exactly one event per step, so its k-th event is at
step k whatever the chunk: results depend only on (seed, trial id), never on the chunk size or the device
count.

A trial runs at most ``max_events`` events; one still running then is returned *censored* (its uptime is the
time reached, a lower bound) and counted, never dropped (per trial, so censoring is chunk-independent too).
"""

from __future__ import annotations

import dataclasses
import math

import jax.numpy as jnp
import numpy as np

from . import exact_sums as devsum
from .driver import Execution, Reduction, as_uint32_key_words, run_chunked, run_reduced
from .host_sums import ExactSum, exact_mean_var
from ..model.failures import FailureModel, check_positive
from ..model.cluster import Sampling
from ..model.placement import Placement
from ..model.repair import REPAIR_LAWS, Repair  # noqa: F401  (part of this module's API)
from ..model.prng import EPOCH_STREAM
from ..results import Result

DEFAULT_MAX_EVENTS = 1 << 24
DEFAULT_CHUNK = 4096


@dataclasses.dataclass(frozen=True)
class EpochOptions:
    """How far each epoch with repair is followed, and what is recorded: at most ``max_events`` events (a trial
    still running then is censored), up to ``max_time`` minutes (``None``: until the wipe-out or the
    job-wide end; a trial reaching it is censored there), and with ``track_depth`` the time integrals of
    1/d* and d* over the epoch (a separate compiled variant of the kernel)."""

    max_events: int = DEFAULT_MAX_EVENTS
    track_depth: bool = False
    max_time: float | None = None


def epoch_setup(placement: Placement, model: FailureModel, scenario, repair: Repair, options: EpochOptions):
    """``(RunShape, Params)`` of the event kernel (``kernels.run``) in its epoch mode for epochs with repair
    of ``placement``: ``wipeout`` (a lost shard ends the epoch; any placement), or with
    ``options.track_depth`` ``depth`` (the depth's time integrals too; stacked or block). Every number,
    the time limit and the event limit included, is traced: only the placement kind, N, r (for the holders'
    shape), the clock law, the domain counts, a job-wide clock or not and the repair law compile."""
    from ..model.runsetup import RunSetup
    from .lower import lower

    return lower(RunSetup.for_epoch(placement, model, scenario, repair, "depth" if options.track_depth else "wipeout",
                                    options.max_time))


def _per_epoch(placement, model, scenario, repair, options: EpochOptions, seed: int, count: int):
    """The driver's ``per_trial(aux, ids)`` for epochs with repair and its ``aux`` (the seed words, the epoch
    count, the numbers, the event limit: all traced), and the kernel's shape (the driver's cache key)."""
    from .run import Inputs, jitted_run_kernel, per_trial

    shape, params = epoch_setup(placement, model, scenario, repair, options)
    fn = jitted_run_kernel(shape)
    aux = Inputs(as_uint32_key_words(seed), np.uint32(count), params, np.int32(options.max_events))
    return per_trial(fn), aux, shape


@dataclasses.dataclass
class RepairResult(Result):
    """Monte Carlo summary of epochs with repair: uptime (restart to wipe-out or job-wide end), failures seen."""

    groups: int
    redundancy: int
    placement: str
    trials: int
    seed: int
    repair: Repair
    uptime_mean_min: float
    uptime_var_min2: float
    failures_mean: float
    failures_var: float
    ended_by_job: int
    censored: int
    events: int
    chunk_size: int = 0
    devices: int = 1
    max_time_min: float | None = None
    # with options.track_depth (simulate_repair): Omega = E[U]/E[W], the time-averaged depth
    overhead: float | None = None
    overhead_stderr: float | None = None
    time_avg_depth: float | None = None
    time_avg_depth_stderr: float | None = None
    work_mean_min: float | None = None
    processes: int = 1
    trials_per_process: tuple = ()

    @property
    def wiped(self) -> int:
        """Epochs that ended by a wipe-out (not by a job-wide interruption, not censored)."""
        return self.trials - self.ended_by_job - self.censored

    @property
    def uptime_stderr_min(self) -> float:
        return math.sqrt(self.uptime_var_min2 / self.trials)

    @property
    def failures_stderr(self) -> float:
        return math.sqrt(self.failures_var / self.trials)

    @property
    def p_ended_by_job(self) -> float:
        return self.ended_by_job / self.trials


def simulate_repair(placement: Placement, sampling: Sampling = Sampling(count=10_000), *,
                    model: FailureModel = FailureModel(), scenario=None, repair: Repair | None = None,
                    options: EpochOptions = EpochOptions()) -> RepairResult:
    """Monte Carlo of ``sampling.count`` epochs with repair (the event kernel's epoch mode, ``epoch_setup``) through the chunked driver;
    exact sums, so the numbers for a seed do not depend on ``sampling.chunk_size`` or the devices; resumable
    with ``sampling.out_dir``.

    ``options.track_depth``: also the overhead Omega = E[U]/E[W] (W the integral of 1/d*) and the
    time-averaged depth (stacked/block). ``options.max_time``: epochs censored at that time (minutes), e.g. a
    training run's length for the probability of a wipe-out during it (``wiped``/``trials``)."""
    from ..model.placement import check_int as _check_int
    from ..model.scenario import Scenario

    if repair is None:
        raise ValueError("simulate_repair needs a Repair (repair time and law)")
    trials = _check_int("trials", sampling.count)
    seed = _check_int("seed", sampling.seed, lo=0)
    max_events = _check_int("max_events", options.max_events)
    if max_events >= EPOCH_STREAM:
        raise ValueError(f"max_events must be < {EPOCH_STREAM} (the per-event streams)")
    scenario = Scenario() if scenario is None else scenario
    n = placement.groups
    scenario.check(n)
    max_time, track_depth = options.max_time, bool(options.track_depth)
    if max_time is not None:
        max_time = float(check_positive("max_time (minutes)", max_time))
    if track_depth and placement.kind not in ("stacked", "block"):
        raise ValueError("depth with repair needs the stacked or block placement")
    opts = EpochOptions(max_events, track_depth, max_time)
    per_trial, aux, shape = _per_epoch(placement, model, scenario, repair, opts, seed, trials)
    from .devices import select_devices

    chunk_size = sampling.chunk_size
    if chunk_size is None:  # lockstep trials: a smaller chunk wastes fewer steps on the longest epoch; chunks
        ndev = len(select_devices(sampling.devices))  # of equal size, so the last one is not mostly padding
        chunks = -(-trials // DEFAULT_CHUNK)
        chunk_size = -(-(-(-trials // chunks)) // ndev) * ndev
    # "engine" names the kernel: chunks written by the old repair kernel do not resume these epochs
    params = {"kind": "repair", "engine": "run-epoch", "placement": placement.kind, "groups": n,
              "redundancy": placement.redundancy, "trials": trials, "seed": seed,
              "model": dataclasses.asdict(model), "scenario": repr(scenario), "repair": repr(repair),
              "max_events": max_events,
              **({"track_depth": True} if track_depth else {}), **({} if max_time is None else {"max_time": max_time})}
    zeros = _zeros_repair(track_depth)
    totals, info = run_reduced(per_trial,
                               Reduction(_reduce_repair(track_depth), zeros,
                                         limb_keys=tuple(k for k in zeros() if k not in _COUNT_KEYS)), trials,
                               Execution(n, chunk_size, sampling.devices, desc=f"repair N={n} r={placement.redundancy}",
                                         progress=sampling.progress, out_dir=sampling.out_dir, params=params,
                                         bytes_per_item=4),
                               aux=aux, cache_key=("runs", shape))
    if totals["bad"][0]:
        raise ValueError("a non-finite value reached an accumulation (a float32 overflow in the kernel: "
                         "the parameters are outside the range the model handles)")

    def exact(key):  # a device limb total as an ExactSum (units 2^-1126)
        out = ExactSum()
        shift = devsum.X2_UNIT_SHIFT if key in _SQUARE_KEYS else devsum.X_UNIT_SHIFT
        out.total = totals[key] << (ExactSum.SHIFT - shift)
        return out

    up, up2, fl, fl2 = (exact(k) for k in ("up", "up2", "fl", "fl2"))
    counts = [totals["ended_by_job"][0], totals["censored"][0], round(exact("events").value)]
    if track_depth:
        from .overhead import ExactRatio as _Ratio

        om_ratio, dep_ratio = _Ratio(), _Ratio()
        om_ratio.sums = [up, exact("work"), up2, exact("work2"), exact("up_work")]
        dep_ratio.sums = [exact("dint"), up, exact("dint2"), up2, exact("dint_up")]
    um, uv = exact_mean_var(up, up2, trials)
    fm, fv = exact_mean_var(fl, fl2, trials)
    res = RepairResult(n, placement.redundancy, placement.kind, trials, seed, repair, um, uv, fm, fv,
                       int(counts[0]), int(counts[1]), int(counts[2]), info["chunk_size"], info["devices"], max_time,
                       processes=info["processes"], trials_per_process=tuple(info["trials_per_process"]))
    if track_depth:
        res.overhead, res.overhead_stderr, _, res.work_mean_min = om_ratio.result(trials)
        res.time_avg_depth, res.time_avg_depth_stderr, _, _ = dep_ratio.result(trials)
    return res


_COUNT_KEYS = ("ended_by_job", "censored", "bad")
_SQUARE_KEYS = ("up2", "fl2", "work2", "dint2", "up_work", "dint_up")


def _reduce_repair(track_depth: bool):
    """Device-side sums of a sub-chunk of epochs: exact limb sums (``devsum``) of the uptime, the failures
    and the events with the squares the standard errors need (with ``track_depth`` also the work and depth
    integrals, their squares and products with the uptime: ``overhead._Ratio``'s five sums), and the counts
    of epochs ended by a job-wide failure or censored. The same exact totals as summing the host arrays."""

    def reduce(out, valid):
        up, fails = out["uptime"], out["failures"].astype(jnp.float32)
        stats = {}
        stats["up"], stats["up2"], bad = devsum.exact_sums_f32(up, valid)
        stats["fl"], stats["fl2"], _ = devsum.exact_sums_f32(fails, valid)
        stats["events"] = devsum.exact_sums_f32(out["events"].astype(jnp.float32), valid)[0]
        if track_depth:
            work, dint = out["work"], out["depth_time"]
            stats["work"], stats["work2"], bad_w = devsum.exact_sums_f32(work, valid)
            stats["dint"], stats["dint2"], bad_d = devsum.exact_sums_f32(dint, valid)
            stats["up_work"] = devsum.exact_product_sums(up, work, valid)[0]
            stats["dint_up"] = devsum.exact_product_sums(dint, up, valid)[0]
            bad = bad + bad_w + bad_d
        stats["ended_by_job"] = (out["ended_by_job"] & valid).sum(dtype=jnp.int32)[None]
        stats["censored"] = (out["censored"] & valid).sum(dtype=jnp.int32)[None]
        stats["bad"] = bad[None]
        return stats

    return reduce


def _zeros_repair(track_depth: bool):
    def zeros():
        z = {k: jnp.zeros(devsum.X2_LIMBS if k in _SQUARE_KEYS else devsum.X_LIMBS, jnp.uint32)
             for k in ("up", "up2", "fl", "fl2", "events")
             + (("work", "work2", "dint", "dint2", "up_work", "dint_up") if track_depth else ())}
        z.update({k: jnp.zeros(1, jnp.int32) for k in _COUNT_KEYS})
        return z

    return zeros


def repair_epochs(placement: Placement, sampling: Sampling, *, model: FailureModel = FailureModel(),
                  scenario=None, repair: Repair, options: EpochOptions = EpochOptions(track_depth=True)):
    """Per-epoch arrays ``(uptime, work, censored)`` (float64, float64, bool) of ``sampling.count`` epochs with
    repair (``work`` the integral of 1/d*; without ``options.track_depth`` it is ``uptime / r`` for a constant
    depth r). The epochs are kept in memory: no ``sampling.out_dir``."""
    from ..model.scenario import Scenario

    if sampling.out_dir is not None:
        raise ValueError("repair_epochs keeps its epochs in memory: it takes no out_dir")
    scenario = Scenario() if scenario is None else scenario
    scenario.check(placement.groups)
    epochs, track_depth = int(sampling.count), bool(options.track_depth)
    opts = EpochOptions(int(options.max_events), track_depth,
                        None if options.max_time is None else float(options.max_time))
    per_trial, aux, shape = _per_epoch(placement, model, scenario, repair, opts, int(sampling.seed), epochs)
    ups, works, cens = [], [], []

    def consume(index, host, saved=None):
        ups.append(np.asarray(host["uptime"], np.float64))
        works.append(np.asarray(host["work"], np.float64) if track_depth else None)
        cens.append(np.asarray(host["censored"], bool))
        return {}

    run_chunked(per_trial, epochs, consume,
                Execution(placement.groups, sampling.chunk_size or min(DEFAULT_CHUNK, epochs), sampling.devices,
                          desc=f"repair epochs N={placement.groups} r={placement.redundancy}",
                          progress=sampling.progress, bytes_per_item=4),
                aux=aux, cache_key=("runs", shape))
    up = np.concatenate(ups)
    work = np.concatenate(works) if track_depth else up / placement.redundancy
    return up, work, np.concatenate(cens)
