import json
import subprocess
import sys

import pytest

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


BAD_WIPEOUT = [
    (["-N", "10", "-r", "11"], "redundancy"),
    (["-r", "0"], "redundancy"),
    (["-N", "10", "-r", "3", "--placement", "block"], "divide"),
    (["--trials", "0"], "trials"),
    (["--trials", "-5"], "trials"),
    (["--placement", "ring"], "placement"),
    (["--mtbf", "nan"], "mtbf"),
    (["--mtbf", "-1"], "mtbf"),
    (["-N", "abc"], "groups"),
    (["--seed", "-1"], "seed"),
]


@pytest.mark.parametrize("argv,word", BAD_WIPEOUT)
def test_bad_input_one_line_exit_2(argv, word, capsys):
    code = main(["wipeout", "--trials", "10", "--quiet", *argv] if "--trials" not in argv
                else ["wipeout", "--quiet", *argv])
    err = capsys.readouterr()
    assert code == 2
    assert err.out == ""
    lines = [ln for ln in err.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and word in lines[0].lower(), lines
    assert "Traceback" not in err.err


def test_python_dash_m_entry_point_and_exit_code():
    proc = subprocess.run([sys.executable, "-m", "spare_jax", "wipeout", "-r", "0"], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
