"""Elastic training on the command line and in the planner: every group holds the whole model, a failed
group leaves and rejoins after repair while the others go on (whole training runs; the kernel itself is held
to the reference runs in tests/test_runs.py)."""
import json

import pytest

from spare_jax.cli import main
from spare_jax.model.repair import Repair
from spare_jax.planner.plan import Costs, Fleet, PlanOptions, plan


def _refused(argv, capsys, word):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and word in err[0], err
    return err[0]


def test_elastic_needs_a_repair_time_and_its_own_data_flag(capsys):
    _refused(["ttt", "--scheme", "elastic", "-N", "16", "--quiet"], capsys, "--repair-time")
    _refused(["ttt", "--scheme", "spare", "--elastic-data", "shrink", "-N", "16", "--quiet"], capsys,
             "--elastic-data")
    _refused(["plan", "--gpus", "4096", "--gpus-per-group", "256", "--schemes", "none,elastic", "--quiet"], capsys,
             "repair time")
    _refused(["plan", "--gpus", "4096", "--gpus-per-group", "256", "--schemes", "spare,foo", "--quiet"], capsys,
             "--schemes")


@pytest.mark.parametrize("data", ["rebalance", pytest.param("shrink", marks=pytest.mark.slow)])
def test_elastic_ttt_runs_and_its_slowdown_meets_the_stationary_one(capsys, data):
    """Over a 48-h run the groups are down independently with p = D / (MTBF + D) almost all the time (a
    run starts with every group up, so the measured slowdown sits a little below the stationary one)."""
    assert main(["ttt", "--scheme", "elastic", "--elastic-data", data, "-N", "16", "--group-mtbf-min", "200",
                 "--repair-time", "30", "--repair-law", "fixed", "--work-hours", "48", "--ckpt-interval", "60",
                 "--ckpt-cost", "2", "--restart", "10", "--runs", "100", "--json", "--quiet"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scheme"] == "elastic" and d["elastic_data"] == data and d["placement"] == "elastic"
    assert (d["method"], d["method_detail"]) == ("whole_runs", "whole training runs, event by event")
    assert abs(d["mc_slowdown"] / d["theory_slowdown"] - 1) < 0.01, d
    assert d["mc_slowdown"] < d["theory_slowdown"] + 4 * d["mc_slowdown_stderr"]
    # shrink keeps each survivor's shard: the slowdown is 1 / (1 - p); rebalance rounds the depth up
    want = 1.0 / (1.0 - 30.0 / 230.0) if data == "shrink" else None
    if want is not None:
        assert d["theory_slowdown"] == pytest.approx(want, rel=1e-6)


@pytest.mark.slow
def test_plan_compares_the_schemes_asked_for_with_elastic():
    res = plan(Fleet(4096, 256, repair=Repair(30.0, "fixed")), Costs(restart_min=10.0, ckpt_cost_min=2.0, work_hours=12.0),
               PlanOptions(runs=10, r_max=3, sensitivity=False, schemes=("elastic", "none")))
    assert list(res.schemes) == ["none", "elastic"]  # the table's order
    e = res.schemes["elastic"]
    assert e["mc_runs"] == 10 and e["mc_ttt_stderr_hours"] > 0 and e["elastic_data"] == "rebalance"
    assert res.verdict["scheme"] in ("none", "elastic")
    assert res.bound["ttt_hours"] < e["ttt_hours"]
    out = res.to_json()
    assert set(out["schemes"]) == {"none", "elastic"} and list(out)[0] == "verdict"



def test_the_default_schemes_add_elastic_with_a_repair_time():
    from spare_jax.planner.plan import _check_schemes

    assert _check_schemes(None, None) == ("spare", "rep", "none")
    assert _check_schemes(None, Repair(30.0)) == ("spare", "rep", "none", "elastic")
    assert _check_schemes(("none", "spare", "none"), None) == ("spare", "none")
    with pytest.raises(ValueError, match="repair time"):
        _check_schemes(("elastic",), None)
