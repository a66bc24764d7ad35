"""The first example of docs/planning.md, run for real: its transcript and its numbers, for the docs to quote.

    PYTHONPATH=. python experiments/planning_example.py   # a few minutes on 2 busy cores (two runs of the command)

Runs the command the page shows twice, once as the page shows it and once with --json, and writes
figures/planning_example.txt (the command and what it printed on stdout, as the page's code block shows it;
experiments/quote_numbers.py copies it there) and figures/planning_example.json (the same plan as JSON, for
the numbers the page's prose quotes). The page's command leaves out `--report plan.html` (it writes an HTML
file, and the transcript would name it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "figures"

# the command as the page shows it: lines of flags, joined with " \" continuations
LINES = [
    ["--gpus", "262144", "--gpus-per-group", "1024", "--gpu-mtbf-hours", "50000"],
    ["--restart", "60", "--ckpt-cost", "5", "--work-hours", "720", "--deadline-hours", "2000"],
]


def command_text() -> str:
    """The command as typed, wrapped the way the page shows it."""
    first = "$ spare-jax plan " + " ".join(LINES[0])
    rest = ["      " + " ".join(words) for words in LINES[1:]]
    return " \\\n".join([first, *rest])


def run(extra: list[str]) -> str:
    argv = [sys.executable, "-m", "spare_jax", "plan", *[w for words in LINES for w in words], *extra]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"planning_example: {' '.join(argv[2:])} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def main() -> None:
    text = "\n".join(line.rstrip() for line in run([]).rstrip("\n").split("\n"))  # no trailing spaces
    (OUT / "planning_example.txt").write_text(command_text() + "\n" + text + "\n")
    data = json.loads(run(["--json"]))
    (OUT / "planning_example.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT / 'planning_example.txt'} and {OUT / 'planning_example.json'}")


if __name__ == "__main__":
    main()
