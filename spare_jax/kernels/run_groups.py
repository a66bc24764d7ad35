"""The groups (docs/runs.md#what-a-run-is): per ring position whether the group is down and its next time (an
up group's failure, a repairing group's rejoin, +inf for one that waits for the next global restart), with
the block minima of those times (``events.all_block_mins``: the next group event is the least of them).

Its events: a group's clock (``event``: a failure, which starts a repair while computing or checkpointing,
or with a finite pool takes a spare or a ticket, ``run_pool``; or a rejoin, with a new clock); a restart's
end (``restart_end``: every down group replaced with a new clock, every group with renewed ages). ``reblock``
ends the step: the block minima of the clocks it set, and a restart cancels the repairs in flight."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .depth import DOWN_LIST_PAD
from .events import all_block_mins, block_min_at, min_first, on_rows, row_bits, row_bits_at
from ..model.prng import bits_to_uniform
from .run_clocks import clock, repair_end


class State(NamedTuple):
    down: jax.Array  # [C, N] the group is down
    nxt: jax.Array  # [C, N] an up group's failure time, a repairing group's rejoin (+inf: replaced at a restart)
    bv: jax.Array  # [C, blocks] the least clock of each block of ``nxt`` (``events.all_block_mins``)
    bi: jax.Array  # [C, blocks] and its position
    failures: jax.Array  # the group failures (a domain event's groups each): an output


class Hit(NamedTuple):
    """What a group's clock did this step."""

    fail: jax.Array  # a group failed
    rejoin: jax.Array  # a group rejoined
    hw_end: jax.Array | None  # with the trace's ends kept: the end of the period that failed it


def init(kx, nxt) -> State:
    c = nxt.shape[0]
    bv, bi = all_block_mins(nxt, kx.width)
    return State(jnp.zeros((c, kx.n), bool), nxt, bv, bi, jnp.zeros((c,), jnp.float32))


def next_event(kx, s: State):
    """The earliest group clock of each run (the least of the block minima) and its ring position."""
    gmin, gb = min_first(s.bv)
    if kx.replay:  # at one instant a return first, then failures in physical group order
        from .run_trace import first

        return gmin, first(kx, s.nxt, s.down, gmin)
    return gmin, jnp.take_along_axis(s.bi, gb[:, None], axis=1)[:, 0]


def restart_end(kx, s: State, tr, rate, ends, tn, k_wide, ids):
    """A restart's end (``ends``): every down group replaced with a new clock (all of them with renewed
    ages); ``tr``: the trace's ends (or None), ``rate``: the rate part's state (its down list)."""
    if kx.epoch:  # an epoch has no restart
        return s, tr
    n, renewed = kx.n, kx.shape.renewed

    def full_ends(rows, sub, ends):
        nxt_r, down_r = sub[:2]
        u_r = bits_to_uniform(row_bits(kx.words, ids[rows], k_wide[rows], n)) if kx.draws else None
        replace = ends[:, None] & (down_r | renewed)
        new, new_end = clock(kx, u_r, jnp.broadcast_to(tn[rows][:, None], (rows.shape[0], n)),
                             jnp.arange(n, dtype=jnp.int32)[None, :], ids[rows][:, None])
        out = (jnp.where(replace, new, nxt_r), jnp.where(ends[:, None], False, down_r))
        return out + ((jnp.where(replace, new_end, sub[2]),) if kx.keep_end else ())

    def listed_ends(rows, sub, ends):  # only the listed down groups draw: the same bits at their columns
        def from_list():
            nxt_r, down_r = sub
            pos = rate.dl[rows]  # ascending, free slots DOWN_LIST_PAD (dropped by the scatter)
            cols = jnp.minimum(pos, n - 1)
            u_r = bits_to_uniform(row_bits_at(kx.words, ids[rows], k_wide[rows], n, cols))
            new, _ = clock(kx, u_r, tn[rows][:, None], cols, ids[rows][:, None])
            pos = jnp.where(ends[:, None], pos, DOWN_LIST_PAD)
            at = jnp.arange(rows.shape[0])[:, None]
            return (nxt_r.at[at, pos].set(new, mode="drop"), jnp.where(ends[:, None], False, down_r))

        return jax.lax.cond(jnp.all(rate.dok[rows] | ~ends), from_list, lambda: full_ends(rows, sub, ends))

    fn = listed_ends if kx.listed and not renewed and not kx.replay else full_ends
    if kx.keep_end:
        nxt, down, fend = on_rows(ends, fn, (s.nxt, s.down, tr.fend), kx.wide_cap)
        return s._replace(nxt=nxt, down=down), tr._replace(fend=fend)
    nxt, down = on_rows(ends, fn, (s.nxt, s.down), kx.wide_cap)
    return s._replace(nxt=nxt, down=down), tr


def hit(kx, s: State, tr, is_g, gi) -> Hit:
    """Whether the group of a clock event fails or rejoins."""
    was_down = jnp.take_along_axis(s.down, gi[:, None], axis=1)[:, 0]
    hw_end = jnp.take_along_axis(tr.fend, gi[:, None], axis=1)[:, 0] if kx.keep_end else None
    return Hit(is_g & ~was_down, is_g & was_down, hw_end)


def event(kx, s: State, tr, h: Hit, g_repair, pick, u0):
    """A group's clock: a failure starts its repair (``g_repair``: its end, +inf for none) or a rejoin draws
    a new clock."""
    rows, gi, tn, is_g = kx.rows, pick.gi, pick.tn, pick.is_g
    new_clock, new_end = clock(kx, u0, tn, gi, pick.ids)
    g_next = jnp.where(h.rejoin, new_clock, g_repair)
    if kx.keep_end:
        tr = tr._replace(fend=tr.fend.at[rows, gi].set(jnp.where(h.rejoin, new_end, tr.fend[rows, gi])))
    nxt = s.nxt.at[rows, gi].set(jnp.where(is_g, g_next, s.nxt[rows, gi]))
    down = s.down.at[rows, gi].set(jnp.where(is_g, h.fail, s.down[rows, gi]))
    return s._replace(nxt=nxt, down=down, failures=s.failures + h.fail), tr


def own_repair(kx, h: Hit, working, u0, tn):
    """The end of a failed group's repair without a finite pool (none outside computing or checkpointing)."""
    return jnp.where(working, h.hw_end if kx.from_trace else repair_end(kx, u0, tn), kx.inf)


def reblock(kx, s: State, one, wide, to_restart) -> State:
    """The block minima: the block of the one clock (``one``) an event set, or all of them in a run that
    changed several (``wide``: a restart, a domain event); a restart cancels the repairs in flight."""
    rows, width, down = kx.rows, kx.width, s.down
    bv1, bi1 = block_min_at(s.nxt, one, width)
    blk = one // width
    bv, bi = s.bv.at[rows, blk].set(bv1), s.bi.at[rows, blk].set(bi1)

    def every_block(r, sub, sub_wide):
        nxt_r, bv_r, bi_r = sub
        nxt_r = jnp.where(to_restart[r][:, None] & down[r] & sub_wide[:, None], kx.inf, nxt_r)
        bv_n, bi_n = all_block_mins(nxt_r, width)
        keep = ~sub_wide[:, None]
        return nxt_r, jnp.where(keep, bv_r, bv_n), jnp.where(keep, bi_r, bi_n)

    nxt, bv, bi = on_rows(wide, every_block, (s.nxt, bv, bi), kx.wide_cap)
    return s._replace(nxt=nxt, bv=bv, bi=bi)


def outputs(s: State) -> dict:
    return {"failures": s.failures}
