"""Consensus accuracy and annotator quality: skcrowd's ConsensusClassifier against cleanlab.

For every crowd (real folders given with ``--data``, and simulated crowds) and every fold seed,
all methods share one classifier and one set of folds (``KFold(5, shuffle=True)`` seeded by the
seed):

- ``MV``, ``DS``, ``WDS``, ``GLAD``: skcrowd's label-only aggregators (default parameters);
  ``best label-only`` is the best of every model of ``skcrowd.aggregation.__all__`` (also
  Wawa, ZeroBasedSkill, MMSR, and KOS on binary crowds) on that crowd and seed (chosen with the
  gold labels, so it flatters them);
- ``classifier``: the out-of-fold predictions of the classifier trained on the majority vote;
- ``CROWDLAB``: cleanlab 2.9.0 ``get_label_quality_multiannotator`` with those out-of-fold
  probabilities (cleanlab's documented workflow: cross-validated predictions of a model
  trained on the majority vote);
- ``CROWDLAB x2``: CROWDLAB again, with the out-of-fold probabilities of the classifier
  retrained on the first CROWDLAB consensus (cleanlab's suggested iteration);
- ``CROWDLAB(skcrowd P)``: CROWDLAB given skcrowd's own last-round out-of-fold probabilities,
  so that only the way of combining them with the votes differs;
- ``skcrowd``: :class:`skcrowd.ConsensusClassifier` with its defaults (``cv`` set to the shared
  folds).

The table gives the consensus accuracy against the gold labels (mean over seeds, then the
spread max - min). On simulated crowds it also gives the Spearman correlation between each
method's annotator quality and the workers' true accuracy (the diagonal of their confusion
matrices weighted by the true class frequencies), over the workers with votes.

Classifier: skcrowd's default (standardization + shrinkage LDA) on numeric features; TF-IDF
(words and word pairs) + logistic regression on raw text (a folder with ``*_text_train.txt``,
one line per task, such as ``sentiment_polarity_rodrigues``), its ``C`` chosen in
{0.3, 1, 3, 10, 30} by cross-validated log-loss against the majority vote (no gold label;
``--text-C`` fixes it). cleanlab runs in the competitor
environment (``--competitor-python``, the interpreter of a virtual environment holding
cleanlab).

Usage::

    python benchmarks/consensus.py                     # LabelMe, sentiment, simulated crowds
    python benchmarks/consensus.py --data ../shared/data/labelme --seeds 0 1 2 --no-simulated
    python benchmarks/consensus.py --data DIR1 DIR2    # any folder in the shared-data layout

Run on a shared 2-core machine with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _multiannotator import Cleanlab, load_task_features, make_classifier  # noqa: E402

DEFAULT_DATA = [REPO.parent / "shared" / "data" / "labelme",
                REPO.parent / "shared" / "data" / "sentiment_polarity_rodrigues"]
# columns of the table: skcrowd.aggregation names
LABEL_ONLY = {"MV": "MajorityVote", "DS": "DawidSkene", "WDS": "WeightedDawidSkene",
              "GLAD": "GLAD"}
METHODS = (*LABEL_ONLY, "best label-only", "classifier", "CROWDLAB", "CROWDLAB x2",
           "CROWDLAB(skcrowd P)", "skcrowd")


def simulated_crowds(seed):
    """Three simulated regimes: name -> (X, votes, truth, confusions)."""
    from skcrowd.datasets import make_confusion_matrix, make_crowd_classification

    crowds = {}
    c = make_crowd_classification(2000, n_features=20, n_classes=4, n_workers=50,
                                  accuracy=(0.3, 0.9), votes_per_task=(1, 3),
                                  random_state=seed)
    crowds["sim K=4, 1-3 votes"] = c
    c = make_crowd_classification(1500, n_features=10, n_classes=2, class_sep=0.8,
                                  n_workers=30, accuracy=(0.55, 0.9), spammers=0.2,
                                  votes_per_task=(2, 4), random_state=seed + 100)
    crowds["sim K=2, spammers"] = c
    confusion = make_confusion_matrix(8, pattern="asymmetric", random_state=seed)
    c = make_crowd_classification(2000, n_features=30, n_classes=8, class_sep=1.5,
                                  n_workers=40, accuracy=(0.4, 0.85), votes_per_task=(1, 3),
                                  class_confusion=confusion, random_state=seed + 200)
    crowds["sim K=8, confused"] = c
    return {name: (c.data, c.votes, c.target, c.confusions) for name, c in crowds.items()}


def true_accuracy(confusions, truth):
    share = np.bincount(truth, minlength=confusions.shape[1]) / len(truth)
    return np.einsum("jkk,k->j", confusions, share)


def label_only_accuracies(votes, gold, K, seed):
    """Gold accuracy of every aggregator of ``skcrowd.aggregation.__all__`` with its defaults
    (``n_classes=K``, ``random_state=seed`` where it has them); a model that rejects the crowd
    (KOS: binary only) is left out."""
    import skcrowd.aggregation as aggregation

    out = {}
    for name in aggregation.__all__:
        model = getattr(aggregation, name)
        if not hasattr(model, "predict_proba"):
            continue
        model = model()
        params = model.get_params()
        model.set_params(**{k: v for k, v in (("n_classes", K), ("random_state", seed))
                            if k in params})
        try:
            out[name] = float(np.mean(model.fit(votes).predict(votes) == gold))
        except ValueError:
            continue
    return out


def run_crowd(X, votes, gold, classifier, seed, cleanlab, confusions=None):
    """Accuracy of every method (and Spearman of the annotator qualities) on one crowd."""
    from scipy.stats import spearmanr
    from sklearn.model_selection import KFold

    from skcrowd import ConsensusClassifier

    K = int(max(votes.max(), gold.max())) + 1
    folds = KFold(5, shuffle=True, random_state=seed)
    acc, rho, seconds = {}, {}, {}
    every = label_only_accuracies(votes, gold, K, seed)
    acc.update({name: every[model] for name, model in LABEL_ONLY.items()})
    acc["best label-only"] = max(every.values())

    def oof(targets_as_votes):
        """Out-of-fold probabilities of the classifier trained on these labels (shared folds)."""
        return ConsensusClassifier(classifier, cv=folds, n_rounds=1, n_classes=K).fit(
            X, targets_as_votes).oof_proba_

    start = time.perf_counter()
    skcrowd = ConsensusClassifier(classifier, cv=folds, n_classes=K).fit(X, votes)
    seconds["skcrowd"] = time.perf_counter() - start
    acc["skcrowd"] = float(np.mean(skcrowd.consensus_labels_ == gold))

    p_mv = oof(votes)  # round 1 of ConsensusClassifier: trained on the majority vote
    acc["classifier"] = float(np.mean(p_mv.argmax(axis=1) == gold))
    start = time.perf_counter()
    first = cleanlab.crowdlab(votes, p_mv)
    seconds["CROWDLAB"] = time.perf_counter() - start  # child-process round trip included
    acc["CROWDLAB"] = float(np.mean(first["labels"] == gold))
    second = cleanlab.crowdlab(votes, oof(first["labels"]))
    acc["CROWDLAB x2"] = float(np.mean(second["labels"] == gold))
    same_p = cleanlab.crowdlab(votes, skcrowd.oof_proba_)
    acc["CROWDLAB(skcrowd P)"] = float(np.mean(same_p["labels"] == gold))

    if confusions is not None:
        truth_quality = true_accuracy(confusions, gold)
        with_votes = (votes >= 0).any(axis=0)
        for name, quality in (("skcrowd", skcrowd.annotator_quality_),
                              ("CROWDLAB", first["annotator_quality"]),
                              ("CROWDLAB x2", second["annotator_quality"]),
                              ("CROWDLAB(skcrowd P)", same_p["annotator_quality"])):
            rho[name] = float(spearmanr(quality[with_votes], truth_quality[with_votes])[0])
    return acc, rho, seconds, skcrowd.prior_weight_


def summarize(results):
    """Rows ``name: (mean, spread)`` over seeds."""
    values = {}
    for result in results:
        for name, value in result.items():
            values.setdefault(name, []).append(value)
    return {name: (float(np.mean(v)), float(np.max(v) - np.min(v))) for name, v in values.items()}


def print_table(title, rows):
    print(f"\n{title}")
    names = [name for name in METHODS if name in next(iter(rows.values()))]
    width = max(len(crowd) for crowd in rows)
    print(" " * width + " | " + " | ".join(f"{name:>19s}" for name in names))
    for crowd, summary in rows.items():
        cells = [f"{summary[name][0]:.4f} ±{summary[name][1] / 2:.4f}".rjust(19) for name in names]
        print(f"{crowd:<{width}} | " + " | ".join(cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="*", default=[str(p) for p in DEFAULT_DATA],
                        help="crowd folders in the shared-data layout (with features or text)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--no-simulated", action="store_true")
    parser.add_argument("--text-C", type=float, default=None,
                        help="C of the text classifier (default: chosen against the majority "
                             "vote)")
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # cleanlab's and scikit-learn's chatter on tiny classes

    cleanlab = Cleanlab(args.competitor_python)
    print(f"cleanlab {cleanlab.version}; seeds {args.seeds}; accuracy mean ±half-spread")
    accuracy, spearman = {}, {}
    try:
        for folder in args.data:
            X, votes, gold, kind = load_task_features(folder)
            classifier, note = make_classifier(kind, X, votes, args.text_C)
            print(f"{Path(folder).name}: {note}", flush=True)
            runs = [run_crowd(X, votes, gold, classifier, seed, cleanlab) for seed in args.seeds]
            accuracy[Path(folder).name] = summarize([r[0] for r in runs])
            weights = [r[3] for r in runs]
            times = summarize([r[2] for r in runs])
            print(f"{Path(folder).name}: {kind} features, skcrowd fit {times['skcrowd'][0]:.1f} s, "
                  f"prior_weight_ {np.mean(weights):.2f}", flush=True)
        if not args.no_simulated:
            sims = {}
            for seed in args.seeds:
                for name, (X, votes, gold, confusions) in simulated_crowds(seed).items():
                    sims.setdefault(name, []).append(
                        run_crowd(X, votes, gold, None, seed, cleanlab, confusions))
            for name, runs in sims.items():
                accuracy[name] = summarize([r[0] for r in runs])
                spearman[name] = summarize([r[1] for r in runs])
    finally:
        cleanlab.close()
    print_table("Consensus accuracy against gold", accuracy)
    if spearman:
        print_table("Spearman: annotator quality vs true worker accuracy", spearman)


if __name__ == "__main__":
    main()
