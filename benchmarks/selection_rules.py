"""Rules of choice over :class:`skcrowd.aggregation.AggregatorSelector`'s held-out votes.

The selector picks the candidate of best mean held-out vote log-probability. This script
replays the same hold-outs (``random_state=0``, the default candidates, ``n_splits=3``,
``test_size=0.2``), records each candidate's log-probability of every held-out vote and compares
rules that use a paired confidence bound against that pick:

- ``best``: the selector's pick (best mean score);
- ``occam<level>``: an Occam / one-standard-error rule. For each candidate ``c``, the
  difference of its held-out log-probabilities to the best candidate's is summed per task (the
  held-out votes of the three splits pooled), and the per-vote mean difference gets a
  task-clustered standard error (ratio estimator, ``T / (T - 1)`` correction over the ``T``
  tasks with a held-out vote). ``c`` is *surely worse* when the one-sided upper bound
  ``mean + z * se`` is below 0 (``z`` of the level). Among the candidates not surely worse, the
  one with the fewest free parameters on this crowd is picked, ties to the better score;
- ``vs_mv<level>``: the best candidate if it is surely better than majority vote (the lower
  bound of its difference to majority vote above 0), else majority vote.

Free parameters counted on the crowd (``W`` workers with a vote, ``T`` tasks, ``K`` classes;
``K - 1`` for the class prior of every model but majority vote): MajorityVote 1 (one accuracy
shared by every worker, its held-out worker model); OneCoinDawidSkene ``W``; MACE ``W K`` (a
spamming probability and ``K - 1`` spam proportions per worker); GLAD ``W + T`` (abilities and
difficulties); DawidSkene and BayesianDawidSkene ``W K (K - 1)`` (a confusion matrix per
worker); EBCC ``W K M (K - 1) + K (M - 1)`` with its ``M = n_subtypes`` (one confusion matrix
per worker and subtype, and the subtype weights), nominal: the sparse prior on the subtype
weights empties most subtypes, but EBCC ranks last either way (at least DawidSkene's count).

For each crowd it prints the number of tasks, workers and classes, the selector's pick and the
gold accuracy of what it returns, each rule's pick and accuracy, majority vote's
(``MajorityVote(random_state=0)``, ties at random, as ``tests/aggregation/test_real_data.py``
measures it), the best single candidate's, the candidates kept at the first level, the best's
per-vote lead over majority vote (and its standard error) and the candidate closest to the best
(the best's lead over it in standard errors: a rule keeps it only at a ``z`` above that); then
the mean over the crowds of each kind and the worst gap to majority vote. A candidate's accuracy
is that of the seeded candidate the selector would refit (``cv_results_["estimator"]`` fitted on
all the votes).

Crowds: the shared crowds with gold (``../shared/data``; ``--no-cifar`` leaves out cifar10n,
150,000 votes), the two correlated regimes of ``benchmarks/selection_correlated.py`` and the
four regimes of ``tests/aggregation/_regimes.py`` (``--seeds`` seeds each).

Usage::

    OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/selection_rules.py \\
        [--no-cifar] [--seeds 3] [--levels 0.9 0.95] [--cache DIR] [--only NAME ...]

``--cache DIR`` keeps each crowd's held-out log-probabilities and accuracies (``.npz``) and
reuses them on a later run.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.stats import norm
from sklearn.base import clone

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO / "../shared/data"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests"))

from skcrowd import check_votes  # noqa: E402
from skcrowd.aggregation import AggregatorSelector, MajorityVote  # noqa: E402

LEVELS = (0.90, 0.95)


class RecordingSelector(AggregatorSelector):
    """The selector, keeping each hold-out's tasks and per-vote log-probabilities."""

    def fit(self, X, y=None):
        self.recorded_ = []
        return super().fit(X, y)

    def _held_out_log_proba(self, votes, candidates, random_state, fit_time):
        task, log_proba = super()._held_out_log_proba(votes, candidates, random_state, fit_time)
        self.recorded_.append((task, log_proba))
        return task, log_proba


def n_parameters(name, n_workers, n_tasks, K, n_subtypes=10):
    """Free parameters of candidate ``name`` on a crowd (see the module docstring)."""
    prior = K - 1
    return {
        "MajorityVote": 1,
        "OneCoinDawidSkene": n_workers + prior,
        "MACE": n_workers * K + prior,
        "GLAD": n_workers + n_tasks + prior,
        "DawidSkene": n_workers * K * (K - 1) + prior,
        "BayesianDawidSkene": n_workers * K * (K - 1) + prior,
        "EBCC": n_workers * K * n_subtypes * (K - 1) + K * (n_subtypes - 1) + prior,
    }[name]


def paired_difference(task, log_proba, c, ref, n_tasks):
    """Mean per-vote difference of candidate ``c``'s held-out log-probabilities to ``ref``'s,
    and its standard error clustered by task (the splits' held-out votes pooled)."""
    d = np.bincount(task, log_proba[c] - log_proba[ref], minlength=n_tasks)
    n = np.bincount(task, minlength=n_tasks).astype(float)
    d, n = d[n > 0], n[n > 0]
    mean = d.sum() / n.sum()
    T = len(n)
    if T < 2:
        return mean, np.inf
    resid = d - mean * n
    return mean, float(np.sqrt(T / (T - 1) * np.sum(resid ** 2)) / n.sum())


def rules(record, levels=LEVELS):
    """``{rule: picked index}`` and the bounds, from one crowd's record."""
    task, log_proba, scores = record["task"], record["log_proba"], record["scores"]
    names, params, n_tasks = list(record["names"]), record["params"], int(record["n_tasks"])
    best = int(np.argmax(scores))  # the selector's pick (first of ties)
    mv = names.index("MajorityVote")
    picks = {"best": best}
    info = {}
    for level in levels:
        z = norm.ppf(level)
        upper = np.empty(len(names))
        for c in range(len(names)):
            mean, se = paired_difference(task, log_proba, c, best, n_tasks)
            upper[c] = 0.0 if c == best else mean + z * se
        kept = np.flatnonzero(upper >= 0)
        order = np.lexsort((-scores[kept], params[kept]))  # fewest parameters, then best score
        picks[f"occam{level * 100:g}"] = int(kept[order[0]])
        mean, se = paired_difference(task, log_proba, best, mv, n_tasks)
        picks[f"vs_mv{level * 100:g}"] = best if mean - z * se > 0 else mv
        info[level] = (kept, mean, se)
    lead = np.full(len(names), np.inf)  # the best's lead over each candidate, in standard errors
    for c in range(len(names)):
        if c != best:
            mean, se = paired_difference(task, log_proba, c, best, n_tasks)
            lead[c] = -mean / se
    info["closest"] = (int(np.argmin(lead)), float(lead.min()))
    return picks, info


def record_crowd(name, X, gold_task, gold, cache):
    """Fit the recording selector and every seeded candidate; cache and return the record."""
    path = cache / f"{name}.npz" if cache else None
    if path is not None and path.is_file():
        data = np.load(path, allow_pickle=False)
        return {k: data[k] for k in data.files}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selector = RecordingSelector(random_state=0).fit(X)
        candidates = selector.cv_results_["estimator"]
        accuracy = []
        for c, candidate in enumerate(candidates):
            model = selector.best_estimator_ if c == selector.best_index_ \
                else clone(candidate).fit(X)
            accuracy.append(np.mean(np.asarray(model.predict(X))[gold_task] == gold))
        mv = np.mean(np.asarray(MajorityVote(random_state=0).fit_predict(X))[gold_task] == gold)
    votes = check_votes(X)
    names = np.array([type(c).__name__ for c in candidates])
    K, W, T = votes.n_classes, int(np.unique(votes.worker).size), votes.n_tasks
    record = {
        "names": names,
        "params": np.array([n_parameters(n, W, T, K) for n in names]),
        "scores": selector.cv_results_["mean_test_score"],
        "task": np.concatenate([t for t, _ in selector.recorded_]),
        "log_proba": np.concatenate([lp for _, lp in selector.recorded_], axis=1),
        "n_tasks": np.array(T), "n_workers": np.array(W), "K": np.array(K),
        "accuracy": np.array(accuracy), "mv": np.array(mv),
        "seconds": np.array(time.perf_counter() - start),
    }
    if path is not None:
        np.savez(path, **record)
    return record


def shared_crowds(no_cifar):
    from realdata import read_folder

    if not SHARED_DATA.is_dir():
        return
    for folder in sorted(p for p in SHARED_DATA.iterdir() if (p / "truth.csv").is_file()):
        if no_cifar and folder.name == "cifar10n":
            continue
        crowd = read_folder(folder)
        X = sp.coo_array((crowd.label, (crowd.task, crowd.worker)),
                         shape=(crowd.n_tasks, crowd.n_workers)).tocsr()
        yield "real", folder.name, (lambda X=X, c=crowd: (X, c.gold_task, c.gold_label))


def simulated_crowds(seeds):
    from aggregation._regimes import REGIMES
    from selection_correlated import groups, subtypes

    for regime, make in (("groups", groups), ("subtypes", subtypes), *REGIMES.items()):
        kind = "correlated" if regime in ("groups", "subtypes") else "regimes"
        for seed in range(seeds):
            def load(make=make, seed=seed):
                votes, truth = make(seed)
                return votes, np.arange(len(truth)), truth
            yield kind, f"{regime}:{seed}", load


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-cifar", action="store_true", help="leave out cifar10n")
    parser.add_argument("--no-real", action="store_true")
    parser.add_argument("--no-simulated", action="store_true")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per simulated regime")
    parser.add_argument("--cache", type=Path, help="folder of per-crowd records (.npz)")
    parser.add_argument("--only", nargs="*", help="crowd names to run (e.g. groups:0)")
    parser.add_argument("--levels", nargs="*", type=float, default=list(LEVELS),
                        help="one-sided confidence levels of the bounds")
    args = parser.parse_args()
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    crowds = []
    if not args.no_real:
        crowds += list(shared_crowds(args.no_cifar))
    if not args.no_simulated:
        crowds += list(simulated_crowds(args.seeds))
    if args.only:
        crowds = [c for c in crowds if c[1] in args.only]
    rule_names = ["best"] + [f"{r}{lv * 100:g}" for r in ("occam", "vs_mv") for lv in args.levels]
    short = {"MajorityVote": "MV", "DawidSkene": "DS", "GLAD": "GLAD", "OneCoinDawidSkene": "1coin",
             "MACE": "MACE", "BayesianDawidSkene": "BDS", "EBCC": "EBCC"}
    print(f"{'crowd':40s} {'T':>6s} {'W':>5s} {'K':>3s}  {'MV':>5s} "
          + " ".join(f"{r:>13s}" for r in rule_names) + "  best single; kept at the first level; "
          "best - MV per vote (se); "
          "closest candidate: the best's lead over it in standard errors")
    table = {}
    for kind, name, load in crowds:
        record = record_crowd(name, *load(), args.cache)
        picks, info = rules(record, args.levels)
        names, accuracy = [short[n] for n in record["names"]], record["accuracy"]
        kept, mean, se = info[args.levels[0]]
        row = {r: accuracy[p] for r, p in picks.items()}
        row["MV"] = float(record["mv"])
        row.update({n: a for n, a in zip(record["names"], accuracy)})
        table.setdefault(kind, []).append((name, row))
        print(f"{name:40s} {int(record['n_tasks']):6d} {int(record['n_workers']):5d} "
              f"{int(record['K']):3d}  {row['MV']:.3f} "
              + " ".join(f"{names[picks[r]]:>7s} {accuracy[picks[r]]:.3f}" for r in rule_names)
              + f"  {names[int(np.argmax(accuracy))]} {accuracy.max():.3f}; "
              + ",".join(names[k] for k in kept)
              + f"; {mean:+.4f} ({se:.4f}); {names[info['closest'][0]]} "
              f"{info['closest'][1]:.1f} se  [{float(record['seconds']):.0f} s]", flush=True)
    for kind, rows in table.items():
        print(f"\n{kind} ({len(rows)} crowds): mean accuracy, and worst gap to MV (points)")
        models = [n for n in rows[0][1] if n not in rule_names and n != "MV"]
        for column in ["MV"] + rule_names + models:
            values = np.array([row[column] for _, row in rows])
            gaps = 100 * (values - np.array([row["MV"] for _, row in rows]))
            worst = int(np.argmin(gaps))
            print(f"  {column:20s} {values.mean():.4f}   worst {gaps[worst]:+.1f} "
                  f"({rows[worst][0]})")


if __name__ == "__main__":
    main()
