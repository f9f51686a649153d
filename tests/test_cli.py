"""Tests of the command line ``python -m skcrowd`` (demo, aggregate, report)."""

import csv
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import skcrowd
from skcrowd._cli import (DEMO_METHODS, METHOD_ALIASES, TASK_REPORT_FILE, WORKER_REPORT_FILE,
                          aggregator_names, main)
from skcrowd.datasets import simulate_annotators
from skcrowd.metrics import fleiss_kappa, krippendorff_alpha

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


def test_demo_compares_the_methods_asked_for(capsys):
    assert main(["demo", "--method", "wawa", "--method", "mv"]) == 0
    out = capsys.readouterr().out
    rows = out[out.index("-----"):].splitlines()[1:3]
    assert [row.split()[0] for row in rows] == ["Wawa", "MajorityVote"]
    assert all(0.5 < float(row.split()[1]) <= 1 for row in rows)
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    assert_lists_the_methods(capsys.readouterr().out)


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


@pytest.mark.parametrize("method", sorted(METHOD_ALIASES))
def test_aggregate_every_method_in_process(tmp_path, capsys, method):
    require(METHOD_ALIASES[method])
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV.replace("item,annotator,answer", "task,worker,label"))
    assert main(["aggregate", str(votes), "--method", method]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "task,label,proba" and len(lines) == 4


def test_every_discovered_aggregator_runs_by_its_class_name(tmp_path, capsys):
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV.replace("item,annotator,answer", "task,worker,label"))
    names = aggregator_names()
    assert names == [n for n, _ in skcrowd.utils.discovery.all_estimators("aggregator")]
    assert {"AggregatorSelector", "BayesianDawidSkene", "EBCC", "MACE"} <= set(names)
    for name in names:
        for spelled in (name, name.lower()):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # 3 tasks
                assert main(["aggregate", str(votes), "--method", spelled, "--proba"]) == 0, name
            lines = capsys.readouterr().out.splitlines()
            assert lines[0] == "task,label,proba,proba_cat,proba_dog", name
            assert [line.split(",")[0] for line in lines[1:]] == ["t10", "t2", "t1"], name
            for line in lines[1:]:
                label, p, p_cat, p_dog = line.split(",")[1:]
                assert float(p_cat) + float(p_dog) == pytest.approx(1, abs=1e-5), name
                assert float(p) == max(float(p_cat), float(p_dog)), name
                if p_cat != p_dog:  # else a tie to 6 digits
                    assert label == ("cat" if float(p_cat) > float(p_dog) else "dog"), name


def test_method_auto_is_the_selector_and_names_are_case_insensitive(tmp_path, capsys):
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV.replace("item,annotator,answer", "task,worker,label"))
    outputs = []
    for method in ("auto", "AggregatorSelector", "AGGREGATORSELECTOR", "aggregatorselector"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            assert main(["aggregate", str(votes), "--method", method, "--proba"]) == 0
        outputs.append(capsys.readouterr().out)
    assert len(set(outputs)) == 1  # seeded: random_state=0 unless --param gives one
    long = skcrowd.votes_from_long(None, *zip(*[r.split(",") for r in VOTES_CSV.split()[1:]]))
    assert long.tasks.tolist() == ["t1", "t10", "t2"]  # rows of the votes matrix
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        selector = skcrowd.AggregatorSelector(random_state=0).fit(long.votes)
    cat = selector.predict_proba(long.votes)[[1, 2, 0], 0]  # t10, t2, t1: the file's order
    assert [float(r.split(",")[3]) for r in outputs[0].splitlines()[1:]] == pytest.approx(
        cat, abs=1e-5)
    for alias, name in METHOD_ALIASES.items():
        assert name in aggregator_names() and alias.lower() == alias


def test_unknown_method_lists_the_methods(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["aggregate", "votes.csv", "--method", "dawid"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert ("argument --method: unknown method 'dawid'; choose one of auto (AggregatorSelector), "
            "mv (MajorityVote), ds (DawidSkene)") in err
    for name in aggregator_names():
        assert name in err


@pytest.mark.parametrize("command", ["aggregate", "report"])
def test_bad_param_names_the_valid_parameters(tmp_path, capsys, command):
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV.replace("item,annotator,answer", "task,worker,label"))
    options = ["-o", str(tmp_path)] if command == "report" else []
    assert main([command, str(votes), "--method", "ebcc", "--param", "n_subtype=2",
                 *options]) == 1
    valid = ", ".join(sorted(skcrowd.EBCC().get_params()))
    assert capsys.readouterr().err == (
        f"python -m skcrowd {command}: error: EBCC has no parameter 'n_subtype'; its "
        f"parameters are {valid}.\n")
    # a known parameter with a bad value: the estimator's own message
    assert main([command, str(votes), "--method", "mace", "--param", "method=soft",
                 *options]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"python -m skcrowd {command}: error: MACE: ") and "method" in err
    # values are Python literals where they parse: the parameters reach the estimator
    assert main([command, str(votes), "--method", "EBCC", "--param", "n_subtypes=1",
                 "--param", "init=random", "--param", "random_state=None", *options]) == 0


def test_aggregate_estimator_options(tmp_path, capsys):
    require("DawidSkene")
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV.replace("item,annotator,answer", "task,worker,label"))
    args = ["aggregate", str(votes), "--method", "ds", "--max-iter", "1", "--smoothing", "0.5"]
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):  # the options reach the model
        assert main([*args, "--param", "tol=1e-12"]) == 0
    assert capsys.readouterr().out.startswith("task,label,proba\nt10,cat,")
    assert main([*args, "--param", "no_such_option=1"]) == 1
    assert "DawidSkene has no parameter 'no_such_option'" in capsys.readouterr().err
    assert main(["aggregate", str(votes), "--method", "mv", "--max-iter", "3"]) == 1
    assert "MajorityVote has no parameter 'max_iter'" in capsys.readouterr().err


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
    for option in ("--method", "--task-col", "--worker-col", "--label-col", "--proba",
                   "--all-proba", "--param", "--duplicates"):
        assert option in text
    assert_lists_the_methods(text)


def assert_lists_the_methods(help_text):
    text = " ".join(help_text.split())  # argparse wraps the lines
    assert "auto (AggregatorSelector), mv (MajorityVote), ds (DawidSkene)" in text
    for name in aggregator_names():
        assert name in text


# votes with repeated rows: bob answered t1 twice (lines 3 and 5), carol t2 twice, the same
# answer (lines 4 and 7)
REPEATED_CSV = """task,worker,label
t1,alice,cat
t1,bob,cat
t2,carol,dog
t1,bob,dog
t2,alice,dog
t2,carol,dog
"""


@pytest.mark.parametrize("command", ["aggregate", "report"])
def test_repeated_votes_are_an_error_naming_the_lines_and_the_option(tmp_path, capsys, command):
    votes = tmp_path / "votes.csv"
    votes.write_text(REPEATED_CSV)
    assert main([command, str(votes), "-o", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == (
        f"python -m skcrowd {command}: error: {votes} lines 3, 5: worker 'bob' voted more than "
        "once on task 't1'; keep one vote per (task, worker), or pass --duplicates first or "
        "--duplicates last.\n")
    with pytest.raises(SystemExit) as exc:
        main([command, str(votes), "--duplicates", "keep"])
    assert exc.value.code == 2
    assert "argument --duplicates: invalid choice: 'keep'" in capsys.readouterr().err


def test_aggregate_duplicates_first_or_last(tmp_path, capsys):
    votes = tmp_path / "votes.csv"
    votes.write_text(REPEATED_CSV)
    args = ["aggregate", str(votes), "--method", "mv", "--proba", "--duplicates"]
    assert main([*args, "first"]) == 0  # t1: cat, cat
    assert capsys.readouterr().out == (
        "task,label,proba,proba_cat,proba_dog\nt1,cat,1,1,0\nt2,dog,1,0,1\n")
    assert main([*args, "last"]) == 0  # t1: cat, dog (a tie: the first label)
    assert capsys.readouterr().out == (
        "task,label,proba,proba_cat,proba_dog\nt1,cat,0.5,0.5,0.5\nt2,dog,1,0,1\n")


def test_acceptance_method_auto_with_a_repeated_row_and_duplicates_first(tmp_path):
    """Issue 36: ``python -m skcrowd aggregate votes.csv --method auto`` on a long CSV with a
    repeated row and ``--duplicates first`` runs."""
    y = np.random.RandomState(1).randint(2, size=60)
    crowd = simulate_annotators(y, 6, accuracy=0.8, votes_per_task=3, random_state=1)
    rows, cols = np.nonzero(crowd.votes >= 0)
    lines = [f"q{i},w{j},{crowd.votes[i, j]}\n" for i, j in zip(rows, cols)]
    lines.insert(7, lines[2])  # an exact repeat
    lines.append(lines[0].rsplit(",", 1)[0] + f",{1 - int(lines[0][-2])}\n")  # a conflicting one
    (tmp_path / "votes.csv").write_text("task,worker,label\n" + "".join(lines))
    result = subprocess.run(
        [sys.executable, "-m", "skcrowd", "aggregate", "votes.csv", "--method", "auto",
         "--duplicates", "first"], capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                         os.environ.get("PYTHONPATH", "")])},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == "task,label,proba" and len(out) == 61
    assert [line.split(",")[0] for line in out[1:]] == [f"q{i}" for i in range(60)]
    labels = np.array([int(line.split(",")[1]) for line in out[1:]])
    assert np.mean(labels == y) >= 0.8  # 0.85 (3 votes of accuracy 0.8 per task)


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

GOLD_CSV = """item,answer
t2,dog
t10,dog
t99,cat
"""


@pytest.fixture
def simulated_csv(tmp_path):
    """A simulated crowd as a votes CSV and a gold CSV; its spammers are workers w3 and w7."""
    y = np.random.RandomState(0).randint(3, size=300)
    types = ["regular"] * 10
    types[3] = types[7] = "spammer"
    crowd = simulate_annotators(y, 10, accuracy=0.85, votes_per_task=4, worker_types=types,
                                random_state=0)
    rows, cols = np.nonzero(crowd.votes >= 0)
    votes = tmp_path / "votes.csv"
    votes.write_text("task,worker,label\n" + "".join(
        f"q{i},w{j},{crowd.votes[i, j]}\n" for i, j in zip(rows, cols)))
    gold = tmp_path / "gold.csv"
    gold.write_text("task,label\n" + "".join(f"q{i},{y[i]}\n" for i in range(0, 300, 3)))
    return votes, gold, crowd.votes


def test_report_prints_agreement_and_the_workers_to_review(simulated_csv, tmp_path, capsys):
    votes, gold, matrix = simulated_csv
    out = tmp_path / "reports"
    assert main(["report", str(votes), "--known", str(gold), "-o", str(out), "--top", "3",
                 "--n-resamples", "200"]) == 0
    text = capsys.readouterr().out
    assert "300 tasks, 10 workers, 3 classes, 1200 votes (4 to 4 per task)" in text
    # the command's tasks are sorted by id (q0, q1, q10, ...): the bootstrap draws follow them
    by_id = matrix[np.argsort([f"q{i}" for i in range(len(matrix))])]
    alpha = krippendorff_alpha(by_id, confidence_level=0.95, n_resamples=200, random_state=0)
    kappa = fleiss_kappa(by_id, confidence_level=0.95, n_resamples=200, random_state=0)
    assert f"{alpha.estimate:.3f}  [{alpha.low:.3f}, {alpha.high:.3f}]" in text
    assert f"{kappa.estimate:.3f}  [{kappa.low:.3f}, {kappa.high:.3f}]" in text
    assert "accuracy on the 100 known tasks" in text
    table = text[text.index("Workers to review"):].splitlines()[2:5]
    assert sorted(line.split()[1] for line in table[:2]) == ["w3", "w7"]

    workers = read_csv(out / WORKER_REPORT_FILE)
    assert [w["review_rank"] for w in workers] == [str(r) for r in range(1, 11)]
    assert {w["worker"] for w in workers[:2]} == {"w3", "w7"}
    matrix0 = json.loads(workers[0]["confusion_matrix"])
    assert np.asarray(matrix0).shape == (3, 3)
    assert all(w["known_accuracy"] for w in workers)
    tasks = read_csv(out / TASK_REPORT_FILE)
    assert [t["task"] for t in tasks[:3]] == ["q0", "q1", "q2"]
    assert tasks[0]["known"] != "" and tasks[1]["known"] == "" and tasks[1]["correct"] == ""
    assert tasks[0]["correct"] in ("True", "False")


def test_report_with_string_ids_labels_and_columns(tmp_path, capsys):
    votes, gold = tmp_path / "votes.csv", tmp_path / "gold.csv"
    votes.write_text(VOTES_CSV)
    gold.write_text(GOLD_CSV)
    args = ["report", str(votes), "--known", str(gold), "--method", "mv", "-o", str(tmp_path),
            "--task-col", "item", "--worker-col", "annotator", "--label-col", "answer"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "accuracy on the 2 known tasks 0.500 (1 known tasks without votes left out)" in text
    tasks = read_csv(tmp_path / TASK_REPORT_FILE)
    assert [t["task"] for t in tasks] == ["t10", "t2", "t1"]
    assert [t["label"] for t in tasks] == ["cat", "dog", "cat"]
    assert [t["known"] for t in tasks] == ["dog", "dog", ""]
    assert [t["correct"] for t in tasks] == ["False", "True", ""]
    assert tasks[2]["vote_agreement"] == "" and tasks[0]["vote_agreement"] == "0.333333"
    workers = read_csv(tmp_path / WORKER_REPORT_FILE)
    assert {w["worker"] for w in workers} == {"alice", "bob", "carol"}
    assert "(ordinal)" not in text
    assert main([*args, "--level", "ordinal"]) == 1
    assert "--level ordinal needs integer labels" in capsys.readouterr().err


def test_report_interval_level_uses_the_label_values(simulated_csv, tmp_path, capsys):
    votes, _, matrix = simulated_csv
    text = votes.read_text().replace(",0\n", ",10\n")  # labels 1, 2, 10: distances change
    votes.write_text(text)
    assert main(["report", str(votes), "--level", "interval", "-o", str(tmp_path),
                 "--n-resamples", "10"]) == 0
    valued = np.where(matrix == 0, 10, matrix)
    expected = krippendorff_alpha(valued, level_of_measurement="interval")
    assert re.search(f"Krippendorff's alpha \\(interval\\) +{expected:.3f} ",
                     capsys.readouterr().out)


@pytest.mark.parametrize("gold, match", [
    ("item,answer\nt2,bird\n", "line 2: label 'bird' of task 't2' is not among the labels"),
    ("item,answer\nt2,dog\nt2,cat\n", "line 3: task 't2' has two known labels"),
    ("item,label\nt2,dog\n", "no column 'answer'"),
])
def test_report_bad_gold_names_the_line(tmp_path, capsys, gold, match):
    votes, known = tmp_path / "votes.csv", tmp_path / "gold.csv"
    votes.write_text(VOTES_CSV)
    known.write_text(gold)
    assert main(["report", str(votes), "--known", str(known), "-o", str(tmp_path),
                 "--task-col", "item", "--worker-col", "annotator", "--label-col",
                 "answer"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("python -m skcrowd report: error:") and match in err


def test_report_integer_votes_need_integer_gold(simulated_csv, tmp_path, capsys):
    votes, gold, _ = simulated_csv
    gold.write_text("task,label\nq0,cat\n")
    assert main(["report", str(votes), "--known", str(gold), "-o", str(tmp_path)]) == 1
    assert "label 'cat' is not an integer like the votes' labels" in capsys.readouterr().err


def test_report_undefined_agreement_is_said_not_raised(tmp_path, capsys):
    votes = tmp_path / "votes.csv"
    votes.write_text("task,worker,label\na,w1,x\nb,w2,y\n")  # no task with two votes
    assert main(["report", str(votes), "--method", "mv", "-o", str(tmp_path)]) == 0
    assert "undefined: no task has two votes" in capsys.readouterr().out


def test_report_help_lists_its_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--known", "--method", "--output-dir", "--level", "--n-resamples", "--top",
                   "--param", "--duplicates"):
        assert option in text
    assert_lists_the_methods(text)


def test_report_method_auto_reports_with_the_chosen_model(simulated_csv, tmp_path, capsys):
    votes, gold, _ = simulated_csv
    assert main(["report", str(votes), "--known", str(gold), "--method", "auto", "-o",
                 str(tmp_path), "--n-resamples", "10"]) == 0
    text = capsys.readouterr().out
    chosen = re.search(r"Aggregated with AggregatorSelector \(chose (\w+)\): accuracy", text)
    assert chosen and chosen.group(1) in aggregator_names()
    workers = read_csv(tmp_path / WORKER_REPORT_FILE)
    assert {w["worker"] for w in workers[:2]} == {"w3", "w7"}  # the spammers
    long = skcrowd.votes_from_long(None, *zip(*[r.split(",") for r in
                                                votes.read_text().split()[1:]]))
    selector = skcrowd.AggregatorSelector(random_state=0).fit(long.votes)
    assert type(selector.best_estimator_).__name__ == chosen.group(1)


def test_report_without_known_names_the_model(tmp_path, capsys):
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES_CSV)
    assert main(["report", str(votes), "--method", "wawa", "-o", str(tmp_path),
                 "--task-col", "item", "--worker-col", "annotator", "--label-col",
                 "answer"]) == 0
    assert "\nAggregated with Wawa.\n" in capsys.readouterr().out


def test_python_reports_and_the_shell_name_workers_alike(simulated_csv, tmp_path, capsys):
    """Issue 36: worker_report keyed ``81`` (a column position) where the shell said ``w82``."""
    votes, gold, _ = simulated_csv
    assert main(["report", str(votes), "-o", str(tmp_path), "--n-resamples", "10"]) == 0
    shell = read_csv(tmp_path / WORKER_REPORT_FILE)
    pd = pytest.importorskip("pandas")
    long = skcrowd.votes_from_long(pd.read_csv(votes))
    ds = skcrowd.DawidSkene().fit(long.votes)
    workers = skcrowd.worker_report(ds, long).sort_values("review_rank")
    assert workers.index.tolist() == [w["worker"] for w in shell]
    assert workers.index.tolist()[:2] in (["w3", "w7"], ["w7", "w3"])
    tasks = skcrowd.task_report(ds, long)
    assert sorted(tasks.index) == sorted(t["task"] for t in read_csv(tmp_path / TASK_REPORT_FILE))
