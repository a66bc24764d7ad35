"""Writes tests/data/router_choices.json: which method answered each problem of tests/router_grid.py, as the
code chose it before the router (run at that commit, e2b2ac4, and kept: tests/test_router.py checks that the
router chooses the same). ``PYTHONPATH=$PWD python tests/data/make_router_choices.py``.

The paths of ``optimize`` and ``optimize_r_tau`` are read by replacing the functions each path calls first
with ones that raise a marker; plan's rule for the schemes answered by whole runs is its expression of that
commit, applied to ``planner.plan._methods``."""

from __future__ import annotations

import dataclasses
import json
import sys
import pathlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import router_grid as grid  # noqa: E402


def optimize_path(cluster, training, space) -> str:
    """``ttt.answer._optimize``'s path: s (joint search), b (screen of whole runs), o (the policy search on
    epoch pools), r (``optimize_r_tau``), x (refused)."""
    import spare_jax.ttt.answer as answer
    import spare_jax.ttt.closed_form as closed_form
    import spare_jax.ttt.policy as policy

    saved = answer._optimize_searched, answer._optimize_weibull, policy.optimize_policy, closed_form.optimize_r_tau
    answer._optimize_searched, answer._optimize_weibull = grid.marker("s"), grid.marker("b")
    policy.optimize_policy, closed_form.optimize_r_tau = grid.marker("o"), grid.marker("r")
    try:
        answer._optimize(cluster, training, space, False)
    except grid.Marker as m:
        return str(m)
    except ValueError:
        return "x"
    finally:
        answer._optimize_searched, answer._optimize_weibull, policy.optimize_policy, closed_form.optimize_r_tau = saved
    return "?"


def r_tau_path(cluster, training, space) -> str:
    """``optimize_r_tau``'s path: P (pools of epochs), C (the closed forms), x (refused)."""
    import spare_jax.ttt.closed_form as closed_form
    import spare_jax.ttt.pool as pool

    saved = pool.optimize_pool, closed_form.epoch_profile
    pool.optimize_pool, closed_form.epoch_profile = grid.marker("P"), grid.marker("C")
    try:
        closed_form.optimize_r_tau(cluster, training, space)
    except grid.Marker as m:
        return str(m)
    except ValueError:
        return "x"
    finally:
        pool.optimize_pool, closed_form.epoch_profile = saved
    return "?"


def old_whole_set(cluster, training, depth, chosen) -> str:
    """plan's rule at that commit: which chosen schemes whole runs answer (1/0 per spare, rep, none, elastic)."""
    from spare_jax.planner.plan import _methods

    repair, cfg = cluster.repair, training
    methods = _methods(chosen, cluster.groups, cluster.model, cluster.scenario, repair, cfg)
    whole_set = {x for x in chosen if methods[x] == "whole_runs"} if repair is not None else \
        ({x for x in chosen if x != "none"} if depth is not None or cfg.stalls else set())
    return "".join("1" if s in whole_set else "0" for s in grid.SCHEMES)


def ttt_theory(cluster, policy, training) -> str:
    """``ttt``'s own path (``_time_to_train``): w (whole runs), k (a pilot pool of the scenario kernels), i (a
    pilot pool of i.i.d. epochs: the proactive restart), c / a / - (the closed form beside the runs, exact,
    approximate, or the renewal-reward form)."""
    from spare_jax.ttt.answer import closed_form_answers, ttt_method
    from spare_jax.ttt.config import scheme_placement

    if ttt_method(cluster, policy, training=training) == "whole_runs":
        return "w"
    if cluster.scenario.needs_kernel:
        return "k"
    if policy.restart_depth is not None:
        return "i"
    r = scheme_placement(policy.scheme, cluster.groups, policy.redundancy)[1]
    return grid.METHOD_CODES[closed_form_answers(cluster, dataclasses.replace(policy, redundancy=r))]


def main() -> None:
    from spare_jax.planner.plan import _overall
    from spare_jax.ttt.answer import _label, closed_form_answers, needs_whole_runs, ttt_method

    out = {"commit": "e2b2ac4"}
    codes = grid.METHOD_CODES
    cases = list(grid.method_cases())
    out["ttt_method"] = "".join(codes[ttt_method(c, p, optimum=o, training=t)] for _, c, p, t, o in cases)
    out["needs_whole_runs"] = "".join("1" if needs_whole_runs(c, p, t) else "0" for _, c, p, t, o in cases if not o)
    out["ttt_theory"] = "".join(ttt_theory(c, p, t) for _, c, p, t, o in cases if not o)
    pairs = [(c, p) for _, c in grid.clusters() for _, p in grid.policies()]
    out["closed_form_answers"] = "".join(codes[closed_form_answers(c, p)] for c, p in pairs)
    out["sizes"] = "".join(codes[closed_form_answers(c, p)] for _, c, p in grid.size_cases())
    opt = list(grid.optimize_cases())
    out["optimize_path"] = "".join(optimize_path(c, t, s) for _, c, t, s in opt)
    out["r_tau_path"] = "".join(r_tau_path(c, t, s) for _, c, t, s in opt)
    out["plan_whole"] = [old_whole_set(c, t, d, ch) for _, c, t, d, ch in grid.plan_cases()]
    merges = [{f"s{i}": m for i, m in enumerate(combo)} for combo in grid.MERGE_SETS]
    out["overall"] = [_overall(m) for m in merges]
    labels = []
    for m in merges:
        res = {"method": "detail"}
        _label(res, m)
        labels.append(res["method"])
    out["label"] = labels
    grid.CHOICES.write_text(json.dumps(out, indent=0) + "\n")


if __name__ == "__main__":
    main()
