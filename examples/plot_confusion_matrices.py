"""
=======================================================
True and Dawid-Skene-estimated confusion matrices
=======================================================

Dawid and Skene (1979) model each worker by a confusion matrix: row ``k`` is
the distribution of the worker's answer on a task whose true class is ``k``.
Here we simulate a crowd whose matrices we know, fit
:class:`~skcrowd.aggregation.DawidSkene` on the votes alone, and draw the
true and estimated matrices of a few workers side by side with
:func:`skcrowd.plotting.plot_confusion_matrices`.

The crowd labels 2000 tasks of 4 classes, 5 votes per task from 40 workers.
Regular workers confuse each class with one other class (the "asymmetric"
pattern of Chu et al., AAAI 2021); one worker in ten is a spammer who answers
uniformly at random, and one in ten is adversarial, giving another class
systematically. EM recovers each kind from about 250 votes per worker; the
Dirichlet prior of ``DawidSkene`` (``smoothing``) keeps the rows of rarely
seen classes close to "right half of the time".
"""

# %%
# Simulate a crowd with known confusion matrices
# ----------------------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcrowd.aggregation import DawidSkene
from skcrowd.datasets import make_confusion_matrix, simulate_annotators
from skcrowd.plotting import plot_confusion_matrices, plot_vote_counts

rng = np.random.RandomState(0)
n_tasks, n_workers, n_classes = 2000, 40, 4
y_true = rng.randint(n_classes, size=n_tasks)
crowd = simulate_annotators(
    y_true, n_workers, n_classes=n_classes, accuracy=(0.5, 0.9), votes_per_task=5,
    spammers=0.1, adversarial=0.1,
    class_confusion=make_confusion_matrix(n_classes, pattern="asymmetric", random_state=0),
    random_state=0,
)
kinds, counts = np.unique(crowd.worker_type, return_counts=True)
print("workers:", ", ".join(f"{n} {kind}" for kind, n in zip(kinds, counts)))

# %%
# Fit Dawid-Skene on the votes only
# ---------------------------------
ds = DawidSkene().fit(crowd.votes)
print(f"accuracy of the DS labels: {np.mean(ds.predict(crowd.votes) == y_true):.3f}")
error = np.abs(ds.confusion_matrices_ - crowd.confusions).max(axis=(1, 2))
print(f"largest error of an estimated probability, median over workers: {np.median(error):.3f}")

# %%
# True (top) and estimated (bottom) matrices of one worker of each kind
# ---------------------------------------------------------------------
shown = [int(np.flatnonzero(crowd.worker_type == kind)[0])
         for kind in ("regular", "spammer", "adversarial")]
shown.append(int(np.flatnonzero(crowd.worker_type == "regular")[1]))
fig, axes = plt.subplots(2, len(shown), figsize=(3.4 * len(shown), 7.0), layout="constrained")
plot_confusion_matrices(crowd.confusions, workers=shown, axes=axes[0])
plot_confusion_matrices(ds, workers=shown, axes=axes[1])
for ax, j in zip(axes[0], shown):
    ax.set_title(f"worker {j} ({crowd.worker_type[j]}): true")
for ax, j in zip(axes[1], shown):
    ax.set_title(f"worker {j}: Dawid-Skene")
plt.show()

# %%
# How many votes each worker gave: the estimates rest on these counts.
plot_vote_counts(crowd.votes, per="worker")
plt.show()
