"""The result of a library call: named values and ``to_json()``, the JSON object the matching command prints.

Two forms, one interface: a ``Report`` (values by name, what every command's library call returns) and the
typed results of the layers below (``Result`` dataclasses: a kernel's summary, a placement search, a fit),
read by attribute. Both give ``to_json()``, with NaN and infinities as ``None``.

A leaf utility: imports nothing of spare_jax, so every wing may return a ``Report`` or a ``Result``."""

from __future__ import annotations

import dataclasses
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


def strict(value):
    """``value`` with every non-finite float (nested in dicts, lists and tuples) as ``None``; NumPy scalars
    and arrays as Python numbers and lists."""
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # NumPy scalar or array
        return strict(value.tolist())
    return finite_or_none(value)


class Result:
    """A typed result (a dataclass): its fields by attribute and ``to_json()``, the fields as a JSON object
    (``strict``). A subclass that shapes its JSON (names of intervals, say) overrides ``to_json``."""

    def to_json(self) -> dict:
        return strict(dataclasses.asdict(self))
