"""The closed-form time-to-train against whole training runs, in chunks of runs (each its own seed) so that a
long check keeps what it has done: docs/validation.md#the-closed-form-time-to-train-against-whole-runs.

    PYTHONPATH=. python experiments/closed_form_vs_runs.py small   # N = 16, r = 3: 2,000 runs
    PYTHONPATH=. python experiments/closed_form_vs_runs.py paper   # N = 600, r = 6: 2,000 runs (hours of CPU)

Each chunk appends one JSON line (runs, mean, standard error) to ``--out``; the summary pools every line.
"""

from __future__ import annotations

import argparse
import json
import math
import time

from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training
from spare_jax.ttt.config import Policy
from spare_jax.ttt.exact import closed_form_ttt
from spare_jax.ttt.runs import whole_run_ttt

CASES = {
    # name: (N, r, group MTBF min, W h, C, R, tau, micro-batches)
    "small": (16, 3, 200.0, 48.0, 2.0, 10.0, 60.0, 1),
    "small_m4": (16, 3, 200.0, 48.0, 2.0, 10.0, 60.0, 4),
    "paper": (600, 6, 3000.0, 720.0, 5.0, 60.0, 119.0, 1),
}


def pooled(lines: list[dict]) -> tuple[int, float, float]:
    """(runs, mean, standard error) of chunks of runs pooled."""
    n = sum(x["runs"] for x in lines)
    mean = sum(x["runs"] * x["mean"] for x in lines) / n
    # within-chunk variances (s.e.^2 * runs * (runs - 1)) plus the spread of the chunk means
    ss = sum(x["se"] ** 2 * x["runs"] * (x["runs"] - 1) + x["runs"] * (x["mean"] - mean) ** 2 for x in lines)
    return n, mean, math.sqrt(ss / (n - 1) / n)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--chunk", type=int, default=250)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    n, r, mtbf, work, ckpt, restart, tau, m = CASES[a.case]
    cluster = Cluster(groups=n, model=FailureModel(system_mtbf_min=mtbf * 1000.0 / 600_000.0),
                      scenario=Scenario(microbatches=m))
    training = Training(work_hours=work, ckpt_cost_min=ckpt, restart_min=restart, ckpt_interval_min=tau)
    out = a.out or f"closed_form_vs_runs_{a.case}.jsonl"
    form = closed_form_ttt(cluster, training, "spare", r)
    print(f"{a.case}: form {form['ttt_hours']:.4f} h ({form['method']})", flush=True)
    lines = []
    for i, start in enumerate(range(0, a.runs, a.chunk)):
        t0 = time.perf_counter()
        count = min(a.chunk, a.runs - start)
        rep = whole_run_ttt(cluster, training, Policy(scheme="spare", redundancy=r),
                            Sampling(count=count, seed=a.seed + i)).to_json()
        line = {"runs": rep["runs"], "mean": rep["mc_ttt_hours"], "se": rep["mc_ttt_stderr_hours"],
                "seed": a.seed + i, "elapsed_s": time.perf_counter() - t0}
        lines.append(line)
        with open(out, "a") as f:
            f.write(json.dumps(line) + "\n")
        runs, mean, se = pooled(lines)
        z = (form["ttt_hours"] - mean) / se
        print(f"{runs} runs: {mean:.4f} +- {se:.4f} h; form {form['ttt_hours']:.4f} "
              f"({100 * (form['ttt_hours'] / mean - 1):+.3f}%, z = {z:+.2f})", flush=True)


if __name__ == "__main__":
    main()
