"""Moved to ``spare_jax.kernels.multiproc``; this name stays for one release."""

from ._moved import alias

alias(__name__, "spare_jax.kernels.multiproc")
