"""Benchmarks (docs/performance.md#spare-jax-bench): the JAX kernels against a vectorised NumPy implementation and a
SimPy discrete-event simulation of the same model, measured in the same run on the same machine.

* wipe-out: trials/s of the chunked JAX kernel (``wipeout_kernel``, steady state after compilation), of a
  straightforward vectorised NumPy version (exponential failure times, gather through the holders table,
  min over shards of max over holders) and of a per-event SimPy simulation (one process per group; on each
  failure the holder counts of its shards drop; the epoch ends at the first shard with none left).
* scenario: the wipe-out kernel under a ``Scenario`` (failure domains of 5 groups with an interleaved ring
  and job-wide interruptions), as a slowdown against the plain kernel (target: within 2x).
* repair: events/s of the event kernel's epochs with repair (``repair.simulate_repair``: r = 2, fixed 30-min repair)
  against a plain NumPy event loop of the same model (``repair_events_numpy``), with both mean uptimes.
* overhead: trials/s of the depth-threshold kernel against a NumPy version of the same computation (the
  binary search over k with the cumulative-sum/maximum queue test, vectorised over trials and depths).

All implementations are checked to estimate the same E[T] (and Omega) within a few standard errors. The baselines
are in ``bench_baselines``, the compile counts in ``bench_compiles``, the roofline and the two-process run in
``bench_machine``.
"""

from __future__ import annotations

import math
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

from ..kernels.driver import as_uint32_key_words
from ..model.failures import FailureModel
from ..model.placement import Placement, make_placement
from ..results import Report
from .bench_baselines import numpy_depth_thresholds, numpy_wipeout, repair_events_numpy, simpy_wipeout
from .bench_compiles import plan_compiles, runs_compiles
from .bench_machine import bench_processes, cpu_count, roofline


def _timed(fn, min_seconds: float):
    """Call ``fn()`` (returning a trial count) repeatedly for at least ``min_seconds``; trials/s."""
    done, t0 = 0, time.perf_counter()
    while True:
        done += fn()
        dt = time.perf_counter() - t0
        if dt >= min_seconds:
            return done / dt, done


def bench_repair(groups: int = 600, redundancy: int = 2, repair_time_min: float = 30.0, law: str = "fixed",
                 seconds: float = 3.0, chunk_size: int = 4096) -> dict:
    """Events/s of the event kernel's epochs with repair through the driver on every device (``simulate_repair``: steady state,
    after compilation, consecutive batches of ``chunk_size`` epochs) against ``repair_events_numpy`` in the same
    run, same model (group MTBF 3000 min), with the mean uptimes as a check."""
    from ..kernels.repair import EpochOptions, simulate_repair
    from ..model.cluster import Sampling
    from ..model.repair import Repair

    repair = Repair(repair_time_min, law)
    pl = make_placement("stacked", groups, redundancy)
    options = EpochOptions(max_events=1 << 24)

    def batch(seed):
        return simulate_repair(pl, Sampling(chunk_size, seed, chunk_size, progress=False), repair=repair,
                               options=options)

    batch(0)  # compile
    ev, means, variances, t0, seed = 0, [], [], time.perf_counter(), 0
    while True:
        seed += 1
        res = batch(seed)
        ev += res.events
        means.append(res.uptime_mean_min)
        variances.append(res.uptime_var_min2)
        dt = time.perf_counter() - t0
        if dt >= seconds:
            break
    jax_rate = ev / dt
    ju = (float(np.mean(means)), float(math.sqrt(np.mean(variances) / (len(means) * chunk_size))))
    rng = np.random.default_rng(3)
    nev, nups, t0 = 0, [], time.perf_counter()
    while True:
        u, _, e = repair_events_numpy(pl, 8, FailureModel().group_mtbf_min, repair, rng)
        nev += int(e.sum())
        nups.append(u)
        dt = time.perf_counter() - t0
        if dt >= seconds:
            break
    np_rate = nev / dt
    nu = np.concatenate(nups)
    return {"repair_groups": groups, "repair_redundancy": redundancy, "repair_time_min": repair_time_min,
            "repair_law": law, "repair_events_per_s": jax_rate, "repair_numpy_events_per_s": np_rate,
            "repair_speedup_vs_numpy": jax_rate / np_rate, "repair_chunk_size": chunk_size,
            "repair_check_uptime_min": {"jax": list(ju),
                                        "numpy": [float(nu.mean()), float(nu.std() / math.sqrt(nu.size))]}}


def bench_driver(pl: Placement, model: FailureModel, kernel_rate: float, seconds: float, chunk_size: int,
                 devices=None) -> dict:
    """Trials/s of the full driver (``simulate_wipeout``: device-side reduction, blocks of sub-chunks,
    exact sums) over about ``seconds`` of work, after a compiling warm-up call; its cost as a fraction of
    the kernel alone (``1 - driver / kernel``; negative when the driver is faster, as its device loop
    avoids the per-chunk round trip of the kernel loop)."""
    from ..kernels.wipeout import simulate_wipeout
    from ..model.cluster import Sampling

    simulate_wipeout(pl, Sampling(chunk_size, 0, chunk_size, devices), model=model)  # compile
    trials = int(min(2**32 - 1, max(chunk_size, kernel_rate * seconds)))
    t0 = time.perf_counter()
    res = simulate_wipeout(pl, Sampling(trials, 0, chunk_size, devices), model=model)
    rate = trials / (time.perf_counter() - t0)
    return {"driver_trials_per_s": rate, "driver_cost_fraction": 1.0 - rate / kernel_rate,
            "driver_trials": trials, "driver_mean_T": res.mean}


def bench_runs(seconds: float = 3.0, runs: int = 2048) -> dict:
    """Events/s of the whole-run kernel (``kernels.run``, after compiling this setup's program) against the
    independent NumPy reference (``reference.refrun``) and the SimPy simulation (``reference.simpyrun``) of the
    same runs, in one
    run: ``simpyrun.bench_setup()`` (spare, N = 64, r = 3, m = 4, group MTBF 3000 min, fixed 300-min
    repair, W = 48 h, C = 2, R = 10, tau = 60). The two Python simulators run whole runs for about
    ``seconds`` each; their mean TTTs sit beside the kernel's as a check."""
    from ..kernels.run_driver import simulate_runs, summarize
    from ..model.cluster import Sampling
    from ..reference.refrun import reference_runs
    from ..reference.simpyrun import bench_setup, simpy_runs

    setup = bench_setup()
    compiles = runs_compiles(setup, Sampling(count=runs, seed=1, chunk_size=runs))  # compiles, then 0 for new costs
    simulate_runs(setup, Sampling(count=runs, seed=1, chunk_size=runs))  # this setup's own program (no pool)
    t0 = time.perf_counter()
    k = summarize(simulate_runs(setup, Sampling(count=runs, seed=0, chunk_size=runs)))
    dt = time.perf_counter() - t0
    jax_rate = k["events_mean"] * runs / dt

    def python_rate(simulate):
        events, ttts, t0, seed = 0, [], time.perf_counter(), 0
        while True:
            out = simulate(setup, 4, seed)
            events += int(np.sum(out["events"]))
            ttts.extend(np.asarray(out["ttt_min"], float).tolist())
            seed += 1
            dt = time.perf_counter() - t0
            if dt >= seconds:
                return events / dt, ttts

    ref_rate, ref_ttt = python_rate(reference_runs)
    des_rate, des_ttt = python_rate(simpy_runs)

    def hours(x):
        return [float(np.mean(x)) / 60.0, float(np.std(x, ddof=1) / math.sqrt(len(x))) / 60.0]

    return {"runs_events_per_s": jax_rate, "runs_per_s": runs / dt, **compiles,
            "runs_reference_events_per_s": ref_rate,
            "runs_simpy_events_per_s": des_rate, "runs_speedup_vs_reference": jax_rate / ref_rate,
            "runs_speedup_vs_simpy": jax_rate / des_rate, "runs_kernel_runs": runs,
            "runs_setup": "spare N=64 r=3 m=4, group MTBF 3000 min, fixed 300-min repair, W=48 h, C=2, R=10, "
                          "tau=60",
            "runs_check_ttt_hours": {"jax": [k["ttt_min"] / 60.0, k["ttt_stderr_min"] / 60.0],
                                     "reference": hours(ref_ttt), "simpy": hours(des_ttt)}}


RUNS_TARGET_EVENTS_PER_S = 2.3e6  # whole runs at N = 600, r = 2, fixed 30-min repair, on 2 cores: the target


def bench_runs_600(seconds: float = 3.0, groups: int = 600, runs: int = 1024) -> dict:
    """Events/s and runs/s of the whole-run kernel at ``groups`` = 600, SPARe r = 2, a fixed 30-min repair
    (group MTBF 3,000 min, W = 10 h, C = 2, R = 10, tau = 60), after its compile, over at least ``seconds``
    of consecutive batches of ``runs`` runs; beside it the target and the same kernel's epochs with repair, which
    ``bench_repair`` measures at the same N, r and repair. Events are counted alike in both: every failure,
    rejoin, domain or job-wide event, checkpoint or restart start and end the kernel applies."""
    import dataclasses

    from ..kernels.run_driver import run_each
    from ..model.cluster import Sampling
    from ..reference.simpyrun import bench_setup

    setup = dataclasses.replace(bench_setup(groups, min(2, groups), 1), repair_time_min=30.0, work_min=600.0)
    run_each(setup, Sampling(count=runs, seed=0, chunk_size=runs))  # compile
    events, batches, t0 = 0, 0, time.perf_counter()
    while True:
        batches += 1
        out = run_each(setup, Sampling(count=runs, seed=batches, chunk_size=runs))
        events += int(out["events"].sum())
        dt = time.perf_counter() - t0
        if dt >= seconds:
            break
    return {"runs_600_events_per_s": events / dt, "runs_600_runs_per_s": batches * runs / dt,
            "runs_600_target_events_per_s": RUNS_TARGET_EVENTS_PER_S,
            "runs_600_setup": f"spare N={groups} r={setup.redundancy} m=1, group MTBF 3000 min, fixed 30-min "
                              "repair, W=10 h, C=2, R=10, tau=60"}


def bench_report(groups: int = 600, redundancy: int = 8, full: bool = False, chunk_size: int | None = None,
                 devices=None, progress: bool = False) -> Report:
    """``spare-jax bench``: every measurement of ``run_bench`` (3 s each, or 10 s and 200 SimPy trials with
    ``full``, which also counts the compiles of a 600k ``plan``, ``plan_compiles``), refused up front when N and r are out of range or a chunk does not fit the memory; a ``Report``
    whose ``to_json()`` is what ``spare-jax bench --json`` prints."""
    from ..kernels.driver import check_work_inputs
    from ..model.bounds import chunk_bytes, memory_budget_bytes
    from ..model.cluster import Sampling
    from ..model.placement import check_groups_redundancy

    check_groups_redundancy(groups, redundancy)
    check_work_inputs(groups, Sampling(1, chunk_size=chunk_size, devices=devices), groups, 16)
    if chunk_bytes(1024, groups * redundancy, 8) > memory_budget_bytes():  # the overhead kernel's chunk
        raise ValueError(f"`groups` {groups} x `redundancy` {redundancy}: the overhead kernel's "
                         "1024-trial chunk does not fit half the RAM; lower either")
    return Report(run_bench(groups, redundancy, seconds=10.0 if full else 3.0, des_trials=200 if full else 60,
                            devices=devices, chunk_size=chunk_size, progress=progress, full=full))


def run_bench(groups: int = 600, redundancy: int = 8, seconds: float = 3.0, des_trials: int = 60,
              chunk_size: int | None = None, devices=None, progress: bool = False, full: bool = False) -> dict:
    """All measurements in one run; returns the dict printed by ``spare-jax bench``. ``progress``: one line
    on stderr as each of its stages starts (12, or 13 with ``full``: the compiles of a 600k ``plan``)."""
    from ..kernels.devices import select_devices
    from ..stages import Stages

    st = Stages("bench", 13 if full else 12, progress)
    overhead_chunk = 1024
    from ..kernels.overhead import overhead_kernel
    from ..kernels.wipeout import wipeout_kernel

    pl = make_placement("stacked", groups, redundancy)
    model = FailureModel()
    devs = select_devices(devices)
    mesh = jax.sharding.Mesh(np.array(devs), ("trials",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("trials"))
    words = as_uint32_key_words(0)
    if chunk_size is None:  # the driver's choice: the chunk's working set stays in cache (8192 x 600 does not)
        from ..kernels.devices import auto_chunk

        chunk_size = auto_chunk(groups, len(devs))
    chunk_size = -(-chunk_size // len(devs)) * len(devs)

    def kernel_rate(fn, chunk, consume=None):
        """Steady-state trials/s of ``fn(ids)`` over consecutive chunks of trial ids (compiled first);
        ``consume`` sees each chunk's host result after the warm-up."""
        start = [0]

        def step(warm=False):
            ids = jax.device_put(np.arange(start[0], start[0] + chunk, dtype=np.uint32), sharding)
            out = np.asarray(fn(ids))
            start[0] += chunk
            if consume is not None and not warm:
                consume(out)
            return chunk

        step(warm=True)
        return _timed(step, seconds)[0]

    t_sums = np.zeros(3)  # n, sum T, sum T^2

    def add_t(t_count):
        t = t_count.astype(np.float64)
        t_sums[:] += (t.size, t.sum(), (t * t).sum())

    st.stage(f"wipe-out kernel, JAX (compile, then {seconds:g} s)")
    jax_rate = kernel_rate(jax.jit(lambda ids: wipeout_kernel(words, ids, pl, model)[0]), chunk_size, add_t)
    jax_mean = t_sums[1] / t_sums[0]
    jax_se = math.sqrt(max(0.0, t_sums[2] / t_sums[0] - jax_mean ** 2) / t_sums[0])
    st.stage(f"wipe-out through the chunked driver ({seconds:g} s)")
    driver = bench_driver(pl, model, jax_rate, seconds, chunk_size, devices)

    # the same kernel under a Scenario (docs/scenarios.md#real-clusters-scenarios): failure domains of 5 groups,
    # interleaved ring, job-wide failures
    from ..model.scenario import DomainLevel, Scenario
    from ..kernels.wipeout import scenario_wipeout_kernel

    scenario = Scenario(domains=(DomainLevel(min(5, groups), 50_000.0),), ring="interleaved", job_mtbf_min=2000.0)
    st.stage(f"wipe-out kernel under a scenario (compile, then {seconds:g} s)")
    scenario_rate = kernel_rate(jax.jit(lambda ids: scenario_wipeout_kernel(words, ids, pl, model, scenario)[0]),
                                chunk_size)

    rng = np.random.default_rng(1)
    np_chunk = 2048
    np_acc = []
    st.stage(f"wipe-out, vectorised NumPy ({seconds:g} s)")
    np_rate, _ = _timed(lambda: (np_acc.append(numpy_wipeout(pl, np_chunk, rng)), np_chunk)[1], seconds)
    np_t = np.concatenate(np_acc)

    st.stage(f"wipe-out, discrete-event SimPy ({des_trials} trials)")
    t0 = time.perf_counter()
    des_t = simpy_wipeout(pl, des_trials, seed=2)
    des_rate = des_trials / (time.perf_counter() - t0)

    st.stage(f"depth/overhead kernel, JAX (compile, then {seconds:g} s)")
    over_rate = kernel_rate(jax.jit(lambda ids: overhead_kernel(words, ids, pl, model,
                                                              jnp.zeros(groups + 1, jnp.float32))[0]),
                            overhead_chunk)
    st.stage(f"depth thresholds, vectorised NumPy ({seconds:g} s)")
    onp_rate, _ = _timed(lambda: (numpy_depth_thresholds(pl, 256, rng), 256)[1], seconds)
    # micro-batches (docs/microbatches.md#how-it-works): the same kernel with m = 8, capacities searched inside the
    # depth brackets
    st.stage(f"overhead kernel with 8 micro-batches (compile, then {seconds:g} s)")
    over_rate_m8 = kernel_rate(jax.jit(lambda ids: overhead_kernel(words, ids, pl, model,
                                                                 jnp.zeros(groups + 1, jnp.float32),
                                                                 microbatches=8)[0]),
                               overhead_chunk)

    def mean_se(x):
        return float(np.mean(x)), float(np.std(x) / math.sqrt(len(x)))

    # repair without a global restart (docs/repair.md#repair-without-a-global-restart): r = 2, a fixed 30-min repair
    # (at larger r the epochs with repair last thousands of events and the NumPy loop would dominate the bench)
    st.stage(f"epochs with repair against NumPy (compile, then 2 x {seconds:g} s)")
    repair = bench_repair(groups, min(2, groups), seconds=seconds)
    st.stage(f"whole training runs: kernel against the NumPy reference and SimPy (compile, then 2 x {seconds:g} s)")
    runs = bench_runs(seconds)
    st.stage(f"whole training runs at N = 600, r = 2, 30-min repair (compile, then {seconds:g} s)")
    runs.update(bench_runs_600(seconds))
    plan = {}
    if full:
        st.stage("the compiles of one plan at 600k GPUs, its own process, compilation cache off (minutes)")
        plan = plan_compiles()
    two_process_trials = int(min(4e6, max(1e5, jax_rate * 2 * seconds)))
    st.stage(f"wipe-out as 2 processes x 1 core against 1 process x 2 cores ({two_process_trials:,} trials each)")
    processes = bench_processes(groups, redundancy, trials=two_process_trials)

    from .. import theory

    exact = theory.expected_failures("stacked", groups, redundancy)
    return {
        "groups": groups, "redundancy": redundancy, "placement": "stacked",
        "wipeout_trials_per_s": jax_rate, "kernel_trials_per_s": jax_rate, **driver,
        "roofline": roofline(groups, redundancy, jax_rate, driver["driver_trials_per_s"], devs),
        "numpy_trials_per_s": np_rate, "speedup_vs_numpy": jax_rate / np_rate,
        "scenario_wipeout_trials_per_s": scenario_rate, "scenario_slowdown": jax_rate / scenario_rate,
        "scenario": scenario.describe(),
        "des_trials_per_s": des_rate, "speedup_vs_des": jax_rate / des_rate,
        "overhead_trials_per_s": over_rate, "overhead_numpy_trials_per_s": onp_rate,
        "overhead_speedup_vs_numpy": over_rate / onp_rate,
        "overhead_m8_trials_per_s": over_rate_m8, "overhead_m8_slowdown": over_rate / over_rate_m8,
        **repair, **runs, **processes, **plan,
        "check_mean_T": {"exact": exact, "jax": [jax_mean, jax_se], "numpy": list(mean_se(np_t)),
                         "simpy": list(mean_se(des_t))},
        "backend": jax.default_backend(), "devices": len(devs), "device_kind": devs[0].device_kind,
        "chunk_size": chunk_size, "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "cpu_count": cpu_count(), "jax_version": jax.__version__, "numpy_version": np.__version__,
        "seconds_per_measurement": seconds,
    }
