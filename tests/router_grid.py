"""A grid of small time-to-train problems, and the choices the code made on them before the router
(tests/data/router_choices.json, written by tests/data/make_router_choices.py at the commit before the
router): shared by tests/test_router.py and the recorder. Every choice is one character a case, in the
grid's order, so the file stays small; ``decode`` lists the differing cases when one changes."""

from __future__ import annotations

import dataclasses
import itertools
import json
import pathlib

from spare_jax.model.cluster import Cluster
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training

CHOICES = pathlib.Path(__file__).resolve().parent / "data" / "router_choices.json"


class Marker(Exception):
    """Raised by a function ``marker`` stands in for: the path a call took, named by ``code``."""


def marker(code):
    """A stand-in that raises ``Marker(code)``: patched over the function each path calls first."""
    def raise_(*args, **kw):
        raise Marker(code)
    return raise_

MODELS = {"exp": FailureModel(), "weibull": FailureModel(distribution="weibull", weibull_shape=0.7)}
SCENARIOS = {"plain": Scenario(), "job": Scenario(job_mtbf_min=5000.0), "domains": Scenario(domains=((4, 1000.0),)),
             "lemons": Scenario(lemon_fraction=0.25, lemon_factor=3.0), "m2": Scenario(microbatches=2)}
REPAIRS = {"none": None, "repair": Repair(30.0), "pool": Repair(30.0, spares=2, hardware_repair_min=100.0),
           "pool_only": Repair(None, spares=2, hardware_repair_min=100.0)}
TRAININGS = {"absent": None, "plain": Training(), "stall": Training(failure_stall_min=1.0),
             "rejoin": Training(rejoin_stall_min=1.0)}
SCHEMES = ("spare", "rep", "none", "elastic")
METHOD_CODES = {"closed_form": "c", "closed_form_approx": "a", "epoch_pool": "p", "whole_runs": "w", None: "-"}


def clusters():
    """(name, Cluster) over N = 16, the clocks, the scenarios and the repairs."""
    for (m, model), (s, scen), (p, rep) in itertools.product(MODELS.items(), SCENARIOS.items(), REPAIRS.items()):
        yield f"{m}/{s}/{p}", Cluster(16, model, scen, rep)


def policies():
    """(name, Policy) over the schemes, r in 1, 2, 4, the ages and the proactive restart."""
    from spare_jax.ttt.config import Policy

    for scheme, r, ages, depth in itertools.product(SCHEMES, (1, 2, 4), ("kept", "renewed"), (None, 2.0)):
        yield f"{scheme}/r{r}/{ages}/D{depth}", Policy(scheme, r, depth, ages)


def method_cases():
    """(name, cluster, policy, training, optimum): every cluster x policy x training x optimum."""
    for (c, cluster), (p, policy) in itertools.product(list(clusters()), list(policies())):
        for (t, training), optimum in itertools.product(TRAININGS.items(), (False, True)):
            yield f"{c}|{p}|{t}|opt={optimum}", cluster, policy, training, optimum


def size_cases():
    """(name, cluster, policy): spare's chain computed or not at its size."""
    from spare_jax.ttt.config import Policy

    for n, r, m in ((600, 8, 1), (600, 9, 1), (6000, 4, 1), (600, 6, 4), (16, 8, 8)):
        yield f"N{n}/r{r}/m{m}", Cluster(n, scenario=Scenario(microbatches=m)), Policy("spare", r)


SPACES = {"one": dict(), "ms": dict(microbatches=(1, 2)), "depths": dict(restart_depths=(2.0,)),
          "renewed": dict(ages="renewed")}


def optimize_cases():
    """(name, cluster, training, space) for ``optimize``'s path."""
    from spare_jax.ttt.config import Space

    for (c, cluster), (t, training), (s, space) in itertools.product(
            list(clusters()), [x for x in TRAININGS.items() if x[1] is not None], SPACES.items()):
        yield f"{c}|{t}|{s}", cluster, training, Space(**space)


def plan_cases():
    """(name, cluster, training, restart_depth, chosen) for plan's whole-run rule."""
    for (c, cluster), (t, training), depth in itertools.product(
            [x for x in clusters() if x[0].startswith("exp/")],
            [x for x in TRAININGS.items() if x[1] is not None], (None, 2.0)):
        has_time = cluster.repair is not None and cluster.repair.repair_time_min is not None
        chosen = ("spare", "rep", "none") + (("elastic",) if has_time else ())
        yield f"{c}|{t}|D{depth}", cluster, training, depth, chosen


MERGE_SETS = [combo for k in (1, 2, 3) for combo in itertools.combinations_with_replacement(
    ("closed_form", "closed_form_approx", "epoch_pool", "whole_runs"), k)]


def load() -> dict:
    return json.loads(CHOICES.read_text())


def decode(names: list, codes: str, other: str) -> list:
    """The cases whose code differs between ``codes`` and ``other`` (at most 20)."""
    return [(n, a, b) for n, a, b in zip(names, codes, other) if a != b][:20]


def replace(obj, **kw):
    return dataclasses.replace(obj, **kw)
