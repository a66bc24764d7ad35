"""Where the paper's numbers come from: r* ~ log2 N + 0.833 = H_N / ln 2 vs the exact longest run of failed
groups and our r*; and the TTT reduction of SPARe+CKPT vs Rep+CKPT when R, MTBF, C or the group size move.

    python experiments/paper_numbers.py           # N in {100, 600, 2000, 6000}; 12 optimize runs (~5-10 min)
    python experiments/paper_numbers.py --quick   # N in {100, 600}; R in {30, 60} only

Closed forms only (no Monte Carlo). Reads r* from figures/rstar_vs_n.csv where it has the N.
Writes figures/paper_numbers.json and figures/paper_numbers.csv.
"""
from spare_jax.suite import experiment_args, paper_numbers

args = experiment_args(__doc__)
if args.quick:
    paper_numbers(args.out, groups=(100, 600), sweeps={"restart_min": (30.0, 60.0)})
else:
    paper_numbers(args.out)
