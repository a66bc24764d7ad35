"""One whole training run, in plain numbers (docs/runs.md#what-a-run-is): what the whole-run kernel and its
independent references take.

``RunSetup`` is the input a run simulator needs and nothing more: the scheme and its layout, each physical
group's failure clock, the failure domains, the job-wide clock, the repair law and the spare pool, the
costs of the run and its policy. It is built from the library's values by ``RunSetup.build(cluster,
training, ...)``; simulators read the fields only (every field is a plain number, string or tuple, so a
setup is hashable and can be a static argument of a compiled kernel).

Layout. ``spare`` is the ``stacked`` placement and ``rep`` the ``block`` one, both over *ring positions*:
ring position ``i`` is physical group ``ring[i]``. Shard j's holders are ring positions ``j, j-1, ..,
j-r+1 (mod N)`` (``stacked``) or the r positions of its block ``floor(j/r) r ..`` (``block``). ``none`` is
``stacked`` with r = 1; ``elastic`` holds the whole model in every group (no shards to lose).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

RUN_SCHEMES = ("spare", "rep", "none", "elastic")
ELASTIC_DATA = ("rebalance", "shrink")


@dataclasses.dataclass(frozen=True)
class RunSetup:
    """A whole training run (times in minutes).

    Attributes:
      scheme: ``spare``, ``rep``, ``none`` or ``elastic``.
      groups: N. redundancy: r (1 for ``none`` and ``elastic``). microbatches: m per shard (>= 1).
      ring: ring position -> physical group (a permutation of 0..N-1).
      group_mtbf_min: mean time to failure of each physical group's own clock (lemons included).
      weibull_shape: the group clocks' Weibull shape k (1.0: exponential); the mean is kept.
      ages: ``kept`` (a global restart leaves running clocks alone) or ``renewed`` (every group draws a new one).
      domains: one entry per level: ``(domain_of_group, mtbf_min)``, ``domain_of_group[g]`` the index of
        physical group g's domain at that level (exponential clocks, one per domain).
      job_mtbf_min: mean time between job-wide failures (None: none).
      repair_time_min, repair_law (``fixed``, ``exp``, ``lognormal``), repair_sigma: repair without a global
        restart (None: a failed group waits for the next global restart).
      spares, hardware_repair_min: the finite spare pool of K node sets and the hardware repair time H (None:
        unlimited). With or without repair (docs/runs.md#spare-pool).
      work_min: W, failure-free computing. ckpt_cost_min: C. restart_min: R (already scaled to the cluster).
      ckpt_interval_min: tau, in computing time. restart_depth: D_max (None: never restart on purpose).
      elastic_data: ``rebalance`` or ``shrink`` (``elastic`` only).
      failure_stall_min, rejoin_stall_min: the wall time the whole job pauses after a group failure that does
        not end in a global restart, and after a group's return from repair (docs/runs.md#stalls).
      epoch: None for a whole run; an ``Epoch`` for an epoch with repair (``RunSetup.for_epoch``): the same
        setup, run from every group up to the first wipe-out (left out of the repr, so a whole run's repr,
        its resumable state's key, is what it was).
    """

    scheme: str
    groups: int
    redundancy: int
    microbatches: int
    ring: tuple
    group_mtbf_min: tuple
    weibull_shape: float
    ages: str
    domains: tuple
    job_mtbf_min: float | None
    repair_time_min: float | None
    repair_law: str
    repair_sigma: float
    spares: int | None
    hardware_repair_min: float | None
    work_min: float
    ckpt_cost_min: float
    restart_min: float
    ckpt_interval_min: float
    restart_depth: float | None
    elastic_data: str = "rebalance"
    failure_stall_min: float = 0.0
    rejoin_stall_min: float = 0.0
    epoch: "Epoch | None" = dataclasses.field(default=None, repr=False)

    @property
    def placement(self) -> str:
        return {"spare": "stacked", "rep": "block", "none": "stacked", "elastic": "none"}[self.scheme]

    def holders(self) -> np.ndarray:
        """``int[N, r]``: the ring positions holding each shard (not for ``elastic``)."""
        n, r = self.groups, self.redundancy
        j = np.arange(n)[:, None]
        if self.placement == "block":
            return (j // r) * r + np.arange(r)[None, :]
        return (j - np.arange(r)[None, :]) % n

    @classmethod
    def build(cls, cluster, training, scheme: str, redundancy: int, tau_min: float,
              restart_depth: float | None = None, ages: str = "kept", elastic_data: str = "rebalance") -> "RunSetup":
        """The run of ``scheme`` with redundancy r on ``cluster`` (``model.cluster.Cluster``) with the costs of
        ``training`` (``model.training.Training``) and checkpoint interval ``tau_min``."""
        n, model, scen, rep = cluster.groups, cluster.model, cluster.scenario, cluster.repair
        repair_time = None if rep is None or rep.repair_time_min is None else float(rep.repair_time_min)
        if scheme not in RUN_SCHEMES:
            raise ValueError(f"scheme must be one of {', '.join(RUN_SCHEMES)}, got {scheme!r}")
        r = 1 if scheme in ("none", "elastic") else int(redundancy)
        mult = scen.rate_multipliers(n, model.group_mtbf_min)
        mtbf = tuple(float(x) for x in model.group_mtbf_min / np.asarray(mult, float))
        domains = tuple((tuple(int(x) for x in level.members(n)), float(level.mtbf_min)) for level in scen.domains)
        job_rate = scen.job_rate_per_min(n, model.group_mtbf_min)
        shape = float(model.weibull_shape) if model.distribution == "weibull" else 1.0
        return cls(scheme=scheme, groups=n, redundancy=r, microbatches=int(scen.microbatches),
                   ring=tuple(int(x) for x in scen.ring_order(n)), group_mtbf_min=mtbf, weibull_shape=shape,
                   ages=ages, domains=domains, job_mtbf_min=1.0 / job_rate if job_rate > 0 else None,
                   repair_time_min=repair_time,
                   repair_law="fixed" if rep is None else rep.law, repair_sigma=1.0 if rep is None else rep.sigma,
                   spares=None if rep is None else rep.spares,
                   hardware_repair_min=None if rep is None else rep.hardware_repair_min,
                   work_min=60.0 * training.work_hours, ckpt_cost_min=float(training.ckpt_cost_min),
                   restart_min=float(training.restart_for(cluster.gpus)), ckpt_interval_min=float(tau_min),
                   restart_depth=None if restart_depth is None else float(restart_depth), elastic_data=elastic_data,
                   failure_stall_min=float(training.failure_stall_min),
                   rejoin_stall_min=float(training.rejoin_stall_min))

    @classmethod
    def for_epoch(cls, placement, model, scenario, repair, kind: str = "wipeout",
                  max_time_min: float | None = None) -> "RunSetup":
        """The epochs with repair of ``placement`` (``model.placement.Placement``) under ``model``
        (``model.failures.FailureModel``), ``scenario`` and ``repair`` (``model.repair.Repair``) as a setup
        (docs/repair.md#repair-without-a-global-restart): ``kind`` ``wipeout`` (a lost shard ends the epoch;
        any placement) or ``depth`` (the depth's time integrals too; stacked or block), up to ``max_time_min``
        (None: none). No checkpoint, no restart, no stall: C = R = 0, tau = W = +inf. The groups are listed
        in ring order (``ring`` the identity), their shards by ``placement``."""
        n, r, m = placement.groups, placement.redundancy, int(scenario.microbatches)
        if kind == "depth":
            if placement.kind not in ("stacked", "block"):
                raise ValueError("depth with repair needs the stacked or block placement")
            scheme = "spare" if placement.kind == "stacked" else "block"
        else:
            scheme = placement.kind
        order = scenario.ring_order(n)
        mean = model.group_mtbf_min / scenario.rate_multipliers(n, model.group_mtbf_min)[order]
        weibull = model.distribution != "exponential"
        scale = mean.astype(np.float32)  # Weibull: the scale of each group's mean (lemons: the model's / multiplier)
        if weibull:
            scale = scale * np.float32(model.weibull_scale_min / model.group_mtbf_min)
        job_rate = scenario.job_rate_per_min(n, model.group_mtbf_min)
        as_rows = lambda table: tuple(tuple(int(x) for x in row) for row in np.asarray(table))  # noqa: E731
        return cls(scheme=scheme, groups=n, redundancy=r, microbatches=m, ring=tuple(range(n)),
                   group_mtbf_min=tuple(float(x) for x in mean),
                   weibull_shape=float(model.weibull_shape) if weibull else 1.0, ages="kept",
                   domains=tuple((tuple(int(x) for x in level.members(n)[order]), level.mtbf_min)
                                 for level in scenario.domains),
                   job_mtbf_min=1.0 / job_rate if job_rate > 0 else None,
                   repair_time_min=repair.repair_time_min, repair_law=repair.law, repair_sigma=repair.sigma,
                   spares=None, hardware_repair_min=None, work_min=math.inf, ckpt_cost_min=0.0, restart_min=0.0,
                   ckpt_interval_min=math.inf, restart_depth=None,
                   epoch=Epoch(kind, max_time_min, as_rows(placement.stack), as_rows(placement.holders), weibull,
                               tuple(float(x) for x in scale)))

    def clock_scale(self) -> np.ndarray:
        """``float32[N]``: each ring position's clock scale (the mean when exponential): a whole run's from
        ``weibull_scale`` (float64, then float32), an epoch's its own (``Epoch.scale_min``, in float32)."""
        if self.epoch is not None:
            return np.asarray(self.epoch.scale_min, np.float32)
        return self.weibull_scale()[np.asarray(self.ring)].astype(np.float32)

    def weibull_scale(self) -> np.ndarray:
        """Per physical group: the Weibull scale with the group's mean (the mean itself when k = 1)."""
        mean = np.asarray(self.group_mtbf_min, float)
        return mean / math.gamma(1.0 + 1.0 / self.weibull_shape)


@dataclasses.dataclass(frozen=True)
class Epoch:
    """What makes a ``RunSetup`` an epoch with repair (``RunSetup.for_epoch``): ``kind`` ``wipeout`` or
    ``depth``; ``max_time_min``, its time limit (None: none); ``stack`` and ``holders``, each ring position's
    shards and each shard's ring positions (``model.placement.Placement``, as tuples of rows); ``weibull``,
    the clocks' law is Weibull (also with k = 1); ``scale_min``, each ring position's clock scale, computed
    in float32 (the mean times the model's scale over its mean)."""

    kind: str
    max_time_min: float | None
    stack: tuple
    holders: tuple
    weibull: bool
    scale_min: tuple
