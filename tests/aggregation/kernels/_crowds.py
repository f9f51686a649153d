"""Small random crowds and worker models shared by the kernel tests."""

import numpy as np

from skcrowd import check_votes


def random_votes(rng, n_tasks=60, n_workers=7, K=3, density=0.5):
    votes = rng.integers(K, size=(n_tasks, n_workers))
    votes[rng.random(votes.shape) > density] = -1
    votes[5] = -1  # a task without votes
    return check_votes(votes, n_classes=K)


def random_log_confusions(rng, n_workers, K):
    conf = rng.dirichlet(np.ones(K), size=(n_workers, K))  # [j, true, observed]
    return np.ascontiguousarray(np.log(conf).transpose(0, 2, 1))
