"""One check for a command that must refuse its input: exit 2, nothing on stdout, one line on stderr from
spare-jax (no traceback) holding every given word and no number of 22 digits or more, within ``max_s``
seconds (a hang is cut off by an alarm and fails the check) and without compiling a JAX kernel. Shared by
the CLI bad-input tables (tests/test_cli_refusals_*.py), with the helpers that build their rows."""

from __future__ import annotations

import contextlib
import re
import signal
import threading
import time

import jax.monitoring

from spare_jax.cli import main

# seconds a refusal may take unless a row says otherwise (they take well under one; the alarm only ends a hang)
REFUSAL_S = 20.0

_COMPILES = [0]  # XLA compilations in this process so far


def _count_compiles(event: str, _duration: float, **_kw) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        _COMPILES[0] += 1


jax.monitoring.register_event_duration_secs_listener(_count_compiles)


class RefusalHang(Exception):
    """Raised by the alarm in ``refused`` when a command runs past its time."""


@contextlib.contextmanager
def _alarm(seconds: float):
    """Raise ``RefusalHang`` in the main thread after ``seconds`` (nothing where there is no SIGALRM)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(_sig, _frame):
        raise RefusalHang(f"still running after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def refused(argv, words, capsys, max_s: float = REFUSAL_S, compiles: bool = False) -> str:
    """Run ``argv`` and check the refusal; ``words``: one word or a list of them (each must be in the line).
    ``compiles``: the refusal may come after a JAX kernel was compiled (a check that needs a run's
    shapes); every other refusal compiles none. Returns the line."""
    before = _COMPILES[0]
    t0 = time.perf_counter()
    with _alarm(max_s):
        code = main(list(argv))
    elapsed = time.perf_counter() - t0
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert code == 2, (argv, code, cap.err[-2000:])
    assert cap.out == "", argv
    assert len(lines) == 1, (argv, lines)
    assert lines[0].startswith("spare-jax") and "Traceback" not in cap.err
    for word in [words] if isinstance(words, str) else words:
        assert word in lines[0], (word, lines[0])
    assert not re.search(r"[0-9]{22}", lines[0]), f"a huge number quoted digit by digit: {lines[0][:200]}"
    assert elapsed < max_s, f"{argv}: refusal took {elapsed:.1f} s"
    assert compiles or _COMPILES[0] == before, f"{argv}: the refusal compiled {_COMPILES[0] - before} JAX kernel(s)"
    return lines[0]


# ------------------------------------------------------------------------------------------------ table rows
# command lines and rows shared by the tables of several command families
TTT = ["ttt", "-N", "16", "-r", "3", "--runs", "8", "--work-hours", "10", "--ckpt-interval", "60",
       "--group-mtbf-min", "600", "--quiet"]
OPT = ["optimize", "-N", "16", "--work-hours", "10", "--group-mtbf-min", "600", "--quiet"]
# elastic: no -r (every group holds the whole model)
TTT1 = ["ttt", "-N", "16", "--runs", "4", "--work-hours", "12", "--ckpt-interval", "60", "--group-mtbf-min", "600",
        "--quiet"]
ELASTIC = TTT1 + ["--scheme", "elastic", "--repair-time", "30"]

# bad --spares/--hardware-repair pairs, for ttt, optimize and plan (tests/test_cli_refusals_plan.py)
BAD_SPARES = [
    (["--spares", "-1", "--hardware-repair", "600"], "--spares"),
    (["--spares", "2.5", "--hardware-repair", "600"], "--spares"),
    (["--spares", "abc", "--hardware-repair", "600"], "--spares"),
    (["--spares", "inf", "--hardware-repair", "600"], "--spares"),
    (["--spares", "", "--hardware-repair", "600"], "--spares"),
    (["--spares", "300000", "--hardware-repair", "600"], "--spares"),
    (["--spares", "2", "--hardware-repair", "0"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "-5"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "inf"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "nan"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "soon"], "--hardware-repair"),
    (["--spares", "2", "--hardware-repair", "1e300"], "--hardware-repair"),
    (["--hardware-repair", "600"], "--hardware-repair goes with --spares"),
    (["--hardware-repair", "600", "--repair-time", "30"], "--hardware-repair goes with --spares"),
    (["--spares", "2"], "--spares needs --hardware-repair"),
    (["--spares", "2", "--repair-time", "30"], "--spares needs --hardware-repair"),
    (["--spares", "2", "--hardware-repair", "600", "--repair-law", "exp"], "--repair-law"),
]


def row(argv, words, *, id=None, slow=False, xfail=None, **kw):  # noqa: A002 - pytest's name
    """A ``pytest.param(argv, words, kw)`` named ``id`` or by its command line; ``slow``: the slow tier only;
    ``xfail``: the reason a case still fails its rule (strict: the row fails once the case is fixed); ``kw``: for
    ``refused``."""
    import pytest

    marks = ([pytest.mark.slow] if slow else []) + (
        [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else [])
    return pytest.param(list(argv), words, kw, id=id or " ".join(map(str, argv)), marks=marks)


# the bad values every number flag of every command is tried with (a value the flag's own type takes, e.g.
# --seed 0 or --ckpt-cost 0, is no bad input and has no row)
BAD_NUMBERS = {"non-numeric": "abc", "negative": "-1", "zero": "0", "NaN": "nan", "inf": "inf", "huge": "1e308"}


def number_rows(command: str) -> list:
    """Rows for ``command``: each of its number flags (those with a type, from the parser itself, so a new
    flag gets rows) against every value of BAD_NUMBERS its type refuses. The fast tier takes one value per
    flag, in turn, and every value at least once per command; the other rows are slow (each builds the
    whole parser, ~50 ms)."""
    import argparse

    from spare_jax.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices[command]
    actions = [a for a in sub._actions if a.option_strings and a.type is not None and a.help != argparse.SUPPRESS]
    table, covered = [], set()
    for i, action in enumerate(actions):
        flag = [o for o in action.option_strings if o.startswith("--")][-1]
        refused_values = []
        for label, text in BAD_NUMBERS.items():
            try:
                action.type(text)
            except Exception:  # noqa: BLE001 - what the parser refuses
                refused_values.append(label)
        for j, label in enumerate(refused_values):
            fast = j == i % len(refused_values) or label not in covered
            covered |= {label} if fast else set()
            table.append(row([command, f"{flag}={BAD_NUMBERS[label]}", "--quiet"], [flag], slow=not fast))
    return table
