import itertools

import numpy as np
import pytest


def brute_survival(placement):
    """P(T > k) by enumerating every failure subset: a shard is lost iff all its holders failed."""
    n = placement.groups
    holders = placement.holders
    alive_ok = np.zeros(n + 1)
    total = np.zeros(n + 1)
    for mask in range(1 << n):
        failed = np.array([(mask >> g) & 1 for g in range(n)], dtype=bool)
        k = int(failed.sum())
        total[k] += 1
        if not failed[holders].all(axis=1).any():
            alive_ok[k] += 1
    return alive_ok / total


def brute_expected_t_by_orders(placement):
    """E[T] by enumerating every failure order (N! permutations)."""
    n = placement.groups
    holders = placement.holders
    total = 0
    count = 0
    for order in itertools.permutations(range(n)):
        failed = np.zeros(n, dtype=bool)
        for i, g in enumerate(order, start=1):
            failed[g] = True
            if failed[holders].all(axis=1).any():
                total += i
                break
        count += 1
    return total / count


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# The slow tier: statistical checks at N = 600, whole-experiment smoke runs, multi-device and multi-process
# checks, and end-to-end command-line runs that compile many kernels. `make test` skips them (it must stay
# near 5 minutes on 2 cores); `make test-all` (or `pytest`) runs everything. Each stays a real test: run
# with `pytest -m slow` it fails when its check fails.
SLOW = {
    # the recorded --json of the heavier invocations (the fast tier keeps wipeout, overhead, reorder, ttt,
    # optimize and presets)
    "tests/test_golden_cli.py::test_json_unchanged[wipeout_scenario]",
    "tests/test_golden_cli.py::test_json_unchanged[wipeout_repair]",
    "tests/test_golden_cli.py::test_json_unchanged[overhead_microbatches]",
    "tests/test_golden_cli.py::test_json_unchanged[place]",
    "tests/test_golden_cli.py::test_json_unchanged[plan]",
    "tests/test_golden_cli.py::test_json_unchanged[ttt_none]",
    "tests/test_golden_cli.py::test_json_unchanged[ttt_repair]",
    "tests/test_golden_cli.py::test_json_unchanged[ttt_spares]",
    "tests/test_golden_cli.py::test_json_unchanged[ttt_elastic]",
    "tests/test_golden_cli.py::test_json_unchanged[ttt_scenario]",
    "tests/test_golden_cli.py::test_json_unchanged[ttt_microbatches]",
    "tests/test_golden_cli.py::test_json_unchanged[overhead_repair]",
    "tests/test_golden_cli.py::test_json_unchanged[optimize_curves]",
    "tests/test_golden_cli.py::test_json_unchanged[optimize_repair]",
    "tests/test_golden_cli.py::test_json_unchanged[plan_failure_log]",
    "tests/test_golden_cli.py::test_json_unchanged[plan_scenario]",
    "tests/test_golden_cli.py::test_json_unchanged[plan_sensitivity]",
    "tests/test_devices.py::test_one_and_four_devices_give_identical_results",
    "tests/test_suite.py::test_scenarios_experiment_at_toy_size",
    "tests/test_multiprocess.py::test_two_processes_give_the_json_of_one[overhead]",
    "tests/test_repair_depth.py::test_cli_repair_overhead_ttt_optimize_and_rare",
    "tests/test_repair_depth.py::test_depth_never_repaired_equals_static_overhead",
    "tests/test_overhead.py::test_overhead_chunk_independent[block]",
    "tests/test_ttt_weibull.py::test_kept_chain_exponential_is_memoryless_and_chunk_independent",
    "tests/test_ttt_weibull.py::test_cli_ages",
    "tests/test_ttt_weibull.py::test_kept_ages_n600_direction",
    "tests/test_place.py::test_search_evaluator_agrees_with_the_engine_and_domains_favour_interleaving",
    "tests/test_scenario.py::test_overhead_default_scenario_is_unchanged_and_job_wide_limit",
    "tests/test_scenario.py::test_scenario_ttt_runs_agree_with_the_renewal_estimate_and_the_limits",
    "tests/test_scenario.py::test_cli_optimize_and_ttt_take_job_wide_failures",
    "tests/test_scenario.py::test_acceptance_n600_domains_against_the_reference",
    "tests/test_scenario.py::test_job_wide_mc_matches_the_exact_composition_at_n600",
    "tests/test_overhead.py::test_mc_overhead_agrees_with_theory_at_n600",
    "tests/test_depth.py::test_kernel_depth_equals_hopcroft_karp_on_2000_states",
    "tests/test_reorder.py::test_controller_depth_equals_kernel_on_1000_traces",
    "tests/test_repair.py::test_never_repaired_equals_static_kernel",
    "tests/test_repair.py::test_chunk_size_independent",
    "tests/test_suite.py::test_every_stage_runs_and_writes_its_outputs",
    "tests/test_overhead.py::test_overhead_chunk_independent[stacked]",
    "tests/test_prng_and_sums.py::test_overhead_does_not_overflow_at_a_huge_mtbf",
    "tests/test_multiprocess.py::test_two_processes_give_the_json_of_one[wipeout]",
    "tests/test_multiprocess.py::test_a_multiprocess_run_killed_mid_run_resumes_to_the_uninterrupted_result",
    "tests/test_multiprocess.py::test_a_killed_process_leaves_no_json_and_every_process_fails_with_one_line[coordinator]",
    "tests/test_overhead.py::test_replication_and_trivial_cases",
    "tests/test_overhead.py::test_large_n_overhead_theory_against_mc",
    "tests/test_overhead.py::test_weibull_overhead_runs_with_sampled_sojourns",
    "tests/test_scenario.py::test_overhead_under_a_scenario_against_brute_force[contiguous-4000.0]",
    "tests/test_ttt_weibull.py::test_kept_chain_against_numpy_chain[1.5]",
    # moved when micro-batches, the planner and the CLI audit added ~125 fast tests (each has a fast sibling:
    # the plain bit-identity check, the scenario brute force, the bad-input and config-rule tests)
    "tests/test_device_reduce.py::test_overhead_statistics_bit_identical_to_host_accumulation",
    "tests/test_device_reduce.py::test_wipeout_statistics_bit_identical_to_host_accumulation_for_any_chunk[scenario]",
    "tests/test_resume_and_cli.py::test_killed_run_resumes_to_the_uninterrupted_result",
    "tests/test_scenario.py::test_cli_scenario_flags_and_config_table",
    "tests/test_presets.py::test_cli_preset_defaults_and_what_wins",
    "tests/test_scenario.py::test_cli_ttt_and_optimize_under_domains",
    "tests/test_wipeout_mc.py::test_same_seed_any_chunk_size_identical_histogram",
    "tests/test_cli_bad_input.py::test_two_processes_on_one_out_dir",
    "tests/test_plan.py::test_cli_plan_preset_llama3_16k",
    "tests/test_microbatch.py::test_overhead_monte_carlo_agrees_with_theory",
    "tests/test_microbatch.py::test_overhead_with_one_microbatch_is_bit_for_bit_the_default",
    "tests/test_microbatch.py::test_overhead_cli_with_microbatches",
    "tests/test_microbatch.py::test_host_matcher_path_with_microbatches_agrees_with_theory_on_stacked",
    "tests/test_microbatch.py::test_capacity_with_one_microbatch_is_the_depth_and_integer_depths_do_not_change",
    "tests/test_microbatch.py::test_depth_thresholds_follow_the_capacity_along_failure_orders[stacked-30-3-4]",
    "tests/test_microbatch.py::test_depth_thresholds_follow_the_capacity_along_failure_orders[block-24-4-3]",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        base = item.nodeid.split("[")[0]
        if item.nodeid in SLOW or base in SLOW:
            item.add_marker(pytest.mark.slow)
