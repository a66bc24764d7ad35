"""The progress bar of a driver call or of a stage of many (``Progress``), redrawn while a kernel compiles."""

from __future__ import annotations

import sys


class Progress:
    """A tqdm bar on stderr (quiet when disabled), redrawn every ``HEARTBEAT_S`` seconds between updates (its
    elapsed time goes on while a kernel compiles or a long chunk runs)."""

    HEARTBEAT_S = 5.0

    def __init__(self, total: int, desc: str, enabled: bool = True, unit: str = "trial"):
        self.bar, self._stop = None, None
        if enabled:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "trial", file=sys.stderr,
                                leave=False, dynamic_ncols=True)
            except Exception:  # pragma: no cover - tqdm missing
                self.bar = None
        if self.bar is not None:
            import threading

            self._stop = threading.Event()
            threading.Thread(target=self._beat, daemon=True).start()

    def _beat(self) -> None:
        while not self._stop.wait(self.HEARTBEAT_S):
            try:
                self.bar.refresh()
            except Exception:  # pragma: no cover - a bar closed meanwhile
                return

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def set_total(self, total: int) -> None:
        """The count to reach, once a stage learns it (its time-left estimate follows)."""
        if self.bar is not None:
            self.bar.total = int(total)
            self.bar.refresh()

    def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self.bar is not None:
            self.bar.close()

    @staticmethod
    def of(total: int, desc: str, progress, unit: str = "trial") -> "Progress":
        """The bar of one driver call: its own (``progress`` True or False), or, where ``progress`` is a running
        ``Progress`` that a stage of several calls shares, that one (updated by the call, not closed)."""
        if isinstance(progress, Progress):
            return _Borrowed(progress)
        return Progress(total, desc, enabled=bool(progress), unit=unit)


class _Borrowed(Progress):
    """A stage's shared bar, lent to one call: its updates go to the stage's bar, which stays open."""

    def __init__(self, owner: Progress):
        self.bar, self._stop, self.owner = None, None, owner

    def update(self, n: int) -> None:
        self.owner.update(n)

    def close(self) -> None:
        pass
