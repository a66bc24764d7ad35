"""Old module names kept for one release after the move into wings (``docs/architecture.md``)."""

import importlib
import sys
import warnings


def alias(old: str, new: str) -> None:
    """Make ``old`` the module ``new`` (one object: attributes, monkeypatches and private names alike),
    with a DeprecationWarning naming the new path."""
    warnings.warn(f"{old} moved to {new}; the old name is removed in the next release", DeprecationWarning,
                  stacklevel=3)
    sys.modules[old] = importlib.import_module(new)
