"""Control tasks: accuracy on the *other* tasks as the share of known tasks grows.

A share of the tasks (``--shares``, default 0, 1, 2, 5, 10 and 20 %) is drawn at random among
the tasks with a gold label and given to the EM aggregators as known labels
(``fit_predict(votes, y=known)``); each method is scored on the gold tasks that were *not*
known. ``--seeds`` draws per share (default 5; the same draws for every method); the tables
give the mean, and the spread over the draws (``max - min``) in a second table.
:class:`~skcrowd.aggregation.MajorityVote` ignores known labels: it is the reference.

**Simulated label-switched crowds** (``skcrowd.datasets.simulate_annotators``, 1000 tasks,
30 workers of accuracy 0.7-0.9, 5 votes per task): 60 % of the workers are adversarial (each
relabels the classes by its own permutation without fixed point; with two classes they flip
the labels). With K = 2 and K = 3 majority vote and unsupervised EM follow the adversarial
majority; with K = 4 their permutations disagree, EM finds the truth without help, and known
tasks must not hurt. One crowd per seed.

**Real crowds** (``--data DIR [DIR ...]``: folders in the shared layout, or dataset names of
``skcrowd.datasets.list_crowd_datasets``; default every folder of ``../shared/data`` with a
``truth.csv``, cifar10n left out: its worker ids are unreliable).

Usage::

    python benchmarks/control_tasks.py
    python benchmarks/control_tasks.py --seeds 10 --data ../shared/data/labelme
    python benchmarks/control_tasks.py --no-real --methods ds glad
    python benchmarks/control_tasks.py --json results.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
SHARES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2)
METHODS = ("mv", "ds", "wds", "glad", "onecoin", "mace")
NAMES = {"mv": "MajorityVote", "ds": "DawidSkene", "wds": "WeightedDawidSkene", "glad": "GLAD",
         "onecoin": "OneCoinDawidSkene", "mace": "MACE"}
SIMULATED = {  # name: (n_classes, share of adversarial workers)
    "simulated K=2, 60 % adversarial": (2, 0.6),
    "simulated K=3, 60 % adversarial": (3, 0.6),
    "simulated K=4, 60 % adversarial": (4, 0.6),
}


def make_method(name, n_classes):
    from skcrowd.aggregation import (GLAD, MACE, DawidSkene, MajorityVote, OneCoinDawidSkene,
                                     WeightedDawidSkene)

    cls = {"mv": MajorityVote, "ds": DawidSkene, "wds": WeightedDawidSkene, "glad": GLAD,
           "onecoin": OneCoinDawidSkene, "mace": MACE}[name]
    return cls(n_classes=n_classes, random_state=0) if name == "mv" else cls(n_classes=n_classes)


def simulated_crowd(n_classes, adversarial, seed, n_tasks=1000):
    """(votes, gold) of a label-switched crowd (see the module docstring)."""
    from skcrowd.datasets import simulate_annotators

    truth = np.random.default_rng(seed).integers(n_classes, size=n_tasks)
    sim = simulate_annotators(truth, 30, n_classes=n_classes, adversarial=adversarial,
                              accuracy=(0.7, 0.9), votes_per_task=5, random_state=seed)
    return sim.votes, truth


def known_labels(gold, share, seed):
    """``gold`` on ``round(share * n_gold)`` tasks drawn among those with gold, -1 elsewhere."""
    has_gold = np.flatnonzero(gold >= 0)
    n_known = int(round(share * len(has_gold)))
    known = np.full(len(gold), -1)
    chosen = np.random.default_rng(1000 + seed).choice(has_gold, n_known, replace=False)
    known[chosen] = gold[chosen]
    return known


def accuracy_on_others(votes, gold, n_classes, methods, shares, seeds, crowd_of_seed=None):
    """{method: array (len(shares), len(seeds))} of accuracy on the gold tasks not known."""
    out = {m: np.empty((len(shares), len(seeds))) for m in methods}
    for b, seed in enumerate(seeds):
        if crowd_of_seed is not None:
            votes, gold = crowd_of_seed(seed)
        for a, share in enumerate(shares):
            known = known_labels(gold, share, seed)
            scored = (gold >= 0) & (known < 0)
            for m in methods:
                model = make_method(m, n_classes)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # ConvergenceWarning on hard crowds
                    labels = (model.fit_predict(votes) if m == "mv"
                              else model.fit_predict(votes, known))
                out[m][a, b] = np.mean(labels[scored] == gold[scored])
    return out


def print_tables(results, shares, methods):
    header = f"{'crowd':<40} {'method':<19} " + " ".join(f"{s:>6.0%}" for s in shares)
    for title, stat in (("mean accuracy on the tasks not known", np.mean),
                        ("spread over the draws (max - min)", np.ptp)):
        print(f"\n{title}:")
        print(header)
        print("-" * len(header))
        for crowd, per_method in results.items():
            for m in methods:
                row = stat(np.asarray(per_method[m]), axis=1)
                print(f"{crowd:<40} {NAMES[m]:<19} " + " ".join(f"{v:>6.3f}" for v in row))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=None,
                        help="crowd folders in the shared layout or dataset names")
    parser.add_argument("--shares", nargs="+", type=float, default=list(SHARES))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--no-simulated", action="store_true")
    parser.add_argument("--no-real", action="store_true")
    parser.add_argument("--json", help="write the accuracies (every draw) to this file")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from skcrowd.datasets import load_crowd_dataset

    seeds = list(range(args.seeds))
    results = {}
    start = time.perf_counter()
    if not args.no_simulated:
        for name, (K, adversarial) in SIMULATED.items():
            results[name] = accuracy_on_others(
                None, None, K, args.methods, args.shares, seeds,
                crowd_of_seed=lambda seed, K=K, adversarial=adversarial: simulated_crowd(
                    K, adversarial, seed))
            print(f"  done: {name} ({time.perf_counter() - start:.0f} s)", flush=True)
    if not args.no_real:
        folders = args.data
        if folders is None:
            folders = sorted(str(p) for p in DEFAULT_DATA.iterdir()
                             if (p / "truth.csv").is_file() and p.name != "cifar10n") \
                if DEFAULT_DATA.is_dir() else []
        for folder in folders:
            data = load_crowd_dataset(folder, features=None, sparse=True)
            K = len(data.class_names)
            name = Path(folder).name
            results[name] = accuracy_on_others(data.votes, data.target, K, args.methods,
                                               args.shares, seeds)
            print(f"  done: {name} ({time.perf_counter() - start:.0f} s)", flush=True)
    print(f"\nKnown tasks drawn among the gold tasks, {args.seeds} draws per share; accuracy on "
          "the gold tasks not known. Shared 2-core machine.")
    print_tables(results, args.shares, args.methods)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"shares": args.shares, "seeds": seeds,
             "results": {c: {m: v.tolist() for m, v in r.items()} for c, r in results.items()}},
            indent=1))


if __name__ == "__main__":
    main()
