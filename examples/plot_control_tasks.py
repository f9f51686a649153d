"""
=====================================================
Control tasks: anchoring EM with a few known answers
=====================================================

Crowdsourcing jobs are often seeded with *control tasks* whose answer is
known. skcrowd's EM aggregators take their labels as ``y``
(``fit_predict(votes, y=known)``, ``-1`` where unknown): a known task keeps
its label in every E-step, and EM starts from the model fitted on the known
tasks alone, which anchors the worker models.

We hand a share of the tasks (0 to 20 %) to
:class:`~skcrowd.aggregation.DawidSkene` and :class:`~skcrowd.aggregation.GLAD`
as known tasks and measure the accuracy on the *other* tasks, three draws of
the known tasks per share on the simulated crowds, one on the real ones.
:class:`~skcrowd.aggregation.MajorityVote`, which has no worker model to
anchor, is the reference.

1. On simulated crowds where 60 % of the workers are adversarial (each
   relabels the classes with its own permutation), majority vote and
   unsupervised EM follow the adversarial majority: with two classes EM
   labels almost every task wrong. 2 % of known tasks turn it around.
2. On the real crowds of the shared data folder (``../shared/data`` next to
   the repository; without it, on two simulated crowds whose workers are
   mostly right), EM is not label-switched, and known tasks change the
   accuracy on the other tasks little. ``benchmarks/control_tasks.py`` runs
   both with more draws, and WDS.
"""

# %%
# Accuracy on the tasks that are not known
# ----------------------------------------
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from skcrowd.aggregation import GLAD, DawidSkene, MajorityVote
from skcrowd.datasets import load_crowd_dataset, simulate_annotators

SHARES = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2]
DRAWS = 3
METHODS = {"MajorityVote": MajorityVote, "DawidSkene": DawidSkene, "GLAD": GLAD}


def accuracy_curves(votes, gold, n_classes, shares=SHARES, draws=DRAWS):
    """Mean accuracy on the gold tasks not known, per method and share of known tasks."""
    has_gold = np.flatnonzero(gold >= 0)
    curves = {name: np.zeros(len(shares)) for name in METHODS}
    for draw in range(draws):
        rng = np.random.default_rng(draw)
        for s, share in enumerate(shares):
            known = np.full(len(gold), -1)
            chosen = rng.choice(has_gold, int(round(share * len(has_gold))), replace=False)
            known[chosen] = gold[chosen]
            others = (gold >= 0) & (known < 0)
            for name, method in METHODS.items():
                model = method(n_classes=n_classes)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # ConvergenceWarning on hard crowds
                    if name == "MajorityVote":
                        labels = model.set_params(random_state=0).fit_predict(votes)
                    else:
                        labels = model.fit_predict(votes, known)
                curves[name][s] += np.mean(labels[others] == gold[others]) / draws
    return curves


def simulated(n_classes, adversarial, seed=0):
    truth = np.random.default_rng(seed).integers(n_classes, size=1000)
    crowd = simulate_annotators(truth, 30, n_classes=n_classes, adversarial=adversarial,
                                accuracy=(0.7, 0.9), votes_per_task=5, random_state=seed)
    return crowd.votes, truth, n_classes


def plot(ax, curves, title, shares=SHARES):
    for name, curve in curves.items():
        ax.plot(100 * np.array(shares), curve, marker="o", label=name)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("known tasks (%)")
    ax.grid(alpha=0.3)


# %%
# Label-switched crowds
# ---------------------
fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
for ax, K in zip(axes, (2, 3)):
    curves = accuracy_curves(*simulated(K, adversarial=0.6))
    plot(ax, curves, f"simulated, K={K}, 60 % adversarial workers")
    print(f"K={K}: " + ", ".join(
        f"{name} {curve[0]:.2f} -> {curve[SHARES.index(0.02)]:.2f}"
        for name, curve in curves.items()) + " (0 -> 2 % known)")
axes[0].set_ylabel("accuracy on the other tasks")
axes[0].legend(fontsize=8)
fig.tight_layout()

# %%
# Real crowds
# -----------
try:
    SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
except NameError:  # run in a notebook
    SHARED_DATA = Path("../../shared/data")
crowds = {}
if SHARED_DATA.is_dir():
    for folder in sorted(SHARED_DATA.iterdir()):
        if (folder / "truth.csv").is_file() and folder.name != "cifar10n":  # unreliable ids
            data = load_crowd_dataset(folder, features=None, sparse=True)
            crowds[folder.name] = (data.votes, data.target, len(data.class_names))
if not crowds:
    crowds = {"simulated, K=3, 10 % adversarial": simulated(3, 0.1, seed=1),
              "simulated, K=4, no adversary": simulated(4, 0.0, seed=2)}

n_cols = 3
n_rows = -(-len(crowds) // n_cols)
fig, axes = plt.subplots(n_rows, n_cols, figsize=(11, 2.9 * n_rows), squeeze=False)
# one draw of fewer shares per crowd, so that the page builds in seconds (the benchmark
# script runs every share, three draws)
REAL_SHARES = [0.0, 0.02, 0.05, 0.2]
for ax, (name, crowd) in zip(axes.ravel(), crowds.items()):
    curves = accuracy_curves(*crowd, shares=REAL_SHARES, draws=1)
    plot(ax, curves, name, shares=REAL_SHARES)
    print(f"{name}: DS {curves['DawidSkene'][0]:.3f} -> {curves['DawidSkene'][-1]:.3f} "
          f"with 20 % known (MV {curves['MajorityVote'][0]:.3f})")
for ax in axes.ravel()[len(crowds):]:
    ax.set_visible(False)
axes[0, 0].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %%
# On every real crowd here the curves are nearly flat: Dawid-Skene already
# estimates the workers from many votes each, and the errors left are tasks
# the crowd itself gets wrong. Known tasks pay off where the crowd's
# majority cannot be trusted (adversarial or colluding workers, a confusing
# class most workers swap): there a few percent of them decide whether EM
# labels the tasks or their permutation. ``predict_proba(votes)`` still gives
# the model's posterior from the votes alone, also on the known tasks, so
# :func:`skcrowd.quality.worker_report` with ``known=`` can check each worker
# against them.
