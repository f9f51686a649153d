"""
==========================================================
Model annotators among the humans: soft votes, not argmax
==========================================================

Five human workers label 40 % of 600 tasks of 3 classes each, right 65 % of
the time. Three classifiers label every task with ``predict_proba``-like
probability vectors that are *calibrated*: drawn from a Dirichlet around the
truth, so that a vector ``q`` is right with probability ``q_k`` on class ``k``,
and the most probable class is right 70 % of the time.

:func:`skcrowd.soft_votes` puts the humans' votes matrix and the models'
arrays into one :class:`~skcrowd.SoftVotes` (a human's vote is a one-hot
vector). :class:`~skcrowd.aggregation.DawidSkene` reads a soft vote as
virtual evidence on the answer the model would have given,
``p(q | true class k) = sum_l q_l pi[k, l]``, and learns each model's
confusion matrix like a human's. We compare it with the same crowd where each
model gives only its most probable class (``SoftVotes.harden``), and with the
humans alone, as the models' accuracy grows.
"""

# %%
# Simulate the crowd
# ------------------
import matplotlib.pyplot as plt
import numpy as np

from skcrowd import soft_votes
from skcrowd.aggregation import DawidSkene

n_tasks, K = 600, 3
rng = np.random.RandomState(0)
truth = rng.randint(K, size=n_tasks)
humans = np.full((n_tasks, 5), -1)
for j in range(5):
    seen = rng.rand(n_tasks) < 0.4
    wrong = (truth + rng.randint(1, K, n_tasks)) % K
    humans[seen, j] = np.where(rng.rand(n_tasks) < 0.65, truth, wrong)[seen]


def calibrated(alpha):
    """One calibrated vector per task: Dirichlet(alpha + one-hot(truth))."""
    draws = rng.standard_gamma(alpha + np.eye(K)[truth])
    return draws / draws.sum(axis=1, keepdims=True)


# %%
# Aggregate with and without the probabilities
# --------------------------------------------
# A smaller ``alpha`` gives sharper vectors: more accurate models.
alphas = [3.0, 1.5, 0.8, 0.5, 0.3, 0.15]
model_acc, soft_acc, hard_acc = [], [], []
humans_acc = np.mean(DawidSkene().fit(humans).predict(humans)[(humans >= 0).any(axis=1)]
                     == truth[(humans >= 0).any(axis=1)])
for alpha in alphas:
    models = [calibrated(alpha) for _ in range(3)]
    model_acc.append(np.mean([np.mean(m.argmax(axis=1) == truth) for m in models]))
    sv = soft_votes(humans, models, classes=np.arange(K))
    soft_acc.append(np.mean(DawidSkene().fit(sv).predict(sv) == truth))
    hard = sv.harden()
    hard_acc.append(np.mean(DawidSkene().fit(hard).predict(hard) == truth))
    print(f"models' argmax accuracy {model_acc[-1]:.2f}: soft votes {soft_acc[-1]:.3f}, "
          f"hardened {hard_acc[-1]:.3f}")

# %%
# Plot
# ----
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(model_acc, soft_acc, "o-", label="humans + models' soft votes")
ax.plot(model_acc, hard_acc, "s--", label="humans + models' argmax")
ax.axhline(humans_acc, color="gray", ls=":", label="humans only (tasks they labelled)")
ax.set_xlabel("accuracy of each model's most probable class")
ax.set_ylabel("DawidSkene accuracy")
ax.legend()
ax.set_title("Calibrated probabilities carry more than their argmax")
fig.tight_layout()
plt.show()
