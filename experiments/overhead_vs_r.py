"""Overhead vs redundancy: SPARe (MC and queue-DP theory) against replication, N = 600 and 6000.

    python experiments/overhead_vs_r.py           # full (a few minutes)
    python experiments/overhead_vs_r.py --quick   # N = 600, r in 2..20 step 2, 2000 trials

Writes figures/overhead_vs_r.csv, figures/depth_at_wipeout.csv, figures/overhead_vs_r.png.
"""
from spare_jax.suite import experiment_args, overhead_vs_r

args = experiment_args(__doc__)
if args.quick:
    overhead_vs_r(args.out, groups=(600,), rs=tuple(range(2, 21, 2)), trials={600: 2000}, seed=args.seed)
else:
    overhead_vs_r(args.out, seed=args.seed)
