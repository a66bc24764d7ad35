"""The experiment suite: each function runs one experiment over the public API, writes its data
(``figures/*.csv|json``) and its figure (``figures/*.png``), and returns summary rows.

``experiments/*.py`` are thin command-line wrappers over these functions; ``spare-jax run`` calls them with
its defaults (or ``--quick`` sizes) through one call, ``summary.run_report``. ``bench`` measures the kernels
against NumPy and SimPy references (``bench.bench_report``, what ``spare-jax bench`` prints).

May import every wing below it (``model``, ``kernels``, ``theory``, ``measure``, ``ttt``, ``rectlr``; the
reference simulators, ``reference``, from ``bench`` only); not ``planner`` (its sibling) nor ``cli``.
"""

from .common import experiment_args
from .wipeout import WIPEOUT_RS, wipeout_validation
from .overhead import overhead_vs_r
from .reorder import reorder_movement
from .training import ttt_vs_r, rstar_vs_n
from .paper import PAPER_NUMBERS_SWEEPS, paper_numbers
from .scenarios import scenarios
from .rings import ring_ttt
from .microbatches import microbatches
from .summary import PAPER, format_summary, run_report, run_suite, verdict

__all__ = [
    "experiment_args", "WIPEOUT_RS", "wipeout_validation", "overhead_vs_r", "reorder_movement", "ttt_vs_r",
    "rstar_vs_n", "PAPER_NUMBERS_SWEEPS", "paper_numbers", "scenarios", "ring_ttt", "microbatches", "PAPER",
    "format_summary", "run_report", "run_suite", "verdict",
]
