"""What ``bench`` counts of the XLA compiles (docs/performance.md#spare-jax-bench): those of one
``spare-jax plan`` at 600k GPUs in a process of its own (``plan_compiles``) and those of the whole-run kernel,
first call and calls that change only a cost (``runs_compiles``, ``CHANGED_COSTS``)."""

from __future__ import annotations

PLAN_600K = ("plan", "--gpus", "600000", "--gpus-per-group", "1000", "--repair-time", "30", "--json", "--quiet")


def plan_compiles(args=PLAN_600K) -> dict:
    """The XLA compiles (and their seconds) of one ``spare-jax plan`` (default ``PLAN_600K``: 600k GPUs in
    groups of 1,000, a 30-min repair), run as its own process with the persistent compilation cache off, so
    that every compile it needs is made and counted (``SPARE_JAX_COMPILE_LOG``); also its lowerings and wall
    time. Minutes on 2 cores: ``bench --full`` only."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "compiles.json")
        env = dict(os.environ, SPARE_JAX_COMPILE_CACHE="off", SPARE_JAX_COMPILE_LOG=log)
        done = subprocess.run([sys.executable, "-m", "spare_jax", *args], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if done.returncode != 0 or not os.path.exists(log):
            raise RuntimeError(f"`spare-jax {' '.join(args)}` failed (exit {done.returncode}): "
                               f"{done.stderr.strip().splitlines()[-1:] or ''}")
        with open(log, encoding="utf-8") as fh:
            seen = json.load(fh)
    if seen["compile_cache"] is not None:  # a cache hit would hide a compile: the count would be too low
        raise RuntimeError(f"`spare-jax {' '.join(args)}` ran with the compilation cache {seen['compile_cache']}, "
                           "not off: its compiles are not all counted")
    return {"plan_command": "spare-jax " + " ".join(a for a in args if a not in ("--json", "--quiet")),
            "plan_compiles": seen["compiles"], "plan_compile_seconds": seen["compile_seconds"],
            "plan_lowerings": seen["lowerings"], "plan_wall_seconds": seen["wall_seconds"]}


CHANGED_COSTS = {"ckpt_cost_min": 3.0, "restart_min": 11.0, "repair_time_min": 301.0, "ckpt_interval_min": 45.0,
                 "failure_stall_min": 1.0, "rejoin_stall_min": 0.5, "spares": 3, "hardware_repair_min": 301.0,
                 "redundancy": 5, "microbatches": 8}


def runs_compiles(setup, sampling) -> dict:
    """What the whole-run kernel compiles, counted through ``jax.monitoring`` with the persistent compilation
    cache off (a cache hit would hide a compile): the first call's XLA compiles and their seconds, then the
    compiles and lowerings of calls that change only a cost (``CHANGED_COSTS``: C, R, D, tau, the stalls, the
    spare pool's K and H, SPARe's r and m; the setup gets a pool of 2 spares if it has none), which must be 0 (a lowering would show a program rebuilt for a number even where a cache serves it)."""
    import dataclasses

    import jax

    from ..kernels.compiles import count_compiles
    from ..kernels.run_driver import simulate_runs

    if setup.spares is None:  # K and H are numbers of a finite pool: the calls run one (2 spares, H = 300 min)
        setup = dataclasses.replace(setup, spares=2, hardware_repair_min=300.0)
    cached = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        with count_compiles() as first:
            simulate_runs(setup, sampling)
        with count_compiles() as changed:
            for name, value in CHANGED_COSTS.items():
                simulate_runs(dataclasses.replace(setup, **{name: value}), sampling)
    finally:
        jax.config.update("jax_enable_compilation_cache", cached)
    return {"runs_compiles_first_call": first.compiles, "runs_compile_seconds": first.seconds,
            "runs_compiles_changed_costs": changed.compiles + changed.lowerings,
            "runs_changed_costs": sorted(CHANGED_COSTS)}
