"""One JAX CPU device per core, for the command line and the experiments.

XLA runs one program on the CPU largely on one core: an event kernel's step is hundreds of small operations
on a few thousand numbers, too small to be split over threads. The driver splits every chunk of trials over
the devices it is given, each device running its own slice as its own program (``driver.run_chunked`` and
``driver.run_reduced``, through ``shard_map``), and a trial's numbers depend on its id alone, never on the
device that ran it. So asking JAX for one CPU device per core uses every core, with the same results: whole
training runs at N = 600 ran 2.2 times as many events per second on 2 cores (docs/performance.md).

``use_cpu_cores()`` asks for that many devices: ``$SPARE_JAX_CPU_DEVICES`` when set (a count; ``1`` or ``off``
keeps JAX's single CPU device), else the cores this process may run on, at most ``MAX_DEVICES``. It must run
before JAX starts its backends (before the first array or compile); later it changes nothing. It also leaves
alone a count the user gave JAX (``--xla_force_host_platform_device_count`` in ``XLA_FLAGS``, or
``JAX_NUM_CPU_DEVICES``). On a machine with an accelerator it adds host devices that the kernels do not use
(they run on the default backend's devices).
"""

from __future__ import annotations

import os

ENV = "SPARE_JAX_CPU_DEVICES"
OFF = ("off", "0", "none", "false", "no")
MAX_DEVICES = 32


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - systems without affinity
        return os.cpu_count() or 1


def wanted_devices(environ=os.environ) -> int | None:
    """The CPU devices to ask JAX for: ``$SPARE_JAX_CPU_DEVICES`` (None for ``off``), else ``cores()`` up to
    ``MAX_DEVICES``; None where the user already set JAX's own count. A value that is not a count raises."""
    if "xla_force_host_platform_device_count" in environ.get("XLA_FLAGS", "") or "JAX_NUM_CPU_DEVICES" in environ:
        return None
    value = environ.get(ENV)
    if value is None:
        return min(cores(), MAX_DEVICES)
    value = value.strip()
    if value.lower() in OFF or not value:
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1 or count > 4096:  # a long value is cut as the command line's refusals cut it (cli.base.quoted)
        shown = repr(value) if len(value) <= 40 else f"{value[:24]!r}... ({len(value):,} characters)"
        raise ValueError(f"{ENV} must be a count of devices from 1 to 4096, or off; got {shown}")
    return count


def use_cpu_cores(environ=os.environ) -> int | None:
    """Ask JAX for ``wanted_devices()`` CPU devices (call before the first JAX operation). Returns the count
    asked for, or None where nothing changed (off, the user's own count, or JAX already started)."""
    count = wanted_devices(environ)
    if count is None:
        return None
    import jax

    try:
        jax.config.update("jax_num_cpu_devices", count)
    except RuntimeError:  # JAX's backends already started: the devices are what they are
        return None
    return count
