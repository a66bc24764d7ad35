"""Acceptance reference numbers for the repair model (SPEC §10.5), from tests/reference_repair.py.

N = 600 groups, group MTBF 3000 min, stacked placement, contiguous ring, unlimited spares, no domains,
no job-wide failures:
  a: r = 2, fixed 30-min repair
  b: r = 2, exponential repair, mean 30 min
  c: r = 3, fixed 60-min repair
For each case: mean epoch uptime (minutes) and mean failures per epoch, with standard errors, the epoch
count and the seed.  Run one case at a time (each about 2 minutes on one core); results are merged into
tests/data/repair_reference.json:

    python tests/data/make_repair_reference.py --case a
    python tests/data/make_repair_reference.py --case b
    python tests/data/make_repair_reference.py --case c
"""

import argparse
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

import reference_repair as rr  # noqa: E402

OUT = os.path.join(HERE, "repair_reference.json")
N = 600
GROUP_MTBF = 3000.0
CASES = {
    "a": {"r": 2, "repair_law": "fixed", "repair_time_min": 30.0, "epochs": 180000, "seed": 6001},
    "b": {"r": 2, "repair_law": "exp", "repair_time_min": 30.0, "epochs": 160000, "seed": 6002},
    "c": {"r": 3, "repair_law": "fixed", "repair_time_min": 60.0, "epochs": 30000, "seed": 6003},
}


def run_case(name, epochs=None):
    c = dict(CASES[name])
    if epochs is not None:
        c["epochs"] = int(epochs)
    t0 = time.time()
    out = rr.simulate_repair_epochs(N, c["r"], c["epochs"], c["seed"], group_mtbf_min=GROUP_MTBF,
                                    repair_time_min=c["repair_time_min"],
                                    repair_law=c["repair_law"], placement="stacked", ring=None)
    wall = time.time() - t0
    assert not out["censored"].any() and not out["ended_by_job"].any()
    mu, su = rr.mean_se(out["uptime"])
    mf, sf = rr.mean_se(out["failures"])
    fo = rr.first_order_repair(N, c["r"], GROUP_MTBF, c["repair_time_min"], "stacked", c["repair_law"])
    return {
        "N": N, "r": c["r"], "group_mtbf_min": GROUP_MTBF, "placement": "stacked",
        "ring": "contiguous", "repair_law": c["repair_law"], "repair_time_min": c["repair_time_min"],
        "spares": None, "domain_levels": [], "job_mtbf_min": None,
        "epochs": c["epochs"], "seed": c["seed"],
        "rng": "numpy.random.default_rng(seed), one stream for all epochs of the case",
        "mean_uptime_min": mu, "se_uptime_min": su,
        "mean_failures": mf, "se_failures": sf,
        "sd_uptime_min": float(np.std(out["uptime"], ddof=1)),
        "sd_failures": float(np.std(out["failures"], ddof=1)),
        "first_order_orientation": fo,
        "wall_s": round(wall, 1),
        "command": f"python tests/data/make_repair_reference.py --case {name}"
                   + ("" if epochs is None else f" --epochs {epochs}"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES), action="append",
                    help="case(s) to run (default: all, one after another)")
    ap.add_argument("--epochs", type=int, default=None, help="override the epoch count")
    args = ap.parse_args()
    data = {}
    if os.path.exists(OUT):
        with open(OUT) as f:
            data = json.load(f)
    data["description"] = (
        "Independent reference (tests/reference_repair.py, plain NumPy, no JAX) for SPEC §10.5 repair "
        "without a global restart: epoch from all-up to the first instant all r holders of a shard are "
        "down; uptime in minutes, failures = group failures in the epoch incl. the fatal one. "
        "Unlimited spares, no domains, no job-wide failures.")
    data["generator"] = "tests/data/make_repair_reference.py"
    data["python"] = platform.python_version()
    data["numpy"] = np.__version__
    data.setdefault("cases", {})
    for name in args.case or sorted(CASES):
        res = run_case(name, args.epochs)
        data["cases"][name] = res
        data["commands"] = [data["cases"][k]["command"] for k in sorted(data["cases"])]
        print(name, json.dumps(res), flush=True)
        with open(OUT, "w") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
