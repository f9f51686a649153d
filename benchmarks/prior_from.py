"""Priors from an earlier fit: a fresh fit against ``DawidSkene(prior_from=earlier)``.

Each real crowd with gold (``--data``: folders in the shared layout; default every folder of
``../shared/data`` with a ``truth.csv``, cifar10n left out: its worker ids are unreliable) is
split at random into two halves of its tasks (each worker's votes go with their tasks): the
first half is "project A", the second "project B". The model (``--model``: ``ds``,
DawidSkene, ``onecoin``, OneCoinDawidSkene, or ``mace``, MACE) is fitted on A; on B, a fresh
fit is compared with ``Model(prior_from=fit on A)`` (workers matched by column;
``--strengths``: ``auto`` and/or numbers of pseudo-votes per confusion row, or per worker for
the one-coin model and MACE), scored
on B's gold tasks (ties of the posterior get fractional credit). B is used whole and
subsampled to ``--keep`` votes per task (default 2 and 1, drawn at random), where a fresh fit
knows least about each worker. ``--seeds`` splits per crowd (default 3); the table gives the
mean over them and, per strength, the worst difference of a split against the fresh fit.

Usage::

    python benchmarks/prior_from.py
    python benchmarks/prior_from.py --seeds 5 --strengths auto 10 --keep 3 1
    python benchmarks/prior_from.py --model onecoin
    python benchmarks/prior_from.py --data ../shared/data/labelme --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
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


def run_crowd(crowd, seeds, keeps, strengths, model="ds"):
    from skcrowd.aggregation import MACE, DawidSkene, OneCoinDawidSkene

    Model = {"ds": DawidSkene, "onecoin": OneCoinDawidSkene, "mace": MACE}[model]

    K = crowd.n_classes
    gold = np.full(crowd.n_tasks, -1)
    gold[crowd.gold_task] = crowd.gold_label
    results = {}  # (keep, method) -> list of accuracies over seeds
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        in_a, (votes_a, votes_b) = halves(crowd, rng)
        tasks_a, tasks_b = np.flatnonzero(in_a), np.flatnonzero(~in_a)
        earlier = Model(n_classes=K).fit(matrix(crowd, tasks_a, votes_a))
        scored = gold[tasks_b] >= 0
        for keep in keeps:
            kept = votes_b[keep_per_task(crowd.task[votes_b], keep, rng)]
            X = matrix(crowd, tasks_b, kept)
            methods = {"fresh": Model(n_classes=K)}
            methods.update({f"prior {s}": Model(n_classes=K, prior_from=earlier,
                                                prior_strength=s) for s in strengths})
            for name, model in methods.items():
                proba = model.fit(X).predict_proba(X)
                results.setdefault((keep, name), []).append(
                    tie_credit(proba[scored], gold[tasks_b][scored]))
    return results


def parse_strength(text):
    return text if text == "auto" else float(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="*", default=None)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--keep", nargs="*", type=int, default=[2, 1],
                        help="votes kept per task of B, besides all of them")
    parser.add_argument("--strengths", nargs="*", type=parse_strength, default=["auto"])
    parser.add_argument("--model", choices=["ds", "onecoin", "mace"], default="ds")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    folders = args.data or [f for f in default_folders() if not f.endswith("cifar10n")]
    keeps = [None, *args.keep]
    names = ["fresh", *(f"prior {s}" for s in args.strengths)]
    out = {}
    header = "".join(f"  {'all' if k is None else f'{k}/task':>7} " + "".join(
        f"{n.replace('prior ', '+'):>8}" for n in names[1:]) + "  worst" * (len(names) - 1)
        for k in keeps)
    print(f"{'crowd':40s}{header}")
    warnings.simplefilter("ignore")  # ConvergenceWarning on a few sparse halves
    for folder in folders:
        crowd = read_folder(folder)
        start = time.perf_counter()
        res = run_crowd(crowd, args.seeds, keeps, args.strengths, args.model)
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
