"""The command line: flags in, one library call, a formatted result out.

``spare-jax`` (and ``python -m spare_jax``) runs ``main.main``. ``args`` defines the flags shared by the
commands (and their bounds, config files, deprecated names), ``commands`` the commands, ``parser`` every
subcommand's flags, ``plan`` the planner's flags. This wing may import every other wing; nothing imports it.
"""

from .base import CLIError
from .output import strict_json
from ..measure import clopper_pearson
from .commands import EXIT_BAD_INPUT
from .main import main
from .parser import build_parser

__all__ = ["CLIError", "EXIT_BAD_INPUT", "build_parser", "clopper_pearson", "main", "strict_json"]
