"""Simulated labelling loop: which task should get the next vote?

Start from one vote on a share of the tasks (``--start-fraction``, default half; the other
tasks have none), then for ``--rounds`` rounds (default 10) every strategy picks ``--batch``
tasks (default a tenth of the tasks) and each picked task gets one vote from a simulated
worker, drawn in proportion to the workers' activity among those who have not voted on it
yet, the vote drawn from that worker's confusion matrix. Strategies:

- ``skcrowd``: :meth:`skcrowd.ConsensusClassifier.next_votes` (expected gain in the
  probability that the consensus is right from one more vote);
- ``ActiveLab``: cleanlab 2.9.0 ``get_active_learning_scores`` (lowest first) given the same
  out-of-fold probabilities as skcrowd (those of the fitted ConsensusClassifier), run in the
  competitor environment (``--competitor-python``);
- ``MV uncertainty``: one minus the largest vote share (tasks without votes: one minus
  ``1 / n_classes``), ties at random;
- ``random``: tasks drawn uniformly.

After every round the consensus of each strategy's votes is computed the same way
(:class:`skcrowd.ConsensusClassifier` with its defaults, same folds), and its accuracy against
gold over all tasks is reported, so the curves differ only by which tasks got the votes. The
summary gives, for each strategy, the share of the budget after which its mean accuracy
reaches random's accuracy at the full budget (interpolated between rounds), and the largest
shortfall of skcrowd below ActiveLab over the rounds with the standard error of the paired
difference over seeds.

Crowds: each ``--data`` folder (features or raw text, see benchmarks/_multiannotator.py), whose
workers are simulated from their real confusion matrices, estimated from all their votes
against the gold labels (counts plus ``1/K`` pseudo-vote per cell) with their real numbers of
votes as activity; and, unless ``--no-simulated``, simulated crowds (known confusions, uniform
activity): ``sim K=4`` (30 workers, accuracies in [0.35, 0.9]; the one the score was chosen
on) and ``sim K=2`` (binary, 40 workers, accuracies in [0.5, 0.85], a fifth spammers; kept
for checking).

Usage::

    python benchmarks/active.py                               # LabelMe and simulated, 3 seeds
    python benchmarks/active.py --data DIR --no-simulated --seeds 0 1 2 3 4
    python benchmarks/active.py --plot active.png             # curves (needs matplotlib)

Run on a shared 2-core machine with ``OMP_NUM_THREADS=1``; LabelMe takes about 3 minutes
per seed.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _multiannotator import Cleanlab, load_task_features, make_classifier  # noqa: E402

STRATEGIES = ("skcrowd", "ActiveLab", "MV uncertainty", "random")


class Crowd:
    """Simulated workers: confusion matrices and activity (probability of being asked)."""

    def __init__(self, confusions, activity, truth, rng):
        self.confusions = confusions
        self.activity = activity / activity.sum()
        self.truth = truth
        self.rng = rng

    def can_vote(self, votes):
        return (votes < 0).any(axis=1)

    def vote(self, votes, task):
        free = self.activity * (votes[task] < 0)
        worker = self.rng.choice(len(free), p=free / free.sum())
        votes[task, worker] = self.rng.choice(self.confusions.shape[1],
                                              p=self.confusions[worker, self.truth[task]])


def real_crowd(folder):
    X, votes, gold, kind = load_task_features(folder)
    K = int(max(votes.max(), gold.max())) + 1
    rows, cols = np.nonzero(votes >= 0)
    counts = np.zeros((votes.shape[1], K, K))
    np.add.at(counts, (cols, gold[rows], votes[rows, cols]), 1.0)
    counts += 1.0 / K
    confusions = counts / counts.sum(axis=2, keepdims=True)
    activity = (votes >= 0).sum(axis=0).astype(float)
    classifier, _ = make_classifier(kind, X, votes)
    return X, gold, confusions, activity, classifier


def simulated_crowd(name, seed):
    from skcrowd.datasets import make_crowd_classification

    if name == "sim K=4":
        c = make_crowd_classification(1000, n_features=20, n_classes=4, n_workers=30,
                                      accuracy=(0.35, 0.9), votes_per_task=1, random_state=seed)
    else:
        c = make_crowd_classification(1000, n_features=5, n_classes=2, class_sep=0.4,
                                      n_workers=40, accuracy=(0.5, 0.85), spammers=0.2,
                                      votes_per_task=1, random_state=seed)
    return c.data, c.target, c.confusions, np.ones(len(c.confusions)), None


def mv_uncertainty(votes, K, rng):
    counts = np.stack([(votes == k).sum(axis=1) for k in range(K)], axis=1)
    n = counts.sum(axis=1)
    share = np.divide(counts.max(axis=1), n, out=np.full(len(n), 1.0 / K), where=n > 0)
    return 1.0 - share + 1e-9 * rng.uniform(size=len(n))  # ties at random


def run_loop(X, gold, confusions, activity, classifier, strategy, seed, args, cleanlab):
    """Consensus accuracy after each round (index 0: before any new vote)."""
    from skcrowd import ConsensusClassifier

    n, K = len(gold), confusions.shape[1]
    start_rng = np.random.RandomState(seed)  # the same start for every strategy
    votes = np.full((n, len(activity)), -1)
    start = Crowd(confusions, activity, gold, start_rng)
    for task in start_rng.choice(n, int(round(args.start_fraction * n)), replace=False):
        start.vote(votes, task)
    crowd = Crowd(confusions, activity, gold, np.random.RandomState(seed + 1))
    choice_rng = np.random.RandomState(seed + 2)
    batch = args.batch or n // 10
    model = ConsensusClassifier(classifier, n_classes=K, random_state=seed + 3)
    accuracy = []
    for round_ in range(args.rounds + 1):
        fitted = model.fit(X, votes)
        accuracy.append(float(np.mean(fitted.consensus_labels_ == gold)))
        if round_ == args.rounds:
            break
        open_tasks = crowd.can_vote(votes)
        if strategy == "skcrowd":
            order, _ = fitted.next_votes(n)
        elif strategy == "ActiveLab":
            order = np.argsort(cleanlab.activelab(votes, fitted.oof_proba_), kind="stable")
        elif strategy == "MV uncertainty":
            order = np.argsort(-mv_uncertainty(votes, K, choice_rng), kind="stable")
        else:
            order = choice_rng.permutation(n)
        for task in order[open_tasks[order]][:batch]:
            crowd.vote(votes, task)
    return accuracy


def budget_share(curve, target):
    """Share of the budget after which ``curve`` first reaches ``target`` (interpolated)."""
    rounds = len(curve) - 1
    for r in range(1, len(curve)):
        if curve[r] >= target:
            low = curve[r - 1]
            frac = 1.0 if curve[r] == low else np.clip((target - low) / (curve[r] - low), 0, 1)
            return (r - 1 + frac) / rounds if low < target else (r - 1) / rounds
    return np.nan


def report(name, curves, batch, start_votes):
    mean = {s: np.mean(c, axis=0) for s, c in curves.items()}
    rounds = len(next(iter(mean.values()))) - 1
    print(f"\n{name}: consensus accuracy against gold (mean over {len(curves['random'])} "
          f"seeds) per votes spent ({start_votes} votes at the start, {batch} per round)")
    print("votes spent     " + " ".join(f"{r * batch:>6d}" for r in range(rounds + 1)))
    for s, m in mean.items():
        print(f"{s:<15s} " + " ".join(f"{a:6.3f}" for a in m))
    target = mean["random"][-1]
    shares = {s: budget_share(m, target) for s, m in mean.items()}
    print(f"budget share to reach random's final accuracy {target:.3f}: " + ", ".join(
        f"{s} {'never' if np.isnan(v) else f'{v:.2f}'}" for s, v in shares.items()))
    if "ActiveLab" in curves and "skcrowd" in curves:
        diff = np.asarray(curves["skcrowd"]) - np.asarray(curves["ActiveLab"])
        se = diff.std(axis=0, ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0 * diff[0]
        worst = int(np.argmin(diff.mean(axis=0)[1:])) + 1
        print("skcrowd - ActiveLab per round: " + " ".join(
            f"{d:+.3f}" for d in diff.mean(axis=0)[1:]) + f"; lowest at round {worst}: "
            f"{diff.mean(axis=0)[worst]:+.3f} (paired s.e. {se[worst]:.3f})")
    return mean


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
    for ax, (name, (mean, batch)) in zip(axes[0], results.items()):
        for s, m in mean.items():
            ax.plot(np.arange(len(m)) * batch, m, marker="o", label=s)
        ax.set(title=name, xlabel="votes spent", ylabel="consensus accuracy")
        ax.grid(alpha=0.3)
    axes[0, 0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\ncurves written to {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="*",
                        default=[str(REPO.parent / "shared" / "data" / "labelme")])
    parser.add_argument("--no-simulated", action="store_true")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=None, help="votes per round (n_tasks/10)")
    parser.add_argument("--start-fraction", type=float, default=0.5)
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=STRATEGIES)
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    parser.add_argument("--plot", default=None, help="write the curves to this image file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    crowds = [(Path(folder).name, lambda seed, f=folder: real_crowd(f)) for folder in args.data]
    if not args.no_simulated:
        crowds += [(name, lambda seed, n=name: simulated_crowd(n, seed))
                   for name in ("sim K=4", "sim K=2")]
    cleanlab = Cleanlab(args.competitor_python) if "ActiveLab" in args.strategies else None
    results = {}
    try:
        for name, make in crowds:
            curves = {s: [] for s in args.strategies}
            for seed in args.seeds:
                X, gold, confusions, activity, classifier = make(seed)
                for s in args.strategies:
                    curves[s].append(run_loop(X, gold, confusions, activity, classifier, s,
                                              seed, args, cleanlab))
                    print(f"{name} seed {seed} {s}: " + " ".join(
                        f"{a:.3f}" for a in curves[s][-1]), flush=True)
            batch = args.batch or len(gold) // 10
            start_votes = int(round(args.start_fraction * len(gold)))
            results[name] = (report(name, curves, batch, start_votes), batch)
    finally:
        if cleanlab is not None:
            cleanlab.close()
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
