"""Bad --config files and --preset use, for every command, as tables: a file of the wrong kind (empty, binary,
huge, nested thousands deep, a directory, a FIFO, missing) and settings of the wrong type, range or place. Each
must be refused by tests/refusal.py's rule (exit 2, one line on stderr from spare-jax holding the row's words,
nothing on stdout, no traceback, no hang, no JAX kernel compiled).

What a good --config sets: tests/test_cli_config.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from refusal import TTT, TTT1, refused
from spare_jax.model.inputfile import MAX_BYTES

COMMANDS = ("run", "wipeout", "overhead", "ttt", "optimize", "place", "presets", "bench", "reorder", "plan")

# a --config file of each wrong kind: (how it is made, the words of the refusal)
KINDS = {
    "empty": (lambda p: p.write_text(""), "holds no settings"),
    "comments only": (lambda p: p.write_text("# settings to come\n\n"), "holds no settings"),
    "binary": (lambda p: p.write_bytes(b"\xe9\xff\x00"), "not a UTF-8 text file"),
    "huge": (lambda p: open(p, "wb").truncate(MAX_BYTES + 1), "more than the"),  # sparse: nothing written
    "nested deeply": (lambda p: p.write_text("a = " + "[" * 5000 + "]" * 5000), "too deeply"),
    "a directory": (lambda p: p.mkdir(), "a directory, not a regular file"),
    "a FIFO": (lambda p: os.mkfifo(p), "a FIFO, not a regular file"),
    "missing": (lambda p: None, "cannot read"),
    "not TOML": (lambda p: p.write_text("N = = 3\n"), "not valid TOML"),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", COMMANDS)
def test_config_file_of_the_wrong_kind(command, kind, tmp_path, capsys):
    if kind == "a FIFO" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    make, word = KINDS[kind]
    path = tmp_path / "c.toml"
    make(path)
    refused([command, "--config", str(path), "--quiet"], ["--config", word], capsys)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_config_in_a_subprocess_does_not_wait_for_a_writer(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "spare_jax", "wipeout", "--config", str(fifo)], capture_output=True,
                          text=True, timeout=60)  # the process start (JAX import) is most of it
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and proc.stdout == "" and len(lines) == 1, (proc.returncode, proc.stderr)
    assert "not a regular file" in lines[0]


def cfg(text, argv, words=(), id=None, **kw):  # noqa: A002 - pytest's name
    """A row: the config file's text, the command line (the file's path is added), the refusal's words."""
    return pytest.param(text, list(argv), words, kw, id=id or f"{' '.join(argv[:1])}: {text.strip()}")


WIPEOUT = ["wipeout", "--quiet"]
BASE = ["wipeout", "-N", "20", "-r", "2", "--trials", "200", "--json", "--quiet"]

CONFIGS = [
    # wrong types and values: every one refused naming the setting
    *[cfg(text, WIPEOUT, word) for text, word in [
        ("N = 0", "--groups"), ("N = -5", "--groups"), ("N = nan", "N"), ("N = inf", "N"),
        ("N = 1e300", ["--groups", "1.000e+300"]),
        ("N = '600'", "N"), ("N = true", "N"), ("N = [600]", "N"), ("N = {a = 1}", "N"), ("r = 2.5", "r"),
        ("mtbf = -inf", "mtbf"), ("mtbf = nan", "mtbf"), ("mtbf = 0", "mtbf"), ("trials = 1e300", "trials"),
        ("seed = -1", "seed"), ("placement = 3", "placement"), ("json = 'yes'", "json"),
        ("[wipeout]\nN = 1970-01-01", "N"), ("repair-time = 30\nrepair-law = 'lognormal'\nrepair-sigma = 5",
                                             "--repair-sigma"),
        ("nope = 1", "nope"), ("[nowhere]\nN = 3", "nowhere")]],
    *[cfg(text, ["wipeout"], word, max_s=10) for text, word in [
        ("[wipout]\ngroups = 40\n", "wipout"),
        ("[wipeout]\njson = \"no\"\n", "json"),
        ("[wipeout]\nchunk_size = true\n", "chunk_size"),
        ("[wipeout]\ntrials = \"100\"\n", "trials"),
        ("[wipeout]\ntrials = 1.5\n", "trials"),
        ("[wipeout]\ngroups = [40]\n", "groups"),
        ("[wipeout]\nmtbf = true\n", "mtbf"),
        ("[wipeout]\nmtbf = nan\n", "mtbf"),
        ("[wipeout]\nplacement = 3\n", "placement"),
        ("[wipeout]\nseed = 18446744073709551615\n", "seed"),
        ("[wipeout]\ngrups = 40\n", "grups"),
        ("grups = 40\n[wipeout]\ngroups = 40\n", "grups"),
        ("quiet = 1\n", "quiet"),
        ("[wipeout]\nchunk-size = 64\nchunk_size = 128\n", "chunk"),
    ]],
    cfg("a = " + "{b = " * 3000 + "1" + "}" * 3000, ["wipeout"], "--config", id="wipeout: tables nested 3000 deep"),
    cfg("N = 40\ngroups = 50\n", WIPEOUT, "set the same thing"),
    # the rules of a config file: no preset in it, one way to give domains and job-wide failures
    cfg('preset = "llama3-16k"\n', BASE, "--preset"),
    cfg("[scenario]\ndomain_size = 4\ndomain_mtbf = 100\ndomains = [{size = 2, mtbf = 50}]\n", BASE,
        "give one of them"),
    cfg("[scenario]\njob_mtbf = 5000\njob_fraction = 0.1\n", BASE, "give one of them"),
    cfg("[scenario]\ndomains = [{size = 2}]\n", BASE, "size and mtbf"),
    cfg("[scenario]\njob_mtbf = 5000\n", ["presets", "--quiet"], "[scenario]"),
    cfg("N = 40\n", [], "needs a subcommand", id="no subcommand"),
    # elastic training
    *[cfg(f'scheme = "elastic"\nrepair-time = 30\nr = {r}\n', TTT1, ["-r/--redundancy " + r, "--scheme elastic"])
      for r in ("3", "1")],
    *[cfg('elastic-data = "rebalance"\n', TTT1 + ["-r", "2", "--scheme", scheme],
          ["--elastic-data rebalance", f"--scheme {scheme}"], id=f"ttt --scheme {scheme}: elastic-data")
      for scheme in ("spare", "rep")],
    *[cfg(text, TTT1, words) for text, words in [
        ('scheme = "elastic"\n', ["--scheme elastic needs --repair-time"]),
        ('scheme = "elastic"\nrepair-time = 30\nelastic-data = "grow"\n', ["elastic-data", "'grow'"]),
        ('scheme = "elastic"\nrepair-time = 30\nelastic-data = 1\n', ["elastic-data must be a string"]),
        ('scheme = "elastic"\nrepair-time = 30\nelastic-data = ["shrink"]\n', ["elastic-data must be a string"]),
        ('scheme = ["elastic"]\n', ["scheme must be a string"]),
        ('scheme = "elastic"\nelastc-data = "shrink"\n', ["unknown setting 'elastc-data'"]),
    ]],
    # the spare pool
    *[cfg(text + "\n", TTT, word) for text, word in [
        ("spares = -1\nhardware-repair = 600", "spares"),
        ("spares = 2.5\nhardware-repair = 600", "spares"),
        ("spares = '2'\nhardware-repair = 600", "spares"),
        ("spares = true\nhardware-repair = 600", "spares"),
        ("spares = inf\nhardware-repair = 600", "spares"),
        ("spares = 2\nhardware-repair = 0", "hardware"),
        ("spares = 2\nhardware-repair = -600", "hardware"),
        ("spares = 2\nhardware-repair = inf", "hardware"),
        ("spares = 2\nhardware-repair = nan", "hardware"),
        ("spares = 2\nhardware_repair = 'later'", "hardware"),
        ("hardware-repair = 600", "--hardware-repair goes with --spares"),
        ("spares = 2", "--spares needs --hardware-repair"),
        ("[ttt]\nspares = 2\nrepair-time = 30", "--spares needs --hardware-repair"),
    ]],
    # settings a command does not take: no spares or elastic training on epochs, nor in presets
    *[cfg(f"{key} = {value}\n", [command], [f"unknown setting '{key}'"])
      for command in ("wipeout", "overhead", "place", "presets")
      for key, value in (("spares", "2"), ("hardware-repair", "600"), ("scheme", "'elastic'"),
                         ("elastic-data", "'shrink'"))],
    *[cfg("spares = 2\nhardware-repair = 60\n", [command, "-N", "16", "-r", "2", "--repair-time", "30", "--quiet"],
          "spares") for command in ("wipeout", "overhead")],
]


@pytest.mark.parametrize("text, argv, words, kw", CONFIGS)
def test_config_setting_refused(text, argv, words, kw, tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_text(text + ("" if text.endswith("\n") else "\n"))
    refused([*argv, "--config", str(path)], words, capsys, **kw)


def test_config_or_preset_given_twice_is_refused(tmp_path, capsys):
    """Only the last --config FILE (or --preset NAME) was read: the first one's settings (here --scheme elastic)
    were dropped without a word."""
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text('scheme = "elastic"\nrepair-time = 30\n')
    second.write_text("runs = 3\n")
    refused(TTT1 + ["--config", str(first), "--config=" + str(second)],
            ["--config given twice", str(first), str(second)], capsys)
    refused(TTT1 + ["--preset", "llama3-16k", "--pres", "rsc1-16k"],
            ["--preset given twice", "llama3-16k", "rsc1-16k"], capsys)
    refused(TTT1 + ["--preset", "llama3-16k", "--preset"], ["--preset needs a name"], capsys)


@pytest.mark.parametrize("argv, word", [
    (["--preset", "llama3-16k", "wipeout"], "after the subcommand"),
    (["--preset", "llama3-16k"], "needs a subcommand"),
    (["wipeout", "--config"], "--config needs a file"),
])
def test_preset_or_config_out_of_place(argv, word, capsys):
    refused(argv, word, capsys)
