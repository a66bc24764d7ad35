"""What a command prints: aligned ``name  value  unit`` rows for a person, one strict JSON object for ``--json``."""

from __future__ import annotations

import json
import sys

from ..results import strict


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        if v == 0 or 1e-3 <= abs(v) < 1e7:
            return f"{v:.6g}"
        return f"{v:.4e}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_fmt(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k}={_fmt(x)}" for k, x in v.items())
    return str(v)


# keys left to --json in the text tables (internal detail, or too long to read in a row)
TEXT_HIDDEN = {"per_event", "mean_depth_thresholds", "restart_curves", "curves"}


LINE_MAX = 160


def unit_of(key: str) -> str:
    """The unit a key's name carries (the vocabulary's suffixes: _pct, _hours, _min, _s, _ms, ...)."""
    parts = key.split("_")
    if "pct" in parts:
        return "%"
    if key.endswith("per_min"):
        return "per min"
    if key.endswith("_per_s"):
        return "per s"
    if "hours" in parts:
        return "h"
    if "min" in parts:
        return "min"
    if key.endswith("_ms"):
        return "ms"
    if key.endswith("_s"):
        return "s"
    if key == "ttt_over_w":
        return "x W"
    if "overhead" in parts and not key.startswith("z"):
        return "x"
    if key == "z_score":
        return "s.e."
    if key in ("trials", "epochs", "runs", "groups", "events"):
        return key
    if key in ("mc_mean", "theory_exact", "theory_asymptotic", "endurable_failures_mean", "mc_std", "theory_std",
               "mc_stderr", "exact_failures_mean"):
        return "failures"
    return ""


def _rows(rows: dict, indent: str = "  ") -> list:
    """Aligned ``name  value  unit`` lines; an uptime in minutes also in hours; nested tables as blocks."""
    flat, blocks = [], []
    for k, v in rows.items():
        if k in TEXT_HIDDEN or isinstance(v, list) and len(v) > 8:
            continue
        if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
            blocks.append((k, v))
            continue
        text, unit = _fmt(v), unit_of(k)
        if unit == "min" and "uptime" in k and isinstance(v, (int, float)) and not isinstance(v, bool):
            unit = f"min (= {v / 60:.4g} h)"
        flat.append((k, text, unit))
    numeric = {k for k, v in rows.items() if isinstance(v, (int, float)) or v is None}
    wk = max((len(k) for k, _, _ in flat), default=0)
    wv = max((len(t) for k, t, _ in flat if k in numeric), default=0)
    lines = []
    for k, v in blocks:  # e.g. optimize's schemes: one block each
        for name, sub in v.items():
            lines += [f"{indent}{k} {name}:"] + _rows(sub, indent + "  ") + [""]
    for k, text, unit in flat:
        text = f"{text:>{wv}}" if k in numeric else text  # numbers right-aligned, words as they are
        line = f"{indent}{k:<{wk}}  {text}  {unit}".rstrip()
        if len(line) > LINE_MAX:
            line = f"{indent}{k:<{wk}}  (see --json)"
        lines.append(line)
    return lines


# what each unit a table prints means (the last line of every table names those it used)
UNITS = {"h": "hours", "min": "minutes", "s": "seconds", "ms": "milliseconds", "%": "percent",
         "x W": "times the failure-free work W", "x": "times the failure-free compute",
         "s.e.": "standard errors of the Monte Carlo", "per min": "per minute", "per s": "per second"}


def _units_line(lines: list) -> str | None:
    used = []
    for line in lines:
        for unit in sorted(UNITS, key=len, reverse=True):
            if (line.endswith("  " + unit) or f"  {unit} (= " in line) and unit not in used:
                used.append(unit)
                break
    order = [u for u in UNITS if u in used]
    return "units: " + "; ".join(f"{u} = {UNITS[u]}" for u in order) if order else None


def print_table(title: str, rows: dict, out=None) -> None:
    """The rows of ``rows``; its ``notes`` (a list of sentences) as ``note:`` lines; a line naming the
    units used."""
    out = out or sys.stdout
    notes = rows.get("notes") if isinstance(rows.get("notes"), list) else []
    rows = {k: v for k, v in rows.items() if not (k == "notes" and isinstance(v, list))}
    print(title, file=out)
    print("-" * max(len(title), 20), file=out)
    lines = _rows(rows)
    for line in lines:
        print(line, file=out)
    for note in notes:
        print(f"  note: {note}", file=out)
    units = _units_line(lines)
    if units:
        print(units, file=out)


def emit(args, title: str, result: dict) -> None:
    if args.json:
        print(json.dumps(strict_json(result), allow_nan=False))
    else:
        print_table(title, result)


def strict_json(o):
    """A copy of ``o`` that ``json.dumps(..., allow_nan=False)`` accepts (``results.strict``: NumPy values as
    Python ones, NaN and +-inf as None)."""
    return strict(o)
