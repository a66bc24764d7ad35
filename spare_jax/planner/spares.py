r"""How many spares to buy (docs/planning.md#how-many-spares-to-buy): ``plan --spares auto`` chooses the size K of
a finite spare pool for each scheme's chosen configuration.

A spare is one group's node set (docs/runs.md#spare-pool). Every group failure sends the failed group's node set
away for the hardware repair H; the group takes a free spare at once, or waits for one (first come, first
served), then rejoins after the repair time D (the swap). The pool is paid for the whole run, used or not:

.. math::

    \mathrm{cost}(K) = \mathrm{price} \times (\mathrm{gpus} + K \cdot \mathrm{gpus\_per\_group}) \times
    \mathrm{TTT}(K).

K minimises the cost subject to the wait constraint

.. math::

    P\big(\max_{\text{waits of a run}} w > w_{\max}\big) \le 1\%,

which holds when the one-sided Clopper–Pearson 95% upper bound on that probability, from ``runs`` whole training
runs at K (``x`` of them with a longer wait: ``beta.ppf(0.95, x + 1, runs - x)``), is at most 1%. With no run
over the wait this needs at least ``fewest_runs() = 299`` runs (``1 - 0.05**(1/n) <= 0.01``). Each run's longest
wait is the whole-run kernel's ``spare_wait_max`` (``kernels.run``): from a group's failure (or its node set's
turn in the queue) to the moment it takes a spare, a wait still going at the run's end counted up to it.

Why K is searched after each scheme's configuration, not jointly with it. The demand on the pool is the
failure process: every group failure sends one node set away for exactly H, whatever the scheme, r, m, D_max
or tau, so the number of node sets away (a Poisson count of mean ``N H / group MTBF`` in steady state) and
hence the waits hardly depend on the configuration (only through a down group's clock not running). At any K
that meets the wait constraint a group waits rarely and briefly, so its run is close to the unlimited pool's and
the configuration's ranking is the unlimited pool's: the joint search runs with an unlimited pool, and K is then
searched at each scheme's chosen configuration, with common random numbers (run i has run id i at every K).

The search over K (``search_spares``). Every K runs in one compiled kernel: the pool's static capacity is that
of the largest K the search may try (``ttt.search.pool_capacity``), K itself is a number of the run. From a
start (the P99 of the Poisson count of node sets away, mean N H / group MTBF), steps of 1, 2, 4, ... then bisection find the least K
meeting the constraint, K_c (the constraint is taken as monotone in K). The cost is then evaluated at K_c + 1,
K_c + 2, ... until even the least time-to-train seen (the unlimited pool's, or any K's) could not make a larger
pool cheaper: ``price x (gpus + K G) x TTT_floor >= the best cost``. The chosen K is the cheapest K evaluated
that meets the constraint. Beside it, the least K whose mean time-to-train is within 1% of the unlimited pool's
(the same steps and bisection). ``tests/test_spares.py`` holds the choice to an exhaustive sweep of K.

ByteRobust's cross-check (``byterobust_p99``). ByteRobust sizes its pool of spare *machines* by the P99 of a
binomial: of ``nodes`` machines each in hardware repair with probability ``p = H / (node MTBF + H)``, the 99th
percentile of how many are away at once (about 4 spares per 1,024 nodes at its rates). Our spare is a whole
group's node set, and a failure of any node of a group sends the whole set away: the count of node sets away is
the same binomial count of failed nodes (one set per failed node), so the P99 in node sets is the same number
K, but each spare is ``nodes_per_group`` times the hardware of ByteRobust's. And it is a quantile of the pool at a
moment, where our constraint is on the longest wait over a whole run (the pool's maximum over the run, not its
typical level): ours is larger.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

MAX_SPARE_WAIT_MIN = 60.0  # the default of --max-spare-wait
WAIT_LEVEL = 0.01  # P(longest wait > max) at most this
CONFIDENCE = 0.95  # of the one-sided Clopper-Pearson upper bound
WITHIN_UNLIMITED = 0.01  # the least K whose TTT is within 1% of the unlimited pool's
DEFAULT_SPARE_RUNS = 300  # whole runs per K: the fewest (299) that can meet the constraint, rounded
SWEEP_EVENTS_MAX = 6e7  # events per K (runs x events per run) beyond which a scheme's sweep is not run
SWEEP_LANES = 8  # runs per kernel call: the joint search's, so that the unlimited pool's kernel is reused


@dataclasses.dataclass(frozen=True)
class SpareAuto:
    """``plan --spares auto``: the hardware repair H (minutes; required), the longest wait allowed
    ``max_wait_min`` (default 60), and the whole training ``runs`` per K (default 300, at least
    ``fewest_runs()``)."""

    hardware_repair_min: float
    max_wait_min: float = MAX_SPARE_WAIT_MIN
    runs: int = DEFAULT_SPARE_RUNS

    def __post_init__(self):
        from ..model.bounds import check as check_bound

        object.__setattr__(self, "hardware_repair_min",
                           float(check_bound("hardware_repair", self.hardware_repair_min, "`hardware_repair_min`")))
        w = self.max_wait_min
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0:
            raise ValueError(f"`SpareAuto.max_wait_min` must be a finite number of minutes > 0, got {w!r}")
        low = fewest_runs()
        if isinstance(self.runs, bool) or not isinstance(self.runs, int) or not low <= self.runs <= 100_000:
            raise ValueError(f"`SpareAuto.runs` must be a whole number in {low}..100000 (with fewer runs, even none "
                             f"over the wait leaves the 95% upper bound above {WAIT_LEVEL:.0%}), got {self.runs!r}")


def clopper_pearson_upper(exceed: int, runs: int, confidence: float = CONFIDENCE) -> float:
    """The one-sided Clopper–Pearson upper bound on a probability seen ``exceed`` times in ``runs``:
    ``beta.ppf(confidence, exceed + 1, runs - exceed)`` (1 when every run exceeds)."""
    from scipy.stats import beta

    if exceed >= runs:
        return 1.0
    return float(beta.ppf(confidence, exceed + 1, runs - exceed))


def fewest_runs(level: float = WAIT_LEVEL, confidence: float = CONFIDENCE) -> int:
    """The fewest runs whose upper bound can be at most ``level`` (none of them exceeding):
    ``(1 - level)**n <= 1 - confidence``."""
    return math.ceil(math.log(1.0 - confidence) / math.log(1.0 - level))


def binomial_p99(count: int, p: float) -> int:
    """The least k with P(Binomial(count, p) <= k) >= 0.99."""
    from scipy.stats import binom

    return int(binom.ppf(0.99, int(count), float(p)))


def poisson_p99(mean: float) -> int:
    """The 99th percentile of a Poisson count of mean ``mean``: the node sets in hardware repair at once. Every
    group failure sends one node set away for H (the group takes a spare and goes on, so it can fail again
    while its old set is away): an M/G/infinity queue, whose count is Poisson with mean N H / group MTBF. (A
    binomial of groups each away with probability H / (MTBF + H) undercounts it once H is not small against
    the MTBF: 195 against 288 at 600 groups, MTBF 3,000 min, H = 1,440 min.)"""
    from scipy.stats import poisson

    return int(poisson.ppf(0.99, float(mean)))


def byterobust_p99(nodes: int, node_mtbf_hours: float, hardware_repair_min: float, nodes_per_group: int) -> dict:
    """ByteRobust's pool (module docstring): the P99 of the nodes in hardware repair at once, Binomial(nodes,
    H / (node MTBF + H)); the same number of our node sets (one per failed node), ``nodes_per_group`` times the
    hardware; and ByteRobust's own ratio per 1,024 nodes."""
    p = hardware_repair_min / (60.0 * node_mtbf_hours + hardware_repair_min)
    k = binomial_p99(nodes, p)
    return {"byterobust_p99_nodes": k, "byterobust_p99_spares": k,
            "byterobust_p99_per_1024_nodes": 1024.0 * k / nodes, "byterobust_p99_spare_nodes": k * nodes_per_group}


def least_k(meets, start: int, top: int):
    """The least K in 0..``top`` with ``meets(K)`` (taken as monotone: false below it, true from it on), by steps
    of 1, 2, 4, ... from ``start``, then bisection; None when ``meets(top)`` is false."""
    k = min(max(0, int(start)), top)
    if meets(k):
        lo, hi, step = None, k, 1
        while hi > 0:
            k = max(0, hi - step)
            if not meets(k):
                lo = k
                break
            hi, step = k, 2 * step
        if lo is None:
            return 0
    else:
        lo, step = k, 1
        while True:
            k = min(top, lo + step)
            if meets(k):
                hi = k
                break
            if k >= top:
                return None
            lo, step = k, 2 * step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if meets(mid):
            hi = mid
        else:
            lo = mid
    return hi


def pool_point(out: dict, k, max_wait_min: float, cost) -> dict:
    """One K's numbers from ``ttt.search.candidate_runs``'s per-run ``out``: the mean TTT (hours) with its standard
    error, the cost (``cost(ttt_hours)``), and the wait constraint's estimate."""
    ttt = np.asarray(out["ttt"], np.float64) / 60.0
    runs = int(ttt.size)
    exceed = int(np.sum(np.asarray(out["spare_wait_max"], np.float64) > max_wait_min))
    upper = clopper_pearson_upper(exceed, runs)
    mean = float(ttt.mean())
    return {"spares": k, "ttt_hours": mean, "ttt_stderr_hours": float(ttt.std(ddof=1) / math.sqrt(runs)),
            "cost": cost(k, mean), "spare_wait_max_hours": float(np.max(out["spare_wait_max"])) / 60.0,
            "spare_wait_exceed_runs": exceed, "spare_wait_p_exceed": exceed / runs,
            "spare_wait_p_upper95": upper, "meets_wait": bool(upper <= WAIT_LEVEL), "mc_runs": runs}


def search_spares(evaluate, start: int, top: int, cost) -> dict:
    """The search over K (module docstring): ``evaluate(K)`` gives ``pool_point``'s dict (``K`` None: the
    unlimited pool), ``start`` the first K tried, ``top`` the largest K tried, ``cost(K, ttt_hours)`` the cost.
    Returns the chosen K (None when no K up to ``top`` meets the constraint), the least K within 1% of the
    unlimited pool's TTT, the unlimited pool's point and every K evaluated (in order of K)."""
    points = {}

    def at(k):
        if k not in points:
            points[k] = evaluate(k)
        return points[k]

    unlimited = evaluate(None)
    k_meet = least_k(lambda k: at(k)["meets_wait"], start, top)
    chosen = None
    if k_meet is not None:
        def best():
            return min((p for p in points.values() if p["meets_wait"]), key=lambda p: (p["cost"], p["spares"]))

        k = k_meet + 1
        while k <= top:
            floor = min([unlimited["ttt_hours"]] + [p["ttt_hours"] for p in points.values()])
            if cost(k, floor) >= best()["cost"]:
                break
            at(k)
            k += 1
        chosen = best()["spares"]
    limit = (1.0 + WITHIN_UNLIMITED) * unlimited["ttt_hours"]
    within = least_k(lambda k: at(k)["ttt_hours"] <= limit, k_meet if k_meet is not None else start, top)
    return {"chosen": chosen, "least_meeting": k_meet, "within_1pct": within, "unlimited": unlimited,
            "points": [points[k] for k in sorted(points)]}


def _pool_cluster(cluster, spares, hardware_repair_min: float):
    """``cluster`` with a pool of ``spares`` (None: unlimited)."""
    pool = dataclasses.replace(cluster.repair, spares=spares,
                               hardware_repair_min=None if spares is None else hardware_repair_min)
    return dataclasses.replace(cluster, repair=pool)


def _pool_row(row: dict, scheme: str) -> dict:
    """``scheme``'s chosen configuration ``row`` as the pool's runs take it: kept ages, D_max only for spare."""
    return {**row, "repair_time_min": row.get("repair_time_min") or None, "ages": "kept",
            "restart_depth": row.get("restart_depth") if scheme == "spare" else None}


def pool_runs(cluster, cfg, scheme: str, row: dict, auto: SpareAuto, price: float, seed: int = 0,
              stages=None) -> tuple:
    """``(evaluate, start, top, cost)`` of the pool search at ``scheme``'s chosen configuration ``row`` (a plan
    row: r_star, ckpt_interval_min, microbatches, restart_depth) on ``cluster`` (its repair without a pool):
    ``evaluate(K)`` runs ``auto.runs`` whole runs with K spares (None: unlimited), run i with run id i at every
    K, every K up to ``top`` in one compiled kernel (its static capacity is ``top``); ``start`` is the P99 of
    the Poisson count of node sets away (``poisson_p99``: mean N H / group MTBF);
    ``cost(K, ttt_hours)`` at ``price`` per GPU-hour. ``stages`` (a ``stages.Stages``) says each K."""
    from ..model.cluster import Sampling
    from ..ttt.search import pool_capacity
    from .searched_rows import row_runs

    n, gpg = cluster.groups, int(cluster.model.gpus_per_group)
    gpus = int(round(cluster.gpus))
    mtbf, hw = cluster.model.group_mtbf_min, auto.hardware_repair_min
    start = poisson_p99(n * hw / mtbf)
    top = pool_capacity(max(8, 2 * start + 8))
    sampling = Sampling(count=auto.runs, seed=seed, chunk_size=SWEEP_LANES,
                        progress=stages is not None and stages.enabled)  # a bar per K: count and time left

    def cost(k, ttt_hours):
        return price * (gpus + (0 if k is None else k) * gpg) * ttt_hours

    def evaluate(k):
        if stages is not None:
            stages.add(1)
            stages.stage(f"spares: {scheme}, " + ("unlimited pool" if k is None else f"K = {k}")
                         + f", {auto.runs} whole runs")
        out = row_runs(_pool_cluster(cluster, k, hw), cfg, _pool_row(row, scheme), scheme, row["r_star"], sampling,
                       None if k is None else top)
        return pool_point(out, k, auto.max_wait_min, cost)

    return evaluate, start, top, cost


def spares_for_scheme(cluster, cfg, scheme: str, row: dict, auto: SpareAuto, price: float, seed: int = 0,
                      stages=None) -> dict:
    """``search_spares`` over ``pool_runs`` (the same arguments); adds ``capacity`` (the largest K tried) and
    ``start``."""
    evaluate, start, top, cost = pool_runs(cluster, cfg, scheme, row, auto, price, seed, stages)
    res = search_spares(evaluate, start, top, cost)
    res.update(capacity=top, start=start)
    return res


def events_per_run(row: dict, cluster) -> float:
    """A rough count of a whole run's events at ``row``'s TTT: each group failure, its rejoin and its node set's
    return, and the checkpoints."""
    hours = float(row["ttt_hours"])
    failures = 60.0 * hours * cluster.groups / cluster.model.group_mtbf_min
    return 3.0 * failures + 60.0 * hours / float(row["ckpt_interval_min"])


def plan_spares(cluster, cfg, schemes: dict, auto: SpareAuto, price: float, seed: int = 0, stages=None,
                gpus_per_node: int = 8) -> tuple:
    """``plan --spares auto``: the pool search for each scheme of ``schemes`` (the plan's rows, found with an
    unlimited pool on ``cluster``, whose repair has no pool), each row given its ``spares_*`` keys; ByteRobust's
    nodes are ``gpus_per_node`` GPUs each. Returns
    ``(block, notes)``: the ``spares`` object of the plan's JSON (``spares_block``) and the notes."""
    notes, sweeps = [], {}
    if stages is not None:
        stages.add(len(schemes))
    for s, row in schemes.items():
        events = events_per_run(row, cluster) * auto.runs
        if stages is not None:
            stages.stage(f"spares: {s}, K searched with {auto.runs} whole runs per K")
        if not math.isfinite(events) or events > SWEEP_EVENTS_MAX:
            notes.append(f"{s}: no spare-pool search (its {auto.runs} runs at its chosen configuration would be "
                         f"about {events:.2g} events, beyond {SWEEP_EVENTS_MAX:.0e})")
            continue
        res = spares_for_scheme(cluster, cfg, s, row, auto, price, seed, stages)
        sweeps[s] = res
        ch = next((p for p in res["points"] if p["spares"] == res["chosen"]), None)
        row.update(spares_chosen=res["chosen"], spares_cost=None if ch is None else ch["cost"],
                   spares_ttt_hours=None if ch is None else ch["ttt_hours"],
                   spare_wait_p_exceed=None if ch is None else ch["spare_wait_p_exceed"],
                   spare_wait_p_upper95=None if ch is None else ch["spare_wait_p_upper95"],
                   spare_wait_runs=auto.runs, spares_within_1pct_of_unlimited=res["within_1pct"])
        if ch is None:
            notes.append(f"{s}: no pool of up to {res['capacity']} spares meets the wait constraint")
    return spares_block(cluster, auto, sweeps, gpus_per_node), notes


def spares_block(cluster, auto: SpareAuto, sweeps: dict, gpus_per_node: int = 8) -> dict:
    """The ``spares`` object of ``plan --json``: the cheapest scheme's pool, the constraint and the runs behind
    it, ByteRobust's cross-check, and each scheme's sweep (every K evaluated: ``spares``, ``ttt_hours``,
    ``cost``, the wait's estimate)."""
    gpg = int(cluster.model.gpus_per_group)
    nodes_per_group = max(1, gpg // int(gpus_per_node))
    node_mtbf_hours = cluster.model.group_mtbf_min / 60.0 * nodes_per_group

    def chosen_point(r):
        return next(p for p in r["points"] if p["spares"] == r["chosen"])

    met = {s: r for s, r in sweeps.items() if r["chosen"] is not None}
    best = min(met, key=lambda s: chosen_point(met[s])["cost"], default=None)
    out = {"scheme": best, "spares_chosen": None if best is None else met[best]["chosen"]}
    if best is not None:
        p = chosen_point(met[best])
        out.update(spares_cost=p["cost"], spares_ttt_hours=p["ttt_hours"],
                   spare_wait_p_exceed=p["spare_wait_p_exceed"], spare_wait_p_upper95=p["spare_wait_p_upper95"],
                   spares_within_1pct_of_unlimited=met[best]["within_1pct"])
    out.update(spare_wait_runs=auto.runs, hardware_repair_min=auto.hardware_repair_min,
               max_spare_wait_min=auto.max_wait_min, spare_wait_level_pct=100.0 * WAIT_LEVEL,
               nodes_per_group=nodes_per_group,
               **byterobust_p99(cluster.groups * nodes_per_group, node_mtbf_hours, auto.hardware_repair_min,
                                nodes_per_group))
    keep = ("spares", "ttt_hours", "ttt_stderr_hours", "cost", "spare_wait_p_exceed", "spare_wait_p_upper95",
            "meets_wait")
    out["sweeps"] = {s: {"spares_capacity": r["capacity"], "spares_start": r["start"],
                         "spares_within_1pct_of_unlimited": r["within_1pct"],
                         "unlimited_ttt_hours": r["unlimited"]["ttt_hours"], "unlimited_cost": r["unlimited"]["cost"],
                         "points": [{k: p[k] for k in keep} for p in r["points"]]} for s, r in sweeps.items()}
    return out


def figure_spares(block: dict):
    """Time-to-train and total cost against K, one line per scheme (the chosen K starred, the unlimited pool
    dashed); a matplotlib figure, or None without a sweep."""
    from .. import plotting

    if not block.get("sweeps"):
        return None
    fig, (ax_t, ax_c) = plotting.new_figure(ncols=2, width=5.6, height=4.4)
    for s, sw in block["sweeps"].items():
        color, ls, marker = plotting.SCHEME_STYLE.get(s, (None, "-", "o"))
        pts = sw["points"]
        ks = [p["spares"] for p in pts]
        line, = ax_t.plot(ks, [p["ttt_hours"] for p in pts], ls=ls, marker=marker, color=color, ms=4, label=s)
        ax_c.plot(ks, [p["cost"] for p in pts], ls=ls, marker=marker, color=line.get_color(), ms=4, label=s)
        ax_t.axhline(sw["unlimited_ttt_hours"], color=line.get_color(), ls=(0, (2, 2)), lw=0.8)
        bad = [p for p in pts if not p["meets_wait"]]
        ax_c.plot([p["spares"] for p in bad], [p["cost"] for p in bad], "x", color="tab:red", ms=6)
        chosen = [p for p in pts if p["meets_wait"]]
        if chosen:
            c = min(chosen, key=lambda p: (p["cost"], p["spares"]))
            ax_c.plot([c["spares"]], [c["cost"]], "*", color=line.get_color(), ms=14)
            ax_t.plot([c["spares"]], [c["ttt_hours"]], "*", color=line.get_color(), ms=14)
    from matplotlib.ticker import MaxNLocator

    for ax in (ax_t, ax_c):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_t.set_xlabel("spares K (node sets)")
    ax_t.set_ylabel("time-to-train (h)")
    ax_t.set_title("time-to-train (dashed: unlimited pool)")
    ax_c.set_xlabel("spares K (node sets)")
    ax_c.set_ylabel("price × (GPUs + K × GPUs per group) × TTT")
    ax_c.set_title("cost (×: longest wait constraint not met)")
    ax_t.legend()
    return fig


def spares_text(block: dict) -> str:
    """The lines ``plan`` prints under its table for ``--spares auto``."""
    lines = [f"spare pool (--spares auto): hardware repair {block['hardware_repair_min']:g} min; a run's longest wait "
             f"for a spare may exceed {block['max_spare_wait_min']:g} min in at most "
             f"{block['spare_wait_level_pct']:g}% of runs (Clopper-Pearson 95% upper bound, "
             f"{block['spare_wait_runs']} whole runs per K); cost = price x (GPUs + K x GPUs per group) x TTT"]
    head = f"{'scheme':8}{'K':>6}{'cost':>18}{'TTT h':>10}{'P(wait>max)':>13}{'upper 95%':>11}{'K within 1%':>13}" \
           f"{'unlimited TTT h':>17}"
    lines.append(head)
    for s, sw in block["sweeps"].items():
        pts = [p for p in sw["points"] if p["meets_wait"]]
        c = min(pts, key=lambda p: (p["cost"], p["spares"])) if pts else None
        within = sw.get("spares_within_1pct_of_unlimited")
        lines.append(f"{s:8}" + (f"{c['spares']:>6}{c['cost']:>18,.0f}{c['ttt_hours']:>10,.1f}"
                                 f"{c['spare_wait_p_exceed']:>13.4f}{c['spare_wait_p_upper95']:>11.4f}"
                                 if c else f"{'-':>6}{'none meets':>18}{'':>10}{'':>13}{'':>11}")
                     + f"{'-' if within is None else within:>13}{sw['unlimited_ttt_hours']:>17,.1f}")
    if block.get("scheme") is not None:
        lines.append(f"cheapest: {block['scheme']} with K = {block['spares_chosen']} spare node sets of "
                     f"{block['nodes_per_group']} nodes; ByteRobust's P99 binomial: {block['byterobust_p99_nodes']} "
                     f"nodes in repair at once ({block['byterobust_p99_per_1024_nodes']:.2f} per 1,024 nodes), the same "
                     f"count of our node sets ({block['byterobust_p99_spare_nodes']:,} nodes), a quantile of the pool "
                     "at one moment where K bounds the longest wait over a whole run")
    return "\n".join(lines)


def report_rows(block: dict) -> tuple:
    """``(head, rows, text)`` of the report's spare-pool section: per scheme the chosen K, its cost and TTT,
    the wait's estimate, the least K within 1% of the unlimited pool; the text says the constraint, the runs
    behind it and ByteRobust's cross-check."""
    head = ["scheme", "K chosen", "cost", "TTT (h)", "P(longest wait > max)", "95% upper bound",
            "least K within 1% of unlimited", "unlimited pool TTT (h)"]
    rows = []
    for s, sw in block["sweeps"].items():
        pts = [p for p in sw["points"] if p["meets_wait"]]
        c = min(pts, key=lambda p: (p["cost"], p["spares"])) if pts else None
        within = sw.get("spares_within_1pct_of_unlimited")
        rows.append([s] + ([c["spares"], f"{c['cost']:,.0f}", f"{c['ttt_hours']:,.1f}",
                            f"{c['spare_wait_p_exceed']:.4f}", f"{c['spare_wait_p_upper95']:.4f}"]
                           if c else ["none meets", "-", "-", "-", "-"])
                    + ["-" if within is None else within, f"{sw['unlimited_ttt_hours']:,.1f}"])
    text = (f"A spare is one group's node set ({block['nodes_per_group']} nodes). K minimises price × (GPUs + K × "
            f"GPUs per group) × TTT among the pools whose runs keep P(the longest wait of a group for a spare > "
            f"{block['max_spare_wait_min']:g} min) at most {block['spare_wait_level_pct']:g}% (its one-sided "
            f"Clopper–Pearson 95% upper bound), from {block['spare_wait_runs']} whole training runs per K at each "
            f"scheme's chosen configuration, hardware repair {block['hardware_repair_min']:g} min. Cross-check: "
            f"ByteRobust's P99 binomial pool is {block['byterobust_p99_nodes']} nodes "
            f"({block['byterobust_p99_per_1024_nodes']:.2f} per 1,024 nodes), the number of nodes in hardware "
            f"repair at once; each of them takes a whole node set away here, so it is "
            f"{block['byterobust_p99_spares']} node sets ({block['byterobust_p99_spare_nodes']:,} nodes). It is a "
            "quantile at one moment; K bounds the longest wait over a whole run, so it is larger.")
    return head, rows, text
