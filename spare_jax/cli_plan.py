"""Moved to ``spare_jax.cli.plan``; this name stays for one release."""

from ._moved import alias

alias(__name__, "spare_jax.cli.plan")
