"""
======================================================
Aggregating continuous ratings: biased, noisy workers
======================================================

Crowds also rate: a 0-100 emotion strength, a 1-10 movie score. Here 40 workers rate 400 tasks
whose true rating we know; each worker has a bias (rates everything a little high or low) and a
noise level, and some rate only a handful of tasks. We aggregate the ratings with the mean, the
median, :class:`~skcrowd.aggregation.CATD` and :class:`~skcrowd.aggregation.BiasPrecisionEM`,
and draw each worker's fitted bias and noise against the truth.

``BiasPrecisionEM`` models worker ``j``'s rating of task ``i`` as ``z_i + b_j`` plus Gaussian
noise of precision ``lambda_j`` and fits them by EM. Its Gamma prior on the precisions is
chosen by evidence, so a worker with three ratings that happen to agree with the others is not
taken for an oracle: the prior pulls them towards the crowd's typical precision.
"""

# %%
# A crowd with known workers
# --------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcrowd.aggregation import CATD, BiasPrecisionEM, MeanRating, MedianRating

rng = np.random.default_rng(0)
n_tasks, n_workers = 400, 40
truth = rng.normal(50, 20, n_tasks)
noise = rng.choice([3.0, 8.0, 25.0], n_workers, p=[0.4, 0.4, 0.2])
bias = rng.normal(0, 6, n_workers)
bias -= np.average(bias, weights=1 / noise ** 2)  # the crowd's shared offset is not observable
ratings = truth[:, None] + bias + rng.normal(size=(n_tasks, n_workers)) * noise
# each worker rates a share of the tasks: a few rate 1 %, most 10-25 %
share = rng.choice([0.01, 0.1, 0.25], n_workers, p=[0.2, 0.4, 0.4])
ratings[rng.random((n_tasks, n_workers)) > share] = np.nan
n_ratings = (~np.isnan(ratings)).sum(axis=0)
print(f"{int(n_ratings.sum())} ratings; per task: "
      f"{np.nanmin((~np.isnan(ratings)).sum(1))}-{(~np.isnan(ratings)).sum(1).max()}; "
      f"per worker: {n_ratings.min()}-{n_ratings.max()}")

# %%
# Aggregate
# ---------
models = {
    "mean": MeanRating(),
    "median": MedianRating(),
    "CATD": CATD(),
    "BiasPrecisionEM": BiasPrecisionEM(),
}
mae = {}
for name, model in models.items():
    prediction = model.fit(ratings).predict(ratings)
    mae[name] = np.abs(prediction - truth).mean()
    print(f"{name:>16}: MAE {mae[name]:.2f}, R^2 {model.score(ratings, truth):.3f}")
em = models["BiasPrecisionEM"]
print(f"precision prior chosen by evidence: {em.precision_prior_strength_:.1f} pseudo-ratings, "
      f"typical noise sd {1 / np.sqrt(em.precision_prior_mean_):.1f}")

# %%
# The fitted workers against the truth
# ------------------------------------
# Point areas grow with the number of ratings of the worker. Workers with a handful of ratings
# sit near the crowd's typical noise level: the prior's pull.
fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
size = 8 + 2 * n_ratings
axes[0].scatter(bias, em.biases_, s=size, alpha=0.6)
axes[0].axline((0, 0), slope=1, color="grey", lw=1)
axes[0].set(xlabel="true bias", ylabel="fitted bias", title="biases")
axes[1].scatter(noise, 1 / np.sqrt(em.precisions_), s=size, alpha=0.6)
axes[1].axline((3, 3), slope=1, color="grey", lw=1)
axes[1].set(xscale="log", yscale="log", xlabel="true noise sd", ylabel="fitted noise sd",
            title="noise (1 / sqrt(precision))")
axes[2].bar(list(mae), list(mae.values()), color=["grey", "grey", "tab:orange", "tab:blue"])
axes[2].set(ylabel="MAE against the truth", title="aggregated ratings")
axes[2].tick_params(axis="x", rotation=20)
fig.tight_layout()
plt.show()

# %%
# New tasks
# ---------
# The fitted workers aggregate tasks they rate later, with a posterior standard deviation per
# task (smaller where precise workers rated):
later = truth[:5, None] + bias + rng.normal(size=(5, n_workers)) * noise
later[rng.random(later.shape) > 0.15] = np.nan
value, std = em.predict(later, return_std=True)
for v, s, t in zip(value, std, truth[:5]):
    print(f"predicted {v:6.1f} +- {s:4.1f}   true {t:6.1f}")
