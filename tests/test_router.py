"""The router (``ttt.router``): its choice on a grid of small problems is the one the code made before it
(tests/data/router_choices.json), its methods say why they do not apply, and outside the model and the
router no code tests the repair, the stalls, the domains or the restart policy to choose a path (an ast scan,
which fails on a planted check)."""

from __future__ import annotations

import ast
import dataclasses
import functools
import pathlib

import pytest

import router_grid as grid
from spare_jax.model.cluster import Cluster
from spare_jax.model.repair import Repair
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training
from spare_jax.ttt import router
from spare_jax.ttt.config import Policy, Space, scheme_placement
from spare_jax.ttt.router import Problem, choose

OLD = grid.load()
CODES = grid.METHOD_CODES


def _check(name, now, names):
    old = OLD[name]
    assert len(now) == len(old)
    assert now == old, f"{name}: the router chooses otherwise than the code before it: {grid.decode(names, old, now)}"


def test_the_router_chooses_what_ttt_method_chose():
    cases = list(grid.method_cases())
    now = "".join(CODES[choose(Problem(c, p, t, o)).name] for _, c, p, t, o in cases)
    _check("ttt_method", now, [n for n, *_ in cases])


def test_ttt_runs_and_the_theory_beside_them_follow_the_router():
    """``ttt``'s own path: whole runs, a pilot pool (the scenario kernels' or i.i.d. epochs), or the closed form
    beside the runs (exact, approximate, or the renewal-reward form)."""
    cases = [x for x in grid.method_cases() if not x[4]]

    def path(c, p, t):
        if choose(Problem(c, p, t, optimum=False)) is router.WHOLE_RUNS:
            return "w"
        if choose(Problem(c, p, t)) is router.EPOCH_POOL:
            return "k" if router.scenario_pool(c) else "i"
        r = scheme_placement(p.scheme, c.groups, p.redundancy)[1]
        return CODES[router.interval_form(Problem(c, dataclasses.replace(p, redundancy=r)))]

    _check("ttt_theory", "".join(path(c, p, t) for _, c, p, t, _ in cases), [n for n, *_ in cases])
    # whole runs where the old test of the parts said so (it saw checkpointing alone with a repair but no spare
    # pool as it was given; the router answers it, as the code did, as without repair)
    whole = "".join("1" if Problem(c, p, t).coverage().method == "whole_runs" else "0" for _, c, p, t, _ in cases)
    kept = [i for i, (_, c, p, *_) in enumerate(cases)
            if not (p.scheme == "none" and c.repair is not None and c.repair.spares is None)]
    assert [whole[i] for i in kept] == [OLD["needs_whole_runs"][i] for i in kept]


def test_the_interval_form_answers_where_closed_form_answers_did():
    from spare_jax.ttt import closed_form_answers

    pairs = [(c, p) for _, c in grid.clusters() for _, p in grid.policies()]
    assert "".join(CODES[closed_form_answers(c, p)] for c, p in pairs) == OLD["closed_form_answers"]
    assert "".join(CODES[router.interval_form(Problem(c, p))] for _, c, p in grid.size_cases()) == OLD["sizes"]


def test_optimize_takes_the_path_it_took(monkeypatch):
    import spare_jax.ttt.answer as answer
    import spare_jax.ttt.closed_form as closed_form
    import spare_jax.ttt.policy as policy

    # the whole-run optimisers as the router holds them (``router.implement``)
    monkeypatch.setitem(router._IMPL["whole_runs"], "optimum", grid.marker("s"))
    monkeypatch.setitem(router._IMPL["whole_runs"], "screen", grid.marker("b"))
    monkeypatch.setattr(policy, "optimize_policy", grid.marker("o"))
    monkeypatch.setattr(closed_form, "optimize_r_tau", grid.marker("r"))

    def path(c, t, s):
        try:
            answer._optimize(c, t, s, False)
        except grid.Marker as m:
            return str(m)
        except ValueError:
            return "x"
        return "?"

    cases = list(grid.optimize_cases())
    _check("optimize_path", "".join(path(c, t, s) for _, c, t, s in cases), [n for n, *_ in cases])


def test_optimize_r_tau_takes_the_path_it_took(monkeypatch):
    import spare_jax.ttt.closed_form as closed_form
    import spare_jax.ttt.pool as pool

    monkeypatch.setattr(pool, "optimize_pool", grid.marker("P"))
    monkeypatch.setattr(closed_form, "epoch_profile", grid.marker("C"))

    def path(c, t, s):
        try:
            closed_form.optimize_r_tau(c, t, s)
        except grid.Marker as m:
            return str(m)
        except ValueError:
            return "x"
        return "?"

    cases = list(grid.optimize_cases())
    _check("r_tau_path", "".join(path(c, t, s) for _, c, t, s in cases), [n for n, *_ in cases])


def test_plan_runs_whole_runs_where_it_did():
    from spare_jax.planner.plan import _whole_set

    now = []
    for _, c, t, d, chosen in grid.plan_cases():
        whole = _whole_set(chosen, c.groups, c.model, c.scenario, c.repair, t, d)
        now.append("".join("1" if s in whole else "0" for s in grid.SCHEMES))
    assert now == OLD["plan_whole"]


def test_one_rule_merges_the_schemes_methods():
    """``merge`` is plan's rule on every set, and ``optimize``'s on every set it could see (its schemes never
    answer by whole runs on that path: those return before)."""
    from spare_jax.planner.plan import _overall
    from spare_jax.ttt.answer import _label

    for combo, overall, label in zip(grid.MERGE_SETS, OLD["overall"], OLD["label"]):
        assert router.merge(combo) == overall == _overall({f"s{i}": m for i, m in enumerate(combo)})
        if "whole_runs" not in combo:
            res = {"method": "x"}
            _label(res, {f"s{i}": m for i, m in enumerate(combo)})
            assert router.merge(combo) == label == res["method"]


def test_the_methods_say_why_not():
    plain = Cluster(16)
    rep = Problem(plain, Policy("rep", 4))
    assert choose(rep) is router.CLOSED_FORM and all(m.applies(rep) for m in router.ALL)
    spare = Problem(plain, Policy("spare", 3))
    assert choose(spare) is router.CLOSED_FORM_APPROX and "approximate" in router.CLOSED_FORM.why_not(spare)
    runs = Problem(plain, Policy("rep", 4), optimum=False)
    assert choose(runs) is router.EPOCH_POOL and "own training runs" in router.CLOSED_FORM.why_not(runs)
    repaired = Problem(dataclasses.replace(plain, repair=Repair(30.0)), Policy("rep", 4))
    assert choose(repaired) is router.WHOLE_RUNS and "no repair" in router.EPOCH_POOL.why_not(repaired)
    # checkpointing alone with repair but no spare pool is answered as without it
    alone = Problem(dataclasses.replace(plain, repair=Repair(30.0)), Policy("none", 1))
    assert choose(alone) is router.CLOSED_FORM
    domains = Problem(Cluster(16, scenario=Scenario(domains=((4, 1000.0),))), Policy("rep", 4))
    assert choose(domains) is router.EPOCH_POOL and "domains" in router.CLOSED_FORM_APPROX.why_not(domains)
    stall = Problem(plain, Policy("spare", 3), Training(failure_stall_min=1.0))
    assert choose(stall) is router.WHOLE_RUNS and "stalls" in router.EPOCH_POOL.why_not(stall)
    depth = Problem(plain, Policy("spare", 3, restart_depth=2.0))
    assert choose(depth) is router.EPOCH_POOL and "proactive restart" in router.CLOSED_FORM.why_not(depth)
    assert router.WHOLE_RUNS.why_not(stall) is None
    assert router.widest_method(["closed_form", "whole_runs", "epoch_pool"]) is router.WHOLE_RUNS


def test_each_model_part_declares_its_coverage():
    from spare_jax.model.failures import FailureModel

    weibull = FailureModel(distribution="weibull", weibull_shape=0.7)
    assert FailureModel().coverage().method == "closed_form"
    assert weibull.coverage("renewed").method == "closed_form_approx"
    assert weibull.coverage("kept").method == "whole_runs"
    assert Scenario(job_mtbf_min=5000.0).coverage().method == "closed_form"
    assert Scenario(lemon_fraction=0.25, lemon_factor=3.0).coverage().method == "epoch_pool"
    assert Repair(30.0).coverage("spare").method == "whole_runs" and Repair(30.0).coverage("none").reason is None
    assert Repair(30.0, spares=2, hardware_repair_min=100.0).coverage("none").method == "whole_runs"
    assert Training(rejoin_stall_min=1.0).coverage("none").method == "closed_form"
    assert Policy("elastic", 1).coverage().method == "whole_runs"
    assert Cluster(16, weibull, Scenario(domains=((4, 1000.0),))).coverage("rep", "renewed").method == "whole_runs"
    for part in (weibull.coverage("kept"), Scenario(ring="interleaved").coverage(), Repair(30.0).coverage()):
        assert part.reason


def test_the_questions_the_callers_ask():
    """The router's and the parts' answers that plan, the measurements and the pools ask instead of testing
    the parts themselves."""
    repaired, pooled = Repair(30.0), Repair(30.0, spares=2, hardware_repair_min=100.0)
    assert router.searches_jointly(repaired) and router.searches_jointly(pooled) and not router.searches_jointly(None)
    assert router.scenario_needs_pool(Scenario(domains=((4, 1000.0),))) and not router.scenario_needs_pool(None)
    assert not router.scenario_needs_pool(Scenario(job_mtbf_min=5000.0))
    assert router.stalls_need_runs(Training(rejoin_stall_min=1.0)) and not router.stalls_need_runs(Training())
    assert Cluster(16).epoch_kernel == "scenario" and Cluster(16, repair=repaired).epoch_kernel == "repair"
    assert Cluster(16, repair=repaired).stationary_downs and not Cluster(16, repair=pooled).stationary_downs
    lemons = Scenario(lemon_fraction=0.25, lemon_factor=3.0)
    assert not Cluster(16).stationary_downs and not Cluster(16, scenario=lemons, repair=repaired).stationary_downs
    assert Scenario(ring="interleaved").iid and not lemons.iid and not Scenario(domains=((4, 1000.0),)).iid


# -- no capability check outside the model and the router ------------------------------------------------

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "spare_jax"
# what a path choice tests: a part of the model the router reads through the parts' ``coverage``
CAPABILITIES = {"repair", "has_repair", "spares", "stalls", "failure_stall_min", "rejoin_stall_min", "needs_kernel",
                "domains", "uneven", "restart_depth"}
EXEMPT = ("model/", "ttt/router.py")  # the parts declare their coverage; the router reads it
# the modules that run a part, not choose a method: each simulates or writes the parts it is given
WINGS = {
    "kernels/": "the kernels build the run of the parts they are given (one part module each is the next step)",
    "reference/": "independent simulators of the same parts, checked against the engine",
    "theory/": "the closed forms of each part",
}
# checks that choose no path, each with its reason: (module, function, name tested) -> why
ALLOWED = {
    ("ttt/answer.py", "_epoch_pool_ttt", "restart_depth"): "formatting: the report lists the depth it ran",
    ("ttt/answer.py", "_epoch_pool_ttt", "stalls"): "formatting: the report lists the stalls (none happen)",
    ("ttt/answer.py", "_optimize_searched", "repair"): "formatting: the report describes the repair",
    ("ttt/config.py", "Policy.coverage", "restart_depth"): "the policy's own declaration of its coverage",
    ("cli/args.py", "repair_args", "spares"): "defines the --spares flag where the command takes it",
    ("cli/config.py", "_apply_preset", "domains"): "maps a preset's domains to the flags' defaults",
    ("cli/model_from_flags.py", "repair_from_flags", "spares"):
        "maps the flags to the model's repair part (none given: no repair)",
    ("cli/plan.py", "cmd_plan", "spares"): "formatting: prints the spare-pool section where it was asked",
    ("cli/plan.py", "spares_auto_from_flags", "spares"): "maps --spares auto and its flags to the search's options",
    ("rectlr/place.py", "search_ring", "domains"):
        "a start of the ring search (the interleaved order where there are domains)",
    ("suite/bench_baselines.py", "repair_events_numpy", "repair"):
        "a numpy baseline simulating the repair law it is given",
    ("suite/bench_compiles.py", "runs_compiles", "spares"): "the benchmark's setup: a finite pool where none is given",
    ("planner/assumed.py", "assumptions", "repair"): "formatting: the report's assumption lines describe the repair",
    ("planner/assumed.py", "assumptions", "stalls"): "formatting: the report's assumption lines describe the stalls",
    ("planner/assumed.py", "trade_lines", "repair"):
        "formatting: the limit's trade-off text (the stationary share where it exists)",
    ("planner/assumed.py", "trade_lines", "spares"):
        "formatting: the limit's trade-off text (the stationary share where it exists)",
    ("planner/fleet.py", "check_schemes", "has_repair"):
        "which strategies are compared (elastic needs a repair time), not how",
    ("planner/fleet.py", "check_schemes", "repair"):
        "which strategies are compared (elastic needs a repair time), not how",
    ("planner/inputs.py", "input_sources", "spares"):
        "formatting: the inputs table says where the spare pool came from",
    ("planner/plan.py", "PlanResult.to_json", "spares"):
        "formatting: the spare-pool section is printed where it was asked",
    ("planner/plan.py", "_optima", "restart_depth"): "maps the depth given to the search space's one depth (an input)",
    ("planner/plan.py", "_report_inputs", "repair"):
        "formatting: the report's inputs and method detail describe the repair",
    ("planner/plan.py", "_report_inputs", "restart_depth"): "formatting: the report lists the depth given",
    ("planner/plan.py", "_report_inputs", "stalls"):
        "formatting: the report's inputs and method detail list the stalls",
    ("planner/plan.py", "_scheme_rows", "repair"):
        "formatting: with repair the no-repair theory's failures field is blank",
    ("planner/report.py", "render_html", "spares"):
        "formatting: the HTML report's spare-pool section, where it was asked",
    ("planner/searched_rows.py", "row_candidate", "repair"):
        "reads the row's or the cluster's repair time into a candidate (a value)",
    ("planner/spares.py", "_pool_cluster", "spares"):
        "builds the repair part of a pool size (None: unlimited, no hardware repair)",
    ("planner/trace_fit.py", "fitted_cluster", "uneven"):
        "builds the model part the log's fit found (lemons where it found them)",
    ("planner/trace_replay.py", "_limit", "repair"):
        "the replay's repair option (\"none\"): the limit is not computed, the note says why",
    ("planner/trace_replay.py", "fitted_model", "repair"):
        "maps the replay's repair option to the fitted model's repair part",
    ("planner/trace_replay.py", "fitted_model", "spares"):
        "maps the replay's repair option to the fitted model's repair part",
    ("planner/trace_replay.py", "model_parts", "repair"):
        "the replay's repair option: which fitted variants are listed",
    ("planner/trace_replay.py", "trace_policies", "repair"):
        "which strategies are replayed (elastic needs repair), not how",
    ("planner/verdict.py", "_limit", "repair"): "reads the ideal cluster's repair time (a value, no path)",
    ("ttt/epochs.py", "apply_restart_depth", "restart_depth"):
        "applies the proactive-restart policy itself to a pool it is given (None: the identity)",
    ("ttt/pool.py", "optimize_pool", "repair"): "formatting: the report describes the repair it sampled",
    ("ttt/runs.py", "replay_runs", "repair"):
        "a string mode of the replay (\"trace\": the log's repairs), not the model's repair",
    ("ttt/runs.py", "screen_whole_runs", "repair"): "formatting: the report describes the repair",
    ("ttt/runs.py", "whole_run_ttt", "repair"):
        "formatting: the report describes the repair; the spare waits count only with a pool",
    ("ttt/runs.py", "whole_run_ttt", "restart_depth"): "formatting: the report lists the depth it ran",
    ("ttt/runs.py", "whole_run_ttt", "spares"):
        "accounting and formatting: the waits for a finite spare pool, where there is one",
    ("ttt/runs.py", "whole_run_ttt", "stalls"):
        "formatting: the report lists the stalls and says why whole runs answer",
    ("ttt/search.py", "_search", "restart_depth"): "formatting: the search log lists the depths it searched",
    ("ttt/search.py", "candidates", "repair"):
        "reads the cluster's repair time as the grid's default (a value, no path)",
    ("measure/overhead.py", "check_repair_epoch_work", "repair"):
        "a cross-check against the first-order theory, run where it exists",
    ("measure/wipeout.py", "_with_repair", "repair"):
        "the exact CTMC beside the runs where it exists (exponential repair, small N)",
}
# modules not yet asking the router for every path (a ratchet, empty now: a new check asks the router or is
# listed in ALLOWED with its reason)
NOT_YET: dict = {}


# the router's and the parts' questions: what is passed to them is theirs to test, not the caller's
QUESTIONS = {"choose", "interval_form", "interval_form_gap", "plan_whole_runs", "scenario_pool",
             "closed_form_guides", "searches_jointly", "scenario_needs_pool", "stalls_need_runs", "coverage",
             "why_not", "applies"}


def _refusal(node) -> bool:
    """An ``if`` without ``else`` whose body ends in a ``raise`` and cannot leave before it (no ``return``,
    ``break`` or ``continue`` in it): its only consequence is the refusal."""
    if not isinstance(node, ast.If) or node.orelse or not isinstance(node.body[-1], ast.Raise):
        return False
    return not any(isinstance(n, (ast.Return, ast.Break, ast.Continue)) for stmt in node.body for n in ast.walk(stmt))


def capability_checks(source: str) -> list:
    """``(function, name, line)`` of every test of a capability in a condition (``if``, ``while``, a
    conditional expression, a comprehension's filter, an ``and``/``or``) of ``source``: an attribute or a
    name in ``CAPABILITIES``. A condition whose only consequence is a refusal (an ``if`` whose body ends in a
    ``raise``, ``_refusal``) chooses no path and is not counted, nor is what a condition passes to the router's
    or a part's question (``QUESTIONS``: the router tests it)."""
    tree = ast.parse(source)
    owner, refusals = {}, set()

    def walk(node, name):
        for child in ast.iter_child_nodes(node):
            inner = f"{name}.{child.name}" if name and isinstance(child, (ast.FunctionDef, ast.ClassDef,
                                                                          ast.AsyncFunctionDef)) else \
                child.name if isinstance(child, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) else name
            owner[child] = inner
            walk(child, inner)

    walk(tree, "")
    for node in ast.walk(tree):
        if _refusal(node):
            refusals.update(id(n) for n in ast.walk(node.test))
        if isinstance(node, ast.Call):
            func = node.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) in QUESTIONS:
                refusals.update(id(n) for arg in node.args + [k.value for k in node.keywords] for n in ast.walk(arg))
    found, seen = [], set()
    for node in ast.walk(tree):
        tests = []
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            tests = [node.test]
        elif isinstance(node, ast.comprehension):
            tests = list(node.ifs)
        elif isinstance(node, ast.BoolOp):
            tests = [node]
        for test in tests:
            for n in ast.walk(test):
                name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None
                if name in CAPABILITIES and id(n) not in refusals and id(n) not in seen:
                    seen.add(id(n))
                    found.append((owner.get(n, ""), name, n.lineno))
    return found


@functools.lru_cache(maxsize=1)
def _scan() -> dict:
    """The capability checks of every module scanned, by module (one scan per session: read, never changed)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(EXEMPT) or rel.startswith(tuple(WINGS)):
            continue
        hits = [h for h in capability_checks(path.read_text()) if (rel, h[0], h[1]) not in ALLOWED]
        if hits:
            out[rel] = hits
    return out


def _violations(found: dict) -> list:
    bad = []
    for rel, hits in found.items():
        if len(hits) > NOT_YET.get(rel, 0):
            bad.append(f"{rel}: {len(hits)} capability check(s) choose a path (allowed {NOT_YET.get(rel, 0)}): "
                       + ", ".join(f"{f or '<module>'}:{line} {name}" for f, name, line in hits))
    return bad


def test_no_capability_check_chooses_a_path_outside_the_model_and_the_router():
    """Outside the model and the router, a path is chosen by asking the router (``choose``, ``interval_form``,
    ``plan_whole_runs``...), never by testing the repair, the stalls, the domains or the restart policy. The
    checks left are listed: those that choose no path (``ALLOWED``, each with its reason) and the modules not
    yet converted (``NOT_YET``, whose counts may only fall)."""
    found = _scan()
    assert not _violations(found), "\n".join(_violations(found))
    stale = {rel: n for rel, n in NOT_YET.items() if len(found.get(rel, [])) < n}
    assert not stale, f"fewer capability checks than NOT_YET lists (lower its counts): {stale}"
    for key in ALLOWED:
        rel, func, name = key
        assert any(h[:2] == (func, name) for h in capability_checks((PACKAGE / rel).read_text())), \
            f"ALLOWED lists a check that is gone: {key}"


@pytest.mark.parametrize("planted", [
    "def f(cluster):\n    if cluster.repair is None:\n        return 1\n    return 2\n",
    "def f(cfg, x):\n    return x if cfg.stalls else 0\n",
    "def f(scen):\n    ok = [s for s in (1, 2) if not scen.needs_kernel]\n    return ok\n",
    "def f(policy, t):\n    return policy.restart_depth is not None and t\n",
    "def f(scenario):\n    while scenario.domains:\n        break\n",
])
def test_the_scan_fails_on_a_planted_check(planted):
    """A check planted in a converted module (the router's answer module) is found and fails the scan; the
    same test whose only consequence is a refusal is not a path."""
    rel = "ttt/answer.py"
    source = (PACKAGE / rel).read_text() + "\n\n" + planted
    found = dict(_scan())
    found[rel] = [h for h in capability_checks(source) if (rel, h[0], h[1]) not in ALLOWED]
    bad = _violations(found)
    assert bad and bad[0].startswith(rel) and "f:" in bad[0]
    refusal = "def g(cluster):\n    if cluster.repair is None:\n        raise ValueError('no')\n"
    assert capability_checks(refusal) == []
    ends = "def g(cluster):\n    if cluster.repair is None:\n        why = 'no'\n        raise ValueError(why)\n"
    assert capability_checks(ends) == []
    # a body that can leave before its raise chooses a path; so does a test beside a router question
    leaves = "def g(c, x):\n    if c.repair is None:\n        if x:\n            return 1\n        raise ValueError\n"
    assert [h[1] for h in capability_checks(leaves)] == ["repair"]
    beside = "def g(c, r):\n    return 1 if searches_jointly(r) and c.stalls else 2\n"
    assert [h[1] for h in capability_checks(beside)] == ["stalls"]


def test_the_closed_forms_answer_through_the_router():
    """``CLOSED_FORM.answer`` is the interval form's expected TTT; ``CLOSED_FORM_APPROX.answer`` the renewal-reward
    form where the interval form does not apply (Weibull clocks, renewed)."""
    from spare_jax.model.failures import FailureModel
    from spare_jax.ttt.closed_form import epoch_profile, ttt_theory
    from spare_jax.ttt.exact import closed_form_ttt

    cfg = Training(work_hours=100.0, ckpt_interval_min=60.0)
    exact = router.CLOSED_FORM.answer(Cluster(16), cfg, Policy("rep", 4))
    assert exact["ttt_hours"] == closed_form_ttt(Cluster(16), cfg, "rep", 4)["ttt_hours"]
    assert exact["method"] == "closed_form"
    weibull = Cluster(16, FailureModel(distribution="weibull", weibull_shape=0.7))
    renewed = Policy("rep", 4, ages="renewed")
    assert choose(Problem(weibull, renewed, cfg)) is router.CLOSED_FORM_APPROX
    approx = router.CLOSED_FORM_APPROX.answer(weibull, cfg, renewed)
    prof = epoch_profile("rep", 16, 4, weibull.model, ages="renewed", job_rate=0.0, microbatches=1)
    assert approx["ttt_hours"] == ttt_theory(prof, 60.0, cfg, weibull.gpus)["ttt_hours"]
    assert approx["method"] == "closed_form_approx"
