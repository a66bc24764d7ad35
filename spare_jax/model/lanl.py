"""The Los Alamos National Laboratory failure data 1996-2005 (LA-UR-05-7318), as failure traces
(docs/traces.md#the-los-alamos-data).

The data were provided by Los Alamos National Laboratory, which asks: "We request that if you use these data
in your research that you recognize Los Alamos for providing these data." (``LANL_CREDIT``; say it wherever the
data or results from them are shown.) The published file ships with the package, unchanged
(``LANL_FILE``: xz-compressed CSV, 23,739 outage records; its README beside it). B. Schroeder and
G. A. Gibson studied it ("A large-scale study of failures in high-performance computing systems", DSN 2006).

The conversion of one system to a trace (``read_lanl``)
------------------------------------------------------
* the system's records only (column ``System``);
* the node is ``nodenumz`` (numbered from zero); M, the nodes watched, is the system's ``nodes`` column
  (one value for the whole system; a node outside 0..M-1 is refused, as in any trace);
* time 0 is the system's earliest ``Prob Started``, and H is the hours from it to its latest
  ``Prob Fixed``; each record is one down period from problem started to problem fixed;
* the stamps (mm/dd/yyyy hh:mm) are wall-clock times taken as they are: no daylight-saving correction, so a
  record across a change is an hour longer or shorter than its ``Down Time`` column, and times are exact
  to the minute;
* ``cause`` is the name of the filled blame column (Facilities, Hardware, Human Error, Network,
  Undetermined, Software; "" where none is filled, the names joined by ``+`` where several are); ``event``
  is the ``Same Event`` column as written;
* a record with fixed <= started is dropped and counted (``LanlSystem.dropped``; systems 18-20 have none).

Records are kept unmerged (``LanlSystem.records`` is a ``model.trace.TraceRecords``): merging, the units and
the scale are the trace's own steps (``TraceRecords.merged``, ``model.trace_units.trace_units``).
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import functools
import io
import lzma
import os
import re
from pathlib import Path

import numpy as np

from .inputfile import read_bytes
from .trace import TraceRecords

LANL_FILE = Path(__file__).resolve().parent.parent / "data" / "lanl" / "LA-UR-05-7318-failure-data-1996-2005.csv.xz"
LANL_CREDIT = ("Los Alamos National Laboratory failure data 1996-2005 (LA-UR-05-7318), provided by Los Alamos "
               "National Laboratory")
BLAME_COLUMNS = ("Facilities", "Hardware", "Human Error", "Network", "Undetermined", "Software")
LANL_SYSTEMS = (18, 19, 20)  # the largest systems (1,024, 1,024 and 512 nodes)
DECOMPRESSED_MAX = 32 * 2**20
_REQUIRED = ("System", "nodes", "nodenumz", "Prob Started", "Prob Fixed", "Same Event") + BLAME_COLUMNS
_STAMP = re.compile(r"\s*(\d{1,2})/(\d{1,2})/(\d{4})\s+(\d{1,2}):(\d{2})\s*$", re.ASCII)
_XZ_MAGIC = b"\xfd7zXZ\x00"


@dataclasses.dataclass(frozen=True, eq=False)
class LanlSystem:
    """One system of the Los Alamos data as a trace.

    Attributes:
      system: the system number. records: its records (``TraceRecords``: M from the ``nodes`` column, H in
        hours, ``lines`` the CSV lines, ``cause`` the blame column's name, ``event`` the Same Event column).
      dropped: records with fixed <= started, dropped. rows: the system's rows in the file.
      time_zero: the wall-clock stamp of time 0 (its earliest problem start).
      credit: ``LANL_CREDIT``.
    """

    system: int
    records: TraceRecords
    dropped: int
    rows: int
    time_zero: datetime.datetime
    credit: str = LANL_CREDIT


def _decompress(data: bytes, name: str) -> bytes:
    dec = lzma.LZMADecompressor()
    try:
        out = dec.decompress(data, max_length=DECOMPRESSED_MAX)
    except lzma.LZMAError as exc:
        raise ValueError(f"{name}: not a readable xz file ({exc})") from None
    if not dec.eof:
        raise ValueError(f"{name}: decompresses to more than {DECOMPRESSED_MAX:,} bytes, or is cut short")
    return out


@functools.lru_cache(maxsize=4)
def _rows(path: str) -> tuple:
    data = read_bytes(path, "LANL data")
    if data.startswith(_XZ_MAGIC):
        data = _decompress(data, path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise ValueError(f"{path}: the file is empty") from None
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise ValueError(f"{path} line 1: not the Los Alamos failure data layout (no column {missing[0]!r})")
    col = {c: header.index(c) for c in _REQUIRED}
    rows = []
    for row in reader:
        if not any(f.strip() for f in row):
            continue
        if len(row) != len(header):
            raise ValueError(f"{path} line {reader.line_num}: {len(row)} fields, the header has {len(header)}")
        rows.append((reader.line_num, tuple(row[col[c]].strip() for c in _REQUIRED)))
    return tuple(rows)


def lanl_rows(path=None) -> tuple:
    """``((line, (System, nodes, nodenumz, Prob Started, Prob Fixed, Same Event, *blame columns)), ...)``:
    the file's records as text (``path`` default ``LANL_FILE``; xz-compressed or plain CSV), cached."""
    return _rows(os.fspath(LANL_FILE if path is None else path))


def lanl_record_counts(path=None) -> dict:
    """``{system: records}`` over the file (every record, before any is dropped)."""
    counts: dict = {}
    for _, row in lanl_rows(path):
        counts[row[0]] = counts.get(row[0], 0) + 1
    return {int(k) if k.isdigit() else k: v for k, v in sorted(counts.items(), key=lambda kv: (len(kv[0]), kv[0]))}


def _stamp(text: str, where: str) -> datetime.datetime:
    m = _STAMP.match(text)
    if not m:
        raise ValueError(f"{where}: {text!r} is not a time stamp mm/dd/yyyy hh:mm")
    month, day, year, hour, minute = (int(x) for x in m.groups())
    try:
        return datetime.datetime(year, month, day, hour, minute)
    except ValueError as exc:
        raise ValueError(f"{where}: {text!r} is not a valid time ({exc})") from None


def read_lanl(system: int, path=None) -> LanlSystem:
    """One system of the Los Alamos data converted to a trace (the module docstring); ValueError for a
    system not in the file, one without node numbers or node counts, or a record that breaks the trace's
    rules."""
    name = os.fspath(LANL_FILE if path is None else path)
    key = str(system)
    rows = [(line, row) for line, row in lanl_rows(name) if row[0] == key]
    if not rows:
        raise ValueError(f"{name}: no records of system {system!r}")
    counts = {row[1] for _, row in rows}
    if len(counts) != 1 or not next(iter(counts)).isdigit() or int(next(iter(counts))) < 1:
        raise ValueError(f"{name}: system {system}'s 'nodes' column is not one whole number >= 1: {sorted(counts)}")
    nodes = int(next(iter(counts)))
    node, started, fixed, cause, event, lines = [], [], [], [], [], []
    dropped = 0
    for line, row in rows:
        where = f"{name} line {line}"
        if not row[2].isdigit():
            raise ValueError(f"{where}: system {system}'s record has no node number (nodenumz {row[2]!r})")
        a, b = _stamp(row[3], where), _stamp(row[4], where)
        if b <= a:
            dropped += 1
            continue
        n_id = int(row[2])
        if n_id >= nodes:
            raise ValueError(f"{where}: node {n_id} (nodenumz) is outside 0..{nodes - 1} (system {system}'s 'nodes' "
                             f"column is {nodes})")
        blamed = [c for c, v in zip(BLAME_COLUMNS, row[6:]) if v]
        node.append(n_id)
        started.append(a)
        fixed.append(b)
        cause.append("+".join(blamed))
        event.append(row[5])
        lines.append(line)
    if not node:
        raise ValueError(f"{name}: system {system} has no record with fixed > started")
    t0 = min(started)
    minutes = np.asarray([(x - t0).total_seconds() / 60.0 for x in started])
    minutes_end = np.asarray([(x - t0).total_seconds() / 60.0 for x in fixed])
    window = float(minutes_end.max()) / 60.0
    records = TraceRecords.build(nodes, window, np.asarray(node), minutes / 60.0, minutes_end / 60.0, cause, event)
    records = dataclasses.replace(records, lines=np.asarray(lines, np.int64), path=f"{name} (system {system})",
                                  columns=5)
    return LanlSystem(int(system), records, dropped, len(rows), t0)
