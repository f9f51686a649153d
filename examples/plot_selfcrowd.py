"""
===================================================================
Self-training a crowd layer with distribution-aware pseudo-labels
===================================================================

On LabelMe each image has 1 to 3 votes from 59 workers: 2,547 of the
59,000 (image, worker) pairs are observed. Self-Crowd (Shi, Li and Huang,
"Learning from crowds with sparse and imbalanced annotations") fills the
others in: a crowd-layer network predicts what each worker *would* have
answered on the images it did not see, the most confident of these
predictions are added as pseudo-annotations, and the network is retrained.

Which predictions to add matters. Taking the lowest-entropy ones
(Self-Crowd_c) favours the classes the model already predicts most, so the
annotations drift towards them and accuracy falls; taking random ones
(Self-Crowd_r) adds noise. Self-Crowd splits the ``M`` additions into
per-class quotas inversely proportional to how often each class is
predicted, which keeps the annotations balanced.

This example

1. runs the three selection rules for a few rounds and plots the test
   accuracy and the imbalance ratio ``R = (N_max - N_min) / N`` of the
   annotations (the paper's figure 3);
2. removes part of the observed votes and compares the plain crowd layer
   with Self-Crowd run unchecked (the paper's loop) and checked (the
   default: every round scored on held-out tasks' votes, a round that lowers
   the score undone, and the loop stopped there).

``benchmarks/selfcrowd.py`` runs both experiments with more rounds and
seeds. This example takes about two minutes on a CPU. Without the
LabelMe folder (``../shared/data/labelme`` next to the repository) it runs
on a simulated crowd instead, with imbalanced *true* classes: there every
unchecked rule lowers the accuracy. Pseudo-annotations are the model's own
predictions, so they can only help where they regularize a model fitted to
few noisy votes (LabelMe); and Self-Crowd's quotas push the annotations
towards balanced classes, which is wrong when the truth is imbalanced. The
held-out check is what keeps the default from ending below the crowd layer
there.
"""

# %%
# Data: features, sparse votes, and gold labels for evaluation only
# ------------------------------------------------------------------
import os
from pathlib import Path

import matplotlib

if not os.environ.get("DISPLAY") and matplotlib.get_backend().lower() != "agg":
    matplotlib.use("Agg")  # headless run
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skcrowd import SelfCrowdClassifier
from skcrowd.datasets import fetch_labelme, simulate_annotators
from skcrowd.metrics import imbalance_ratio
from skcrowd.neural import CrowdLayerClassifier


try:
    SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
except NameError:  # run in a notebook
    SHARED_DATA = Path("../../shared/data")

if (SHARED_DATA / "labelme").is_dir():
    labelme = fetch_labelme(data_home=SHARED_DATA, download_if_missing=False)
    votes, truth, y_test = labelme.votes, labelme.target, labelme.target_test
    scaler = StandardScaler().fit(labelme.data)
    X = scaler.transform(labelme.data).astype(np.float32)
    X_test = scaler.transform(labelme.data_test).astype(np.float32)
    M = 5000  # pseudo-annotations per round (the paper adds 10,000)
else:
    # 4 imbalanced classes, 30 workers of accuracy 0.5-0.9, 2 or 3 votes per task
    X_all, y_all = make_classification(
        2000, n_features=20, n_informative=10, n_classes=4, weights=[0.55, 0.25, 0.12, 0.08],
        class_sep=2.0,
        random_state=0,
    )
    X, X_test, truth, y_test = train_test_split(X_all, y_all, train_size=1000, random_state=0)
    X, X_test = X.astype(np.float32), X_test.astype(np.float32)
    votes = simulate_annotators(
        truth, 30, accuracy=(0.5, 0.9), votes_per_task=(2, 3), random_state=0
    ).votes
    M = 2500

print(f"{votes.shape[0]} tasks, {votes.shape[1]} workers, {(votes >= 0).sum()} votes; "
      f"R of the observed votes = {imbalance_ratio(votes):.3f}")

# %%
# The crowd model, its settings chosen once
# -----------------------------------------
# Self-Crowd's default crowd model is skcrowd's crowd layer, whose ``lr="auto"``
# and ``weight_decay="auto"`` are chosen at each fit on the held-out tasks'
# votes (successive halving: about five fits' time). On one crowd they need
# choosing once: the crowd layer fitted on the observed votes records its
# choice (``lr_``, ``weight_decay_``), and every run below trains a crowd layer
# with those settings.
chosen = CrowdLayerClassifier(random_state=0).fit(X, votes)
print(f"chosen on the observed votes: lr={chosen.lr_}, weight_decay={chosen.weight_decay_}")
crowd_model = CrowdLayerClassifier(lr=chosen.lr_, weight_decay=chosen.weight_decay_)

# %%
# Three selection rules
# ---------------------
# The paper's loop, every round kept: ``validation_fraction=None``.
# ``fit(..., X_val=, y_val=)`` records the accuracy of the model of every
# round in ``history_`` (round 0 is the crowd layer on the observed votes
# alone); it does not influence the fit. The crowd model, an MLP bottleneck
# with a crowd layer, is refitted in every round.
N_ROUNDS = 5
names = {"distribution": "Self-Crowd", "confidence": "Self-Crowd_c", "random": "Self-Crowd_r"}
labels = {"distribution": "Self-Crowd", "confidence": "Self-Crowd$_c$",
          "random": "Self-Crowd$_r$"}
histories = {}
for rule in names:
    clf = SelfCrowdClassifier(crowd_model, n_iterations=N_ROUNDS, n_pseudo=M, selection=rule,
                              validation_fraction=None, random_state=0)
    clf.fit(X, votes, X_val=X_test, y_val=y_test)
    histories[rule] = clf.history_
    print(f"{names[rule]:>15}: test accuracy "
          + " ".join(f"{h['valid_accuracy']:.3f}" for h in clf.history_))

fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
for rule, history in histories.items():
    rounds = [h["iteration"] for h in history]
    axes[0].plot(rounds, [h["valid_accuracy"] for h in history], "o-", label=labels[rule])
    axes[1].plot(rounds[1:], [h["imbalance_ratio_selected"] for h in history[1:]], "o-",
                 label=labels[rule])
    axes[2].plot(rounds, [h["imbalance_ratio_combined"] for h in history], "o-",
                 label=labels[rule])
axes[2].axhline(imbalance_ratio(votes), color="k", label="observed votes")
axes[2].axhline(imbalance_ratio(truth), color="k", ls="--", label="gold labels")
titles = ("(a) test accuracy", "(b) R of the selected pseudo-annotations",
          "(c) R of observed + selected")
for ax, title in zip(axes, titles):
    ax.set(title=title, xlabel="self-training round")
axes[0].legend()
axes[2].legend(fontsize="small")
fig.tight_layout()

# %%
# Sparser crowds, checked and unchecked
# -------------------------------------
# Remove a fraction ``p`` of the observed votes at random. The unchecked loop
# (round 0 is the crowd layer trained on the votes left) runs three rounds
# whatever they do; the checked one, Self-Crowd's default, holds 20 % of the
# tasks out, keeps the round whose paired gain on their votes has the best
# 90 % lower bound above zero (stopping at a round surely below the start),
# confirms it on two fresh fits (with and without its pseudo-annotations:
# ``final_check_``), then refits on every task; unconfirmed, it ends at the
# crowd layer on the votes alone. One seed per level here;
# ``benchmarks/selfcrowd.py`` averages five.
levels = [0.0, 0.5, 0.9]
crowd_layer, unchecked, checked = [], [], []
observed = np.flatnonzero(votes.ravel() >= 0)
for p in levels:
    sparse_votes = votes.copy()
    drop = np.random.RandomState(1).choice(observed, int(p * len(observed)), replace=False)
    sparse_votes.ravel()[drop] = -1
    clf = SelfCrowdClassifier(crowd_model, n_iterations=3, n_pseudo=2 * M,
                              validation_fraction=None, random_state=0)
    clf.fit(X, sparse_votes, X_val=X_test, y_val=y_test)
    crowd_layer.append(clf.history_[0]["valid_accuracy"])
    unchecked.append(clf.history_[-1]["valid_accuracy"])
    clf = SelfCrowdClassifier(crowd_model, n_iterations=3, n_pseudo=2 * M, random_state=0)
    clf.fit(X, sparse_votes)
    checked.append(np.mean(clf.predict(X_test) == y_test))
    print(f"p = {p:.1f}: crowd layer {crowd_layer[-1]:.3f}, Self-Crowd unchecked "
          f"{unchecked[-1]:.3f}, checked {checked[-1]:.3f} ({clf.n_iter_} round(s) kept: "
          + ", ".join(h["status"] for h in clf.history_[1:]) + ")")

fig, ax = plt.subplots(figsize=(5, 3.8))
ax.plot(levels, crowd_layer, "o-", label="crowd layer")
ax.plot(levels, unchecked, "o-", label="Self-Crowd, unchecked (3 rounds)")
ax.plot(levels, checked, "o-", label="Self-Crowd, checked (default)")
ax.set(xlabel="fraction p of the observed votes removed", ylabel="test accuracy",
       title="Sparsity")
ax.legend()
fig.tight_layout()
plt.show()
