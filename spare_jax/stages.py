"""Progress by stage on stderr: one line as each stage of a long command starts, ``bench [3/10] scenario
wipe-out kernel`` (``--quiet`` turns it off; stdout, and so ``--json``, is never touched)."""

from __future__ import annotations

import sys
import time


class Stages:
    """``stage(label)`` prints ``{prefix} [i/total] label`` on stderr (with the seconds since the first
    stage) when enabled; ``total`` may grow (``add``) when a command learns of more stages."""

    def __init__(self, prefix: str, total: int, enabled: bool = True, stream=None):
        self.prefix, self.total, self.enabled = prefix, int(total), bool(enabled)
        self.stream = stream
        self.done = 0
        self.t0 = None

    def add(self, count: int) -> None:
        self.total += int(count)

    def stage(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.perf_counter()
        if self.t0 is None:
            self.t0 = now
        out = self.stream or sys.stderr
        print(f"{self.prefix} [{self.done}/{max(self.total, self.done)}] {label} (at {now - self.t0:.0f} s)",
              file=out, flush=True)
