"""Time-to-train and availability vs r for SPARe+CKPT, Rep+CKPT and CKPT at 600k GPUs, C in {1,5,10,30} min.

    python experiments/ttt_vs_r.py           # r = 1..20, ~120 MC runs per point (several minutes)
    python experiments/ttt_vs_r.py --quick   # r in {1,2,4,8,12,16,20}, C in {5}, 40 runs

Writes figures/ttt_vs_r.csv and figures/ttt_vs_r.png.
"""
import argparse

from spare_jax.suite import ttt_vs_r

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--out", default="figures")
parser.add_argument("--quick", action="store_true")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
if args.quick:
    ttt_vs_r(args.out, rs=(1, 2, 4, 8, 12, 16, 20), ckpt_costs=(5.0,), runs=40, seed=args.seed)
else:
    ttt_vs_r(args.out, seed=args.seed)
