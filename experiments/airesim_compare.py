"""Spare pools compared with AIReSim (a public SimPy simulator of an AI training job on a cluster with spare
servers and a repair pipeline, github.com/karthikp-ubc/airesim): the same setting run in both.

    python experiments/airesim_compare.py PATH/TO/airesim            # about 4 minutes of CPU (2 cores)
    python experiments/airesim_compare.py PATH/TO/airesim --quick    # ten times fewer runs (~30 s)

PATH is a checkout of AIReSim (the folder that holds its ``airesim`` package; it needs ``simpy``). Without
it, or without simpy, the script says so and exits 0. Nothing of AIReSim is copied here; it is imported
from PATH. Used: karthikp-ubc/airesim at commit 7b139c741671078301913473cfe92bd9211235ab.

The mapping (AIReSim name -> ours; every time in minutes)
--------------------------------------------------------
* a server -> a group of scheme ``none`` (r = 1: any failure stops the job); job_size -> N;
  random_failure_rate -> 1 / group MTBF (exponential clocks); systematic_failure_fraction = 0 (no
  "bad" servers), diagnosis_probability = 1, diagnosis_uncertainty = 0, the default policies (no
  retirement).
* recovery_time -> the restart R; host_selection_time = 0 and preemption_wait_time = 0 (both would add
  to R, the second only when a spare is taken from AIReSim's spare pool: no counterpart here).
* spare_pool_size = K with warm_standbys = 0 and working_pool_size = N -> spares = K. At a failure
  AIReSim waits R, then takes a healthy idle server (a repaired one, else one from its spare pool),
  else stalls until the first repaired server comes back: our restart, which ends at the later of R and
  the moment the failed group has a spare. ``unlimited`` is spare_pool_size = 50 there (never emptied in
  these settings) and ``spares=None`` here.
* the repair pipeline with prob_auto_to_manual = 0 (automated repair only, never retired) ->
  hardware_repair_min = H. AIReSim draws the repair time from an exponential law with mean
  auto_repair_time; ours is exactly H. Column ``fixed H`` runs AIReSim with its repair shop's exponential
  draw replaced by its mean (one method, swapped for the run and restored: ``_fixed_repairs``);
  column ``as shipped`` runs it unmodified.
* job_length -> the work W. AIReSim loses no work at a failure (no checkpoints: the job resumes where it
  stopped); we take C = 0 and report our TTT without the lost work: W + (restart + stall) * W / compute
  (our restarts and stalls per minute of computing, times W). With C = 0 a checkpoint takes no time, so
  tau changes nothing but the work recomputed; the raw TTT is printed too.
* column ``warm standbys`` (setting B): AIReSim's other way to hold spares, warm_standbys = K and
  working_pool_size = N + K: a failed server is swapped for a standby after R, and with none left the job
  waits until all N + K servers are back from repair (not one).

What cannot coincide: our groups keep failing during a restart or a stall (that group needs a spare too);
AIReSim's servers fail only while the job computes. Setting A makes such failures rare (R << H, N H <<
MTBF) while the single spare still runs out measurably; setting B uses AIReSim's own defaults for
R, H and the server failure rate at N = 256, where they are not rare: there our TTT is longer whenever
the pool runs dry, and the two agree once it never does.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import time

import numpy as np

from spare_jax.model.runsetup import RunSetup
from spare_jax.reference.refrun import reference_runs

AIRESIM_COMMIT = "7b139c741671078301913473cfe92bd9211235ab"
UNLIMITED_AIRESIM = 50  # spare servers that never run out in these settings

# name, N, job MTBF (min), R, H, W, tau, spare counts (None = unlimited), runs (ours, AIReSim)
SETTINGS = (
    ("A", 16, 48_000.0, 1.0, 480.0, 960_000.0, 2_400.0, (1, None), (6_000, 6_000)),
    ("B", 256, 144_000.0 / 256, 20.0, 120.0, 28_125.0, 60.0, (0, 1, 2, 4, None), (1_000, 1_000)),
)


def _args():
    doc = __doc__.strip().splitlines()
    parser = argparse.ArgumentParser(description=doc[0])
    parser.add_argument("airesim", nargs="?", default=None, help="path of an AIReSim checkout")
    parser.add_argument("--quick", action="store_true", help="ten times fewer runs")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def _import_airesim(path):
    """AIReSim's modules, or None with the reason printed."""
    if path is None or not os.path.isdir(os.path.join(path, "airesim")):
        print(f"skipped: no AIReSim checkout at {path!r} (give the folder that holds its airesim package; "
              f"git clone https://github.com/karthikp-ubc/airesim, commit {AIRESIM_COMMIT[:12]})")
        return None
    if importlib.util.find_spec("simpy") is None:
        print("skipped: AIReSim needs simpy (pip install simpy)")
        return None
    sys.path.insert(0, os.path.abspath(path))
    import airesim.repairs
    from airesim.params import Params
    from airesim.simulator import Simulator
    return Params, Simulator, airesim.repairs.RepairShop


class _MeanOnly:
    """A repair shop's random source whose exponential draw is its mean (every other draw unchanged)."""

    def __init__(self, rng):
        self._rng = rng

    def expovariate(self, lambd):
        return 1.0 / lambd

    def __getattr__(self, name):
        return getattr(self._rng, name)


class _fixed_repairs:
    """Within the block, AIReSim's repair shops take exactly their mean repair time."""

    def __init__(self, shop, on: bool):
        self.shop, self.on = shop, on

    def __enter__(self):
        self.orig = self.shop.__init__
        if self.on:
            orig = self.orig

            def init(shop_self, *a, **k):
                orig(shop_self, *a, **k)
                shop_self.rng = _MeanOnly(shop_self.rng)

            self.shop.__init__ = init

    def __exit__(self, *exc):
        self.shop.__init__ = self.orig


def _airesim(mods, n, mtbf_job, r, h, w, k, runs, seed, fixed, warm=False):
    Params, Simulator, shop = mods
    k = UNLIMITED_AIRESIM if k is None else k
    pool = dict(warm_standbys=k, working_pool_size=n + k, spare_pool_size=0) if warm else \
        dict(warm_standbys=0, working_pool_size=n, spare_pool_size=k)
    p = Params(random_failure_rate=1.0 / (mtbf_job * n), systematic_failure_fraction=0.0, recovery_time=r,
               host_selection_time=0.0, preemption_wait_time=0.0, job_size=n, job_length=w,
               auto_repair_time=h, prob_auto_to_manual=0.0, auto_repair_fail_prob=0.0,
               manual_repair_fail_prob=0.0, failure_distribution="exponential", diagnosis_probability=1.0,
               diagnosis_uncertainty=0.0, **pool)
    with _fixed_repairs(shop, fixed):
        ttt = np.array([Simulator(p, seed=seed + i).run().total_training_time for i in range(runs)])
    return ttt


def _ours(n, mtbf_job, r, h, w, tau, k, runs, seed):
    setup = RunSetup(scheme="none", groups=n, redundancy=1, microbatches=1, ring=tuple(range(n)),
                     group_mtbf_min=(mtbf_job * n,) * n, weibull_shape=1.0, ages="kept", domains=(),
                     job_mtbf_min=None, repair_time_min=None, repair_law="fixed", repair_sigma=1.0, spares=k,
                     hardware_repair_min=h, work_min=w, ckpt_cost_min=0.0, restart_min=r, ckpt_interval_min=tau,
                     restart_depth=None)
    out = reference_runs(setup, runs, seed)
    down = out["restart_min"] + out["spare_wait_min"]
    return out, w + down * w / out["compute_min"]


def _ms(x):
    return float(np.mean(x)), float(np.std(x, ddof=1) / math.sqrt(x.size))


def main():
    args = _args()
    mods = _import_airesim(args.airesim)
    if mods is None:
        return
    scale = 10 if args.quick else 1
    print("TTT - W in minutes (mean +- standard error); z = (ours - AIReSim fixed H) / combined error")
    head = (f"{'':2} {'N':>4} {'K':>5} {'AIReSim fixed H':>17} {'as shipped':>17} {'warm standbys':>17} "
            f"{'ours':>17} {'z':>6} {'ours raw':>17} {'fails in downtime':>17}")
    t_all = time.time()
    for name, n, mj, r, h, w, tau, ks, (n_ours, n_air) in SETTINGS:
        n_ours, n_air = n_ours // scale, n_air // scale
        print(f"\nsetting {name}: N = {n}, job MTBF {mj:g} min (group MTBF {mj * n / 60:g} h), R = {r:g}, "
              f"H = {h:g}, W = {w:g} min ({w / mj:g} job MTBFs), C = 0, tau = {tau:g}; runs: ours {n_ours}, "
              f"AIReSim {n_air}")
        print(head)
        for i, k in enumerate(ks):
            seed = 1_000_000 * (args.seed + 1) + 100_000 * i
            fixed = _ms(_airesim(mods, n, mj, r, h, w, k, n_air, seed, True) - w)
            shipped = _ms(_airesim(mods, n, mj, r, h, w, k, n_air, seed + 50_000, False) - w)
            warm = _ms(_airesim(mods, n, mj, r, h, w, k, n_air, seed + 70_000, True, warm=True) - w) \
                if name == "B" else None
            out, ttt = _ours(n, mj, r, h, w, tau, k, n_ours, seed)
            ours, raw = _ms(ttt - w), _ms(out["ttt_min"] - w)
            z = (ours[0] - fixed[0]) / math.hypot(ours[1], fixed[1])
            extra = float(np.mean(out["group_failures"] - out["restarts"]))

            def f(v):
                return f"{'-':>17}" if v is None else f"{v[0]:>9.1f} +- {v[1]:<5.1f}"

            kk = "inf" if k is None else str(k)
            print(f"{name:2} {n:>4} {kk:>5} {f(fixed)} {f(shipped)} {f(warm)} {f(ours)} {z:>6.2f} {f(raw)} "
                  f"{extra:>17.3f}", flush=True)
    print(f"\n({time.time() - t_all:.0f} s)  'fails in downtime': our group failures per run during a restart "
          f"or a stall (AIReSim has none)")


if __name__ == "__main__":
    main()
