"""Resumable runs on disk (docs/accelerators.md#resumable-runs): the per-chunk files of ``run_chunked``
(``ChunkStore``), the one state file of a device-reduced run (``ResumeState``), the directory lock, the
checksums and the refusal of a damaged, foreign or tampered state (or of a FIFO where a file belongs), and
``SAVED``, the resumable run in flight that an interrupted command reports."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from typing import Callable

import jax
import numpy as np

STATE_FILE = "state.json"
STATE_FORMAT = "spare-jax-state-1"

# The resumable run in flight: its state directory, the trials (epochs, runs) saved there and the total; what
# an interrupted command reports. Empty when none is running.
SAVED: dict = {}


def unit_word(desc: str) -> str:
    word = (desc or "trials").split()[0]
    return word if word in ("trials", "epochs", "runs") else "trials"


def say_resuming(out_dir: str, done: int, total: int, desc: str) -> None:
    """A resumed run says so, once, on stderr."""
    print(f"spare-jax: resuming from {done:,} of {total:,} {unit_word(desc)} saved in {out_dir}", file=sys.stderr)


_TMP_NAME = re.compile(r".+\.[0-9]+\.[0-9a-f]{8}\.tmp\.(json|npz)")  # ChunkStore._tmp_name's files


def params_digest(params: dict) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]


def check_writable_dir(path: str, label: str) -> None:
    """``path`` (a directory, existing or to be created) can be written: its nearest existing ancestor is a
    writable directory (ValueError starting with ``label``, the parameter, otherwise)."""
    parent = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{label} {path}: {parent} is not a writable directory")


class ChunkStore:
    """Per-chunk sufficient statistics on disk: ``out_dir/run.json`` + ``out_dir/chunks/NNNNNNNN.npz``.

    A chunk file is written atomically (a uniquely named temp file + rename) only after the chunk is
    finished, so an interruption loses at most the chunk in flight, which is recomputed on resume. The
    directory is locked (``fcntl.flock`` on ``out_dir/.lock``) while a run uses it: a second run on the same
    directory is refused (ValueError) instead of racing on its files. ``close()`` releases the lock.
    """

    LOCK = ".lock"

    @staticmethod
    def check_dir(out_dir: str) -> None:
        """Cheap up-front check that ``out_dir`` can hold a run (ValueError naming what is wrong)."""
        if not isinstance(out_dir, str) or not out_dir:
            raise ValueError(f"`Sampling.out_dir` must be a directory path, got {out_dir!r}")
        if os.path.exists(out_dir) and not os.path.isdir(out_dir):
            raise ValueError(f"`Sampling.out_dir` {out_dir} exists and is not a directory")
        for name in ("run.json", STATE_FILE, ChunkStore.LOCK):  # a FIFO there would block its open for ever
            meta = os.path.join(out_dir, name)
            if os.path.lexists(meta) and not os.path.isfile(meta):
                raise ValueError(f"`Sampling.out_dir` {out_dir}: {meta} is not a regular file")
        chunks = os.path.join(out_dir, "chunks")
        if os.path.lexists(chunks) and not os.path.isdir(chunks):
            raise ValueError(f"`Sampling.out_dir` {out_dir}: {chunks} is not a directory")
        check_writable_dir(out_dir, "`Sampling.out_dir`")

    def __init__(self, out_dir: str, params: dict):
        self.out_dir = out_dir
        self.params = params
        self._lock = None
        self.check_dir(out_dir)
        try:
            os.makedirs(os.path.join(out_dir, "chunks"), exist_ok=True)
        except OSError as exc:
            raise ValueError(f"`Sampling.out_dir` {out_dir}: cannot create it: {exc.strerror}") from None
        self._acquire_lock()
        try:
            self._check_meta(params)
        except BaseException:
            self.close()
            raise

    def _acquire_lock(self) -> None:
        import fcntl

        path = os.path.join(self.out_dir, self.LOCK)
        try:
            fh = open(path, "a+")
        except OSError as exc:
            raise ValueError(f"`Sampling.out_dir` {self.out_dir}: cannot open its lock file: {exc.strerror}") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise ValueError(f"`Sampling.out_dir` {self.out_dir} is in use: another run holds its lock ({path})") from None
        self._lock = fh
        ChunkStore._remove_stale_temps(self)  # ResumeState takes this lock too (it calls this method unbound)

    def _remove_stale_temps(self) -> None:
        """A write killed between its temp file (``_tmp_name``) and the rename leaves that file behind; with the
        lock held no other writer is alive, so every such file in the directory and its ``chunks/`` is stale and
        goes (nothing else is touched)."""
        for folder in (self.out_dir, os.path.join(self.out_dir, "chunks")):
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                if _TMP_NAME.fullmatch(name):
                    try:
                        os.remove(os.path.join(folder, name))
                    except OSError:  # pragma: no cover - gone already: it is never read either way
                        pass

    def close(self) -> None:
        """Release the directory lock (idempotent)."""
        if self._lock is not None:
            self._lock.close()  # closing the descriptor drops the flock
            self._lock = None

    def __del__(self):  # pragma: no cover - safety net; run_chunked closes explicitly
        self.close()

    def _check_meta(self, params: dict) -> None:
        out_dir = self.out_dir
        meta = os.path.join(out_dir, "run.json")
        digest = params_digest(params)
        if os.path.exists(meta):
            try:
                with open(meta) as fh:
                    saved = json.load(fh)
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                raise ValueError(f"`Sampling.out_dir` {out_dir}: {meta} is not a run record (unreadable or not JSON)") from None
            if not isinstance(saved, dict) or not isinstance(saved.get("params", {}), dict):
                raise ValueError(f"`Sampling.out_dir` {out_dir}: {meta} is not a run record (not a JSON object with params)")
            if saved.get("digest") != digest:
                diff = sorted(k for k in set(saved.get("params", {})) | set(params)
                              if saved.get("params", {}).get(k) != json.loads(json.dumps(params, default=str)).get(k))
                raise ValueError(f"`Sampling.out_dir` {out_dir} holds a run with other parameters ({', '.join(diff) or 'format'}); "
                                 "use another `Sampling.out_dir` or the same parameters")
        else:
            tmp = self._tmp_name(meta, ".json")
            with open(tmp, "w") as fh:
                json.dump({"digest": digest, "params": params}, fh, indent=1, sort_keys=True, default=str)
            os.replace(tmp, meta)

    @staticmethod
    def _tmp_name(path: str, suffix: str) -> str:
        """A temp name beside ``path`` unique to this process and call (two writers never share one)."""
        return f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp{suffix}"

    def path(self, index: int) -> str:
        return os.path.join(self.out_dir, "chunks", f"{index:08d}.npz")

    def load(self, index: int):
        """A finished chunk's statistics, or None when it is missing or damaged (truncated, not an npz):
        a damaged file is removed and its chunk recomputed, never read as partial numbers."""
        import zipfile

        p = self.path(index)
        if not os.path.exists(p):
            return None
        try:
            with np.load(p) as z:
                return {k: z[k] for k in z.files}
        except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
            os.remove(p)
            return None

    def save(self, index: int, arrays: dict) -> None:
        p = self.path(index)
        tmp = self._tmp_name(p, ".npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, p)



def _checksum(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class ResumeState:
    """One small, atomically written state file ``out_dir/state.json`` for a resumable device-reduced run.

    It holds the parameter digest (and the parameters), the trials done so far and the running statistics
    (Python integers: exact), plus a SHA-256 of all that. It is written to a uniquely named temp file,
    fsync'd, renamed over the old one (``os.replace``) and the directory fsync'd, so a SIGKILL at any moment
    leaves either the previous or the new state. On load the checksum, the format and the digest are
    checked: a state of other parameters, a damaged file or a stray ``run.json`` of another run is refused
    (ValueError) — never silently reused or mixed. The directory is locked (``fcntl.flock`` on
    ``out_dir/.lock``) while a run uses it.
    """

    LOCK = ChunkStore.LOCK

    def __init__(self, out_dir: str, params: dict):
        ChunkStore.check_dir(out_dir)
        self.out_dir = out_dir
        self.params = json.loads(json.dumps(params, sort_keys=True, default=str))
        self.digest = params_digest(params)
        self.path = os.path.join(out_dir, STATE_FILE)
        self._lock = None
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"`Sampling.out_dir` {out_dir}: cannot create it: {exc.strerror}") from None
        ChunkStore._acquire_lock(self)
        try:
            self._check_foreign()
        except BaseException:
            self.close()
            raise

    close = ChunkStore.close
    __del__ = ChunkStore.__del__

    def _check_foreign(self) -> None:
        """A ``run.json`` (the per-chunk format) of other parameters in the same directory is refused too."""
        meta = os.path.join(self.out_dir, "run.json")
        chunks = os.path.join(self.out_dir, "chunks")
        if not os.path.exists(meta) and os.path.isdir(chunks) and os.listdir(chunks):
            raise ValueError(f"`Sampling.out_dir` {self.out_dir} holds chunk files without their run record (run.json): "
                             "their parameters are unknown; use another `Sampling.out_dir`")
        if os.path.exists(meta):
            try:
                with open(meta) as fh:
                    saved = json.load(fh)
                other = saved.get("params", {})
            except Exception:
                raise ValueError(f"`Sampling.out_dir` {self.out_dir}: {meta} is not a run record (unreadable or not JSON)") \
                    from None
            if other.get("kind") != self.params.get("kind") or any(
                    other.get(k) != self.params.get(k) for k in ("groups", "redundancy", "seed", "placement")):
                raise ValueError(f"`Sampling.out_dir` {self.out_dir} holds a run with other parameters; use another `Sampling.out_dir`")

    def load(self):
        """``(trials_done, totals)`` of a valid saved state, or None when there is none."""
        if not os.path.exists(self.path):
            return None
        from ..model.inputfile import read_text

        text = read_text(self.path, f"`Sampling.out_dir` {self.out_dir}")  # a regular file only, never blocking
        try:
            data = json.loads(text)
            body, check = data["body"], data["sha256"]
        except Exception:
            raise ValueError(f"`Sampling.out_dir` {self.out_dir}: {self.path} is damaged (not a state file); remove it to "
                             "start over") from None
        if _checksum(body) != check or body.get("format") != STATE_FORMAT:
            raise ValueError(f"`Sampling.out_dir` {self.out_dir}: {self.path} fails its checksum (damaged); remove it to "
                             "start over")
        if body.get("digest") != self.digest:
            saved = body.get("params", {})
            diff = sorted(k for k in set(saved) | set(self.params) if saved.get(k) != self.params.get(k))
            raise ValueError(f"`Sampling.out_dir` {self.out_dir} holds a run with other parameters ({', '.join(diff) or 'format'}); "
                             "use another `Sampling.out_dir` or the same parameters")
        done, totals = body.get("trials_done"), body.get("totals")
        if isinstance(done, bool) or not isinstance(done, int) or not isinstance(totals, dict):
            raise ValueError(f"`Sampling.out_dir` {self.out_dir}: {self.path} is inconsistent (no trial count or "
                             "totals); remove it to start over")
        return done, totals

    def save(self, trials_done: int, totals: dict) -> None:
        body = {"format": STATE_FORMAT, "digest": self.digest, "params": self.params,
                "trials_done": int(trials_done), "totals": totals}
        tmp = ChunkStore._tmp_name(self.path, ".json")
        with open(tmp, "w") as fh:
            json.dump({"body": body, "sha256": _checksum(body)}, fh, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        try:
            fd = os.open(self.out_dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:  # pragma: no cover - some filesystems refuse a directory fsync
            pass



def check_totals(totals: dict, zeros: Callable, limb_keys, path: str) -> None:
    """A resumed state's totals hold exactly the statistics of this run: each limb sum a non-negative
    integer, each count a list of non-negative integers of its length (ValueError naming the file)."""
    want = jax.eval_shape(zeros)
    bad = sorted(set(totals) ^ set(want))
    for k, shape in want.items():
        if k in bad:
            continue
        v = totals[k]
        if k in limb_keys:
            ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
        else:
            size = int(np.prod(shape.shape)) if shape.shape else 1
            ok = (isinstance(v, list) and len(v) == size
                  and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v))
        if not ok:
            bad.append(k)
    if bad:
        raise ValueError(f"`Sampling.out_dir`: {path} holds totals this run does not keep or cannot hold "
                         f"({', '.join(map(str, bad[:5]))}); remove it to start over")
