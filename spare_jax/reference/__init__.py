"""Independent reference simulators of whole training runs, for validation.

Each is written from the model as the documentation states it (docs/runs.md#the-conventions-of-a-run) and
from ``model.runsetup.RunSetup`` alone, without reading or calling the engine's kernels, so that agreeing
with it means something:

* ``refrun``: a plain event queue in NumPy, one run at a time, the depth of every down-set by a maximum flow
  (``simulate_run``, ``reference_runs``, ``summary``): the yardstick the whole-run kernel (``kernels.run``)
  is tested against;
* ``simpyrun``: a SimPy discrete-event simulation of the same runs, one process per group, domain and
  spare (``simpy_run``, ``simpy_runs``): a second reading, and the per-event baseline that ``spare-jax
  bench`` measures the kernel against.

They import ``model`` only. Nothing in the package but ``suite.bench`` (the benchmark) may import them;
tests and ``experiments/`` (e.g. ``experiments/airesim_compare.py``) use them too.
"""
