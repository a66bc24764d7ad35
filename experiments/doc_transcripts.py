"""The commands the README and the docs show, run for real with `--json`: what each printed, how long it took,
on which machine and at which commit, for the pages to quote (experiments/quote_numbers.py).

    PYTHONPATH=. python experiments/doc_transcripts.py            # every command below, one after the other
    PYTHONPATH=. python experiments/doc_transcripts.py run plan_32k   # only these
    python experiments/doc_transcripts.py --list                  # the names and their commands

Each command runs once, as `python -m spare_jax ARGS --json`, in a fresh temporary directory (so that `run`'s
results/ and a `--report` file land there, not in the checkout), and writes figures/transcripts/NAME.json:

* `command`: the command as the docs show it (`spare-jax ...`, without `--json`), `argv`;
* `wall_seconds`: the wall-clock time of the whole command, from the start of the process to its exit (the
  Python start and every compile included: what a user waits for);
* `machine`: CPUs, platform, Python and JAX versions, the 1-minute load average before and after (a busy
  machine runs slower: the pages say "on 2 busy cores" where the load was above the CPU count), and the
  `SPARE_JAX_*` environment;
* `commit`: `git rev-parse HEAD` of the checkout that ran it, `commit_dirty` whether a file of the package
  (spare_jax/, pyproject.toml) differed from it, and `date_utc`;
* `output`: the JSON object the command printed.

A page quotes a number as `<!-- q: transcripts/ttt.json output.mc_ttt_hours {:,.0f} -->1,762` and a time as
`<!-- q: transcripts/ttt.json wall_seconds {:.0f} -->58 s`. The commands are minutes each on 2 cores (the
plans at 98k, 262k and 600k GPUs and `run` the longest): run this once after a change that moves what they
print, then `python experiments/quote_numbers.py`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "figures" / "transcripts"

# name -> the command's words after `spare-jax`, as the page that quotes it shows them
COMMANDS = {
    # README and docs/index.md: `make run` is `spare-jax run`
    "run": ["run"],
    # docs/tutorial.md, in its order
    "wipeout": ["wipeout", "-N", "600", "-r", "8", "--trials", "1000000"],
    "overhead": ["overhead", "-N", "600", "-r", "20", "--epochs", "20000"],
    "optimize": ["optimize"],
    "ttt": ["ttt", "--scheme", "spare", "-r", "6", "--runs", "200"],
    "reorder": ["reorder", "-N", "600", "-r", "8", "--failed", "3,17,4"],
    "optimize_llama3": ["optimize", "--preset", "llama3-16k", "--ring", "interleaved"],
    # README's first plan (docs/planning.md's transcript is experiments/planning_example.py's)
    "plan_262k": ["plan", "--gpus", "262144", "--gpus-per-group", "1024", "--gpu-mtbf-hours", "50000",
                  "--restart", "60", "--ckpt-cost", "5", "--work-hours", "720", "--deadline-hours", "2000"],
    # docs/planning.md
    "plan_default": ["plan", "--deadline-hours", "1800"],
    "plan_default_m4": ["plan", "--microbatches", "4", "--no-sensitivity"],
    "plan_32k": ["plan", "--gpus", "32768", "--gpus-per-node", "8", "--gpus-per-group", "256", "--node-mtbf-hours",
                 "50000", "--restart", "20", "--ckpt-cost", "2", "--work-hours", "720"],
    "plan_paper_600k": ["plan", "--preset", "paper-600k", "--no-sensitivity"],
    "plan_llama3": ["plan", "--preset", "llama3-16k", "--report", "plan.html"],
}


def _git(*words: str) -> str:
    done = subprocess.run(["git", *words], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip()


def commit_of_checkout() -> tuple[str, bool]:
    """HEAD, and whether a file of the package (spare_jax/, pyproject.toml) differs from it: the code that ran
    is then not the commit's (the docs and tests may change while the commands run)."""
    changed = [ln[3:] for ln in _git("status", "--porcelain", "--", "spare_jax", "pyproject.toml").splitlines()]
    return _git("rev-parse", "HEAD"), bool(changed)


def machine() -> dict:
    import jax

    return {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.machine(),
            "python": platform.python_version(), "jax": jax.__version__,
            "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith("SPARE_JAX_")}}


def run_one(name: str) -> dict:
    words = COMMANDS[name]
    argv = [sys.executable, "-m", "spare_jax", *words, "--json"]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    commit, dirty = commit_of_checkout()
    record = {"name": name, "command": "spare-jax " + " ".join(words), "argv": ["spare-jax", *words, "--json"],
              "commit": commit, "commit_dirty": dirty,
              "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "machine": machine(), "load_avg_1min_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix=f"doc_transcript_{name}_") as cwd:
        t0 = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        record["wall_seconds"] = time.perf_counter() - t0
    record["load_avg_1min_after"] = os.getloadavg()[0]
    record["exit_code"] = done.returncode
    if done.returncode != 0:
        sys.exit(f"doc_transcripts: {record['command']} exited {done.returncode}:\n{done.stderr[-4000:]}")
    record["output"] = json.loads(done.stdout)
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help=f"commands to run (default: all: {' '.join(COMMANDS)})")
    ap.add_argument("--list", action="store_true", help="print the names and their commands, run nothing")
    args = ap.parse_args(argv)
    if args.list:
        for name, words in COMMANDS.items():
            print(f"{name:<16} spare-jax {' '.join(words)}")
        return 0
    unknown = [n for n in args.names if n not in COMMANDS]
    if unknown:
        ap.error(f"no such command name: {', '.join(unknown)} (see --list)")
    OUT.mkdir(parents=True, exist_ok=True)
    for name in args.names or COMMANDS:
        record = run_one(name)
        (OUT / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
        print(f"{name}: {record['wall_seconds']:.1f} s (load {record['load_avg_1min_before']:.1f} -> "
              f"{record['load_avg_1min_after']:.1f}) -> {OUT / (name + '.json')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
