"""spare-jax: SPARe reliability engine in JAX."""
__version__ = "0.1.0"
