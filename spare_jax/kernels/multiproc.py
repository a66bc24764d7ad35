"""Multi-process runs that cannot print a wrong number.

Several processes (``jax.distributed``) run one Monte Carlo together: every sub-chunk of trial ids is split
over the devices of all processes, each device returns its own statistics and the processes exchange their
sums after every block (``Coordinator.allgather``), added on the host as exact integers. That sum is right
only if every process runs the same sequence of blocks with the same arguments, whatever its speed. This module gives the driver three things, all over the key-value store of JAX's coordination
service (host-side messages, independent of the device queue):

* ``Coordinator.broadcast`` — process 0's value (a block size, say) to every process, so that decisions
  taken from one process's timing are the same on all;
* ``Coordinator.allgather`` — every process's record (the block schedule it ran, the trials its devices
  computed), so that a run is checked complete before any number leaves it (``check_complete``);
* a watchdog thread — each process writes a heartbeat every second; process 0 reads them all, the others
  watch process 0. A peer whose heartbeat has not moved for ``peer_timeout`` seconds (dead, stopped, or
  unreachable) ends every surviving process with one line on stderr naming it, and exit code
  ``EXIT_PEER_LOST``; a process 0 that stops answering ends the others the same way. A process blocked in a
  device collective with a dead peer cannot raise, so the watchdog ends it with ``os._exit``.

The native logs of JAX, XLA and gloo (connection lines, coordination-service errors, stack traces) go to a
log file (``NativeLog``) whose path the error line gives; ``--verbose`` leaves them on the terminal. The
file is removed when the run succeeds or its input is refused.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time

DEFAULT_PEER_TIMEOUT_S = 60.0
EXIT_PEER_LOST = 3  # a peer died, stalled or disagreed: no result
_HEARTBEAT_S = 1.0
_BEAT_DIR = "spare-jax/hb/"
_LOST_KEY = "spare-jax/lost"
_FAILED_DIR = "spare-jax/failed/"
_FAIL_WAIT_S = 5.0  # process 0 waits at most this long for the others' own error lines before it exits


class IncompleteRun(RuntimeError):
    """The processes of a run did not run the same blocks, or the trials they ran do not add up."""


_WATCHER = r"""
import os, sys
fd, log, who = int(sys.argv[1]), sys.argv[2], sys.argv[3]
data = b""
while True:
    chunk = os.read(fd, 64)
    if not chunk:
        break
    data += chunk
if b"done" in data:
    sys.exit(0)
try:
    with open(log, errors="replace") as fh:
        text = fh.read()[-20000:]
except OSError:
    text = ""
import re
dead = re.search(r"stopped sending heartbeats\):\s*([0-9][0-9 ,\n]*)", text)
if dead:
    why = "lost process %s: it stopped sending heartbeats" % ", ".join(dead.group(1).split())
elif "RegisterTask" in text or "Barrier timed out" in text and "Shutdown" not in text:
    why = "the peers did not all join within --peer-timeout"
elif "Shutdown" in text and "Barrier timed out" in text:
    why = "a peer did not finish within --peer-timeout (shutdown barrier)"
elif "coordination service" in text and ("leader" in text or "Socket closed" in text or "UNAVAILABLE" in text) \
        and who != "0":
    why = "lost process 0 (the coordinator): the coordination service became unreachable"
elif "Terminating process" in text or "Check failure" in text:
    why = "a native error ended it (a peer is probably gone)"
else:
    why = "it ended abnormally (killed, or a native crash)"
line = "\rspare-jax: error: process %s: %s; no result; native log: %s\n" % (who, why, log)
os.write(2, line.encode())
"""


class NativeLog:
    """Point file descriptor 2 (native logs) at a log file; Python's ``sys.stderr`` keeps the terminal.

    A small watcher process (not named like the run, so that ``pgrep`` finds the run itself) holds the
    read end of a pipe: if this process ends without saying so (an abort inside JAX's coordination client
    when the coordinator dies, a kill), the watcher writes the one error line with the log's path."""

    def __init__(self, process_id):
        import atexit
        import subprocess

        fd, self.path = tempfile.mkstemp(prefix=f"spare-jax-p{process_id}-", suffix=".log")
        sys.stderr.flush()
        self.terminal_fd = os.dup(2)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stderr = os.fdopen(os.dup(self.terminal_fd), "w", buffering=1)
        read_end, self._sentinel = os.pipe()
        try:
            subprocess.Popen([sys.executable, "-c", _WATCHER, str(read_end), self.path, str(process_id)],
                             pass_fds=(read_end,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=self.terminal_fd, start_new_session=True)
        except OSError:  # pragma: no cover - no watcher: an abort then leaves only the log
            pass
        os.close(read_end)
        atexit.register(self.settled)

    def settled(self) -> None:
        """This process ends in an orderly way (it said what happened itself): the watcher stays quiet."""
        if self._sentinel is not None:
            try:
                os.write(self._sentinel, b"done")
                os.close(self._sentinel)
            except OSError:
                pass
            self._sentinel = None

    def say(self, line: str) -> None:
        """One line on the terminal's stderr, unbuffered (safe right before ``os._exit``)."""
        self.settled()  # "\r": the line starts at the left edge, over a progress bar cut short
        os.write(self.terminal_fd, ("\r" + line.rstrip("\n") + "\n").encode())

    def discard(self) -> None:
        """Remove the log (the run succeeded or its input was refused: nothing to look at)."""
        try:
            os.remove(self.path)
        except OSError:
            pass


class Coordinator:
    """Host-side agreement between the processes of one run (see the module docstring)."""

    def __init__(self, client, process_id: int, num_processes: int, peer_timeout: float, log: NativeLog | None):
        self.client = client
        self.process_id = int(process_id)
        self.num_processes = int(num_processes)
        self.peer_timeout = float(peer_timeout)
        self.log = log
        self._seq = 0
        self._stop = threading.Event()
        # process 0 watches every peer's heartbeat; the others watch process 0 (through their calls to it)
        self._last_seen = {p: time.monotonic() for p in self.peers} if self.process_id == 0 else {}
        self._last_value = {}
        self._lost = None  # set when process 0 declared a process lost
        self._last_rpc = time.monotonic()
        self._thread = None

    @property
    def peers(self):
        return [p for p in range(self.num_processes) if p != self.process_id]

    # ----------------------------------------------------------------------------------------------
    # messages
    def next_tag(self, name: str) -> str:
        """A key prefix unique to this call; every process makes the same calls in the same order."""
        self._seq += 1
        return f"spare-jax/{self._seq}-{name}"

    def _get(self, key: str, who: int):
        timeout_ms = int(self.peer_timeout * 1000)
        try:
            return self.client.blocking_key_value_get(key, timeout_ms)
        except Exception as exc:  # deadline exceeded, or the coordinator is gone
            self.fail(f"process {who} did not answer within --peer-timeout {self.peer_timeout:g} s "
                      f"({type(exc).__name__})")

    def broadcast(self, tag: str, value):
        """Process 0's ``value`` (JSON-able) on every process."""
        key = f"{tag}/from0"
        if self.process_id == 0:
            self.client.key_value_set(key, json.dumps(value))
            return value
        return json.loads(self._get(key, 0))

    def allgather(self, tag: str, record) -> list:
        """Every process's ``record`` (JSON-able), in process order."""
        self.client.key_value_set(f"{tag}/p{self.process_id}", json.dumps(record))
        return [record if p == self.process_id else json.loads(self._get(f"{tag}/p{p}", p))
                for p in range(self.num_processes)]

    # ----------------------------------------------------------------------------------------------
    # watchdog
    def start(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="spare-jax-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * _HEARTBEAT_S + 1)

    def _watch(self) -> None:
        rpc_thread = threading.Thread(target=self._beat_loop, daemon=True)
        rpc_thread.start()
        while not self._stop.wait(_HEARTBEAT_S / 2):
            now = time.monotonic()
            if self._lost is not None:
                self.fail(self._lost)
            if now - self._last_rpc > self.peer_timeout and self.process_id != 0:
                self.fail(f"lost process 0 (the coordinator): no answer for {self.peer_timeout:g} s")
            stale = [p for p in self._last_seen if now - self._last_seen[p] > self.peer_timeout]
            if stale:
                message = (f"lost process {', '.join(map(str, stale))}: no heartbeat for {self.peer_timeout:g} s "
                           "(--peer-timeout; it died, stopped or became unreachable)")
                if self.num_processes > 2:  # tell the others, who watch process 0 only (fail waits for them)
                    try:
                        self.client.key_value_set(_LOST_KEY, message, allow_overwrite=True)
                    except Exception:
                        pass
                self.fail(message, alive=[p for p in self.peers if p not in stale])

    def _beat_loop(self) -> None:
        """Every second: write this process's heartbeat; process 0 reads every heartbeat in one call and
        the others read only whether process 0 declared a process lost (one call each: the coordination
        service answers O(P) calls a second, not O(P^2)). A separate thread, so that an RPC that hangs
        because the coordinator stopped is seen by ``_watch`` as no answer."""
        count = 0
        while not self._stop.is_set():
            count += 1
            try:
                self.client.key_value_set(f"{_BEAT_DIR}p{self.process_id}", str(count), allow_overwrite=True)
                if self.process_id == 0:
                    now = time.monotonic()
                    for key, value in self.client.key_value_dir_get(_BEAT_DIR):
                        p = int(key.rsplit("p", 1)[1])  # ".../pK" (the full key) or "pK"
                        if p != 0 and value != self._last_value.get(p):
                            self._last_value[p] = value
                            self._last_seen[p] = now
                else:
                    try:
                        self._lost = "process 0 reports: " + self.client.key_value_try_get(_LOST_KEY)
                    except Exception:  # not set: nobody lost
                        pass
                self._last_rpc = time.monotonic()
            except Exception:
                if self._stop.is_set():
                    return
                if self.process_id != 0:
                    self.fail("lost process 0 (the coordinator): its key-value service is gone")
            self._stop.wait(_HEARTBEAT_S)

    def fail(self, message: str, alive=None):
        """End this process now: one line on the terminal, the native log kept, exit ``EXIT_PEER_LOST``.

        A process other than 0 then says so in the key-value store. Process 0 hosts the coordination service,
        whose end aborts the others inside jaxlib: before it exits it waits (at most ``_FAIL_WAIT_S``) until
        the peers still ``alive`` (default: all) have said their own line, so that a failure every process
        sees (processes started alike or not, an incomplete run) ends each with its own message."""
        where = f"; native log: {self.log.path}" if self.log is not None else ""
        line = f"spare-jax: error: process {self.process_id}: {message}; no result{where}"
        if self.log is not None:
            self.log.say(line)
        else:
            try:
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
            except Exception:
                pass
        try:
            if self.process_id != 0:
                self.client.key_value_set(f"{_FAILED_DIR}p{self.process_id}", "1", allow_overwrite=True)
            else:
                waiting = set(self.peers if alive is None else alive)
                deadline = time.monotonic() + min(_FAIL_WAIT_S, self.peer_timeout)
                while waiting and time.monotonic() < deadline:
                    said = {int(k.rsplit("p", 1)[1]) for k, _ in self.client.key_value_dir_get(_FAILED_DIR)}
                    waiting -= said
                    time.sleep(0.05)
        except Exception:  # the service is gone already: nothing to wait for
            pass
        os._exit(EXIT_PEER_LOST)


_COORDINATOR: Coordinator | None = None


def coordinator() -> Coordinator | None:
    """The running multi-process run's coordinator, or None (one process)."""
    return _COORDINATOR


def start(peer_timeout: float = DEFAULT_PEER_TIMEOUT_S, log: NativeLog | None = None) -> Coordinator | None:
    """After ``jax.distributed.initialize``: the coordinator and its watchdog (None for one process)."""
    global _COORDINATOR
    from jax._src import distributed

    state = distributed.global_state  # known right after initialize, before the backends (which wait for
    if state.client is None or not state.num_processes or state.num_processes <= 1:  # every peer) start
        return None
    _COORDINATOR = Coordinator(state.client, state.process_id, state.num_processes, peer_timeout, log)
    _COORDINATOR.start()
    return _COORDINATOR


def check_complete(records: list, trials_to_run: int) -> None:
    """Raise ``IncompleteRun`` unless every process ran the same schedule and the trials add up."""
    schedules = {r["schedule"] for r in records}
    if len(schedules) != 1:
        seen = ", ".join(f"process {i}: {r['schedule'][:8]}" for i, r in enumerate(records))
        raise IncompleteRun(f"the processes ran different block schedules ({seen})")
    ran = sum(int(r["trials"]) for r in records)
    if ran != trials_to_run:
        raise IncompleteRun(f"the processes ran {ran} trials in all, not {trials_to_run}")
