"""Events per second of the whole-run kernel at N = 600, for the docs to quote (docs/performance.md).

    PYTHONPATH=. python experiments/kernel_speed.py                  # ~2 min on 2 cores: figures/kernel_speed.json
    PYTHONPATH=/tmp/old python experiments/kernel_speed.py --out figures/kernel_speed_OLD.json   # another tree
    PYTHONPATH=. python experiments/kernel_speed.py --before figures/kernel_speed_OLD.json [--merge-only]

``--before FILE`` puts that tree's events/s beside each case (``events_per_s_before``, ``speedup``);
``--merge-only`` does so in the existing output without measuring again.

Each case is 1,024 whole training runs of ``reference.simpyrun.bench_setup`` (group MTBF 3,000 min, C 2, R 10,
tau 60) at N = 600 with a fixed 30-min repair and W = 10 h, in one chunk: the kernel is compiled first, then
the same runs with a new seed are timed (``kernels.run_driver.run_each``), best of ``--repeats``. A last case adds a
finite spare pool of 328 node sets (capacity 1,024, hardware repair 1,440 min, W 24 h, 300 runs), the pool the
600k planner searches. Events are the kernel's own count (every failure, rejoin, domain or job-wide event,
spare return, and the start and end of every checkpoint and restart), summed over the runs; steps/s is the
lockstep rate (the longest run's events over the time). Then the same kernel's epochs with repair (its epoch mode): events/s at the same N, r and
repair (``repair``; this tree only). Like the command line, it runs on one JAX CPU device per core
(``SPARE_JAX_CPU_DEVICES=1``: on one, ``devices`` in the output).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = [  # (key, name, scheme, r, m, extra RunSetup fields, runs, W minutes)
    ("elastic", "elastic rebalance, m = 1", "elastic", 1, 1, {}, 1024, 600.0),
    ("spare_r2", "SPARe r = 2, m = 1", "spare", 2, 1, {}, 1024, 600.0),
    ("spare_r5_m8", "SPARe r = 5, m = 8", "spare", 5, 8, {}, 1024, 600.0),
    ("rep_r2", "rep r = 2", "rep", 2, 1, {}, 1024, 600.0),
    ("spare_r5_m8_pool", "SPARe r = 5, m = 8, 328 spares, H = 1,440 min", "spare", 5, 8,
     {"spares": 328, "hardware_repair_min": 1440.0}, 300, 1440.0),
]


def measure(repeats: int) -> list:
    from spare_jax.kernels.run_driver import run_each
    from spare_jax.model.cluster import Sampling
    from spare_jax.reference.simpyrun import bench_setup

    rows = []
    for key, name, scheme, r, m, extra, runs, work in CASES:
        setup = dataclasses.replace(bench_setup(600, r, m), scheme=scheme, repair_time_min=30.0, work_min=work,
                                    **extra)
        capacity = 1024 if extra else None
        t0 = time.perf_counter()
        run_each(setup, Sampling(count=runs, seed=0, chunk_size=runs), capacity=capacity)
        first = time.perf_counter() - t0
        best = None
        for seed in range(1, repeats + 1):
            t0 = time.perf_counter()
            out = run_each(setup, Sampling(count=runs, seed=seed, chunk_size=runs), capacity=capacity)
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        rows.append({"key": key, "case": name, "runs": runs, "work_hours": work / 60.0,
                     "events_per_run": float(out["events"].mean()), "events_per_s": float(out["events"].sum()) / best,
                     "steps_per_s": float(out["events"].max()) / best, "first_call_s": first, "seconds": best})
        print(f"{name}: {rows[-1]['events_per_s']:,.0f} events/s (first call {first:.1f} s)", flush=True)
    return rows


def measure_repair(seconds: float = 5.0) -> dict:
    """The event kernel's epochs with repair at the same N, r and repair (``suite.bench.bench_repair``: epochs of 4,096 through the
    driver on every device, to the first wipe-out), for the epoch-mode target beside the whole runs'."""
    from spare_jax.suite.bench import bench_repair

    out = bench_repair(600, 2, 30.0, seconds=seconds)
    print(f"repair epochs: {out['repair_events_per_s']:,.0f} events/s", flush=True)
    return {"events_per_s": out["repair_events_per_s"], "numpy_events_per_s": out["repair_numpy_events_per_s"],
            "uptime_min": out["repair_check_uptime_min"]}


def with_before(record: dict, before_path: str) -> dict:
    """``record`` with each case's events/s from ``before_path`` (same cases) and the speed-up beside it."""
    before = json.loads(Path(before_path).read_text())
    old = {c["key"]: c for c in before["cases"]}
    missing = [c["key"] for c in record["cases"] if c["key"] not in old]
    if missing:
        raise SystemExit(f"kernel_speed: {before_path} lacks the cases {missing}")
    for case in record["cases"]:
        case["events_per_s_before"] = old[case["key"]]["events_per_s"]
        case["speedup"] = case["events_per_s"] / case["events_per_s_before"]
    record["before_commit"] = before.get("commit")
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "figures" / "kernel_speed.json"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", default=None, help="another tree's output of this script, put beside")
    parser.add_argument("--merge-only", action="store_true", help="with --before: no new measurement")
    args = parser.parse_args()
    if args.merge_only:
        if args.before is None:
            parser.error("--merge-only needs --before")
        record = json.loads(Path(args.out).read_text())
        Path(args.out).write_text(json.dumps(with_before(record, args.before), indent=1) + "\n")
        print(f"wrote {args.out}")
        return
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    import jax

    import spare_jax

    try:  # as the command line: one CPU device per core (SPARE_JAX_CPU_DEVICES=1: one)
        from spare_jax.kernels.cpu_devices import use_cpu_cores
    except ImportError:  # a tree from before it (--before): JAX's one CPU device, whole runs only
        current = False
    else:
        current = True
        use_cpu_cores()

    tree = os.path.dirname(os.path.dirname(os.path.abspath(spare_jax.__file__)))
    commit = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or None
    dirty = bool(subprocess.run(["git", "-C", tree, "status", "--porcelain", "spare_jax"], capture_output=True,
                                text=True).stdout.strip())
    record = {"commit": commit, "uncommitted_changes": dirty, "cpu_count": os.cpu_count(),
              "machine": platform.machine(), "jax_version": jax.__version__, "devices": len(jax.devices()),
              "cases": measure(args.repeats)}
    if current:
        record["repair"] = measure_repair()
    if args.before is not None:
        record = with_before(record, args.before)
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
