"""
=============================================================
Finding ambiguous crowdsourced tasks and pruning them (WAUM)
=============================================================

Some tasks are too ambiguous to learn from: the image of a street lined with
tall buildings that one worker calls ``street`` and another
``tallbuilding``. The weighted area under the margin (WAUM, Lefort, Charlier,
Joly and Salmon, TMLR 2024) finds them. A small network is trained on one row
per vote; after every epoch the margin of each vote's label is recorded, and
the mean over epochs (the vote's AUM) is averaged over the task's votes with
weights that trust a worker where its confusion matrix says it is reliable.

This example

1. scores the LabelMe training tasks (1000 images, 1 to 3 votes each) and
   lists the most ambiguous ones with their votes;
2. compares the WAUM with the entropy of the votes, which can only take a
   handful of values with three votes per task (the paper's figure 3);
3. selects the pruning level ``alpha`` (0 included: no pruning) and CoNAL's
   regularization together with ``GridSearchCV``, scored on held-out *votes*
   only (no gold labels), through :class:`skcrowd.pruning.PrunedClassifier`.

``WAUMPruner`` is a *sampler* (``fit_resample``), not a transformer: it
drops training rows of ``X`` and ``y`` at fit time and does nothing at
prediction time, which a scikit-learn transformer cannot express.
``PrunedClassifier`` is the composition that scikit-learn's ``Pipeline`` and
``GridSearchCV`` accept; ``memory=`` on the pruner caches its margin training
so the grid over ``alpha`` trains it once per fold.

To stay under a minute on a CPU, the grid here has 3 x 2 candidates, 3
folds and 20-epoch models. The full-size search of the issue is
``{"pruner__alpha": [0.01, 0.05, 0.1], "estimator__reg_lambda": [0, 1e-5,
1e-4]}`` with ``KFold(5, shuffle=True)``: 45 CoNAL fits, which took 40 s
on their own on two shared cores (``python -m pytest --runslow`` runs it on a
simulated crowd). ``python benchmarks/waum.py --part labelme`` measures what pruning
gains on the LabelMe test set over several seeds.

Without the LabelMe folder (``../shared/data/labelme`` next to the
repository) the example runs on a simulated crowd instead.
"""

# %%
# Data: features, votes and (for evaluation only) gold labels
# ------------------------------------------------------------
# The 512 average-pooled VGG16 features reach values near 100; standardized,
# CoNAL trains the same way from seed to seed (on the raw features one seed
# in three fell 9 points in test accuracy).
import os
import tempfile
from pathlib import Path

import matplotlib

if not os.environ.get("DISPLAY") and matplotlib.get_backend().lower() != "agg":
    matplotlib.use("Agg")  # headless run
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.preprocessing import StandardScaler

from skcrowd import check_votes
from skcrowd.plotting import plot_waum_vs_entropy
from skcrowd.pruning import PrunedClassifier, WAUMPruner


try:
    SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
except NameError:  # executed without a file (e.g. in a notebook)
    SHARED_DATA = Path("../../shared/data")

if (SHARED_DATA / "labelme").is_dir():
    from skcrowd.datasets import fetch_labelme

    data = fetch_labelme(data_home=SHARED_DATA, download_if_missing=False)
    X, votes, truth = data.data, data.votes, data.target
    X_test, y_test = data.data_test, data.target_test
    class_names = np.asarray(data.class_names)
    source = "LabelMe"
else:
    from skcrowd.datasets import make_crowd_classification

    crowd = make_crowd_classification(
        1500, n_features=20, n_classes=4, n_workers=30, votes_per_task=3, random_state=0
    )
    X, votes, truth = crowd.data[:1000], crowd.votes[:1000], crowd.target[:1000]
    X_test, y_test = crowd.data[1000:], crowd.target[1000:]
    class_names = np.array([f"class {k}" for k in range(4)])
    source = "a simulated crowd"

scaler = StandardScaler().fit(X)
X = scaler.transform(X).astype(np.float32)
X_test = scaler.transform(X_test).astype(np.float32)
v = check_votes(votes)
print(f"{source}: {v.n_tasks} tasks, {v.n_workers} workers, {v.n_votes} votes")

# %%
# Score every task
# ----------------
# The default margin model is a (30, 20, 20) MLP stepped one epoch per
# ``partial_fit`` call; the workers' confusion matrices come from
# Dawid-Skene.
pruner = WAUMPruner(alpha=0.01, n_epochs=30, random_state=0).fit(X, votes)
print(f"pruned {(~pruner.support_).sum()} tasks, WAUM threshold {pruner.threshold_:.3f}")

# %%
# The most ambiguous tasks and their votes
# ----------------------------------------
indptr = v.task_indptr()
print(f"{'task':>5} {'WAUM':>7}  votes (worker: label)  [gold]")
for i in np.argsort(pruner.waum_, kind="stable")[:10]:
    given = ", ".join(
        f"{w}: {class_names[lab]}"
        for w, lab in zip(v.worker[indptr[i]:indptr[i + 1]], v.label[indptr[i]:indptr[i + 1]])
    )
    print(f"{i:>5} {pruner.waum_[i]:>7.3f}  {given}  [{class_names[truth[i]]}]")

# %%
# WAUM against the entropy of the votes
# -------------------------------------
# With at most three votes per task the vote entropy takes a handful of
# values; the WAUM ranks the tasks within each of them, from the features and
# the workers' reliability (the paper's figure 3).
ax = plot_waum_vs_entropy(pruner, votes)
ax.set_title(f"{source}: WAUM vs vote entropy")
plt.show()

# %%
# Where the gold labels are known (they are not used by the WAUM), tasks whose
# majority vote is wrong gather at low WAUM.
wrong = v.counts().argmax(axis=1) != truth
low = pruner.waum_ <= np.quantile(pruner.waum_, 0.1)
print(
    f"majority vote wrong: {wrong[low].mean():.0%} of the 10% lowest-WAUM tasks, "
    f"{wrong[~low].mean():.0%} of the others"
)

# %%
# Choose alpha and CoNAL's regularization without gold labels
# -----------------------------------------------------------
# Each candidate is scored on the held-out fold's votes (CoNAL's ``score`` is
# the tie-aware accuracy against their majority vote). ``KFold`` is shuffled:
# scikit-learn's default split for a 2-D ``y`` is not. The pruner's
# ``memory`` makes the six candidates of a fold share one margin training.
from skcrowd.neural import CoNALClassifier  # noqa: E402 (needs torch and skorch)

with tempfile.TemporaryDirectory() as cache:
    grid = GridSearchCV(
        PrunedClassifier(
            CoNALClassifier(max_epochs=20, random_state=0),
            pruner=WAUMPruner(n_epochs=20, memory=cache, random_state=0),
        ),
        {"pruner__alpha": [0, 0.01, 0.1], "estimator__reg_lambda": [0, 1e-4]},
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X, votes)

print(f"{'alpha':>6} {'reg_lambda':>10}  held-out vote accuracy")
for params, mean, std in zip(
    grid.cv_results_["params"],
    grid.cv_results_["mean_test_score"],
    grid.cv_results_["std_test_score"],
):
    print(
        f"{params['pruner__alpha']:>6} {params['estimator__reg_lambda']:>10}"
        f"  {mean:.3f} +- {std:.3f}"
    )
print("best:", grid.best_params_)

# %%
# The differences between candidates are within one standard deviation over
# the folds: on LabelMe, pruning 1 % of the tasks changes little (the
# benchmark measured a gain of 0.4 to 1.7 points in test accuracy, none of
# them significant). The refitted best model on the gold test labels:
test_accuracy = (grid.best_estimator_.predict(X_test) == y_test).mean()
print(f"test accuracy on {len(y_test)} gold labels: {test_accuracy:.3f}")
