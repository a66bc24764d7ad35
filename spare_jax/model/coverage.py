"""What each part of the model lets a time-to-train be answered by: every part declares the first of the
four methods that follows it (``Coverage``), and why the ones before do not. The router (``ttt.router``)
takes the widest of a problem's parts.

The methods, most special first: ``closed_form`` (exact), ``closed_form_approx`` (an approximate closed
form), ``epoch_pool`` (epochs sampled by the kernels) and ``whole_runs`` (the whole-run kernel). A method
that follows a part is followed by every later one.
"""

from __future__ import annotations

from typing import NamedTuple

METHODS = ("closed_form", "closed_form_approx", "epoch_pool", "whole_runs")


class Coverage(NamedTuple):
    """The first of ``METHODS`` that follows a part, and why the earlier ones do not (None where the exact
    closed form covers it)."""

    method: str = "closed_form"
    reason: str | None = None

    def rank(self) -> int:
        return METHODS.index(self.method)


COVERED = Coverage()  # the exact closed form covers the part


def widest(*parts: Coverage) -> Coverage:
    """The part that needs the most general method (the first such part where several tie)."""
    best = COVERED
    for part in parts:
        if part.rank() > best.rank():
            best = part
    return best
