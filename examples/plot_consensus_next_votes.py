"""
=====================================================================
Consensus aided by a classifier, and which task gets the next vote
=====================================================================

Most real crowds give each task one to three votes: too few for the votes
alone to settle it. :class:`skcrowd.ConsensusClassifier` adds what the
tasks' features say: a classifier is cross-fitted over the tasks (no task is
predicted by a model trained on its own label), and its probabilities become
each task's prior in a Dawid-Skene model of the workers. EM fits the
workers' confusion matrices and the weight of the classifier together, so the
votes decide how far the classifier is trusted.

This example

1. compares its consensus with majority vote and Dawid-Skene on a simulated
   sparse crowd, and checks its quality scores (per task, per worker) against
   the truth;
2. runs a small labelling loop: half the tasks start with one vote, and each
   round buys 40 more votes, placed by
   :meth:`~skcrowd.ConsensusClassifier.next_votes` (expected gain in
   consensus accuracy), by the uncertainty of the majority vote, or at
   random.

``benchmarks/active.py`` runs the loop on LabelMe and against cleanlab's
ActiveLab; ``benchmarks/consensus.py`` compares the consensus with cleanlab's
CROWDLAB.
"""

# %%
# A sparse crowd
# --------------
# 600 tasks with 6 features, 3 classes, 20 workers of accuracy 0.35 to 0.9,
# one to three votes per task.
import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import spearmanr

from skcrowd import ConsensusClassifier, DawidSkene, MajorityVote
from skcrowd.datasets import make_crowd_classification

crowd = make_crowd_classification(600, n_features=6, n_classes=3, class_sep=1.5, n_workers=20,
                                  accuracy=(0.35, 0.9), votes_per_task=(1, 3), random_state=0)
X, votes, truth = crowd.data, crowd.votes, crowd.target

consensus = ConsensusClassifier(random_state=0).fit(X, votes)
for name, labels in [
    ("majority vote", MajorityVote(random_state=0).fit(votes).predict(votes)),
    ("Dawid-Skene", DawidSkene().fit(votes).predict(votes)),
    ("classifier alone (out of fold)", consensus.oof_proba_.argmax(axis=1)),
    ("ConsensusClassifier", consensus.consensus_labels_),
]:
    print(f"{name:<32s} accuracy {np.mean(labels == truth):.3f}")
print(f"weight of the classifier's log-probabilities: {consensus.prior_weight_:.2f}")

# %%
# Quality scores
# --------------
# ``consensus_quality_`` is the posterior probability that the consensus
# label is right: among tasks scored 0.9, about nine in ten should be right.
# ``annotator_quality_`` is each worker's estimated accuracy.
true_accuracy = np.einsum("jkk,k->j", crowd.confusions, np.bincount(truth) / len(truth))
bins = np.linspace(0.3, 1.0, 8)
which = np.digitize(consensus.consensus_quality_, bins)
right = consensus.consensus_labels_ == truth
centers, rates = [], []
for b in np.unique(which):
    if (which == b).sum() >= 10:
        centers.append(consensus.consensus_quality_[which == b].mean())
        rates.append(right[which == b].mean())

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
ax1.plot([0.3, 1], [0.3, 1], color="grey", lw=1)
ax1.plot(centers, rates, marker="o")
ax1.set(xlabel="consensus_quality_ (binned)", ylabel="share of right consensus labels",
        title="Per task")
ax2.scatter(true_accuracy, consensus.annotator_quality_)
ax2.plot([0.3, 1], [0.3, 1], color="grey", lw=1)
rho = spearmanr(true_accuracy, consensus.annotator_quality_)[0]
ax2.set(xlabel="true accuracy", ylabel="annotator_quality_",
        title=f"Per worker (Spearman {rho:.2f})")
fig.tight_layout()

# %%
# Which task should get the next vote?
# ------------------------------------
# Half the tasks start with one vote. Each round, every strategy picks 40
# tasks and each gets one vote from a random worker who has not voted on it.
# ``next_votes`` ranks tasks with and without votes on one scale: the
# expected gain in the probability that the consensus is right.
rng = np.random.RandomState(1)
start = np.full_like(votes, -1)
for task in rng.choice(600, 300, replace=False):
    worker = rng.randint(20)
    start[task, worker] = rng.choice(3, p=crowd.confusions[worker, truth[task]])


def add_vote(votes, task, rng):
    worker = rng.choice(np.flatnonzero(votes[task] < 0))
    votes[task, worker] = rng.choice(3, p=crowd.confusions[worker, truth[task]])


def majority_uncertainty(votes, rng):
    counts = np.stack([(votes == k).sum(axis=1) for k in range(3)], axis=1)
    n = counts.sum(axis=1)
    share = np.divide(counts.max(axis=1), n, out=np.full(len(n), 1 / 3), where=n > 0)
    return 1 - share + 1e-9 * rng.uniform(size=len(n))


model = ConsensusClassifier(random_state=0)
curves = {}
for strategy in ("next_votes", "majority-vote uncertainty", "random"):
    current, choice_rng, vote_rng = start.copy(), np.random.RandomState(2), np.random.RandomState(3)
    accuracy = []
    for round_ in range(9):
        fitted = model.fit(X, current)
        accuracy.append(np.mean(fitted.consensus_labels_ == truth))
        if round_ == 8:
            break
        if strategy == "next_votes":
            tasks, _ = fitted.next_votes(40)
        elif strategy == "random":
            tasks = choice_rng.choice(600, 40, replace=False)
        else:
            tasks = np.argsort(-majority_uncertainty(current, choice_rng))[:40]
        for task in tasks:
            add_vote(current, task, vote_rng)
    curves[strategy] = accuracy
    print(f"{strategy:<26s}" + " ".join(f"{a:.3f}" for a in accuracy))

fig, ax = plt.subplots(figsize=(6, 4))
for strategy, accuracy in curves.items():
    ax.plot(300 + 40 * np.arange(len(accuracy)), accuracy, marker="o", label=strategy)
ax.set(xlabel="votes spent", ylabel="consensus accuracy", title="Labelling loop")
ax.legend()
fig.tight_layout()
plt.show()
