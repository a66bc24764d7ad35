"""What the plan's verdict says beside its answer: the batch it assumes (and so the micro-batch counts the joint
search tries), what else it assumes (stalls, repair, spares, the failures beyond i.i.d. group failures), and what
the limit's ideal gives up (its batch changes while groups are down)."""

from __future__ import annotations

import math


def check_number(name: str, value, low: float, integer: bool = False, high: float = math.inf):
    """``value`` as a finite number in ``low``..``high`` (a whole one with ``integer``): ValueError naming ``name``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < low or v > high:
        raise ValueError(f"{name} must be a finite number in {low:g}..{high:g}, got {value!r}")
    if integer:
        if not v.is_integer():
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        return int(v)
    return v


def _whole(name: str, value, low: int, high: float = math.inf) -> int:
    """``value`` as a whole number in ``low``..``high`` (ValueError naming ``name`` otherwise)."""
    return int(check_number(name, value, low, True, high))


def batch_assumed(global_batch_seqs, max_microbatches, n: int, repair, space, given_m: int = 1) -> dict:
    """The batch the plan assumes: ``{microbatches: the m searched (None: the space's), text, inputs}``. A
    shard cannot be cut into more micro-batches than it has sequences: with ``global_batch_seqs`` B, m <=
    floor(B / N); with ``max_microbatches`` M, m <= M; m searched over the powers of two up to that bound,
    and the bound. Neither: the search's own grid (m <= 8 by default), or without repair the ``given_m``
    micro-batches per shard of the scenario."""
    given = {"global_batch_seqs": global_batch_seqs, "max_microbatches": max_microbatches}
    if global_batch_seqs is not None and max_microbatches is not None:
        raise ValueError("give the global batch (global_batch_seqs) or the most micro-batches per shard "
                         "(max_microbatches), not both")
    if global_batch_seqs is None and max_microbatches is None:
        if space is None:
            return {"microbatches": None, "inputs": given,
                    "text": f"Batch: {given_m:,} micro-batches per shard (given)." if given_m > 1 else
                    "Batch: whole shards, one micro-batch each (--microbatches M cuts them)."}
        ms = sorted({int(m) for m in space.microbatch_grid})
        return {"microbatches": None, "inputs": given,
                "text": f"Batch not given: micro-batches per shard searched up to {max(ms)} "
                        f"({counts_text(ms)}); --global-batch-seqs B or --max-microbatches M lets finer ones be "
                        "searched."}
    if repair is None:
        raise ValueError("the batch (global_batch_seqs, max_microbatches) sets the micro-batch counts the joint "
                         "search tries: it needs repair (a repair time, or a finite spare pool)")
    from ..model.scenario import MAX_MICROBATCHES

    if global_batch_seqs is not None:
        b = _whole("global_batch_seqs", global_batch_seqs, 1)
        top = b // n
        if top < 1:
            raise ValueError(f"global_batch_seqs ({b:,}) must be at least the number of groups ({n:,}): every "
                             "group's shard needs a sequence")
        why = f"a global batch of {b:,} sequences, {top:,} per group's shard"
    else:
        top = _whole("max_microbatches", max_microbatches, 1, MAX_MICROBATCHES)
        why = f"at most {top:,} micro-batches per shard (given)"
    top = min(top, MAX_MICROBATCHES)
    ms = sorted({2 ** k for k in range(top.bit_length()) if 2 ** k <= top} | {top})
    return {"microbatches": tuple(ms), "inputs": given,
            "text": f"Batch assumed: {why}; micro-batches per shard searched over {counts_text(ms)}."}


def counts_text(ms) -> str:
    """'1, 2, 4, 8', or '1, 2, 4, ..., 1,024, 1,747' where the list is long."""
    ms = [f"{m:,}" for m in ms]
    return ", ".join(ms if len(ms) <= 8 else ms[:3] + ["..."] + ms[-2:])


def assumptions(cfg, repair, scenario) -> list:
    """What the answer assumes, in phrases: the stalls, the repair and its spares, the failures beyond the
    i.i.d. group failures (job-wide interruptions, domains, lemons)."""
    from .table import describe_scenario

    out = [f"a stall of {cfg.failure_stall_min:g} min per group failure and {cfg.rejoin_stall_min:g} min per rejoin"
           if cfg.stalls else "no stall per group failure or rejoin"]
    if repair is None:
        out.append("no repair: a failed group waits for the next global restart")
    else:
        d = repair.describe()
        if d.get("repair_time_min") is not None:
            law = d.get("repair_law", "fixed")
            out.append(f"repair {d['repair_time_min']:g} min ({law}) without a global restart")
        out.append("a spare always at hand" if d.get("spares") is None else
                   f"{d['spares']:,} spare node sets, each back {d['hardware_repair_min']:g} min after it failed")
    desc = {} if scenario is None else scenario.describe()
    text = describe_scenario(desc)
    if text != "none":
        out.append(text)
    if "job_mtbf_min" not in desc and "job_fraction" not in desc:
        out.append("no job-wide interruptions")
    return out


def trade_lines(n: int, model, repair, lim: dict) -> list:
    """What the limit's ideal (elastic training that shrinks the batch) gives up: with repair and groups
    alike, the stationary share of steps at a smaller batch (each group down with p = D / (MTBF + D)) and the
    batch that 99.9% of steps keep."""
    if lim.get("ttt_hours") is None:
        return []
    if repair is None or repair.repair_time_min is None or repair.spares is not None:
        return ["The limit's ideal is elastic training that shrinks the batch: its step runs with a smaller batch "
                "whenever a group is down."]
    from scipy.stats import binom

    p = repair.repair_time_min / (model.group_mtbf_min + repair.repair_time_min)
    share = 100.0 * (1.0 - (1.0 - p) ** n)
    low = int(binom.ppf(0.001, n, 1.0 - p))
    from .verdict import pct_text

    return [f"The limit's ideal is elastic training that shrinks the batch: about {pct_text(share)}% of its steps "
            "run with a smaller batch (a group down).",
            f"99.9% of its steps keep at least {low:,} of the {n:,} groups' sequences ({pct_text(100.0 * low / n)}%); "
            "the strategy named keeps the batch unchanged."]
