"""Every flag of every subcommand says what it does, its default and (for numbers) its unit or range;
--config is listed in every subcommand's --help; --version prints the package version."""
import argparse
import subprocess
import sys

import pytest

from spare_jax.cli import build_parser, main

SWITCHES = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._VersionAction)


def _subparsers():
    parser = build_parser()
    return parser, parser._subparsers._group_actions[0].choices


def test_every_flag_has_help_with_its_default():
    parser, subs = _subparsers()
    missing = []
    for name, sp in [("(top)", parser), *subs.items()]:
        for a in sp._actions:
            if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) or a.help == argparse.SUPPRESS:
                continue
            text = (a.help or "").strip()
            if not text:
                missing.append(f"{name} {a.option_strings}: no help")
            elif not isinstance(a, SWITCHES) and "default" not in text.lower():
                missing.append(f"{name} {a.option_strings}: no default in {text!r}")
    assert not missing, "\n".join(missing)


def test_numeric_flags_state_a_range_or_unit():
    _, subs = _subparsers()
    bad = []
    for name, sp in subs.items():
        for a in sp._actions:
            if getattr(a.type, "kind", None) in ("int", "float") and a.help != argparse.SUPPRESS:  # former names: hidden
                if "range" not in a.help and not any(u in a.help for u in (" min", " h", "hours", "GPUs")):
                    bad.append(f"{name} {a.option_strings}")
    assert not bad, bad


def test_config_is_listed_in_every_subcommand_help():
    _, subs = _subparsers()
    for name, sp in subs.items():
        assert "--config" in sp.format_help(), name


def test_version():
    proc = subprocess.run([sys.executable, "-m", "spare_jax", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("spare-jax ") and proc.stdout.split()[1][0].isdigit()


def _cfg(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(text)
    return str(p)


def test_config_takes_flag_names_as_keys(tmp_path, capsys):
    import json

    path = _cfg(tmp_path, "N = 40\nr = 3\n[wipeout]\ntrials = 500\n")
    assert main(["wipeout", "--config", path, "--json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["groups"] == 40 and data["redundancy"] == 3 and data["trials"] == 500
    path = _cfg(tmp_path, "N = 40\ngroups = 50\n")
    assert main(["wipeout", "--config", path, "--quiet"]) == 2
    assert "set the same thing" in capsys.readouterr().err


@pytest.mark.parametrize("argv,word", [
    (["wipeout", "--work-hours", "100"], "--work-hours"),
    (["ttt", "--scheme", "none", "-r", "4"], "--scheme none"),
    (["optimize", "--epochs", "1000"], "--epochs"),
    (["optimize", "--pool-seed", "3"], "--pool-seed"),
    (["plan", "--microbatches", "1,2"], "--microbatches"),  # a list is searched with repair only
    (["reorder", "-N", "10", "-r", "2", "--failed", "1", "--seed", "3"], "--seed"),
    (["wipeout", "--weibull-shape", "2"], "--weibull-shape"),
    (["wipeout", "--mtbf", "5", "--group-mtbf", "3000"], "--group-mtbf"),
    (["wipeout", "--group-mtbf", "3000", "--gpu-mtbf-hours", "50000"], "--gpu-mtbf-hours"),
])
def test_flags_that_do_not_apply_are_refused(argv, word, capsys):
    assert main([*argv, "--quiet"]) == 2
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert captured.out == "" and len(lines) == 1 and word in lines[0], lines


def test_mtbf_alternatives_give_the_same_model(capsys):
    import json

    outs = []
    for extra in (["--mtbf", "5"], ["--group-mtbf", "3000"], ["--gpu-mtbf-hours", "50000"]):
        assert main(["optimize", "-N", "60", "--r-max", "4", "--json", "--quiet", *extra]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    for o in outs:
        assert o["group_mtbf_min"] == pytest.approx(3000) and o["cluster_mtbf_min"] == pytest.approx(50)
        assert o["schemes"] == outs[0]["schemes"]
