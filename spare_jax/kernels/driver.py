"""The trial driver: chunks, devices, progress, exact accumulation and resumable runs
(docs/model.md#kernels-and-random-numbers, docs/accelerators.md#resumable-runs).

Kernels map a vector of trial ids to per-trial results. The driver

* splits ``trials`` into chunks of ``chunk_size`` ids (the last one padded and then cut on the host),
* places each chunk's ids on all chosen devices with a ``NamedSharding`` (one code path for 1 or many
  devices, and for several hosts after ``jax.distributed.initialize``),
* accumulates per-trial results on the host with order-independent exact arithmetic (integer histograms and
  fixed-point sums), so the numbers for a seed do not depend on the chunk size or the device count,
* optionally writes every finished chunk's sufficient statistics to ``out_dir`` so that an interrupted run
  resumes where it stopped, without losing or double-counting trials.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

DEFAULT_CHUNK = 8192
RNG_VERSION = "threefry2x32-20"  # prng.trial_bits
# Memory per chunk on device is about chunk * width * 4 bytes a few times over; keep it near this.
_CHUNK_BYTES = 64 * 2**20


def auto_chunk(width: int, ndev: int = 1, bytes_per_item: int = 16, budget: int = _CHUNK_BYTES) -> int:
    """A chunk size (multiple of the device count) whose working set stays near ``budget`` bytes."""
    c = max(64, min(65536, budget // max(1, width * bytes_per_item)))
    c = 1 << int(np.floor(np.log2(c)))
    return max(ndev, (c // ndev) * ndev)


def select_devices(devices: int | None = None):
    """The first ``devices`` JAX devices (all when None)."""
    devs = jax.devices()
    if devices is None:
        return devs
    if isinstance(devices, bool) or int(devices) < 1:
        raise ValueError(f"devices must be >= 1, got {devices!r}")
    if int(devices) > len(devs):
        raise ValueError(f"devices={devices} but only {len(devs)} JAX device(s) are visible")
    return devs[: int(devices)]


class ExactSum:
    """Exact, order-independent sum of finite float64 values, of any magnitude (no overflow, no rounding).

    Every float64 is ``m 2^(e-53)`` with an integer ``|m| < 2^53`` and ``e >= -1073`` (``np.frexp``), so it is an
    integer number of units ``2^-1126``. Values are grouped by exponent; within a group the mantissas are
    split into 27-bit halves and summed in int64 (exact for up to 2^36 values per call), and the groups are
    shifted into one Python integer ``total`` (units ``2^-1126``): the exact sum, whatever the order, the chunk
    size or the magnitudes (10^-300 .. 10^308). A non-finite value (a float32 overflow in a kernel, say) is
    refused rather than summed. ``value`` is the correctly rounded float; ``mean_var`` gives the sample mean
    and variance from exact sums of x and x^2 without cancellation.
    """

    SHIFT = 1126  # units of 2^-SHIFT; frexp exponents are >= -1073, mantissas carry 53 bits

    def __init__(self):
        self.total = 0  # python int: the exact sum in units of 2^-SHIFT

    def add(self, values) -> None:
        self.total += exact_units(values)

    @property
    def value(self) -> float:
        return self.total / (1 << self.SHIFT)

    def fraction(self):
        from fractions import Fraction

        return Fraction(self.total, 1 << self.SHIFT)


def exact_units(values) -> int:
    """The exact sum of ``values`` (float64) as an integer number of ``2^-1126`` units (see ``ExactSum``)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        return 0
    if not np.all(np.isfinite(v)):
        raise ValueError("a non-finite value reached an accumulation (a float32 overflow in the kernel: "
                         "the parameters are outside the range the model handles)")
    mant, exp = np.frexp(v)
    m = (mant * 2.0 ** 53).astype(np.int64)  # exact: |m| < 2^53
    hi, lo = m >> 27, m & ((1 << 27) - 1)  # m = hi 2^27 + lo, both far from int64 overflow when summed
    order = np.argsort(exp, kind="stable")
    exp_sorted = exp[order]
    starts = np.flatnonzero(np.r_[True, exp_sorted[1:] != exp_sorted[:-1]])
    sum_hi = np.add.reduceat(hi[order], starts)
    sum_lo = np.add.reduceat(lo[order], starts)
    total = 0
    for e, h, l in zip(exp_sorted[starts].tolist(), sum_hi.tolist(), sum_lo.tolist()):
        total += ((h << 27) + l) << (e - 53 + ExactSum.SHIFT)
    return total


def exact_mean_var(sum_x: ExactSum, sum_x2: ExactSum, n: int) -> tuple[float, float]:
    """Sample mean and (n-1)-variance from exact sums of x and x^2: ``(n S2 - S1^2) / (n (n-1))`` in exact
    rationals, so a small variance next to a large mean is not lost to cancellation."""
    from fractions import Fraction

    if n < 1:
        return float("nan"), float("nan")
    s1, s2 = sum_x.fraction(), sum_x2.fraction()
    mean = s1 / n
    var = (n * s2 - s1 * s1) / (n * (n - 1)) if n > 1 else Fraction(0)
    return float(mean), float(max(var, Fraction(0)))


class Progress:
    """A tqdm bar on stderr (quiet when disabled), redrawn every ``HEARTBEAT_S`` seconds between updates (its
    elapsed time goes on while a kernel compiles or a long chunk runs)."""

    HEARTBEAT_S = 5.0

    def __init__(self, total: int, desc: str, enabled: bool = True, unit: str = "trial"):
        self.bar, self._stop = None, None
        if enabled:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "trial", file=sys.stderr,
                                leave=False, dynamic_ncols=True)
            except Exception:  # pragma: no cover - tqdm missing
                self.bar = None
        if self.bar is not None:
            import threading

            self._stop = threading.Event()
            threading.Thread(target=self._beat, daemon=True).start()

    def _beat(self) -> None:
        while not self._stop.wait(self.HEARTBEAT_S):
            try:
                self.bar.refresh()
            except Exception:  # pragma: no cover - a bar closed meanwhile
                return

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def set_total(self, total: int) -> None:
        """The count to reach, once a stage learns it (its time-left estimate follows)."""
        if self.bar is not None:
            self.bar.total = int(total)
            self.bar.refresh()

    def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self.bar is not None:
            self.bar.close()

    @staticmethod
    def of(total: int, desc: str, progress, unit: str = "trial") -> "Progress":
        """The bar of one driver call: its own (``progress`` True or False), or, where ``progress`` is a running
        ``Progress`` that a stage of several calls shares, that one (updated by the call, not closed)."""
        if isinstance(progress, Progress):
            return _Borrowed(progress)
        return Progress(total, desc, enabled=bool(progress), unit=unit)


class _Borrowed(Progress):
    """A stage's shared bar, lent to one call: its updates go to the stage's bar, which stays open."""

    def __init__(self, owner: Progress):
        self.bar, self._stop, self.owner = None, None, owner

    def update(self, n: int) -> None:
        self.owner.update(n)

    def close(self) -> None:
        pass


# The resumable run in flight: its state directory, the trials (epochs, runs) saved there and the total; what
# an interrupted command reports. Empty when none is running.
SAVED: dict = {}


def _unit(desc: str) -> str:
    word = (desc or "trials").split()[0]
    return word if word in ("trials", "epochs", "runs") else "trials"


def _resuming(out_dir: str, done: int, total: int, desc: str) -> None:
    """A resumed run says so, once, on stderr."""
    print(f"spare-jax: resuming from {done:,} of {total:,} {_unit(desc)} saved in {out_dir}", file=sys.stderr)


_TMP_NAME = re.compile(r".+\.[0-9]+\.[0-9a-f]{8}\.tmp\.(json|npz)")  # ChunkStore._tmp_name's files


def _params_digest(params: dict) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]


def check_writable_dir(path: str, label: str) -> None:
    """``path`` (a directory, existing or to be created) can be written: its nearest existing ancestor is a
    writable directory (ValueError starting with ``label``, the parameter, otherwise)."""
    parent = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{label} {path}: {parent} is not a writable directory")


class ChunkStore:
    """Per-chunk sufficient statistics on disk: ``out_dir/run.json`` + ``out_dir/chunks/NNNNNNNN.npz``.

    A chunk file is written atomically (a uniquely named temp file + rename) only after the chunk is
    finished, so an interruption loses at most the chunk in flight, which is recomputed on resume. The
    directory is locked (``fcntl.flock`` on ``out_dir/.lock``) while a run uses it: a second run on the same
    directory is refused (ValueError) instead of racing on its files. ``close()`` releases the lock.
    """

    LOCK = ".lock"

    @staticmethod
    def check_dir(out_dir: str) -> None:
        """Cheap up-front check that ``out_dir`` can hold a run (ValueError naming what is wrong)."""
        if not isinstance(out_dir, str) or not out_dir:
            raise ValueError(f"`Sampling.out_dir` must be a directory path, got {out_dir!r}")
        if os.path.exists(out_dir) and not os.path.isdir(out_dir):
            raise ValueError(f"`Sampling.out_dir` {out_dir} exists and is not a directory")
        for name in ("run.json", STATE_FILE, ChunkStore.LOCK):  # a FIFO there would block its open for ever
            meta = os.path.join(out_dir, name)
            if os.path.lexists(meta) and not os.path.isfile(meta):
                raise ValueError(f"`Sampling.out_dir` {out_dir}: {meta} is not a regular file")
        chunks = os.path.join(out_dir, "chunks")
        if os.path.lexists(chunks) and not os.path.isdir(chunks):
            raise ValueError(f"`Sampling.out_dir` {out_dir}: {chunks} is not a directory")
        check_writable_dir(out_dir, "`Sampling.out_dir`")

    def __init__(self, out_dir: str, params: dict):
        self.out_dir = out_dir
        self.params = params
        self._lock = None
        self.check_dir(out_dir)
        try:
            os.makedirs(os.path.join(out_dir, "chunks"), exist_ok=True)
        except OSError as exc:
            raise ValueError(f"`Sampling.out_dir` {out_dir}: cannot create it: {exc.strerror}") from None
        self._acquire_lock()
        try:
            self._check_meta(params)
        except BaseException:
            self.close()
            raise

    def _acquire_lock(self) -> None:
        import fcntl

        path = os.path.join(self.out_dir, self.LOCK)
        try:
            fh = open(path, "a+")
        except OSError as exc:
            raise ValueError(f"`Sampling.out_dir` {self.out_dir}: cannot open its lock file: {exc.strerror}") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise ValueError(f"`Sampling.out_dir` {self.out_dir} is in use: another run holds its lock ({path})") from None
        self._lock = fh
        ChunkStore._remove_stale_temps(self)  # RunState takes this lock too (it calls this method unbound)

    def _remove_stale_temps(self) -> None:
        """A write killed between its temp file (``_tmp_name``) and the rename leaves that file behind; with the
        lock held no other writer is alive, so every such file in the directory and its ``chunks/`` is stale and
        goes (nothing else is touched)."""
        for folder in (self.out_dir, os.path.join(self.out_dir, "chunks")):
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                if _TMP_NAME.fullmatch(name):
                    try:
                        os.remove(os.path.join(folder, name))
                    except OSError:  # pragma: no cover - gone already: it is never read either way
                        pass

    def close(self) -> None:
        """Release the directory lock (idempotent)."""
        if self._lock is not None:
            self._lock.close()  # closing the descriptor drops the flock
            self._lock = None

    def __del__(self):  # pragma: no cover - safety net; run_chunked closes explicitly
        self.close()

    def _check_meta(self, params: dict) -> None:
        out_dir = self.out_dir
        meta = os.path.join(out_dir, "run.json")
        digest = _params_digest(params)
        if os.path.exists(meta):
            try:
                with open(meta) as fh:
                    saved = json.load(fh)
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                raise ValueError(f"`Sampling.out_dir` {out_dir}: {meta} is not a run record (unreadable or not JSON)") from None
            if not isinstance(saved, dict) or not isinstance(saved.get("params", {}), dict):
                raise ValueError(f"`Sampling.out_dir` {out_dir}: {meta} is not a run record (not a JSON object with params)")
            if saved.get("digest") != digest:
                diff = sorted(k for k in set(saved.get("params", {})) | set(params)
                              if saved.get("params", {}).get(k) != json.loads(json.dumps(params, default=str)).get(k))
                raise ValueError(f"`Sampling.out_dir` {out_dir} holds a run with other parameters ({', '.join(diff) or 'format'}); "
                                 "use another `Sampling.out_dir` or the same parameters")
        else:
            tmp = self._tmp_name(meta, ".json")
            with open(tmp, "w") as fh:
                json.dump({"digest": digest, "params": params}, fh, indent=1, sort_keys=True, default=str)
            os.replace(tmp, meta)

    @staticmethod
    def _tmp_name(path: str, suffix: str) -> str:
        """A temp name beside ``path`` unique to this process and call (two writers never share one)."""
        return f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp{suffix}"

    def path(self, index: int) -> str:
        return os.path.join(self.out_dir, "chunks", f"{index:08d}.npz")

    def load(self, index: int):
        """A finished chunk's statistics, or None when it is missing or damaged (truncated, not an npz):
        a damaged file is removed and its chunk recomputed, never read as partial numbers."""
        import zipfile

        p = self.path(index)
        if not os.path.exists(p):
            return None
        try:
            with np.load(p) as z:
                return {k: z[k] for k in z.files}
        except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
            os.remove(p)
            return None

    def save(self, index: int, arrays: dict) -> None:
        p = self.path(index)
        tmp = self._tmp_name(p, ".npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, p)


def _check_trials_and_chunk(trials, chunk_size: int, width: int, bytes_per_item: int) -> None:
    """Trial ids are uint32: ``trials`` < 2^32. One chunk's working set must fit half the RAM."""
    from ..model.bounds import chunk_bytes, memory_budget_bytes

    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or not 1 <= trials <= 2**32 - 1:
        raise ValueError(f"trials must be an integer in 1..2^32-1 (trial ids are uint32), got {trials!r}")
    need, budget = chunk_bytes(chunk_size, width, bytes_per_item), memory_budget_bytes()
    if need > budget:
        fit = max(0, budget // max(1, chunk_bytes(1, width, bytes_per_item)))
        raise ValueError(f"chunk_size {chunk_size} needs about {need / 2**30:.3g} GiB per chunk (width {width}), more "
                         f"than half the RAM ({budget / 2**30:.3g} GiB); use a chunk size of at most {fit}"
                         + ("" if fit else " (none fits: lower the groups or redundancy)"))


def _devices_and_chunk(devices, chunk_size, trials, width: int, bytes_per_item: int):
    """The devices, their count, the chunk size (default ``auto_chunk``; rounded up to a multiple of the
    device count; checked against the memory budget) and the 1-D mesh over the devices."""
    devs = select_devices(devices)
    ndev = len(devs)
    if chunk_size is None:
        chunk_size = auto_chunk(width, ndev, bytes_per_item)
    chunk_size = int(chunk_size)
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    chunk_size = -(-chunk_size // ndev) * ndev
    _check_trials_and_chunk(trials, chunk_size, width, bytes_per_item)
    return devs, ndev, chunk_size, jax.sharding.Mesh(np.array(devs), ("trials",))


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
    devs, ndev, chunk_size, mesh = _devices_and_chunk(ex.devices, ex.chunk_size, trials, ex.width, ex.bytes_per_item)
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
        SAVED.update(out_dir=out_dir, done=kept, total=trials, unit=_unit(ex.desc))
        if kept:
            _resuming(out_dir, kept, trials, ex.desc)
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


def shard_ids(ids: np.ndarray, sharding):
    """Place a chunk's trial ids on the devices of ``sharding`` (works across hosts too: each process
    fills only its addressable shards from the same global id array)."""
    return jax.make_array_from_callback(ids.shape, sharding, lambda index: ids[index])


def to_host(array) -> np.ndarray:
    """A (possibly multi-host) sharded result as a numpy array on every process."""
    if jax.process_count() > 1:  # pragma: no cover - needs several hosts
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(array, tiled=True))
    return np.asarray(array)


def initialize_distributed(coordinator: str | None = None, num_processes: int | None = None,
                           process_id: int | None = None, peer_timeout: float = 60.0) -> None:
    """Join a multi-process JAX run: explicit ``coordinator`` ("HOST:PORT"), ``num_processes`` and
    ``process_id``, or (all None) from the environment (``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``,
    ``JAX_PROCESS_ID``) or a cluster's auto-detection (Slurm, ...). On CPU the cross-process collectives
    (none in the driver: the devices' statistics are added on the host) use gloo.

    ``peer_timeout`` (seconds) bounds the wait for the peers to join and to leave; JAX's own heartbeat check
    is set well above it, so that the watchdog of ``multiproc`` (which names the lost process) acts first."""
    check_distributed_args(coordinator, num_processes, process_id)
    timeouts = dict(initialization_timeout=max(1, int(peer_timeout)), shutdown_timeout_seconds=max(1, int(peer_timeout)),
                    heartbeat_timeout_seconds=max(10, int(2 * peer_timeout + 10)))
    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except Exception:  # pragma: no cover - option absent in this JAX
        pass
    if coordinator is None:
        jax.distributed.initialize(**timeouts)
    else:
        jax.distributed.initialize(coordinator, num_processes=num_processes, process_id=process_id, **timeouts)


def check_distributed_args(coordinator, num_processes, process_id) -> None:
    """ValueError naming the flag unless all three are None or form a valid multi-process address."""
    if coordinator is not None:
        if not isinstance(coordinator, str) or ":" not in coordinator:
            raise ValueError(f"`coordinator` must be HOST:PORT, got {coordinator!r}")
        if isinstance(num_processes, bool) or not isinstance(num_processes, int) or num_processes < 1:
            raise ValueError(f"`num_processes` must be an integer >= 1, got {num_processes!r}")
        if isinstance(process_id, bool) or not isinstance(process_id, int) or not 0 <= process_id < num_processes:
            raise ValueError(f"`process_id` must be an integer in 0..{num_processes - 1}, got {process_id!r}")


def as_uint32_key_words(key) -> jnp.ndarray:
    """Accept a JAX key (new or raw) or an int seed; return the hash seed words."""
    from ..model.prng import key_words

    if isinstance(key, (int, np.integer)):
        key = jax.random.key(int(key))
    return key_words(key)


# --------------------------------------------------------------------------------------------------------
# Device-side reduction: many chunks per dispatch, one small state file
# (docs/accelerators.md#the-driver-reduces-on-the-device)

STATE_FILE = "state.json"
STATE_FORMAT = "spare-jax-state-1"
# A dispatched block of sub-chunks aims at this many seconds of device work (results never depend on it).
_BLOCK_SECONDS = 0.5
_MAX_BLOCK_TRIALS = 1 << 30  # int32 counts per block stay exact


def _checksum(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class RunState:
    """One small, atomically written state file ``out_dir/state.json`` for a resumable device-reduced run.

    It holds the parameter digest (and the parameters), the trials done so far and the running statistics
    (Python integers: exact), plus a SHA-256 of all that. It is written to a uniquely named temp file,
    fsync'd, renamed over the old one (``os.replace``) and the directory fsync'd, so a SIGKILL at any moment
    leaves either the previous or the new state. On load the checksum, the format and the digest are
    checked: a state of other parameters, a damaged file or a stray ``run.json`` of another run is refused
    (ValueError) — never silently reused or mixed. The directory is locked (``fcntl.flock`` on
    ``out_dir/.lock``) while a run uses it.
    """

    LOCK = ChunkStore.LOCK

    def __init__(self, out_dir: str, params: dict):
        ChunkStore.check_dir(out_dir)
        self.out_dir = out_dir
        self.params = json.loads(json.dumps(params, sort_keys=True, default=str))
        self.digest = _params_digest(params)
        self.path = os.path.join(out_dir, STATE_FILE)
        self._lock = None
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"`Sampling.out_dir` {out_dir}: cannot create it: {exc.strerror}") from None
        ChunkStore._acquire_lock(self)
        try:
            self._check_foreign()
        except BaseException:
            self.close()
            raise

    close = ChunkStore.close
    __del__ = ChunkStore.__del__

    def _check_foreign(self) -> None:
        """A ``run.json`` (the per-chunk format) of other parameters in the same directory is refused too."""
        meta = os.path.join(self.out_dir, "run.json")
        chunks = os.path.join(self.out_dir, "chunks")
        if not os.path.exists(meta) and os.path.isdir(chunks) and os.listdir(chunks):
            raise ValueError(f"`Sampling.out_dir` {self.out_dir} holds chunk files without their run record (run.json): "
                             "their parameters are unknown; use another `Sampling.out_dir`")
        if os.path.exists(meta):
            try:
                with open(meta) as fh:
                    saved = json.load(fh)
                other = saved.get("params", {})
            except Exception:
                raise ValueError(f"`Sampling.out_dir` {self.out_dir}: {meta} is not a run record (unreadable or not JSON)") \
                    from None
            if other.get("kind") != self.params.get("kind") or any(
                    other.get(k) != self.params.get(k) for k in ("groups", "redundancy", "seed", "placement")):
                raise ValueError(f"`Sampling.out_dir` {self.out_dir} holds a run with other parameters; use another `Sampling.out_dir`")

    def load(self):
        """``(trials_done, totals)`` of a valid saved state, or None when there is none."""
        if not os.path.exists(self.path):
            return None
        from ..model.inputfile import read_text

        text = read_text(self.path, f"`Sampling.out_dir` {self.out_dir}")  # a regular file only, never blocking
        try:
            data = json.loads(text)
            body, check = data["body"], data["sha256"]
        except Exception:
            raise ValueError(f"`Sampling.out_dir` {self.out_dir}: {self.path} is damaged (not a state file); remove it to "
                             "start over") from None
        if _checksum(body) != check or body.get("format") != STATE_FORMAT:
            raise ValueError(f"`Sampling.out_dir` {self.out_dir}: {self.path} fails its checksum (damaged); remove it to "
                             "start over")
        if body.get("digest") != self.digest:
            saved = body.get("params", {})
            diff = sorted(k for k in set(saved) | set(self.params) if saved.get(k) != self.params.get(k))
            raise ValueError(f"`Sampling.out_dir` {self.out_dir} holds a run with other parameters ({', '.join(diff) or 'format'}); "
                             "use another `Sampling.out_dir` or the same parameters")
        done, totals = body.get("trials_done"), body.get("totals")
        if isinstance(done, bool) or not isinstance(done, int) or not isinstance(totals, dict):
            raise ValueError(f"`Sampling.out_dir` {self.out_dir}: {self.path} is inconsistent (no trial count or "
                             "totals); remove it to start over")
        return done, totals

    def save(self, trials_done: int, totals: dict) -> None:
        body = {"format": STATE_FORMAT, "digest": self.digest, "params": self.params,
                "trials_done": int(trials_done), "totals": totals}
        tmp = ChunkStore._tmp_name(self.path, ".json")
        with open(tmp, "w") as fh:
            json.dump({"body": body, "sha256": _checksum(body)}, fh, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        try:
            fd = os.open(self.out_dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:  # pragma: no cover - some filesystems refuse a directory fsync
            pass


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


def device_totals(stats: dict, limb_keys) -> dict:
    """The sums over this process's devices of a block's per-device statistics (``make_block_fn``): each limb
    vector as the Python integer it holds, each count as a list of Python integers."""
    from .exact_sums import limbs_to_int

    out = {}
    for k, v in stats.items():
        rows = [np.asarray(shard.data) for shard in v.addressable_shards]
        if k in limb_keys:
            out[k] = sum(limbs_to_int(row[i]) for row in rows for i in range(row.shape[0]))
        else:
            total = sum(row.astype(np.int64).sum(axis=0) for row in rows)
            out[k] = [int(x) for x in np.atleast_1d(total).tolist()]
    return out


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


def _check_totals(totals: dict, zeros: Callable, limb_keys, path: str) -> None:
    """A resumed state's totals hold exactly the statistics of this run: each limb sum a non-negative
    integer, each count a list of non-negative integers of its length (ValueError naming the file)."""
    want = jax.eval_shape(zeros)
    bad = sorted(set(totals) ^ set(want))
    for k, shape in want.items():
        if k in bad:
            continue
        v = totals[k]
        if k in limb_keys:
            ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
        else:
            size = int(np.prod(shape.shape)) if shape.shape else 1
            ok = (isinstance(v, list) and len(v) == size
                  and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v))
        if not ok:
            bad.append(k)
    if bad:
        raise ValueError(f"`Sampling.out_dir`: {path} holds totals this run does not keep or cannot hold "
                         f"({', '.join(map(str, bad[:5]))}); remove it to start over")


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

    With ``out_dir`` the running totals and the trials done are kept in one state file (``RunState``),
    rewritten after every block: a run killed at any moment resumes from the last block read back, with
    the same final statistics (integers: exact). With several processes, process 0 keeps the state file in
    its ``out_dir`` (which may be local to its host) and sends the resumed state to the others; every
    process first checks that all were started with the same parameters (``IncompleteRun`` otherwise).
    """
    from . import exact_sums, multiproc

    ex = execution
    out_dir, params, block_trials = ex.out_dir, ex.params, ex.block_trials
    reduce, zeros, count_bound = reduction.reduce, reduction.zeros, reduction.count_bound
    devs, ndev, chunk_size, mesh = _devices_and_chunk(ex.devices, ex.chunk_size, trials, ex.width, ex.bytes_per_item)
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
        mine = _params_digest(dict(run_params, trials=trials, devices=ndev, resumable=bool(out_dir)))
        digests = coord.allgather(f"{tag}/params", mine)
        others = [p for p, d in enumerate(digests) if d != digests[0]]
        if others:
            raise multiproc.IncompleteRun(
                f"process {', '.join(map(str, others))} started with other parameters than process 0 (every "
                "process of a run needs the same command, `Sampling.out_dir` given to all or none)")
    # with several processes, process 0 owns the state file (its --state-dir); the others take its state from it
    state = RunState(out_dir, run_params) if out_dir and (coord is None or coord.process_id == 0) else None
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
        SAVED.update(out_dir=out_dir, done=0, total=trials, unit=_unit(ex.desc))
    try:
        loaded = state.load() if state is not None else None
        if coord is not None and out_dir:
            loaded = coord.broadcast(f"{tag}/resume", loaded)
        if loaded is not None:
            done, totals = loaded
            _check_totals(totals, zeros, limb_keys, os.path.join(str(out_dir), STATE_FILE))
            if not 0 <= done <= trials or done % chunk_size and done != trials:
                raise ValueError(f"`Sampling.out_dir` {out_dir}: {os.path.join(out_dir, STATE_FILE)} is inconsistent "
                                 f"(trials done {done})")
            resumed = done
            if state is not None:
                SAVED["done"] = done
                _resuming(out_dir, done, trials, ex.desc)
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
