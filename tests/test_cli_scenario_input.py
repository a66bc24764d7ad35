"""Bad input on the scenario, preset and ring-search flags (found by an outside walk of every new flag):
exit 2, one line naming the problem, nothing on stdout."""

import json
import os

import pytest

from spare_jax.cli import main


def _run(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _refused(args, needle, capsys):
    code, out, err = _run(args, capsys)
    assert code == 2 and out == "", (code, out, err)
    assert len(err.strip().splitlines()) == 1 and needle in err, err


@pytest.mark.parametrize("args,needle", [
    (["--preset", "llama3-16k", "wipeout"], "after the subcommand"),
    (["--preset", "llama3-16k"], "needs a subcommand"),
    (["wipeout", "-N", "20", "--ring", ""], "--ring"),
    (["wipeout", "-N", "20", "--lemon-factor", "5"], "--lemon-fraction"),
    (["wipeout", "-N", "20", "--lemon-seed", "5"], "--lemon-fraction"),
    (["place", "-N", "20", "-r", "2", "--trials", "1"], "--trials"),
    (["place", "-N", "20", "-r", "2", "--placement", "random"], "--placement"),
    (["place", "-N", "20", "-r", "2", "--ring-out", ""], "--ring-out"),
])
def test_refused(args, needle, capsys):
    _refused(args + ["--quiet"] if args[0] != "--preset" else args, needle, capsys)


def test_ring_out_targets(tmp_path, capsys):
    flags = ["place", "-N", "12", "-r", "2", "--steps", "1", "--trials", "200", "--quiet"]
    _refused(flags + ["--ring-out", str(tmp_path)], "--ring-out", capsys)  # a directory
    locked = tmp_path / "locked.txt"
    locked.write_text("x")
    os.chmod(locked, 0o444)
    if not os.access(locked, os.W_OK):  # (root can write anyway)
        _refused(flags + ["--ring-out", str(locked)], "--ring-out", capsys)


def test_group_mtbf_file_range(tmp_path, capsys):
    f = tmp_path / "m.txt"
    for value in ("1e-300", "1e300"):
        f.write_text("\n".join([value] * 12))
        _refused(["ttt", "-N", "12", "-r", "2", "--trials", "2", "--group-mtbf-file", str(f), "--quiet"],
                 "--group-mtbf-file", capsys)


def test_config_rules(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    base = ["wipeout", "-N", "20", "-r", "2", "--trials", "200", "--json", "--quiet", "--config", str(cfg)]
    cfg.write_text('preset = "llama3-16k"\n')
    _refused(base, "--preset", capsys)
    cfg.write_bytes(b"\xe9\xff\x00")
    _refused(base, "--config", capsys)
    cfg.write_text('[scenario]\ndomain_size = 4\ndomain_mtbf = 100\ndomains = [{size = 2, mtbf = 50}]\n')
    _refused(base, "give one of them", capsys)
    # a config's job-wide setting yields to the other job-wide flag on the line (flags win)
    cfg.write_text("[scenario]\njob_mtbf = 5000\n")
    code, out, err = _run(base + ["--job-fraction", "0.1"], capsys)
    assert code == 0, err
    assert json.loads(out)["scenario"]["job_fraction"] == 0.1
    code, out, err = _run(base, capsys)
    assert code == 0, err
    assert json.loads(out)["scenario"]["job_mtbf_min"] == 5000.0
    cfg.write_text("[scenario]\njob_mtbf = 5000\njob_fraction = 0.1\n")
    _refused(base, "give one of them", capsys)


def test_preset_abbreviation_is_applied_and_one_group_place_runs(capsys):
    code, out, err = _run(["wipeout", "--pres", "llama3-16k", "-r", "2", "--trials", "200", "--json", "--quiet"],
                          capsys)
    assert code == 0, err
    assert json.loads(out)["groups"] == 128
    code, out, err = _run(["place", "-N", "1", "-r", "1", "--trials", "100", "--json", "--quiet"], capsys)
    assert code == 0, err
    assert json.loads(out)["best_ring"] == [0]
