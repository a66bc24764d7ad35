"""Counting what JAX compiles: ``with count_compiles() as seen: ...`` then ``seen.compiles`` (XLA backend
compiles, a persistent-cache hit not included), ``seen.seconds`` (their time) and ``seen.lowerings``
(programs traced and lowered to XLA, cache hits included: a program that a changed number would rebuild
shows here even when the persistent cache serves it).

Through ``jax.monitoring``'s compile events, so it counts every jitted function of the process, the
driver's blocks included."""

from __future__ import annotations

import contextlib
import dataclasses

from jax import monitoring

BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"
LOWERING = "/jax/core/compile/jaxpr_to_mlir_module_duration"


@dataclasses.dataclass
class Compiles:
    compiles: int = 0
    seconds: float = 0.0
    lowerings: int = 0


@contextlib.contextmanager
def count_compiles():
    """Count the XLA compiles and lowerings inside the ``with`` block (see the module docstring)."""
    seen = Compiles()

    def listener(event: str, duration: float, **kwargs) -> None:
        if event == BACKEND_COMPILE:
            seen.compiles += 1
            seen.seconds += duration
        elif event == LOWERING:
            seen.lowerings += 1

    monitoring.register_event_duration_secs_listener(listener)
    try:
        yield seen
    finally:
        monitoring.unregister_event_duration_listener(listener)
