"""Pairwise comparisons: skcrowd's BradleyTerry, NoisyBradleyTerry and CrowdBT against crowd-kit.

Crowds (issue 38, section 1):

- ``readinglevel_chen2013`` (:func:`skcrowd.datasets.fetch_crowd_dataset`): 12,726 comparisons
  of 490 passages by 624 workers (the passage judged harder preferred), each passage's grade
  level (1-12) as gold;
- simulated crowds with known log-scores (``--seeds``): 200 items with log-scores ``N(0, 1)``,
  4000 comparisons of uniformly drawn pairs by 100 workers (each comparison's worker drawn
  uniformly), in three mixes of workers: ``honest`` (all answer by the Bradley-Terry model),
  ``spammers`` (30 % answer left or right at random) and ``adversaries`` (20 % answer the
  opposite of the model, 20 % at random).

Methods: skcrowd's ``BradleyTerry``, ``NoisyBradleyTerry`` and ``CrowdBT`` (defaults), and
crowd-kit 1.4.2's ``BradleyTerry(n_iter=100)`` and ``NoisyBradleyTerry()`` (defaults: 100
L-BFGS iterations, seed 0) in their own interpreter (``--competitor-python``; left out with a
note when it cannot run). Each library runs in a fresh child process per crowd: ``cold`` is
the first fit of the process (imports excluded), ``warm`` the best of three more.

Scores against the gold (levels or simulated log-scores): Spearman, Kendall's tau-b (both
from :mod:`scipy.stats`) and per-pair accuracy (the share of pairs of items of different gold
that the scores order rightly, a tie of scores counting one half).

Usage::

    python benchmarks/pairwise.py                     # about two minutes
    python benchmarks/pairwise.py --seeds 0 1 2 3 4 --json results.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from _competitors import run_json_child  # benchmarks/, first on the script's path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
MIXES = {"honest": (0.0, 0.0), "spammers": (0.3, 0.0), "adversaries": (0.2, 0.2)}


def simulate(seed, mix, n_items=200, n_workers=100, n_comparisons=4000):
    """Comparisons ``(worker, left, right, label)`` and the true log-scores; ``mix`` gives the
    shares of spammers and adversaries among the workers."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    truth = rng.normal(0.0, 1.0, n_items)
    spam, adversary = MIXES[mix]
    kind = rng.permutation(np.repeat(
        [0, 1, 2], [n_workers - round((spam + adversary) * n_workers),
                    round(spam * n_workers), round(adversary * n_workers)]))
    worker = rng.integers(0, n_workers, n_comparisons)
    left = rng.integers(0, n_items, n_comparisons)
    right = (left + rng.integers(1, n_items, n_comparisons)) % n_items
    left_wins = rng.random(n_comparisons) < 1 / (1 + np.exp(truth[right] - truth[left]))
    coin = rng.random(n_comparisons) < 0.5
    left_wins = np.select([kind[worker] == 1, kind[worker] == 2], [coin, ~left_wins], left_wins)
    frame = pd.DataFrame({"worker": worker, "left": left, "right": right,
                          "label": np.where(left_wins, left, right)})
    return frame, pd.Series(truth)


def metrics(scores, gold):
    """Spearman, Kendall's tau-b and per-pair accuracy of ``scores`` against ``gold``."""
    from scipy.stats import kendalltau, spearmanr

    i, j = np.triu_indices(len(gold), 1)
    differ = gold[i] != gold[j]
    agree = np.sign(scores[i] - scores[j]) * np.sign(gold[i] - gold[j])
    return {"spearman": float(spearmanr(scores, gold)[0]),
            "kendall": float(kendalltau(scores, gold)[0]),
            "pair_accuracy": float(np.mean((agree[differ] + 1) / 2))}


def _timed_fits(make, frame):
    """Scores of the first fit, its time (cold) and the best time of three more (warm)."""
    start = time.perf_counter()
    scores = make().fit(frame).scores_
    cold = time.perf_counter() - start
    warm = []
    for _ in range(3):
        start = time.perf_counter()
        make().fit(frame)
        warm.append(time.perf_counter() - start)
    return scores, cold, min(warm)


def child(library, path):
    """Fit one library's models on the comparisons in ``path``; print their scores as JSON."""
    import pandas as pd

    warnings.simplefilter("ignore")
    frame = pd.read_csv(path)
    if library == "crowd-kit":
        from crowdkit.aggregation import BradleyTerry, NoisyBradleyTerry

        models = {"crowd-kit BradleyTerry": lambda: BradleyTerry(n_iter=100),
                  "crowd-kit NoisyBradleyTerry": NoisyBradleyTerry}
    else:
        from skcrowd.pairwise import BradleyTerry, CrowdBT, NoisyBradleyTerry

        models = {"skcrowd BradleyTerry": BradleyTerry,
                  "skcrowd NoisyBradleyTerry": NoisyBradleyTerry, "skcrowd CrowdBT": CrowdBT}
    out = {}
    for name, make in models.items():
        scores, cold, warm = _timed_fits(make, frame)
        out[name] = {"items": scores.index.tolist(), "scores": scores.tolist(), "cold": cold,
                     "warm": warm}
    print(json.dumps(out))


def run_child(python, library, frame):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "comparisons.csv"
        frame.to_csv(path, index=False)
        root = str(Path(__file__).resolve().parents[1])
        path_env = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
        return run_json_child([python, str(Path(__file__).resolve()), "--child", library,
                               str(path)], timeout=1200, name=library,
                              env={"PYTHONPATH": path_env}, width=120)


def evaluate(frame, gold, python):
    results, notes = {}, []
    for library, interpreter in (("skcrowd", sys.executable), ("crowd-kit", python)):
        for name, fitted in run_child(interpreter, library, frame).items():
            if isinstance(fitted, str):
                notes.append(f"{name}: {fitted}")
                continue
            scores = dict(zip(fitted["items"], fitted["scores"]))
            # an item never compared has no score: the lowest (crowd-kit has none either)
            values = np.array([scores.get(item, -np.inf) for item in gold.index])
            results[name] = {**metrics(values, gold.to_numpy()), "cold": fitted["cold"],
                             "warm": fitted["warm"]}
    return results, notes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    parser.add_argument("--json", default=None)
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return
    from skcrowd.datasets import fetch_crowd_dataset

    home = args.data_home or (SHARED if (SHARED / "sources").is_dir() else None)
    crowd = fetch_crowd_dataset("readinglevel_chen2013", data_home=home,
                                download_if_missing=False)
    results, notes = {}, []
    results["readinglevel"], n = evaluate(crowd.comparisons, crowd.target,
                                          args.competitor_python)
    notes += [f"readinglevel: {x}" for x in n]
    for mix in MIXES:
        for seed in args.seeds:
            frame, truth = simulate(seed, mix)
            results[f"{mix}{seed}"], n = evaluate(frame, truth, args.competitor_python)
            notes += [f"{mix}{seed}: {x}" for x in n]
    methods = list(dict.fromkeys(m for r in results.values() for m in r))
    width = max(len(m) for m in methods)
    print("readinglevel_chen2013 (490 passages, 12,726 comparisons)")
    print(f"{'method':<{width}}  {'Spearman':>8} {'Kendall':>8} {'pair acc':>8} "
          f"{'cold s':>7} {'warm s':>7}")
    for m in methods:
        r = results["readinglevel"].get(m)
        if r:
            print(f"{m:<{width}}  {r['spearman']:>8.4f} {r['kendall']:>8.4f} "
                  f"{r['pair_accuracy']:>8.4f} {r['cold']:>7.3f} {r['warm']:>7.3f}")
    print(f"\nsimulated (200 items, 4000 comparisons, 100 workers), mean over seeds {args.seeds}: "
          "Spearman / Kendall / pair accuracy, warm s")
    print(f"{'method':<{width}}  " + "  ".join(f"{mix:>27}" for mix in MIXES))
    for m in methods:
        cells = []
        for mix in MIXES:
            rs = [results[f"{mix}{s}"][m] for s in args.seeds if m in results[f"{mix}{s}"]]
            cells.append(" ".join(f"{np.mean([r[k] for r in rs]):.4f}" for k in
                                  ("spearman", "kendall", "pair_accuracy", "warm"))
                         if rs else f"{'-':>27}")
        print(f"{m:<{width}}  " + "  ".join(cells))
    for note in notes:
        print("note:", note)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
