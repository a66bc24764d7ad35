r"""A failure trace: the down periods of a cluster's nodes, read from a file (docs/traces.md#the-trace-file).

The file
--------
A UTF-8 CSV text file of down periods, one record per node outage::

    # nodes = 512            the nodes watched, numbered 0..M-1 (those that never failed included)
    # window_hours = 8760    the observation window [0, H], hours
    # any other line that starts with '#' is a comment
    node,failed_hours,returned_hours,cause,event
    17,12.5,14.25,Hardware,
    204,330,331,,

* The two header lines ``# nodes = M`` and ``# window_hours = H`` are required, each once, before the first
  record (``=`` or ``:``, spaces free). Other lines that start with ``#`` are comments; blank lines are
  skipped; a byte-order mark is dropped.
* Then the column line ``node,failed_hours,returned_hours``, optionally followed by ``cause`` and then
  ``event`` (exactly these names, in this order), also before the first record.
* Each record: ``node`` a whole number in 0..M-1; ``failed_hours`` and ``returned_hours`` finite decimal
  numbers (``12``, ``12.5``, ``1.25e2``), hours from the window's start, with
  ``0 <= failed < returned <= H``; ``cause`` and ``event`` free text (CSV quoting allowed), kept but not
  used by a replay. A record may leave the optional trailing columns out; it may not have more fields than
  the column line.
* Records need not be sorted, and two records of one node may overlap or touch (they are merged, below).

Refused, with a ``ValueError`` of one line naming the file and the line number (the command line turns it
into exit code 2): an empty file; a missing header (``# nodes``, ``# window_hours``, the column line) or
one given twice; a record before the headers; binary data (a NUL or another control byte, or bytes that are
not UTF-8); a malformed number, NaN or an infinity; a node outside 0..M-1; ``returned <= failed``; a record
outside the window (``failed < 0`` or ``returned > H``).

Merging (a convention of every replay)
--------------------------------------
A down period is half-open, ``[failed, returned)``: at ``returned`` the node is up again. Two periods of one
node that overlap or touch (``next.failed <= current.returned``) are one down period, their union; so
merging twice changes nothing. ``NodePeriods.merges`` counts the records merged into another one
(records - periods). The merged period keeps the line and the ``cause`` of its earliest record.

Writing
-------
``write_trace(path, records)`` writes the same format (times with Python's shortest round-trip ``repr``, so
reading the file back gives the same floats); it is how a sampled run is dumped as a trace and how the
Los Alamos data are converted (``model.lanl``).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import re

import numpy as np

from .inputfile import read_bytes

COLUMNS = ("node", "failed_hours", "returned_hours", "cause", "event")
REQUIRED_COLUMNS = 3
NODES_MAX = 10**7  # a trace's node count (the device form holds at most N units; nodes beyond are not read)
WINDOW_HOURS_MAX = 1e7  # about 1,100 years: times stay exact to far below a second in float64
TRACE_BYTES_MAX = 64 * 2**20

_DIRECTIVE = re.compile(r"#\s*(nodes|window_hours)\s*[=:]\s*(.*?)\s*$")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
_NOT_FINITE = re.compile(r"[+-]?(nan|inf|infinity)", re.IGNORECASE)
_NODE = re.compile(r"[0-9]+", re.ASCII)
# control bytes that make a file binary (tab, line feed, vertical tab, form feed and carriage return are text)
_BINARY = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")


@dataclasses.dataclass(frozen=True, eq=False)
class TraceRecords:
    """The records of a trace as read (or built), unmerged, in file order.

    Attributes:
      nodes: M, the nodes watched (0..M-1).
      window_hours: H, the observation window [0, H].
      node: ``int64[K]``, the node of each record.
      failed_hours, returned_hours: ``float64[K]``, each record's down period ``[failed, returned)``.
      cause, event: ``tuple[str]`` of length K ("" where not given).
      lines: ``int64[K]``, the file line of each record (its index + 1 for records not read from a file).
      path: the file read ("" when built).
      columns: how many columns the file's column line named (3 to 5), so a copy keeps them.
    """

    nodes: int
    window_hours: float
    node: np.ndarray
    failed_hours: np.ndarray
    returned_hours: np.ndarray
    cause: tuple
    event: tuple
    lines: np.ndarray
    path: str = ""
    columns: int = REQUIRED_COLUMNS

    def __len__(self) -> int:
        return int(self.node.size)

    @classmethod
    def build(cls, nodes: int, window_hours: float, node, failed_hours, returned_hours, cause=None,
              event=None) -> "TraceRecords":
        """Records from arrays (a sampled run's failures, a converted data set), checked as a file is:
        ValueError naming the record (its index) otherwise."""
        m = _check_nodes(nodes, "nodes")
        h = _check_window(window_hours, "window_hours")
        node = np.asarray(node)
        failed = np.asarray(failed_hours, np.float64)
        returned = np.asarray(returned_hours, np.float64)
        k = node.size
        if node.shape != (k,) or failed.shape != (k,) or returned.shape != (k,):
            raise ValueError(f"node, failed_hours and returned_hours must be 1-D of one length, got "
                             f"{node.shape}, {failed.shape}, {returned.shape}")
        if k and not np.issubdtype(node.dtype, np.integer):
            if not (np.all(np.isfinite(node)) and np.all(node == np.round(node))):
                raise ValueError("node ids must be whole numbers")
        node = node.astype(np.int64)
        texts = []
        for name, col in (("cause", cause), ("event", event)):
            col = ("",) * k if col is None else tuple("" if c is None else str(c) for c in col)
            if len(col) != k:
                raise ValueError(f"{name}: {len(col)} values for {k} records")
            texts.append(col)
        for i in range(k):
            where = f"record {i}"
            _check_record(int(node[i]), float(failed[i]), float(returned[i]), m, h, where)
        columns = 5 if any(texts[1]) else 4 if any(texts[0]) else REQUIRED_COLUMNS
        return cls(m, h, node, failed, returned, texts[0], texts[1], np.arange(1, k + 1, dtype=np.int64), "",
                   columns)

    def merged(self) -> "NodePeriods":
        """The down periods merged per node (overlap or touch; the module docstring)."""
        return merge_node_periods(self)


@dataclasses.dataclass(frozen=True, eq=False)
class NodePeriods:
    """A trace's down periods merged per node: no two periods of one node overlap or touch.

    Attributes:
      nodes, window_hours: M and H (as in ``TraceRecords``).
      node: ``int64[P]``; start_hours, end_hours: ``float64[P]``, sorted by node, then start;
        ``start < end <= H`` and, within a node, ``end < next start``.
      cause: ``tuple[str]``, the cause of each period's earliest record; lines: ``int64[P]``, its line.
      records: the records read. merges: records merged into another one (records - periods).
      path: the file read.
    """

    nodes: int
    window_hours: float
    node: np.ndarray
    start_hours: np.ndarray
    end_hours: np.ndarray
    cause: tuple
    lines: np.ndarray
    records: int
    merges: int
    path: str = ""

    def __len__(self) -> int:
        return int(self.node.size)

    def as_records(self) -> TraceRecords:
        """These periods as records (merging them again changes nothing)."""
        return TraceRecords(self.nodes, self.window_hours, self.node.copy(), self.start_hours.copy(),
                            self.end_hours.copy(), tuple(self.cause), ("",) * len(self), self.lines.copy(),
                            self.path, 4 if any(self.cause) else REQUIRED_COLUMNS)


def merge_intervals(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Union of half-open intervals ``[start, end)`` on a line: ``(starts, ends, first)``, the merged
    intervals in increasing order and, for each, the index (into the input) of its earliest interval.
    Two intervals that overlap or touch (``next.start <= current.end``) merge."""
    start = np.asarray(start, np.float64)
    end = np.asarray(end, np.float64)
    if start.size == 0:
        return start.copy(), end.copy(), np.zeros(0, np.int64)
    order = np.lexsort((end, start))
    s, e = start[order], end[order]
    # a new merged interval begins where the start is beyond every end before it
    reach = np.maximum.accumulate(e)
    begins = np.ones(s.size, bool)
    begins[1:] = s[1:] > reach[:-1]
    idx = np.flatnonzero(begins)
    ends_at = np.append(idx[1:], s.size) - 1
    return s[idx], reach[ends_at], order[idx]


def merge_node_periods(records: TraceRecords) -> NodePeriods:
    """Merge each node's records (overlap or touch) into down periods, counting the merges."""
    out_node, out_s, out_e, out_first = [], [], [], []
    node = records.node
    order = np.argsort(node, kind="stable")
    bounds = np.flatnonzero(np.diff(node[order])) + 1
    for group in np.split(order, bounds) if order.size else []:
        s, e, first = merge_intervals(records.failed_hours[group], records.returned_hours[group])
        out_node.append(np.full(s.size, node[group[0]], np.int64))
        out_s.append(s)
        out_e.append(e)
        out_first.append(group[first])
    if out_node:
        n_arr, s_arr, e_arr = np.concatenate(out_node), np.concatenate(out_s), np.concatenate(out_e)
        first = np.concatenate(out_first)
    else:
        n_arr, s_arr, e_arr, first = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0, np.int64))
    return NodePeriods(records.nodes, records.window_hours, n_arr, s_arr, e_arr,
                       tuple(records.cause[i] for i in first), records.lines[first].copy(), len(records),
                       len(records) - int(n_arr.size), records.path)


# ------------------------------------------------------------------------------------------------ checks
def _check_nodes(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= int(value) <= NODES_MAX:
        raise ValueError(f"{where}: the node count must be a whole number in [1, {NODES_MAX:,}], got {value!r}")
    return int(value)


def _check_window(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{where}: window_hours must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or not 0 < v <= WINDOW_HOURS_MAX:
        raise ValueError(f"{where}: window_hours must be a finite number in (0, {WINDOW_HOURS_MAX:g}], got {value!r}")
    return v


def _check_record(node: int, failed: float, returned: float, nodes: int, window: float, where: str) -> None:
    if not 0 <= node < nodes:
        raise ValueError(f"{where}: node {node} is outside 0..{nodes - 1} (# nodes = {nodes})")
    if not (math.isfinite(failed) and math.isfinite(returned)):
        raise ValueError(f"{where}: times must be finite numbers, got {failed!r}, {returned!r}")
    if returned <= failed:
        raise ValueError(f"{where}: returned_hours {returned:g} <= failed_hours {failed:g} (a down period needs "
                         "returned > failed)")
    if failed < 0 or returned > window:
        raise ValueError(f"{where}: the record [{failed:g}, {returned:g}) h is outside the window [0, {window:g}] "
                         "(# window_hours)")


# ------------------------------------------------------------------------------------------------ parsing
def _number(text: str, what: str, where: str) -> float:
    text = text.strip()
    if _NOT_FINITE.fullmatch(text):
        raise ValueError(f"{where}: {what} must be a finite number, got {text!r}")
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"{where}: {what} is not a number: {_shown(text)}")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{where}: {what} must be a finite number, got {text!r}")
    return value


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text)} characters)"


def _text(data: bytes, path: str) -> str:
    """``data`` as text; ValueError naming the line of the first binary byte."""
    def line_of(offset: int) -> int:
        return data.count(b"\n", 0, offset) + 1

    hit = _BINARY.search(data)
    try:
        text = data.decode("utf-8-sig")
        bad = None
    except UnicodeDecodeError as exc:
        text, bad = None, exc.start
    first = min(x for x in (hit.start() if hit else None, bad, len(data) + 1) if x is not None)
    if first <= len(data):
        what = f"byte 0x{data[first]:02x}" if hit and first == hit.start() else "not UTF-8 text"
        raise ValueError(f"{path} line {line_of(first)}: binary data ({what}); a trace is a UTF-8 text file")
    return text


def parse_trace(text: str, path: str = "<trace>") -> TraceRecords:
    """Parse the text of a trace file (format and refusals in the module docstring)."""
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark (spreadsheet exports)
    directives: dict[str, tuple[float, int]] = {}
    columns = None
    node, failed, returned, cause, event, lines = [], [], [], [], [], []
    last, seen = 0, False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        last = lineno
        where = f"{path} line {lineno}"
        line = raw.strip()
        if not line:
            continue
        seen = True
        if line.startswith("#"):
            m = _DIRECTIVE.match(line)
            if not m:
                continue  # a comment
            key = m.group(1)
            if node:
                raise ValueError(f"{where}: '# {key}' after the first record; the header goes first")
            if key in directives:
                raise ValueError(f"{where}: '# {key}' given twice (first on line {directives[key][1]})")
            value = m.group(2)
            if key == "nodes":
                if not _NODE.fullmatch(value):
                    raise ValueError(f"{where}: '# nodes = M' needs a whole number, got {_shown(value)}")
                directives[key] = (_check_nodes(int(value), where), lineno)
            else:
                directives[key] = (_check_window(_number(value, "window_hours", where), where), lineno)
            continue
        try:
            fields = next(csv.reader([line], strict=True))
        except csv.Error as exc:
            raise ValueError(f"{where}: not a CSV record ({exc})") from None
        fields = [f.strip() for f in fields]
        if columns is None:
            names = tuple(f.lower() for f in fields)
            if names and names[0] == "node":
                if not (REQUIRED_COLUMNS <= len(names) <= len(COLUMNS)) or names != COLUMNS[:len(names)]:
                    raise ValueError(f"{where}: the column line must be 'node,failed_hours,returned_hours' "
                                     f"(optionally ',cause' then ',event'), got {_shown(line)}")
                missing = [k for k in ("nodes", "window_hours") if k not in directives]
                if missing:
                    raise ValueError(f"{where}: missing header '# {missing[0]} = ...' before the column line")
                columns = len(names)
                continue
            missing = [f"'# {k} = ...'" for k in ("nodes", "window_hours") if k not in directives]
            missing.append("the column line 'node,failed_hours,returned_hours'")
            raise ValueError(f"{where}: a record before the header (missing {', '.join(missing)})")
        if not REQUIRED_COLUMNS <= len(fields) <= columns:
            raise ValueError(f"{where}: expected {REQUIRED_COLUMNS}"
                             f"{'' if columns == REQUIRED_COLUMNS else f' to {columns}'} fields "
                             f"({','.join(COLUMNS[:columns])}), got {len(fields)}")
        if not _NODE.fullmatch(fields[0]):
            raise ValueError(f"{where}: node must be a whole number, got {_shown(fields[0])}")
        n_id = int(fields[0])
        a = _number(fields[1], "failed_hours", where)
        b = _number(fields[2], "returned_hours", where)
        nodes, window = directives["nodes"][0], directives["window_hours"][0]
        _check_record(n_id, a, b, nodes, window, where)
        node.append(n_id)
        failed.append(a)
        returned.append(b)
        cause.append(fields[3] if len(fields) > 3 else "")
        event.append(fields[4] if len(fields) > 4 else "")
        lines.append(lineno)
    if not seen:
        raise ValueError(f"{path} line {max(last, 1)}: the file is empty; a trace needs '# nodes = M', '# window_hours = H' and the "
                         "column line 'node,failed_hours,returned_hours'")
    if columns is None:
        missing = [f"'# {k} = ...'" for k in ("nodes", "window_hours") if k not in directives]
        missing.append("the column line 'node,failed_hours,returned_hours'")
        raise ValueError(f"{path} line {last} (end of file): missing header: {', '.join(missing)}")
    return TraceRecords(directives["nodes"][0], directives["window_hours"][0], np.asarray(node, np.int64),
                        np.asarray(failed, np.float64), np.asarray(returned, np.float64), tuple(cause),
                        tuple(event), np.asarray(lines, np.int64), path, columns)


def read_trace(path, what: str = "failure trace") -> TraceRecords:
    """Read and parse a trace file: a regular file of at most 64 MiB (``model.inputfile``), UTF-8 text
    (binary data refused naming its line), then ``parse_trace``."""
    data = read_bytes(path, what, TRACE_BYTES_MAX)
    name = os.fspath(path)
    return parse_trace(_text(data, name), name)


# ------------------------------------------------------------------------------------------------ writing
def _csv_field(text: str) -> str:
    if text == "" or not any(c in text for c in ',"\n\r') and text == text.strip():
        return text
    return '"' + text.replace('"', '""') + '"'


def format_trace(records: TraceRecords, comments=()) -> str:
    """The text of a trace file holding ``records`` (in their order), after ``comments`` (lines written
    as ``# ...``)."""
    out = [f"# {c}" if not str(c).startswith("#") else str(c) for c in comments]
    for c in out:
        if "\n" in c or "\r" in c or _DIRECTIVE.match(c):
            raise ValueError(f"a comment must be one line and not a header: {c!r}")
    cols = max(records.columns, 5 if any(records.event) else 4 if any(records.cause) else REQUIRED_COLUMNS)
    out += [f"# nodes = {records.nodes}", f"# window_hours = {records.window_hours!r}", ",".join(COLUMNS[:cols])]
    for i in range(len(records)):
        row = [str(int(records.node[i])), repr(float(records.failed_hours[i])),
               repr(float(records.returned_hours[i]))]
        if cols > 3:
            row.append(_csv_field(records.cause[i]))
        if cols > 4:
            row.append(_csv_field(records.event[i]))
        out.append(",".join(row))
    return "\n".join(out) + "\n"


def write_trace(path, records: TraceRecords, comments=()) -> None:
    """Write ``records`` as a trace file (``format_trace``), atomically (a temporary file beside it, then a
    rename), so that a reader never sees half a file."""
    text = format_trace(records, comments)
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
