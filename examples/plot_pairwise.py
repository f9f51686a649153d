"""
==========================================================
Pairwise comparisons: an arena leaderboard with intervals
==========================================================

Twelve models answer the same prompts; crowd workers see two answers side by
side and say which is better, as in arena-style evaluations. Each model has a
true log-score; a worker prefers model ``i`` to ``j`` with probability
``sigmoid(s_i - s_j)``, except that a fifth of the workers answer at random
and a tenth answer the opposite of what they think.

* :class:`~skcrowd.BradleyTerry` counts every answer alike;
* :class:`~skcrowd.CrowdBT` fits a reliability per worker with the scores, so
  that random workers stop counting and adversaries count reversed.

Both give each score an interval (:meth:`~skcrowd.BradleyTerry.score_intervals`)
and the pairs whose comparison would teach them most
(:meth:`~skcrowd.BradleyTerry.next_pairs`).
"""

# %%
# A simulated arena
# -----------------
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import spearmanr

from skcrowd import BradleyTerry, CrowdBT

rng = np.random.default_rng(0)
n_models, n_workers, n_votes = 12, 60, 1500
names = np.array([f"model-{chr(65 + m)}" for m in range(n_models)])
truth = pd.Series(np.sort(rng.normal(0, 1, n_models))[::-1], index=names)
kind = rng.permutation(np.repeat(["honest", "random", "adversary"], [42, 12, 6]))
worker = rng.integers(0, n_workers, n_votes)
left = rng.integers(0, n_models, n_votes)
right = (left + rng.integers(1, n_models, n_votes)) % n_models
prefers_left = rng.random(n_votes) < expit(truth.iloc[left].to_numpy()
                                           - truth.iloc[right].to_numpy())
prefers_left = np.select([kind[worker] == "random", kind[worker] == "adversary"],
                         [rng.random(n_votes) < 0.5, ~prefers_left], prefers_left)
comparisons = pd.DataFrame({"worker": worker, "left": names[left], "right": names[right],
                            "label": np.where(prefers_left, names[left], names[right])})
comparisons.head()

# %%
# Scores with 95 % intervals
# --------------------------
# The Laplace intervals come from the curvature of the log-posterior at the
# fitted scores; ``method="bootstrap"`` refits on resampled comparisons instead.
fits = {"BradleyTerry": BradleyTerry().fit(comparisons),
        "CrowdBT": CrowdBT().fit(comparisons)}
fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), sharey=True)
for ax, (name, model) in zip(axes, fits.items()):
    table = model.score_intervals(alpha=0.05).loc[truth.index]
    rho = spearmanr(table.score, truth)[0]
    y = np.arange(n_models)
    ax.errorbar(table.score, y, xerr=[table.score - table.lower, table.upper - table.score],
                fmt="o", capsize=3, label="fitted (95 % interval)")
    ax.plot(truth - truth.mean(), y, "kx", label="true (centred)")
    ax.set_title(f"{name}: Spearman {rho:.2f}")
    ax.set_xlabel("log-score")
axes[0].set_yticks(np.arange(n_models), truth.index)
axes[0].invert_yaxis()
axes[0].legend(loc="lower right")
fig.tight_layout()

# %%
# The workers CrowdBT found
# -------------------------
# Honest workers get a reliability near 1, random ones near 0.5, adversaries
# below 0.5.
eta = fits["CrowdBT"].reliabilities_.sort_index()
fig, ax = plt.subplots(figsize=(6, 3))
for k, colour in zip(["honest", "random", "adversary"], ["C0", "C1", "C3"]):
    ax.hist(eta[kind[eta.index] == k], bins=np.linspace(0, 1, 21), color=colour, alpha=0.7,
            label=k)
ax.set_xlabel("reliability (CrowdBT)")
ax.set_ylabel("workers")
ax.legend()
fig.tight_layout()

# %%
# What to compare next
# --------------------
# The pairs of close models whose order is least certain.
fits["CrowdBT"].next_pairs(5)
