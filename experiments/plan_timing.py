"""How long the 600k plans take as commands, from nothing compiled: wall time and XLA compiles.

    PYTHONPATH=. python experiments/plan_timing.py   # about 4 minutes on 2 cores

Runs each command of docs/best_600k.md as its own process with the persistent compilation cache off (so every
program it needs is compiled, and counted through ``SPARE_JAX_COMPILE_LOG``), one after the other, and writes
figures/plan_600k_timing.json: per command its line, wall seconds, XLA compiles and their seconds, the
environment it ran with beside this one's (the first plan runs again on one JAX CPU device,
``with_repair_one_device``), and the machine's core count. Run it on a quiet machine: the wall time is what a user waits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COMMANDS = {
    "with_repair": ("plan", "--gpus", "600000", "--gpus-per-group", "1000", "--repair-time", "30", "--json"),
    "with_repair_and_batch": ("plan", "--gpus", "600000", "--gpus-per-group", "1000", "--repair-time", "30",
                              "--max-microbatches", "64", "--json"),
}
COMMANDS["with_repair_one_device"] = COMMANDS["with_repair"]
# the environment a command runs with beside this process's: the first plan again on one JAX CPU device (the
# command line's default is one per core)
ENVIRONMENTS = {"with_repair_one_device": {"SPARE_JAX_CPU_DEVICES": "1"}}


def main(argv=None) -> int:
    from spare_jax.suite.bench_compiles import plan_compiles

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "figures" / "plan_600k_timing.json"))
    ap.add_argument("--only", choices=sorted(COMMANDS), help="time one of the commands (the other's figures in --out are kept)")
    a = ap.parse_args(argv)
    out_dir = os.path.dirname(os.path.abspath(a.out))
    if not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK):  # refused before minutes of plans
        ap.error(f"--out {a.out}: cannot write there")
    record = {"command": "python experiments/plan_timing.py", "cores": os.cpu_count(), "plans": {}}
    if a.only and os.path.exists(a.out):  # one plan re-timed: the other keeps its figures
        with open(a.out, encoding="utf-8") as fh:
            record["plans"] = json.load(fh).get("plans", {})
    for name, args in COMMANDS.items():
        if a.only and name != a.only:
            continue
        extra = ENVIRONMENTS.get(name, {})
        before = {k: os.environ.get(k) for k in extra}
        os.environ.update(extra)
        try:
            seen = plan_compiles(args)
        finally:
            for k, v in before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        seen.update(environment=extra)
        record["plans"][name] = seen
        print(f"{name}: {seen['plan_wall_seconds']:.0f} s wall, {seen['plan_compiles']} compiles "
              f"({seen['plan_compile_seconds']:.0f} s): {seen['plan_command']}", flush=True)
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
