"""Monte Carlo on the device: pure JAX kernels of an explicit PRNG key (wipe-out, depth thresholds,
overhead, repair events) and the driver that jits, vmaps, chunks and shards them over devices and processes
(exact device sums, resumable state, the multi-process agreement).

May import ``model``; not ``theory`` (its sibling: the two are checked against each other) nor any wing
above.
"""
