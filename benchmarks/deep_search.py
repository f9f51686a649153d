"""Hyper-parameter search from votes only: GridSearchCV on held-out votes, against the defaults.

No gold label is used to choose: ``GridSearchCV`` cross-validates CoNAL's weight decay and
``reg_lambda`` on the training tasks' votes, scored by one of skcrowd's votes-aware scorers:

- ``mv``: :func:`skcrowd.metrics.mv_accuracy_scorer`, tie-aware accuracy against the majority
  vote of the held-out tasks' votes;
- ``loglik``: :func:`skcrowd.metrics.annotation_log_likelihood_scorer`, mean log-probability
  of the held-out votes under the model's own annotator-noise model.

Folds are shuffled (``KFold(3, shuffle=True)``; scikit-learn's default for a 2-D ``y`` is an
unshuffled ``KFold``). The refitted best model and the estimator with its defaults are then
scored on the gold test labels; mean +- sd over seeds (the seed drives the folds and the nets).

Usage::

    python benchmarks/deep_search.py                      # LabelMe, 3 seeds
    python benchmarks/deep_search.py --data DIR --seeds 5   # any folder of the shared layout
    python benchmarks/deep_search.py --seeds 1 --scoring loglik --reg-lambda 1e-5   # smaller

Runs on one torch thread; on the shared 2-core machine one seed takes several minutes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import deep  # noqa: E402  (benchmarks/deep.py: datasets and evaluation)

WEIGHT_DECAY = [0.0, 1e-4, 1e-3, 1e-2]
REG_LAMBDA = [0.0, 1e-5, 1e-3]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="labelme",
                        help="labelme, sentiment, a simulated dataset name or a folder")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--scoring", nargs="+", choices=["mv", "loglik"], default=["mv", "loglik"],
                        help="the votes-aware scorers to search with")
    parser.add_argument("--weight-decay", nargs="+", type=float, default=WEIGHT_DECAY)
    parser.add_argument("--reg-lambda", nargs="+", type=float, default=REG_LAMBDA)
    args = parser.parse_args(argv)

    import torch
    from sklearn.model_selection import GridSearchCV, KFold

    from skcrowd.metrics import annotation_log_likelihood_scorer, mv_accuracy_scorer
    from skcrowd.neural import CoNALClassifier

    torch.set_num_threads(1)
    grid = {"optimizer__weight_decay": args.weight_decay, "reg_lambda": args.reg_lambda}
    scorers = {"mv": mv_accuracy_scorer, "loglik": annotation_log_likelihood_scorer}
    scorers = {name: scorers[name] for name in args.scoring}
    results = {"defaults": [], **{name: [] for name in scorers}}
    chosen = {name: [] for name in scorers}
    print(f"{args.data}: CoNALClassifier, grid {grid}, 3 shuffled folds; test accuracy")
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        data = deep.load(args.data, seed)
        results["defaults"].append(deep.evaluate(CoNALClassifier(random_state=seed), data)[0])
        for name, scorer in scorers.items():
            search = GridSearchCV(CoNALClassifier(random_state=seed), grid, scoring=scorer,
                                  cv=KFold(3, shuffle=True, random_state=seed))
            results[name].append(deep.evaluate(search, data)[0])
            chosen[name].append(search.best_params_)
            print(f"seed {seed}: defaults {results['defaults'][-1]:.3f}, search on {name} "
                  f"{results[name][-1]:.3f} with {search.best_params_}", flush=True)
    print("\n| model | test accuracy | gain over the defaults |")
    print("|---|---|---|")
    base = np.asarray(results["defaults"])
    print(f"| CoNALClassifier() defaults | {deep.mean_sd(base)} | |")
    for name in scorers:
        acc = np.asarray(results[name])
        print(f"| GridSearchCV, scoring={name} | {deep.mean_sd(acc)} | "
              f"{deep.mean_sd(acc - base)} |")
    for name in scorers:
        print(f"chosen with {name}: {chosen[name]}")


if __name__ == "__main__":
    main()
