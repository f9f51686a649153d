"""Ordinal grades: OrdinalDawidSkene against nominal Dawid-Skene and the median (issue 27, sec. 2).

Crowds:

- ``metaphor_novelty_parde`` (:func:`skcrowd.datasets.fetch_crowd_dataset`): novelty grades 0-3
  of 1938 word pairs from 231 workers (5-9 per item), an expert's grade of every item as gold;
- simulated ordinal crowds with known truth (``--seeds``): 600 tasks of 5 grades (the low grades
  commoner: 30, 25, 20, 15, 10 %), 60 workers, 5 votes per task; worker ``j`` scores a task of
  grade ``k`` as ``k + b_j + e``, ``b_j ~ N(0, 0.5)``, ``e ~ N(0, sigma_j)`` with ``log sigma_j ~
  N(log 0.7, 0.5)``, and gives the nearest grade (clipped to 0-4).

Methods: majority vote, the median grade (between two middle grades: the upper, or the lower
one), skcrowd's
``DawidSkene`` (grades as nominal classes), crowd-kit 1.4.2's ``DawidSkene`` and
``MajorityVote`` in their own interpreter (``--competitor-python``; left out with a note when it
cannot run), and ``OrdinalDawidSkene``: default (latent-score prior of 20 votes per row), with
``decision="median"``, and the latent-score model alone (``prior_strength=inf``). Scores:
accuracy and mean absolute error in grades against the truth (expert or simulated).

Usage::

    python benchmarks/ordinal.py                 # about a minute
    python benchmarks/ordinal.py --seeds 0 1 2 3 4 --json results.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from _competitors import run_json_child  # benchmarks/, first on the script's path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def simulate(seed, n_tasks=600, n_workers=60, K=5, per_task=5):
    rng = np.random.default_rng(seed)
    weights = np.linspace(3.0, 1.0, K)
    truth = rng.choice(K, size=n_tasks, p=weights / weights.sum())
    bias = rng.normal(0, 0.5, n_workers)
    noise = np.exp(rng.normal(np.log(0.7), 0.5, n_workers))
    votes = np.full((n_tasks, n_workers), -1)
    for i in range(n_tasks):
        who = rng.choice(n_workers, per_task, replace=False)
        score = truth[i] + bias[who] + rng.normal(size=per_task) * noise[who]
        votes[i, who] = np.clip(np.rint(score), 0, K - 1)
    return votes, truth


def skcrowd_methods():
    from skcrowd.aggregation import DawidSkene, MajorityVote, OrdinalDawidSkene

    return {
        "MajorityVote": MajorityVote(random_state=0),
        "DawidSkene (nominal)": DawidSkene(),
        "OrdinalDawidSkene": OrdinalDawidSkene(),
        "OrdinalDawidSkene median": OrdinalDawidSkene(decision="median"),
        "OrdinalDawidSkene latent only": OrdinalDawidSkene(prior_strength=np.inf),
    }


def median_grade(votes, offset=0.5):
    """The median grade; a median between two grades goes up (offset 0.5) or down (0)."""
    ratings = np.where(votes >= 0, votes, np.nan).astype(float)
    return np.floor(np.nanmedian(ratings, axis=1) + offset).astype(int)


def crowdkit_child(path):
    import pandas as pd
    from crowdkit.aggregation import DawidSkene, MajorityVote

    warnings.simplefilter("ignore")
    data = dict(np.load(path))
    frame = pd.DataFrame({"task": data["task"], "worker": data["worker"],
                          "label": data["label"]})
    out = {}
    for name, model in (("crowd-kit DawidSkene", DawidSkene(n_iter=100)),
                        ("crowd-kit MajorityVote", MajorityVote())):
        labels = model.fit_predict(frame)
        pred = np.full(int(data["n_tasks"]), -1)
        pred[labels.index.to_numpy(int)] = labels.to_numpy(int)
        out[name] = pred.tolist()
    print(json.dumps(out))


def run_crowdkit(python, votes):
    task, worker = np.nonzero(votes >= 0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "votes.npz"
        np.savez(path, task=task, worker=worker, label=votes[task, worker], n_tasks=len(votes))
        return run_json_child([python, str(Path(__file__).resolve()), "--crowdkit-child",
                               str(path)], timeout=600)


def evaluate(votes, truth, python):
    preds = {"median (up)": median_grade(votes), "median (down)": median_grade(votes, 0.0)}
    for name, model in skcrowd_methods().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            preds[name] = np.asarray(model.fit(votes).predict(votes))
    notes = []
    for name, pred in run_crowdkit(python, votes).items():
        if isinstance(pred, str):
            notes.append(f"{name}: {pred}")
        else:
            preds[name] = np.asarray(pred)
    scores = {name: {"accuracy": float(np.mean(p == truth)),
                     "mae": float(np.mean(np.abs(p - truth)))} for name, p in preds.items()}
    return scores, notes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    parser.add_argument("--json", default=None)
    parser.add_argument("--crowdkit-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.crowdkit_child:
        crowdkit_child(args.crowdkit_child)
        return
    from skcrowd.datasets import fetch_crowd_dataset

    home = args.data_home or (SHARED if (SHARED / "sources").is_dir() else None)
    crowd = fetch_crowd_dataset("metaphor_novelty_parde", data_home=home)
    results, notes = {}, []
    results["metaphor"], n = evaluate(crowd.votes, crowd.target, args.competitor_python)
    notes += [f"metaphor: {x}" for x in n]
    for seed in args.seeds:
        votes, truth = simulate(seed)
        results[f"sim{seed}"], n = evaluate(votes, truth, args.competitor_python)
        notes += [f"sim{seed}: {x}" for x in n]
    sims = [k for k in results if k.startswith("sim")]
    methods = list(dict.fromkeys(m for r in results.values() for m in r))
    width = max(len(m) for m in methods)
    print(f"{'method':<{width}}  {'metaphor acc':>12} {'metaphor MAE':>12}  "
          f"{'sim acc':>15} {'sim MAE':>15}")
    for m in methods:
        meta = results["metaphor"].get(m)
        acc = [results[s][m]["accuracy"] for s in sims if m in results[s]]
        mae = [results[s][m]["mae"] for s in sims if m in results[s]]
        cells = (f"{meta['accuracy']:>12.4f} {meta['mae']:>12.4f}" if meta else f"{'-':>25}")
        sim = (f"{np.mean(acc):>7.4f} +- {np.std(acc):.3f} {np.mean(mae):>7.4f} +- "
               f"{np.std(mae):.3f}" if acc else "-")
        print(f"{m:<{width}}  {cells}  {sim}")
    print(f"(simulated: mean +- sd over seeds {args.seeds})")
    for note in notes:
        print("note:", note)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
