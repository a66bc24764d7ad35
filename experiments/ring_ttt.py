"""Time-to-train vs r for the contiguous, interleaved and searched ring orders under failure domains (with and
without job-wide interruptions), and r* and SPARe's advantage vs the job-wide share on the cluster-100k preset.

    python experiments/ring_ttt.py            # N = 600, 20,000 epochs per point, 100 search steps per r
    python experiments/ring_ttt.py --quick    # N = 120, 3,000 epochs, 20 search steps, r in 2, 4, 6
    python experiments/ring_ttt.py --replot   # redraw the figure from the CSVs

Writes figures/ring_ttt.csv, figures/ring_ttt_job_share.csv and figures/ring_ttt.png.
"""
import sys

from spare_jax.model.cluster import Sampling
from spare_jax.rectlr.place import RingSearch
from spare_jax.suite import experiment_args, ring_ttt
from spare_jax.suite.rings import JobShareSweep, replot_ring_ttt

replot = "--replot" in sys.argv
if replot:
    sys.argv.remove("--replot")
args = experiment_args(__doc__)
if replot:
    replot_ring_ttt(args.out)
elif args.quick:
    ring_ttt(args.out, groups=120, rs=(2, 4, 6), sampling=Sampling(3000, args.seed, progress=True),
             search=RingSearch(steps=20), job_shares=JobShareSweep(shares=(0.0, 0.3)))
else:
    ring_ttt(args.out, sampling=Sampling(20_000, args.seed, progress=True))
