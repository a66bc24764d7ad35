"""What wipeout prints: its JSON keys and its table. Its bad input: tests/test_cli_refusals_wipeout_overhead.py."""

import json

from spare_jax.cli import main

WIPEOUT_KEYS = {"groups", "redundancy", "placement", "trials", "seed", "mc_mean", "mc_stderr", "theory_exact",
                "theory_asymptotic", "z_score"}


def test_wipeout_json_has_spec_keys(capsys):
    assert main(["wipeout", "-N", "60", "-r", "3", "--trials", "2000", "--json", "--quiet"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert WIPEOUT_KEYS <= set(data)
    assert data["groups"] == 60 and data["redundancy"] == 3 and data["trials"] == 2000
    assert abs(data["z_score"]) < 5


def test_random_placement_has_null_exact(capsys):
    assert main(["wipeout", "-N", "40", "-r", "3", "--placement", "random", "--trials", "500", "--json",
                 "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["theory_exact"] is None and data["theory_asymptotic"] > 0


def test_table_output(capsys):
    assert main(["wipeout", "-N", "30", "-r", "2", "--trials", "300", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mc_mean" in out and "theory_exact" in out
