"""Which interruptions scale with the GPU count: the best time-to-train per scheme (spare, rep, none) at 16k,
100k and 600k GPUs when Llama 3's job-wide interruptions come at a fixed rate per GPU or per job.

    python experiments/job_scaling.py           # 7 sizes from 16k to 600k GPUs, r up to 20 (a few minutes)
    python experiments/job_scaling.py --quick   # 16k, 100k and 600k, r up to 8

The cluster is the cluster-100k preset (Llama 3's per-GPU failure rate and root-cause shares, groups of
1,024 GPUs, restart 10 min, checkpoint 5 min, W = 720 h) at 16 groups (16,384 GPUs, Llama 3's own size, where
the two assumptions agree) up to 588 (602,112 GPUs). Group failures keep their per-GPU rate at every
size; the job-wide MTBF is the preset's carried by ``Preset.job_mtbf_min(gpus, scaling)``, as
``--job-scaling`` does. Switch/cable faults (8.4%) are counted as single-group failures, so that the closed
form answers (exact, no sampling; the failure-domain kernels would take tens of minutes here).

Writes figures/job_scaling.csv and figures/job_scaling.png.
"""
import os

from spare_jax.model.cluster import Cluster
from spare_jax.model.failures import FailureModel
from spare_jax.model.presets import JOB_SCALINGS, get_preset
from spare_jax.model.scenario import Scenario
from spare_jax.model.training import Training
from spare_jax.plotting import write_csv
from spare_jax.suite import experiment_args
from spare_jax.ttt.answer import Space, optimize

GROUPS = (16, 32, 64, 96, 192, 384, 588)  # x 1,024 GPUs
QUICK_GROUPS = (16, 96, 588)
SCHEMES = ("spare", "rep", "none")


def cluster_at(groups: int, scaling: str) -> Cluster:
    preset = get_preset("cluster-100k")
    s, d = preset.settings, preset.derived
    gpus = groups * s["gpus_per_group"]
    group_share, domain_share, _ = d["shares (group, domain, job-wide)"]
    # group and switch/cable failures together, as single-group failures, at the preset's size
    masked_mtbf = d["cluster_mtbf_min (all failures)"] / (group_share + domain_share)
    model = FailureModel(system_mtbf_min=masked_mtbf, reference_gpus=s["reference_gpus"],
                         gpus_per_group=s["gpus_per_group"])
    return Cluster(groups, model, Scenario(job_mtbf_min=preset.job_mtbf_min(gpus, scaling)))


def near_best_r(curve) -> int:
    """The least r whose time-to-train is within 0.5% of the best: TTT(r) is often flat near r*."""
    best = min(c["ttt_hours"] for c in curve)
    return min(c["redundancy"] for c in curve if c["ttt_hours"] <= 1.005 * best)


def main():
    args = experiment_args(__doc__)
    preset = get_preset("cluster-100k")
    s = preset.settings
    training = Training(work_hours=s["work_hours"], ckpt_cost_min=5.0, restart_min=s["restart"])
    space = Space(r_max=8 if args.quick else 20, curves=True)
    rows = []
    for groups in QUICK_GROUPS if args.quick else GROUPS:
        curves = {}
        for scaling in JOB_SCALINGS:
            cluster = cluster_at(groups, scaling)
            res = optimize(cluster, training, space).to_json()
            curves[scaling] = res["curves"]
            ttt = {k: res["schemes"][k]["ttt_hours"] for k in SCHEMES}
            # spare and rep at r* = 1 are checkpointing alone: the best scheme is none unless redundancy pays
            best = min((k for k in SCHEMES if k == "none" or res["schemes"][k]["r_star"] > 1), key=ttt.get)
            gain = 1.0 - ttt[best] / ttt["none"]  # what the best scheme saves against checkpointing alone
            for scheme in SCHEMES:
                e = res["schemes"][scheme]
                rows.append({"gpus": int(cluster.gpus), "groups": groups, "job_scaling": scaling,
                             "job_mtbf_min": cluster.scenario.job_mtbf_min,
                             "group_failures_mtbf_min": cluster.model.cluster_mtbf_min(groups), "scheme": scheme,
                             "r_star": e["r_star"], "r_within_half_pct": near_best_r(res["curves"][scheme]),
                             "ckpt_interval_min": e["ckpt_interval_min"],
                             "ttt_hours": e["ttt_hours"], "availability_pct": e["availability_pct"],
                             "goodput": e["goodput"], "best": scheme == best, "gain_vs_none": gain})
        # the cost of planning under the other assumption: this one's TTT at the r the other one picks
        here = rows[-2 * len(SCHEMES):]
        for x in here:
            other = next(y for y in here if y["scheme"] == x["scheme"] and y is not x)
            at = {c["redundancy"]: c["ttt_hours"] for c in curves[x["job_scaling"]][x["scheme"]]}
            x["r_of_the_other"] = other["r_within_half_pct"]
            x["ttt_hours_at_r_of_the_other"] = at[other["r_within_half_pct"]]
        for scaling in JOB_SCALINGS:
            sel = [x for x in here if x["job_scaling"] == scaling]
            best = next(x for x in sel if x["best"])
            each = [f"{x['scheme']} r*={x['r_star']} (0.5%: r={x['r_within_half_pct']}) {x['ttt_hours']:,.0f} h"
                    for x in sel]
            print(f"{sel[0]['gpus']:>7,} GPUs, job-wide {scaling} every {sel[0]['job_mtbf_min']:.1f} min: "
                  + "; ".join(each)
                  + f"; best {best['scheme']}, {100 * best['gain_vs_none']:.1f}% shorter than none; spare at the "
                  f"other's r={sel[0]['r_of_the_other']}: {sel[0]['ttt_hours_at_r_of_the_other']:,.0f} h", flush=True)
    write_csv(os.path.join(args.out, "job_scaling.csv"), rows)
    plot(rows, training, os.path.join(args.out, "job_scaling.png"))


def plot(rows, training, path):
    from spare_jax.plotting import SCHEME_STYLE, new_figure, save

    fig, (ax, ax2) = new_figure(2, width=6.0)
    lines = {"per-gpu": "-", "per-job": "--"}  # per-job: dashed, open markers
    for scaling in JOB_SCALINGS:
        for scheme in SCHEMES:
            sel = [x for x in rows if x["job_scaling"] == scaling and x["scheme"] == scheme]
            colour, _, marker = SCHEME_STYLE[scheme]
            ax.plot([x["gpus"] for x in sel], [x["ttt_hours"] for x in sel], lines[scaling], marker=marker,
                    color=colour, mfc=colour if scaling == "per-gpu" else "white",
                    label=f"{scheme}, job-wide {scaling}")
            for x in sel:
                if scheme != "none" and x["r_star"] > 1:
                    ax.annotate(f"r={x['r_within_half_pct']}", (x["gpus"], x["ttt_hours"]), fontsize=7,
                                textcoords="offset points", xytext=(4, 3 if scaling == "per-gpu" else -9))
    ax.set_ylabel("best time-to-train (h)")
    ax.set_title(f"best TTT per scheme (W = {training.work_hours:g} h, R = {training.restart_min:g} min, "
                 f"C = {training.ckpt_cost_min:g} min)\nr: the least r within 0.5% of the best", fontsize=9)
    spare = [x for x in rows if x["scheme"] == "spare"]
    for scaling in JOB_SCALINGS:
        sel = [x for x in spare if x["job_scaling"] == scaling]
        ax2.plot([x["gpus"] for x in sel], [x["job_mtbf_min"] for x in sel], lines[scaling], marker="o",
                 color="tab:red", mfc="tab:red" if scaling == "per-gpu" else "white",
                 label=f"job-wide MTBF, {scaling}")
    sel = [x for x in spare if x["job_scaling"] == "per-gpu"]
    ax2.plot([x["gpus"] for x in sel], [x["group_failures_mtbf_min"] for x in sel], ":", marker="^", color="k",
             label="group failures (redundancy masks them)")
    ax2.set_ylabel("mean time between interruptions (min)")
    ax2.set_title("Llama 3's mix: job-wide interruptions per GPU or per job", fontsize=9)
    sizes = sorted({x["gpus"] for x in rows})
    for a in (ax, ax2):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel("GPUs")
        a.set_xticks(sizes, [f"{g / 1000:.0f}k" for g in sizes])
        a.set_xticks([], minor=True)
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    save(fig, path)


if __name__ == "__main__":
    main()
