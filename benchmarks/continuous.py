"""Continuous-rating aggregation on the real rating crowds (issue 27, section 1).

Crowds (:func:`skcrowd.datasets.fetch_crowd_dataset`, every task with a gold rating):

- ``snow2008_anger`` ... ``snow2008_valence``: Snow et al. 2008's affect ratings, 100 headlines
  x 10 ratings from 38 workers each, 0-100 (valence -100..100), the experts' rating as gold;
- ``movie_reviews_rodrigues``: 1500 reviews x 4-5 ratings from 135 workers, 0-1, the true
  rating as gold (MAE reported on the release's 0-1 scale; times 10 for the paper's 1-10).

Methods: skcrowd's :class:`~skcrowd.aggregation.MeanRating`, ``MedianRating``, ``CATD`` (Li et
al. 2014, with its default 3 pseudo-ratings per worker; as published, ``prior_ratings=0``; and
with ``leave_one_out=True``), ``BiasPrecisionEM(bias=False)`` (precisions only: PG1 of Piech et
al. 2013 without biases, the Bayesian counterpart of Zheng et al. 2017's LFC-N),
``BiasPrecisionEM()`` (a bias and a precision per worker, the precisions' prior chosen by
evidence) and ``BiasPrecisionEM(scale=True)`` (a slope per worker as well);
``CensoredRatingEM()`` (issue 37: Tobit workers, the ratings at the floor or the ceiling
censored; a bias and a precision per worker, and a slope where held-out ratings ask for it),
``CensoredRatingEM(scale=False)`` and ``CensoredRatingEM(scale=True)``; crowd-kit 1.4.2's
``RASA`` and ``ClosestToAverage`` (its embedding aggregators, given each rating as a 1-D
embedding; crowd-kit has no other numeric aggregator; RASA weighs workers by cosine distances,
which see only the sign of a 1-D embedding),
run in the competitor interpreter (``--competitor-python``, a virtual environment holding
crowd-kit; left out with a note when it cannot be run).

Every method sees the ratings only; the table gives MAE and R^2 against gold, and a last line
counts the crowds where each method's MAE is below the mean's.

``--loco`` also chooses ``CensoredRatingEM``'s settings (``scale`` x ``target`` x
``precision_prior``) leaving one crowd out: the setting with the lowest MAE as a share of the
mean's, averaged over the other 7 crowds, scored on the one left out (a table per fold).

Usage::

    python benchmarks/continuous.py                    # about 1 min
    python benchmarks/continuous.py --loco             # and the leave-one-crowd-out choice
    python benchmarks/continuous.py --json results.json
    python benchmarks/continuous.py --data-home DIR    # DIR/sources/... holds the files
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
CROWDS = ["snow2008_anger", "snow2008_disgust", "snow2008_fear", "snow2008_joy",
          "snow2008_sadness", "snow2008_surprise", "snow2008_valence", "movie_reviews_rodrigues"]


def skcrowd_methods():
    from skcrowd.aggregation import (CATD, BiasPrecisionEM, CensoredRatingEM, MeanRating,
                                     MedianRating)

    return {
        "mean": MeanRating(),
        "median": MedianRating(),
        "CATD": CATD(),
        "CATD published": CATD(prior_ratings=0),
        "CATD loo": CATD(leave_one_out=True),
        "BPEM no bias": BiasPrecisionEM(bias=False),
        "BiasPrecisionEM": BiasPrecisionEM(),
        "BiasPrecisionEM scale": BiasPrecisionEM(scale=True),
        "CensoredRatingEM": CensoredRatingEM(),
        "CensoredRatingEM no scale": CensoredRatingEM(scale=False),
        "CensoredRatingEM scale": CensoredRatingEM(scale=True),
    }


def loco_candidates():
    """The settings of CensoredRatingEM that the leave-one-crowd-out choice picks from."""
    from skcrowd.aggregation import CensoredRatingEM

    label = {True: " scale", False: " no scale", "auto": ""}
    return {f"{target} k={prior:g}{label[scale]}":
            CensoredRatingEM(target=target, precision_prior=prior, scale=scale)
            for scale in ("auto", True, False) for target in ("rating", "truth")
            for prior in (4, 16)}


def leave_one_crowd_out(crowds, data_home):
    """Per fold: the candidate with the lowest mean MAE ratio (to the mean's) on the other
    crowds, and its ratio on the crowd left out."""
    from skcrowd.datasets import fetch_crowd_dataset

    ratio = {}
    for crowd in crowds:
        ds = fetch_crowd_dataset(crowd, data_home=data_home)
        mean = np.mean(np.abs(np.nanmean(ds.votes, axis=1) - ds.target))
        for name, model in loco_candidates().items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pred = model.fit(ds.votes).predict(ds.votes)
            ratio.setdefault(name, {})[crowd] = float(np.mean(np.abs(pred - ds.target)) / mean)
    width = max(map(len, ratio))
    print("\nCensoredRatingEM settings: MAE as a share of the mean's")
    print(f"{'setting':<{width}} " + " ".join(f"{c.split('_')[-1][:8]:>8}" for c in crowds)
          + "   avg")
    for name, row in ratio.items():
        print(f"{name:<{width}} " + " ".join(f"{row[c]:>8.3f}" for c in crowds)
              + f" {np.mean(list(row.values())):.3f}")
    print("\nleave one crowd out: the setting chosen on the other crowds, scored on this one")
    scores = []
    for crowd in crowds:
        chosen = min(ratio, key=lambda name: np.mean([ratio[name][c] for c in crowds
                                                      if c != crowd]))
        scores.append(ratio[chosen][crowd])
        print(f"  {crowd:<24} {chosen:<{width}} {scores[-1]:.3f}")
    print(f"  average over the crowds left out: {np.mean(scores):.3f}")
    return ratio


def crowdkit_child(path):
    """In the competitor interpreter: crowd-kit's embedding aggregators on 1-D ratings."""
    import pandas as pd
    from crowdkit.aggregation import RASA, ClosestToAverage

    warnings.simplefilter("ignore")
    data = dict(np.load(path))
    frame = pd.DataFrame({"task": data["task"], "worker": data["worker"],
                          "output": data["value"],
                          "embedding": [np.array([v]) for v in data["value"]]})
    n_tasks = int(data["n_tasks"])
    out = {}
    for name, model in (("crowd-kit RASA", RASA()),
                        ("crowd-kit ClosestToAverage",
                         ClosestToAverage(distance=lambda a, b: float(np.abs(a - b).sum())))):
        try:
            result = model.fit_predict(frame)
            pred = np.full(n_tasks, np.nan)
            pred[result.index.to_numpy(int)] = [float(np.ravel(e)[0])
                                                for e in result["embedding"]]
            out[name] = pred.tolist()
        except Exception as exc:  # a competitor that fails is reported, not fatal
            out[name] = f"{type(exc).__name__}: {exc}"[:80]
    print(json.dumps(out))


def run_crowdkit(python, votes):
    task, worker = np.nonzero(~np.isnan(votes))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ratings.npz"
        np.savez(path, task=task, worker=worker, value=votes[task, worker],
                 n_tasks=len(votes))
        return run_json_child([python, str(Path(__file__).resolve()), "--crowdkit-child",
                               str(path)], timeout=600)


def r2(pred, gold):
    return 1.0 - np.sum((pred - gold) ** 2) / np.sum((gold - gold.mean()) ** 2)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    parser.add_argument("--json", default=None)
    parser.add_argument("--loco", action="store_true",
                        help="choose CensoredRatingEM's settings leaving one crowd out")
    parser.add_argument("--crowdkit-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.crowdkit_child:
        crowdkit_child(args.crowdkit_child)
        return
    from skcrowd.datasets import fetch_crowd_dataset

    home = args.data_home or (SHARED if (SHARED / "sources").is_dir() else None)
    results, notes = {}, []
    for crowd in CROWDS:
        ds = fetch_crowd_dataset(crowd, data_home=home)
        votes, gold = ds.votes, ds.target
        preds = {}
        for name, model in skcrowd_methods().items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                preds[name] = model.fit(votes).predict(votes)
        for name, pred in run_crowdkit(args.competitor_python, votes).items():
            if isinstance(pred, str):
                notes.append(f"{crowd}: {name}: {pred}")
            else:
                preds[name] = np.asarray(pred)
        results[crowd] = {name: {"mae": float(np.mean(np.abs(p - gold))), "r2": float(r2(p, gold))}
                          for name, p in preds.items()}
    methods = list(dict.fromkeys(m for r in results.values() for m in r))
    width = max(len(m) for m in methods)
    short = {c: c.replace("snow2008_", "").replace("movie_reviews_rodrigues", "movies")
             for c in CROWDS}
    for metric, spec in (("mae", ".4g"), ("r2", ".3f")):
        print(f"\n{metric.upper() if metric == 'mae' else 'R^2'} against gold")
        print(f"{'method':<{width}} " + " ".join(f"{short[c]:>9}" for c in CROWDS))
        for m in methods:
            cells = [results[c].get(m, {}).get(metric) for c in CROWDS]
            shown = [f"{'-':>9}" if v is None else f"{v:>9{spec}}" for v in cells]
            print(f"{m:<{width}} " + " ".join(shown))
    print(f"\ncrowds (of {len(CROWDS)}) where the MAE is below the mean's:")
    for m in methods:
        wins = sum(results[c][m]["mae"] < results[c]["mean"]["mae"] for c in CROWDS
                   if m in results[c])
        print(f"  {m:<{width}} {wins}")
    for note in notes:
        print("note:", note)
    if args.loco:
        leave_one_crowd_out(CROWDS, home)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
