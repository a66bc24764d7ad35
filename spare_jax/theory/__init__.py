"""Closed forms, by quantity. Each submodule states its derivations in its docstrings:

* ``theory.wipeout``: exact and asymptotic P(T > k), E[T], Var[T], E[uptime] (stacked, block).
* ``theory.depth``: P(d* <= d | k failures) by the queue DP, Omega, Bernoulli time profiles.
* ``theory.renewed``: any i.i.d. law with renewed ages (hazard change of variable, order statistics).
* ``theory.runs``: the longest circular run of failed groups (the paper's r* formula explained).
* ``theory.repair``: the wipe-out with repair (first order, transient hazard, exact chain on small N).
* ``theory.chain``: the depth and the wipe-out one failure apart (exact), the (failures, depth) chain.
* ``theory.stalls``: the stationary share of wall time stalled after failures and rejoins, with repair.

May import ``model``; not ``kernels`` (its sibling: the Monte Carlo is checked against these forms) nor any
wing above.
"""

from .wipeout import (
    availability, expected_failures, expected_failures_asymptotic, expected_uptime, log_coeff_power,
    moments_from_survival, survival_block, survival_exact, survival_poisson, survival_stacked)
from .depth import (
    EXACT_DP_MAX_N, binomial_mixture, depth_cdf, depth_cdf_bernoulli, depth_cdf_stacked_one, depth_profile_in_time,
    level_depths, overhead_theory, overhead_theory_any_n)
from .renewed import order_statistic_spacings, renewed_uptime_and_work, time_from_hazard
from .runs import harmonic_over_ln2, longest_circular_run, no_run_given_k
from .chain import depth_chain_joint, depth_next_survival

__all__ = [
    "availability", "expected_failures", "expected_failures_asymptotic", "expected_uptime", "log_coeff_power",
    "moments_from_survival", "survival_block", "survival_exact", "survival_poisson", "survival_stacked",
    "EXACT_DP_MAX_N", "binomial_mixture", "depth_cdf", "depth_cdf_bernoulli", "depth_cdf_stacked_one",
    "depth_profile_in_time", "level_depths", "overhead_theory", "overhead_theory_any_n",
    "order_statistic_spacings", "renewed_uptime_and_work", "time_from_hazard",
    "harmonic_over_ln2", "longest_circular_run", "no_run_given_k",
    "depth_chain_joint", "depth_next_survival",
]
