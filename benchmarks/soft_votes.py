"""Soft votes of model annotators: aggregating their probabilities against their argmax.

Each real crowd with gold (``--data``: folders in the shared layout; default six crowds
whose tasks all have gold, of 2 to 8 classes) is restricted to its gold tasks, and
``--models`` simulated model annotators (default 3) label every task with a *calibrated*
probability vector: ``q ~ Dirichlet(alpha + e_gold)``, so that ``P(gold = k | q) = q_k``
under uniform classes, with ``alpha`` set (by bisection on 20000 draws) so that the argmax
of ``q`` is right with the target accuracy (``--accuracy``, default 0.6 and 0.75; the models
are independent given the gold label). Each aggregator (``DawidSkene``,
``OneCoinDawidSkene``, ``MACE``, ``MajorityVote``) is fitted on: the humans only; the humans and the
models' votes hardened (each model's argmax as a hard vote: what a user without soft votes
would do); the humans and the models' soft votes. Scores are accuracy on gold, ties of the
posterior counted as a uniform pick. ``--seeds`` draws of the models per crowd (default 3);
the table gives the mean over them and the worst seed's soft - hardened difference.

Usage::

    python benchmarks/soft_votes.py
    python benchmarks/soft_votes.py --seeds 5 --accuracy 0.7 --models 2
    python benchmarks/soft_votes.py --data ../shared/data/labelme --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from realdata import SHARED_DATA, read_folder, tie_credit  # noqa: E402

CROWDS = ["zheng_s4_Dog_data", "zheng_s4_Face_Sentiment_Identification", "act_ZenCrowd_in",
          "zhang2014_web", "labelme", "snow2008_rte"]


def calibrated(gold, K, alpha, rng):
    """One calibrated probability vector per task: ``Dirichlet(alpha + e_gold)``."""
    return _dirichlet_rows(alpha + np.eye(K)[gold], rng)


def _dirichlet_rows(a, rng):
    """A Dirichlet draw per row of the parameters ``a`` (normalized gamma draws)."""
    draws = rng.standard_gamma(a)
    return draws / draws.sum(axis=1, keepdims=True)


def alpha_for(accuracy, K, seed=0, n=20000):
    """The ``alpha`` whose calibrated vectors have argmax accuracy ``accuracy`` (bisection in
    log scale on ``n`` draws with common random numbers)."""
    gold = np.random.RandomState(seed).randint(K, size=n)
    lo, hi = 1e-3, 1e3
    for _ in range(50):
        mid = np.sqrt(lo * hi)
        q = calibrated(gold, K, mid, np.random.RandomState(seed + 1))
        if np.mean(q.argmax(axis=1) == gold) > accuracy:
            lo = mid
        else:
            hi = mid
    return float(np.sqrt(lo * hi))


def crowd_inputs(crowd, n_models, alpha, rng):
    """(gold, humans only, humans + hardened models, humans + soft models), gold tasks only."""
    from skcrowd import soft_votes_from_long

    keep = crowd.gold_label >= 0
    gold_task, gold = crowd.gold_task[keep], crowd.gold_label[keep]
    row = np.full(crowd.n_tasks, -1)
    row[gold_task] = np.arange(len(gold_task))
    voted = row[crowd.task] >= 0
    t, w, lab = row[crowd.task[voted]], crowd.worker[voted], crowd.label[voted]
    K = len(crowd.classes)
    classes = np.arange(K)
    humans = soft_votes_from_long(None, t, w, lab, proba=None, classes=classes)
    n = len(gold)
    q = np.concatenate([calibrated(gold, K, alpha, rng) for _ in range(n_models)])
    model_task = np.tile(np.arange(n), n_models)
    model_worker = crowd.n_workers + np.repeat(np.arange(n_models), n)
    both = soft_votes_from_long(
        None, np.r_[t, np.repeat(model_task, K)], np.r_[w, np.repeat(model_worker, K)],
        np.r_[lab, np.tile(classes, n * n_models)], proba=np.r_[np.ones(len(t)), q.ravel()],
        classes=classes)
    # a task without a human vote keeps its row (every model labels every task)
    return gold, humans, both.harden(), both, np.isin(np.arange(n), humans.tasks)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=None)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--accuracy", type=float, nargs="+", default=[0.6, 0.75])
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    from skcrowd.aggregation import MACE, DawidSkene, MajorityVote, OneCoinDawidSkene

    aggregators = {"DS": DawidSkene, "one-coin": OneCoinDawidSkene, "MACE": MACE,
                   "MV": MajorityVote}
    folders = args.data or [str(SHARED_DATA / name) for name in CROWDS]
    rows, start = [], time.perf_counter()
    for folder in folders:
        crowd = read_folder(folder)
        K = len(crowd.classes)
        for accuracy in args.accuracy:
            alpha = alpha_for(accuracy, K)
            scores = {}  # (aggregator, input) -> one score per seed
            for seed in range(args.seeds):
                rng = np.random.RandomState(seed)
                gold, humans, hard, soft, has_human = crowd_inputs(crowd, args.models, alpha,
                                                                   rng)
                for name, cls in aggregators.items():
                    for kind, votes in (("humans", humans), ("hardened", hard), ("soft", soft)):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            proba = np.asarray(cls().fit(votes).predict_proba(votes))
                        # humans only: the tasks without a human vote get no label (0 credit)
                        target = gold if kind != "humans" else gold[has_human]
                        credit = tie_credit(proba, target) * len(target) / len(gold)
                        scores.setdefault((name, kind), []).append(credit)
            row = {"crowd": crowd.name, "K": K, "tasks": int(len(gold)),
                   "accuracy": accuracy, "alpha": round(alpha, 3)}
            for (name, kind), values in scores.items():
                row[f"{name} {kind}"] = float(np.mean(values))
            for name in aggregators:
                diff = np.subtract(scores[(name, "soft")], scores[(name, "hardened")])
                row[f"{name} worst soft-hard"] = float(diff.min())
            rows.append(row)
            print(f"{crowd.name:40s} K={K} acc={accuracy:.2f} " + " ".join(
                f"{name}: {row[f'{name} humans']:.3f} {row[f'{name} hardened']:.3f} "
                f"{row[f'{name} soft']:.3f}" for name in aggregators), flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s; columns per aggregator: humans only, "
          "with the models hardened, with the models' soft votes")
    for accuracy in args.accuracy:
        sub = [r for r in rows if r["accuracy"] == accuracy]
        print(f"mean at model accuracy {accuracy}: " + " ".join(
            f"{name}: " + " ".join(f"{np.mean([r[f'{name} {kind}'] for r in sub]):.4f}"
                                   for kind in ("humans", "hardened", "soft"))
            for name in aggregators))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
