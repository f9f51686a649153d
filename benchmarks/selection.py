"""How often :class:`skcrowd.aggregation.AggregatorSelector` picks the gold-best aggregator.

The selector chooses among aggregators without gold labels: it holds out a share of each task's
votes, fits each candidate on the rest and scores the held-out votes through the candidate's own
worker model. This script compares its choice (default candidates, ``random_state=0``) with the
candidate of best gold accuracy:

- on the simulated regimes of ``tests/aggregation/_regimes.py`` (binary few-vote crowds, entity
  linking with biased few-vote workers, K=5 skewed and sparse, prolific spammers), five seeds
  each, whose truth is known;
- on every crowd folder given (``--data DIR [DIR ...]``, the shared-data layout: ``votes.csv``
  with ``task,worker,label`` and ``truth.csv`` with ``task,label``; default: every folder of
  ``../shared/data`` with a ``truth.csv``).

Per crowd it prints the candidate picked, its accuracy, the gold-best candidate and the regret
(accuracy lost to it; a tie in accuracy counts as the gold-best), the held-out scores and the
accuracies; then, per kind of crowd, how often the gold-best was picked and the mean and worst
regret. Accuracy is that of each candidate's ``fit_predict`` on the tasks with gold.

Usage::

    python benchmarks/selection.py                       # simulated regimes and shared crowds
    python benchmarks/selection.py --no-simulated --data /path/to/crowd ...
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import clone

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO / "../shared/data"
sys.path.insert(0, str(REPO))

from skcrowd.aggregation import AggregatorSelector  # noqa: E402


def load(folder):
    """Votes (CSR, tasks x workers) and the gold tasks and labels of a shared-layout folder."""
    votes = pd.read_csv(folder / "votes.csv")
    truth = pd.read_csv(folder / "truth.csv")
    shape = (int(votes.task.max()) + 1, int(votes.worker.max()) + 1)
    X = sp.coo_array((votes.label.to_numpy(), (votes.task.to_numpy(), votes.worker.to_numpy())),
                     shape=shape).tocsr()
    return X, truth.task.to_numpy(), truth.label.to_numpy()


def tie_credit(proba, gold):
    """Mean credit of picking uniformly among each row's most probable classes: 1/t if the
    gold class is one of the t tied classes (majority vote's ties are not a coin flip)."""
    top = proba == proba.max(axis=1, keepdims=True)
    return float(np.mean(top[np.arange(len(gold)), gold] / top.sum(axis=1)))


def evaluate(name, X, tasks, gold):
    """Print the selector's pick against the gold-best candidate, and its cost next to the
    candidates' single fits; return (picked best, regret, row of the table)."""
    started = time.perf_counter()
    selector = AggregatorSelector(random_state=0).fit(X)
    selector_time = time.perf_counter() - started
    candidates = selector.cv_results_["estimator"]
    accuracy, fit_time = [], []
    for candidate in candidates:
        start = time.perf_counter()
        proba = np.asarray(clone(candidate).fit(X).predict_proba(X))
        fit_time.append(time.perf_counter() - start)
        accuracy.append(tie_credit(proba[tasks], gold))
    accuracy, fit_time = np.array(accuracy), np.array(fit_time)
    names = [type(c).__name__ for c in candidates]
    picked, best = accuracy[selector.best_index_], accuracy.max()
    print(f"{name:40s} picked {names[selector.best_index_]:18s} {picked:.4f}  gold-best "
          f"{names[int(accuracy.argmax())]:18s} {best:.4f}  regret {best - picked:.4f}  scores "
          f"{np.round(selector.cv_results_['mean_test_score'], 4).tolist()}  accuracies "
          f"{np.round(accuracy, 4).tolist()}  selector {selector_time:.1f} s = "
          f"{selector_time / fit_time.sum():.2f} x the candidates' single fits "
          f"({fit_time.sum():.1f} s), {selector_time / fit_time[names.index('DawidSkene')]:.0f}"
          " x DawidSkene's", flush=True)
    row = {"crowd": name, "picked": names[selector.best_index_], "selector": picked,
           "selector_time": selector_time, **dict(zip(names, accuracy)),
           **{f"{n}_time": t for n, t in zip(names, fit_time)}}
    return picked == best, best - picked, row


def summary(kind, results):
    if results:
        regrets = [r for _, r, _ in results]
        print(f"{kind}: gold-best picked on {sum(p for p, _, _ in results)} of {len(results)}, "
              f"mean regret {np.mean(regrets):.4f}, worst {max(regrets):.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="*", type=Path, help="crowd folders (shared layout)")
    parser.add_argument("--no-simulated", action="store_true")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per simulated regime")
    parser.add_argument("--json", type=Path, help="write the per-crowd rows as JSON")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    simulated, real = [], []
    if not args.no_simulated:
        sys.path.insert(0, str(REPO / "tests"))
        from aggregation._regimes import REGIMES

        for regime, make in REGIMES.items():
            for seed in range(args.seeds):
                X, truth = make(seed)
                simulated.append(evaluate(f"{regime}:{seed}", X, np.arange(len(truth)), truth))
    folders = args.data
    if folders is None:
        folders = sorted(p for p in SHARED_DATA.iterdir() if (p / "truth.csv").is_file()) \
            if SHARED_DATA.is_dir() else []
    for folder in folders:
        real.append(evaluate(folder.name, *load(folder)))
    summary("simulated", simulated)
    summary("real", real)
    if args.json:
        import json

        args.json.write_text(json.dumps([r for _, _, r in simulated + real], indent=1))


if __name__ == "__main__":
    main()
