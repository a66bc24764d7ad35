"""The devices of a run and its processes: which devices (``select_devices``), the chunk size over them
(``auto_chunk``, ``devices_and_chunk``: the memory check and the 1-D mesh), trial ids placed on them
(``shard_ids``) and results read back (``to_host``), and joining a multi-process run
(``initialize_distributed``, ``check_distributed_args``)."""

from __future__ import annotations

import jax
import numpy as np

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


def devices_and_chunk(devices, chunk_size, trials, width: int, bytes_per_item: int):
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
