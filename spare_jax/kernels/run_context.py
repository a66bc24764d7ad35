"""What every part of a run's step reads and nothing changes (``Kernel``): the run's shape and its static
switches, the runs a step takes at once, the random streams of the run, and the numbers each part lowers
from the setup (its own ``Params``, ``kernels.lower``)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True, eq=False)
class Kernel:
    """One compiled run kernel's constants (built once by ``kernels.run.run_kernel``, read by every part).

    ``shape``: the ``RunShape``; ``n``: N; ``c``: the runs a step takes; ``rows``: ``arange(c)``, each run's
    row for the per-run scatters and gathers; ``wide_cap``: rows gathered at a time for the work that touches
    every group of a run (``events.on_rows``); ``width``: the block width of the group clocks' minima;
    ``words``, ``total``: the seed's key words and the run count (ids past it are padding); ``streams``: the
    event and wide streams (an epoch's are the static wipe-out kernels'); ``trace``: a replay's
    ``TraceDevice`` (None otherwise); ``max_events``: the event limit (traced); the parts' ``Params``
    (``groups`` ... ``log``); and the static switches (``epoch``, ``nd``: the domains, ``finite``: a finite
    spare pool, ``replay``, ``from_trace``, ``hw_trace``, ``keep_end``, ``draws``, ``listed``, ``n_log``)."""

    shape: object
    n: int
    c: int
    rows: jax.Array
    wide_cap: int
    width: int
    words: object
    total: object
    streams: tuple
    trace: object
    max_events: jax.Array
    p: object  # ``Params``: every part's numbers
    epoch: str | None
    nd: int
    finite: bool
    replay: bool
    from_trace: bool
    hw_trace: bool
    keep_end: bool
    draws: bool
    listed: bool
    n_log: int
    parts: tuple = ()  # parts added by the caller (``RunShape.parts``)

    @property
    def inf(self):
        return jnp.float32(jnp.inf)

    def never(self):
        """A part that is off: its next event is never (``[C]`` of +inf)."""
        return jnp.full((self.c,), jnp.inf, jnp.float32)
