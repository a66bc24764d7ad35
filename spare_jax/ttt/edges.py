"""Answers at the edge of their search, said in the output: a checkpoint interval at the searches' floor, a
redundancy r* or a micro-batch count m* at the largest value searched. Each is one sentence in ``notes``."""

from __future__ import annotations


def _divisors_above(n: int, r: int) -> bool:
    return any(n % d == 0 for d in range(r + 1, n))


def _r_searched(result: dict, entry: dict, r_max) -> list:
    if entry.get("r_searched"):
        return list(entry["r_searched"])
    space = ((result.get("search") or {}).get("space") or {}) if isinstance(result.get("search"), dict) else {}
    if space.get("r_searched"):
        return list(space["r_searched"])
    return [] if r_max is None else list(range(1, int(r_max) + 1))


def tau_floor_note(tau) -> str | None:
    """A sentence when the checkpoint interval ``tau`` (minutes) is the searches' floor."""
    from .closed_form import TAU_FLOOR_MIN

    if isinstance(tau, (int, float)) and tau <= TAU_FLOOR_MIN * (1 + 1e-6):
        return (f"tau* = {tau:g} min is the floor of the interval search (the checkpoint cost is 0 or close to "
                "it): the best interval is at most this, not exactly this")
    return None


def edge_notes(result: dict, groups: int, r_max=None, microbatches=None, flag: str = "--r-max") -> list:
    """The sentences for ``result`` (optimize's or plan's JSON: ``schemes`` of ``r_star``,
    ``ckpt_interval_min``, ``microbatches``); ``groups`` N; ``r_max`` the largest r asked for;
    ``microbatches`` the micro-batch counts searched (None or one: not searched)."""
    notes = []
    for scheme, e in (result.get("schemes") or {}).items():
        note = tau_floor_note(e.get("ckpt_interval_min"))
        if note:
            notes.append(f"{scheme}: {note}")
        r = e.get("r_star")
        if scheme in ("spare", "rep") and isinstance(r, int):
            searched = _r_searched(result, e, r_max)
            higher = _divisors_above(groups, r) if scheme == "rep" else r < groups
            if len(searched) > 1 and r == max(searched) and higher:
                if r_max is not None and r < int(r_max):  # the search's own window stopped it, not the flag
                    low = min((x for x in searched if x >= 2), default=r)  # (checkpointing alone's r = 1 aside)
                    notes.append(f"{scheme}: r* = {r} is the largest r searched (r = {low}..{r}, a "
                                 f"window below {flag} {int(r_max)}); a larger r may do better: compare "
                                 f"`ttt -r {r + 1}` on the same settings")
                else:
                    notes.append(f"{scheme}: r* = {r} is the largest r searched; a larger r may do better: raise "
                                 f"{flag}")
        m = e.get("microbatches")
        if microbatches is not None and len(microbatches) > 1 and m is not None and int(m) == max(microbatches) \
                and scheme != "none":
            notes.append(f"{scheme}: m* = {m} is the largest micro-batch count searched; a larger m may do "
                         "better: add larger values to --microbatches")
    return notes
