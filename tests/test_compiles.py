"""Costs are numbers, not program: changing C, R, D, K, tau, a stall, a rate, or SPARe's r and m, between two calls of the whole-run or
epochs with repair compile nothing (the optax habit of asserting that a second call does not recompile)."""

import dataclasses
import os

import pytest

from spare_jax.kernels.compiles import count_compiles
from spare_jax.kernels.repair import EpochOptions, simulate_repair
from spare_jax.kernels.run_driver import run_each, simulate_runs
from spare_jax.model.cluster import Cluster, Sampling
from spare_jax.model.failures import FailureModel
from spare_jax.model.placement import make_placement
from spare_jax.model.repair import Repair
from spare_jax.model.runsetup import RunSetup
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training


def _setup(repair, restart=10.0, cost=2.0, tau=60.0, n=16) -> RunSetup:
    model = FailureModel(system_mtbf_min=300.0 / n, reference_gpus=1000.0 * n)
    cluster = Cluster(groups=n, model=model, repair=repair)
    training = Training(work_hours=4.0, ckpt_cost_min=cost, restart_min=restart, reference_gpus=1000.0 * n)
    return RunSetup.build(cluster, training, "spare", 2, tau)


@pytest.mark.xdist_group("spare16-exp-pool")  # the shape and chunk of tests/test_runs.py's spare pool comparison
def test_changed_costs_compile_nothing_in_whole_runs():
    base = _setup(Repair(30.0, "exp", spares=2, hardware_repair_min=120.0))
    sampling = Sampling(count=16, seed=3, chunk_size=16)
    first = run_each(base, sampling)
    changed = [dataclasses.replace(base, ckpt_cost_min=3.0), dataclasses.replace(base, restart_min=11.0),
               dataclasses.replace(base, repair_time_min=31.0), dataclasses.replace(base, spares=3),
               dataclasses.replace(base, ckpt_interval_min=45.0), dataclasses.replace(base, hardware_repair_min=90.0),
               dataclasses.replace(base, group_mtbf_min=tuple(2 * x for x in base.group_mtbf_min)),
               dataclasses.replace(base, failure_stall_min=1.0), dataclasses.replace(base, rejoin_stall_min=0.5),
               dataclasses.replace(base, redundancy=4), dataclasses.replace(base, microbatches=3),
               dataclasses.replace(base, redundancy=8, microbatches=64)]
    with count_compiles() as seen:
        outs = [run_each(s, sampling) for s in changed]
    assert (seen.compiles, seen.lowerings) == (0, 0)
    assert all((o["ttt"] != first["ttt"]).any() for o in outs)  # each number reached the kernel
    summed = dataclasses.replace(sampling, chunk_size=512)
    simulate_runs(base, summed)
    with count_compiles() as seen:
        simulate_runs(changed[1], summed)
    assert (seen.compiles, seen.lowerings) == (0, 0)


def test_changed_repair_time_and_horizon_compile_nothing_in_epochs():
    pl = make_placement("stacked", 8, 2)
    model = FailureModel(system_mtbf_min=300.0 / 8, reference_gpus=8000.0)
    sampling = Sampling(count=256, seed=1)
    a = simulate_repair(pl, sampling, model=model, repair=Repair(30.0, "exp"), options=EpochOptions(max_time=1e4))
    with count_compiles() as seen:
        b = simulate_repair(pl, sampling, model=model, repair=Repair(31.0, "exp"), options=EpochOptions(max_time=2e4))
        c = simulate_repair(pl, sampling, model=FailureModel(system_mtbf_min=400.0 / 8, reference_gpus=8000.0),
                            repair=Repair(30.0, "exp"), options=EpochOptions(max_events=1 << 20))
    assert (seen.compiles, seen.lowerings) == (0, 0)
    assert len({a.uptime_mean_min, b.uptime_mean_min, c.uptime_mean_min}) == 3
    # the depth variant: m is a number of the epoch too
    d = simulate_repair(pl, sampling, model=model, scenario=Scenario(microbatches=2), repair=Repair(30.0, "exp"),
                        options=EpochOptions(track_depth=True))
    with count_compiles() as seen:
        e = simulate_repair(pl, sampling, model=model, scenario=Scenario(microbatches=4), repair=Repair(20.0, "exp"),
                            options=EpochOptions(track_depth=True))
    assert (seen.compiles, seen.lowerings) == (0, 0)
    assert d.overhead != e.overhead


def test_compile_cache_directory_follows_the_environment():
    from spare_jax.kernels.compile_cache import cache_dir

    assert cache_dir({"XDG_CACHE_HOME": "/c"}) == "/c/spare-jax/jax"
    assert cache_dir({}).endswith("/.cache/spare-jax/jax")
    assert cache_dir({"SPARE_JAX_COMPILE_CACHE": "/elsewhere", "XDG_CACHE_HOME": "/c"}) == "/elsewhere"
    assert cache_dir({"SPARE_JAX_COMPILE_CACHE": "off"}) is None
    assert cache_dir({"SPARE_JAX_COMPILE_CACHE": "OFF "}) is None


def test_the_suite_shares_one_cache_in_the_repository():
    import jax

    assert jax.config.jax_compilation_cache_dir.endswith(".jax_cache") or \
        os.environ.get("SPARE_JAX_COMPILE_CACHE") == jax.config.jax_compilation_cache_dir


def test_the_cache_keeps_every_program_however_quick_its_compile():
    """The suite's cache (set by conftest through ``enable_compile_cache``) keeps the small programs too, so its
    workers and the command lines it starts load them instead of compiling them again."""
    import jax

    from spare_jax.kernels.compile_cache import MIN_COMPILE_SECONDS

    if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" in os.environ:
        pytest.skip("JAX's own setting wins")
    assert jax.config.jax_persistent_cache_min_compile_time_secs == MIN_COMPILE_SECONDS == 0.0


@pytest.mark.xdist_group("spare16-exp-pool")
def test_bench_counts_the_compiles_of_whole_runs():
    """``bench``'s count (the persistent cache off): a call that changes only C, R, D, tau or a stall compiles
    nothing; the first call's compiles are reported beside it (0 here when this process compiled that shape)."""
    from spare_jax.suite.bench_compiles import CHANGED_COSTS, runs_compiles

    import jax

    out = runs_compiles(_setup(Repair(30.0, "exp", spares=2, hardware_repair_min=120.0)), Sampling(16, 3, 512))
    assert out["runs_compiles_changed_costs"] == 0 and out["runs_compiles_first_call"] >= 0
    assert out["runs_changed_costs"] == sorted(CHANGED_COSTS) and len(CHANGED_COSTS) >= 5
    assert jax.config.jax_enable_compilation_cache  # put back


def test_compile_log_of_a_command_and_bench_reads_it(tmp_path):
    """``SPARE_JAX_COMPILE_LOG``: a command run with the cache off writes its compiles and wall time;
    ``bench_compiles.plan_compiles`` reads that log of a command run as its own process, and says so when it fails."""
    from spare_jax.suite.bench_compiles import plan_compiles

    out = plan_compiles(("wipeout", "-N", "8", "-r", "2", "--trials", "2000", "--json"))
    assert out["plan_compiles"] >= 1 and out["plan_compile_seconds"] > 0
    assert out["plan_wall_seconds"] >= out["plan_compile_seconds"] * 0.5
    assert out["plan_command"] == "spare-jax wipeout -N 8 -r 2 --trials 2000"
    with pytest.raises(RuntimeError, match="exit 2"):
        plan_compiles(("wipeout", "-N", "8", "-r", "9"))


def test_compile_log_that_cannot_be_written_is_refused_before_the_work(monkeypatch, capsys):
    from spare_jax.cli.main import main

    monkeypatch.setenv("SPARE_JAX_COMPILE_LOG", "/proc/nope/compiles.json")
    assert main(["wipeout", "-N", "8", "-r", "2", "--trials", "1000", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip().count("\n") == 0 and "SPARE_JAX_COMPILE_LOG" in err
