"""The composition of a run is open: a part defined here, in the test file alone, runs through whole runs of the
event kernel (``RunShape.parts``, ``kernels.run.run_kernel``; docs/architecture.md#adding-a-mechanism).

The toy part is a periodic outage: every X minutes of wall time (X, 2X, ...) the whole job stops, as a
job-wide failure does (while computing or checkpointing: the work since the last checkpoint is lost and a
restart of R starts; nothing during a restart). It has its own ``State`` (the next outage and the outages
that stopped the job) and adds one output, ``outages``. With groups that never fail, a run is then a
deterministic timeline, worked out below in plain Python (float64) and compared with the kernel's (float32).
With X past the end of the run, every output is the kernel's without the part, bit for bit. The fast tier
compiles one program (X = 200 min); the other periods and the bit-for-bit check are in the slow tier."""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest


class OutageState(NamedTuple):
    next_at: jax.Array  # the next outage (wall time, minutes)
    outages: jax.Array  # the outages that stopped the job


@dataclasses.dataclass(frozen=True)
class PeriodicOutage:
    """The whole job stops every ``every_min`` minutes (static: a new period compiles anew, fine for a toy)."""

    every_min: float

    def init(self, kx, ids):
        c = ids.shape[0]
        return OutageState(jnp.full((c,), self.every_min, jnp.float32), jnp.zeros((c,), jnp.float32))

    def next_time(self, kx, s):
        return s.next_at

    def event(self, kx, s, taken, tn, u):
        # the next outage; the job stops where the event is taken (the kernel: only while computing or
        # checkpointing)
        return OutageState(jnp.where(taken, s.next_at + jnp.float32(self.every_min), s.next_at), s.outages), taken

    def outputs(self, kx, s):
        return {"outage_times_next": s.next_at}


@dataclasses.dataclass(frozen=True)
class CountedOutage(PeriodicOutage):
    """The same, counting the outages whose event the run took (its own output)."""

    def event(self, kx, s, taken, tn, u):
        s, stop = PeriodicOutage.event(self, kx, s, taken, tn, u)
        return s._replace(outages=s.outages + taken), stop

    def outputs(self, kx, s):
        return {"outages": s.outages}


def setup(**changes):
    from spare_jax.model.runsetup import RunSetup

    n = 4
    values = dict(scheme="spare", groups=n, redundancy=2, microbatches=1, ring=tuple(range(n)),
                  group_mtbf_min=(1e12,) * n, weibull_shape=1.0, ages="kept", domains=(), job_mtbf_min=None,
                  repair_time_min=30.0, repair_law="fixed", repair_sigma=1.0, spares=None, hardware_repair_min=None,
                  work_min=600.0, ckpt_cost_min=3.0, restart_min=12.0, ckpt_interval_min=50.0, restart_depth=None)
    values.update(changes)
    return RunSetup(**values)


def run(s, parts=(), runs=4):
    from spare_jax.kernels.driver import as_uint32_key_words
    from spare_jax.kernels.run import run_kernel
    from spare_jax.kernels.lower import lower

    fn = jax.jit(functools.partial(run_kernel, shape=lower(s)[0]._replace(parts=parts)))
    out = fn(as_uint32_key_words(1), jnp.arange(runs, dtype=jnp.uint32), np.uint32(runs), lower(s)[1],
             max_events=np.int32(1 << 16))
    return {k: np.asarray(v) for k, v in out.items()}


def timeline(work, tau, cost, restart, every):
    """The run's TTT, restarts and checkpoints with outages every ``every`` minutes and no group failure."""
    t, wc, wu, comp, phase, pend, final, out_at = 0.0, 0.0, 0.0, 0.0, "compute", 0.0, False, every
    restarts = ckpts = 0
    while True:
        if phase == "compute":
            t_ck, t_w = t + (tau - comp), t + (work - wc - wu)
            t_ph = min(t_ck, t_w)
            if out_at < t_ph:  # an outage: the work since the last checkpoint is lost
                t, wu, comp, phase, pend, out_at = out_at, 0.0, 0.0, "restart", out_at + restart, out_at + every
                restarts += 1
                continue
            comp += t_ph - t
            wu += t_ph - t
            t = t_ph
            final = t_w <= t_ck
            if final:
                wu = work - wc
            phase, pend, comp = "ckpt", t + cost, 0.0
        elif phase == "ckpt":
            if out_at < pend:
                t, wu, comp, phase, pend, out_at, final = out_at, 0.0, 0.0, "restart", out_at + restart, out_at + every, False
                restarts += 1
                continue
            t, wc, wu, ckpts = pend, wc + wu, 0.0, ckpts + 1
            if final:
                return t, restarts, ckpts
            phase = "compute"
        else:  # a restart: an outage during it does nothing
            if out_at < pend:
                out_at += every
                continue
            t, phase, comp = pend, "compute", 0.0


@pytest.mark.parametrize("every", [200.0, pytest.param(130.0, marks=pytest.mark.slow),
                                   pytest.param(333.0, marks=pytest.mark.slow)])
def test_a_periodic_outage_defined_here_runs_through_whole_runs(every):
    s = setup()
    out = run(s, (CountedOutage(every),))
    ttt, restarts, ckpts = timeline(600.0, 50.0, 3.0, 12.0, every)
    assert np.allclose(out["ttt"], ttt, rtol=1e-6), (out["ttt"], ttt)
    assert (out["restarts"] == restarts).all() and (out["ckpts"] == ckpts).all()
    assert (out["outages"] >= restarts).all() and (out["job_failures"] == 0).all()
    assert restarts > 0


@pytest.mark.slow
def test_an_outage_past_the_run_changes_nothing():
    # the part is there, its event never comes before the end: every output is the kernel's without it
    s = setup(group_mtbf_min=(300.0, 400.0, 350.0, 500.0), job_mtbf_min=900.0)
    plain = run(s, runs=8)
    with_part = run(s, (PeriodicOutage(1e9),), runs=8)
    assert set(with_part) == set(plain) | {"outage_times_next"}
    for key in plain:
        assert plain[key].tobytes() == with_part[key].tobytes(), key
