"""Benchmark: JAX kernels vs vectorised NumPy vs a SimPy discrete-event simulation, one run, one machine.

    python experiments/bench.py [--full] [--out figures/bench.json]
"""
import argparse
import json

from spare_jax.suite.bench import run_bench

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--full", action="store_true")
parser.add_argument("--chunk-size", type=int, default=None)
parser.add_argument("--out", default=None)
args = parser.parse_args()
result = run_bench(seconds=10.0 if args.full else 3.0, des_trials=200 if args.full else 60,
                   chunk_size=args.chunk_size, full=args.full)
text = json.dumps(result, indent=1)
print(text)
if args.out:
    with open(args.out, "w") as fh:
        fh.write(text + "\n")
