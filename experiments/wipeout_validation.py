"""Wipe-out validation: Monte Carlo vs exact vs asymptotic E[T] for N in {600, 6000, 60000}.

    python experiments/wipeout_validation.py            # full: 1e6 trials at N=600 (a few minutes)
    python experiments/wipeout_validation.py --quick    # N=600 only, 1e5 trials

Writes figures/wipeout_validation.csv, figures/wipeout_survival_N600.csv, figures/wipeout_theory_vs_mc.png.
"""
from spare_jax.suite import experiment_args, wipeout_validation

args = experiment_args(__doc__)
if args.quick:
    wipeout_validation(args.out, groups=(600,), trials={600: 100_000}, seed=args.seed)
else:
    wipeout_validation(args.out, seed=args.seed)
