"""Time-to-train and availability vs r for SPARe+CKPT, Rep+CKPT and CKPT at 600k GPUs, C in {1,5,10,30} min.

    python experiments/ttt_vs_r.py           # r = 1..20, ~120 MC runs per point (several minutes)
    python experiments/ttt_vs_r.py --quick   # r in {1,2,4,8,12,16,20}, C in {5}, 40 runs

Writes figures/ttt_vs_r.csv and figures/ttt_vs_r.png.
"""
from spare_jax.model.cluster import Sampling
from spare_jax.suite import experiment_args, ttt_vs_r

args = experiment_args(__doc__)
if args.quick:
    ttt_vs_r(args.out, rs=(1, 2, 4, 8, 12, 16, 20), ckpt_costs=(5.0,), sampling=Sampling(40, args.seed, progress=True))
else:
    ttt_vs_r(args.out, sampling=Sampling(120, args.seed, progress=True))
