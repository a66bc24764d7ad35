"""Time-to-train at a tiny checkpoint interval costs what it costs at a normal one.

The Monte Carlo finds each run's final checkpoint by bisection and the closed form sums tiny intervals grid
cell by grid cell, so neither walks over the checkpoints (10^6 and more per run at tau = 0.001 min). This
script times ``ttt`` (library call, the same runs and seed) at tau = 1 and 0.001 min, after one untimed
call each so that compilation is not counted, and writes figures/small_tau.json.

    python experiments/small_tau.py [--runs 500] [--out figures/small_tau.json]
"""
import argparse
import json
import time

from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.training import Training
from spare_jax.ttt.answer import time_to_train
from spare_jax.ttt.config import Policy

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--runs", type=int, default=500)
parser.add_argument("--repeats", type=int, default=3)
parser.add_argument("--out", default="figures/small_tau.json")
args = parser.parse_args()

n = 16
cluster = Cluster(groups=n, model=FailureModel(system_mtbf_min=600.0 / n, reference_gpus=1000.0 * n))
rows = []
for tau in (1.0, 0.001):
    training = Training(work_hours=12.0, ckpt_cost_min=1e-6, restart_min=10.0, reference_gpus=1000.0 * n,
                        ckpt_interval_min=tau)
    call = lambda: time_to_train(cluster, training, Policy(scheme="spare", redundancy=3),  # noqa: E731
                                 Sampling(count=args.runs, seed=1)).to_json()
    call()  # compile
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - t0)
    rows.append({"ckpt_interval_min": tau, "runs": out["runs"], "seconds_best": min(times),
                 "seconds_all": times, "mc_ttt_hours": out["mc_ttt_hours"],
                 "mc_ttt_stderr_hours": out["mc_ttt_stderr_hours"], "theory_ttt_hours": out["theory_ttt_hours"]})
    print(f"tau = {tau:g} min: {min(times):.2f} s (best of {args.repeats}), TTT {out['mc_ttt_hours']:.2f} "
          f"+- {out['mc_ttt_stderr_hours']:.2f} h, closed form {out['theory_ttt_hours']:.2f} h", flush=True)
ratio = rows[1]["seconds_best"] / rows[0]["seconds_best"]
print(f"tau = 0.001 takes {ratio:.2f} x the time of tau = 1")
with open(args.out, "w") as fh:
    json.dump({"setting": "N = 16, r = 3, group MTBF 600 min, W = 12 h, C = 1e-6 min, R = 10 min",
               "rows": rows, "ratio_small_over_normal": ratio}, fh, indent=1)
    fh.write("\n")
