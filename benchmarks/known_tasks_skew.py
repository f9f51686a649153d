"""Known tasks on skewed crowds: does giving DawidSkene 5 % of the gold hurt the other tasks?

Issue 37, section 4: on an unseen crowd whose gold is 92 % one class, 5 % of the gold as known
tasks (``fit(votes, y=known)``) cost DawidSkene 2.4 points on the other gold tasks. This replays
that on the shared binary crowds with gold, each subsampled to the same skew: every gold task
of the majority class is kept and the minority-class gold tasks are subsampled so that they
are 8 % of the gold (tasks without gold are kept; ``--subsamples`` draws). For each subsample,
``--draws`` draws of 5 % of the kept gold are the known tasks; every variant is scored on the
gold tasks that are not known (the same tasks for every variant of a draw).

Variants (the ablations isolate the known-task start of ``BaseEM._fit_source``):

- ``none``: no known tasks (the reference);
- ``known``: ``DawidSkene().fit(votes, y=known)``, as shipped;
- ``usual only``: only the usual start (naive vote shares, known tasks at their labels);
- ``known start only``: only the start from the model fitted on the known tasks;
- ``better objective``: both starts, the end of the better objective kept (no sign test);
- ``known, vote priors``: the known-task start with its class priors replaced by the shares
  of the votes of all tasks (the usual start's), everything else as shipped;
- ``known, prior of none``: as shipped, with the confusion rows' prior fixed at the one that
  the fit without known tasks chose (``smoothing="auto"``: the data-chosen smoothing without
  the known tasks instead of with them).

Usage::

    python benchmarks/known_tasks_skew.py                  # about 3 minutes
    python benchmarks/known_tasks_skew.py --subsamples 3 --draws 3 --share 0.05
    python benchmarks/known_tasks_skew.py --subsamples 2 --crowds act_CF act_CF_amt \
        zhang2014_web zheng_s4_Dog_data zheng_s4_Face_Sentiment_Identification labelme

The figures (issue 37) are in the docs' aggregation page, "Imbalanced crowds".
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
CROWDS = ("act_ZenCrowd_all", "act_ZenCrowd_in", "act_ZenCrowd_us", "zheng_d_jn_product",
          "zheng_d_sentiment", "snow2008_rte", "snow2008_temp", "zheng_d_Duck_Identification",
          "sentiment_polarity_rodrigues", "zhang2014_trec")
VARIANTS = ("none", "known", "usual only", "known start only", "better objective",
            "known, vote priors", "known, prior of none")


def read_crowd(folder):
    """(votes matrix, gold (-1: none)) of a crowd in the shared layout."""
    votes = np.loadtxt(folder / "votes.csv", delimiter=",", skiprows=1, dtype=np.int64,
                       ndmin=2)
    truth = np.loadtxt(folder / "truth.csv", delimiter=",", skiprows=1, dtype=np.int64,
                       ndmin=2)
    n_tasks, n_workers = votes[:, 0].max() + 1, votes[:, 1].max() + 1
    X = np.full((n_tasks, n_workers), -1)
    X[votes[:, 0], votes[:, 1]] = votes[:, 2]
    gold = np.full(n_tasks, -1)
    gold[truth[:, 0]] = truth[:, 1]
    voted = (X >= 0).any(axis=1)
    return X[voted], gold[voted]


def skewed(X, gold, majority_share, seed):
    """The crowd with minority-class gold tasks dropped at random so that the majority class
    is ``majority_share`` of the gold (tasks without gold kept)."""
    counts = np.bincount(gold[gold >= 0])
    major = int(np.argmax(counts))
    rng = np.random.default_rng(seed)
    minority = np.flatnonzero((gold >= 0) & (gold != major))
    n_keep = int(round(counts[major] * (1 - majority_share) / majority_share))
    dropped = rng.choice(minority, max(0, len(minority) - n_keep), replace=False)
    keep = np.ones(len(gold), dtype=bool)
    keep[dropped] = False
    return X[keep], gold[keep]


def known_draw(gold, share, seed):
    has_gold = np.flatnonzero(gold >= 0)
    known = np.full(len(gold), -1)
    rng = np.random.default_rng(10_000 + seed)
    chosen = rng.choice(has_gold, max(1, int(round(share * len(has_gold)))), replace=False)
    known[chosen] = gold[chosen]
    return known


def variant_classes():
    """DawidSkene subclasses for the ablations, by variant name."""
    from skcrowd.aggregation import DawidSkene
    from skcrowd.aggregation.kernels import safe_log

    class UsualOnly(DawidSkene):
        def _known_task_parameters(self, source, model, priors):
            return (), None

    class KnownOnly(DawidSkene):
        def _better_end(self, source, model, priors, known_start, usual_start):
            return known_start

    class BetterObjective(DawidSkene):
        def _better_end(self, source, model, priors, known_start, usual_start):
            return known_start if known_start[0] >= usual_start[0] else usual_start

    class VotePriors(DawidSkene):
        def _known_task_parameters(self, source, model, priors):
            tables, shared = super()._known_task_parameters(source, model, priors)
            if shared is None:
                return tables, shared
            label = source.block.votes.label
            shares = np.bincount(label, minlength=len(self.classes_)) + 1.0
            return tables, (safe_log(shares / shares.sum()), *shared[1:])

    class PriorOfNone(DawidSkene):
        def __init__(self, confusion_prior):
            super().__init__()
            self.confusion_prior = confusion_prior

        def _confusion_prior(self, worker_counts, evidence_counts, params):
            return self.confusion_prior, True

    return {"usual only": UsualOnly, "known start only": KnownOnly,
            "better objective": BetterObjective, "known, vote priors": VotePriors,
            "known, prior of none": PriorOfNone}


def run(crowds, n_subsamples, n_draws, share, majority_share):
    from skcrowd.aggregation import DawidSkene

    classes = variant_classes()
    rows = {}
    for name in crowds:
        X0, gold0 = read_crowd(DATA / name)
        acc = {v: [] for v in VARIANTS}
        for sub in range(n_subsamples):
            X, gold = skewed(X0, gold0, majority_share, sub)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                plain = DawidSkene().fit(X)
            for draw in range(n_draws):
                known = known_draw(gold, share, 100 * sub + draw)
                scored = (gold >= 0) & (known < 0)
                for v in VARIANTS:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if v == "none":
                            labels = plain.predict(X)
                        elif v == "known":
                            labels = DawidSkene().fit_predict(X, known)
                        elif v == "known, prior of none":
                            labels = classes[v](plain.confusion_prior_).fit_predict(X, known)
                        else:
                            labels = classes[v]().fit_predict(X, known)
                    acc[v].append(np.mean(labels[scored] == gold[scored]))
        rows[name] = {v: np.asarray(a) for v, a in acc.items()}
        n_gold = int((gold >= 0).sum())
        print(f"  {name}: {n_gold} gold tasks kept, {int(round(share * n_gold))} known",
              flush=True)
    return rows


def print_table(rows):
    print("\naccuracy on the other gold tasks minus that without known tasks (points; mean"
          " over subsamples x draws, [min, max] below):")
    print(f"{'crowd':<29} {'none':>7} " + " ".join(f"{v:>20}" for v in VARIANTS[1:]))
    means = []
    for name, acc in rows.items():
        base = acc["none"]
        diff = [100 * (acc[v] - base) for v in VARIANTS[1:]]
        means.append([d.mean() for d in diff])
        print(f"{name:<29} {base.mean():>7.4f} " + " ".join(f"{d.mean():>+20.2f}" for d in diff))
        print(f"{'':<29} {'':>7} " + " ".join(
            f"{f'[{d.min():+.1f}, {d.max():+.1f}]':>20}" for d in diff))
    print(f"{'mean':<29} {'':>7} " + " ".join(f"{m:>+20.2f}" for m in np.mean(means, axis=0)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crowds", nargs="+", default=list(CROWDS))
    parser.add_argument("--subsamples", type=int, default=3)
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--majority", type=float, default=0.92)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    start = time.perf_counter()
    rows = run(args.crowds, args.subsamples, args.draws, args.share, args.majority)
    print_table(rows)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
