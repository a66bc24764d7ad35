"""The published sources behind the presets: their quoted figures, the numbers a source leaves unstated and
how each is set (each with its reason), and the arithmetic that reads a source's figures (``clock_rate``,
``none_ttt_hours``, Llama 3's bounds, the first-order FT-HSDP estimate).

Llama 3 (Dubey et al., "The Llama 3 Herd of Models", 2024, §3.3.4 and Table 5): 16,384 H100 GPUs,
54 days of pre-training, 419 unexpected interruptions; root causes 58.7% GPU (faulty GPU 30.1%, HBM3 17.2%,
SRAM 4.5%, GPU system processor 4.1%, thermal interface 1.4%, ...), 12.9% software bugs, 8.4% network
switch/cable, 7.6% host maintenance, 1.4% silent data corruption, the rest other host hardware (NIC, SSD,
power supply, ...); more than 90% effective training time. Parallelism of the 405B run on 16K GPUs: TP 8 x
PP 16 x DP 128.
FT-HSDP (Salpekar et al., "Training LLMs with Fault Tolerant HSDP on 100,000 GPUs", arXiv 2602.00277, 2026;
its abstract): at O(100K) GPUs the stall per failure recovery falls from 10 min (synchronous training) to
3 min (only the failed data-parallel replica restarts), effective training time rises from 44% to 80%.
Meta RSC (Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research Clusters", arXiv
2410.21680, HPCA 2025): 11 months of two A100 clusters, 4 million jobs, over 150 million GPU-hours (the
abstract); RSC-1 about 16k GPUs at 6.50 failures per 1,000 node-days, RSC-2 about 8k GPUs at 2.34; MTTF
47.7 days for 8-GPU jobs and 7.9 h for 1,024-GPU jobs, projected 1.8 h at 16,384 GPUs and 0.23 h at
131,072 (these figures from secondary summaries of the paper, not checked against its text here).
"""

from __future__ import annotations

import math

LLAMA3 = {
    "gpus": 16_384, "days": 54.0, "interruptions": 419, "planned_interruptions": 47,
    "share_switch_cable": 0.084, "share_software": 0.129, "share_host_maintenance": 0.076, "share_sdc": 0.014,
    "data_parallel_groups": 128, "effective_training_time": 0.90,
}
LLAMA3_SOURCE = ("Llama 3 Herd of Models (Dubey et al., 2024), §3.3.4, Table 5: 16,384 H100, 54 days, 419 "
                 "unexpected interruptions (and 47 planned ones); 58.7% GPU, 12.9% software bugs, 8.4% network "
                 "switch/cable, 7.6% host maintenance, 1.4% silent data corruption; more than 90% effective "
                 "training time; 405B run on 16K GPUs: TP 8, PP 16, DP 128")
FT_HSDP_SOURCE = ("FT-HSDP (Salpekar et al., Training LLMs with Fault Tolerant HSDP on 100,000 GPUs, arXiv "
                  "2602.00277, abstract): at O(100K) GPUs, stall per failure recovery 10 min with synchronous "
                  "training vs 3 min restarting only the failed replica; effective training time 44% vs 80%")
RSC = {"gpus_per_node": 8, "rsc1_failures_per_1000_node_days": 6.50, "rsc2_failures_per_1000_node_days": 2.34}
RSC_SOURCE = ("Meta RSC (Kokolis et al., Revisiting Reliability in Large-Scale Machine Learning Research "
              "Clusters, arXiv 2410.21680, HPCA 2025): 11 months of two A100 clusters, 4M jobs, over 150M "
              "GPU-hours (abstract, checked); RSC-1 ~16k GPUs at 6.50 and RSC-2 ~8k GPUs at 2.34 failures per "
              "1,000 node-days; MTTF 47.7 days (8 GPUs), 7.9 h (1,024 GPUs); projected 1.8 h at 16,384 and "
              "0.23 h at 131,072 GPUs (from secondary summaries, not checked against the paper's text)")
PAPER_SOURCE = ("the SPARe paper's setting (arXiv 2603.00357): 600k GPUs in 600 groups of 1,000, system MTBF "
                "5 min, restart 60 min, checkpoint 5 min, 720 h of work")
# what two secondary summaries of the paper say of its simulation (its full text was not readable here: every
# figure below is unverified). The table: per N, TTT / T0 and availability (percent) of replication + CKPT and
# of SPARe + CKPT, SPARe's r*, and SPARe's gain over replication (percent); the best replication is r = 3
PAPER_SIM = {"weibull_shape": 0.78, "ckpt_cost_s": 60.0, "restart_min": (60.0, 1.0), "rep_r": 3}
PAPER_SIM_TABLE = (
    {"groups": 200, "rep_ttt_over_w": 6.07, "rep_availability_pct": 61.74, "spare_ttt_over_w": 2.92,
     "spare_r_star": 9, "spare_availability_pct": 87.00, "gain_pct": 51.9},
    {"groups": 600, "rep_ttt_over_w": 4.27, "rep_availability_pct": 79.89, "spare_ttt_over_w": 2.49,
     "spare_r_star": 8, "spare_availability_pct": 93.90, "gain_pct": 41.7},
    {"groups": 1000, "rep_ttt_over_w": 3.88, "rep_availability_pct": 84.41, "spare_ttt_over_w": 2.34,
     "spare_r_star": 9, "spare_availability_pct": 96.54, "gain_pct": 39.6},
)
PAPER_SIM_SOURCE = ("two secondary summaries of the SPARe paper's simulation (arXiv 2603.00357; its full text was "
                    "not readable here, so every figure is unverified): group failures Weibull with shape 0.78, a "
                    "checkpoint save of about 60 s, a restart of 60 min in one summary and 60 s in the other, the "
                    "best replication r = 3; a table of TTT / T0 and availability at N = 200, 600 and 1,000")
# Llama 3's restart time (the source gives none): FT-HSDP's synchronous restart at ~100k GPUs, the same
# operator's figure for the same kind of job. The 419 interruptions are converted to a clock rate at it
LLAMA3_RESTART_MIN = 10.0
# Llama 3's checkpoint cost: the source gives none, and "more than 90% effective training time" only bounds
# it: at R = 10 min, C <= 0.216 min (``llama3_ckpt_bound``); the preset takes 0.2 min (12 s), inside the bound
LLAMA3_CKPT_COST_MIN = 0.2
# FT-HSDP's failure rate, inferred (the abstract gives none): the system MTBF at 98,304 GPUs at which ttt
# --scheme none (every failure a 10-min restart, no stall, checkpoint 0.2 min as for Llama 3) has goodput 0.44
FT_HSDP_MTBF_MIN = 11.44
# the failed replica's restart time D (the abstract gives none), fixed before any elastic run: a replica's
# restart does what the synchronous restart does (a new node, the checkpoint loaded, the collectives joined),
# so it takes the source's synchronous restart time, 10 min. The 3 min is the stall of the whole job
FT_HSDP_REPLICA_RESTART_MIN = 10.0
FT_HSDP_STALL_MIN = 3.0


def clock_rate(interruptions: float, per_min: float, restart_min: float) -> float:
    r"""The clock rate (per minute) behind ``interruptions`` that a synchronous job saw in ``per_min`` minutes
    of wall time with a restart of ``restart_min``: every failure outside a restart interrupts the job, and
    those during a restart are absorbed by it, so a clock rate :math:`\lambda` shows
    :math:`c = \lambda / (1 + \lambda R)` interruptions per minute and :math:`\lambda = c / (1 - c R)`.
    Refused when ``c R >= 1`` (the job would have spent all its time restarting)."""
    c = interruptions / per_min
    if not c * restart_min < 1.0:
        raise ValueError(f"{interruptions:g} interruptions in {per_min:g} min with a {restart_min:g}-min restart: "
                         "c R >= 1, the job would have done nothing but restart")
    return c / (1.0 - c * restart_min)


def none_ttt_hours(mtbf_min: float, restart_min: float, ckpt_cost_min: float, work_hours: float) -> float:
    """The time-to-train of checkpointing alone with every interruption a restart, exponential (the classic
    form ``W / tau (M + R) (exp((tau + C) / M) - 1)``) at its best tau (golden-section search on log tau)."""
    def ttt(log_tau):
        tau = math.exp(log_tau)
        return work_hours * 60.0 / tau * (mtbf_min + restart_min) * math.expm1((tau + ckpt_cost_min) / mtbf_min)

    lo, hi = math.log(1e-4), math.log(1e5)
    g = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if ttt(a) < ttt(b):
            hi = b
        else:
            lo = a
    return ttt(0.5 * (lo + hi)) / 60.0


def _bisect(f, lo: float, hi: float) -> float:
    """The root of the increasing ``f`` in [lo, hi] (``f(lo) <= 0 <= f(hi)``)."""
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) <= 0 else (lo, mid)
    return 0.5 * (lo + hi)


def llama3_ckpt_bound(restart_min: float = LLAMA3_RESTART_MIN, effective: float = 0.90,
                      planned: int = 0) -> float | None:
    """The largest checkpoint cost (minutes) at which checkpointing alone on Llama 3's interruptions (419 in
    54 days, converted at ``restart_min``) keeps the effective training time (work / wall time, our goodput)
    at ``effective``; ``planned`` planned interruptions in the 54 days each cost a restart and a checkpoint
    and lose nothing. None: no cost reaches it (the restarts alone cost more)."""
    src = LLAMA3
    minutes = src["days"] * 1440.0
    mtbf = 1.0 / clock_rate(src["interruptions"], minutes, restart_min)
    wall = minutes / 60.0
    work = wall * effective

    def excess(c):
        return none_ttt_hours(mtbf, restart_min, c, work) + planned * (restart_min + c) / 60.0 - wall

    if excess(0.0) > 0:
        return None
    return _bisect(excess, 0.0, 60.0)


def llama3_restart_bound(effective: float = 0.90) -> float:
    """The longest restart time (minutes) at which Llama 3's interruptions, converted at it, leave the
    effective training time at ``effective`` with a free checkpoint (the restarts alone: 1 - c R)."""
    c = LLAMA3["interruptions"] / (LLAMA3["days"] * 1440.0)
    return (1.0 - effective) / c


# what the elastic outcome gives at other replica restart times D, first order (``ft_hsdp_elastic_estimate``)
FT_HSDP_D_SENSITIVITY = (3.0, 10.0, 30.0, 60.0)


def ft_hsdp_elastic_estimate(repair_min: float = FT_HSDP_REPLICA_RESTART_MIN, stall_min: float = FT_HSDP_STALL_MIN,
                             mtbf_min: float = FT_HSDP_MTBF_MIN, groups: int = 96) -> float:
    """A first-order goodput of elastic shrink with a stall: the job is stalled while a failure happened in the
    last S (a failure during a stall extends it to S after that failure), with probability 1 - exp(-lambda S);
    outside stalls it computes at alive / N, a group being down with p = D / (MTBF_group + D). Checkpoints
    (no restarts: tau is long) and the final one are neglected."""
    p = repair_min / (mtbf_min * groups + repair_min)
    return math.exp(-stall_min * (1.0 - p) / mtbf_min) * (1.0 - p)
