"""The configuration of a training run: work, checkpoint and restart costs, the schemes, what a restart does
to the failure clocks (``Policy``), and what ``optimize`` searches (``Space``). Shared by every
time-to-train path (closed forms, epoch pools, Monte Carlo)."""

from __future__ import annotations

import dataclasses

from ..model.coverage import COVERED, Coverage
from ..model.runsetup import ELASTIC_DATA, RUN_SCHEMES  # noqa: F401 - defined once, with the run kernel's setup
from ..model.training import RESTART_SCALING, Training  # noqa: F401 - Training: re-exported by ttt

SCHEMES = RUN_SCHEMES[:3]  # spare, rep, none: elastic training (the fourth) is answered by whole runs only
AGES = ("kept", "renewed")
"""What a global restart does to the groups' failure clocks.

``kept`` (default): the restart re-initialises every collective and replaces the *failed* hardware (those
groups start at age 0); the surviving groups' GPUs are not rejuvenated and keep their age, so with an ageing
law (Weibull k != 1) the next epoch's failure times are residual lifetimes conditional on the ages, and
successive epochs are a Markov chain in the age vector, not i.i.d. ``renewed``: every group's clock
restarts at each global restart (i.i.d. epochs; the model of the paper's closed forms). For exponential
failures the two are the same model (memorylessness), so the defaults reproduce every exponential number.
"""


def check_ages(ages) -> str:
    if ages not in AGES:
        raise ValueError(f"ages must be one of {', '.join(AGES)}, got {ages!r}")
    return ages


def scheme_placement(scheme: str, groups: int, redundancy: int) -> tuple[str, int]:
    """(placement kind, r) used by a scheme: rep uses block (replica sets, so r must divide N), none r = 1.

    ``rep`` with r not dividing N is refused: classic replication has no layout there (a silent fallback to
    ``stacked`` would report a different scheme under the name ``rep``)."""
    if scheme not in RUN_SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(RUN_SCHEMES)}, got {scheme!r}")
    if scheme == "elastic":
        return "elastic", 1
    if scheme == "none":
        return "stacked", 1
    if scheme == "rep":
        if redundancy < 1 or groups % redundancy:
            raise ValueError(f"scheme 'rep' (replica sets, block placement) needs redundancy (r) to divide "
                             f"groups (N): r={redundancy}, N={groups}")
        return "block", redundancy
    return "stacked", redundancy


@dataclasses.dataclass(frozen=True)
class Policy:
    """What the run does about failures: the scheme (``spare``, ``rep``, ``none``, ``elastic``), its
    redundancy r, the proactive restart depth D_max (``spare`` only; None: never), what a global restart
    does to the surviving groups' failure clocks (``ages``: ``kept`` or ``renewed``), and with ``elastic``
    what the survivors compute (``elastic_data``: ``rebalance``, depth ceil(N m / alive) / m, or ``shrink``,
    work rate alive / N)."""

    scheme: str = "spare"
    redundancy: int = 8
    restart_depth: float | None = None
    ages: str = "kept"
    elastic_data: str = "rebalance"

    def __post_init__(self):
        if self.scheme not in RUN_SCHEMES:
            raise ValueError(f"scheme must be one of {', '.join(RUN_SCHEMES)}, got {self.scheme!r}")
        check_ages(self.ages)
        if self.elastic_data not in ELASTIC_DATA:
            raise ValueError(f"elastic_data must be one of {', '.join(ELASTIC_DATA)}, got {self.elastic_data!r}")

    def coverage(self) -> Coverage:
        """What follows this policy: whole runs for elastic training (its work rate follows the survivors); a
        pool of epochs for the proactive restart (``restart_depth``: no closed form has it); else the closed
        forms."""
        if self.scheme == "elastic":
            return Coverage("whole_runs", "elastic training: only whole runs follow the survivors' work")
        if self.restart_depth is not None:
            return Coverage("epoch_pool", "the proactive restart (`restart_depth`) has no closed form: a pool of "
                                          "epochs answers")
        return COVERED


@dataclasses.dataclass(frozen=True)
class Space:
    """What ``optimize`` searches: r up to ``r_max`` per scheme (rep: the divisors of N), with tau* for each;
    the micro-batch counts and proactive-restart depths of the scheduling policies (SPARe only); ``epochs``
    and ``seed`` of the epoch pools where no closed form applies (None: 20,000, or 2,000 with repair);
    ``ages`` of the failure clocks at a restart; ``curves``: keep TTT(r) per scheme in the result;
    ``repair_times``: several repair times to search with the rest (whole training runs; None: the
    cluster's)."""

    r_max: int = 20
    microbatches: tuple = (1,)
    restart_depths: tuple | None = None
    epochs: int | None = None
    seed: int = 0
    ages: str = "kept"
    curves: bool = False
    repair_times: tuple | None = None
