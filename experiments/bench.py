"""Benchmark: JAX kernels vs vectorised NumPy vs a SimPy discrete-event simulation, one run, one machine.

    python experiments/bench.py [--full] [--out figures/bench.json]

What ``spare-jax bench`` measures, with its compiles counted with the persistent cache off
(``SPARE_JAX_COMPILE_CACHE=off``, as figures/bench.json was written).
"""
import argparse
import json

from spare_jax.kernels.cpu_devices import use_cpu_cores
from spare_jax.suite.bench import run_bench

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--full", action="store_true")
parser.add_argument("--chunk-size", type=int, default=None)
parser.add_argument("--out", default=None)
args = parser.parse_args()
use_cpu_cores()  # as the command line: one CPU device per core (SPARE_JAX_CPU_DEVICES=1: one)
result = run_bench(seconds=10.0 if args.full else 3.0, des_trials=200 if args.full else 60,
                   chunk_size=args.chunk_size, full=args.full)
text = json.dumps(result, indent=1)
print(text)
if args.out:
    with open(args.out, "w") as fh:
        fh.write(text + "\n")
