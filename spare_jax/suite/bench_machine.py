"""This machine in ``bench`` (docs/performance.md#spare-jax-bench): the wipe-out kernel's roofline (its integer
operations per trial against the peak integer rate, ``roofline``), the usable cores (``cpu_count``) and one run
as two processes against one (``bench_processes``)."""

from __future__ import annotations


def wipeout_int_ops_per_trial(groups: int, redundancy: int) -> int:
    """Integer operations per wipe-out trial, counted from the kernel: Threefry-2x32-20 per column pair
    (20 rounds of add, rotate (2 shifts + or), xor = 5 ops; 5 key injections of 3 adds; 2 initial adds),
    the circular window maximum (r - 1 maxima per shard), the minimum over shards and the count of
    earlier failures (compare + add per group), plus the reduction (about 200 ops)."""
    pairs = (groups + 1) // 2
    return pairs * (20 * 5 + 5 * 3 + 2) + groups * (redundancy - 1) + groups + 2 * groups + 200


def roofline(groups: int, redundancy: int, kernel_rate: float, driver_rate: float, devs) -> dict:
    """A roofline estimate: the wipe-out kernel is integer-bound (its working set, about 4N bytes per
    trial a few times over, stays in cache; only O(N) statistics per block leave the device), so the bound
    is the machine's peak 32-bit integer rate over the operations per trial. The CPU peak assumes
    ``cores x SIMD lanes (AVX-512: 16, AVX2: 8, else 4) x 2 ops/cycle x 3 GHz``; a GPU's is taken as its
    FP32 non-tensor peak (H100/H200: 6.7e13/s)."""
    ops = wipeout_int_ops_per_trial(groups, redundancy)
    kind = devs[0].device_kind
    if devs[0].platform == "cpu":
        try:
            flags = open("/proc/cpuinfo").read()
        except OSError:  # pragma: no cover
            flags = ""
        lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
        peak = cpu_count() * lanes * 2 * 3.0e9
    else:  # pragma: no cover - accelerators
        peak = 6.7e13 * len(devs) if ("H100" in kind or "H200" in kind) else float("nan")
    return {"int_ops_per_trial": ops, "bytes_per_trial_working_set": 4 * groups * 3,
            "bytes_per_trial_to_host": 0, "peak_int_ops_per_s_estimate": peak,
            "roofline_trials_per_s": peak / ops, "kernel_fraction_of_roofline": kernel_rate * ops / peak,
            "driver_fraction_of_roofline": driver_rate * ops / peak}


def cpu_count():
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count()


def bench_processes(groups: int = 600, redundancy: int = 8, trials: int = 400_000, seed: int = 1) -> dict:
    """Two-process scaling on this machine's CPU: one ``wipeout`` run as 2 processes pinned to one core each
    (``jax.distributed``, gloo) against 1 process with 2 cores, in the same bench run; both must print the
    same statistics. Rates from each run's own ``elapsed_s`` (compile included, process start not)."""
    import json
    import os
    import socket
    import subprocess
    import sys

    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cores) < 2:
        return {"cpu_two_process_scaling": None, "cpu_two_process_note": "needs 2 cores"}
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    base = [sys.executable, "-m", "spare_jax", "wipeout", "-N", str(groups), "-r", str(redundancy), "--trials",
            str(trials), "--seed", str(seed), "--json", "--quiet"]

    def pinned(cpus):
        return lambda: os.sched_setaffinity(0, cpus)

    one = subprocess.run(base, capture_output=True, text=True, env=env, timeout=1800,
                         preexec_fn=pinned(set(cores[:2])))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([*base, "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2", "--process-id",
                               str(i)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                              preexec_fn=pinned({cores[i]})) for i in range(2)]
    outs = [p.communicate(timeout=1800) for p in procs]
    if one.returncode != 0 or any(p.returncode != 0 for p in procs):
        errs = [one.stderr] + [e for _, e in outs]
        raise RuntimeError("the two-process bench failed: " + " | ".join(e.strip()[-300:] for e in errs if e.strip()))
    ref, got = json.loads(one.stdout), [json.loads(o) for o, _ in outs]
    rate_one = trials / ref["elapsed_s"]
    rate_two = trials / max(g["elapsed_s"] for g in got)
    same = all(g["mc_mean"] == ref["mc_mean"] and g["mc_quantiles"] == ref["mc_quantiles"] for g in got)
    return {"cpu_one_process_2_cores_trials_per_s": rate_one, "cpu_two_processes_1_core_trials_per_s": rate_two,
            "cpu_two_process_scaling": rate_two / rate_one, "cpu_two_process_identical_statistics": same,
            "cpu_two_process_trials": trials, "cpu_two_process_trials_per_process": got[0]["trials_per_process"]}
