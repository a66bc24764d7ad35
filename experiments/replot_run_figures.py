"""Redraw the figures of `spare-jax run --full` that keep their data beside them (ttt_vs_r, rstar_vs_n,
wipeout_theory_vs_mc, overhead_vs_r, ring_ttt, repair, scenarios, microbatches; not reorder_movement, whose
latencies are not kept)
from the CSVs beside them, without recomputing anything: python experiments/replot_run_figures.py [SRC [DST]]
(default figures/ figures/)."""
import sys
import numpy as np
from spare_jax.model.failures import FailureModel
from spare_jax.ttt import Training
from spare_jax.plotting import read_csv
from spare_jax.suite import training, wipeout, overhead

src = sys.argv[1] if len(sys.argv) > 1 else "figures"
dst = sys.argv[2] if len(sys.argv) > 2 else src

def load(name):
    return read_csv(f"{src}/{name}")

m, cfg = FailureModel(), Training()
rows = load("rstar_vs_n.csv"); training._plot_rstar(rows, m, f"{dst}/rstar_vs_n.png")
rows = load("ttt_vs_r.csv")
for r in rows:
    r["ckpt_cost_min"] = float(r["ckpt_cost_min"])
costs = tuple(sorted({r["ckpt_cost_min"] for r in rows}))
training._plot_ttt(rows, rows[0]["groups"], costs, f"{dst}/ttt_vs_r.png", m, cfg)
rows = load("wipeout_validation.csv")
surv = load([f for f in __import__("os").listdir(src) if f.startswith("wipeout_survival_N")][0])
nmin = min(r["groups"] for r in rows)
curves = {}
for kind, red in {(s["placement"], s["redundancy"]) for s in surv}:
    sel = sorted((s for s in surv if s["placement"] == kind and s["redundancy"] == red), key=lambda s: s["k"])
    ex, em = np.zeros(nmin + 1), np.zeros(nmin + 1)
    for s in sel:
        ex[s["k"]], em[s["k"]] = s["exact"], s["mc"]
    curves[(kind, red)] = (ex, em)
wipeout._plot_wipeout(rows, curves, nmin, f"{dst}/wipeout_theory_vs_mc.png")
overhead._plot_overhead(load("overhead_vs_r.csv"), load("depth_at_wipeout.csv"), f"{dst}/overhead_vs_r.png")
# the scenario suite's figures that keep their data beside them: ring_ttt.png and repair.png
if __import__("os").path.exists(f"{src}/ring_ttt.csv"):
    import shutil
    from spare_jax.suite.rings import replot_ring_ttt
    if src != dst:
        for name in ("ring_ttt.csv", "ring_ttt_job_share.csv"):
            shutil.copy(f"{src}/{name}", f"{dst}/{name}")
    replot_ring_ttt(dst)
if __import__("os").path.exists(f"{src}/repair_wipeout.csv"):
    from spare_jax.suite.repair import replot_repair
    replot_repair(src, dst)
if __import__("os").path.exists(f"{src}/scenarios_uptime.csv"):
    from importlib import import_module
    import_module("spare_jax.suite.scenarios").replot_scenarios(src, dst)
if __import__("os").path.exists(f"{src}/microbatches_omega.csv"):
    from importlib import import_module
    import_module("spare_jax.suite.microbatches").replot_microbatches(src, dst)
