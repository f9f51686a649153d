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
    python benchmarks/selfcrowd_sparse.py --check-score agreement   # another check score
    python benchmarks/selfcrowd_sparse.py --paper-crowd-model       # paper_crowd_model() for both
    python benchmarks/selfcrowd_sparse.py --datasets labelme --p 0 --diagnose   # see below

``--diagnose`` (datasets with gold labels for the training tasks: the simulated ones and LabelMe)
prints, for every round's model against the start, on the held-out tasks of the check that have
votes: the gold accuracy (``hacc``) and its paired gain with its lower bound (``gold lo``: what a
check that knew the held-out truth would see), the gains of three scores of the held-out votes with
their lower bounds (``ll``: the default check score; ``llT``: the same after one temperature per
model, fitted on one half of the held-out tasks and scored on the other, both ways; ``agree``: the
agreement score), the mean largest class probability and the fitted temperatures; and, on the
held-out tasks where the round's predicted class differs from the start's, how many each gets
right and the share of their votes that matches the gold label, the round's and the start's class.
With ``--no-early-stop`` a round surely worse than the start does not end the loop, so that every
one of ``--n-iterations`` rounds is diagnosed (a later round may then be kept, so the Self-Crowd
column is not the default's).

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


def diagnosing_selfcrowd(early_stop=True):
    """SelfCrowdClassifier that keeps every round's model and its held-out tasks; without
    ``early_stop``, a round surely worse than the start does not end the loop."""
    from skcrowd import SelfCrowdClassifier

    class Diagnosed(SelfCrowdClassifier):
        def _held_out_tasks(self, votes, rng):
            train, self.valid_ = super()._held_out_tasks(votes, rng)
            self.round_models_, self.held_out_ = [], None
            return train, self.valid_

        def _record(self, iteration, model, status, **kwargs):
            self.round_models_.append(model)
            self.held_out_ = kwargs["held_out"]
            return super()._record(iteration, model, status, **kwargs)

        def _paired_gain(self, difference):
            gain, bound, upper = super()._paired_gain(difference)
            return gain, bound, upper if early_stop else np.inf

    return Diagnosed


def temperature_scored(proba, confusions, votes, half):
    """Per held-out task, the vote log-likelihood through ``confusions`` after a temperature
    fitted on the other half of the tasks (``half``: boolean per task), and the temperatures."""
    from scipy.optimize import minimize_scalar

    from skcrowd.selftraining import _vote_log_likelihood_through

    logp = np.log(np.clip(proba, 1e-12, None))

    def scores(log_t):
        z = logp / np.exp(log_t)
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return _vote_log_likelihood_through(z / z.sum(axis=1, keepdims=True), confusions, votes)

    side = half[np.bincount(votes.task, minlength=votes.n_tasks) > 0]
    out, temperatures = np.zeros(len(side)), []
    for fit_on in (side, ~side):
        log_t = minimize_scalar(lambda t: -scores(t)[fit_on].mean(), bounds=(-3, 3),
                                method="bounded").x
        temperatures.append(float(np.exp(log_t)))
        out[~fit_on] = scores(log_t)[~fit_on]
    return out, temperatures


def diagnose(clf, data):
    """Print the per-round figures of ``--diagnose`` (see the module docstring)."""
    from skcrowd.selftraining import _vote_agreement, _vote_log_likelihood_through

    if data["y_gold"] is None:
        raise SystemExit("--diagnose needs the gold labels of the training tasks.")
    X_held_out, votes = clf.held_out_
    gold = data["y_gold"][clf.valid_]
    voted = np.bincount(votes.task, minlength=votes.n_tasks) > 0
    half = np.random.RandomState(0).rand(votes.n_tasks) < 0.5
    confusions = np.asarray(clf.round_models_[0].annotator_confusions_)
    print(f"    held-out tasks {voted.sum()}, votes {len(votes.task)}, share of the votes that"
          f" match the gold label {np.mean(votes.label == gold[votes.task]):.3f}")
    first = None
    for iteration, model in enumerate(clf.round_models_):
        proba = np.asarray(model.predict_proba(X_held_out))
        predicted = proba.argmax(axis=1)
        right = (predicted == gold)[voted].astype(float)
        tempered, temperatures = temperature_scored(proba, confusions, votes, half)
        scores = {"ll": _vote_log_likelihood_through(proba, confusions, votes), "llT": tempered,
                  "agree": _vote_agreement(votes.counts(), predicted)}
        line = (f"    round {iteration}: test {accuracy(model, data):.3f}, hacc {right.mean():.3f}"
                f", max proba {proba.max(axis=1).mean():.3f}, T {temperatures[0]:.2f}/"
                f"{temperatures[1]:.2f}")
        if first is None:
            first = dict(scores, right=right, predicted=predicted)
            print(line)
            continue
        gain, bound, _ = clf._paired_gain(right - first["right"])
        line += f" | gold {gain:+.3f} lo {bound:+.3f}"
        for name in ("ll", "llT", "agree"):
            gain, bound, _ = clf._paired_gain(scores[name] - first[name])
            line += f" | {name} {gain:+.4f} lo {bound:+.4f}"
        changed = np.flatnonzero((predicted != first["predicted"])[voted])
        on = np.isin(votes.task, np.flatnonzero(voted)[changed])
        task, label = votes.task[on], votes.label[on]
        line += (f" | {len(changed)} changed: right {int(right[changed].sum())} vs"
                 f" {int(first['right'][changed].sum())}, votes = gold"
                 f" {np.mean(label == gold[task]):.2f}, round"
                 f" {np.mean(label == predicted[task]):.2f}, start"
                 f" {np.mean(label == first['predicted'][task]):.2f}")
        print(line)


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
    parser.add_argument("--n-iterations", type=int, default=5, help="self-training rounds")
    parser.add_argument("--no-early-stop", action="store_true",
                        help="with --diagnose: run every round, even after one surely worse")
    parser.add_argument("--paper-crowd-model", action="store_true",
                        help="the paper's crowd model (paper_crowd_model()) instead of the default")
    parser.add_argument("--check-score", default="likelihood",
                        help="SelfCrowdClassifier's check_score")
    parser.add_argument("--diagnose", action="store_true",
                        help="every round's model on the held-out tasks (see the docstring)")
    args = parser.parse_args(argv)

    import torch
    from sklearn.base import clone

    from skcrowd import SelfCrowdClassifier
    from skcrowd.neural import CrowdLayerClassifier
    from skcrowd.selftraining import paper_crowd_model

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
                crowd_model = paper_crowd_model() if args.paper_crowd_model else None
                base = clone(crowd_model) if crowd_model else CrowdLayerClassifier()
                base.set_params(random_state=seed, classes=np.arange(data["n_classes"]))
                rows["base"].append(accuracy(base.fit(data["X"], votes), data))
                t0 = time.perf_counter()
                selfcrowd = (diagnosing_selfcrowd(not args.no_early_stop) if args.diagnose
                             else SelfCrowdClassifier)
                clf = selfcrowd(crowd_model, n_iterations=args.n_iterations,
                                check_score=args.check_score, random_state=seed)
                clf.fit(data["X"], votes, **fit)
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
                if args.diagnose:
                    diagnose(clf, data)
                if args.unchecked:
                    unchecked = SelfCrowdClassifier(crowd_model, n_iterations=args.n_iterations,
                                                    validation_fraction=None, random_state=seed)
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
