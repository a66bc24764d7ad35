"""Moved to ``spare_jax.cli.args``; this name stays for one release."""

from ._moved import alias

alias(__name__, "spare_jax.cli.args")
