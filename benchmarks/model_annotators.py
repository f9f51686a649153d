"""Model annotators among the humans: real crowds with simulated, correlated models added.

Each real crowd with gold (``--data``: folders in the shared layout; default every folder of
``../shared/data`` with a ``truth.csv``, cifar10n left out: its worker ids are unreliable) is
cut to its gold tasks, and ``--models`` simulated model annotators are added that label every
task, the way the COLLAPSE study ("On aggregating labels from humans and AIs with asymmetric
performance") builds its crowds: of a target accuracy (``--accuracy``), asymmetric per class
(each class's accuracy drawn from ``accuracy +- --spread``, so that the models are strong on
some classes and weak on others), and correlated through a shared latent error: the models
share one reading of each task (right with the class's accuracy, else a class drawn from a
confusion row shared by the models), which each model copies with probability ``--copy``,
answering on its own otherwise (same per-class accuracies, its own errors). ``--copy 0`` gives
independent models.

Compared, by gold accuracy (ties of the posterior get fractional credit), mean over
``--seeds`` draws of the models per crowd:

- ``humans``: DawidSkene on the human columns;
- ``models``: DawidSkene on the model columns;
- ``DS all``: DawidSkene on all columns (the models as independent workers);
- ``tempered``, ``reading``, ``copy``: GroupedDawidSkene on all columns, the models in one
  group, the humans independent, with that ``group_model``;
- ``copy hg``: GroupedDawidSkene (``"copy"``) with the humans in a group of their own too;
- ``warm hg``: ``copy hg`` warm-started from ``copy`` (``warm_start=True``, then the humans'
  group added);
- ``pool hg``: the same with one copy rate per group (``copy_rate="group"``), warm-started from
  its fit with the models grouped and the humans independent;
- ``auto hg``: the same with ``copy_rate="auto"`` (each member's rate under a prior chosen from
  its group's members);
- ``selected``: the one of ``DS all``, ``copy`` and ``copy hg`` that best predicts held-out
  votes (:class:`~skcrowd.aggregation.AggregatorSelector`, no gold), printed with its choices;
- ``BIC``: the one of ``DS all``, ``copy``, ``copy hg``, ``warm hg`` and ``pool hg`` of lowest
  Bayesian information criterion on the votes (``GroupedDawidSkene.bic``, no gold; ``DS all``
  is fitted as GroupedDawidSkene without groups, which is DawidSkene), printed with its
  choices;
- ``humans g``: GroupedDawidSkene (``"copy"``) on the human columns, in one group;
- ``MV all``: majority vote on all columns.

The table gives each method per crowd, the mean over crowds, and for the grouped models the
margin over the better of ``humans`` and ``models`` per crowd (``margin``: that of ``BIC``),
then the choices of ``selected`` and ``BIC`` on each draw: ``d`` (DS all), ``c`` (copy), ``h``
(copy hg), ``w`` (warm hg), ``p`` (pool hg).
``--crowdkit PYTHON`` adds crowd-kit's DawidSkene on all columns (``ck DS all``), run on the same
votes in that interpreter.

Usage::

    python benchmarks/model_annotators.py
    python benchmarks/model_annotators.py --accuracy 0.85 --copy 0.5 --seeds 3
    python benchmarks/model_annotators.py --data ../shared/data/labelme --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from realdata import default_folders, resolve, tie_credit  # noqa: E402

METHODS = ["humans", "humans g", "models", "DS all", "MV all", "tempered", "reading", "copy",
           "copy hg", "warm hg", "pool hg", "auto hg", "selected", "BIC"]
GROUPED = ["tempered", "reading", "copy", "copy hg", "warm hg", "pool hg", "auto hg", "selected",
           "BIC"]
# the candidates of "BIC", with their letters in the choices column
BIC_CANDIDATES = {"DS all": "d", "copy": "c", "copy hg": "h", "warm hg": "w", "pool hg": "p"}


def gold_crowd(crowd):
    """The crowd's votes on its gold tasks (whose gold label some vote uses), as a sparse
    (tasks x workers) matrix, and the gold class of each of these tasks."""
    keep = crowd.gold_label >= 0
    tasks, gold = crowd.gold_task[keep], crowd.gold_label[keep]
    position = np.full(crowd.n_tasks, -1)
    position[tasks] = np.arange(len(tasks))
    votes = position[crowd.task] >= 0
    humans = sp.csr_matrix((crowd.label[votes], (position[crowd.task[votes]],
                                                 crowd.worker[votes])),
                           shape=(len(tasks), crowd.n_workers))
    return humans, gold


def simulate_models(gold, n_classes, n_models, accuracy, spread, copy, rng):
    """``(n_tasks, n_models)`` answers of correlated model annotators (see the module
    docstring)."""
    n_tasks, K = len(gold), n_classes
    # per-class accuracy, strong on some classes and weak on others
    per_class = np.clip(accuracy + rng.uniform(-spread, spread, size=K), 1.0 / K + 0.05, 0.99)

    def answers(confusion_rows):
        right = rng.random(n_tasks) < per_class[gold]
        wrong = np.array([rng.choice(K, p=confusion_rows[k]) for k in gold])
        return np.where(right, gold, wrong)

    def error_rows():
        rows = rng.dirichlet(np.ones(K - 1) * 0.5, size=K)
        full = np.zeros((K, K))
        for k in range(K):
            full[k, np.arange(K) != k] = rows[k]
        return full

    reading = answers(error_rows())  # the models' shared reading of each task
    models = np.empty((n_tasks, n_models), dtype=np.int64)
    for m in range(n_models):
        own = answers(error_rows())
        models[:, m] = np.where(rng.random(n_tasks) < copy, reading, own)
    return models


class HumansAdded:
    """``model`` fitted, then warm-started with ``worker_groups`` set to ``groups`` (the humans
    grouped too)."""

    def __init__(self, model, groups):
        self.model, self.groups = model, groups

    def fit(self, X):
        self.model.fit(X).set_params(worker_groups=self.groups, warm_start=True).fit(X)
        return self

    def predict_proba(self, X):
        return self.model.predict_proba(X)

    def bic(self, X):
        return self.model.bic(X)


def fit_methods(humans, models, K):
    from skcrowd.aggregation import (AggregatorSelector, DawidSkene, GroupedDawidSkene,
                                     MajorityVote)

    n_humans = humans.shape[1]
    # from triplets: a stored entry is a vote, label 0 included (csr_matrix(models) drops 0s)
    rows, cols = np.indices(models.shape).reshape(2, -1)
    coo = humans.tocoo()
    both = sp.csr_matrix((np.concatenate([coo.data, models.ravel()]),
                          (np.concatenate([coo.row, rows]),
                           np.concatenate([coo.col, n_humans + cols]))),
                         shape=(humans.shape[0], n_humans + models.shape[1]))
    groups = [None] * n_humans + ["model"] * models.shape[1]
    fits = {
        "humans": (DawidSkene(n_classes=K), humans),
        "humans g": (GroupedDawidSkene(n_classes=K, worker_groups=["human"] * n_humans,
                                       group_model="copy"), humans),
        "models": (DawidSkene(n_classes=K), models),
        # GroupedDawidSkene without groups is DawidSkene (to the bit), with its bic
        "DS all": (GroupedDawidSkene(n_classes=K), both),
        "MV all": (MajorityVote(n_classes=K, random_state=0), both),
    }
    for name in ["tempered", "reading", "copy"]:
        fits[name] = (GroupedDawidSkene(n_classes=K, worker_groups=groups, group_model=name),
                      both)
    fits["copy hg"] = (GroupedDawidSkene(n_classes=K, worker_groups=[
        "human" if group is None else group for group in groups], group_model="copy"), both)
    for name, copy_rate in [("warm hg", "worker"), ("pool hg", "group"), ("auto hg", "auto")]:
        fits[name] = (HumansAdded(GroupedDawidSkene(n_classes=K, worker_groups=groups,
                                                    copy_rate=copy_rate),
                                  fits["copy hg"][0].worker_groups), both)
    fits["selected"] = (AggregatorSelector([fits["DS all"][0], fits["copy"][0],
                                            fits["copy hg"][0]], random_state=0), both)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (model, X) in fits.items():
            out[name] = model.fit(X).predict_proba(X)
    bics = {name: fits[name][0].bic(both) for name in BIC_CANDIDATES}
    best = min(bics, key=bics.get)
    out["BIC"] = out[best]
    return out, both, "dch"[fits["selected"][0].best_index_] + BIC_CANDIDATES[best]


def run_crowd(crowd, args, crowdkit=None):
    humans, gold = gold_crowd(crowd)
    K = crowd.n_classes
    results = {name: [] for name in METHODS}
    choices = []
    saved = {}
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        models = simulate_models(gold, K, args.models, args.accuracy, args.spread, args.copy,
                                 rng)
        probas, both, choice = fit_methods(humans, models, K)
        choices.append(choice)
        for name, proba in probas.items():
            results[name].append(tie_credit(proba, gold))
        if crowdkit:
            coo = both.tocoo()
            saved[str(seed)] = np.stack([coo.row, coo.col, coo.data])
    if crowdkit:
        results["ck DS all"] = run_crowdkit(crowdkit, saved, gold, K)
    return {**{name: float(np.mean(values)) for name, values in results.items()},
            "choices": "".join(c[0] for c in choices),
            "BIC choices": "".join(c[1] for c in choices)}


def run_crowdkit(python, saved, gold, K):
    from _competitors import run_json_child

    with tempfile.TemporaryDirectory(prefix="skcrowd-model-annotators-") as tmp:
        path = Path(tmp) / "votes.npz"
        np.savez(path, gold=gold, n_classes=K, **saved)
        result = run_json_child([python, str(Path(__file__).resolve()), "--crowdkit-child",
                                 str(path)], timeout=3600)
    if "accuracies" not in result:
        print(f"  {result['crowd-kit']}")
        return [np.nan]
    return result["accuracies"]


def crowdkit_child(path):
    """crowd-kit's DawidSkene on all columns of each saved draw: its gold accuracies."""
    warnings.simplefilter("ignore")
    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    data = np.load(path)
    gold, K = data["gold"], int(data["n_classes"])
    accuracies = []
    for seed in sorted((key for key in data.files if key.isdigit()), key=int):
        task, worker, label = data[seed]
        frame = pd.DataFrame({"task": task, "worker": worker, "label": label})
        probas = DawidSkene(n_iter=100).fit(frame).probas_
        proba = probas.reindex(index=range(len(gold)), columns=range(K)).fillna(0.0)
        accuracies.append(tie_credit(proba.to_numpy(), gold))
    print(json.dumps({"accuracies": accuracies}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="*", default=None)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--models", type=int, default=4, help="number of model annotators")
    parser.add_argument("--accuracy", type=float, default=0.75)
    parser.add_argument("--spread", type=float, default=0.15)
    parser.add_argument("--copy", type=float, default=0.8,
                        help="probability that a model copies the shared reading")
    parser.add_argument("--crowdkit", default=None, metavar="PYTHON")
    parser.add_argument("--crowdkit-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.crowdkit_child:
        return crowdkit_child(args.crowdkit_child)
    folders = args.data or [f for f in default_folders() if Path(f).name != "cifar10n"]
    print(f"{args.models} models of accuracy {args.accuracy} +- {args.spread} per class, "
          f"copy {args.copy}, {args.seeds} seeds; gold accuracy")
    names = METHODS + (["ck DS all"] if args.crowdkit else [])
    header = f"{'crowd':40s}" + "".join(f"{n:>10s}" for n in names) + f"{'margin':>9s}"
    # margin: "BIC" less the better of "humans" and "models"; then the choices of "selected"
    # and "BIC" on each seed: d (DS all), c (copy), h (copy hg), w (warm hg), p (pool hg)
    print(header)
    table = {}
    for item in folders:
        crowd = resolve(item)
        row = table[crowd.name] = run_crowd(crowd, args, args.crowdkit)
        best = max(row["humans"], row["models"])
        row["margin"] = {name: row[name] - best for name in GROUPED}
        print(f"{crowd.name:40s}" + "".join(f"{row[n]:10.3f}" for n in names)
              + f"{row['margin']['BIC']:+9.3f} {row['choices']} {row['BIC choices']}",
              flush=True)
    mean = {n: float(np.mean([row[n] for row in table.values()])) for n in names}
    worst = {n: float(min(row["margin"][n] for row in table.values())) for n in GROUPED}
    print(f"{'mean':40s}" + "".join(f"{mean[n]:10.3f}" for n in names))
    for n in GROUPED:
        margins = [row["margin"][n] for row in table.values()]
        print(f"{n}: mean margin over the better of humans and models "
              f"{np.mean(margins):+.4f}, worst {worst[n]:+.4f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "crowds": table,
                                               "mean": mean, "worst_margin": worst}, indent=1))


if __name__ == "__main__":
    main()
