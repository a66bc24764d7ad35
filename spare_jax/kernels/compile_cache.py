"""JAX's persistent compilation cache for the command line: a compiled kernel is kept on disk, so the next
command with the same program shape loads it in well under a second instead of compiling it again (the
event kernels take 10-20 s each to compile on a small machine).

Where it lives: ``$SPARE_JAX_COMPILE_CACHE`` when set (a directory; ``off`` disables the cache), else the
user's cache directory, ``$XDG_CACHE_HOME/spare-jax/jax`` (``~/.cache/spare-jax/jax`` by default). It is
capped at ``CACHE_MAX_BYTES`` (least recently used entries go first); JAX evicts through the ``filelock``
package, a dependency of ours, and where it is missing the cache grows without a cap. A cache directory already
set through JAX's own ``JAX_COMPILATION_CACHE_DIR`` is left as it is.

Every program is kept, however quick its compile (``MIN_COMPILE_SECONDS``; JAX's default keeps only those over
1 s): a command compiles a dozen small programs (device sums, reductions) beside its kernel, each a few tenths of
a second, which a second command with the same shapes then loads instead. JAX's own
``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS``, when set, wins.
"""

from __future__ import annotations

import os

ENV = "SPARE_JAX_COMPILE_CACHE"
OFF = ("off", "0", "none", "false", "no")
CACHE_MAX_BYTES = 2 * 1024 ** 3
MIN_COMPILE_SECONDS = 0.0


def cache_dir(environ=os.environ) -> str | None:
    """The directory the cache uses (None: disabled)."""
    value = environ.get(ENV)
    if value is not None:
        value = value.strip()
        return None if value.lower() in OFF or not value else os.path.expanduser(value)
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "spare-jax", "jax")


def enable_compile_cache(environ=os.environ) -> str | None:
    """Turn the persistent cache on at ``cache_dir()`` (call before the first compile); returns the
    directory, or None when it is off or cannot be created (then nothing changes)."""
    import jax

    if jax.config.jax_compilation_cache_dir:  # the user's own JAX setting wins
        return jax.config.jax_compilation_cache_dir
    path = cache_dir(environ)
    if path is None:
        return None
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in environ:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
    try:
        import filelock  # noqa: F401  (JAX evicts old entries only with it)
    except ImportError:
        pass
    else:
        jax.config.update("jax_compilation_cache_max_size", CACHE_MAX_BYTES)
    return path
