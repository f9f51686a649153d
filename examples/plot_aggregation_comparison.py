"""
=================================================================
Comparing label aggregators as the number of votes per task grows
=================================================================

A crowd of 50 workers labels 1000 tasks of 4 classes: each worker answers
correctly with its own accuracy, drawn between 0.35 and 0.9, and a fifth of
the workers are spammers who answer at random. Every task gets the same
number of votes, from 1 to 9. We aggregate the votes with

* :class:`~skcrowd.aggregation.MajorityVote` (MV, the naive soft labels are
  the vote frequencies),
* :class:`~skcrowd.aggregation.DawidSkene` (DS, a confusion matrix per
  worker),
* :class:`~skcrowd.aggregation.WeightedDawidSkene` (WDS, votes weighted by the
  diagonals of the DS confusion matrices),
* :class:`~skcrowd.aggregation.GLAD` (a scalar ability per worker and a
  difficulty per task),

and compare the accuracy of the aggregated labels against the simulated
truth, and the calibration of their soft labels with the expected
calibration error (ECE, 15 bins, Lefort et al., TMLR 2024, appendix C).

With a single vote per task there is nothing to aggregate: every method
returns that vote, and only the confidence differs. As votes accumulate the
models that learn who is reliable pull ahead of majority vote, which counts a
spammer's vote as much as an expert's.
"""

# %%
# Simulate crowds with 1 to 9 votes per task
# ------------------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcrowd.aggregation import GLAD, DawidSkene, MajorityVote, WeightedDawidSkene
from skcrowd.datasets import simulate_annotators
from skcrowd.metrics import expected_calibration_error

rng = np.random.RandomState(0)
n_tasks, n_workers, n_classes = 1000, 50, 4
y_true = rng.randint(n_classes, size=n_tasks)
votes_per_task = [1, 2, 3, 5, 7, 9]

aggregators = {
    "MV": MajorityVote(),
    "DS": DawidSkene(),
    "WDS": WeightedDawidSkene(),
    "GLAD": GLAD(),
}
accuracy = {name: [] for name in aggregators}
ece = {name: [] for name in aggregators}
for k in votes_per_task:
    crowd = simulate_annotators(
        y_true, n_workers, n_classes=n_classes, accuracy=(0.35, 0.9), spammers=0.2,
        votes_per_task=k, random_state=k,
    )
    for name, aggregator in aggregators.items():
        proba = aggregator.fit(crowd.votes).predict_proba(crowd.votes)
        predicted = aggregator.classes_[proba.argmax(axis=1)]
        accuracy[name].append(np.mean(predicted == y_true))
        ece[name].append(expected_calibration_error(y_true, proba, labels=aggregator.classes_))

# %%
# Accuracy and calibration
# ------------------------
fig, (ax_accuracy, ax_ece) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for name in aggregators:
    ax_accuracy.plot(votes_per_task, accuracy[name], marker="o", label=name)
    ax_ece.plot(votes_per_task, ece[name], marker="o", label=name)
ax_accuracy.set(xlabel="votes per task", ylabel="accuracy of the aggregated labels",
                title="Accuracy against the simulated truth")
ax_ece.set(xlabel="votes per task", ylabel="ECE (lower is better)",
           title="Calibration of the soft labels")
ax_accuracy.legend()
plt.show()

# %%
# The numbers behind the plot:
print("votes/task " + " ".join(f"{name:>12}" for name in aggregators))
for i, k in enumerate(votes_per_task):
    print(f"{k:>10} " + " ".join(
        f"{accuracy[name][i]:6.3f}/{ece[name][i]:5.3f}" for name in aggregators))
print("(accuracy/ECE)")
