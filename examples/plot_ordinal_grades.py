"""
=====================================================
Ordinal grades: a latent-score prior for Dawid-Skene
=====================================================

Workers grade 600 tasks on a 0-4 scale, five grades per task. Each worker scores a task of true
grade ``k`` as ``k + bias + noise`` and gives the nearest grade, so their mistakes are mostly one
grade off, and a biased worker is off in one direction. Nominal
:class:`~skcrowd.aggregation.DawidSkene` learns a free 5 x 5 confusion matrix per worker from
about 50 votes; :class:`~skcrowd.aggregation.OrdinalDawidSkene` draws each matrix towards the
worker's latent-score model (two parameters: bias and noise). We compare the aggregated grades
and draw one worker's matrices.
"""

# %%
# A crowd of biased, noisy graders
# --------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcrowd.aggregation import DawidSkene, OrdinalDawidSkene

rng = np.random.default_rng(0)
n_tasks, n_workers, K = 600, 60, 5
weights = np.linspace(3.0, 1.0, K)
truth = rng.choice(K, size=n_tasks, p=weights / weights.sum())
bias = rng.normal(0, 0.5, n_workers)
noise = np.exp(rng.normal(np.log(0.7), 0.5, n_workers))
votes = np.full((n_tasks, n_workers), -1)
for i in range(n_tasks):
    who = rng.choice(n_workers, 5, replace=False)
    score = truth[i] + bias[who] + rng.normal(size=5) * noise[who]
    votes[i, who] = np.clip(np.rint(score), 0, K - 1)

# %%
# Aggregate
# ---------
ratings = np.where(votes >= 0, votes, np.nan)
median = np.floor(np.nanmedian(ratings, axis=1) + 0.5).astype(int)
ds = DawidSkene().fit(votes)
ods = OrdinalDawidSkene().fit(votes)
for name, grades in (("median", median), ("DawidSkene", ds.predict(votes)),
                     ("OrdinalDawidSkene", ods.predict(votes))):
    print(f"{name:>18}: accuracy {np.mean(grades == truth):.3f}, "
          f"MAE {np.mean(np.abs(grades - truth)):.3f} grades")
print("bias recovered: correlation", round(float(np.corrcoef(ods.biases_, bias)[0, 1]), 2))

# %%
# One worker's confusion matrices
# -------------------------------
# The worker with the largest bias: the nominal matrix has empty and noisy rows (few votes per
# true grade); the ordinal one keeps the shifted band of the latent-score model.
j = int(np.argmax(bias))
fig, axes = plt.subplots(1, 3, figsize=(11, 3.6))
for ax, (title, matrix) in zip(axes, [
        ("DawidSkene", ds.confusion_matrices_[j]),
        ("OrdinalDawidSkene", ods.confusion_matrices_[j]),
        ("latent-score model", ods.latent_confusions_[j])]):
    ax.imshow(matrix, vmin=0, vmax=1, cmap="Blues")
    ax.set(title=title, xlabel="grade given", ylabel="true grade", xticks=range(K),
           yticks=range(K))
fig.suptitle(f"worker {j}: bias {bias[j]:+.2f}, noise {noise[j]:.2f} "
             f"({int((votes[:, j] >= 0).sum())} votes)")
fig.tight_layout()
plt.show()
