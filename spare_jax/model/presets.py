"""Presets: published cluster parameters with their sources (SPEC §10, §11), as command-line defaults.

``--preset NAME`` sets the defaults of any command that takes the settings (flags and ``--config`` win over
it). Every number below is either quoted from a source or derived from quoted numbers by the formula
written next to it; the settings a source does not give (which failure shares are job-wide, how many
groups a switch domain spans, the checkpoint cost) are our modelling assumptions and are labelled so in
``assumptions``. Presets are inputs: nothing is tuned to reproduce a published outcome.

Llama 3 (Dubey et al., "The Llama 3 Herd of Models", 2024, §3.3.4 and Table 5): 16,384 H100 GPUs,
54 days of pre-training, 419 unexpected interruptions; root causes 58.7% GPU (faulty GPU 30.1%, HBM3 17.2%,
SRAM 4.5%, GPU system processor 4.1%, thermal interface 1.4%, ...), 12.9% software bugs, 8.4% network
switch/cable, 7.6% host maintenance, 1.4% silent data corruption, the rest other host hardware (NIC, SSD,
power supply, ...). Parallelism of the 405B run on 16K GPUs: TP 8 x PP 16 x DP 128.
Meta FT-HSDP (Meta, "Fault-tolerant HSDP", ~100k GPUs, 2025): a synchronous global restart takes about
10 min, restarting only the failed replica about 3 min.

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
                 "7.6% host maintenance, 1.4% silent data corruption; 405B run on 16K GPUs: TP 8, PP 16, DP 128")
FT_HSDP_SOURCE = "Meta FT-HSDP (~100k GPUs): synchronous restart ~10 min vs ~3 min to restart one replica"
PAPER_SOURCE = ("the SPARe paper's setting (SPEC §1): 600k GPUs in 600 groups of 1,000, system MTBF 5 min, "
                "restart 60 min, checkpoint 5 min, 720 h of work")


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


def _from_llama3_rates(name: str, description: str, gpus: int, gpus_per_group: int, domain_groups: int,
                       restart_min: float, work_hours: float, sources: tuple, assumptions: tuple) -> Preset:
    """A cluster of ``gpus`` GPUs failing at Llama 3's per-GPU interruption rate with Llama 3's root-cause
    shares: job-wide = software + host maintenance + SDC; domain events = switch/cable, over domains of
    ``domain_groups`` groups; group failures = the rest."""
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
    return Preset(name, description, settings, domains, sources, assumptions, derived, job_wide)


PRESETS = {
    "paper-600k": Preset(
        "paper-600k", "the paper's 600k-GPU cluster (the defaults; i.i.d. group failures, no scenario)",
        {"groups": 600, "gpus_per_group": 1000.0, "reference_gpus": 600_000.0, "mtbf": 5.0, "restart": 60.0,
         "ckpt_cost": 5.0, "work_hours": 720.0},
        sources=(PAPER_SOURCE,)),
    "llama3-16k": _from_llama3_rates(
        "llama3-16k", "Llama 3 405B pre-training: 16,384 H100 in 128 data-parallel groups of 128 GPUs",
        16_384, 128, 8, 10.0, 54 * 24 * 0.9,
        sources=(LLAMA3_SOURCE, FT_HSDP_SOURCE),
        assumptions=(
            "job-wide (no redundancy masks them): software bugs + host maintenance + SDC = 21.9% of interruptions",
            "switch/cable faults (8.4%) are domain events over 8 groups (1,024 GPUs, one leaf switch's reach); "
            "the source gives only the share",
            "every other interruption fails one data-parallel group",
            "restart 10 min (FT-HSDP's synchronous restart at ~100k GPUs); checkpoint cost: the default 5 min",
            "work: 54 days x 24 h x 90% effective training time (the source reports > 90%) = 1,166 h",
        )),
    "cluster-100k": _from_llama3_rates(
        "cluster-100k", "a 98,304-GPU cluster (6 x Llama 3's) in 96 groups of 1,024 GPUs at Llama 3's per-GPU "
        "interruption rate and root-cause shares",
        98_304, 1024, 4, 10.0, 720.0,
        sources=(LLAMA3_SOURCE, FT_HSDP_SOURCE),
        assumptions=(
            "per-GPU interruption rate and root-cause shares of Llama 3 (same hardware generation)",
            "job-wide: software bugs + host maintenance + SDC = 21.9% of interruptions at Llama 3's size; here "
            "they scale with the GPU count like the others (per GPU; --job-scaling per-job keeps Llama 3's "
            "job-wide MTBF instead)",
            "switch/cable faults (8.4%) are domain events over 4 groups (4,096 GPUs)",
            "restart 10 min (FT-HSDP); checkpoint cost: the default 5 min; work: the default 720 h",
        )),
}


def get_preset(name: str) -> Preset:
    if name not in PRESETS:
        raise ValueError(f"--preset must be one of {', '.join(PRESETS)}, got {name!r}")
    return PRESETS[name]


def presets_report(job_scaling: str = "per-gpu"):
    """Every preset with its settings, derived figures, sources and assumptions, its job-wide MTBF under
    ``job_scaling``: the ``Report`` that ``spare-jax presets --json`` prints."""
    from ..results import Report

    return Report({name: p.under(job_scaling).as_dict() for name, p in PRESETS.items()})
