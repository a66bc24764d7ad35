"""Moved to ``spare_jax.rectlr.reorder_mb``; this name stays for one release."""

from ._moved import alias

alias(__name__, "spare_jax.rectlr.reorder_mb")
