"""The one candidate search on whole training runs: successive halving on common random numbers, with the
checkpoint interval refined.

``search_candidates(candidates, measure, rules, hooks)`` runs three stages, each on the same runs (one seed,
run i with run id i for every candidate: differences between candidates are not swamped by independent noise):

1. *Pilot* (``pilot_taus``: every layout, ``rules.layout`` of a candidate, shared by the candidates that differ
   only where the pilot cannot tell them apart): ``rules.pilot_runs`` runs at ``rules.first_tau``, then Daly's
   interval on their measured interruptions per computing minute (``rules.daly``), ``rules.rounds`` times, at
   most ``rules.cap``. A layout whose runs do not finish (``measure`` gives None) is dropped.
2. *Screen* (every candidate at its layout's interval): ``rules.screen_runs`` runs each; ``rules.keep`` picks
   the survivors (a lone candidate is ranked by its pilot where ``rules.screen_one`` is false).
3. *Interval* (each survivor at ``rules.taus`` of its interval and its layout's rate of interruptions):
   ``rules.interval_runs`` runs each; ``rules.finalists`` picks what goes on. ``interval_runs`` 0: no such
   stage (the screen's survivors are the finalists).

``measure(candidate, tau, runs)`` gives a dict with at least ``ttt_min`` (the mean TTT: the ranking score),
``compute_mean`` and ``restarts_mean`` (per run), or None where a run does not finish. Its work (the whole,
or short runs for ranking), its driver and its progress bar are the caller's, so that the joint search
(``ttt.search.joint_search``), the pilot of one configuration's interval (``ttt.runs.choose_tau``), the screen of r
(``ttt.runs.screen_whole_runs``) and the planner's limit (``planner.verdict.limit``) rank by one procedure.
``hooks.stage(name, items, runs)`` is called before a stage's runs, ``hooks.done(name, items, runs, kept)``
after them (a progress bar, a budget log). The planner's spare-pool search (``planner.spares``) runs its
candidates, the pool sizes K, through ``ttt.search.candidate_runs`` on the same common random numbers, but
orders them by a bisection over K (the wait constraint is monotone in K), not by halving.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable


def _identity(x):
    return x


@dataclasses.dataclass(frozen=True)
class Rules:
    """How ``search_candidates`` spends its runs and what each stage keeps (module docstring)."""

    first_tau: Callable  # layout -> the pilot's interval
    daly: Callable  # (layout, pilot measure) -> Daly's interval
    pilot_runs: int
    screen_runs: int = 0
    interval_runs: int = 0
    rate: Callable | None = None  # (layout, pilot measure) -> interruptions per computing minute
    taus: Callable | None = None  # (interval, rate) -> the intervals tried
    keep: Callable = _identity  # screened rows -> survivors
    finalists: Callable = _identity  # rows at their intervals -> finalists
    layout: Callable = _identity  # candidate -> its layout (the candidate that stands for it in the pilot)
    rounds: int = 1
    cap: float = math.inf  # the longest interval (W: a single final checkpoint)
    screen_one: bool = True


class Hooks:
    """No progress, no log (``search_candidates``'s default)."""

    def stage(self, name: str, items: int, runs: int) -> None:
        pass

    def done(self, name: str, items: int, runs: int, kept: int) -> None:
        pass


def score(row: dict | None) -> float:
    """A measured row's mean TTT; infinite where its runs did not finish."""
    return math.inf if row is None or row.get("ttt_min") is None else row["ttt_min"]


def pilot_taus(layouts: list, measure, rules: Rules, hooks: Hooks = Hooks()) -> dict:
    """Stage 1 (module docstring): ``{layout: {"tau", "rate", "pilot"}}`` for each layout whose pilot runs
    finished, in the order given."""
    hooks.stage("pilot", len(layouts), rules.pilot_runs * rules.rounds)
    out = {}
    for lay in layouts:
        tau, res = rules.first_tau(lay), None
        for _ in range(rules.rounds):
            res = measure(lay, tau, rules.pilot_runs)
            if res is None:
                break
            tau = rules.daly(lay, res)
        if res is None:
            continue
        out[lay] = {"tau": min(tau, rules.cap), "rate": None if rules.rate is None else rules.rate(lay, res),
                    "pilot": res}
    hooks.done("pilot", len(layouts), rules.pilot_runs * rules.rounds, len(out))
    return out


def search_candidates(candidates: list, measure, rules: Rules, hooks: Hooks = Hooks(), pilot_measure=None) -> dict:
    """The search (module docstring) over ``candidates`` (in order; ties keep it). Returns ``{"pilot":
    pilot_taus' dict, "screened": [{cand, tau, ttt_min, ...}], "kept", "trial": the (candidate, tau) rows of
    the interval stage, "finalists"}``; every row is ``measure``'s dict (None where it did not finish: scored
    infinite) with ``cand`` and ``tau``. ``pilot_measure``: the pilot's own measure (default ``measure``)."""
    layouts = list(dict.fromkeys(rules.layout(c) for c in candidates))
    pilot = pilot_taus(layouts, pilot_measure or measure, rules, hooks)
    grid = [c for c in candidates if rules.layout(c) in pilot]
    hooks.stage("screen", len(grid), rules.screen_runs)
    screened = []
    for cand in grid:
        lay = pilot[rules.layout(cand)]
        res = lay["pilot"] if len(candidates) == 1 and not rules.screen_one else \
            measure(cand, lay["tau"], rules.screen_runs)
        screened.append({"cand": cand, "tau": lay["tau"], **({"ttt_min": math.inf} if res is None else res)})
    kept = rules.keep(screened)
    hooks.done("screen", len(grid), rules.screen_runs, len(kept))
    out = {"pilot": pilot, "screened": screened, "kept": kept, "trial": [], "finalists": kept}
    if not rules.interval_runs:
        return out
    trial = [{"cand": r["cand"], "tau": t} for r in kept
             for t in rules.taus(r["tau"], pilot[rules.layout(r["cand"])]["rate"])]
    hooks.stage("interval", len(trial), rules.interval_runs)
    for r in trial:
        res = measure(r["cand"], r["tau"], rules.interval_runs)
        r.update({"ttt_min": math.inf, "missing": True} if res is None else res)
    out.update(trial=trial, finalists=rules.finalists(trial))
    hooks.done("interval", len(trial), rules.interval_runs, len(out["finalists"]))
    return out
