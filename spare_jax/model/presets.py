"""Presets: published cluster parameters with their sources, as command-line defaults.

``--preset NAME`` sets the defaults of any command that takes the settings (flags and ``--config`` win over
it). Every number below is either quoted from a source or derived from quoted numbers by the formula
written next to it; the settings a source does not give (which failure shares are job-wide, how many
groups a switch domain spans, a checkpoint cost) are our modelling assumptions and are labelled so in
``assumptions``. Where a source leaves an input unstated but reports an outcome, the input is inferred from
that outcome and the assumption says so (llama3-16k's checkpoint cost, ft-hsdp-100k's failure rate); no
other number is chosen to reproduce an outcome. ``outcomes`` lists what each source reports and the command
whose JSON must reproduce it (``tests/test_presets.py`` holds every preset to them); ``outcome_note`` says
why a preset has none.

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

Which interruptions scale with the GPU count. A source measures its job-wide interruptions (software bugs,
host maintenance, silent data corruption: no redundancy masks them) on a cluster of its own size
(``Preset.job_wide``: the MTBF and that GPU count). On a cluster of ``G`` GPUs they come either at a fixed
rate per GPU (``per-gpu``, what the presets assume: the MTBF scales as ``measured GPUs / G``) or at a fixed
rate per job (``per-job``: the measured MTBF whatever the size). The two agree at the source's own size;
at 600k GPUs from Llama 3's 16,384 they differ by the ratio of the sizes, 36.6x.
"""

from __future__ import annotations

import dataclasses

JOB_SCALINGS = ("per-gpu", "per-job")

LLAMA3 = {
    "gpus": 16_384, "days": 54.0, "interruptions": 419,
    "share_switch_cable": 0.084, "share_software": 0.129, "share_host_maintenance": 0.076, "share_sdc": 0.014,
    "data_parallel_groups": 128,
}
LLAMA3_SOURCE = ("Llama 3 Herd of Models (Dubey et al., 2024), §3.3.4, Table 5: 16,384 H100, 54 days, 419 "
                 "unexpected interruptions; 58.7% GPU, 12.9% software bugs, 8.4% network switch/cable, "
                 "7.6% host maintenance, 1.4% silent data corruption; more than 90% effective training time; "
                 "405B run on 16K GPUs: TP 8, PP 16, DP 128")
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
# Llama 3's checkpoint cost, inferred (the source gives none): the cost at which ttt --scheme none on the
# llama3-16k preset takes 54 days (1,296 h: 54.0 days by the closed form, goodput 0.900) with its 10-min
# restart; 0.5 min gives 1,324 h, the 5-min default 1,564 h (65 days, goodput 0.75)
LLAMA3_CKPT_COST_MIN = 0.25
# FT-HSDP's failure rate, inferred (the abstract gives none): the system MTBF at 98,304 GPUs at which ttt
# --scheme none (every failure a 10-min restart, checkpoint 0.25 min as inferred for Llama 3) has goodput
# 0.44 (the closed form: 0.4395)
FT_HSDP_MTBF_MIN = 11.9


@dataclasses.dataclass(frozen=True)
class Preset:
    name: str
    description: str
    settings: dict  # flag destination -> value (only those a command takes are applied)
    domains: tuple = ()  # ({size, mtbf, name}, ...) like the [scenario] table's domains
    sources: tuple = ()
    assumptions: tuple = ()
    derived: dict = dataclasses.field(default_factory=dict)  # how the settings follow from the sources
    job_wide: dict = dataclasses.field(default_factory=dict)  # {mtbf_min, gpus}: as the source measured them
    # what the source reports, and the command that must reproduce it: ({reported, args, key, value,
    # rel_tol}, ...): ``spare-jax ARGS --preset NAME --json`` gives ``key`` within ``rel_tol`` of ``value``
    outcomes: tuple = ()
    outcome_note: str = ""  # why there is no outcome to hold the preset to

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    def job_mtbf_min(self, gpus: float, scaling: str = "per-gpu") -> float | None:
        """The job-wide MTBF in minutes on a cluster of ``gpus`` GPUs (None: the preset has no job-wide
        interruptions). ``per-gpu``: the preset's own figure (``settings["job_mtbf"]``, at its
        ``reference_gpus``) times ``reference_gpus / gpus``, so exactly the preset's figure at its own size;
        ``per-job``: the MTBF its source measured (``job_wide["mtbf_min"]``), whatever the size."""
        check_job_scaling(scaling)
        if "job_mtbf" not in self.settings:
            return None
        if scaling == "per-job":
            return self.job_wide["mtbf_min"]
        return job_mtbf_at(self.settings["job_mtbf"], self.settings["reference_gpus"], gpus, "per-gpu")

    def under(self, scaling: str) -> "Preset":
        """This preset with its job-wide MTBF (at its own size) under ``scaling``: itself for ``per-gpu`` (how
        the presets are built), for a preset without job-wide interruptions and for one at its source's size."""
        check_job_scaling(scaling)
        if scaling == "per-gpu" or "job_mtbf" not in self.settings \
                or self.job_wide["gpus"] == self.settings["reference_gpus"]:
            return self
        note = (f"per-job: the job-wide MTBF its source measured on {self.job_wide['gpus']:,.0f} GPUs, kept at "
                f"{self.settings['reference_gpus']:,.0f} GPUs")
        return dataclasses.replace(self, settings={**self.settings, "job_mtbf": self.job_wide["mtbf_min"]},
                                   derived={**self.derived, "job-wide scaling": note})


def check_job_scaling(scaling) -> str:
    if scaling not in JOB_SCALINGS:
        raise ValueError(f"job scaling must be one of {', '.join(JOB_SCALINGS)}, got {scaling!r}")
    return scaling


def job_mtbf_at(mtbf_min: float, measured_gpus: float, gpus: float, scaling: str = "per-gpu") -> float:
    r"""The MTBF of job-wide interruptions on a cluster of ``gpus`` GPUs, from ``mtbf_min`` measured on
    ``measured_gpus`` GPUs.

    ``per-gpu``: every GPU brings job-wide interruptions at the same rate ``1 / (mtbf_min measured_gpus)``
    (a software bug or a maintenance event per GPU-hour), so on G GPUs

    .. math::  M_{job}(G) = M_{job}(G_0) \, G_0 / G .

    ``per-job``: the job as a whole meets them at a fixed rate (a bug in the training code, a job-level hang),
    ``M_job(G) = M_job(G_0)``. Equal at ``G = G_0``; at ``G = 600,000`` from ``G_0 = 16,384`` the per-gpu MTBF
    is 36.6 times shorter.
    """
    from .failures import check_positive

    check_job_scaling(scaling)
    mtbf_min = check_positive("job-wide MTBF (minutes)", mtbf_min)
    ratio = check_positive("measured GPUs", measured_gpus) / check_positive("GPUs", gpus)
    return mtbf_min * ratio if scaling == "per-gpu" else mtbf_min


def _from_llama3_rates(about: Preset, gpus: int, gpus_per_group: int, domain_groups: int, restart_min: float,
                       work_hours: float, ckpt_cost: float | None = None) -> Preset:
    """``about`` (its name, description, sources, assumptions and outcomes) on a cluster of ``gpus`` GPUs
    failing at Llama 3's per-GPU interruption rate with Llama 3's root-cause shares: job-wide = software +
    host maintenance + SDC; domain events = switch/cable, over domains of ``domain_groups`` groups; group
    failures = the rest."""
    src = LLAMA3
    minutes = src["days"] * 24 * 60
    per_gpu_mtbf = src["gpus"] * minutes / src["interruptions"]  # GPU-minutes per interruption
    cluster_rate = gpus / per_gpu_mtbf  # interruptions per minute on this cluster
    job_share = src["share_software"] + src["share_host_maintenance"] + src["share_sdc"]
    domain_share = src["share_switch_cable"]
    group_share = 1.0 - job_share - domain_share
    groups = gpus // gpus_per_group
    n_domains = -(-groups // domain_groups)
    settings = {
        "groups": groups, "gpus_per_group": float(gpus_per_group), "reference_gpus": float(gpus),
        "mtbf": 1.0 / (group_share * cluster_rate),  # system MTBF of group failures at this size
        "job_mtbf": 1.0 / (job_share * cluster_rate),
        "restart": restart_min, "work_hours": work_hours,
    }
    if ckpt_cost is not None:
        settings["ckpt_cost"] = ckpt_cost
    domains = ({"size": domain_groups, "mtbf": n_domains / (domain_share * cluster_rate), "name": "switch"},)
    # per-GPU MTBF and cluster MTBF mean what they mean in plan and in every command's JSON: group failures
    # only (the failures redundancy can mask); the all-interruptions figures are labelled so
    # the job-wide MTBF as Llama 3 measured it, on its own 16,384 GPUs (per-job: kept at any size)
    job_wide = {"mtbf_min": 1.0 / (job_share * (src["gpus"] / per_gpu_mtbf)), "gpus": float(src["gpus"])}
    derived = {
        "gpu_mtbf_hours": per_gpu_mtbf / group_share / 60.0,
        "gpu_mtbf_hours (all interruptions)": per_gpu_mtbf / 60.0,
        "cluster_mtbf_min": 1.0 / (group_share * cluster_rate),
        "cluster_mtbf_min (all interruptions)": 1.0 / cluster_rate,
        "shares (group, domain, job-wide)": [group_share, domain_share, job_share],
        "group_mtbf_min": per_gpu_mtbf / gpus_per_group / group_share,
        "domains": n_domains,
    }
    return dataclasses.replace(about, settings=settings, domains=domains, derived=derived, job_wide=job_wide)


def _from_node_failures(about: Preset, gpus: int, gpus_per_group: int, failures_per_1000_node_days: float) -> Preset:
    """``about`` (its name, description, sources, assumptions and outcomes) on a cluster whose nodes of 8 GPUs
    fail at the given rate, each failure taking down one data-parallel group: per-GPU MTBF = 8 x (1,000 /
    rate) node-days, in GPU-hours per failure."""
    node_mtbf_hours = 1000.0 / failures_per_1000_node_days * 24.0
    gpu_mtbf_hours = RSC["gpus_per_node"] * node_mtbf_hours
    settings = {"groups": gpus // gpus_per_group, "gpus_per_group": float(gpus_per_group),
                "reference_gpus": float(gpus), "mtbf": gpu_mtbf_hours * 60.0 / gpus}
    derived = {"node_mtbf_hours": node_mtbf_hours, "gpu_mtbf_hours": gpu_mtbf_hours,
               "cluster_mtbf_min": gpu_mtbf_hours * 60.0 / gpus,
               "cluster_mtbf_hours at 1,024 GPUs": gpu_mtbf_hours / 1024,
               "cluster_mtbf_hours at 16,384 GPUs": gpu_mtbf_hours / 16_384,
               "cluster_mtbf_hours at 131,072 GPUs": gpu_mtbf_hours / 131_072}
    return dataclasses.replace(about, settings=settings, derived=derived)


_RSC_ASSUMPTIONS = (
    "every failure takes down one data-parallel group (its node's); the node-day rates are the source's, "
    "nothing is job-wide and there are no failure domains (the source's breakdown is not modelled)",
    "data-parallel groups of 128 GPUs (16 nodes), as in Llama 3; the source describes a multi-tenant research "
    "cluster, not one training job",
    "restart 60 min, checkpoint 5 min, work 720 h: the defaults, not from the source",
    "lemon nodes (a few nodes causing a large share of failures, in the source) are not modelled: add "
    "--lemon-fraction and --lemon-factor",
)
_RSC1_MEASURED_MTTF = (
    "the measured MTTF of 7.9 h for 1,024-GPU jobs (and 47.7 days for 8-GPU jobs) is about 3.5 x shorter than "
    "the node-day rate gives at those sizes (28.8 h at 1,024 GPUs on RSC-1); jobs saw about 21-24 failures per "
    "1,000 node-days. The preset keeps the cluster rate the source projects with; for the measured job "
    "experience give --gpu-mtbf-hours 8090 (7.9 h x 1,024)")

PRESETS = {
    "paper-600k": Preset(
        "paper-600k", "the paper's 600k-GPU cluster (the defaults; i.i.d. group failures, no scenario)",
        {"groups": 600, "gpus_per_group": 1000.0, "reference_gpus": 600_000.0, "mtbf": 5.0, "restart": 60.0,
         "ckpt_cost": 5.0, "work_hours": 720.0},
        sources=(PAPER_SOURCE,),
        outcome_note="every input is the paper's; its reported outcomes (overhead, availability, time-to-train "
                     "against replication, r*) are compared with this engine in the README's results table, not "
                     "used to set any input"),
    "llama3-16k": _from_llama3_rates(Preset(
        "llama3-16k", "Llama 3 405B pre-training: 16,384 H100 in 128 data-parallel groups of 128 GPUs", {},
        sources=(LLAMA3_SOURCE, FT_HSDP_SOURCE),
        assumptions=(
            "job-wide (no redundancy masks them): software bugs + host maintenance + SDC = 21.9% of interruptions",
            "switch/cable faults (8.4%) are domain events over 8 groups (1,024 GPUs, one leaf switch's reach); "
            "the source gives only the share",
            "every other interruption fails one data-parallel group",
            "restart 10 min (FT-HSDP's synchronous restart at ~100k GPUs); the source gives none",
            "checkpoint cost 0.25 min (15 s): inferred, the source gives none: the cost at which "
            "ttt --scheme none (Llama 3 ran without redundancy) takes the 54 days with 90% effective training "
            "time (1,296 h, goodput 0.90); the source reports more than 90%, which any smaller cost fits too; "
            "the 47 planned interruptions of the 54 days (466 in all, by secondary summaries of the source) are not "
            "modelled: their cost sits in this inference",
            "work: 54 days x 24 h x 90% effective training time = 1,166 h",
        ),
        outcomes=({"reported": "54 days of pre-training (1,296 h) with more than 90% effective training time",
                   "args": ["ttt", "--scheme", "none", "--runs", "20"], "key": "mc_ttt_hours",
                   "value": 54 * 24.0, "rel_tol": 0.05},)),
        16_384, 128, 8, 10.0, 54 * 24 * 0.9, ckpt_cost=LLAMA3_CKPT_COST_MIN),
    "cluster-100k": _from_llama3_rates(Preset(
        "cluster-100k", "a 98,304-GPU cluster (6 x Llama 3's) in 96 groups of 1,024 GPUs at Llama 3's per-GPU "
        "interruption rate and root-cause shares", {},
        sources=(LLAMA3_SOURCE, FT_HSDP_SOURCE),
        assumptions=(
            "per-GPU interruption rate and root-cause shares of Llama 3 (same hardware generation)",
            "job-wide: software bugs + host maintenance + SDC = 21.9% of interruptions at Llama 3's size; here "
            "they scale with the GPU count like the others (per GPU; --job-scaling per-job keeps Llama 3's "
            "job-wide MTBF instead)",
            "switch/cable faults (8.4%) are domain events over 4 groups (4,096 GPUs)",
            "restart 10 min (FT-HSDP); checkpoint cost: the default 5 min; work: the default 720 h",
        ),
        outcome_note="a hypothetical cluster (Llama 3's rates at 6 x its size): no source reports its outcome"),
        98_304, 1024, 4, 10.0, 720.0),
    "rsc1-16k": _from_node_failures(Preset(
        "rsc1-16k", "Meta's RSC-1 research cluster: 16,384 A100 (2,048 nodes of 8) at 6.50 failures per 1,000 "
        "node-days, in 128 data-parallel groups of 128 GPUs", {}, sources=(RSC_SOURCE,),
        assumptions=("16,384 GPUs: the source's 'about 16k', as a power of two", *_RSC_ASSUMPTIONS,
                     _RSC1_MEASURED_MTTF),
        outcomes=({"reported": "projected MTTF 1.8 h for a 16,384-GPU job on RSC-1",
                   "args": ["ttt", "--scheme", "none", "--runs", "2", "--work-hours", "10"],
                   "key": "cluster_mtbf_min", "value": 1.8 * 60, "rel_tol": 0.05},
                  {"reported": "projected MTTF 0.23 h for a 131,072-GPU job on RSC-1",
                   "args": ["ttt", "--scheme", "none", "--runs", "2", "--work-hours", "10", "-N", "1024"],
                   "key": "cluster_mtbf_min", "value": 0.23 * 60, "rel_tol": 0.05})),
        16_384, 128, RSC["rsc1_failures_per_1000_node_days"]),
    "rsc2-8k": _from_node_failures(Preset(
        "rsc2-8k", "Meta's RSC-2 research cluster: 8,192 A100 (1,024 nodes of 8) at 2.34 failures per 1,000 "
        "node-days, in 64 data-parallel groups of 128 GPUs", {}, sources=(RSC_SOURCE,),
        assumptions=("8,192 GPUs: the source's 'about 8k', as a power of two", *_RSC_ASSUMPTIONS),
        outcome_note="the source's RSC-2 figure is its failure rate, the preset's input; the MTTFs it reports "
                     "are RSC-1's"),
        8_192, 128, RSC["rsc2_failures_per_1000_node_days"]),
    "ft-hsdp-100k": Preset(
        "ft-hsdp-100k", "FT-HSDP's synchronous baseline: 98,304 GPUs in 96 data-parallel replicas of 1,024 GPUs, "
        "10-min restart, a failure every 11.9 min (inferred)",
        {"groups": 96, "gpus_per_group": 1024.0, "reference_gpus": 98_304.0, "mtbf": FT_HSDP_MTBF_MIN,
         "restart": 10.0, "ckpt_cost": LLAMA3_CKPT_COST_MIN, "work_hours": 720.0},
        sources=(FT_HSDP_SOURCE, LLAMA3_SOURCE),
        assumptions=(
            "98,304 GPUs in 96 replicas of 1,024: the source's O(100K) GPUs; its replica size is not used here",
            "restart 10 min: the source's stall per failure recovery with synchronous training",
            "checkpoint cost 0.25 min: llama3-16k's inferred cost (same operator, same GPU generation)",
            "failure rate inferred, the source's abstract gives none: system MTBF 11.9 min (per-GPU MTBF 19,497 "
            "h), at which ttt --scheme none has goodput 0.44, the source's 44%; every failure takes down one "
            "replica (no job-wide interruptions or domains are known)",
            "at Llama 3's per-GPU interruption rate (a failure every 30.9 min at this size) our none scheme "
            "predicts 66% effective training time, not 44%: the 44% implies 2.6 x Llama 3's rate, or a costlier "
            "checkpoint (with 5 min, Llama 3's rate gives 40%)",
            "the source's 80% with 3-min replica restarts is for training that goes on without the failed "
            "replica while it restarts: the elastic scheme of whole training runs, not yet on the command line; "
            "none, spare and rep do not model it",
        ),
        derived={"gpu_mtbf_hours": FT_HSDP_MTBF_MIN * 98_304 / 60.0, "cluster_mtbf_min": FT_HSDP_MTBF_MIN,
                 "group_mtbf_min": FT_HSDP_MTBF_MIN * 96},
        outcomes=({"reported": "44% effective training time with synchronous training (10-min stall per failure)",
                   "args": ["ttt", "--scheme", "none", "--runs", "20"], "key": "goodput", "value": 0.44,
                   "rel_tol": 0.05},)),
}


def get_preset(name: str) -> Preset:
    if name not in PRESETS:
        raise ValueError(f"--preset must be one of {', '.join(PRESETS)}, got {name!r}")
    return PRESETS[name]


def presets_report(job_scaling: str = "per-gpu"):
    """Every preset with its settings, derived figures, sources and assumptions, its job-wide MTBF under
    ``job_scaling``: the ``Report`` that ``spare-jax presets --json`` prints."""
    from ..results import Report

    return Report({name: _json_names(p.under(job_scaling).as_dict()) for name, p in PRESETS.items()})


# a preset's settings are the flags' internal names; its JSON speaks the vocabulary (units in the key, counts
# as integers)
_SETTING_KEYS = {"mtbf": "reference_mtbf_min", "job_mtbf": "job_mtbf_min", "restart": "restart_min",
                 "ckpt_cost": "ckpt_cost_min"}
_COUNTS = ("groups", "gpus", "gpus_per_group", "reference_gpus")


def _count(value):
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _json_names(d: dict) -> dict:
    out = dict(d)
    out["settings"] = {_SETTING_KEYS.get(k, k): _count(v) if k in _COUNTS else v for k, v in d["settings"].items()}
    out["domains"] = [{("mtbf_min" if k == "mtbf" else k): v for k, v in level.items()} for level in d["domains"]]
    if d.get("job_wide"):
        out["job_wide"] = {k: _count(v) if k in _COUNTS else v for k, v in d["job_wide"].items()}
    return out
