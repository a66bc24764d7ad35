"""How a time-to-train is answered: the four methods as values, the one choice among them and the one rule
that merges several schemes' methods into one label.

A ``Problem`` is a cluster, a policy, the training's costs (where known) and what is asked: the optimum
(``optimize``, ``plan``: the most special method that answers) or ``ttt``'s own training runs at a given
interval (``optimum=False``: the runs answer, assembled from epochs or whole). Each model part declares the
first method that follows it (``coverage`` on the clocks, the scenario, the repair, the stalls and the
policy); the problem's is the widest of its parts. The methods, most special first:

* ``CLOSED_FORM``: the interval-by-interval form (``ttt.exact``), exact for ``rep`` and ``none`` (and ``spare``
  at r = 1);
* ``CLOSED_FORM_APPROX``: the same form for ``spare`` (the (failures, depth) chain, within 0.1% of whole
  runs where measured), or the renewal-reward form where the interval form does not apply;
* ``EPOCH_POOL``: epochs sampled by the kernels (a scenario with no closed form, the proactive restart,
  ``ttt``'s own runs);
* ``WHOLE_RUNS``: the whole-run kernel (repair, a spare pool, elastic training, Weibull clocks no epoch pool
  follows, a stall). Bounded by construction: a run ends when its work is committed.

Each says whether it applies (``why_not``: None, or the reason), answers a problem (``answer``) and finds
the optimum of a cluster (``optimum``), delegating to the functions that compute them. ``choose`` picks the
first that applies; ``merge`` is the one rule for the label of several schemes' methods.
"""

from __future__ import annotations

import dataclasses

from ..model.cluster import Cluster
from ..model.coverage import COVERED, METHODS, Coverage, widest
from ..model.training import Training
from .config import SCHEMES, Policy

EXACT_SCHEMES = ("rep", "none")  # constant work rate: the interval form is exact
CLOSED_FORM_SCHEMES = ("spare",) + EXACT_SCHEMES
SPARE_FORM_MAX_CELLS = 1.5e9  # under a minute of the chain's DP on one shared core (N = 600, r = 8: 45 s)


def spare_form_cells(groups: int, redundancy: int, microbatches: int = 1) -> float:
    """The size of ``spare``'s one-off DP (``theory.chain.depth_next_survival``): (levels) x N steps x N
    failure counts x (queue states Q) x r^2 run states, Q = (r - 1) m + 1: about 3e-8 s per cell on one shared
    core (N = 600: 10 s at r = 6, 45 s at r = 8)."""
    q = (int(redundancy) - 1) * int(microbatches) + 1
    return float(max(q - 1, 1)) * groups * groups * q * redundancy * redundancy


def spare_form_affordable(groups: int, redundancy: int, microbatches: int = 1) -> bool:
    """Whether ``spare``'s form is computed at this size (``SPARE_FORM_MAX_CELLS``): beyond it the
    renewal-reward form answers, labelled approximate."""
    return spare_form_cells(groups, redundancy, microbatches) <= SPARE_FORM_MAX_CELLS


@dataclasses.dataclass(frozen=True)
class Problem:
    """A time-to-train to answer: ``policy`` on ``cluster`` with the costs of ``training`` (None: not known;
    its stalls then count for nothing), for the optimum (``optimum``) or for ``ttt``'s own runs."""

    cluster: Cluster
    policy: Policy
    training: Training | None = None
    optimum: bool = True

    @property
    def answered(self) -> Cluster:
        """The cluster as the methods answer it: checkpointing alone with repair but no finite spare pool is
        the cluster without repair (every failure is a global restart that replaces the group, so a repair
        never completes)."""
        repair = self.cluster.repair
        if repair is not None and repair.coverage(self.policy.scheme) is COVERED:
            return dataclasses.replace(self.cluster, repair=None)
        return self.cluster

    def coverage(self) -> Coverage:
        """The widest of its parts' coverages: the cluster's (clocks, scenario, repair), the policy's and the
        stalls'."""
        p = self.policy
        stalls = COVERED if self.training is None else self.training.coverage(p.scheme)
        return widest(self.cluster.coverage(p.scheme, p.ages), p.coverage(), stalls)


def interval_form(problem: Problem) -> str | None:
    """How the interval-by-interval form (``ttt.exact.closed_form_ttt``) gives the expected time-to-train of
    the problem's policy: ``"closed_form"`` (``rep``, ``none``, and ``spare`` at r = 1: exact),
    ``"closed_form_approx"`` (``spare``: the (failures, depth) chain), or None where it does not apply:
    every part covered by the exact form (exponential clocks, no repair, no scenario kernel, no proactive
    restart; the stalls where the training is given), and for ``spare`` a size whose chain is computed in
    about a minute (``spare_form_affordable``)."""
    p = problem.policy
    if p.scheme not in CLOSED_FORM_SCHEMES or problem.coverage().rank() > 0:
        return None
    if p.scheme == "spare" and int(p.redundancy) > 1:  # (r = 1: depth 1 always, checkpointing alone)
        cluster = problem.answered
        if not spare_form_affordable(cluster.groups, p.redundancy, cluster.scenario.microbatches):
            return None
        return "closed_form_approx"
    return "closed_form"


def interval_form_gap(cluster: Cluster, scheme: str) -> str | None:
    """Why the interval-by-interval form does not apply to ``scheme`` on ``cluster`` as it is (its repair
    counted for every scheme), or None: ``spare``, ``rep`` or ``none``, exponential clocks (whatever the
    ages), no repair, no scenario part beyond job-wide failures (and micro-batches for ``spare``)."""
    if scheme not in CLOSED_FORM_SCHEMES:
        return f"the closed-form time-to-train covers {', '.join(CLOSED_FORM_SCHEMES)}, not {scheme!r}"
    parts = (COVERED if cluster.repair is None else cluster.repair.coverage(),
             cluster.model.coverage("renewed"), cluster.scenario.coverage())
    return next((part.reason for part in parts if part.rank() > 0), None)


_IMPL: dict = {}  # method name -> role -> the function that computes it (``implement``)


def implement(name: str, answer, optimum, screen=None) -> None:
    """Give the method ``name`` the functions that compute it: ``answer`` (cluster, training, policy, sampling),
    ``optimum`` (cluster, training, space, progress, methods; for whole runs without ``methods``) and, for whole
    runs, ``screen`` (cluster, training, space). The modules that compute them register them (``ttt.answer``),
    so that the router imports none of them."""
    _IMPL[name] = {"answer": answer, "optimum": optimum, "screen": screen}


@dataclasses.dataclass(frozen=True)
class Method:
    """One way of answering a time-to-train (its ``name`` is one of ``METHODS``, what results say in
    ``method``)."""

    name: str

    def why_not(self, problem: Problem) -> str | None:
        """Why this method does not answer ``problem`` (None: it does)."""
        need = problem.coverage()
        if need.rank() > METHODS.index(self.name):
            return need.reason
        return None

    def applies(self, problem: Problem) -> bool:
        return self.why_not(problem) is None

    def answer(self, cluster: Cluster, training: Training, policy: Policy, sampling=None):
        """The time-to-train of ``policy`` on ``cluster`` by this method (a ``Report``): the closed forms'
        expected value, or training runs (epochs assembled, or whole)."""
        return _IMPL[self.name]["answer"](cluster, training, policy, sampling)

    def optimum(self, cluster: Cluster, training: Training, space, progress: bool = False, methods=None):
        """The optimum per scheme on ``cluster`` (``optimize``'s report); ``methods``: each scheme's."""
        return _IMPL[self.name]["optimum"](cluster, training, space, progress, methods)


class _ClosedForm(Method):
    def why_not(self, problem: Problem) -> str | None:
        if not problem.optimum:
            return "ttt's own training runs answer (the closed form stands beside them)"
        why = Method.why_not(self, problem)
        if why is None and interval_form(problem) != "closed_form":
            return "the interval form is approximate here (spare's (failures, depth) chain) or not computed"
        return why


class _ApproxClosedForm(Method):
    def why_not(self, problem: Problem) -> str | None:
        if not problem.optimum:
            return "ttt's own training runs answer (the approximate form stands beside them)"
        return Method.why_not(self, problem)


class _WholeRuns(Method):
    def why_not(self, problem: Problem) -> str | None:
        return None  # the whole-run kernel follows every part

    def optimum(self, cluster, training, space, progress=False, methods=None):
        """The joint search on whole runs (``ttt.search``), or, without repair under a scenario with no closed
        form, r and tau screened on whole runs (``ttt.runs.screen_whole_runs``)."""
        impl = _IMPL[self.name]
        if cluster.repair is None and scenario_pool(cluster):
            return impl["screen"](cluster, training, space)
        return impl["optimum"](cluster, training, space, progress)


CLOSED_FORM = _ClosedForm("closed_form")
CLOSED_FORM_APPROX = _ApproxClosedForm("closed_form_approx")
EPOCH_POOL = Method("epoch_pool")
WHOLE_RUNS = _WholeRuns("whole_runs")
ALL = (CLOSED_FORM, CLOSED_FORM_APPROX, EPOCH_POOL, WHOLE_RUNS)
BY_NAME = {m.name: m for m in ALL}


def choose(problem: Problem) -> Method:
    """The method that answers ``problem``: the first of ``ALL`` that applies."""
    problem = dataclasses.replace(problem, cluster=problem.answered)
    return next(m for m in ALL if m.applies(problem))


def method(cluster: Cluster, policy: Policy, optimum: bool = False, training: Training | None = None) -> str:
    """``choose``'s name for ``policy`` on ``cluster`` (``ttt.answer.ttt_method``)."""
    return choose(Problem(cluster, policy, training, optimum)).name


def widest_method(names) -> Method:
    """The most general of several methods: what an optimum over schemes that need them runs."""
    return ALL[max(METHODS.index(n) for n in names)]


def merge(names) -> str:
    """The one label of several schemes' methods: the one they share; when they differ, the approximate
    closed form if one answers, else whole runs if some do, else epoch pools."""
    values = set(names)
    if len(values) == 1:
        return values.pop()
    return next(m for m in ("closed_form_approx", "whole_runs", "epoch_pool", "closed_form") if m in values)


def optimum(cluster: Cluster, training: Training, space, progress: bool = False):
    """The optimum per scheme (``ttt.optimize``): each scheme's method for its optimum, and the most general
    of them finds it."""
    methods = {s: method(cluster, Policy(scheme=s, redundancy=2, ages=space.ages), True, training) for s in SCHEMES}
    return widest_method(methods.values()).optimum(cluster, training, space, progress, methods)


def scenario_pool(cluster: Cluster) -> bool:
    """Whether the cluster's scenario has no closed form, so that its optimum comes from pools of epochs of
    the scenario kernels (``ttt.pool.optimize_pool``)."""
    return scenario_needs_pool(cluster.scenario)


def scenario_needs_pool(scenario) -> bool:
    """Whether ``scenario`` (None: the default) has no closed form, so that each r samples a pool of epochs of
    the scenario kernels (the plan's pool size and its r bound follow)."""
    return scenario is not None and scenario.coverage().method == "epoch_pool"


def searches_jointly(repair) -> bool:
    """Whether a plan's optimum comes from the joint search on whole training runs (repair time, micro-batches,
    restart depth, r and tau: ``ttt.search``) rather than the optimiser per scheme: a cluster with ``repair``
    (a repair time or a finite spare pool; None: no repair)."""
    return repair is not None


def stalls_need_runs(training: Training) -> bool:
    """Whether the training's stalls (a pause per failure or rejoin) change the runs of a scheme that can stall,
    so that whole runs answer it (no closed form or epoch pool models a stall)."""
    return training.coverage("spare").rank() > 0


def closed_form_guides(cluster: Cluster) -> bool:
    """Whether the renewed model's closed form (``optimize_r_tau`` at ``ages`` renewed) can centre the r window
    of a search on whole runs: without repair and under a scenario with a closed form."""
    return cluster.repair is None and not scenario_pool(cluster)


def plan_whole_runs(cluster: Cluster, training: Training, chosen, restart_depth) -> set:
    """The schemes whose runs at the plan's optimum are whole runs: with repair, those whose optimum whole
    runs answer; without, every scheme but checkpointing alone where the proactive restart (``restart_depth``)
    or a stall changes the run (checkpointing alone ignores both: every failure is a global restart)."""
    if cluster.repair is not None:
        return {s for s in chosen if method(cluster, Policy(scheme=s, redundancy=2), True, training) == "whole_runs"}
    changed = restart_depth is not None or stalls_need_runs(training)
    return {s for s in chosen if s != "none"} if changed else set()


__all__ = ["ALL", "CLOSED_FORM", "CLOSED_FORM_APPROX", "EPOCH_POOL", "METHODS", "Method", "Problem", "WHOLE_RUNS",
           "choose", "interval_form", "interval_form_gap", "merge", "method", "optimum",
           "plan_whole_runs", "scenario_needs_pool", "searches_jointly", "stalls_need_runs"]
