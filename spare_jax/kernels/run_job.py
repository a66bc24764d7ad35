"""Job-wide failures (docs/runs.md#what-a-run-is; ``RunShape.job_wide``, absent without them): one exponential
clock; its event, while computing or checkpointing, loses the work since the last checkpoint and starts a
restart (``run_phase.change``; an epoch ends there); nothing during a restart. It draws its next event."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..model.prng import INIT_STREAM, WIPEOUT_STREAM, exponential_from_bits, trial_bits


class Params(NamedTuple):
    job_mtbf_min: np.ndarray  # float32[]: the job-wide clock's mean


def lower(setup) -> Params:
    return Params(np.float32(setup.job_mtbf_min))


class State(NamedTuple):
    job: jax.Array  # the next job-wide failure


def init(kx, ids) -> State:
    """The first event: a whole run's from stream ``INIT_STREAM + 2``, an epoch's from stream
    ``WIPEOUT_STREAM + 1 + L`` (the static wipe-out kernels')."""
    stream = WIPEOUT_STREAM + 1 + len(kx.shape.domain_counts) if kx.epoch else INIT_STREAM + 2
    return State(exponential_from_bits(trial_bits(kx.words, ids, 1, stream=stream)[:, 0]) * kx.p.job.job_mtbf_min)


def redraw(kx, s: State, is_j, u1, tn) -> State:
    return State(jnp.where(is_j, tn - jnp.log1p(-u1) * kx.p.job.job_mtbf_min, s.job))
