"""The result of a library call: named values and ``to_json()``, the JSON object the matching command prints.

Two forms, one interface: a ``Report`` (values by name, what every command's library call returns) and the
typed results of the layers below (``Result`` dataclasses: a kernel's summary, a placement search, a fit),
read by attribute. Both give ``to_json()``, with NaN and infinities as ``None``.

A leaf utility: imports nothing of spare_jax, so every wing may return a ``Report`` or a ``Result``."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping


class Report(Mapping):
    """An answer: its values by name (``report["mc_mean"]``, read-only: a ``Mapping``, so ``get``, ``items``
    and ``dict(report)`` work) and ``to_json()``, the JSON object a command prints (NaN and infinities
    already ``None``). ``dict(report)`` is a copy to add to."""

    def __init__(self, values: Mapping):
        self._values = dict(values)

    def __getitem__(self, key):
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

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
    """A copy of ``value`` that ``json.dumps(..., allow_nan=False)`` accepts: NumPy scalars and arrays become
    Python values, NaN and +-inf become None (strict JSON has no NaN/Infinity), keys become strings; any
    other type is a TypeError."""
    import numpy as np

    if isinstance(value, Mapping):  # a dict or a Report
        return {str(k): strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    if isinstance(value, np.ndarray):
        return strict(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if value is None or isinstance(value, (int, str)):
        return value
    raise TypeError(f"not JSON serialisable: {type(value)}")


class Result:
    """A typed result (a dataclass): its fields by attribute and ``to_json()``, the fields as a JSON object
    (``strict``). A subclass that shapes its JSON (names of intervals, say) overrides ``to_json``."""

    def to_json(self) -> dict:
        return strict(dataclasses.asdict(self))
