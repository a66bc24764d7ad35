"""The library answers what the command prints: ``measure.wipeout``/``overhead`` on a ``Cluster`` give the
``--json`` of ``spare-jax wipeout``/``overhead`` (timing keys aside), with and without repair."""
import json

import pytest

from spare_jax.measure import overhead, wipeout
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.repair import Repair
from spare_jax.model.scenario import Scenario

TIMING = {"elapsed_s", "trials_per_s", "epochs_per_s", "events_per_s"}


def _cli(argv, capsys):
    from spare_jax.cli import main

    assert main([*argv, "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def _same(report, printed):
    got = {k: v for k, v in json.loads(json.dumps(report.to_json())).items() if k not in TIMING}
    assert got == {k: v for k, v in printed.items() if k not in TIMING}


@pytest.mark.parametrize("cluster,argv", [
    (Cluster(24), ["wipeout", "-N", "24", "-r", "3", "--trials", "500", "--seed", "4"]),
    pytest.param(Cluster(24, scenario=Scenario(job_mtbf_min=2000.0)),
                 ["wipeout", "-N", "24", "-r", "3", "--trials", "500", "--seed", "4", "--job-mtbf-min", "2000"],
                 marks=pytest.mark.slow),
    pytest.param(Cluster(24, repair=Repair(30.0)),
                 ["wipeout", "-N", "24", "-r", "3", "--trials", "100", "--seed", "4", "--repair-time", "30"],
                 marks=pytest.mark.slow),
], ids=["static", "job-wide", "repair"])
def test_wipeout_report_is_the_json(cluster, argv, capsys):
    _same(wipeout(cluster, 3, sampling=Sampling(int(argv[argv.index("--trials") + 1]), seed=4)), _cli(argv, capsys))


@pytest.mark.slow
@pytest.mark.parametrize("cluster,argv", [
    (Cluster(24), ["overhead", "-N", "24", "-r", "3", "--epochs", "200", "--seed", "4"]),
    (Cluster(24, repair=Repair(30.0)),
     ["overhead", "-N", "24", "-r", "3", "--epochs", "50", "--seed", "4", "--repair-time", "30"]),
], ids=["static", "repair"])
def test_overhead_report_is_the_json(cluster, argv, capsys):
    _same(overhead(cluster, 3, sampling=Sampling(int(argv[argv.index("--epochs") + 1]), seed=4)), _cli(argv, capsys))


@pytest.mark.slow
def test_the_library_refuses_what_it_cannot_simulate():
    # micro-batches with repair are simulated now (epochs with repair track c*/m; issue "Every lever composes")
    assert overhead(Cluster(24, scenario=Scenario(microbatches=2), repair=Repair(30.0)), 3,
                    sampling=Sampling(10)).to_json()["microbatches"] == 2
    # so are Weibull clocks with repair (a rejoined group draws a new clock); the exponential theory is left out
    out = wipeout(Cluster(24, FailureModel(distribution="weibull", weibull_shape=0.7), repair=Repair(30.0)), 3,
                  sampling=Sampling(10)).to_json()
    assert out["distribution"] == "weibull" and out["theory_epoch_uptime_min"] is None


@pytest.mark.parametrize("policy,training,argv", [
    ({"scheme": "spare", "redundancy": 3}, {"work_hours": 100.0},
     ["ttt", "-N", "24", "-r", "3", "--runs", "10", "--seed", "2", "--work-hours", "100"]),
    ({"scheme": "none"}, {"work_hours": 100.0, "ckpt_interval_min": 30.0},
     ["ttt", "-N", "24", "--scheme", "none", "--runs", "10", "--seed", "2", "--work-hours", "100",
      "--ckpt-interval", "30"]),
], ids=["spare", "none-at-tau"])
def test_time_to_train_report_is_the_json(policy, training, argv, capsys):
    from spare_jax.model.training import Training
    from spare_jax.ttt import Policy, time_to_train

    report = time_to_train(Cluster(24), Training(**training), Policy(**policy), Sampling(10, seed=2))
    _same(report, _cli(argv, capsys))


@pytest.mark.slow
def test_optimize_report_is_the_json(capsys):
    from spare_jax.model.training import Training
    from spare_jax.ttt import Space, optimize

    report = optimize(Cluster(60), Training(), Space(r_max=6))
    _same(report, _cli(["optimize", "-N", "60", "--r-max", "6"], capsys))
