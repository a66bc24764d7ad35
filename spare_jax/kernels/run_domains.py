"""Failure domains (docs/runs.md#what-a-run-is; ``RunShape.domain_counts``, absent without any): one exponential
clock per domain; at its event the domain's up members go down as one event, while computing or
checkpointing (nothing during a restart), each starting its repair (with a finite pool the first free ones by
physical id take spares, ``run_pool``); the domain draws its next event."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..model.prng import INIT_STREAM, WIPEOUT_STREAM, exponential_from_bits, trial_bits
from .events import min_first
from .run_clocks import repair_end


class Params(NamedTuple):
    domain_of: np.ndarray  # int32[L, N]: each ring position's global domain index at each level
    domain_mtbf_min: np.ndarray  # float32[domains]: each domain's mean time between events


def lower(setup) -> Params:
    """The domain tables of a ``RunSetup`` (``domain_tables``) in its ring order."""
    return Params(*domain_tables(setup.domains, np.asarray(setup.ring), setup.groups))


def domain_tables(levels, ring, groups: int) -> tuple:
    """``(domain_of, domain_mtbf_min)`` of the failure domains ``levels`` (per level ``(members, mtbf)``,
    ``members[g]`` physical group g's domain) in the ring order ``ring``: ``int32[L, N]`` each ring position's
    global domain index at each level, ``float32[max(1, domains)]`` each domain's mean (one 1.0 without any)."""
    dom_idx, dom_mean, offset = [], [], 0
    for members, mtbf in levels:
        members = np.asarray(members)
        dom_idx.append(members[ring] + offset)
        count = int(members.max()) + 1
        dom_mean += [mtbf] * count
        offset += count
    return (np.stack(dom_idx).astype(np.int32) if dom_idx else np.zeros((0, groups), np.int32),
            np.asarray(dom_mean if dom_mean else [1.0], np.float32))


class State(NamedTuple):
    dom: jax.Array  # [C, domains] each failure domain's next event


def init(kx, ids) -> State:
    """The first events: a whole run's from stream ``INIT_STREAM + 1``, an epoch's level l from stream
    ``WIPEOUT_STREAM + 1 + l`` (the static wipe-out kernels')."""
    mean = kx.p.domains.domain_mtbf_min
    if kx.epoch:
        offsets = np.cumsum((0,) + kx.shape.domain_counts)
        return State(jnp.concatenate([exponential_from_bits(trial_bits(kx.words, ids, count,
                                                                       stream=WIPEOUT_STREAM + 1 + i))
                                      * mean[None, offsets[i]:offsets[i] + count]
                                      for i, count in enumerate(kx.shape.domain_counts)], axis=1))
    return State(exponential_from_bits(trial_bits(kx.words, ids, kx.nd, stream=INIT_STREAM + 1)) * mean[None, :])


def next_event(s: State):
    """``(time, domain)``: each run's next domain event."""
    return min_first(s.dom)


def members(kx, di, down, dom_hit):
    """``[C, N]``: the up groups of the domain ``di`` of a run that takes its event (``dom_hit``)."""
    return jnp.any(kx.p.domains.domain_of[None, :, :] == di[:, None, None], axis=1) & ~down & dom_hit[:, None]


def repairs(kx, members, nxt, u_wide, tn):
    """Without a finite pool: every member starts its repair."""
    return jnp.where(members, repair_end(kx, u_wide, tn[:, None]), nxt)


def redraw(kx, s: State, di, is_d, u1, tn) -> State:
    """The domain of this step's event draws its next one."""
    new_dom = tn - jnp.log1p(-u1) * kx.p.domains.domain_mtbf_min[di]
    which = jnp.arange(kx.nd, dtype=jnp.int32)[None, :] == di[:, None]
    return State(jnp.where(which & is_d[:, None], new_dom[:, None], s.dom))
