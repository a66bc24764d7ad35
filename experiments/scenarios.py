"""Real clusters (SPEC §10): ring order against failure domains (E[epoch uptime] vs r, Monte Carlo) and
job-wide interruptions against r* and SPARe's advantage over replication (closed form).

    python experiments/scenarios.py            # N = 600, 50,000 epochs per point
    python experiments/scenarios.py --quick    # 5,000 epochs per point, fewer r

Writes figures/scenarios_uptime.csv, figures/scenarios_job_wide.csv and figures/scenarios.png.
"""
from spare_jax.model.cluster import Sampling
from spare_jax.suite import experiment_args, scenarios

args = experiment_args(__doc__)
if args.quick:
    scenarios(args.out, rs=(2, 4, 8), sampling=Sampling(5000, args.seed, progress=True), job_fractions=(0.0, 0.3))
else:
    scenarios(args.out, sampling=Sampling(50_000, args.seed, progress=True))
