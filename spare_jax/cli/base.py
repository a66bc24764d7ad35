"""The command line's building blocks: the parser class, number flags checked against the model's bounds
(``bounded``), help lines that state a flag's range, and which flags were given explicitly."""

from __future__ import annotations

import argparse
import re

from ..model.bounds import BOUNDS
from ..model.bounds import check as check_bound
from ..model.bounds import describe as describe_bound
from ..model.bounds import flag as bounds_flag


class CLIError(Exception):
    """Bad input at the command line: printed as one line, exit 2."""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help lines wrapped at spaces only (a flag name such as --ckpt-interval is never split at its hyphen);
    descriptions kept as written."""

    def _split_lines(self, text, width):
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)


class Parser(argparse.ArgumentParser):
    """argparse's parser with the help formatter above; bad input raises ``CLIError`` (one line, exit 2)."""

    def __init__(self, *a, **kw):
        kw.setdefault("formatter_class", _Formatter)
        super().__init__(*a, **kw)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)
        self.flags_given = {}  # dest -> (flag, value) set on this parse's command line

    def error(self, message):  # one clear line, exit 2 (argparse prints usage + message otherwise)
        raise CLIError(f"{self.prog}: {message}")

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, refusing ``--flag=--``: argparse drops that ``--`` as the end-of-options marker and
        stores an empty list without calling the flag's type (a number flag then failed deep inside with
        a traceback; a file flag was taken as not given)."""
        self.flags_given = {}
        ns, extras = super().parse_known_args(args, namespace)
        for a in self._actions:
            if a.option_strings and a.nargs is None and a.default != [] and getattr(ns, a.dest, None) == []:
                self.error(f"argument {'/'.join(a.option_strings)}: expected one argument, got '--'")
        return ns, extras


def note_flag(parser, dest: str, flag: str, value) -> None:
    """Record that ``flag`` set ``dest`` to ``value`` on the command line; a second flag or the same one
    given again with another value is refused (one of them would be dropped in silence)."""
    given = getattr(parser, "flags_given", None)
    if given is None:
        return
    if dest in given and given[dest][1] != value:
        first, old = given[dest]
        same = first == flag
        parser.error(f"argument {flag}: {'given twice' if same else f'{first} and {flag} set the same setting'} "
                     f"with different values ({quoted(old)} and {quoted(value)}); give it once")
    given[dest] = (flag, value)


class StoreOnce(argparse._StoreAction):
    """argparse's store, refusing a setting given twice with different values (``-N 16 -N 20``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string is not None:
            note_flag(parser, self.dest, option_string, values)
        super().__call__(parser, namespace, values, option_string)


_INT_TEXT = re.compile(r"[+-]?[0-9]+", re.ASCII)


def quoted(text: str) -> str:
    """Text from the command line as a refusal quotes it: at most 40 characters, the rest counted."""
    text = str(text)
    if len(text) <= 40:
        return repr(text)
    return f"{text[:24]!r}... ({len(text):,} characters)"


_FLOAT_TEXT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def bounded(bound, flag=None):
    """An argparse type for the setting ``bound`` of ``bounds.BOUNDS`` (ASCII digits only, in range)."""
    kind = BOUNDS[bound][0]
    flag = flag or bounds_flag(bound)

    def parse(text):
        text = str(text).strip()
        if kind == "int":
            if not _INT_TEXT.fullmatch(text):
                raise argparse.ArgumentTypeError(f"{flag} must be an integer, got {quoted(text)}")
            value = int(text)
        else:
            if not _FLOAT_TEXT.fullmatch(text):
                raise argparse.ArgumentTypeError(f"{flag} must be a finite number, got {quoted(text)}")
            value = float(text)
        try:
            return check_bound(bound, value, flag)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.kind = kind
    parse.bound = bound
    return parse


def bound_help(text, bound):
    """A flag's help line: ``text``, then the range of the setting ``bound``."""
    return f"{text}; {describe_bound(bound)}"


def was_given(args, dest) -> bool:
    """Whether ``dest`` was set explicitly: on the command line or in ``--config`` (``main`` records both in
    ``args.given``); True when unknown (library callers), so the checks stay on the safe side."""
    given = getattr(args, "given", None)
    return True if given is None else dest in given


def explicit_dests(parser, argv) -> set:
    """The dests of the options that appear in ``argv`` (the subcommand's parser; exact names, ``--flag=x``,
    the unique prefixes argparse accepts, and ``-r8``-style short options)."""
    out = set()
    longs = [(o, a.dest) for a in parser._actions for o in a.option_strings if o.startswith("--")]
    shorts = {o: a.dest for a in parser._actions for o in a.option_strings if not o.startswith("--")}
    for tok in argv:
        if tok == "--":
            break
        if not tok.startswith("-") or tok == "-":
            continue
        name = tok.split("=", 1)[0]
        if name.startswith("--"):
            hits = {d for o, d in longs if o == name} or {d for o, d in longs if o.startswith(name)}
            if len(hits) == 1:
                out |= hits
        elif name[:2] in shorts:
            out.add(shorts[name[:2]])
    return out


# The library names its own parameters in its errors, in backquotes (`repair_time_min`, `Sampling.out_dir`);
# the command line prints the flag that sets each. A name not listed here is its flag with dashes
# (`restart_depth` is --restart-depth); tests/test_library_errors.py checks that every name the library
# quotes is a flag of the command line.
PARAM_FLAGS = {
    "repair_time_min": "--repair-time", "hardware_repair_min": "--hardware-repair",
    "ckpt_interval_min": "--ckpt-interval", "ckpt_cost_min": "--ckpt-cost", "restart_min": "--restart",
    "failure_stall_min": "--failure-stall", "rejoin_stall_min": "--rejoin-stall",
    "window_hours": "--log-window-hours",
    "Sampling.out_dir": "--state-dir", "Sampling.chunk_size": "--chunk-size", "Sampling.count": "--runs",
    "SpareAuto.max_wait_min": "--max-spare-wait", "SpareAuto.runs": "--spare-runs",
}
_QUOTED_PARAM = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)`")


def param_flag(name: str) -> str:
    """The flag that sets the library parameter ``name`` (``PARAM_FLAGS``, else ``--name-with-dashes``)."""
    return PARAM_FLAGS.get(name) or "--" + name.replace("_", "-")


def as_flags(message: str) -> str:
    """A library error as the command line says it: each backquoted parameter name becomes its flag."""
    return _QUOTED_PARAM.sub(lambda m: param_flag(m.group(1)), message)
