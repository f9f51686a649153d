"""Self-Crowd on sparse crowds: does it ever end below its own crowd layer? (issue 24, section 3)

For each dataset and each fraction ``p`` of the observed votes removed at random, three fits on
the same votes, scored on gold test labels (mean +- sd over seeds):

- ``crowd layer``: SelfCrowdClassifier's crowd model, ``CrowdLayerClassifier()`` with the same
  ``random_state``, fitted on the votes left: what Self-Crowd ends with when it keeps no round;
- ``Self-Crowd``: ``SelfCrowdClassifier()`` with its defaults (rounds checked on held-out tasks,
  the chosen rounds confirmed by the final check);
- ``unchecked``: the paper's loop (``validation_fraction=None``).

``gap`` is Self-Crowd minus crowd layer (per seed, then averaged), ``worst`` the lowest gap over
the seeds, ``kept`` the mean number of rounds kept.

Datasets (``--datasets``):

- ``audio_like``: a simulated stand-in for issue 24's audio crowd, which is not available:
  ``make_classification`` with 1000 tasks (700 train, 300 test), 124 features (30 informative),
  10 classes, ``class_sep=2.5`` (gold-trained MLP about 0.79, as the audio crowd's
  0.78), 44 workers of accuracy uniform in [0.55, 0.91] (mean 0.73) whose mistakes follow
  one asymmetric class-confusion pattern, 4 votes per task;
- ``digits_like``: the same crowd on ``load_digits`` (700 train, 300 test tasks of 64 features);
- ``labelme``, ``sentiment``: the real crowds with features in ``../shared/data``
  (``benchmarks/deep.py`` loads them).

Usage::

    python benchmarks/selfcrowd_sparse.py                          # simulated, p = 0.5, 3 seeds
    python benchmarks/selfcrowd_sparse.py --unchecked              # and the paper's loop
    python benchmarks/selfcrowd_sparse.py --datasets labelme sentiment --p 0.3 0.5 0.7 0.9
    python benchmarks/selfcrowd_sparse.py --history               # per-round diagnosis

Runs on one torch thread; on the shared 2-core machine a simulated seed takes about 3 minutes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

SIMULATED = ("audio_like", "digits_like")


def simulated_crowd(name, seed):
    """700 training tasks, 10 classes, 44 workers of mean accuracy 0.73, 4 votes per task."""
    from sklearn.datasets import load_digits, make_classification
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from skcrowd.datasets import make_confusion_matrix, simulate_annotators

    rng = np.random.RandomState(seed)
    if name == "audio_like":
        X, y = make_classification(1000, 124, n_informative=30, n_redundant=20, n_classes=10,
                                   n_clusters_per_class=2, class_sep=2.5, random_state=rng)
    else:
        X, y = load_digits(return_X_y=True)
        keep = rng.choice(len(y), 1000, replace=False)
        X, y = X[keep], y[keep]
    X, X_test, y, y_test = train_test_split(X, y, train_size=700, stratify=y, random_state=rng)
    scaler = StandardScaler().fit(X)
    X, X_test = scaler.transform(X).astype(np.float32), scaler.transform(X_test).astype(np.float32)
    confusion = make_confusion_matrix(10, noise=1.0, pattern="asymmetric", random_state=rng)
    votes = simulate_annotators(y, 44, accuracy=(0.55, 0.91), votes_per_task=4,
                                class_confusion=confusion, random_state=rng).votes
    return dict(X=X, votes=votes, X_test=X_test, y_test=y_test, y_gold=y, n_classes=10)


def load(name, seed):
    if name in SIMULATED:
        return simulated_crowd(name, seed)
    import deep

    return deep.load(name, seed)


def remove_votes(votes, p, rng):
    """A copy of ``votes`` without a random fraction ``p`` of its observed entries."""
    out = np.array(votes, copy=True)
    observed = np.flatnonzero(out.ravel() >= 0)
    drop = rng.choice(observed, size=int(round(p * len(observed))), replace=False)
    out.ravel()[drop] = -1
    return out


def accuracy(clf, data):
    return float(np.mean(clf.predict(data["X_test"]) == data["y_test"]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(SIMULATED))
    parser.add_argument("--p", type=float, nargs="+", default=[0.5])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--unchecked", action="store_true", help="add the paper's loop")
    parser.add_argument("--history", action="store_true", help="print every round's scores")
    args = parser.parse_args(argv)

    import torch

    from skcrowd import SelfCrowdClassifier
    from skcrowd.neural import CrowdLayerClassifier

    torch.set_num_threads(1)
    print("| dataset | p | votes | crowd layer | Self-Crowd | gap | worst | kept | unchecked |"
          " s/fit |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        for p in args.p:
            rows = {"base": [], "self": [], "unchecked": [], "kept": [], "votes": [], "sec": []}
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                data = load(name, seed)
                votes = remove_votes(data["votes"], p, np.random.RandomState(1000 + seed))
                rows["votes"].append(int((votes >= 0).sum()))
                fit = dict(X_val=data["X_test"], y_val=data["y_test"])
                base = CrowdLayerClassifier(random_state=seed, classes=np.arange(data["n_classes"]))
                rows["base"].append(accuracy(base.fit(data["X"], votes), data))
                t0 = time.perf_counter()
                clf = SelfCrowdClassifier(random_state=seed).fit(data["X"], votes, **fit)
                rows["sec"].append(time.perf_counter() - t0)
                rows["self"].append(accuracy(clf, data))
                rows["kept"].append(clf.n_iter_)
                if args.history:
                    print(f"  {name} p={p} seed={seed}: crowd layer {rows['base'][-1]:.3f}, "
                          f"Self-Crowd {rows['self'][-1]:.3f}")
                    for h in clf.history_:
                        extra = {k: v for k, v in h.items() if k.startswith("held_out")
                                 or k == "valid_accuracy"}
                        print(f"    round {h['iteration']} {h['status']}: "
                              + ", ".join(f"{k}={v:.4f}" if isinstance(v, float) else
                                          f"{k}={v}" for k, v in extra.items()))
                    if clf.final_check_ is not None:
                        print("    final check: " + ", ".join(
                            f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in clf.final_check_.items()))
                if args.unchecked:
                    unchecked = SelfCrowdClassifier(validation_fraction=None, random_state=seed)
                    rows["unchecked"].append(accuracy(unchecked.fit(data["X"], votes), data))
            gap = np.subtract(rows["self"], rows["base"])
            unchecked = (f"{np.mean(rows['unchecked']):.3f} ± {np.std(rows['unchecked']):.3f}"
                         if rows["unchecked"] else "-")
            print(f"| {name} | {p} | {int(np.mean(rows['votes']))} | "
                  f"{np.mean(rows['base']):.3f} ± {np.std(rows['base']):.3f} | "
                  f"{np.mean(rows['self']):.3f} ± {np.std(rows['self']):.3f} | "
                  f"{gap.mean():+.3f} | {gap.min():+.3f} | {np.mean(rows['kept']):.1f} | "
                  f"{unchecked} | {np.mean(rows['sec']):.0f} |", flush=True)


if __name__ == "__main__":
    main()
