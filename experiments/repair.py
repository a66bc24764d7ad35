"""Repair without a global restart (SPEC §10.5): time to wipe-out vs repair time D for r = 2..8 at N = 600,
and r*, TTT, SPARe's reduction vs the best Rep vs D.

    python experiments/repair.py           # D = 1 .. 10^4 min and never, 64 epochs per MC point; (b) at
                                           # N = 600, W = 720 h, r <= 6, 64 epochs per pool (epochs cut at
                                           # r_max W, longer than any run at r <= r_max)
    python experiments/repair.py --quick   # fewer D, 24 epochs per point, (b) at N = 48 with small pools

Writes figures/repair_wipeout.csv, figures/repair_ttt.csv and figures/repair.png.
"""
from spare_jax.model.cluster import Sampling
from spare_jax.suite import experiment_args
from spare_jax.suite.repair import RepairOptimum, repair_experiment

args = experiment_args(__doc__)
if args.quick:
    repair_experiment(args.out, ds=(1.0, 10.0, 30.0, 100.0, 1000.0, 10_000.0), sampling=Sampling(24, args.seed),
                      mc_cap_hours=60.0, optimum=RepairOptimum(48, (30.0, 1000.0), r_max=4, epochs=200,
                                                               work_hours=48.0))
else:
    repair_experiment(args.out, sampling=Sampling(64, args.seed))
