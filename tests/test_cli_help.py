"""Every flag of every subcommand says what it does, its default and (for numbers) its unit or range;
--config is listed in every subcommand's --help; --version prints the package version; the three ways to
give the failure rate give one model. Flags that do not apply: tests/test_cli_refusals_*.py."""
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


def test_help_and_version_start_without_jax():
    """``--help`` of every subcommand and ``--version`` print without importing JAX (about 2 s of a start)."""
    code = ("import sys, contextlib, io\n"
            "from spare_jax.cli import build_parser, main\n"
            "subs = build_parser()._subparsers._group_actions[0].choices\n"
            "for argv in [['--help'], ['--version'], *([name, '--help'] for name in subs)]:\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        try:\n"
            "            main(argv)\n"
            "        except SystemExit as e:\n"
            "            assert e.code in (0, None), (argv, e.code)\n"
            "    loaded = sorted(m for m in sys.modules if m == 'jax' or m.startswith('jax.'))\n"
            "    assert not loaded, (argv, loaded[:3])\n"
            "print(len(subs))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) >= 10


def test_help_states_the_ranges():
    sub = build_parser()._subparsers._group_actions[0].choices
    ttt_help = sub["ttt"].format_help()
    for text in ("range 0.2..10", "range 0.01..1e+06 min", "range 2..10,000"):
        assert text in ttt_help.replace("\n", " ").replace("  ", " ") or text in ttt_help, text
    assert "2^32-1" in sub["overhead"].format_help()
    assert "2^63-1" in sub["wipeout"].format_help()
    assert "-r" not in [o for a in sub["optimize"]._actions for o in a.option_strings]


def test_mtbf_alternatives_give_the_same_model(capsys):
    import json

    outs = []
    for extra in (["--mtbf", "5"], ["--group-mtbf", "3000"], ["--gpu-mtbf-hours", "50000"]):
        assert main(["optimize", "-N", "60", "--r-max", "4", "--json", "--quiet", *extra]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    for o in outs:
        assert o["group_mtbf_min"] == pytest.approx(3000) and o["cluster_mtbf_min"] == pytest.approx(50)
        assert o["schemes"] == outs[0]["schemes"]
