"""The command line: flags in, one library call, a formatted result out.

``spare-jax`` (and ``python -m spare_jax``) runs ``main.main``. ``args`` defines the flags shared by the
commands (and their bounds, config files, deprecated names), ``commands`` the commands, ``parser`` every
subcommand's flags, ``plan`` the planner's flags. This wing may import every other wing; nothing imports it.
"""

from .base import CLIError  # noqa: F401
from .output import strict_json  # noqa: F401
from ..measure import clopper_pearson  # noqa: F401
from .commands import EXIT_BAD_INPUT  # noqa: F401
from .main import main  # noqa: F401
from .parser import build_parser  # noqa: F401
