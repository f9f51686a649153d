"""Gold accuracy of every aggregator on real crowds, skcrowd's and crowd-kit's, in one run.

For every crowd given (``--data DIR [DIR ...]``; default: every folder of ``../shared/data``,
found from the repository root, that holds a ``truth.csv``) and every aggregator, each with its
defaults, the script prints the accuracy on the gold labels, the gap to majority vote and the
time of the fit, then the means over the crowds: mean accuracy, mean gap to majority vote and the
worst (lowest) gap to it, per method.

Methods
    Every classification aggregator of ``skcrowd.aggregation.__all__`` (not the rating
    regressors, nor ``OrdinalDawidSkene``, whose classes are ordered grades), discovered at run
    time (models added later appear without editing this script), built with its defaults
    except ``random_state=0`` where the estimator has one (reproducible tables); and, when
    crowd-kit is installed in the interpreter given by ``--competitor-python`` (a virtual
    environment holding crowd-kit; skipped with a note when it is absent), crowd-kit's
    classification aggregator of the same class name (crowd-kit 1.4.2: MajorityVote,
    DawidSkene, OneCoinDawidSkene, GLAD, KOS, MACE, MMSR, Wawa, ZeroBasedSkill), with its
    defaults, in a child process (where crowd-kit's ``check_is_fitted`` calls, which fail under
    scikit-learn >= 1.6, are replaced by a plain attribute check). ``--methods NAME ...``
    keeps only those class names (both libraries; skcrowd's MajorityVote, the reference, always
    runs). ``AggregatorSelector`` is printed with the model it picked. With ``--ebcc-reference
    PATH`` (a copy of wrench's ``wrench/labelmodel/ebcc.py``), the authors' EBCC procedure runs
    too, seed 0, in the competitor's interpreter (see ``benchmarks/ebcc_reference.py``, which
    compares it with skcrowd's EBCC over several seeds). Last, the gold oracle: on each crowd the
    skcrowd model of best gold accuracy (selector left out), a ceiling for choosing without gold.

Data layout (any folder in the shared-data layout runs unchanged)
    ``votes.csv`` with columns ``task,worker,label`` and ``truth.csv`` with ``task,label``
    (columns found by name; ids and labels any integers, not necessarily contiguous; gold for
    part of the tasks only is fine). Tasks, workers and labels are renumbered in sorted order;
    the classes are the labels that occur in the votes. Accuracy is measured on the gold tasks
    that have at least one vote (a gold label that no vote uses counts as an error for every
    method). A repeated (task, worker) pair keeps its first vote (noted under the crowd's name).
    A ``--data`` item that is not a folder is taken as a dataset name of
    :func:`skcrowd.datasets.list_crowd_datasets`, fetched (or read from ``SKCROWD_DATA``) by
    :func:`skcrowd.datasets.fetch_crowd_dataset`.

Majority vote and its ties
    skcrowd's ``MajorityVote`` breaks ties at random; its accuracy here is the expected
    accuracy of that random pick: a tied task gives credit ``1/t`` when the gold label is one of
    the ``t`` tied classes (the ``mv_accuracy_random_ties`` of the shared ``stats.json``). It is
    the reference of the gap column. crowd-kit's MajorityVote is scored the same way (from its
    ``probas_``). Every other method is scored on its predicted labels, ties broken its own way.

Time
    Wall-clock seconds of ``fit_predict`` (skcrowd: in this process, after warm-up fits of
    every method on small and large simulated crowds so that numba's compilation or cache
    loading is not counted; crowd-kit: in its child process, import excluded). A crowd-kit
    method stops at ``--timeout`` seconds per crowd. The machine is shared: compare times
    within one run.

Usage::

    python benchmarks/realdata.py                                  # all shared crowds
    python benchmarks/realdata.py --data ../shared/data/labelme /path/to/crowd
    python benchmarks/realdata.py --methods MajorityVote DawidSkene Wawa --json out.json
    python benchmarks/realdata.py --competitor-python ''           # skcrowd only
    python benchmarks/realdata.py --ebcc-reference /path/to/wrench/labelmodel/ebcc.py
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
REFERENCE = "skcrowd:MajorityVote"


# ---------------------------------------------------------------------------
# crowds
# ---------------------------------------------------------------------------


@dataclass
class Crowd:
    """Votes as renumbered triplets, and the gold labels of voted tasks (same numbering)."""

    name: str
    task: np.ndarray
    worker: np.ndarray
    label: np.ndarray
    n_tasks: int
    n_workers: int
    classes: np.ndarray  # original label of each class index
    gold_task: np.ndarray
    gold_label: np.ndarray  # class index; -1: a gold label no vote uses
    notes: list = field(default_factory=list)

    @property
    def n_classes(self):
        return len(self.classes)


def _read_columns(path, columns):
    """Integer columns of a CSV file with a header, found by name."""
    with open(path) as f:
        header = [c.strip() for c in f.readline().strip().split(",")]
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"{path}: columns {header}, expected {', '.join(columns)}")
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2,
                       usecols=[header.index(c) for c in columns])
    return [table[:, k] for k in range(len(columns))]


def crowd_from_triplets(name, task, worker, label, gold_task, gold_label):
    """Renumber tasks, workers and labels of raw integer triplets; keep voted gold tasks."""
    notes = []
    task_ids, t = np.unique(task, return_inverse=True)
    _, w = np.unique(worker, return_inverse=True)
    classes, lab = np.unique(label, return_inverse=True)
    t, w, lab = t.ravel(), w.ravel(), lab.ravel()
    key = t * (int(w.max()) + 1) + w
    _, first = np.unique(key, return_index=True)
    if len(first) < len(key):
        notes.append(f"{len(key) - len(first)} repeated (task, worker) votes dropped (first kept)")
        first.sort()
        t, w, lab = t[first], w[first], lab[first]
    position = np.searchsorted(task_ids, gold_task)
    voted = (position < len(task_ids)) & (task_ids[np.minimum(position, len(task_ids) - 1)]
                                          == gold_task)
    if not voted.all():
        notes.append(f"{int((~voted).sum())} gold tasks without votes left out")
    gold_class = np.searchsorted(classes, gold_label[voted])
    known = (gold_class < len(classes)) & (classes[np.minimum(gold_class, len(classes) - 1)]
                                           == gold_label[voted])
    if not known.all():
        notes.append(f"{int((~known).sum())} gold labels that no vote uses (errors for all)")
    return Crowd(name=name, task=t, worker=w, label=lab, n_tasks=len(task_ids),
                 n_workers=int(w.max()) + 1, classes=classes, gold_task=position[voted],
                 gold_label=np.where(known, gold_class, -1), notes=notes)


def read_folder(folder):
    """A crowd in the shared-data layout (``votes.csv``, ``truth.csv``)."""
    folder = Path(folder)
    task, worker, label = _read_columns(folder / "votes.csv", ["task", "worker", "label"])
    gold_task, gold_label = _read_columns(folder / "truth.csv", ["task", "label"])
    return crowd_from_triplets(folder.name, task, worker, label, gold_task, gold_label)


def fetch_by_name(name):
    """A crowd by dataset name, through ``skcrowd.datasets.fetch_crowd_dataset``."""
    sys.path.insert(0, str(REPO))
    from skcrowd.datasets import fetch_crowd_dataset

    bunch = fetch_crowd_dataset(name, sparse=True)
    votes = bunch.votes.tocoo()
    gold = np.flatnonzero(bunch.target_mask)
    return crowd_from_triplets(name, votes.row, votes.col, votes.data, gold, bunch.target[gold])


def resolve(item):
    return read_folder(item) if Path(item).is_dir() else fetch_by_name(item)


def default_folders():
    if not SHARED_DATA.is_dir():
        raise SystemExit(f"no --data given and {SHARED_DATA} does not exist")
    return sorted(str(p) for p in SHARED_DATA.iterdir() if (p / "truth.csv").is_file())


# ---------------------------------------------------------------------------
# scoring
# ---------------------------------------------------------------------------


def tie_credit(scores, gold):
    """Mean credit of picking uniformly among each row's largest ``scores``: 1/t if the gold
    class is one of the t tied classes, else 0."""
    top = scores == scores.max(axis=1, keepdims=True)
    known = gold >= 0
    hit = np.zeros(len(gold))
    hit[known] = top[known, gold[known]] / top[known].sum(axis=1)
    return float(hit.mean())


def label_accuracy(labels, gold):
    return float(np.mean(labels == gold))


# ---------------------------------------------------------------------------
# skcrowd
# ---------------------------------------------------------------------------


def skcrowd_estimators(names=None):
    """``{class name: estimator with defaults}`` of ``skcrowd.aggregation.__all__``."""
    sys.path.insert(0, str(REPO))
    import skcrowd.aggregation as aggregation

    from sklearn.base import is_regressor

    out = {}
    for name in aggregation.__all__:
        cls = getattr(aggregation, name)
        if not isinstance(cls, type) or names is not None and name not in names:
            continue  # check_ratings is a function
        params = {"random_state": 0} if "random_state" in inspect.signature(cls).parameters else {}
        estimator = cls(**params)
        if not is_regressor(estimator) and name not in ORDINAL:  # the crowds' labels are classes
            out[name] = estimator
    return out


#: Aggregators of ordered grades: these crowds' labels are unordered classes.
ORDINAL = {"OrdinalDawidSkene"}


def _votes_matrix(crowd):
    import scipy.sparse as sp

    return sp.coo_array((crowd.label, (crowd.task, crowd.worker)),
                        shape=(crowd.n_tasks, crowd.n_workers))


def warm_up(estimators):
    """Fit each estimator on a small and a large (serial and parallel numba kernels), binary
    and 3-class simulated crowd."""
    import scipy.sparse as sp
    from sklearn.base import clone

    rng = np.random.default_rng(0)
    for (n_tasks, n_workers), K in itertools.product([(60, 8), (25_000, 100)], (2, 3)):
        task = np.repeat(np.arange(n_tasks), 5)
        worker = np.concatenate([rng.choice(n_workers, 5, replace=False)
                                 for _ in range(n_tasks)])
        votes = sp.coo_array((rng.integers(K, size=len(task)), (task, worker)),
                             shape=(n_tasks, n_workers))
        for est in estimators.values():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    clone(est).fit_predict(votes)
                except ValueError:  # e.g. a binary-only method on 3 classes
                    pass


def run_skcrowd(name, estimator, crowd):
    from sklearn.base import clone

    X = _votes_matrix(crowd)
    est = clone(estimator)
    if "n_classes" in est.get_params():
        est.set_params(n_classes=crowd.n_classes)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            labels = np.asarray(est.fit_predict(X))
        except ValueError as exc:
            return {"error": str(exc).split("\n")[0][:120]}
    seconds = time.perf_counter() - start
    gold = crowd.gold_label
    if name == "MajorityVote":
        accuracy = tie_credit(np.asarray(est.predict_proba(X))[crowd.gold_task], gold)
    else:
        accuracy = label_accuracy(labels[crowd.gold_task], gold)
    result = {"accuracy": accuracy, "seconds": seconds}
    if hasattr(est, "best_estimator_"):  # the selector: the model it picked
        result["picked"] = type(est.best_estimator_).__name__
    return result


def gold_oracle(results):
    """The skcrowd model of best gold accuracy on a crowd (the selector left out): a ceiling
    that no gold-free choice can pass."""
    runs = {m: r for m, r in results.items() if m.startswith("skcrowd:") and "accuracy" in r
            and "picked" not in r}
    best = max(runs, key=lambda m: runs[m]["accuracy"])
    return {"accuracy": runs[best]["accuracy"], "seconds": None, "picked": best.split(":")[1]}


def run_ebcc_reference(python, path, crowd):
    """The authors' EBCC procedure (wrench's ``ebcc_vb``, see ``ebcc_reference.py``), seed 0,
    in the competitor's interpreter."""
    from ebcc_reference import run_reference

    out = run_reference(argparse.Namespace(competitor_python=python, ebcc_reference=path,
                                           seeds=1), crowd)
    return {"accuracy": out["accuracy"][0], "seconds": out["seconds"][0]}


# ---------------------------------------------------------------------------
# crowd-kit (child process in the competitor's interpreter)
# ---------------------------------------------------------------------------


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def crowdkit_child(args):
    """Run crowd-kit's methods on the saved crowd; print one JSON line of results."""
    warnings.simplefilter("ignore")
    import crowdkit.aggregation as ck
    import pandas as pd

    from _competitors import patch_crowdkit_fitted_check

    patch_crowdkit_fitted_check()
    data = np.load(args.crowd)
    frame = pd.DataFrame({"task": data["task"], "worker": data["worker"], "label": data["label"]})
    gold_task, gold = data["gold_task"], data["gold_label"]
    results = {}
    signal.signal(signal.SIGALRM, _alarm)
    for name in args.methods:
        cls = getattr(ck, name, None)
        if cls is None:
            continue
        signal.alarm(int(args.timeout))
        start = time.perf_counter()
        try:
            model = cls()
            labels = model.fit_predict(frame)
            seconds = time.perf_counter() - start
            if name == "MajorityVote":
                probas = model.probas_.reindex(index=range(int(data["n_tasks"])),
                                               columns=range(int(data["n_classes"])))
                accuracy = tie_credit(probas.fillna(0.0).to_numpy()[gold_task], gold)
            else:
                predicted = labels.reindex(range(int(data["n_tasks"]))).to_numpy()[gold_task]
                accuracy = float(np.mean(predicted == gold))
            results[name] = {"accuracy": accuracy, "seconds": seconds}
        except _Timeout:
            results[name] = {"error": f"timeout after {args.timeout:.0f} s"}
        except Exception as exc:  # a competitor's failure is a result, not a crash
            results[name] = {"error": f"{type(exc).__name__}: {exc}".split("\n")[0][:120]}
        finally:
            signal.alarm(0)
    print(json.dumps(results))


def run_crowdkit(python, crowd, names, timeout):
    with tempfile.TemporaryDirectory(prefix="skcrowd-realdata-") as tmp:
        path = Path(tmp) / "crowd.npz"
        np.savez(path, task=crowd.task, worker=crowd.worker, label=crowd.label,
                 gold_task=crowd.gold_task, gold_label=crowd.gold_label,
                 n_tasks=crowd.n_tasks, n_classes=crowd.n_classes)
        cmd = [python, str(Path(__file__).resolve()), "--crowdkit-child", "--crowd", str(path),
               "--timeout", str(timeout), "--methods", *names]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True,
                                 timeout=timeout * (len(names) + 1) + 60)
        except subprocess.TimeoutExpired:
            return {name: {"error": "child timed out"} for name in names}
    if out.returncode != 0:
        message = (out.stderr.strip().splitlines() or ["failed"])[-1][:120]
        return {name: {"error": message} for name in names}
    return json.loads(out.stdout.strip().splitlines()[-1])


def crowdkit_names(python):
    """Class names of crowd-kit's classification aggregators, or None without crowd-kit."""
    if not python or not Path(python).exists():
        return None
    code = ("import crowdkit.aggregation.classification as c, json; "
            "print(json.dumps(list(c.__all__)))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------


def _fmt(value, spec, width):
    """``value`` right-aligned in ``width`` (``spec`` such as ".4f" or "+.4f"), "-" for None."""
    if value is None:
        return f"{'-':>{width}}"
    sign, precision = ("+", spec[1:]) if spec.startswith("+") else ("", spec)
    return format(value, f">{sign}{width}{precision}")


def print_crowd(crowd, results):
    print(f"\n{crowd.name}: {crowd.n_tasks} tasks, {crowd.n_workers} workers, "
          f"K={crowd.n_classes}, {len(crowd.task)} votes, {len(crowd.gold_task)} gold"
          + "".join(f"; {n}" for n in crowd.notes))
    print(f"  {'method':<32} {'accuracy':>8} {'gap to MV':>9} {'seconds':>8}")
    for method, r in results.items():
        if "error" in r:
            print(f"  {method:<32} {r['error']}")
            continue
        print(f"  {method:<32} {r['accuracy']:>8.4f} {_fmt(r.get('gap'), '+.4f', 9)} "
              f"{_fmt(r['seconds'], '.3f', 8)}" + (f"  ({r['picked']})" if "picked" in r else ""))
    sys.stdout.flush()


def summarize(table, methods):
    """Mean accuracy, mean and worst gap to MV, total seconds, crowds run: per method."""
    summary = {}
    for method in methods:
        runs = [t["results"][method] for t in table
                if method in t["results"] and "accuracy" in t["results"][method]]
        gaps = [r["gap"] for r in runs if r.get("gap") is not None]
        summary[method] = {
            "n_crowds": len(runs),
            "mean_accuracy": float(np.mean([r["accuracy"] for r in runs])) if runs else None,
            "mean_gap": float(np.mean(gaps)) if gaps else None,
            "worst_gap": float(np.min(gaps)) if gaps else None,
            "seconds": (float(np.sum([r["seconds"] for r in runs]))
                        if runs and runs[0]["seconds"] is not None else None),
        }
    return summary


def print_summary(table, summary):
    crowds = [t["name"] for t in table]
    short = [c[:10] for c in crowds]
    short = [s if short.count(s) == 1 else f"{s[:7]}-{k}" for k, s in enumerate(short)]
    renamed = ", ".join(f"{s}={c}" for s, c in zip(short, crowds) if s != c)
    print("\nGold accuracy per crowd" + (f" (columns: {renamed})" if renamed else ""))
    header = (f"{'method':<32} " + " ".join(f"{s:>10}" for s in short)
              + f" {'mean':>7} {'mean gap':>8} {'worst gap':>9} {'crowds':>6} {'seconds':>8}")
    print(header)
    print("-" * len(header))
    for method, s in summary.items():
        cells = []
        for t in table:
            r = t["results"].get(method, {})
            cells.append(_fmt(r.get("accuracy"), ".4f", 10))
        print(f"{method:<32} " + " ".join(cells) + f" {_fmt(s['mean_accuracy'], '.4f', 7)} "
              f"{_fmt(s['mean_gap'], '+.4f', 8)} {_fmt(s['worst_gap'], '+.4f', 9)} "
              f"{s['n_crowds']:>6} {_fmt(s['seconds'], '.2f', 8)}")
        picks = [t["results"].get(method, {}).get("picked") for t in table]
        if any(picks):
            print(f"{'  (model picked)':<32} " + " ".join(f"{p or '-':>10.10}" for p in picks))
    print("\nMeans are over the crowds each method ran on (see 'crowds'); gaps are to "
          f"{REFERENCE} (ties: expected accuracy of a uniform pick).")


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="+", metavar="DIR",
                        help="crowd folders (votes.csv, truth.csv) or dataset names; default: "
                             "every folder of ../shared/data with a truth.csv")
    parser.add_argument("--methods", nargs="+", metavar="NAME",
                        help="class names to run (skcrowd's and crowd-kit's of that name)")
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python",
                        help="interpreter with crowd-kit installed ('' to skip crowd-kit)")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds per crowd-kit method and crowd")
    parser.add_argument("--ebcc-reference", metavar="PATH",
                        help="a copy of wrench's wrench/labelmodel/ebcc.py: run the authors' EBCC "
                             "procedure (seed 0) in the competitor's interpreter too")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    # internal: crowd-kit's methods on one crowd, in the competitor's interpreter
    parser.add_argument("--crowdkit-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crowd", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.crowdkit_child:
        return crowdkit_child(args)

    names = set(args.methods) | {REFERENCE.split(":")[1]} if args.methods else None
    estimators = skcrowd_estimators(names)
    ck_names = crowdkit_names(args.competitor_python)
    if ck_names is None:
        print(f"crowd-kit not found in {args.competitor_python!r}: skcrowd's methods only.")
        ck_names = []
    ck_names = [n for n in ck_names if n in (names or estimators)]
    methods = []  # each skcrowd method followed by crowd-kit's of the same name
    for n in estimators:
        methods += [f"skcrowd:{n}"] + ([f"crowdkit:{n}"] if n in ck_names else [])
    methods += [f"crowdkit:{n}" for n in ck_names if n not in estimators]
    if not methods:
        raise SystemExit(f"no method to run among {sorted(names)}")
    methods += ["reference:EBCC"] * bool(args.ebcc_reference) + ["oracle:best skcrowd model"]
    print(f"Methods: {', '.join(methods)}. Load average at start: {os.getloadavg()[0]:.1f} "
          "(shared machine: compare times within this run).")
    warm_up(estimators)

    table = []
    for item in args.data or default_folders():
        crowd = resolve(item)
        runs = {f"skcrowd:{n}": run_skcrowd(n, est, crowd) for n, est in estimators.items()}
        if ck_names:
            ck = run_crowdkit(args.competitor_python, crowd, ck_names, args.timeout)
            runs.update({f"crowdkit:{n}": ck.get(n, {"error": "not run"}) for n in ck_names})
        if args.ebcc_reference:
            runs["reference:EBCC"] = run_ebcc_reference(args.competitor_python,
                                                        args.ebcc_reference, crowd)
        runs["oracle:best skcrowd model"] = gold_oracle(runs)
        results = {method: runs[method] for method in methods}
        reference = results.get(REFERENCE, {}).get("accuracy")
        for r in results.values():
            if "accuracy" in r and reference is not None:
                r["gap"] = r["accuracy"] - reference
        print_crowd(crowd, results)
        table.append({"name": crowd.name, "n_tasks": crowd.n_tasks,
                      "n_workers": crowd.n_workers, "n_classes": crowd.n_classes,
                      "n_votes": len(crowd.task), "n_gold": len(crowd.gold_task),
                      "notes": crowd.notes, "results": results})
    summary = summarize(table, methods)
    print_summary(table, summary)
    if args.json:
        Path(args.json).write_text(json.dumps({"crowds": table, "summary": summary}, indent=1))
    return table, summary


if __name__ == "__main__":
    main()
