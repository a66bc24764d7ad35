"""Whole training runs through the chunked driver (docs/runs.md#what-a-run-is): ``simulate_runs`` (exact device
sums over runs, resumable), ``run_each`` (each run's own outputs, for comparisons run by run), ``summarize``
(means and standard errors), ``ttt_quantiles`` (from the device histogram) and ``default_chunk``; the kernel
itself is ``kernels.run``; ``replay_each``, runs replayed on a failure trace (``kernels.run_trace``)."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from ..model.runsetup import RunSetup
from .run import DEFAULT_MAX_EVENTS, OUTPUTS, Inputs, jitted_run_kernel, per_trial
from .lower import lower
from .run_shape import RunShape, run_shape


def _reduce(out, valid):
    """Exact device sums (``devsum`` limbs) of every output and of the squares of TTT, computing time and
    work and of computing time x work (the standard errors of the mean TTT and of the slowdown)."""
    from . import exact_sums as devsum

    stats = {}
    for name in OUTPUTS:
        sx, sx2, bad = devsum.exact_sums_f32(out[name], valid)
        stats[name] = sx
        if name in ("ttt", "compute", "work"):
            stats[name + "2"] = sx2
        stats["bad"] = stats.get("bad", jnp.zeros(1, jnp.int32)) + bad
    stats["compute_work"] = devsum.exact_product_sums(out["compute"], out["work"], valid)[0]
    stats["censored"] = (out["censored"] & valid).sum(dtype=jnp.int32)[None]
    ratio = out["ttt"] / out["work_min"]
    idx = jnp.floor(jnp.log2(jnp.maximum(ratio, 1.0)) * HIST_PER_OCTAVE).astype(jnp.int32)
    stats["ttt_hist"] = devsum.histogram(jnp.minimum(idx, HIST_BINS - 1), valid, HIST_BINS)
    return stats


def _zeros():
    from . import exact_sums as devsum

    z = {name: jnp.zeros(devsum.X_LIMBS, jnp.uint32) for name in OUTPUTS}
    z.update({name + "2": jnp.zeros(devsum.X2_LIMBS, jnp.uint32) for name in ("ttt", "compute", "work")})
    z["compute_work"] = jnp.zeros(devsum.X2_LIMBS, jnp.uint32)
    z["bad"] = jnp.zeros(1, jnp.int32)
    z["censored"] = jnp.zeros(1, jnp.int32)
    z["ttt_hist"] = jnp.zeros(HIST_BINS, jnp.int32)
    return z


SQUARED = ("ttt2", "compute2", "work2", "compute_work")
HIST_PER_OCTAVE = 1024  # the TTT histogram: bins of TTT / W, 1024 per doubling (0.07% wide), up to 2^8 W
HIST_BINS = 8 * HIST_PER_OCTAVE


def ttt_quantiles(result: dict, qs) -> list:
    """Quantiles of the TTT (minutes) from the run histogram (bin centres: 0.07% resolution). The last bin
    holds every run beyond 2^8 W: a quantile that falls there is not resolved and is None (it was that bin's
    centre, ~256 W, below the mean of such runs)."""
    hist = np.asarray(result["ttt_hist"], np.int64)
    cum = np.cumsum(hist)
    out = []
    for q in qs:
        b = int(np.searchsorted(cum, q * cum[-1], side="left"))
        out.append(None if b >= hist.size - 1 else result["work_min"] * 2.0 ** ((b + 0.5) / HIST_PER_OCTAVE))
    return out


def ttt_bins(result: dict) -> tuple[np.ndarray, np.ndarray]:
    """The run histogram as (each bin's centre TTT in minutes, its runs); the last bin (every run beyond
    2^8 W) has no value: infinite where it holds runs."""
    hist = np.asarray(result["ttt_hist"], np.int64)
    centres = result["work_min"] * 2.0 ** ((np.arange(hist.size) + 0.5) / HIST_PER_OCTAVE)
    centres[-1] = np.inf if hist[-1] else centres[-1]
    return centres, hist


def _width(shape: RunShape) -> int:
    """Numbers per run the kernel keeps that grow with N: the groups (+ the return times of a spare pool)."""
    return shape.groups if shape.spare_capacity is None else 2 * shape.groups + shape.spare_capacity


MIN_CHUNK = 256  # runs per device in the least default chunk (see ``default_chunk``)
MAX_CHUNK = 2048  # runs per device in the largest
RUN_BYTES = 64  # the driver's memory estimate per number of a run's width (``model.bounds.chunk_bytes``)


def default_chunk(runs: int, width: int, ndev: int = 1, fit: int | None = None) -> int:
    """The chunk ``simulate_runs`` takes when none is given: a power of 2 of runs per device, at least
    ``MIN_CHUNK`` and at most ``MAX_CHUNK`` (fewer where ``width`` numbers per run would pass 2^20 per device,
    or where the devices together would pass ``fit`` runs, the most that the memory budget allows: the CPU
    devices share one memory), times the devices. The array shapes, so the compiled program, are then the
    same for every count of runs up to the least chunk, and for any two counts that round to the same power: the pilot runs
    that choose tau and the runs that follow, or the candidates of a plan, share one compile. Padding runs
    are done at once, so a small count costs little more; the results never depend on the chunk."""
    most = min(MAX_CHUNK, 2**20 // max(1, width), max(1, fit // ndev) if fit is not None else MAX_CHUNK)
    cap = 1 << (max(1, most).bit_length() - 1)  # a power of 2 at most this
    want = 1 << max(0, -(-int(runs) // ndev) - 1).bit_length()  # the least power of 2 at least the runs per device
    return min(cap, max(MIN_CHUNK, want)) * ndev


def _per_run(shape: RunShape, setup: RunSetup, sampling, max_events: int):
    """The driver's ``per_trial(aux, ids)`` for the kernel of ``shape`` and its ``aux``: the seed words, the run
    count (ids past it are padding), the numbers of ``setup`` and the event limit (all traced)."""
    from .driver import as_uint32_key_words

    fn = jitted_run_kernel(shape)
    aux = Inputs(as_uint32_key_words(int(sampling.seed)), np.uint32(int(sampling.count)), lower(setup)[1],
                 np.int32(max_events))
    return per_trial(fn), aux


def simulate_runs(setup: RunSetup, sampling, max_events: int = DEFAULT_MAX_EVENTS) -> dict:
    """``sampling.count`` whole training runs of ``setup`` (``model.cluster.Sampling``: seed, chunk size,
    devices, resumable directory, progress) on the device-side driver. Returns the sums over runs as floats
    (``sums``: every output of ``OUTPUTS`` and the squares), ``runs``, ``censored`` and the driver's info.
    Results depend on (setup, count, seed) only."""
    from . import exact_sums as devsum
    from .devices import select_devices
    from .driver import Execution, Reduction, run_reduced

    runs = int(sampling.count)
    ndev = len(select_devices(sampling.devices))
    chunk = sampling.chunk_size
    shape = run_shape(setup)
    width = _width(shape)
    if chunk is None:
        from ..model.bounds import chunk_bytes, memory_budget_bytes

        chunk = default_chunk(runs, width, ndev, memory_budget_bytes() // chunk_bytes(1, width * 4, RUN_BYTES))
    per_trial, aux = _per_run(shape, setup, sampling, max_events)
    limb_keys = tuple(k for k in _zeros() if k not in ("bad", "censored", "ttt_hist"))
    params = {"kind": "runs", "setup": repr(setup), "runs": runs, "seed": int(sampling.seed),
              "max_events": int(max_events)}
    totals, info = run_reduced(per_trial, Reduction(_reduce, _zeros, limb_keys), runs,
                               Execution(width * 4, chunk, sampling.devices,
                                         desc=f"runs {setup.scheme} N={setup.groups} r={setup.redundancy}",
                                         progress=sampling.progress, out_dir=sampling.out_dir, params=params,
                                         bytes_per_item=RUN_BYTES),
                               aux=aux, cache_key=("runs", shape))
    if totals["bad"][0]:
        raise ValueError("a non-finite value reached a sum over runs (a float32 overflow in the run kernel: "
                         "the parameters are outside the range the model handles)")
    sums = {k: totals[k] / 2.0 ** (devsum.X2_UNIT_SHIFT if k in SQUARED else devsum.X_UNIT_SHIFT)
            for k in limb_keys}
    return {"runs": runs, "censored": int(totals["censored"][0]), "sums": sums, "info": info,
            "ttt_hist": totals["ttt_hist"], "work_min": setup.work_min}


def run_each(setup: RunSetup, sampling, max_events: int = DEFAULT_MAX_EVENTS, capacity: int | None = None) -> dict:
    """Each run's own outputs, as host arrays (``OUTPUTS`` in float32 and ``censored``), through the driver's
    per-trial path (``run_chunked``): for comparisons run by run (common random numbers) where
    ``simulate_runs``'s exact sums are not needed. It compiles the kernel alone (no device sums), so a
    search over many layouts compiles faster. Same runs, same numbers per run as ``simulate_runs`` (seeded by
    run id). Also ``spare_wait_max`` per run. ``capacity``: the spare pool's static size at least this
    (``run_shape``), so that a sweep over K shares one compile."""
    from .driver import Execution, run_chunked

    runs = int(sampling.count)
    shape = run_shape(setup, capacity)
    per_trial, aux = _per_run(shape, setup, sampling, max_events)
    parts = []

    def consume(index, host, saved=None):
        parts.append(host)
        return {}

    run_chunked(per_trial, runs, consume,
                Execution(_width(shape) * 4, sampling.chunk_size, sampling.devices,
                          f"runs {setup.scheme} N={setup.groups}", sampling.progress, bytes_per_item=RUN_BYTES),
                aux=aux, cache_key=("runs", shape))
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    if out["censored"].any():
        raise ValueError(f"{int(out['censored'].sum())} of {runs} training runs did not finish within the event "
                         "limit; no time-to-train is printed for an incomplete sample")
    return out


def summarize(result: dict) -> dict:
    """Means and standard errors from ``simulate_runs``'s sums: ``ttt_min`` with ``ttt_stderr_min``, the
    slowdown (computing time / work computed, a ratio of sums) with its delta-method standard error, and the
    mean of every counter per run. Refuses censored runs (a mean over them would be wrong)."""
    n, s = result["runs"], result["sums"]
    if result["censored"]:
        raise ValueError(f"{result['censored']} of {n} training runs did not finish within the event limit; "
                         "no time-to-train is printed for an incomplete sample (a longer checkpoint interval "
                         "or fewer failures per run keeps the event count down)")
    mean = {k: s[k] / n for k in OUTPUTS}
    var_ttt = max(0.0, s["ttt2"] / n - mean["ttt"] ** 2) * n / max(1, n - 1)
    ratio = s["compute"] / s["work"] if s["work"] > 0 else math.inf
    resid = (s["compute2"] - 2 * ratio * s["compute_work"] + ratio ** 2 * s["work2"]) / n
    var_ratio = max(0.0, resid) * n / max(1, n - 1) / (mean["work"] ** 2 * n) if s["work"] > 0 else math.inf
    return {"runs": n, "ttt_min": mean["ttt"], "ttt_stderr_min": math.sqrt(var_ttt / n), "slowdown": ratio,
            "slowdown_stderr": math.sqrt(var_ratio), **{f"{k}_mean": mean[k] for k in OUTPUTS if k != "ttt"}}


def replay_each(setup: RunSetup, arrays, repair: str, sampling, max_events: int | None = None) -> dict:
    """``sampling.count`` runs of ``setup`` replayed on a failure trace's device form ``arrays``
    (``model.trace_units.TraceArrays``; ``kernels.run_trace``) with ``repair`` (``trace``, ``fixed``, ``none``; run k from ``t0 = k P / count``), each
    run's outputs as host arrays (the whole-run kernel's ``OUTPUTS``, ``censored``, ``spare_wait_max``) and
    ``wraps`` (float64 on the host) and ``offset_min``. Deterministic: no random numbers unless job-wide
    failures are on (then seeded by ``sampling.seed`` and run id); any chunk or device count gives the same."""
    from .driver import Execution, as_uint32_key_words, run_chunked
    from .run_trace import device_width, replay_setup, replay_shape, trace_device

    runs = int(sampling.count)
    shape = replay_shape(setup, repair)
    _, params = lower(replay_setup(setup, repair))
    dev = trace_device(arrays, setup.ring)
    fn = jitted_run_kernel(shape)
    aux = Inputs(as_uint32_key_words(int(sampling.seed)), np.uint32(runs), params,
                 np.int32(DEFAULT_MAX_EVENTS if max_events is None else max_events), dev)
    parts = []

    def consume(index, host, saved=None):
        parts.append(host)
        return {}

    run_chunked(per_trial(fn), runs, consume,
                Execution(_width(shape) * 4 + 2 * device_width(arrays), sampling.chunk_size, sampling.devices,
                          f"replay {setup.scheme} N={setup.groups}", sampling.progress, bytes_per_item=RUN_BYTES),
                aux=aux, cache_key=("replay", shape, device_width(arrays)))
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    if out["censored"].any():
        raise ValueError(f"{int(out['censored'].sum())} of {runs} replayed runs did not finish within the event "
                         "limit; no time-to-train is printed for an incomplete sample")
    p = float(arrays.circle_min)
    off = np.arange(runs, dtype=np.float64) * p / runs
    out["offset_min"] = off
    out["wraps"] = np.floor((off + out["ttt"].astype(np.float64)) / p)
    return out
