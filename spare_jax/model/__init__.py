"""What a cluster is: the placement of shards on groups, failure laws and the PRNG, the scenario (job-wide
failures, domains, ring order, uneven groups, micro-batches), the repair law, presets, and the bounds every
input is checked against.

Imports nothing else of spare_jax (the leaf utilities ``plotting``, ``stages`` and ``results`` aside); every other wing
may import it.
"""
