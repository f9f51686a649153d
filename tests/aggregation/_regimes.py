"""Simulated crowds that reproduce where fixed priors failed on real crowds (issue 12).

Each regime draws a crowd with known truth: workers with their own confusion matrices and
activities (how many tasks they label, relative to the others), tasks labelled by
``votes_per_task`` distinct workers drawn in proportion to activity. Shared by the tests of
the defaults (test_defaults.py) and of the selector (test_selection.py).
"""

import numpy as np


def simulate(rng, priors, confusions, activity, n_tasks, votes_per_task):
    """Votes matrix (-1 missing) and truth: each task gets ``votes_per_task`` distinct
    workers, drawn with probabilities proportional to ``activity`` (Gumbel top-k)."""
    K, n_workers = len(priors), len(activity)
    truth = rng.choice(K, size=n_tasks, p=priors)
    keys = np.log(activity) + rng.gumbel(size=(n_tasks, n_workers))
    workers = np.argpartition(-keys, votes_per_task - 1, axis=1)[:, :votes_per_task]
    tasks = np.repeat(np.arange(n_tasks), votes_per_task)
    workers = workers.ravel()
    cumulative = confusions[workers, truth[tasks]].cumsum(axis=1)
    labels = np.minimum((rng.random(len(tasks))[:, None] > cumulative).sum(axis=1), K - 1)
    votes = np.full((n_tasks, n_workers), -1)
    votes[tasks, workers] = labels
    return votes[:, (votes >= 0).any(axis=0)], truth


def binary_workers(sensitivity, specificity):
    """Confusion matrices ``[[spec, 1 - spec], [1 - sens, sens]]`` (class 1 is positive)."""
    return np.stack([np.stack([specificity, 1 - specificity], axis=1),
                     np.stack([1 - sensitivity, sensitivity], axis=1)], axis=1)


def few_votes(seed, n_tasks=500):
    """Binary, most workers give one to three votes: 1200 workers, 3 votes per task,
    class-biased workers (sensitivity ~ Beta(6, 2), specificity ~ Beta(6, 2)), 30 %
    positives."""
    rng = np.random.default_rng(seed)
    n_workers = 1200
    conf = binary_workers(rng.beta(6, 2, n_workers), rng.beta(6, 2, n_workers))
    return simulate(rng, [0.7, 0.3], conf, np.ones(n_workers), n_tasks, 3)


def entity_linking(seed, n_tasks=500):
    """Binary, many few-vote workers who say "no" too often (sensitivity ~ Beta(3, 2),
    specificity ~ Beta(8, 2)) and three prolific good ones (0.9 / 0.9, thirty times as
    active); 30 % positives, 5 votes per task."""
    rng = np.random.default_rng(seed)
    n_workers = 600
    sens, spec = rng.beta(3, 2, n_workers), rng.beta(8, 2, n_workers)
    sens[:3] = spec[:3] = 0.9
    activity = np.ones(n_workers)
    activity[:3] = 30
    return simulate(rng, [0.7, 0.3], binary_workers(sens, spec), activity, n_tasks, 5)


def skewed_sparse(seed, n_tasks=500):
    """Five classes of shares 50/25/12/8/5 %, 120 workers of Pareto activity (most give a
    few votes), 5 votes per task; each worker is right 85 % of the time but, for each class
    with probability 1/2, answers the class below instead 60 to 100 % of the time."""
    rng = np.random.default_rng(seed)
    K, n_workers = 5, 120
    conf = np.full((n_workers, K, K), 0.15 / (K - 1))
    conf[:, np.arange(K), np.arange(K)] = 0.85
    for j in range(n_workers):
        for k in range(1, K):
            if rng.random() < 0.5:
                shift = rng.uniform(0.6, 1.0)
                conf[j, k] *= 1 - shift
                conf[j, k, k - 1] += shift
    activity = rng.pareto(1.0, n_workers) + 1
    return simulate(rng, [0.5, 0.25, 0.12, 0.08, 0.05], conf, activity, n_tasks, 5)


def prolific_spammers(seed, n_tasks=500):
    """Three classes, 200 workers (accuracy ~ Beta(6, 3), errors uniform), four of them
    spammers answering uniformly at random and forty times as active; 5 votes per task."""
    rng = np.random.default_rng(seed)
    K, n_workers = 3, 200
    accuracy = rng.beta(6, 3, n_workers)
    accuracy[:4] = 1 / K
    conf = np.repeat(((1 - accuracy) / (K - 1))[:, None, None], K, 1).repeat(K, 2)
    conf[:, np.arange(K), np.arange(K)] = accuracy[:, None]
    activity = np.ones(n_workers)
    activity[:4] = 40
    return simulate(rng, [1 / 3] * 3, conf, activity, n_tasks, 5)


REGIMES = {
    "few_votes": few_votes,
    "entity_linking": entity_linking,
    "skewed_sparse": skewed_sparse,
    "prolific_spammers": prolific_spammers,
}


def mv_accuracy(votes, truth):
    """Expected accuracy of majority vote, ties broken uniformly at random."""
    K = max(int(votes.max()), int(truth.max())) + 1
    rows, cols = np.nonzero(votes >= 0)
    counts = np.zeros((len(votes), K))
    np.add.at(counts, (rows, votes[rows, cols]), 1)
    tied = counts == counts.max(axis=1, keepdims=True)
    return float(np.mean(tied[np.arange(len(truth)), truth] / tied.sum(axis=1)))
