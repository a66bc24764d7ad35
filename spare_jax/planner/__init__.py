"""Planning a real run: ``plan`` (a cluster in GPUs and hours to r*, tau*, time-to-train with its spread,
cost and sensitivity), failure-log fitting (``fit``) and the HTML report (``report``).

May import ``model``, ``kernels``, ``theory``, ``ttt`` and ``rectlr``; not ``suite`` (its sibling) nor ``cli``.
"""
