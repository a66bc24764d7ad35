"""Shared pieces of the experiment scripts: the command line, logging, small plotting helpers."""

from __future__ import annotations

import sys


def experiment_args(doc: str):
    """The command line shared by ``experiments/*.py``: ``--out``, ``--quick``, ``--seed``. Like the command
    line, the scripts run on one JAX CPU device per core (``kernels.cpu_devices``: the same numbers)."""
    import argparse

    from ..kernels.cpu_devices import use_cpu_cores

    use_cpu_cores()

    parser = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    parser.add_argument("--out", default="figures", help="where figures and data go (default figures/)")
    parser.add_argument("--quick", action="store_true", help="a small version")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def log(msg: str) -> None:
    """One progress line on stderr (the experiments' data go to files, their summaries to stdout)."""
    print(msg, file=sys.stderr, flush=True)


def matplotlib_ticker():
    from matplotlib.ticker import ScalarFormatter

    fmt = ScalarFormatter()
    fmt.set_scientific(False)
    return fmt
