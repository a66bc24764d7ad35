r"""Time-to-train with checkpointing: SPARe+CKPT, Rep+CKPT and CKPT alone.

Model. A training run needs ``W`` hours of failure-free work at depth 1. It runs in *epochs* (restart ->
wipe-out, uptime U). Inside an epoch, compute windows of ``tau`` wall-clock minutes alternate with blocking
checkpoints of ``C`` minutes: checkpoint i completes at ``c_i = i (tau + C)``. Progress accrues at rate
``1/d(t)`` (``spare``: the adaptive depth), ``1/r`` (``rep``), ``1`` (``none``, r = 1, every failure a
wipe-out). Work is *committed* when a checkpoint completes; at a wipe-out the uncommitted work is lost, a
restart costs ``R`` and the next epoch starts from the last checkpoint with every group restored. The run
ends when committed work reaches ``W`` (at a checkpoint).

Per epoch the depth is a step function with breakpoints ``b_0 = 0 <= b_1 <= ... <= b_r = U`` (depth d on
``[b_{d-1}, b_d)``). With ``Phi(t) = floor(t/T) tau + min(t mod T, tau)`` the compute time in ``[0, t]``
(``T = tau + C``), the work committed in an epoch with ``m = floor(U/T)`` checkpoints is

.. math::  Y = \sum_{d=1}^{r} \frac{\Phi(\min(b_d, mT)) - \Phi(\min(b_{d-1}, mT))}{d}.

Closed form (renewal-reward over epochs). Epochs are i.i.d. cycles of length ``U + R`` earning Y, so

.. math::  \mathrm{TTT} \approx W \, \frac{E[U] + R}{E[Y]}, \qquad
           E[Y] = \sum_{i \ge 1} S(c_i) \big(H(s_i + \tau) - H(s_i)\big),

with ``s_i = c_i - T``, ``S(t) = P(U > t)`` and ``H(t) = \int_0^t E[1/d(u) | U > u] du``. For exponential
failures both come from the exact theory: at time t the failed set is a uniform k-subset with
``k ~ Binomial(N, 1 - e^{-lambda t})``, so ``S(t) = sum_k Bin_k P(T > k)`` and
``E[1/d(t); U > t] = sum_k Bin_k sum_d (F[k,d] - F[k,d-1]) / d`` (``theory.depth_cdf``). The one
approximation is that the depth during a compute window is taken independent of surviving the rest of the
window and its checkpoint (``E[1/d(u); U >= c_i] ~ E[1/d(u) | U > u] S(c_i)``); for ``none`` and ``rep``
it is exact, and for memoryless wipe-outs (``none``) the formula equals the classical
``(W/tau)(1/lambda + R)(e^{lambda T} - 1)``. The ratio is exact as W/E[U] -> infinity; its error against
the Monte Carlo is measured in ``experiments/ttt_vs_r.py``.

The sum over checkpoints runs over every checkpoint up to the end of the profile grid (where S < 1e-13),
in blocks, with no cap on their number (tau + C may be 10^-5 of the mean epoch: 10^7 terms).

Other failure laws. With *renewed* ages (``AGES``: every group's clock restarts at each restart) the failed
set at time t is i.i.d. Bernoulli(F(t)) for any continuous law, so the same profile holds on the grid of the
cumulative hazard ``x`` (``F = 1 - e^{-x}``) mapped to minutes by ``theory.time_from_hazard``
(Weibull ``t = scale x^{1/k}``); ``theory.renewed_uptime_and_work`` gives E[U] and E[W] exactly by
order-statistic spacings. With *kept* ages (the default: a restart replaces only the failed groups) and a
non-exponential law there is no closed form; the Monte Carlo below simulates the Markov chain of ages.

Young (``sqrt(2 C M)``) and Daly (``sqrt(2 C (M + R))``) intervals, with M = E[U] the mean time between
wipe-outs, are baselines; ``optimize_tau`` minimises the closed form over ``log tau`` with optax (Adam).

Monte Carlo. Epochs (U and depth breakpoints) are sampled by the JAX kernels (``overhead_kernel`` for
``spare``, ``wipeout_kernel`` for ``rep``, exponential/Weibull minima for ``none``); a pool of epochs is
independent of tau and C, so every (tau, C) is evaluated on the same epochs (common random numbers). The
per-epoch committed work is the vectorised formula above; runs are consecutive epochs of the pool until
the committed work reaches W.
With kept ages and a non-exponential law, epochs come from ``sample_kept_chains``: independent chains
(training runs on independent clusters), each a ``lax.scan`` over epochs carrying the per-group ages, after
a burn-in; ``simulate_ttt_runs`` takes one run per chain and samples until it has exactly the requested runs.

Modules: ``config`` (the training configuration, shared by all), ``epochs`` (epoch pools and the work they
commit), ``closed_form``, ``exact`` (with exponential failures and no repair, the TTT interval by interval:
exact for rep and none, approximate for spare), ``montecarlo``, ``pool`` (pools under a scenario or repair), ``policy`` (the
proactive restart). May import ``model``, ``kernels`` and ``theory``; not ``rectlr`` (its sibling) nor any
wing above.
"""

from .config import AGES, RESTART_SCALING, SCHEMES, Training, check_ages, scheme_placement
from .closed_form import (
    EpochProfile, JAX_MAX_CKPTS, best_tau_grid, epoch_profile, optimize_r_tau, optimize_tau, ttt_theory, young_daly)
from .epochs import EpochPool
from .exact import closed_form_applies, closed_form_ttt, exact_applies
from .montecarlo import (
    epochs_needed, kept_burn_in, residual_times, sample_epochs, sample_kept_chains, simulate_ttt, simulate_ttt_runs)
from .answer import Policy, Space, closed_form_answers, optimize, time_to_train

__all__ = [
    "AGES", "RESTART_SCALING", "SCHEMES", "Training", "check_ages", "scheme_placement",
    "EpochProfile", "JAX_MAX_CKPTS", "best_tau_grid", "epoch_profile", "optimize_r_tau", "optimize_tau", "ttt_theory",
    "young_daly",
    "EpochPool",
    "closed_form_applies", "closed_form_ttt", "exact_applies",
    "epochs_needed", "kept_burn_in", "residual_times", "sample_epochs", "sample_kept_chains", "simulate_ttt",
    "simulate_ttt_runs",
    "Policy", "Space", "closed_form_answers", "optimize", "time_to_train",
]
