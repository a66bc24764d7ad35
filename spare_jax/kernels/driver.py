"""The trial driver: the chunked loops over a kernel's trials (docs/model.md#kernels-and-random-numbers,
docs/accelerators.md#resumable-runs).

Kernels map a vector of trial ids to per-trial results. The driver

* splits ``trials`` into chunks of ``chunk_size`` ids (the last one padded and then cut on the host),
* places each chunk's ids on all chosen devices with a ``NamedSharding`` (one code path for 1 or many
  devices, and for several hosts after ``jax.distributed.initialize``; ``devices``),
* accumulates per-trial results on the host with order-independent exact arithmetic (integer histograms and
  fixed-point sums; ``host_sums``), so the numbers for a seed do not depend on the chunk size or the device
  count,
* optionally writes every finished chunk's sufficient statistics to ``out_dir`` so that an interrupted run
  resumes where it stopped, without losing or double-counting trials (``state_files``),
* shows a progress bar (``progress``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .devices import devices_and_chunk, shard_ids, to_host
from .host_sums import device_totals
from .progress import Progress
from .state_files import SAVED, STATE_FILE, ChunkStore, ResumeState, check_totals, params_digest, say_resuming, unit_word

# kernels.repair still reads these three from here (its imports move with its own refactor):

DEFAULT_CHUNK = 8192
RNG_VERSION = "threefry2x32-20"  # prng.trial_bits


@dataclasses.dataclass(frozen=True)
class Execution:
    """How the driver runs a kernel over its trials; it never changes a number of the result.

    ``width`` x ``bytes_per_item``: the bytes one trial takes on the device (they size the default chunk and
    the memory check); ``chunk_size`` trials per chunk (None: ``auto_chunk``); the first ``devices`` JAX
    devices (None: all); a progress bar named ``desc`` when ``progress``; ``out_dir`` to resume an
    interrupted run, where ``params`` (the run's parameters) are recorded and checked on resume; and, for
    ``run_reduced``, ``block_trials`` trials per dispatched block (None: blocks grow adaptively)."""

    width: int
    chunk_size: int | None = None
    devices: int | None = None
    desc: str = "trials"
    progress: bool = True
    out_dir: str | None = None
    params: dict | None = None
    bytes_per_item: int = 16
    block_trials: int | None = None


def run_chunked(per_trial: Callable, trials: int, consume: Callable, execution: Execution, *, aux=None,
                cache_key=None) -> dict:
    """Run ``per_trial(aux, trial_ids) -> pytree of per-trial arrays`` over ``trials`` ids in chunks, as
    ``execution`` says (its chunk size, devices, progress bar and resumable ``out_dir``; ``block_trials`` is not
    read). Each device runs its own slice of every chunk as its own program (``shard_map``): a kernel's loop
    then never waits for another device's (a step's ``any`` over trials would otherwise be a cross-device
    reduction). ``aux`` (a pytree of arrays: the seed words, the kernel's numbers) is passed to every call,
    replicated; with a hashable ``cache_key`` that determines ``per_trial``, the compiled program is reused
    across calls (so ``per_trial`` must take every number that may change through ``aux``).

    ``consume(index, host_arrays)`` receives each chunk's per-trial results (already cut to the valid
    trials) as numpy arrays; it must return a dict of numpy arrays (the chunk's sufficient statistics) that
    is handed back to it unchanged on resume (``consume(index, None, saved=stats)``).
    Returns a dict with ``chunk_size``, ``devices``, ``chunks``, ``resumed_chunks``.
    """
    ex = execution
    out_dir, params = ex.out_dir, ex.params
    devs, ndev, chunk_size, mesh = devices_and_chunk(ex.devices, ex.chunk_size, trials, ex.width, ex.bytes_per_item)
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("trials"))
    kernel = _chunk_fn(per_trial, mesh, None if cache_key is None else (cache_key, tuple(d.id for d in devs)))
    aux = jax.tree_util.tree_map(np.asarray, aux)  # host values: replicated on every device
    # the generator and the sum format are part of the digest: chunks of an older engine are never mixed in
    if out_dir and jax.process_count() > 1:
        raise ValueError("`Sampling.out_dir` with several processes resumes the device-reduced runs (wipeout, overhead, "
                         "whole training runs); this run keeps per-chunk files on one host: drop `Sampling.out_dir`")
    store = (ChunkStore(out_dir, dict(params or {}, chunk_size=chunk_size, rng=RNG_VERSION, sums="exact-2^-1126"))
             if out_dir else None)
    n_chunks = -(-trials // chunk_size)
    bar = Progress.of(trials, ex.desc, ex.progress)
    resumed = 0
    if store is not None:
        kept = sum(min(chunk_size, trials - i * chunk_size) for i in range(n_chunks) if os.path.exists(store.path(i)))
        SAVED.clear()
        SAVED.update(out_dir=out_dir, done=kept, total=trials, unit=unit_word(ex.desc))
        if kept:
            say_resuming(out_dir, kept, trials, ex.desc)
    try:
        for index in range(n_chunks):
            start = index * chunk_size
            n_valid = min(chunk_size, trials - start)
            saved = store.load(index) if store else None
            if saved is not None:
                consume(index, None, saved=saved)
                resumed += 1
                bar.update(n_valid)
                continue
            # ids past ``trials`` only pad the last chunk (cut on the host): wrap them rather than overflow
            ids = shard_ids(np.arange(start, start + chunk_size, dtype=np.int64).astype(np.uint32), sharding)
            out = kernel(aux, ids)
            host = jax.tree_util.tree_map(lambda a: to_host(a)[:n_valid], out)
            stats = consume(index, host)
            if store is not None:
                store.save(index, stats)
                SAVED["done"] = SAVED.get("done", 0) + n_valid
            bar.update(n_valid)
        SAVED.clear()  # finished: nothing left to resume
    finally:
        bar.close()
        if store is not None:
            store.close()
    return {"chunk_size": chunk_size, "devices": ndev, "chunks": n_chunks, "resumed_chunks": resumed}


_CHUNK_FNS: dict = {}


def _chunk_fn(per_trial: Callable, mesh, key):
    """``jit(shard_map(per_trial))`` over ``mesh``'s trial axis (``aux`` replicated, ids and outputs split),
    kept under ``key`` (None: not kept)."""
    from jax.sharding import PartitionSpec as P

    axis = mesh.axis_names[0]
    return _kept(_CHUNK_FNS, key, lambda: jax.jit(_shard_map(per_trial, mesh, (P(), P(axis)), P(axis))))


def _kept(store: dict, key, make: Callable):
    """``store[key]``, made by ``make()`` when missing and kept (the oldest of 64 goes first); ``key`` None:
    made anew, not kept. The compiled programs of ``run_chunked`` and ``run_reduced``, reused across calls."""
    if key is None:
        return make()
    if key not in store:
        if len(store) >= 64:
            store.pop(next(iter(store)))
        store[key] = make()
    return store[key]


def as_uint32_key_words(key) -> jnp.ndarray:
    """Accept a JAX key (new or raw) or an int seed; return the hash seed words."""
    from ..model.prng import key_words

    if isinstance(key, (int, np.integer)):
        key = jax.random.key(int(key))
    return key_words(key)


# --------------------------------------------------------------------------------------------------------
# Device-side reduction: many chunks per dispatch, one small state file
# (docs/accelerators.md#the-driver-reduces-on-the-device)

# A dispatched block of sub-chunks aims at this many seconds of device work (results never depend on it).
_BLOCK_SECONDS = 0.5
_MAX_BLOCK_TRIALS = 1 << 30  # int32 counts per block stay exact


def _shard_map(fn, mesh, in_specs, out_specs):
    """``shard_map`` without replication checks (the per-device accumulators start replicated and become
    device-varying)."""
    try:
        return jax.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)
    except (AttributeError, TypeError):  # pragma: no cover - older JAX
        from jax.experimental.shard_map import shard_map

        return shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_rep=False)


def make_block_fn(per_trial: Callable, reduce: Callable, merge: Callable, zeros: Callable, chunk: int, mesh):
    """A jitted ``block(aux, start, n_valid, n_sub) -> stats``: ``n_sub`` sub-chunks of ``chunk`` trial ids from
    ``start`` (uint32, wrapping) run in one ``lax.fori_loop`` on every device of ``mesh`` (each device takes
    its slice of every sub-chunk, the ids generated on the device), the statistics of the first ``n_valid``
    ids accumulated on the device (``reduce(out, valid)``, ``merge``). Each device returns its own statistics
    (sharded, one row per device) and the host adds them (``device_totals``: integers, exact and
    order-independent, so the same totals as a sum on the devices). No collective runs inside the program:
    a device whose share runs long (a busy core) makes the others wait on the host, never inside XLA's
    CPU rendezvous, which aborts the process when one device is 40 s behind another. Only the statistics
    come back, with the number of trials each device computed (sharded: each process reads its own
    devices')."""
    from jax.sharding import PartitionSpec as P

    ndev = mesh.size
    per_dev = chunk // ndev
    axis = mesh.axis_names[0]

    def local(aux, start, n_valid, n_sub):
        dev = jax.lax.axis_index(axis).astype(jnp.uint32)
        lane = jnp.arange(per_dev, dtype=jnp.uint32)

        def body(s, carry):
            acc, ran = carry
            pos = s.astype(jnp.uint32) * jnp.uint32(chunk) + dev * jnp.uint32(per_dev) + lane
            valid = pos < n_valid
            return merge(acc, reduce(per_trial(aux, start + pos), valid)), ran + valid.sum(dtype=jnp.int32)

        acc, ran = jax.lax.fori_loop(jnp.int32(0), n_sub, body, (zeros(), jnp.int32(0)))
        return jax.tree_util.tree_map(lambda x: x[None], acc), ran[None]  # this device's row

    return jax.jit(_shard_map(local, mesh, (P(), P(), P(), P()), (P(axis), P(axis))))




_BLOCK_FNS: dict = {}


@dataclasses.dataclass(frozen=True)
class Reduction:
    """What ``run_reduced`` accumulates on the device. ``reduce(out, valid) -> dict of int32/uint32 arrays``
    gives a sub-chunk's statistics (counts of the ``valid`` trials, and exact sums as limbs — ``exact_sums``) and
    ``zeros()`` the empty statistics; keys in ``limb_keys`` are limb vectors (added with carries), the others
    plain int32 counts; ``count_bound`` is the most one trial adds to any int32 count (blocks stay below
    ``2^31 / count_bound`` trials so that no count overflows)."""

    reduce: Callable
    zeros: Callable
    limb_keys: tuple = ()
    count_bound: int = 1



def run_reduced(per_trial: Callable, reduction: Reduction, trials: int, execution: Execution, *, aux=None,
                cache_key=None) -> tuple[dict, dict]:
    """Run ``per_trial(aux, trial_ids) -> pytree`` over ``trials`` ids with the reduction on the device, as
    ``execution`` says (chunk size, devices, progress bar, resumable ``out_dir`` and ``block_trials``).

    ``aux`` (a pytree of arrays, e.g. the seed words) is passed to every call, replicated; with a hashable
    ``cache_key`` that determines ``per_trial`` and the ``reduction``, the compiled block is reused across
    calls. ``reduction`` (``Reduction``) gives each sub-chunk's statistics and how they add. Blocks of sub-chunks
    are dispatched asynchronously (the next one is queued before the previous one is read back), and the
    host adds each block's statistics in Python integers. Returns ``(totals, info)``: ``totals[key]`` is a
    Python int (limbs) or a list of ints (counts); ``info`` has ``chunk_size``, ``devices``, ``chunks``,
    ``resumed_trials``, ``blocks``, ``processes`` and ``trials_per_process`` (the trials each process's
    devices computed in this call, counted on the devices).

    Several processes (``multiproc``): every block's size is decided by process 0 and broadcast, so every
    process dispatches the same blocks whatever its speed; before returning, the processes exchange the
    digest of the blocks they ran and their trial counts, and a run whose schedules differ or whose counts
    do not add up to the trials raises ``multiproc.IncompleteRun`` instead of returning statistics.

    With ``out_dir`` the running totals and the trials done are kept in one state file (``state_files.ResumeState``),
    rewritten after every block: a run killed at any moment resumes from the last block read back, with
    the same final statistics (integers: exact). With several processes, process 0 keeps the state file in
    its ``out_dir`` (which may be local to its host) and sends the resumed state to the others; every
    process first checks that all were started with the same parameters (``IncompleteRun`` otherwise).
    """
    from . import exact_sums, multiproc

    ex = execution
    out_dir, params, block_trials = ex.out_dir, ex.params, ex.block_trials
    reduce, zeros, count_bound = reduction.reduce, reduction.zeros, reduction.count_bound
    devs, ndev, chunk_size, mesh = devices_and_chunk(ex.devices, ex.chunk_size, trials, ex.width, ex.bytes_per_item)
    limb_keys = frozenset(reduction.limb_keys)

    def merge(a, b):
        return {k: exact_sums.merge(a[k], b[k]) if k in limb_keys else a[k] + b[k] for k in a}

    key = None if cache_key is None else (cache_key, chunk_size, tuple(d.id for d in devs), limb_keys)
    aux = jax.tree_util.tree_map(np.asarray, aux)  # host values: replicated on every device of every process
    block = _kept(_BLOCK_FNS, key, lambda: make_block_fn(per_trial, reduce, merge, zeros, chunk_size, mesh))
    coord = multiproc.coordinator()
    tag = coord.next_tag("run") if coord is not None else None
    run_params = dict(params or {}, chunk_size=chunk_size, rng=RNG_VERSION, sums="device-limbs-16")
    if coord is not None:  # the same run everywhere, before the first collective (a mismatch would hang it)
        mine = params_digest(dict(run_params, trials=trials, devices=ndev, resumable=bool(out_dir)))
        digests = coord.allgather(f"{tag}/params", mine)
        others = [p for p, d in enumerate(digests) if d != digests[0]]
        if others:
            raise multiproc.IncompleteRun(
                f"process {', '.join(map(str, others))} started with other parameters than process 0 (every "
                "process of a run needs the same command, `Sampling.out_dir` given to all or none)")
    # with several processes, process 0 owns the state file (its --state-dir); the others take its state from it
    state = ResumeState(out_dir, run_params) if out_dir and (coord is None or coord.process_id == 0) else None
    n_chunks = -(-trials // chunk_size)
    totals, done, resumed = None, 0, 0
    schedule = hashlib.sha256()  # the blocks dispatched, in order: equal on every process of a run
    ran_here, n_blocks = 0, 0  # trials this process's devices computed; blocks read back

    def fold(stats, tag_block=None):
        nonlocal totals
        if tag_block is None:  # the empty statistics (a run resumed whole)
            host = {k: (exact_sums.limbs_to_int(np.asarray(v)) if k in limb_keys
                        else [int(x) for x in np.atleast_1d(np.asarray(v)).tolist()]) for k, v in stats.items()}
        else:
            host = device_totals(stats, limb_keys)
            if coord is not None:  # every process's devices: their sums added on the host, in process order
                parts = coord.allgather(f"{tag}/sums{tag_block}", host)
                host = {k: sum(p[k] for p in parts) if k in limb_keys else [sum(x) for x in zip(*(p[k] for p in parts))]
                        for k in host}
        if totals is None:
            totals = host
        else:
            totals = {k: totals[k] + host[k] if k in limb_keys else [a + b for a, b in zip(totals[k], host[k])]
                      for k in totals}

    bar = Progress.of(trials, ex.desc, ex.progress)
    if state is not None:
        SAVED.clear()
        SAVED.update(out_dir=out_dir, done=0, total=trials, unit=unit_word(ex.desc))
    try:
        loaded = state.load() if state is not None else None
        if coord is not None and out_dir:
            loaded = coord.broadcast(f"{tag}/resume", loaded)
        if loaded is not None:
            done, totals = loaded
            check_totals(totals, zeros, limb_keys, os.path.join(str(out_dir), STATE_FILE))
            if not 0 <= done <= trials or done % chunk_size and done != trials:
                raise ValueError(f"`Sampling.out_dir` {out_dir}: {os.path.join(out_dir, STATE_FILE)} is inconsistent "
                                 f"(trials done {done})")
            resumed = done
            if state is not None:
                SAVED["done"] = done
                say_resuming(out_dir, done, trials, ex.desc)
            bar.update(done)
        subs = 1 if block_trials is None else max(1, int(block_trials) // chunk_size)
        adaptive = block_trials is None
        max_block = max(chunk_size, min(_MAX_BLOCK_TRIALS, (2**31 - 1) // max(1, int(count_bound))))
        subs = max(1, min(subs, max_block // chunk_size))
        pending = None  # (stats, per-device trial counts, trials, t_submit)
        import time

        while done < trials or pending is not None:
            submitted = None
            if done < trials:
                n_valid = min(trials - done, subs * chunk_size)
                n_sub = -(-n_valid // chunk_size)
                schedule.update(f"{done},{n_valid},{n_sub};".encode())
                stats, ran = block(aux, np.uint32(done % 2**32), np.uint32(n_valid), np.int32(n_sub))
                submitted = (stats, ran, n_valid, time.perf_counter())
                done += n_valid
            if pending is not None:
                stats, ran, n, t0 = pending
                fold(stats, n_blocks)
                ran_here += sum(int(np.asarray(shard.data).sum()) for shard in ran.addressable_shards)
                if state is not None:
                    state.save(done - (submitted[2] if submitted else 0), totals)
                    SAVED["done"] = done - (submitted[2] if submitted else 0)
                bar.update(n)
                grow = (adaptive and time.perf_counter() - t0 < _BLOCK_SECONDS
                        and subs * chunk_size * 2 <= max_block)
                if coord is not None and adaptive:  # one schedule for all: process 0's timing decides
                    grow = coord.broadcast(f"{tag}/block{n_blocks}", grow)
                n_blocks += 1
                if grow:
                    subs *= 2
            pending = submitted
        if totals is None:  # nothing ran (all resumed): empty statistics
            fold(zeros())
        # complete before any number leaves: the same blocks everywhere, every trial run exactly once
        record = {"schedule": schedule.hexdigest(), "trials": ran_here}
        records = coord.allgather(f"{tag}/done", record) if coord is not None else [record]
        multiproc.check_complete(records, trials - resumed)
        SAVED.clear()  # finished: nothing left to resume
    finally:
        bar.close()
        if state is not None:
            state.close()
    return totals, {"chunk_size": chunk_size, "devices": ndev, "chunks": n_chunks, "resumed_trials": resumed,
                    "blocks": n_blocks, "processes": len(records),
                    "trials_per_process": [int(r["trials"]) for r in records]}


def check_work_inputs(groups: int, sampling, width: int, bytes_per_item: int) -> None:
    """Up front, before any work: the chunk's working set fits the memory and ``out_dir`` can hold a run."""
    from ..model.bounds import chunk_bytes, memory_budget_bytes

    budget = memory_budget_bytes()
    chunk = sampling.chunk_size
    if chunk is not None and chunk_bytes(chunk, width, bytes_per_item) > budget:
        fit = budget // chunk_bytes(1, width, bytes_per_item)
        raise ValueError(f"`Sampling.chunk_size` {chunk}: a chunk needs about "
                         f"{chunk_bytes(chunk, width, bytes_per_item) / 2**30:.3g} GiB here, more than half the RAM "
                         f"({budget / 2**30:.3g} GiB); use at most {fit}")
    if chunk_bytes(64, width, bytes_per_item) > budget:
        raise ValueError(f"`groups` {groups} (with `redundancy`): even a 64-trial chunk needs about "
                         f"{chunk_bytes(64, width, bytes_per_item) / 2**30:.3g} GiB, more than half the RAM")
    if sampling.out_dir is not None:
        ChunkStore.check_dir(sampling.out_dir)
