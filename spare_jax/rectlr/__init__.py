"""The reorder controller (RECTLR): reschedules the shards after each failure (Hopcroft-Karp matching,
min-cost max-flow), its micro-batch form, and the search for the ring order that maximises the uptime.

May import ``model``, ``kernels`` and ``theory``; not ``ttt`` (its sibling) nor any wing above.
"""
