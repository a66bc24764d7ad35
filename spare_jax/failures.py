"""Moved to ``spare_jax.model.failures``; this name stays for one release."""

from ._moved import alias

alias(__name__, "spare_jax.model.failures")
