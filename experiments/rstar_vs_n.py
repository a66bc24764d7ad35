"""Optimal redundancy r* and the TTT reduction vs N (100 .. 100,000 groups), against r* ~ log2 N + 0.833.

    python experiments/rstar_vs_n.py           # N in {100, 200, 600, 2000, 6000, 20000, 100000}
    python experiments/rstar_vs_n.py --quick   # N in {100, 600, 6000}

Writes figures/rstar_vs_n.csv and figures/rstar_vs_n.png.
"""
from spare_jax.suite import experiment_args, rstar_vs_n

args = experiment_args(__doc__)
rstar_vs_n(args.out, groups=(100, 600, 6000) if args.quick else (100, 200, 600, 2000, 6000, 20000, 100000))
