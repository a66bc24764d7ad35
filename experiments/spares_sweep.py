"""How many spares to buy: time-to-train and total cost against the spare pool size K, per scheme, with the K
that ``plan --spares auto`` chooses (the cheapest pool whose runs' longest wait for a spare exceeds the allowed
wait in at most 1% of runs, by the Clopper-Pearson 95% upper bound) and ByteRobust's P99 binomial pool beside it.

    python experiments/spares_sweep.py            # docs/planning.md's 32k-GPU cluster: about an hour on 2 busy cores
    python experiments/spares_sweep.py --quick    # 2,048 GPUs, W = 12 h, spare only at r = 2, m = 1: a few minutes
    python experiments/spares_sweep.py --redraw   # only the figure, from the committed figures/spares_sweep.json
    python experiments/spares_sweep.py --from-plan figures/spares_600k.json   # the figure of a `plan --json` file

The last form draws the figure of any `spare-jax plan --spares auto ... --json` output (its ``spare_pool``
object) beside it, with the same name and .png: figures/spares_600k.png is ``spare-jax plan --gpus 600000
--gpus-per-group 1000 --repair-time 30 --spares auto --hardware-repair 1440 --no-sensitivity --json``.

The defaults are the command ``spare-jax plan --gpus 32768 --gpus-per-node 8 --gpus-per-group 256
--node-mtbf-hours 50000 --restart 20 --ckpt-cost 2 --work-hours 720 --spares auto --hardware-repair 1440
--repair-time 30`` through the library (``planner.plan.plan`` with ``planner.spares.SpareAuto``). Writes
figures/spares_sweep.png (``planner.spares.figure_spares``), figures/spares_sweep.csv (one row per scheme and K
evaluated) and figures/spares_sweep.json (the plan's ``spare_pool`` object and each scheme's configuration and
pool keys), and prints the pool's table.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from spare_jax.model.repair import Repair  # noqa: E402
from spare_jax.planner import plan as planmod  # noqa: E402
from spare_jax.planner.spares import SpareAuto, figure_spares, spares_text  # noqa: E402
from spare_jax.ttt.search import SearchSpace  # noqa: E402

FIGURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "figures")


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small cluster, spare only (a few minutes)")
    ap.add_argument("--hardware-repair", type=float, default=1440.0, help="H, minutes (default 1440)")
    ap.add_argument("--repair-time", type=float, default=30.0, help="D, the swap, minutes (default 30)")
    ap.add_argument("--max-spare-wait", type=float, default=60.0, help="minutes (default 60)")
    ap.add_argument("--spare-runs", type=int, default=300, help="whole runs per K (default 300)")
    ap.add_argument("--out", default=FIGURES, help="directory of the outputs (default figures/)")
    ap.add_argument("--redraw", action="store_true", help="only redraw the figure from spares_sweep.json in --out")
    ap.add_argument("--from-plan", metavar="FILE", help="only draw FILE.png from a `plan --spares auto --json` file")
    args = ap.parse_args(argv)
    if args.from_plan:
        with open(args.from_plan) as fh:
            block = json.load(fh)["spare_pool"]
        _draw(block, os.path.splitext(args.from_plan)[0] + ".png")
        return block
    if args.redraw:
        with open(os.path.join(args.out, "spares_sweep.json")) as fh:
            block = json.load(fh)["spare_pool"]
        _draw(block, os.path.join(args.out, "spares_sweep.png"))
        return block
    auto = SpareAuto(args.hardware_repair, args.max_spare_wait, args.spare_runs)
    if args.quick:
        fleet = planmod.Fleet(gpus=2048, gpus_per_group=256, gpu_mtbf_hours=2560.0, repair=Repair(args.repair_time))
        costs = planmod.Costs(10.0, 2.0, 12.0)
        options = planmod.PlanOptions(runs=32, sensitivity=False, schemes=("spare",), spares_auto=auto,
                                      search=SearchSpace(redundancies=(2,), microbatches=(1,), restart_depths=()))
    else:
        fleet = planmod.Fleet(gpus=32768, gpus_per_group=256, node_mtbf_hours=50_000.0, gpus_per_node=8,
                              repair=Repair(args.repair_time))
        costs = planmod.Costs(20.0, 2.0, 720.0)
        options = planmod.PlanOptions(sensitivity=False, spares_auto=auto,
                                      search=planmod.policy_search(None, None, fleet.repair)[0])
    t0 = time.perf_counter()
    result = planmod.plan(fleet, costs, options, progress=True)
    elapsed = time.perf_counter() - t0
    block = result.spares
    os.makedirs(args.out, exist_ok=True)
    _draw(block, os.path.join(args.out, "spares_sweep.png"))
    with open(os.path.join(args.out, "spares_sweep.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["scheme", "spares", "ttt_hours", "ttt_stderr_hours", "cost", "spare_wait_p_exceed",
                    "spare_wait_p_upper95", "meets_wait"])
        for s, sw in block["sweeps"].items():
            for p in sw["points"]:
                w.writerow([s, p["spares"], p["ttt_hours"], p["ttt_stderr_hours"], p["cost"],
                            p["spare_wait_p_exceed"], p["spare_wait_p_upper95"], p["meets_wait"]])
    with open(os.path.join(args.out, "spares_sweep.json"), "w") as fh:
        keys = ("r_star", "microbatches", "ckpt_interval_min", "spares_chosen", "spares_cost", "spares_ttt_hours",
                "spare_wait_p_exceed", "spare_wait_p_upper95", "spare_wait_runs", "spares_within_1pct_of_unlimited")
        json.dump({"spare_pool": block, "schemes": {s: {k: e.get(k) for k in keys} for s, e in result.schemes.items()},
                   "elapsed_s": elapsed, "notes": result.notes}, fh, indent=1)
    print(spares_text(block))
    print(f"({elapsed:.0f} s)")
    return block


def _draw(block: dict, path: str) -> None:
    fig = figure_spares(block)
    if fig is not None:
        fig.tight_layout()
        fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
