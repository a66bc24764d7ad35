"""The result of a library call: named values and ``to_json()``, the JSON object the matching command prints.

A leaf utility: imports nothing of spare_jax, so every wing may return a ``Report``."""

from __future__ import annotations

import math


class Report:
    """An answer: its values by name (``report["mc_mean"]``) and ``to_json()``, the JSON object a command
    prints (NaN and infinities already ``None``)."""

    def __init__(self, values: dict):
        self._values = dict(values)

    def __getitem__(self, key):
        return self._values[key]

    def __contains__(self, key) -> bool:
        return key in self._values

    def keys(self):
        return self._values.keys()

    def to_json(self) -> dict:
        return dict(self._values)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in list(self._values.items())[:6])
        return f"Report({shown}, ...)"


def finite_or_none(v):
    """NaN/inf -> None so that the JSON is strict."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
