"""``spare-jax run``: the planner's quick answer at N = 600 groups, or with ``full`` the whole suite behind
the paper's figures (``run_suite``); its closing summary, each row against the paper's claim or the theory
(``verdict``), as a ``Report`` (``run_report``) and as text (``format_summary``)."""

from __future__ import annotations

import os
import time

from .. import plotting
from ..model.cluster import Cluster, Sampling
from ..results import Report
from .common import log
from .overhead import overhead_vs_r
from .reorder import reorder_movement
from .training import rstar_vs_n, ttt_vs_r
from .wipeout import wipeout_validation


PAPER = {
    "overhead_r20": "≈ 2.8× at r = 20 (2–3× up to r ≈ 20), vs 20× for replication",
    "availability": "> 90% (93.9% quoted) for SPARe+CKPT",
    "ttt_reduction": "40–50% shorter than the best Rep+CKPT",
    "r_star": "r* ≈ log2 N + 0.833 (10.06 at N = 600); a summary says ≈ 8 at N = 600",
}


QUICK_N = 600

# the paper's claims as numbers, for the summary's verdict column: row quantity prefix -> (low, high, text)
PAPER_RANGES = {
    "compute overhead": (2.0, 3.0, "the paper's 2–3×"),
    "SPARe+CKPT r*": (8.0, 10.06, "the paper's 8–10"),
    "SPARe+CKPT availability": (90.0, 100.0, "the paper's > 90%"),
    "TTT reduction": (40.0, 50.0, "the paper's 40–50%"),
}


def _ci95(mean, stderr) -> dict:
    """The 95% interval of a Monte Carlo mean over many trials (failures to wipe-out, the compute overhead:
    means of thousands of trials, near normal): ``mc_ci95_low`` / ``mc_ci95_high`` (None when there is none).
    A time-to-train from runs takes ``_ttt_ci95``."""
    if mean is None or stderr is None:
        return {"mc_ci95_low": None, "mc_ci95_high": None}
    return {"mc_ci95_low": mean - 1.96 * stderr, "mc_ci95_high": mean + 1.96 * stderr}


def _ttt_ci95(row) -> dict:
    """A time-to-train row's 95% interval (``ttt.ttt_interval``'s bootstrap, in the support) as the summary's
    ``mc_ci95_low`` / ``mc_ci95_high``; None where there is no row or no interval."""
    if row is None:
        return {"mc_ci95_low": None, "mc_ci95_high": None}
    return {"mc_ci95_low": row["mc_ttt_ci95_low"], "mc_ci95_high": row["mc_ttt_ci95_high"]}


def verdict(row: dict) -> str:
    """One phrase per summary row: against the paper's claim where it makes one (the Monte Carlo value when
    there is one, else the theory's), else whether the theory lies within 4 standard errors of the Monte
    Carlo mean, with z."""
    value = row["mc"] if row.get("mc") is not None else row.get("theory")
    if row.get("paper", "-") != "-":
        for prefix, (low, high, text) in PAPER_RANGES.items():
            if row["quantity"].startswith(prefix) and value is not None:
                if prefix == "SPARe+CKPT availability":
                    return f"{'within' if value > low else 'below'} {text}"
                return f"{'below' if value < low else 'above' if value > high else 'within'} {text}"
    lo, hi, th = row.get("mc_ci95_low"), row.get("mc_ci95_high"), row.get("theory")
    if lo is not None and th is not None:
        # the project's rule for a theory against a Monte Carlo: within 4 standard errors (a 95% interval
        # misses an exact theory in 1 row in 20 by chance); z says by how much
        se = (hi - lo) / (2 * 1.96)
        if se <= 0:
            return "theory equals the MC" if th == (lo + hi) / 2 else "theory off the MC (no spread)"
        z = (th - (lo + hi) / 2) / se
        return f"theory within 4 s.e. of the MC (z = {z:+.1f})" if abs(z) <= 4 else \
            f"theory off the MC by more than 4 s.e. (z = {z:+.1f})"
    return "-"


def run_report(out_dir: str | None = None, full: bool = False, seed: int = 0, progress: bool = True) -> Report:
    """``spare-jax run`` (``make run``): ``run_suite`` into ``out_dir`` (default ``results/``, or ``figures/``
    with ``full``), refused up front when ``out_dir`` is a file or cannot be written; its summary as a
    ``Report`` whose ``to_json()`` is what ``spare-jax run --json`` prints."""
    from ..kernels.state_files import check_writable_dir

    out = out_dir or ("figures" if full else "results")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"`out_dir` {out} exists and is not a directory")
    check_writable_dir(out, "`out_dir`")
    return Report(run_suite(out, full=full, seed=seed, progress=progress))


def run_suite(out_dir: str = "results", full: bool = False, seed: int = 0, progress: bool = True) -> dict:
    """``spare-jax run``: the planner's quick answer at N = 600 groups (600,000 GPUs; a few minutes on 2
    cores, into ``results/``) or, with ``full``, the whole suite behind the paper's figures (``figures/``).
    Every stage writes its figures and data to ``out_dir``; returns (and writes ``summary.json``) the closing
    summary: per scheme r*, tau*, TTT in hours (closed form and Monte Carlo) and availability in percent,
    then the checks of theory against Monte Carlo, each row naming its r."""
    from .. import ttt
    from ..ttt.router import Problem, choose

    n = QUICK_N
    t_start = time.perf_counter()
    results = {}
    state = {}

    def optimum():
        state["opt"] = ttt.optimize_r_tau(Cluster(n), space=ttt.Space(r_max=20), progress=progress)
        sch = state["opt"]["schemes"]
        return {k: {"r_star": v["r_star"], "tau_min": v["ckpt_interval_min"], "ttt_hours": v["ttt_hours"]}
                for k, v in sch.items()}

    def r_near():  # the r of the quick Monte Carlo: a spread plus both optima and their neighbours
        sch = state["opt"]["schemes"]
        rs = {1, 2, 4, 8, 12, 20}
        for s in ("spare", "rep"):
            rs |= {max(1, sch[s]["r_star"] - 1), sch[s]["r_star"], min(20, sch[s]["r_star"] + 1)}
        return tuple(sorted(rs))

    if not full:
        stages = [
            (f"closed-form optimum r*, tau* per scheme (N = {n})", optimum),
            (f"time-to-train vs r: closed form, Monte Carlo near the optima (N = {n}, 30 runs per point)",
             lambda: ttt_vs_r(out_dir, groups=n, rs=tuple(range(1, 21)), mc_rs=r_near(), ckpt_costs=(5.0,),
                              sampling=Sampling(30, seed, progress=progress))),
            (f"wipe-out validation (N = {n}, r = 4, 8, 16)",
             lambda: wipeout_validation(out_dir, groups=(n,), rs=(4, 8, 16), trials={n: 100_000}, seed=seed,
                                        progress=progress)),
            (f"overhead at r = 4, r*, 20 (N = {n}, 500 trials per r)",
             lambda: overhead_vs_r(out_dir, groups=(n,), rs=tuple(sorted({4, 20,
                                                                         state["opt"]["schemes"]["spare"]["r_star"]})),
                                   trials={n: 500}, seed=seed, progress=progress)),
            (f"reorder controller (N = {n})", lambda: reorder_movement(out_dir, traces=1, large=None, seed=seed,
                                                                      solver_compare_events=60)),
            ("r* vs N (100, 600, 6000 groups)", lambda: rstar_vs_n(out_dir, groups=(100, n, 6000), r_max=16,
                                                                  progress=progress)),
        ]
    else:
        stages = [
            (f"closed-form optimum r*, tau* per scheme (N = {n})", optimum),
            ("wipe-out validation (N = 600, 6000, 60000)", lambda: wipeout_validation(out_dir, seed=seed,
                                                                                      progress=progress)),
            ("overhead vs r (N = 600, 6000)", lambda: overhead_vs_r(out_dir, seed=seed, progress=progress)),
            ("reorder controller (N = 600, 6000)", lambda: reorder_movement(out_dir, seed=seed)),
            ("time-to-train vs r (N = 600)",
             lambda: ttt_vs_r(out_dir, sampling=Sampling(120, seed, progress=progress))),
            ("r* vs N (100 .. 100,000 groups)", lambda: rstar_vs_n(out_dir, progress=progress)),
        ]
    log(f"spare-jax run{' --full' if full else ''}: {len(stages)} stages, expected "
        f"{'~25-40 minutes' if full else 'a few minutes'} on a 2-core CPU; figures and data in {out_dir}/")
    for i, (name, fn) in enumerate(stages, 1):
        t0 = time.perf_counter()
        log(f"[{i}/{len(stages)}] {name}")
        results[name] = fn()
        log(f"[{i}/{len(stages)}] {name}: done in {time.perf_counter() - t0:.0f} s")

    def stage(prefix):
        return next(v for k, v in results.items() if k.startswith(prefix))

    opt = state["opt"]
    ttt_rows, wipe_rows, ovh_rows = stage("time-to-train"), stage("wipe-out"), stage("overhead")
    work_h = ttt.Training().work_hours

    def mc_at(scheme, r):
        sel = [row for row in ttt_rows if row["scheme"] == scheme and row["redundancy"] == r
               and row["ckpt_cost_min"] == 5.0 and row["mc_ttt_hours"] is not None]
        return sel[0] if sel else None

    names = {"spare": "SPARe+CKPT", "rep": "Rep+CKPT", "none": "CKPT only"}
    plan = []
    for scheme in ("spare", "rep", "none"):
        th = opt["schemes"][scheme]
        mc = mc_at(scheme, th["r_star"])
        form = choose(Problem(Cluster(n), ttt.Policy(scheme, th["r_star"]))).name  # the router's, for the optimum
        # an approximate form only ranks r and tau: the Monte Carlo at its optimum answers (where there is one)
        answered = mc is not None and form == "closed_form_approx"
        plan.append({"scheme": names[scheme], "r_star": th["r_star"], "ckpt_interval_min": th["ckpt_interval_min"],
                     "ttt_hours": mc["mc_ttt_hours"] if answered else th["ttt_hours"],
                     "method": "epoch_pool" if answered else form,
                     "theory_ttt_hours": th["ttt_hours"], "theory_method": form,
                     "mc_ttt_hours": None if mc is None else mc["mc_ttt_hours"],
                     "mc_ttt_ci95_low": None if mc is None else mc["mc_ttt_ci95_low"],
                     "mc_ttt_ci95_high": None if mc is None else mc["mc_ttt_ci95_high"],
                     "availability_pct": mc["mc_availability_pct"] if answered else th["availability_pct"],
                     "mc_availability_pct": None if mc is None else mc["mc_availability_pct"]})
    for p in plan:
        p["ttt_vs_best_rep"] = p["ttt_hours"] / plan[1]["ttt_hours"]
    sp_mc, rp_mc = mc_at("spare", opt["schemes"]["spare"]["r_star"]), mc_at("rep", opt["schemes"]["rep"]["r_star"])

    def wipe(r):
        return next((w for w in wipe_rows if w["groups"] == n and w["redundancy"] == r
                     and w["placement"] == "stacked"), None)

    def ovh(r):
        return next((o for o in ovh_rows if o["groups"] == n and o["redundancy"] == r), None)

    r_sp = opt["schemes"]["spare"]["r_star"]
    rows = []
    w8 = wipe(8)
    if w8 is not None:
        rows.append({"quantity": f"E[T], failures to wipe-out (N={n}, stacked)", "redundancy": 8, "theory": w8["theory_exact"],
                     "mc": w8["mc_mean"], **_ci95(w8["mc_mean"], w8["mc_stderr"]), "paper": "-"})
    for r, claim in ((r_sp, "-"), (20, PAPER["overhead_r20"])):
        o = ovh(r)
        if o is not None and not any(x.get("redundancy") == r and x["quantity"].startswith("compute") for x in rows):
            rows.append({"quantity": f"compute overhead Ω, × (N={n}; Rep's Ω = r)", "redundancy": r,
                         "theory": o["theory_overhead"], "mc": o["mc_overhead"],
                         **_ci95(o["mc_overhead"], o["mc_overhead_stderr"]), "paper": claim})
    rows += [
        {"quantity": "SPARe+CKPT r* (C=5 min)", "redundancy": r_sp, "theory": r_sp, "mc": None, **_ci95(None, None),
         "paper": PAPER["r_star"]},
        {"quantity": "SPARe+CKPT availability at r* (%)", "redundancy": r_sp, "theory": opt["schemes"]["spare"]["availability_pct"],
         "mc": None if sp_mc is None else sp_mc["mc_availability_pct"], **_ci95(None, None),
         "paper": PAPER["availability"]},
        {"quantity": "SPARe+CKPT TTT at r*, tau* (hours)", "redundancy": r_sp, "theory": opt["schemes"]["spare"]["ttt_hours"],
         "mc": None if sp_mc is None else sp_mc["mc_ttt_hours"],
         **_ttt_ci95(sp_mc),
         "paper": "-"},
        {"quantity": "Rep+CKPT TTT at its r*, tau* (hours)", "redundancy": opt["schemes"]["rep"]["r_star"],
         "theory": opt["schemes"]["rep"]["ttt_hours"], "mc": None if rp_mc is None else rp_mc["mc_ttt_hours"],
         **_ttt_ci95(rp_mc),
         "paper": "-"},
        {"quantity": "TTT reduction, best SPARe+CKPT vs best Rep+CKPT (%)", "redundancy": None,
         "theory": 100 * opt["ttt_reduction_vs_rep"],
         "mc": None if (sp_mc is None or rp_mc is None) else 100 * (1 - sp_mc["mc_ttt_hours"] / rp_mc["mc_ttt_hours"]),
         **_ci95(None, None), "paper": PAPER["ttt_reduction"]},
    ]
    for row in rows:
        row["verdict"] = verdict(row)
    log(f"spare-jax run: done in {time.perf_counter() - t_start:.0f} s")
    from ..model.failures import FailureModel

    model = FailureModel()
    summary = {"full": full, "seed": seed, "out_dir": out_dir,  # no timing: a rerun reproduces the file
               "setting": {"groups": n, "gpus": round(n * model.gpus_per_group),
                           "gpus_per_group": round(model.gpus_per_group),
                           "group_mtbf_min": model.group_mtbf_min, "cluster_mtbf_min": model.cluster_mtbf_min(n),
                           "work_hours": work_h, "ckpt_cost_min": ttt.Training().ckpt_cost_min,
                           "restart_min": ttt.Training().restart_min},
               "plan": plan, "ttt_reduction_vs_rep": 1.0 - plan[0]["ttt_vs_best_rep"], "rows": rows,
               "optimize": {k: v for k, v in opt.items() if k != "curves"}}
    plotting.write_json(os.path.join(out_dir, "summary.json"), summary)
    return summary


def format_summary(summary: dict) -> str:
    def f(v, spec=".4g"):
        if v is None:
            return "-"
        if isinstance(v, int):
            return str(v)
        return format(v, spec)

    lines = []
    st = summary.get("setting")
    if st:
        lines += [f"Plan for {st['gpus']:,.0f} GPUs = {st['groups']} groups x {st['gpus_per_group']:,.0f} GPUs; "
                  f"MTBF {st['group_mtbf_min']:,.0f} min per group, {st['cluster_mtbf_min']:.3g} min for the cluster; "
                  f"work W = {st['work_hours']:g} h, checkpoint C = {st['ckpt_cost_min']:g} min, restart "
                  f"R = {st['restart_min']:g} min", ""]
    if summary.get("plan"):
        how = {"closed_form": "exact form", "closed_form_approx": "approx. form", "epoch_pool": "MC"}
        lines.append(f"{'scheme':<12} {'r*':>3} {'tau* (min)':>10} {'TTT (h)':>9} {'from':>12} {'form (h)':>9} "
                     f"{'MC TTT (h)':>13} {'availability':>12} {'TTT / best Rep':>14}")
        lines.append("-" * 103)
        for p in summary["plan"]:
            mc = "-" if p["mc_ttt_hours"] is None else (
                f"{p['mc_ttt_hours']:.0f} ± {(p['mc_ttt_ci95_high'] - p['mc_ttt_ci95_low']) / 2:.0f}")
            method = p.get("method", "closed_form")
            lines.append(f"{p['scheme']:<12} {p['r_star']:>3} {p['ckpt_interval_min']:>10.1f} {p['ttt_hours']:>9.0f} "
                         f"{how.get(method, method):>12} {f(p.get('theory_ttt_hours'), ',.0f'):>9} {mc:>13} "
                         f"{p['availability_pct']:>11.1f}% {p['ttt_vs_best_rep']:>13.2f}×")
        lines += ["(TTT: the answer at r* and tau*, from the exact closed form, or from the Monte Carlo where the form is "
                  "approximate (it then only chooses r* and tau*); form: the closed form at tau*; MC TTT: Monte Carlo "
                  "at the same r and tau*, ± 95% CI; TTT / best Rep: against the best Rep+CKPT's TTT, < 1 = "
                  "shorter)", ""]
    rows = summary["rows"]
    half = [None if row.get("mc_ci95_low") is None else (row["mc_ci95_high"] - row["mc_ci95_low"]) / 2
            for row in rows]
    verdicts = [row.get("verdict") or verdict(row) for row in rows]
    width = max([len("verdict")] + [len(v) for v in verdicts])
    lines.append(f"{'check':<52} {'r':>3} {'theory':>10} {'MC':>10} {'± 95% CI':>10}  {'verdict':<{width}}  "
                 "paper's claim")
    lines.append("-" * 150)
    for row, h, v in zip(rows, half, verdicts):
        lines.append(f"{row['quantity']:<52} {f(row.get('redundancy')):>3} {f(row['theory']):>10} {f(row['mc']):>10} "
                     f"{f(h):>10}  {v:<{width}}  {row['paper']}")
    lines.append(f"(data in {summary.get('out_dir', 'figures')}/summary.json)")
    lines.append("Your own cluster: spare-jax plan --gpus G --gpus-per-group g --gpu-mtbf-hours H (see "
                 "spare-jax plan --help)")
    return "\n".join(lines)
