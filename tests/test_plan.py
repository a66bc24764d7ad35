"""spare-jax plan (SPEC §11): the failure-log fits, the planner, its command line and its HTML report.

Small clusters and few runs throughout (the whole file runs in about a minute on 2 cores)."""

import base64
import dataclasses
import json
from html.parser import HTMLParser

import numpy as np
import pytest

from failure_logs import format_log, synthetic_log
from spare_jax.model.presets import PRESETS
from spare_jax.planner import fit as fitmod
from spare_jax.cli import main
from spare_jax.planner.plan import Costs, Fleet, PlanOptions, _scaled_scenario, _time_scaled, plan

# a small cluster where the schemes differ: 16 groups of 96 GPUs, a harsh per-GPU MTBF, 100 h of work
SMALL = (Fleet(1536, 96, gpu_mtbf_hours=300.0), Costs(work_hours=100.0), PlanOptions(r_max=4, runs=20))
SMALL_ARGS = ["--gpus", "1536", "--gpus-per-group", "96", "--work-hours", "100", "--r-max", "4", "--runs", "20",
              "--quiet"]
SCHEME_KEYS = {"r_star", "ckpt_interval_min", "ttt_hours", "mc_ttt_p05_hours", "mc_ttt_p95_hours", "p_over_deadline",
               "availability_pct", "failures_endured", "gpu_hours", "cost"}


# --- fits ---------------------------------------------------------------------------------------------------

def test_fit_recovers_known_parameters():
    """2,000 nodes x 1,000 h, node MTBF 5,000 h: the exponential and Weibull (shape 0.7) truths lie in the
    95% intervals, and the likelihood-ratio test rejects shape 1 for the Weibull log only."""
    rng = np.random.default_rng(20240611)
    res = fitmod.fit_log(synthetic_log(2000, 1000.0, 5000.0, 1.0, rng))
    lo, hi = res.exponential.mtbf_ci_hours
    assert lo < 5000.0 < hi and lo < res.mtbf_hours < hi
    assert res.nodes == 2000 and res.exposure_node_hours == 2000 * 1000.0
    assert 300 < res.failures < 500  # about 400 expected
    assert res.weibull.shape_ci[0] < 1.0 < res.weibull.shape_ci[1]
    assert res.weibull.p_exponential > 0.01
    # the Garwood interval at these counts: about +-10% around the estimate
    assert 0.8 < lo / res.mtbf_hours < 0.95 and 1.05 < hi / res.mtbf_hours < 1.25

    res = fitmod.fit_log(synthetic_log(2000, 1000.0, 5000.0, 0.7, rng))
    w = res.weibull
    assert w.shape_ci[0] < 0.7 < w.shape_ci[1] and w.shape_ci[1] < 0.85
    assert w.mtbf_ci_hours[0] < 5000.0 < w.mtbf_ci_hours[1]
    assert w.p_exponential < 1e-6
    # new nodes with shape < 1 fail early: the window's failure rate overstates the long-run one
    assert res.exponential.mtbf_ci_hours[1] < 5000.0


def test_fit_interval_coverage_is_near_95_percent():
    """Over 200 seeded logs each 95% interval holds the truth in 90-99% of them (binomial sd 1.5%): the
    exact exponential interval (conservative by construction) and the Weibull profile-likelihood intervals."""
    rng = np.random.default_rng(7)
    reps = 200
    hit_exp = 0
    for _ in range(reps):  # the exponential fit needs only counts: the failures of 2,000 nodes x 1,000 h
        n = int(rng.poisson(2000 * 1000.0 / 5000.0))
        lo, hi = fitmod.fit_exponential(n, 2000 * 1000.0).mtbf_ci_hours
        hit_exp += lo <= 5000.0 <= hi
    hit_k = hit_mu = 0
    for _ in range(reps):
        w = fitmod.fit_log(synthetic_log(500, 1000.0, 2000.0, 0.7, rng)).weibull
        hit_k += w.shape_ci[0] <= 0.7 <= w.shape_ci[1]
        hit_mu += w.mtbf_ci_hours[0] <= 2000.0 <= w.mtbf_ci_hours[1]
    for hits in (hit_exp, hit_k, hit_mu):
        assert 0.90 * reps <= hits <= 0.99 * reps, (hit_exp, hit_k, hit_mu)


def test_log_format_round_trip_and_precedence(tmp_path):
    log = synthetic_log(50, 400.0, 300.0, 1.0, np.random.default_rng(3))
    path = tmp_path / "log.csv"
    path.write_text(format_log(log))
    back = fitmod.read_failure_log(str(path))
    assert back.nodes == 50 and back.window_hours == 400.0 and back.failures == log.failures
    assert back.times == log.times
    # flags win over the directives; without either, the distinct nodes and the last time
    assert fitmod.read_failure_log(str(path), window_hours=500.0, nodes=80).nodes == 80
    text = "node,time_hours\na,10\nb,30\nc,\na,20\n"
    parsed = fitmod.parse_failure_log(text)
    assert parsed.nodes == 3 and parsed.window_hours == 30.0 and parsed.times["a"] == (10.0, 20.0)
    assert parsed.times["c"] == ()
    res = fitmod.fit_log(parsed)
    assert res.exposure_node_hours == 90.0 and res.failures == 3
    assert res.mtbf_hours == pytest.approx(30.0)


BAD_LOGS = [
    ("time,node\na,1\n", "line 1"),
    ("# window_hours = 100\nnode,time_hours\na,1\nb,x\n", "line 4"),
    ("node,time_hours\na,1\nb,-3\n", "line 3"),
    ("node,time_hours\na,1\nb,nan\n", "line 3"),
    ("node,time_hours\na,1,2\n", "line 2"),
    ("node,time_hours\n,5\n", "line 2"),
    ("# window_hours = 10\nnode,time_hours\na,1\na,11\n", "line 4"),
    ("node,time_hours\na,5\na,5\n", "line 3"),
    ("# window_hours = ten\nnode,time_hours\na,1\n", "line 1"),
    ("# nodes = 2.5\nnode,time_hours\na,1\n", "line 1"),
    ("node,time_hours\na,\n", "no failure"),
    ("", "no header"),
    ("# nodes = 1\nnode,time_hours\na,1\nb,2\n", "fewer"),
]


@pytest.mark.parametrize("text,where", BAD_LOGS)
def test_malformed_logs_are_refused_naming_the_line(text, where):
    with pytest.raises(ValueError, match=where):
        fitmod.parse_failure_log(text)


# --- the planner --------------------------------------------------------------------------------------------

def test_plan_small_cluster_keys_and_what_the_model_guarantees():
    res = plan(SMALL[0], Costs(work_hours=100.0, deadline_hours=400.0, gpu_hour_price=3.0),
               PlanOptions(r_max=4, runs=20, sensitivity=False))
    out = res.to_json()
    assert set(out["schemes"]) == {"spare", "rep", "none"}
    n = 16
    for s, e in out["schemes"].items():
        assert SCHEME_KEYS <= set(e), s
        assert e["mc_ttt_p05_hours"] <= e["mc_ttt_p95_hours"]
        assert 0.0 <= e["p_over_deadline"] <= 1.0
        assert 0.0 < e["availability_pct"] <= 100.0
        assert e["gpu_hours"] == pytest.approx(e["ttt_hours"] * 1536)
        assert e["cost"] == pytest.approx(e["gpu_hours"] * 3.0)
        assert e["ttt_hours"] >= 100.0  # never faster than the failure-free work
        assert e["mc_runs"] == 20 and len(res.runs_hours[s]) == 20
        assert np.mean(res.runs_hours[s] > 400.0) == e["p_over_deadline"]
    sp, rep, none = (out["schemes"][s] for s in ("spare", "rep", "none"))
    assert none["r_star"] == 1 and none["failures_endured"] == 0.0
    assert n % rep["r_star"] == 0  # replica sets need r | N
    # spare's search includes r = 1, which is 'none' exactly; rep's too (tau refined per scheme: 1e-3)
    assert sp["ttt_hours"] <= none["ttt_hours"] * 1.001 and rep["ttt_hours"] <= none["ttt_hours"] * 1.001
    assert sp["r_star"] > 1 and sp["failures_endured"] > 0  # at this failure rate redundancy pays
    assert out["inputs"]["groups"] == n and out["inputs"]["group_mtbf_hours"] == pytest.approx(300.0 / 96)
    assert out["sensitivity"] == [] and "fit" not in out
    json.dumps(out, allow_nan=False)  # strict JSON as it stands (no numpy scalars, no NaN)


def test_mtbf_sensitivity_by_time_scaling_equals_the_scaled_model():
    """MTBF x f (every failure clock, job-wide included) = R, C, W / f in a time unit f times longer."""
    from spare_jax import ttt
    from spare_jax.planner.plan import _model
    from spare_jax.model.cluster import Cluster
    from spare_jax.model.scenario import Scenario

    model = _model(1536, 96, 300.0)
    cfg = ttt.Training(100.0, 5.0, 60.0, "none", 1536.0)
    sc = Scenario(job_mtbf_min=200.0)
    f = 2.0
    scaled_model = dataclasses.replace(model, system_mtbf_min=model.system_mtbf_min * f)
    direct = ttt.optimize_r_tau(Cluster(16, scaled_model, _scaled_scenario(sc, mtbf_factor=f)), cfg, ttt.Space(r_max=3),
                                schemes=("spare",))
    scaled = ttt.optimize_r_tau(Cluster(16, model, sc), _time_scaled(cfg, f), ttt.Space(r_max=3), schemes=("spare",))
    assert direct["schemes"]["spare"]["r_star"] == scaled["schemes"]["spare"]["r_star"]
    assert direct["schemes"]["spare"]["ttt_hours"] == pytest.approx(f * scaled["schemes"]["spare"]["ttt_hours"],
                                                                    rel=1e-3)
    assert _scaled_scenario(Scenario(job_fraction=0.2), job_rate_factor=2.0).job_fraction == pytest.approx(1 / 3)


def test_plan_refuses_bad_inputs_at_the_api():
    with pytest.raises(ValueError, match="multiple of gpus_per_group"):
        plan(Fleet(1000, 96))
    with pytest.raises(ValueError, match="one failure rate"):
        plan(Fleet(1536, 96, gpu_mtbf_hours=100.0, node_mtbf_hours=800.0))
    with pytest.raises(ValueError, match="whole nodes"):
        plan(Fleet(1536, 96, node_mtbf_hours=800.0, gpus_per_node=5))
    with pytest.raises(ValueError, match="whole nodes"):  # with the per-GPU MTBF too
        plan(Fleet(1536, 96, gpus_per_node=5))
    with pytest.raises(ValueError, match="deadline_hours"):
        plan(Fleet(1536, 96), Costs(deadline_hours=-1.0))
    with pytest.raises(ValueError, match="group MTBF"):
        plan(Fleet(1536, 96, gpu_mtbf_hours=1e-3))


# --- the command line and the report ------------------------------------------------------------------------

class _Checker(HTMLParser):
    """Well-formedness: every opened tag is closed in order (void elements written self-closed)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.imgs, self.cells, self.links = [], [], [], [], []
        self._in_td = False

    def handle_starttag(self, tag, attrs):
        if tag in ("img", "meta", "br", "link", "hr", "input"):
            self.errors.append(f"void element <{tag}> not self-closed")
        self.stack.append(tag)
        self._in_td = tag == "td"
        if tag in ("script", "link") or any(k in ("href",) for k, _ in attrs):
            self.links.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        if tag == "img":
            self.imgs.append(dict(attrs))
        if tag in ("script", "link"):
            self.links.append((tag, attrs))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()
        self._in_td = False

    def handle_data(self, data):
        if self._in_td and data.strip():
            self.cells.append(data.strip())


def test_cli_plan_json_with_a_failure_log_and_the_html_report(tmp_path, capsys):
    """A fitted log drives the rate (per-node MTBF x GPUs per node); --json has the spec's keys; the report
    is well-formed, self-contained, its images decode to PNGs, and its table has the three schemes."""
    log = synthetic_log(192, 500.0, 2400.0, 1.0, np.random.default_rng(5))  # 192 nodes of 8 GPUs
    path = tmp_path / "failures.csv"
    path.write_text(format_log(log))
    report = tmp_path / "plan.html"
    code = main(["plan", *SMALL_ARGS, "--failure-log", str(path), "--gpus-per-node", "8", "--deadline-hours", "400",
                 "--no-sensitivity", "--report", str(report), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = json.loads(captured.out)
    assert {"inputs", "schemes", "sensitivity", "fit"} <= set(out)
    assert set(out["schemes"]) == {"spare", "rep", "none"}
    assert all(SCHEME_KEYS <= set(e) for e in out["schemes"].values())
    fitted = out["fit"]
    assert fitted["nodes"] == 192 and fitted["failures"] == log.failures
    assert out["inputs"]["gpu_mtbf_hours"] == pytest.approx(fitted["exponential"]["mtbf_hours"] * 8)
    assert out["inputs"]["group_mtbf_hours"] == pytest.approx(fitted["exponential"]["mtbf_hours"] / 12)

    text = report.read_text()
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert not checker.errors and checker.stack == [], (checker.errors, checker.stack)
    assert "http://" not in text and "https://" not in text and not checker.links  # nothing external
    assert len(checker.imgs) >= 2
    for img in checker.imgs:
        src = img["src"]
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1], validate=True)[:8] == b"\x89PNG\r\n\x1a\n"
    assert {"spare", "rep", "none"} <= set(checker.cells)
    assert "Failure log fit" in text and "fitted from" in text


def test_cli_plan_table(capsys):
    code = main(["plan", *SMALL_ARGS, "--gpu-mtbf-hours", "300", "--restart", "30", "--job-mtbf", "300",
                 "--no-sensitivity", "--deadline-hours", "500"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = captured.out.splitlines()
    rows = {ln.split()[0]: ln.split() for ln in lines if ln.split() and ln.split()[0] in ("spare", "rep", "none")}
    assert set(rows) == {"spare", "rep", "none"} and all(len(r) >= 10 for r in rows.values())
    assert "P(>500 h)" in captured.out and "job-wide MTBF 300 min" in captured.out
    assert "restart 30 min" in captured.out


@pytest.mark.slow
def test_plan_sensitivity_directions_and_table():
    """More reliable hardware, a cheaper restart or checkpoint, fewer job-wide interruptions never lengthen
    the optimum; the opposite never shortens it; keeping the base r* is never better than re-optimising."""
    from spare_jax.planner.plan import format_table
    from spare_jax.model.scenario import Scenario

    res = plan(Fleet(1536, 96, gpu_mtbf_hours=300.0, scenario=Scenario(job_mtbf_min=300.0)), SMALL[1],
               PlanOptions(r_max=2, runs=4))  # 9 optimiser runs
    rows = {r["label"]: r["schemes"] for r in res.sensitivity}
    assert set(rows) == {"MTBF x2", "MTBF /2", "restart x2", "restart /2", "checkpoint x2", "checkpoint /2",
                         "job-wide rate x2", "job-wide rate /2"}
    for s, base in res.schemes.items():
        up, down = base["ttt_hours"] * 1.001, base["ttt_hours"] / 1.001
        for better in ("MTBF x2", "restart /2", "checkpoint /2", "job-wide rate /2"):
            assert rows[better][s]["ttt_hours"] <= up, (s, better)
        for worse in ("MTBF /2", "restart x2", "checkpoint x2", "job-wide rate x2"):
            assert rows[worse][s]["ttt_hours"] >= down, (s, worse)
        for row in rows.values():
            keep = row[s]["ttt_hours_at_base_r"]
            assert keep is None or keep >= row[s]["ttt_hours"] / 1.001
    text = format_table(res)
    assert "MTBF x2" in text and "job-wide rate /2" in text and "keep r*" in text


@pytest.mark.slow
def test_cli_plan_preset_llama3_16k(capsys):
    code = main(["plan", "--preset", "llama3-16k", "--r-max", "2", "--epochs", "500", "--runs", "10",
                 "--no-sensitivity", "--json", "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = json.loads(captured.out)
    inp = out["inputs"]
    assert inp["gpus"] == 16_384 and inp["groups"] == 128 and inp["gpus_per_group"] == 128
    assert inp["restart_min"] == 10.0 and inp["work_hours"] == pytest.approx(1166.4)
    assert inp["preset"] == "llama3-16k" and inp["scenario"]["domains"][0]["size"] == 8
    # the plan carries the preset's per-GPU MTBF of group failures (Llama 3's interruptions at their clock rate,
    # times the group-failure share: docs/vocabulary.md), not the MTBF over every kind of failure
    derived = PRESETS["llama3-16k"].derived
    assert inp["gpu_mtbf_hours"] == pytest.approx(derived["gpu_mtbf_hours"], rel=1e-9)
    assert inp["gpu_mtbf_hours"] > 1.2 * derived["gpu_mtbf_hours (all failures)"]
    assert "renewal-reward" in inp["method_detail"] and inp["method"] == "epoch_pool"


BAD_CLI = [
    (["--gpus", "1000", "--gpus-per-group", "96"], "multiple of --gpus-per-group"),
    (["--gpu-mtbf-hours", "100", "--node-mtbf-hours", "800"], "not allowed with"),
    (["--gpus-per-node", "5", "--gpus-per-group", "96", "--gpus", "1536"], "whole nodes"),
    (["--log-window-hours", "100"], "--failure-log"),
    (["--node-mtbf-hours", "800", "--gpus-per-node", "5", "--gpus-per-group", "96", "--gpus", "1536"], "whole nodes"),
    (["--gpus", "0"], "--gpus"),
    (["--gpu-hour-price", "-1"], "--gpu-hour-price"),
    (["--deadline-hours", "nan"], "--deadline-hours"),
    (["--runs", "1"], "--runs"),
    (["--gpus-per-group", "2.5", "--gpus", "10"], "whole number"),
    (["--failure-log", "/nonexistent/log.csv"], "cannot read"),
    (["--report", "/nonexistent/dir/plan.html"], "--report"),
    (["--domain-size", "4"], "go together"),
]


@pytest.mark.parametrize("argv,word", BAD_CLI)
def test_cli_plan_bad_input_one_line_exit_2(argv, word, capsys, tmp_path):
    code = main(["plan", "--quiet", "--no-sensitivity", *argv])
    err = capsys.readouterr()
    assert code == 2 and err.out == ""
    lines = [ln for ln in err.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and word in lines[0] and lines[0].startswith("spare-jax"), lines


def test_cli_plan_malformed_log_names_the_line(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("node,time_hours\na,1\nb,soon\n")
    report = tmp_path / "plan.html"
    code = main(["plan", "--quiet", "--failure-log", str(path), "--report", str(report)])
    err = capsys.readouterr().err
    assert code == 2 and "line 3" in err and len(err.strip().splitlines()) == 1
    assert not report.exists()  # nothing written on bad input


def test_report_refuses_nothing_external_and_escapes_text():
    from spare_jax.planner.plan import PlanResult
    from spare_jax.planner.report import render_html

    res = PlanResult({"gpus": 8, "gpus_per_group": 4, "groups": 2, "work_hours": 1.0, "method": "x<y>",
                      "deadline_hours": None},
                     {"spare": {"r_star": 1, "ckpt_interval_min": 1.0, "ttt_hours": 2.0, "mc_ttt_p05_hours": None,
                                "mc_ttt_p95_hours": None, "p_over_deadline": None, "availability_pct": 50.0,
                                "failures_endured": 0.0, "gpu_hours": 16.0, "cost": 32.0, "mc_runs": 0}},
                     [], None, {"spare": [{"redundancy": 1, "ckpt_interval_min": 1.0, "ttt_hours": 2.0}]},
                     {"spare": None}, ["<script>alert(1)</script>"])
    text = render_html(res)
    assert "<script>" not in text and "&lt;script&gt;" in text and "x&lt;y&gt;" in text
