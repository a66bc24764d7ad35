"""One check for a command that must refuse its input: exit 2, nothing on stdout, one line on stderr from
spare-jax (no traceback) holding every given word, within ``max_s`` seconds (a hang is cut off by an alarm
and fails the check) and without compiling a JAX kernel. Shared by the CLI bad-input tables
(tests/test_cli_refusals_*.py)."""

from __future__ import annotations

import contextlib
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
    assert elapsed < max_s, f"{argv}: refusal took {elapsed:.1f} s"
    assert compiles or _COMPILES[0] == before, f"{argv}: the refusal compiled {_COMPILES[0] - before} JAX kernel(s)"
    return lines[0]
