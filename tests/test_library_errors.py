"""The library names its own parameters in its errors (in backquotes); the command line prints the flag that
sets each (``cli.base.as_flags``)."""

from __future__ import annotations

import argparse
import ast
import pathlib
import re

import pytest

from spare_jax.cli.base import PARAM_FLAGS, as_flags, param_flag
from spare_jax.cli.main import main
from spare_jax.cli.parser import build_parser

LIBRARY = ("kernels", "ttt", "model", "theory", "planner", "suite", "rectlr", "measure", "reference")
ROOT = pathlib.Path(__file__).resolve().parent.parent / "spare_jax"
FLAG = re.compile(r"(?<![\w-])--[a-z]")
QUOTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)`")


def _error_texts():
    """(file:line, text) of every string in a raise statement, or given as the label of a bounds or
    directory check or of a file read (its errors start with the label), in the library packages."""
    for pkg in LIBRARY:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                raised = isinstance(node, ast.Raise) and node.exc is not None
                label = isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
                    "check_bound", "check_writable_dir", "read_text", "read_bytes")
                if raised or label:
                    for sub in ast.walk(node.exc if raised else node):
                        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                            yield f"{path.relative_to(ROOT)}:{node.lineno}", sub.value


def _all_flags() -> set:
    flags, todo = set(), [build_parser()]
    while todo:
        parser = todo.pop()
        for action in parser._actions:
            flags.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    return flags


def test_the_library_names_no_flag_in_its_errors():
    texts = list(_error_texts())
    assert len(texts) > 100  # the scan sees the library's errors
    assert [(where, text) for where, text in texts if FLAG.search(text)] == []


def test_every_parameter_the_library_quotes_is_a_flag():
    flags = _all_flags()
    quoted = {name for _, text in _error_texts() for name in QUOTED.findall(text)}
    assert {"repair_time_min", "Sampling.out_dir", "restart_depth"} <= quoted
    assert {name: param_flag(name) for name in quoted if param_flag(name) not in flags} == {}
    assert {name: flag for name, flag in PARAM_FLAGS.items() if flag not in flags} == {}


def test_as_flags_translates_backquoted_names_only():
    assert as_flags("`repair_time_min` with `scheme` none; use ``ages`` `Sampling.out_dir` -- x") == \
        "--repair-time with --scheme none; use `--ages` --state-dir -- x"


def test_a_library_error_names_the_parameter_and_the_command_line_the_flag(capsys):
    from spare_jax.model.repair import Repair

    with pytest.raises(ValueError, match=r"`spares` needs `hardware_repair_min`"):
        Repair(30.0, spares=4)
    assert main(["ttt", "--scheme", "rep", "-N", "8", "-r", "2", "--restart-depth", "2", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("spare-jax: error: --restart-depth") and "--scheme spare" in err and "`" not in err


def test_every_result_gives_its_json():
    """One interface for results: a ``Report`` (values by name) or a ``Result`` dataclass (by attribute), both
    with ``to_json()``, strict JSON (no NaN, NumPy values as Python ones)."""
    import json

    import numpy as np

    from spare_jax.kernels.overhead import OverheadResult
    from spare_jax.kernels.repair import RepairResult
    from spare_jax.kernels.wipeout import WipeoutResult
    from spare_jax.planner.fit import FitResult
    from spare_jax.planner.plan import PlanResult
    from spare_jax.rectlr.place import PlaceResult
    from spare_jax.results import Report, Result, strict

    for cls in (WipeoutResult, OverheadResult, RepairResult, PlaceResult, FitResult, PlanResult):
        assert issubclass(cls, Result) and not hasattr(cls, "as_dict"), cls
    assert hasattr(Report, "to_json") and hasattr(Result, "to_json")
    out = strict({"a": float("nan"), "b": (np.float32(1.5), np.array([1.0, np.inf])), "c": np.int64(3)})
    assert json.dumps(out, allow_nan=False) == '{"a": null, "b": [1.5, [1.0, null]], "c": 3}'
