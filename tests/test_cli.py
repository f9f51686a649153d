"""Tests of the command line ``python -m skcrowd`` (demo, aggregate)."""

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.exceptions import ConvergenceWarning

import skcrowd
from skcrowd._cli import AGGREGATORS, DEMO_METHODS, main

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args, stdin=None):
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-m", "skcrowd", *args], capture_output=True, text=True, cwd=ROOT,
        env=env, input=stdin, timeout=120,
    )


def available(class_name):
    try:
        getattr(skcrowd, class_name)
    except (ImportError, AttributeError):
        return False
    return True


def require(class_name):
    if not available(class_name):
        pytest.skip(f"skcrowd.{class_name} is not implemented yet")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# votes on tasks "t10", "t2", "t1" (in that order of appearance), string ids and labels
VOTES_CSV = """item,annotator,answer
t10,alice,cat
t10,bob,cat
t10,carol,dog
t2,alice,dog
t2,bob,dog
t1,carol,cat
"""


# ---------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------


def test_demo_prints_a_row_per_method():
    result = run_cli("demo")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "1797 tasks, 50 workers" in out
    assert re.search(r"^method\s+accuracy\s+ECE\s+fit time", out, re.M)
    for method in DEMO_METHODS:
        line = next(ln for ln in out.splitlines() if ln.startswith(method.name + "  "))
        try:
            method.factory()
        except ImportError:  # a method whose estimator is not written yet
            assert "not available" in line
            continue
        accuracy, ece, fit_time = map(float, line[len(method.name):].split())
        assert 0.5 < accuracy <= 1 and 0 <= ece <= 1 and fit_time >= 0


# ---------------------------------------------------------------------------
# aggregate
# ---------------------------------------------------------------------------


def test_aggregate_round_trip_with_string_ids(tmp_path):
    require("MajorityVote")
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV)
    out = tmp_path / "labels.csv"
    result = run_cli(
        "aggregate", str(votes), "--method", "mv", "-o", str(out), "--all-proba",
        "--task-col", "item", "--worker-col", "annotator", "--label-col", "answer",
    )
    assert result.returncode == 0, result.stderr
    rows = read_csv(out)
    assert list(rows[0]) == ["task", "label", "proba", "proba_cat", "proba_dog"]
    assert [r["task"] for r in rows] == ["t10", "t2", "t1"]  # order of first appearance
    assert [r["label"] for r in rows] == ["cat", "dog", "cat"]
    for r in rows:
        probas = float(r["proba_cat"]), float(r["proba_dog"])
        assert sum(probas) == pytest.approx(1, abs=1e-5)
        assert float(r["proba"]) == pytest.approx(max(probas), abs=1e-5)
    assert float(rows[1]["proba_dog"]) > float(rows[1]["proba_cat"])


def test_aggregate_integer_labels_from_stdin():
    require("MajorityVote")
    text = "task,worker,label\n1,a,10\n1,b,10\n2,a,2\n"
    result = run_cli("aggregate", "-", "--method", "mv", "--all-proba", stdin=text)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "task,label,proba,proba_2,proba_10"  # numeric label order
    assert lines[1].startswith("1,10,") and lines[2].startswith("2,2,")


@pytest.mark.parametrize("method", sorted(AGGREGATORS))
def test_aggregate_every_method_in_process(tmp_path, capsys, method):
    require(AGGREGATORS[method])
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV.replace("item,annotator,answer", "task,worker,label"))
    assert main(["aggregate", str(votes), "--method", method]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "task,label,proba" and len(lines) == 4


def test_aggregate_estimator_options(tmp_path, capsys):
    require("DawidSkene")
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV.replace("item,annotator,answer", "task,worker,label"))
    args = ["aggregate", str(votes), "--method", "ds", "--max-iter", "1", "--smoothing", "0.5"]
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):  # the options reach the model
        assert main([*args, "--param", "tol=1e-12"]) == 0
    assert capsys.readouterr().out.startswith("task,label,proba\nt10,cat,")
    assert main([*args, "--param", "no_such_option=1"]) == 1
    assert "Invalid parameter 'no_such_option'" in capsys.readouterr().err


def test_aggregate_missing_column_is_a_clean_error(tmp_path):
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV)
    result = run_cli("aggregate", str(votes), "--task-col", "item")
    assert result.returncode == 1
    assert "no column 'worker'" in result.stderr and "--worker-col" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "content, match",
    [
        ("", "is empty"),
        ("task,worker,label\n", "no votes"),
        ("task,worker,label\na,w,1\nb,w\n", "line 3 has 2 fields"),
        ("task,worker,label\na,w,1\nb,w, \n", "line 3: empty label"),
        ("task,worker,label\na,w,1\na,w,2\n", "worker 'w' voted more than once on task 'a'"),
    ],
)
def test_aggregate_bad_csv_names_the_line(tmp_path, capsys, content, match):
    votes = tmp_path / "votes.csv"
    votes.write_text(content)
    assert main(["aggregate", str(votes)]) == 1
    err = capsys.readouterr().err
    assert match in err and err.startswith("python -m skcrowd aggregate: error:")


def test_aggregate_missing_file_and_bad_param(tmp_path, capsys):
    assert main(["aggregate", str(tmp_path / "absent.csv")]) == 1
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["aggregate", "votes.csv", "--param", "max_iter"])
    assert exc.value.code == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err


def test_help_describes_both_commands(capsys):
    result = run_cli("--help")
    assert result.returncode == 0
    assert "demo" in result.stdout and "aggregate" in result.stdout
    with pytest.raises(SystemExit) as exc:
        main(["aggregate", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--method", "--task-col", "--worker-col", "--label-col", "--all-proba"):
        assert option in text
