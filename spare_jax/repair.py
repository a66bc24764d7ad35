"""Moved to ``spare_jax.kernels.repair``; this name stays for one release."""

from ._moved import alias

alias(__name__, "spare_jax.kernels.repair")
