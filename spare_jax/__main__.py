"""``python -m spare_jax`` is the ``spare-jax`` command."""
import sys

from .cli import main

sys.exit(main())
