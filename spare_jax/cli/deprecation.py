"""Former flag names: they keep working for one release, with one note on stderr."""

from __future__ import annotations

import argparse

from .base import bounded, note_flag


class DeprecatedFlag(argparse.Action):
    """The action of a former flag name: stores like the flag it stands for and records a note."""

    def __init__(self, option_strings, dest, new=None, **kw):
        super().__init__(option_strings, dest, **kw)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None):
        note_flag(parser, self.dest, option_string, values)
        setattr(namespace, self.dest, values)
        _record(namespace, deprecation_note(option_string, self.new, parser.prog.split()[-1]))


def deprecation_note(old: str, new: str, command: str) -> str:
    return f"spare-jax: note: {old} is deprecated for {command}; use {new}"


def _record(namespace, note: str) -> None:
    notes = list(getattr(namespace, "deprecations", None) or ())
    if note not in notes:
        notes.append(note)
    setattr(namespace, "deprecations", notes)


def deprecated_alias(container, old: str, primary) -> None:
    """Add ``old`` as a former name of the option ``primary`` (an argparse action) to ``container`` (the
    parser, or the group ``primary`` is in): same dest and bounds, hidden from --help, a note when used."""
    kind = primary.type
    if getattr(kind, "bound", None) is not None:
        kind = bounded(kind.bound, old)  # errors name the flag as typed
    container.add_argument(old, dest=primary.dest, type=kind, choices=primary.choices, default=argparse.SUPPRESS,
                           help=argparse.SUPPRESS, action=DeprecatedFlag, new=primary.option_strings[-1],
                           metavar=primary.metavar)
