"""Micro-batch granularity (SPEC §10.6) and the proactive restart (§10.7) at N = 600: Omega vs r for
m = 1, 2, 4, 8, 16 against the perfect-divisibility bound, TTT vs r for SPARe(m), Rep and checkpoint-only,
and the gain of restarting voluntarily once the depth reaches D_max.

    python experiments/microbatches.py            # the full run (about 25 minutes on 2 cores)
    python experiments/microbatches.py --quick    # N = 600, m = 1, 2, 4, 8, fewer points (about 4 minutes)

Writes figures/microbatches_omega.csv, figures/microbatches_ttt.csv, figures/microbatches_restart.csv and
figures/microbatches.png.
"""
from spare_jax.suite import experiment_args, microbatches

args = experiment_args(__doc__)
if args.quick:
    microbatches(args.out, ms=(1, 2, 4, 8), rs=(2, 4, 6, 8), mc_rs=(4, 8), mc_trials=3000, ttt_rs=tuple(range(1, 9)),
                 restart_ms=(1, 4), restart_epochs=3000, seed=args.seed)
else:
    microbatches(args.out, seed=args.seed)
