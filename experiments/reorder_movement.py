"""Reorder controller along random traces: shards moved (MCMF vs from-scratch) and latency.

    python experiments/reorder_movement.py           # N=600, r in {4, 8, 16}, 5 traces; N=6000 r=16 latency
    python experiments/reorder_movement.py --quick   # 1 trace each, no N=6000

Writes figures/reorder_movement.csv, figures/reorder_latency.json, figures/reorder_solvers.csv,
figures/reorder_movement.png.
"""
from spare_jax.suite import experiment_args, reorder_movement

args = experiment_args(__doc__)
if args.quick:
    reorder_movement(args.out, traces=1, large=None, seed=args.seed, solver_compare_events=60)
else:
    reorder_movement(args.out, seed=args.seed)
