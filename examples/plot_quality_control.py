"""
=====================================================
Quality control: agreement, worker reports, spammers
=====================================================

People who run a crowdsourcing job check it the way a platform does: how
much do the workers agree (Krippendorff's alpha, Fleiss' kappa, with
confidence intervals), which workers answer at random or against the task
(spammer score of Raykar & Yu, 2012), and which tasks are still uncertain.
Here a simulated crowd of 40 workers labels 1500 tasks of 4 classes; four of
them are spammers who answer uniformly at random, two are adversarial (they
systematically give another class), and 5 % of the tasks are control tasks
whose answer is known.
"""

# %%
# The crowd, and how much its workers agree
# ------------------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcrowd import DawidSkene, MajorityVote, task_report, worker_report
from skcrowd.datasets import simulate_annotators
from skcrowd.metrics import fleiss_kappa, krippendorff_alpha
from skcrowd.plotting import plot_class_agreement, plot_worker_quality

rng = np.random.RandomState(0)
n_tasks, n_classes = 1500, 4
y_true = rng.randint(n_classes, size=n_tasks)
kinds = np.array(["regular"] * 34 + ["spammer"] * 4 + ["adversarial"] * 2)
rng.shuffle(kinds)
crowd = simulate_annotators(y_true, len(kinds), n_classes=n_classes, accuracy=(0.55, 0.95),
                            votes_per_task=(2, 5), worker_types=kinds, random_state=0)
votes = crowd.votes
known = np.where(rng.rand(n_tasks) < 0.05, y_true, -1)  # control tasks, -1: unknown

alpha = krippendorff_alpha(votes, confidence_level=0.95, random_state=0)
kappa = fleiss_kappa(votes, confidence_level=0.95, random_state=0)
print(f"Krippendorff's alpha {alpha.estimate:.3f} [{alpha.low:.3f}, {alpha.high:.3f}]")
print(f"Fleiss' kappa        {kappa.estimate:.3f} [{kappa.low:.3f}, {kappa.high:.3f}]")

# %%
# Alpha counts only the votes of tasks with two votes or more (Krippendorff's
# *pairable* values). Per class, the share of votes matched by another vote
# of the same task shows which classes the workers recognise consistently.
plot_class_agreement(votes)

# %%
# The worker report
# -----------------
# :func:`~skcrowd.quality.worker_report` reads a fitted aggregator: its
# posteriors give each worker's estimated accuracy (with an interval), its
# confusion matrices the spammer score. The control tasks give a second,
# independent accuracy.
ds = DawidSkene().fit(votes)
report = worker_report(ds, votes, known=known)
columns = ["n_votes", "accuracy", "accuracy_low", "accuracy_high", "n_known",
           "known_accuracy", "spammer_score", "below_chance", "review_rank"]
print(report.sort_values("review_rank")[columns].head(8).round(3).to_string())
print("kinds of the first 6 workers to review:",
      kinds[report.sort_values("review_rank").index[:6]].tolist())

# %%
# Adversarial workers come first in the review list, circled in red: they
# agree with the aggregate less often than their answers dealt at random
# would, by a one-sided binomial test (``below_chance``; a worker whose
# votes all agree is never flagged). Then the spammers (spammer score near
# 0), circled in orange. The adversarial workers have a *high* spammer
# score: their answers carry information that Dawid-Skene's confusion
# matrices turn around.
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
plot_worker_quality(report, n_review=6, ax=axes[0])
plot_worker_quality(report, accuracy="known_accuracy", n_review=6, ax=axes[1])

# %%
# How close are the estimates? The simulation knows each worker's true
# accuracy on the tasks they answered.
mix = np.zeros((len(kinds), n_classes))
answered = votes >= 0
for j in range(len(kinds)):
    mix[j] = np.bincount(y_true[answered[:, j]], minlength=n_classes) / answered[:, j].sum()
truth = np.einsum("jk,jkk->j", mix, crowd.confusions)
covered = (report["accuracy_low"] <= truth) & (truth <= report["accuracy_high"])
error = np.abs(report["accuracy"] - truth).mean()
print(f"mean absolute error of the estimated accuracy: {error:.3f}; "
      f"95 % intervals covering the truth: {covered.mean():.0%}")

# %%
# Removing the workers to review
# ------------------------------
# Dropping the first six workers of the review list (their votes become
# missing) helps majority vote, which weighs every vote alike. It does not
# help Dawid-Skene: its confusion matrices already ignore the spammers and
# turn the adversarial workers' answers around, so their votes were
# information. Review a worker before banning them; refit the model you use.
flagged = report.sort_values("review_rank").index[:6]
cleaned = votes.copy()
cleaned[:, flagged] = -1
for name, model in [("majority vote", MajorityVote(random_state=0)),
                    ("Dawid-Skene", DawidSkene())]:
    before = np.mean(model.fit(votes).predict(votes) == y_true)
    after = np.mean(model.fit(cleaned).predict(cleaned) == y_true)
    print(f"{name:<14} accuracy {before:.3f} -> {after:.3f} without the 6 workers")

# %%
# Tasks that are still uncertain
# ------------------------------
# :func:`~skcrowd.quality.task_report` gives the entropy of each task's
# posterior and the agreement of its votes: the tasks to send for more
# votes are at the top.
tasks = task_report(ds, votes, known=known)
print(tasks.sort_values("entropy", ascending=False).head(5).round(3).to_string())
uncertain = tasks["entropy"] > 0.5
print(f"{uncertain.sum()} tasks with a posterior entropy above 0.5 nats; "
      f"accuracy {np.mean(tasks['label'][uncertain] == y_true[uncertain]):.2f} there, "
      f"{np.mean(tasks['label'][~uncertain] == y_true[~uncertain]):.2f} elsewhere")
plt.show()
