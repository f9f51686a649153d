"""What :class:`skcrowd.aggregation.AggregatorSelector` picks on simulated crowds of correlated
workers, EBCC's regime (Li, Rubinstein & Cohn, 2019), against each candidate's gold accuracy.

Two regimes, ``--seeds`` seeds each (K=3 classes, 1000 tasks, uniform classes):

- ``groups``: three groups of workers, each sharing one confusion matrix (a confused group of six
  workers that mistakes class k for k+1 half the time, two groups of two fair workers). On each
  task a group draws one answer from its matrix and every member gives it with probability
  ``rho`` (else an independent draw from the same matrix): the group's errors are correlated
  given the truth, and its six votes count as six independent ones for Dawid-Skene.
- ``subtypes``: a third of each class's tasks look like the next class; on those, eight of ten
  workers answer the look-alike class with probability 0.6, the others stay right with 0.8; on
  the other tasks every worker is right with 0.75, errors uniform.

Usage::

    python benchmarks/selection_correlated.py [--seeds 3] [--rho 0.8]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skcrowd.aggregation import AggregatorSelector  # noqa: E402

K, N_TASKS = 3, 1000


def groups(seed, rho=0.8):
    rng = np.random.RandomState(seed)
    truth = rng.randint(K, size=N_TASKS)
    confused = 0.5 * np.eye(K) + 0.5 * np.roll(np.eye(K), 1, axis=1)  # k -> k+1 half the time
    fair = 0.7 * np.eye(K) + 0.15 * (1 - np.eye(K))
    sizes, matrices = (6, 2, 2), (confused, fair, fair)
    votes = []
    for size, matrix in zip(sizes, matrices):
        cum = matrix.cumsum(axis=1)
        draw = (rng.random_sample((N_TASKS, 1)) > cum[truth][:, :-1]).sum(axis=1)  # group answer
        own = (rng.random_sample((N_TASKS, size, 1)) > cum[truth][:, None, :-1]).sum(axis=2)
        copy = rng.random_sample((N_TASKS, size)) < rho
        votes.append(np.where(copy, draw[:, None], own))
    return np.hstack(votes), truth


def subtypes(seed):
    rng = np.random.RandomState(seed)
    truth = rng.randint(K, size=N_TASKS)
    hard = rng.random_sample(N_TASKS) < 1 / 3
    n_workers, fooled = 10, 8
    right = rng.random_sample((N_TASKS, n_workers)) < 0.75
    wrong = (truth[:, None] + rng.randint(1, K, size=(N_TASKS, n_workers))) % K
    votes = np.where(right, truth[:, None], wrong)
    lookalike = (truth + 1) % K
    u = rng.random_sample((N_TASKS, n_workers))
    hard_votes = np.where(np.arange(n_workers) < fooled,
                          np.where(u < 0.6, lookalike[:, None], truth[:, None]),
                          np.where(u < 0.8, truth[:, None], wrong))
    return np.where(hard[:, None], hard_votes, votes), truth


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rho", type=float, default=0.8)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    for name, make in (("groups", lambda s: groups(s, args.rho)), ("subtypes", subtypes)):
        for seed in range(args.seeds):
            votes, truth = make(seed)
            start = time.perf_counter()
            selector = AggregatorSelector(random_state=0).fit(votes)
            candidates = selector.cv_results_["estimator"]
            names = [type(c).__name__ for c in candidates]
            accuracy = []
            for c in candidates:
                if "random_state" in c.get_params():
                    c = c.set_params(random_state=0)
                accuracy.append(np.mean(c.fit_predict(votes) == truth))
            print(f"{name}:{seed} picked {names[selector.best_index_]:18s} "
                  f"{accuracy[selector.best_index_]:.3f}  gold-best "
                  f"{names[int(np.argmax(accuracy))]:18s} {max(accuracy):.3f}  "
                  + "  ".join(f"{n[:6]} {a:.3f}" for n, a in zip(names, accuracy))
                  + f"  ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
