"""
===========================================================
Finding spammers with MACE and one-coin Dawid-Skene
===========================================================

A crowd of 60 workers labels 2000 tasks of 4 classes, 5 votes per task, and
a few workers give many more votes than the others. Among the most active
workers, two are spammers: one answers at random, one always gives the same
label. The other workers answer correctly with their own accuracy, between
0.5 and 0.95, and otherwise pick a wrong class at random.

* :class:`~skcrowd.aggregation.MACE` (Hovy et al., 2013) models each worker
  as knowing the answer with probability ``competences_`` and otherwise
  spamming from its own label distribution ``spam_distributions_``;
* :class:`~skcrowd.aggregation.OneCoinDawidSkene` gives each worker one
  accuracy, its errors spread uniformly over the other classes;
* both fit their priors to the crowd (``competence_prior_``,
  ``accuracy_prior_``): how far a worker with few votes is pulled toward the
  typical worker is set by the spread of the others.

Both find the two spammers, whatever their strategy (MACE: competence near
0; one-coin: accuracy near chance), and both beat majority vote, which
counts every vote of the prolific spammers.
"""

# %%
# A crowd with prolific spammers
# ------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcrowd.aggregation import MACE, DawidSkene, MajorityVote, OneCoinDawidSkene

rng = np.random.default_rng(0)
n_tasks, n_workers, K = 2000, 60, 4
y_true = rng.integers(K, size=n_tasks)
activity = 1.0 / np.arange(1, n_workers + 1)  # worker 0 is the most active
accuracy = rng.uniform(0.5, 0.95, size=n_workers)
random_spammer, constant_spammer = 1, 2
votes = np.full((n_tasks, n_workers), -1)
for i in range(n_tasks):
    for j in rng.choice(n_workers, size=5, replace=False, p=activity / activity.sum()):
        if j == random_spammer:
            votes[i, j] = rng.integers(K)
        elif j == constant_spammer:
            votes[i, j] = 3
        elif rng.random() < accuracy[j]:
            votes[i, j] = y_true[i]
        else:
            votes[i, j] = (y_true[i] + rng.integers(1, K)) % K
n_votes = (votes >= 0).sum(axis=0)
print(f"votes of the spammers: {n_votes[random_spammer]} and {n_votes[constant_spammer]} "
      f"(median worker: {np.median(n_votes):.0f})")

# %%
# Aggregate, and compare with the truth
# -------------------------------------
models = {"MV": MajorityVote(random_state=0), "DS": DawidSkene(),
          "one-coin DS": OneCoinDawidSkene(), "MACE": MACE()}
for name, model in models.items():
    print(f"{name:>12}: accuracy {np.mean(model.fit(votes).predict(votes) == y_true):.3f}")
mace, one_coin = models["MACE"], models["one-coin DS"]
spammers = [random_spammer, constant_spammer]
print("MACE competences of the spammers:", mace.competences_[spammers].round(3))
print("their one-coin accuracies (chance is 0.25):", one_coin.worker_accuracies_[spammers].round(3))
print("MACE spam distribution of the constant spammer:",
      mace.spam_distributions_[constant_spammer].round(3))

# %%
# Estimated worker quality against the simulation
# -----------------------------------------------
# A regular worker of accuracy ``p`` whose errors are uniform is, in MACE's
# terms, a worker who knows the answer with probability ``1 - K (1 - p) / (K -
# 1)`` and otherwise answers uniformly at random; a spammer never knows it
# (competence 0) and is right by chance (accuracy ``1 / K``).
spammer = np.isin(np.arange(n_workers), spammers)
competence = np.where(spammer, 0.0, 1 - K * (1 - accuracy) / (K - 1))
right = np.where(spammer, 1 / K, accuracy)
size = 10 + n_votes / 5  # marker area grows with the worker's votes
fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for ax, simulated, estimate, title in [
        (axes[0], competence, mace.competences_, "MACE competences_"),
        (axes[1], right, one_coin.worker_accuracies_, "OneCoinDawidSkene worker_accuracies_")]:
    ax.scatter(simulated[~spammer], estimate[~spammer], s=size[~spammer], label="workers")
    ax.scatter(simulated[spammer], estimate[spammer], s=size[spammer], marker="x", color="C3",
               label="spammers")
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.5)
    ax.set(xlabel="simulated", ylabel="estimated", title=title)
axes[0].legend()
plt.show()
