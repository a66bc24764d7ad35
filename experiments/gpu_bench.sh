#!/usr/bin/env bash
# The one script to run on an accelerator (about 5 minutes): throughput and a large-N run, JSON under OUTDIR.
#   bash experiments/gpu_bench.sh OUTDIR
set -euo pipefail
out="${1:?usage: gpu_bench.sh OUTDIR}"
mkdir -p "$out"
PY="${PYTHON:-python3}"
"$PY" -c "import jax; print(jax.devices())" | tee "$out/devices.txt"
# throughput with large chunks (the GPU needs many trials in flight)
"$PY" experiments/bench.py --chunk-size 1048576 --out "$out/bench.json"
# N = 600, r = 8: 10^8 trials through the full driver
"$PY" -m spare_jax wipeout -N 600 -r 8 --trials 100000000 --chunk-size 1048576 --json --quiet > "$out/wipeout_N600_r8.json"
# scale: N = 60,000, r = 20
"$PY" -m spare_jax wipeout -N 60000 -r 20 --trials 200000 --json --quiet > "$out/wipeout_N60000_r20.json"
"$PY" -m spare_jax overhead -N 600 -r 20 --trials 200000 --json --quiet > "$out/overhead_N600_r20.json"
echo "written: $out"
