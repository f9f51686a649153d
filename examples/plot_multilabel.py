"""
===========================================================
Multi-label votes: one worker model shared by all labels
===========================================================

Thirty workers tick, among eight labels, those they see on each of 150 tasks;
each task is answered by three workers. A worker ticks a label that is on
with their own sensitivity and leaves an off label unticked with their own
specificity, the same on every label.

* :class:`~skcrowd.BinaryRelevance` aggregates each label on its own
  (here with :class:`~skcrowd.aggregation.DawidSkene`): a worker's
  reliability is estimated from one label's bits at a time;
* :class:`~skcrowd.MultiLabelDawidSkene` shares each worker's two coins
  across the labels, so all of the worker's bits estimate them.
"""

# %%
# A sparse multi-label crowd
# --------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcrowd import BinaryRelevance, MultiLabelDawidSkene
from skcrowd.aggregation import DawidSkene, MajorityVote

rng = np.random.default_rng(0)
n_tasks, n_workers, n_labels = 150, 30, 8
prevalence = np.linspace(0.05, 0.5, n_labels)
truth = (rng.random((n_tasks, n_labels)) < prevalence).astype(int)
sensitivity = rng.uniform(0.55, 0.95, n_workers)
specificity = rng.uniform(0.55, 0.95, n_workers)
votes = np.full((n_tasks, n_workers, n_labels), -1)
for i in range(n_tasks):
    for j in rng.choice(n_workers, 3, replace=False):
        u = rng.random(n_labels)
        votes[i, j] = np.where(truth[i] == 1, u < sensitivity[j], u >= specificity[j])

# %%
# Accuracy over every (task, label) bit
# -------------------------------------
models = {
    "MultiLabelDawidSkene": MultiLabelDawidSkene(),
    "BinaryRelevance(DawidSkene)": BinaryRelevance(DawidSkene()),
    "BinaryRelevance(MajorityVote)": BinaryRelevance(MajorityVote(random_state=0)),
}
for name, model in models.items():
    print(f"{name:30s} {np.mean(model.fit_predict(votes) == truth):.3f}")

# %%
# The workers' coins, recovered
# -----------------------------
shared = models["MultiLabelDawidSkene"]
fig, axes = plt.subplots(1, 2, figsize=(8, 3.6), sharex=True, sharey=True)
for ax, true, fitted, name in zip(axes, (sensitivity, specificity),
                                  (shared.sensitivity_, shared.specificity_),
                                  ("sensitivity", "specificity")):
    ax.scatter(true, fitted, s=18)
    ax.plot([0.5, 1], [0.5, 1], color="grey", lw=1)
    ax.set_xlabel(f"true {name}")
    ax.set_title(name)
axes[0].set_ylabel("fitted (MultiLabelDawidSkene)")
fig.tight_layout()
plt.show()
