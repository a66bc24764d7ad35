"""The reorder controller (RECTLR): reschedules the shards after each failure (Hopcroft-Karp matching,
min-cost max-flow), its micro-batch form, and the search for the ring order that maximises the uptime.

``answer.reorder(placement, failed, ...)`` replays a failure trace and returns the ``Report`` that
``spare-jax reorder`` prints. May import ``model``, ``kernels`` and ``theory``; not ``ttt`` (its sibling) nor
any wing above.
"""
