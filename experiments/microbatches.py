"""Micro-batch granularity (SPEC §10.6) and the proactive restart (§10.7) at N = 600: Omega vs r for
m = 1, 2, 4, 8, 16 against the perfect-divisibility bound, TTT vs r for SPARe(m), Rep and checkpoint-only,
and the gain of restarting voluntarily once the depth reaches D_max.

    python experiments/microbatches.py            # the full run (about 25 minutes on 2 cores)
    python experiments/microbatches.py --quick    # N = 600, m = 1, 2, 4, 8, fewer points (about 4 minutes)

Writes figures/microbatches_omega.csv, figures/microbatches_ttt.csv, figures/microbatches_restart.csv and
figures/microbatches.png.
"""
from spare_jax.model.cluster import Sampling
from spare_jax.suite import experiment_args, microbatches
from spare_jax.suite.microbatches import RestartSweep

args = experiment_args(__doc__)
if args.quick:
    microbatches(args.out, ms=(1, 2, 4, 8), rs=(2, 4, 6, 8), mc_rs=(4, 8), sampling=Sampling(3000, args.seed),
                 ttt_rs=tuple(range(1, 9)), restarts=RestartSweep(ms=(1, 4), epochs=3000))
else:
    microbatches(args.out, sampling=Sampling(20_000, args.seed))
