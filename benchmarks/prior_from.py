"""Priors from an earlier fit: a fresh fit against ``DawidSkene(prior_from=earlier)``.

Each real crowd with gold (``--data``: folders in the shared layout; default every folder of
``../shared/data`` with a ``truth.csv``, cifar10n left out: its worker ids are unreliable) is
split at random into two halves of its tasks (each worker's votes go with their tasks): the
first half is "project A", the second "project B". The model (``--model``: ``ds``,
DawidSkene, ``onecoin``, OneCoinDawidSkene, ``mace``, MACE, ``bds``, BayesianDawidSkene, or
``glad``, GLAD) is fitted on A; on B, a fresh fit is compared with ``Model(prior_from=fit on
A)`` (workers matched by column; ``--strengths``: ``auto`` and/or numbers of pseudo-votes per
confusion row, or per worker for the one-coin model and MACE, or the precision of each
ability's prior for GLAD), scored
on B's gold tasks (ties of the posterior get fractional credit). B is used whole and
subsampled to ``--keep`` votes per task (default 2 and 1, drawn at random), where a fresh fit
knows least about each worker. ``--seeds`` splits per crowd (default 3); the table gives the
mean over them and, per strength, the worst difference of a split against the fresh fit.

``--joint`` also fits the model on both halves at once (every vote of A, the kept votes of B)
and scores B's tasks: what sequential Bayes should reach. ``--share-weight W`` sets the
pseudo-tasks per task of the class priors of a prior fit (``W = 0``: class priors by EM alone, the
first version of ``prior_from``). ``--drift TAU`` (GLAD only) fixes the prior fits' ``prior_drift``
(``0``: the earlier abilities' precisions as they are, the first version of GLAD's prior; default
``"auto"``, the drift chosen by maximum likelihood).

``--select`` also fits :class:`~skcrowd.aggregation.AggregatorSelector` between the fresh fit and
the prior fit of the first strength on B (held-out votes of B, no gold): whether held-out votes see
where the prior costs accuracy. With one vote per task no vote can be held out and it keeps the
fresh fit (its first candidate).

``--crowdkit PYTHON`` (DawidSkene only) runs crowd-kit's ``DawidSkene`` on the same splits in
that interpreter: fresh on B, and with ``initial_error_strategy="addition"`` given A's counts
(crowd-kit's fit on A: each worker's error matrix times its expected votes per true class, the
counts crowd-kit's documentation asks for), the counterpart of ``prior_strength="auto"``.

Usage::

    python benchmarks/prior_from.py
    python benchmarks/prior_from.py --seeds 5 --strengths auto 10 --keep 3 1
    python benchmarks/prior_from.py --model onecoin
    python benchmarks/prior_from.py --model glad --strengths auto 10
    python benchmarks/prior_from.py --model glad --strengths auto 10 --drift 0 --joint
    python benchmarks/prior_from.py --joint --share-weight 0
    python benchmarks/prior_from.py --select --keep 2
    python benchmarks/prior_from.py --crowdkit VENV/bin/python
    python benchmarks/prior_from.py --data ../shared/data/labelme --json out.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from realdata import default_folders, read_folder, tie_credit  # noqa: E402


def halves(crowd, rng):
    """Task masks of the two halves, and the (task, worker, label) of each half's votes."""
    in_a = np.zeros(crowd.n_tasks, dtype=bool)
    in_a[rng.permutation(crowd.n_tasks)[:crowd.n_tasks // 2]] = True
    return in_a, [np.flatnonzero(in_a[crowd.task] == side) for side in (True, False)]


def keep_per_task(task, k, rng):
    """Indices of at most ``k`` votes per task, drawn at random (``k=None``: all)."""
    if k is None:
        return np.arange(len(task))
    order = np.lexsort((rng.random(len(task)), task))  # tasks in order, votes shuffled
    sorted_task = task[order]
    start = np.searchsorted(sorted_task, sorted_task, side="left")
    return np.sort(order[np.arange(len(task)) - start < k])


def matrix(crowd, rows, votes):
    """The votes ``votes`` (indices of the crowd's triplets) as a sparse (tasks x workers)
    matrix of the tasks ``rows`` (stored entries are votes, label 0 included)."""
    position = np.full(crowd.n_tasks, -1)
    position[rows] = np.arange(len(rows))
    return sp.csr_matrix((crowd.label[votes], (position[crowd.task[votes]], crowd.worker[votes])),
                         shape=(len(rows), crowd.n_workers))


def run_crowd(crowd, seeds, keeps, strengths, model="ds", crowdkit=None, joint=False,
              drift=None, select=False):
    Model = model_class(model)
    extra = {} if drift is None else {"prior_drift": drift}

    K = crowd.n_classes
    gold = np.full(crowd.n_tasks, -1)
    gold[crowd.gold_task] = crowd.gold_label
    results = {}  # (keep, method) -> list of accuracies over seeds
    splits = {}  # what crowd-kit's child gets: the same splits, as triplets
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        in_a, (votes_a, votes_b) = halves(crowd, rng)
        tasks_a, tasks_b = np.flatnonzero(in_a), np.flatnonzero(~in_a)
        X_a = matrix(crowd, tasks_a, votes_a)
        earlier = Model(n_classes=K).fit(X_a)
        scored = gold[tasks_b] >= 0
        splits[f"{seed}|A"] = votes_a
        splits[f"{seed}|gold"] = tasks_b[scored]
        for keep in keeps:
            kept = votes_b[keep_per_task(crowd.task[votes_b], keep, rng)]
            splits[f"{seed}|{keep}"] = kept
            X = matrix(crowd, tasks_b, kept)
            methods = {"fresh": Model(n_classes=K)}
            methods.update({f"prior {s}": Model(n_classes=K, prior_from=earlier,
                                                prior_strength=s, **extra) for s in strengths})
            if select:  # held-out votes of B choose between the fresh and the first prior fit
                from skcrowd.aggregation import AggregatorSelector

                methods["select"] = AggregatorSelector(
                    [methods["fresh"], methods[f"prior {strengths[0]}"]], random_state=seed,
                    n_classes=K)
            for name, model in methods.items():
                proba = model.fit(X).predict_proba(X)
                results.setdefault((keep, name), []).append(
                    tie_credit(proba[scored], gold[tasks_b][scored]))
            if joint:  # one fit of both halves: A's votes and B's kept ones
                both = sp.vstack([X_a, X]).tocsr()
                proba = Model(n_classes=K).fit(both).predict_proba(both)[len(tasks_a):]
                results.setdefault((keep, "joint"), []).append(
                    tie_credit(proba[scored], gold[tasks_b][scored]))
    if crowdkit:
        for (keep, name), accuracies in run_crowdkit(crowdkit, crowd, gold, splits).items():
            results[(None if keep == "None" else int(keep), name)] = accuracies
    return results


def model_class(name):
    from skcrowd.aggregation import (GLAD, MACE, BayesianDawidSkene, DawidSkene,
                                     OneCoinDawidSkene)

    return {"ds": DawidSkene, "onecoin": OneCoinDawidSkene, "mace": MACE,
            "bds": BayesianDawidSkene, "glad": GLAD}[name]


def run_crowdkit(python, crowd, gold, splits):
    """crowd-kit's accuracies on the splits, ``{(keep, "ck fresh" | "ck +A"): [...]}``."""
    with tempfile.TemporaryDirectory(prefix="skcrowd-prior-from-") as tmp:
        path = Path(tmp) / "splits.npz"
        np.savez(path, task=crowd.task, worker=crowd.worker, label=crowd.label, gold=gold,
                 n_classes=crowd.n_classes, **splits)
        out = subprocess.run([python, str(Path(__file__).resolve()), "--crowdkit-child",
                              str(path)], capture_output=True, text=True, check=True)
    return {tuple(key.split("|")): value
            for key, value in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def crowdkit_child(path):
    """crowd-kit's DawidSkene on the saved splits: fresh on B, and with A's counts added."""
    warnings.simplefilter("ignore")
    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    data = np.load(path)
    task, worker, label, gold = data["task"], data["worker"], data["label"], data["gold"]
    K = int(data["n_classes"])

    def frame(votes):
        return pd.DataFrame({"task": task[votes], "worker": worker[votes],
                             "label": label[votes]})

    def accuracy(model, tasks):
        proba = model.probas_.reindex(index=tasks, columns=range(K)).fillna(0.0).to_numpy()
        return tie_credit(proba, gold[tasks])

    results = {}
    for seed in sorted({key.split("|")[0] for key in data.files if "|" in key}):
        votes_a = frame(data[f"{seed}|A"])
        earlier = DawidSkene(n_iter=100).fit(votes_a)
        # expected votes of each worker on each true class: the posteriors of its tasks
        proba = earlier.probas_.reindex(columns=range(K)).fillna(0.0)
        per_class = proba.loc[votes_a["task"]].groupby(votes_a["worker"].to_numpy()).sum()
        errors = earlier.errors_.reindex(columns=range(K)).fillna(0.0)
        counts = errors * per_class.loc[errors.index.get_level_values("worker")].to_numpy()
        tasks = data[f"{seed}|gold"]
        for key in data.files:
            parts = key.split("|")
            if parts[0] != seed or parts[1] in ("A", "gold"):
                continue
            votes_b = frame(data[key])
            fresh = DawidSkene(n_iter=100).fit(votes_b)
            workers = counts.index.get_level_values("worker").isin(votes_b["worker"].unique())
            prior = DawidSkene(n_iter=100, initial_error_strategy="addition").fit(
                votes_b, initial_error=counts[workers])
            for name, model in (("ck fresh", fresh), ("ck +A", prior)):
                results.setdefault(f"{parts[1]}|{name}", []).append(accuracy(model, tasks))
    print(json.dumps(results))


def parse_strength(text):
    return text if text == "auto" else float(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="*", default=None)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--keep", nargs="*", type=int, default=[2, 1],
                        help="votes kept per task of B, besides all of them")
    parser.add_argument("--strengths", nargs="*", type=parse_strength, default=["auto"])
    parser.add_argument("--model", choices=["ds", "onecoin", "mace", "bds", "glad"],
                        default="ds")
    parser.add_argument("--joint", action="store_true",
                        help="also fit both halves at once and score B's tasks")
    parser.add_argument("--share-weight", type=float, default=None,
                        help="pseudo-tasks per task of the class priors of a prior fit "
                             "(default: the library's; 0: class priors by EM alone)")
    parser.add_argument("--drift", type=float, default=None,
                        help="GLAD only: prior_drift of the prior fits (default 'auto')")
    parser.add_argument("--select", action="store_true",
                        help="also choose between fresh and the first prior fit by held-out votes")
    parser.add_argument("--crowdkit", default=None, metavar="PYTHON",
                        help="crowd-kit's interpreter (DawidSkene only)")
    parser.add_argument("--crowdkit-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.crowdkit_child:
        return crowdkit_child(args.crowdkit_child)
    if args.drift is not None and args.model != "glad":
        parser.error("--drift is GLAD's prior_drift: use it with --model glad")
    folders = args.data or [f for f in default_folders() if not f.endswith("cifar10n")]
    keeps = [None, *args.keep]
    names = (["fresh", *(f"prior {s}" for s in args.strengths)] + ["joint"] * args.joint
             + ["select"] * args.select)
    if args.share_weight is not None:
        from skcrowd.aggregation import _prior_from

        _prior_from.SHARE_WEIGHT = args.share_weight
    if args.crowdkit:
        names += ["ck fresh", "ck +A"]
    out = {}
    header = "".join(f"  {'all' if k is None else f'{k}/task':>7} " + "".join(
        f"{n.replace('prior ', '+'):>8}" for n in names[1:]) + "  worst" * (len(names) - 1)
        for k in keeps)
    print(f"{'crowd':40s}{header}")
    warnings.simplefilter("ignore")  # ConvergenceWarning on a few sparse halves
    for folder in folders:
        crowd = read_folder(folder)
        start = time.perf_counter()
        res = run_crowd(crowd, args.seeds, keeps, args.strengths, args.model,
                        args.crowdkit, args.joint, args.drift, args.select)
        row = ""
        for k in keeps:
            fresh = np.array(res[(k, "fresh")])
            row += f"  {fresh.mean():7.3f} " + "".join(
                f"{np.mean(res[(k, n)]):8.3f}" for n in names[1:]) + "".join(
                f"{np.min(np.array(res[(k, n)]) - fresh):+7.3f}" for n in names[1:])
        print(f"{crowd.name:40s}{row}   ({time.perf_counter() - start:.1f} s)", flush=True)
        out[crowd.name] = {f"{'all' if k is None else k}|{n}": res[(k, n)]
                           for k in keeps for n in names}
    means = {(k, n): np.mean([np.mean(out[c][f"{'all' if k is None else k}|{n}"])
                              for c in out]) for k in keeps for n in names}
    print(f"{'mean':40s}" + "".join(
        f"  {means[(k, 'fresh')]:7.3f} " + "".join(f"{means[(k, n)]:8.3f}" for n in names[1:])
        + "       " * (len(names) - 1) for k in keeps))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
