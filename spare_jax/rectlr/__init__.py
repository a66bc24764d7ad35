"""The reorder controller (RECTLR): reschedules the shards after each failure (Hopcroft-Karp matching,
min-cost max-flow), its micro-batch form, and the search for the ring order that maximises the uptime.

``reports.reorder(placement, failed, ...)`` replays a failure trace and ``reports.place_report(cluster, r, ...)``
searches the ring order; each returns the ``Report`` that ``spare-jax reorder`` / ``place`` prints. May import
``model``, ``kernels`` and ``theory``; not ``ttt`` (its sibling) nor any wing above.
"""
