import itertools
import os
import pathlib

import numpy as np
import pytest

from spare_jax.kernels.compile_cache import enable_compile_cache

# One persistent compilation cache for the whole suite, in an ignored folder of the repository: every xdist
# worker and every command-line subprocess shares it (a kernel compiled once is loaded by the others), and
# the user's own cache is left alone.
TEST_COMPILE_CACHE = pathlib.Path(__file__).resolve().parent.parent / ".jax_cache"
# The suite compiles far more than it runs: most of its minutes were LLVM's optimisation passes over programs
# that then run for a second. XLA's backend at level 0 compiles them in about two thirds of the time. Its
# programs are slower, and their float32 transcendentals (log1p, pow) can differ from the default level's in
# the last bits, so a Monte Carlo mean moves by about 1e-9 relative. The tests here check laws, statistics
# and self-consistency (chunks, devices, the same runs two ways), which hold at either level; the exact
# numbers a user's command prints are checked by tests/test_golden_cli.py, whose commands run at the default
# level, as does the slow tier's bit-identity of two overhead programs (tests/test_device_reduce.py). Set for this process and the command lines it starts, unless XLA_FLAGS already sets a level.
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0").strip()
os.environ.setdefault("SPARE_JAX_COMPILE_CACHE", str(TEST_COMPILE_CACHE))
# One CPU device per test process, whatever the command lines it runs in-process ask for (the command line asks
# for one per core: a worker's device count would then depend on which test ran first in it). The workers
# already use every core; tests/test_cpu_devices.py checks the command line's devices, and
# tests/test_devices.py the same numbers on several.
os.environ.setdefault("SPARE_JAX_CPU_DEVICES", "1")
enable_compile_cache()


def brute_survival(placement):
    """P(T > k) by enumerating every failure subset: a shard is lost iff all its holders failed."""
    n = placement.groups
    holders = placement.holders
    alive_ok = np.zeros(n + 1)
    total = np.zeros(n + 1)
    for mask in range(1 << n):
        failed = np.array([(mask >> g) & 1 for g in range(n)], dtype=bool)
        k = int(failed.sum())
        total[k] += 1
        if not failed[holders].all(axis=1).any():
            alive_ok[k] += 1
    return alive_ok / total


def brute_expected_t_by_orders(placement):
    """E[T] by enumerating every failure order (N! permutations)."""
    n = placement.groups
    holders = placement.holders
    total = 0
    count = 0
    for order in itertools.permutations(range(n)):
        failed = np.zeros(n, dtype=bool)
        for i, g in enumerate(order, start=1):
            failed[g] = True
            if failed[holders].all(axis=1).any():
                total += i
                break
        count += 1
    return total / count


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# The slow tier is the tests marked ``@pytest.mark.slow`` (statistical checks at N = 600, whole-experiment
# smoke runs, multi-device and multi-process checks, end-to-end command-line runs that compile many kernels).
# `make test` skips them; `make test-all` (or `pytest`) runs everything. Each stays a real test: run with
# `pytest -m slow` it fails when its check fails.


# ``SPARE_JAX_TEST_COMPILES=FILE``: each test's XLA compiles and their seconds, its wall seconds, and the programs
# that took over a second to compile (JAX's name for each, e.g. ``jit(run_kernel)`` or ``jit(local)``, the
# driver's block around a kernel, with its seconds), one tab-separated line per test appended to FILE.<worker>
# (where the suite's minutes go; off by default). Run it on an empty .jax_cache: a program loaded from the cache
# is not compiled.
COMPILE_PROFILE = os.environ.get("SPARE_JAX_TEST_COMPILES")
_SLOW_PROGRAMS = []  # "NAME SECONDS" of each program the running test compiled for over a second


if COMPILE_PROFILE:
    import logging
    import re

    class _ProgramLog(logging.Handler):
        """JAX logs "Finished XLA compilation of NAME in S sec" at debug level (a load from the cache too)."""

        def emit(self, record):
            found = re.search(r"Finished XLA compilation of (.*) in ([0-9.]+) sec", record.getMessage())
            if found and float(found.group(2)) > 1.0:
                _SLOW_PROGRAMS.append(f"{found.group(1)} {float(found.group(2)):.1f}")

    _logger = logging.getLogger("jax._src.dispatch")
    _logger.setLevel(logging.DEBUG)
    _logger.addHandler(_ProgramLog())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if not COMPILE_PROFILE:
        yield
        return
    import time

    from spare_jax.kernels.compiles import count_compiles

    _SLOW_PROGRAMS.clear()
    t0 = time.perf_counter()
    with count_compiles() as seen:
        yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{COMPILE_PROFILE}.{worker}", "a", encoding="utf-8") as fh:
        fh.write(f"{item.nodeid}\t{seen.compiles}\t{seen.seconds:.2f}\t{time.perf_counter() - t0:.2f}\t"
                 f"{'; '.join(_SLOW_PROGRAMS)}\n")
