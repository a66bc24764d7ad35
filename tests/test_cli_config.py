"""What a good --config sets: flag names and dests as keys, the top level merged with the command's table (the
table wins, dashes or underscores alike), and flags on the line winning over the file. Bad --config files and
settings: tests/test_cli_refusals_config_files.py."""

from __future__ import annotations

import json

from spare_jax.cli import main


def strict_loads(text):
    def bad(const):
        raise ValueError(f"non-strict JSON constant {const}")

    return json.loads(text, parse_constant=bad)


def _cfg(tmp_path, text, name="c.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_config_takes_flag_names_as_keys(tmp_path, capsys):
    path = _cfg(tmp_path, "N = 40\nr = 3\n[wipeout]\ntrials = 500\n")
    assert main(["wipeout", "--config", path, "--json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["groups"] == 40 and data["redundancy"] == 3 and data["trials"] == 500


def test_config_top_level_and_table_merged_table_wins_dashes_ok(tmp_path, capsys):
    cfg = _cfg(tmp_path, "groups = 30\nredundancy = 3\nquiet = true\n"
               "[wipeout]\nredundancy = 2\ntrials = 300.0\nchunk-size = 64\njson = true\n"
               "[ttt]\nscheme = \"rep\"\n", "run.toml")
    assert main(["wipeout", "--config", cfg]) == 0
    data = strict_loads(capsys.readouterr().out)
    assert (data["groups"], data["redundancy"], data["trials"], data["chunk_size"]) == (30, 2, 300, 64)


def test_config_job_wide_setting_yields_to_the_flag_on_the_line(tmp_path, capsys):
    """A config's job-wide setting yields to the other job-wide flag on the line (flags win)."""
    cfg = _cfg(tmp_path, "[scenario]\njob_mtbf = 5000\n")
    base = ["wipeout", "-N", "20", "-r", "2", "--trials", "200", "--json", "--quiet", "--config", cfg]
    assert main(base + ["--job-fraction", "0.1"]) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["scenario"]["job_fraction"] == 0.1
    assert main(base) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["scenario"]["job_mtbf_min"] == 5000.0
