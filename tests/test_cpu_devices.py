"""The command line asks JAX for one CPU device per core (``kernels.cpu_devices``), with the same numbers."""
import json
import os
import subprocess
import sys

import pytest

from spare_jax.kernels.cpu_devices import MAX_DEVICES, cores, wanted_devices

TIMING_KEYS = ("elapsed_s", "trials_per_s", "events_per_s", "epochs_per_s")


def test_wanted_devices_reads_the_environment():
    assert wanted_devices({}) == min(cores(), MAX_DEVICES)
    assert wanted_devices({"SPARE_JAX_CPU_DEVICES": "3"}) == 3
    assert wanted_devices({"SPARE_JAX_CPU_DEVICES": " 1 "}) == 1
    for off in ("off", "OFF", "0", "none", ""):
        assert wanted_devices({"SPARE_JAX_CPU_DEVICES": off}) is None
    # a count the user gave JAX itself wins
    assert wanted_devices({"XLA_FLAGS": "--xla_force_host_platform_device_count=4", "SPARE_JAX_CPU_DEVICES": "2"}) is None
    assert wanted_devices({"JAX_NUM_CPU_DEVICES": "4"}) is None
    assert wanted_devices({"XLA_FLAGS": "--xla_backend_optimization_level=0"}) == min(cores(), MAX_DEVICES)
    for bad in ("two", "-1", "2.5", "5000", "nan", "1e300"):
        with pytest.raises(ValueError, match="SPARE_JAX_CPU_DEVICES must be a count"):
            wanted_devices({"SPARE_JAX_CPU_DEVICES": bad})
    with pytest.raises(ValueError, match=r"got '" + "7" * 24 + r"'\.\.\. \(300 characters\)$"):
        wanted_devices({"SPARE_JAX_CPU_DEVICES": "7" * 300})


def _cli(*args, **env):
    base = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
    proc = subprocess.run([sys.executable, "-m", "spare_jax", *args], capture_output=True, text=True,
                          env=dict(base, JAX_PLATFORMS="cpu", **env), timeout=600)
    return proc


def test_the_command_line_runs_on_the_devices_asked_for_with_the_same_numbers():
    """Epochs with repair through ``run_reduced`` on 3 CPU devices and on 1: the same JSON but the device count
    and the timings (3 does not divide the default chunk: the driver rounds it)."""
    args = ("wipeout", "-N", "16", "-r", "2", "--repair-time", "30", "--trials", "3000", "--json", "--quiet")
    one, three = (_cli(*args, SPARE_JAX_CPU_DEVICES=d) for d in ("1", "3"))
    assert one.returncode == 0 and three.returncode == 0, (one.stderr[-1500:], three.stderr[-1500:])
    a, b = json.loads(one.stdout), json.loads(three.stdout)
    assert (a["devices"], b["devices"]) == (1, 3)
    differ = sorted(k for k in a if a[k] != b.get(k))
    assert set(differ) <= {"devices", "chunk_size", *TIMING_KEYS}, differ


def test_a_bad_device_count_is_one_line():
    proc = _cli("wipeout", "-N", "16", "-r", "2", "--trials", "100", "--json", SPARE_JAX_CPU_DEVICES="lots")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "spare-jax: error: SPARE_JAX_CPU_DEVICES must be a count of devices from 1 to 4096, or off; got 'lots'"]


def test_the_default_run_chunk_keeps_many_devices_within_the_memory_budget():
    """CPU devices share one memory: the default chunk of whole runs is a power of 2 per device, from
    ``MIN_CHUNK`` up to ``MAX_CHUNK`` as the runs ask, and its runs over all devices stay within ``fit``."""
    from spare_jax.kernels.run_driver import MAX_CHUNK, MIN_CHUNK, default_chunk

    assert default_chunk(10, 600, 1) == MIN_CHUNK
    assert default_chunk(300, 600, 1) == 512
    assert default_chunk(10**6, 600, 2) == 2 * 1024  # 2^20 numbers per device at N = 600
    assert default_chunk(10**6, 16, 4) == 4 * MAX_CHUNK
    for ndev in (1, 2, 3, 8, 32):
        for fit in (None, 5_000, 20_000, 10**6):
            for runs in (1, 255, 256, 300, 5_000, 10**6):
                chunk = default_chunk(runs, 600, ndev, fit)
                per = chunk // ndev
                assert chunk == per * ndev and per & (per - 1) == 0
                if fit is not None:
                    assert chunk <= max(fit, ndev)
                if fit is None or fit // ndev >= MIN_CHUNK:
                    assert per >= MIN_CHUNK
    assert default_chunk(10**6, 600, 32) == 32 * 1024  # without a budget: 32 devices x 1,024
    assert default_chunk(10**6, 600, 32, fit=8_000) == 32 * 128  # 8,000 runs fit: 128 per device
