"""Where a command writes, checked before any work: a directory (``--out-dir``, ``--state-dir``) must be one
that exists or can be created, and be writable; a file (``--report``, ``--ring-out``) must not be a
directory, and its directory must be writable. Each refusal is one line (exit 2); nothing is left behind."""

from __future__ import annotations

import os
import tempfile

# dest -> (flag, "dir" or "file")
OUTPUTS = {"out_dir": ("--out-dir", "dir"), "state_dir": ("--state-dir", "dir"), "report": ("--report", "file"),
           "ring_out": ("--ring-out", "file")}


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _existing_ancestor(path: str) -> str:
    head = os.path.abspath(path)
    while not os.path.lexists(head):
        parent = os.path.dirname(head)
        if parent == head:
            break
        head = parent
    return head


def check_dir(path: str, flag: str) -> None:
    """``path`` is a directory this process can write in, or one it can create (tried in its nearest
    existing ancestor with a temporary directory, removed at once)."""
    if not path or not str(path).strip():
        raise ValueError(f"{flag} must name a directory, got {path!r}")
    if os.path.isdir(path):
        try:
            with tempfile.TemporaryFile(dir=path):
                pass
        except OSError as exc:
            raise ValueError(f"{flag} {path}: cannot write in it ({_why(exc)})") from None
        return
    if os.path.lexists(path):
        raise ValueError(f"{flag} {path} is a file, not a directory; name a directory")
    head = _existing_ancestor(path)
    if not os.path.isdir(head):
        raise ValueError(f"{flag} {path}: {head} is a file, not a directory; name a directory")
    try:
        os.rmdir(tempfile.mkdtemp(dir=head))
    except OSError as exc:
        raise ValueError(f"{flag} {path}: cannot create it ({_why(exc)} in {head})") from None


def check_file(path: str, flag: str) -> None:
    """``path`` names a file (not a directory) in a directory this process can write in."""
    if not path or not str(path).strip():
        raise ValueError(f"{flag} must name a file, got {path!r}")
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path} is a directory; name a file")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        what = "is a file, not a directory" if os.path.lexists(parent) else "does not exist"
        raise ValueError(f"{flag} {path}: its directory {parent} {what}")
    if os.path.lexists(path) and not os.access(path, os.W_OK):
        raise ValueError(f"{flag} {path}: cannot write to it (read-only)")
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        raise ValueError(f"{flag} {path}: cannot write in {parent} ({_why(exc)})") from None


def check_outputs(args) -> None:
    """Every output location of the command line, before any work."""
    for dest, (flag, kind) in OUTPUTS.items():
        path = getattr(args, dest, None)
        if dest == "out_dir" and args.command == "run" and path is None:
            path, flag = ("figures" if getattr(args, "full", False) else "results"), "--out-dir (default)"
        if path is None:
            continue
        (check_dir if kind == "dir" else check_file)(str(path), flag)
