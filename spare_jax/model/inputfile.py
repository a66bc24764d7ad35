"""Reading the files named on the command line (``--config``, ``--ring``, ``--trace``, ``--failure-log``,
``--group-mtbf-file``): regular files only, of a bounded size, with one clear ValueError otherwise.

A FIFO, a character device (``/dev/zero``, a terminal), a socket or a directory given as an input file
would block for ever waiting for a writer, or never end: the file is opened with ``O_NONBLOCK`` (which
returns at once even for a FIFO without a writer), checked with ``fstat`` on the open descriptor (no race
with a rename between a check and the open), and only then read. Every file-reading flag goes through
``read_bytes``/``read_text``.
"""

from __future__ import annotations

import os
import stat

# the largest input file read (inputs are small text tables; a larger one is almost surely a mistake)
MAX_BYTES = 256 * 2**20


def read_bytes(path, what: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path``; ValueError starting with ``what`` (e.g. ``"--config"``)
    when it cannot be opened, is not a regular file, or is larger than ``limit`` bytes."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise ValueError(f"{what}: expected a file name, got {path!r}") from None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ValueError(f"{what}: cannot read {path}: {exc.strerror}") from None
    except (ValueError, TypeError):  # an embedded NUL byte
        raise ValueError(f"{what}: cannot read {path!r}: not a valid file name") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else
                    "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                    "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
            raise ValueError(f"{what}: {path} is {kind}, not a regular file")
        if st.st_size > limit:
            raise ValueError(f"{what}: {path} is {st.st_size:,} bytes, more than the {limit:,} read")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # grew while being read
                raise ValueError(f"{what}: {path} is more than the {limit:,} bytes read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise ValueError(f"{what}: cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def read_text(path, what: str, encoding: str = "utf-8", limit: int = MAX_BYTES) -> str:
    """``read_bytes`` decoded (``utf-8-sig`` drops a byte-order mark); ValueError when not text."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        raise ValueError(f"{what}: {path} is not a UTF-8 text file") from None
