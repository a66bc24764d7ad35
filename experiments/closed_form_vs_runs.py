"""The closed-form time-to-train against whole training runs, in chunks of runs (each its own seed) so that a
long check keeps what it has done: docs/validation.md#the-closed-form-time-to-train-against-whole-runs.

    PYTHONPATH=. python experiments/closed_form_vs_runs.py small   # N = 16, r = 3: 2,000 runs
    PYTHONPATH=. python experiments/closed_form_vs_runs.py paper   # N = 600, r = 6: 2,000 runs (hours of CPU)
    PYTHONPATH=. python experiments/closed_form_vs_runs.py pool    # no runs: pool the committed chunks (seconds)

Each chunk appends one JSON line (runs, mean, standard error, seed, seconds) to ``--out``; the summary pools
every line. `pool` runs nothing: it reads the committed chunk files figures/closed_form_vs_runs_CASE.jsonl,
evaluates the form once per case and writes figures/closed_form_vs_runs.json, which docs/validation.md quotes
(experiments/quote_numbers.py). Per case (small, paper): its inputs; `chunks`, `seeds`, `chunk_runs`,
`chunk_elapsed_s_min` and `chunk_elapsed_s_max` (the fastest and slowest chunk, seconds); the pooled
`mc_runs`, `mc_ttt_hours`, `mc_ttt_stderr_hours`; the form's `theory_ttt_hours` and `theory_method`;
`rel_gap` (form / runs - 1) and `z_form_vs_runs` ((form - runs) / s.e.: the sign of
docs/validation.md, the opposite of `z_score` elsewhere); and `by_runs`, the same pooled over the
first 1, 2, ... chunks (how the z grew with the runs).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

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


FIGURES = Path(__file__).resolve().parent.parent / "figures"


def setup(case: str) -> tuple[Cluster, Training, int]:
    """(cluster, training, r) of a case."""
    n, r, mtbf, work, ckpt, restart, tau, m = CASES[case]
    cluster = Cluster(groups=n, model=FailureModel(system_mtbf_min=mtbf * 1000.0 / 600_000.0),
                      scenario=Scenario(microbatches=m))
    training = Training(work_hours=work, ckpt_cost_min=ckpt, restart_min=restart, ckpt_interval_min=tau)
    return cluster, training, r


def pool_case(case: str, lines: list[dict]) -> dict:
    """One case's chunks pooled against the form (evaluated here, no runs)."""
    n, r, mtbf, work, ckpt, restart, tau, m = CASES[case]
    cluster, training, r = setup(case)
    form = closed_form_ttt(cluster, training, "spare", r)

    def against(part: list[dict]) -> dict:
        runs, mean, se = pooled(part)
        return {"mc_runs": runs, "mc_ttt_hours": mean, "mc_ttt_stderr_hours": se,
                "rel_gap": form["ttt_hours"] / mean - 1.0, "z_form_vs_runs": (form["ttt_hours"] - mean) / se}

    return {"scheme": "spare", "groups": n, "redundancy": r, "group_mtbf_min": mtbf, "work_hours": work,
            "ckpt_cost_min": ckpt, "restart_min": restart, "ckpt_interval_min": tau, "microbatches": m,
            "chunks": len(lines), "seeds": [x["seed"] for x in lines], "chunk_runs": [x["runs"] for x in lines],
            "chunk_elapsed_s_min": min(x["elapsed_s"] for x in lines),
            "chunk_elapsed_s_max": max(x["elapsed_s"] for x in lines),
            "theory_ttt_hours": form["ttt_hours"], "theory_method": form["method"], **against(lines),
            "by_runs": [against(lines[:k]) for k in range(1, len(lines) + 1)]}


def pool_all(figures: Path = FIGURES) -> dict:
    """Every case with a committed chunk file, pooled; written to figures/closed_form_vs_runs.json."""
    out = {}
    for case in sorted(CASES):
        path = figures / f"closed_form_vs_runs_{case}.jsonl"
        if path.is_file():
            lines = [json.loads(s) for s in path.read_text().splitlines() if s.strip()]
            out[case] = pool_case(case, lines)
            c = out[case]
            print(f"{case}: {c['mc_runs']} runs in {c['chunks']} chunks: {c['mc_ttt_hours']:.4f} +- "
                  f"{c['mc_ttt_stderr_hours']:.4f} h; form {c['theory_ttt_hours']:.4f} ({100 * c['rel_gap']:+.3f}%, "
                  f"z = {c['z_form_vs_runs']:+.2f})", flush=True)
    (figures / "closed_form_vs_runs.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=[*sorted(CASES), "pool"],
                    help="a case to run, or pool: no runs, pool the committed chunks into "
                         "figures/closed_form_vs_runs.json")
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--chunk", type=int, default=250)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.case == "pool":
        pool_all()
        return
    cluster, training, r = setup(a.case)
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
