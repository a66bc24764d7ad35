"""The joint search on whole training runs (docs/planning.md#the-joint-search-with-repair): scheme x r x m x D_max x
tau (x the repair time, where several are given), with common random numbers and successive halving under a stated
budget.

Where no closed form follows a run (repair, a finite spare pool, elastic training), each candidate is a
configuration of whole training runs (``kernels.run``). Searching every combination with many full-length
runs is out of reach at N = 600 (a run of 720 h there is ~40,000 events), so the search spends its runs
where they decide something:

1. *Pilot* (every layout: scheme, r, m, repair time): ``Budget.screen_runs`` runs of ``W x
   Budget.screen_work`` at a first interval (Daly's for the cluster's failure rate times r). Their measured
   interruptions per computing minute give each layout Daly's interval.
   Every stage before the reports runs the kernel alone, run by run (``kernels.run_driver.run_each``: it
   compiles in about a third of the time of the exact-sum driver, and SPARe's layouts share one compile, as
   do elastic's: r and m are numbers of the run), and ranks by the mean.
2. *Screen* (every candidate: each layout with every D_max): the same runs at that interval. The best third
   of each scheme's candidates go on.
3. *Interval* (each survivor at tau x ``SearchSpace.tau_factors``, and at W -- a single final checkpoint --
   where the pilot saw at most 2 interruptions per W of computing): ``3 x screen_runs`` runs of the same
   short work. The best third of each scheme (at most ``Budget.finalists``) go on.
4. *Full length* (the finalists): ``Budget.full_runs`` runs of the whole work W. Each scheme's best is then
   tried at Daly's interval from its own full-length runs x the factors (short runs see too few of a
   reliable layout's rare interruptions to place a long interval), and the best of these is its answer,
   reported from the same runs by ``whole_run_ttt`` (exact sums, the mean's standard error).
5. *Chosen*: the best of all schemes, re-run with ``Budget.final_runs`` runs of W (its reported TTT, 95%
   interval and quantiles).

Stages 1-3 are the candidate search every search over whole runs shares (``ttt.halving.search_candidates``: the
interval of one configuration, the screen of r, the planner's limit); ``candidate_runs`` runs one candidate, run
by run, for it and for the planner.

Common random numbers: every candidate's run i uses the same seed and run id, so it starts from the same
failure clocks and draws its k-th event from the same stream: differences between candidates are not
swamped by independent noise. The short runs (W/16 by default) are a cheap estimate of TTT/W for ranking
only; every reported number comes from runs of the whole work. A pruned candidate is not proven worse:
``search`` in the result says how many runs each stage spent (the budget) and what it kept.
"""

from __future__ import annotations

import dataclasses
import math

from ..model.cluster import Cluster, Sampling
from ..model.repair import Repair
from ..model.training import Training
from .config import Policy
from .halving import Rules, search_candidates
from .runs import first_tau, pooled_daly, whole_run_ttt

DEFAULT_MICROBATCHES = (1, 2, 4, 8)
DEFAULT_RESTART_DEPTHS = (1.5, 2.0, 3.0)
DEFAULT_TAU_FACTORS = (0.7, 1.0, 1.4)
SEARCH_LANES = 8  # runs per kernel call: one compiled kernel per static shape (SPARe's r and m are numbers), whatever the stage's run count


@dataclasses.dataclass(frozen=True)
class SearchSpace:
    """What the joint search compares: ``schemes`` (of spare, rep, none, elastic), r in ``redundancies``
    (None: 2..``r_max``; rep: those dividing N), micro-batch counts ``microbatches`` (spare and elastic
    rebalance; None: the default grid ``DEFAULT_MICROBATCHES``; ``microbatch_grid`` is what is searched),
    proactive-restart depths ``restart_depths`` (spare; never is always a candidate), repair times
    ``repair_times`` (None: the cluster's), the interval factors around Daly's, and elastic's data policy."""

    schemes: tuple = ("spare", "rep", "elastic")
    r_max: int = 6
    redundancies: tuple | None = None
    microbatches: tuple | None = None
    restart_depths: tuple = DEFAULT_RESTART_DEPTHS
    repair_times: tuple | None = None
    tau_factors: tuple = DEFAULT_TAU_FACTORS
    elastic_data: str = "rebalance"

    @property
    def microbatch_grid(self) -> tuple:
        """The micro-batch counts searched: those given, or the default grid."""
        return DEFAULT_MICROBATCHES if self.microbatches is None else tuple(self.microbatches)


@dataclasses.dataclass(frozen=True)
class Budget:
    """How many runs each stage spends (module docstring): ``screen_runs`` of ``W x screen_work`` per
    candidate in the pilot and screen (3x as many at the interval stage), ``full_runs`` of W per finalist
    (at most ``finalists`` per scheme), ``final_runs`` of W for the chosen configuration; each stage keeps
    the best 1/``keep`` of each scheme."""

    screen_runs: int = 8
    screen_work: float = 1.0 / 16.0
    keep: int = 3
    finalists: int = 3
    full_runs: int = 16
    final_runs: int = 200


@dataclasses.dataclass(frozen=True)
class Candidate:
    scheme: str
    redundancy: int
    microbatches: int
    restart_depth: float | None
    repair_time_min: float | None

    def layout(self) -> tuple:
        return (self.scheme, self.redundancy, self.microbatches, self.repair_time_min)

    def describe(self) -> dict:
        return {"scheme": self.scheme, "redundancy": self.redundancy, "microbatches": self.microbatches,
                "restart_depth": self.restart_depth, "repair_time_min": self.repair_time_min}


def candidates(cluster: Cluster, space: SearchSpace) -> list[Candidate]:
    """Every candidate of ``space`` on ``cluster`` (the grid the search prunes)."""
    from .policy import restart_depth_grid

    n = cluster.groups
    base_repair = None if cluster.repair is None else cluster.repair.repair_time_min
    repairs = list(space.repair_times) if space.repair_times else [base_repair]
    rs = list(space.redundancies) if space.redundancies else list(range(2, space.r_max + 1))
    ms = sorted({int(m) for m in space.microbatch_grid}) or [1]
    out = []
    for rep in repairs:
        for scheme in space.schemes:
            if scheme == "spare":
                for r in [r for r in rs if 2 <= r < n]:
                    for m in ms:
                        for d in [None] + restart_depth_grid(r, m, space.restart_depths):
                            out.append(Candidate("spare", r, m, d, rep))
            elif scheme == "rep":
                out += [Candidate("rep", r, 1, None, rep) for r in rs if r >= 2 and n % r == 0]
            elif scheme == "elastic":
                em = ms if space.elastic_data == "rebalance" else [1]
                out += [Candidate("elastic", 1, m, None, rep) for m in em]
            elif scheme == "none":
                out.append(Candidate("none", 1, 1, None, rep))
            else:
                raise ValueError(f"schemes: unknown scheme {scheme!r}")
    if not out:
        raise ValueError("the search space is empty (no r fits N for the schemes asked)")
    return out


def _layout_of(cand: Candidate) -> Candidate:
    """The candidate that stands for ``cand``'s layout in the pilot (no proactive restart)."""
    return Candidate(cand.scheme, cand.redundancy, cand.microbatches, None, cand.repair_time_min)


def _cluster_for(cluster: Cluster, cand: Candidate) -> Cluster:
    scen = dataclasses.replace(cluster.scenario, microbatches=cand.microbatches)
    rep = cluster.repair
    if cand.repair_time_min != (None if rep is None else rep.repair_time_min):
        rep = (Repair(cand.repair_time_min) if rep is None
               else dataclasses.replace(rep, repair_time_min=cand.repair_time_min))
    return dataclasses.replace(cluster, scenario=scen, repair=rep)


def _policy(cand: Candidate, ages: str, elastic_data: str) -> Policy:
    return Policy(cand.scheme, cand.redundancy, cand.restart_depth, ages,
                  elastic_data if cand.scheme == "elastic" else "rebalance")


def _lanes(runs: int, seed: int, bar=False) -> Sampling:
    """``runs`` runs seeded by ``seed``, ``SEARCH_LANES`` per kernel call; ``bar``: the stage's progress bar."""
    return Sampling(count=runs, seed=seed, chunk_size=SEARCH_LANES, progress=bar)


def candidate_runs(cluster: Cluster, training: Training, cand: Candidate, tau: float, sampling: Sampling,
                   ages: str = "kept", elastic_data: str = "rebalance", capacity: int | None = None) -> dict:
    """Each run's own outputs (host arrays, minutes: ``ttt``, ``compute``, ``restarts``, ``spare_wait_max``, ...)
    of ``sampling``'s runs of ``cand`` at the interval ``tau`` on ``cluster`` with the costs and work of
    ``training``: the whole-run kernel alone, run by run (``kernels.run_driver.run_each``), run i with run id i
    (common random numbers). ``capacity``: the spare pool's static size at least this, so that a sweep over the
    pool's size shares one compile. A run that does not finish within the event limit: ValueError."""
    from ..kernels.run_driver import run_each
    from ..model.runsetup import RunSetup

    pol = _policy(cand, ages, elastic_data)
    setup = RunSetup.build(_cluster_for(cluster, cand), training, pol.scheme, pol.redundancy, tau, pol.restart_depth,
                           pol.ages, pol.elastic_data)
    return run_each(setup, sampling, capacity=capacity)


def pool_capacity(spares: int) -> int:
    """The static size of a spare pool of ``spares`` in the whole-run kernel (``kernels.run_shape``): every
    pool up to it shares one compile with ``candidate_runs``' ``capacity``."""
    from ..kernels.run_shape import spare_capacity

    return spare_capacity(spares)


def _runs(cluster, training, cand, tau, sampling, ages, elastic_data) -> dict:
    """Mean TTT, computing time and interruptions (minutes, per run) of ``sampling``'s runs of ``training`` (its
    work: the whole, or the screen's short runs)."""
    import numpy as np

    out = candidate_runs(cluster, training, cand, tau, sampling, ages, elastic_data)
    mean = {k: float(np.mean(out[k], dtype=np.float64)) for k in ("ttt", "compute", "restarts")}
    return {"ttt_min": mean["ttt"], "compute_mean": mean["compute"], "restarts_mean": mean["restarts"]}


def _pooled_daly(training: Training, res: dict, runs: int) -> float:
    """``runs.pooled_daly`` on ``res`` (``_runs``'s means), at most W."""
    return min(pooled_daly(training.ckpt_cost_min, res["compute_mean"], res["restarts_mean"], runs),
               60.0 * training.work_hours)


def _best_per_scheme(rows: list, keep: int, cap: int | None = None) -> list:
    """The best ceil(k / keep) rows of each scheme (at most ``cap``), by mean TTT."""
    out = []
    for scheme in dict.fromkeys(r["cand"].scheme for r in rows):
        mine = sorted((r for r in rows if r["cand"].scheme == scheme), key=lambda r: r["ttt_min"])
        take = max(1, math.ceil(len(mine) / keep))
        out += mine[: take if cap is None else min(take, cap)]
    return out


def joint_search(cluster: Cluster, training: Training, space: SearchSpace = SearchSpace(),
                 budget: Budget = Budget(), seed: int = 0, ages: str = "kept", stages=None) -> dict:
    """The best configuration per scheme (module docstring). Returns ``{"schemes": {scheme: report}, "chosen":
    scheme, "search": {...}}``: each scheme's best as ``whole_run_ttt``'s report (``microbatches`` and
    ``restart_depth`` included), the chosen one from ``budget.final_runs`` runs, and the budget spent per
    stage. ``stages``: a ``stages.Stages`` for progress by stage (five stages)."""
    w = training.work_hours
    short = w * budget.screen_work
    screen = dataclasses.replace(training, work_hours=short)  # the short runs of stages 1-3
    grid = candidates(cluster, space)
    layouts = list(dict.fromkeys(c.layout() for c in grid))
    log, spent = [], {"runs": 0, "run_hours": 0.0}

    def note(stage, rows, runs, hours, kept):
        spent["runs"] += len(rows) * runs
        spent["run_hours"] += len(rows) * runs * hours
        log.append({"stage": stage, "candidates": len(rows), "runs_each": runs, "work_hours_each": hours,
                    "kept": kept})

    bars = []

    def say(text, total=0):
        """A stage's line, and its bar over the stage's runs (count and time left), the last one closed."""
        from ..kernels.progress import Progress

        if stages is not None:
            stages.stage(text)
        if bars:
            bars.pop().close()
        bars.append(Progress(total, text.split(":")[0], stages is not None and stages.enabled, unit="run"))
        return bars[-1]

    try:
        return _search(cluster, training, space, budget, seed, ages, (say, note, w, short, screen, grid, layouts, log,
                                                                       spent))
    finally:
        if bars:
            bars.pop().close()


def _search(cluster, training, space, budget, seed, ages, state) -> dict:
    """``joint_search``'s five stages (``say``: a stage's line and its bar; ``note``: the budget log)."""
    say, note, w, short, screen, grid, layouts, log, spent = state

    # 1-3. pilot, screen and interval on short runs: the one candidate search (``ttt.halving.search_candidates``)
    runs3 = 3 * budget.screen_runs
    lines = {"pilot": lambda k, n: f"search 1/5: pilot, {k} layouts x {n} runs of {short:,.4g} h",
             "screen": lambda k, n: f"search 2/5: screen, {k} candidates x {n} runs of {short:,.4g} h",
             "interval": lambda k, n: f"search 3/5: interval, {k} (candidate, tau) x {n} runs of {short:,.4g} h"}
    current = [None]  # the stage's progress bar

    class Hooks:
        def stage(self, name, items, runs):
            current[0] = say(lines[name](items, runs), items * runs)

        def done(self, name, items, runs, kept):
            note(name, [None] * items, runs, short, kept)

    def measure(cand, tau, runs):
        return _runs(cluster, screen, cand, tau, _lanes(runs, seed, current[0]), ages, space.elastic_data)

    rules = Rules(first_tau=lambda c: min(first_tau(cluster, training.ckpt_cost_min, c.redundancy), 60.0 * short),
                  daly=lambda c, res: _pooled_daly(training, res, budget.screen_runs), pilot_runs=budget.screen_runs,
                  screen_runs=budget.screen_runs, interval_runs=runs3,
                  rate=lambda c, res: res["restarts_mean"] / max(res["compute_mean"], 1e-9),
                  taus=lambda tau, rate: _taus(tau, space.tau_factors, w, rate),
                  keep=lambda rows: _best_per_scheme(rows, budget.keep),
                  finalists=lambda rows: _best_per_scheme(rows, budget.keep, budget.finalists), layout=_layout_of)
    found = search_candidates(grid, measure, rules, Hooks())
    rows, finalists = found["screened"], found["finalists"]
    curves = _curves(rows, w / short)

    # 4. full length: the finalists on the whole work
    schemes_in = len({r["cand"].scheme for r in finalists})
    bar = say(f"search 4/5: full length, {len(finalists)} finalists x {budget.full_runs} runs of {w:,.4g} h",
              (len(finalists) + schemes_in * (len(space.tau_factors) + 2)) * budget.full_runs)
    win = {}
    for r in finalists:
        r.update(_runs(cluster, training, r["cand"], r["tau"], _lanes(budget.full_runs, seed, bar), ages,
                       space.elastic_data))
        s = r["cand"].scheme
        if s not in win or r["ttt_min"] < win[s]["ttt_min"]:
            win[s] = r
    note("full length", finalists, budget.full_runs, w, len(win))
    # each scheme's best at Daly's interval from its own full-length runs (the short runs see too few of
    # the rare interruptions of a reliable layout to place a long interval)
    again = []
    tries = {}
    for s, r in list(win.items()):
        daly = _pooled_daly(training, r, budget.full_runs)
        tries[s] = [tau for tau in _taus(daly, space.tau_factors, w, r["restarts_mean"] / max(r["compute_mean"], 1e-9))
                    if abs(tau / r["tau"] - 1.0) >= 0.05]
    bar.set_total((len(finalists) + sum(map(len, tries.values())) + len(win)) * budget.full_runs)
    for s, r in list(win.items()):
        for tau in tries[s]:
            row = {"cand": r["cand"], "tau": tau, **_runs(cluster, training, r["cand"], tau,
                                                            _lanes(budget.full_runs, seed, bar), ages,
                                                            space.elastic_data)}
            again.append(row)
            if row["ttt_min"] < win[s]["ttt_min"]:
                win[s] = row
    if again:
        note("full-length interval", again, budget.full_runs, w, len(win))
    # each scheme's best, reported from the same runs (the driver's exact sums, quantiles, slowdown)
    best = {s: _report(cluster, training, r["cand"], r["tau"], _lanes(budget.full_runs, seed, bar), ages,
                       space.elastic_data) for s, r in win.items()}

    # 5. the chosen configuration: more runs; where another scheme's mean from fewer runs then comes out ahead,
    # it gets as many (a strategy is named only from at least as many runs as those it is compared with)
    chosen = min(best, key=lambda s: best[s]["mc_ttt_hours"])
    top = best[chosen]
    bar = say(f"search 5/5: chosen {chosen} at r = {top['redundancy']}, m = {top.get('microbatches', 1)}: "
              f"{budget.final_runs} runs of {w:,.4g} h", budget.final_runs)
    if budget.final_runs != budget.full_runs:
        final = set()
        while chosen not in final:
            if final:
                bar.set_total((len(final) + 1) * budget.final_runs)
            best[chosen] = _report(cluster, training, win[chosen]["cand"], win[chosen]["tau"],
                                   _lanes(budget.final_runs, seed, bar), ages, space.elastic_data)
            note("chosen", [None], budget.final_runs, w, 1)
            final.add(chosen)
            chosen = min(best, key=lambda s: best[s]["mc_ttt_hours"])
    order = [s for s in ("spare", "rep", "none", "elastic") if s in best]
    return {"schemes": {s: best[s] for s in order}, "chosen": chosen, "curves": {s: curves[s] for s in order},
            "search": {"stages": log, "candidates": len(grid), "layouts": len(layouts),
                       "runs_total": spent["runs"], "run_hours_total": spent["run_hours"],
                       "common_random_numbers": f"seed {seed}: run i of every candidate has run id i",
                       "space": {"schemes": list(space.schemes), "r_searched": sorted({c.redundancy for c in grid}),
                                 "microbatches_searched": sorted({c.microbatches for c in grid}),
                                 "restart_depths": sorted({c.restart_depth for c in grid if c.restart_depth}),
                                 "repair_times_min": sorted({c.repair_time_min for c in grid
                                                             if c.repair_time_min is not None}),
                                 "tau_factors": list(space.tau_factors)}}}


def _taus(tau: float, factors, work_hours: float, rate: float) -> list:
    """The intervals tried around ``tau``: ``tau`` x each factor (at most W), and W itself (a single final
    checkpoint) where the runs measured at most 2 interruptions per W of computing (``rate`` per minute),
    duplicates removed."""
    w = 60.0 * work_hours
    return list(dict.fromkeys([min(tau * f, w) for f in factors] + ([w] if rate * w <= 2.0 else [])))


def _curves(rows: list, scale: float) -> dict:
    """Per scheme and r, the screen's best candidate: ``{r, microbatches, restart_depth, ckpt_interval_min,
    ttt_hours}``, ``ttt_hours`` the short runs' TTT x ``scale`` (W / their work: a ranking estimate)."""
    out = {}
    for row in sorted(rows, key=lambda x: x["ttt_min"]):
        c = row["cand"]
        pts = out.setdefault(c.scheme, {})
        if c.redundancy not in pts:
            pts[c.redundancy] = {"redundancy": c.redundancy, "microbatches": c.microbatches, "restart_depth": c.restart_depth,
                                 "ckpt_interval_min": row["tau"], "ttt_hours": row["ttt_min"] / 60.0 * scale}
    return {s: [pts[r] for r in sorted(pts)] for s, pts in out.items()}


def _report(cluster, training, cand, tau, sampling, ages, elastic_data) -> dict:
    """``whole_run_ttt``'s report of ``sampling``'s runs of the whole work (``microbatches`` and ``restart_depth``
    always present)."""
    rep = whole_run_ttt(_cluster_for(cluster, cand), dataclasses.replace(training, ckpt_interval_min=tau),
                        _policy(cand, ages, elastic_data),
                        sampling).to_json()
    rep.setdefault("microbatches", cand.microbatches)
    rep.setdefault("restart_depth", cand.restart_depth)
    rep.setdefault("repair_time_min", cand.repair_time_min)
    return rep
