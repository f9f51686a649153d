"""A random subsample of the tasks of a real crowd, for the fast variants of slow tests."""

import numpy as np
import scipy.sparse as sp


def subsample_tasks(votes, n_tasks, seed=0):
    """The votes of ``n_tasks`` tasks of the sparse ``votes`` drawn at random, the tasks and
    the workers who voted on them renumbered in their order, and the drawn tasks' former ids
    (sorted). Stored entries stay votes: an explicit 0 is a vote for label 0."""
    votes = sp.coo_array(votes)
    kept = np.sort(np.random.default_rng(seed).choice(votes.shape[0], n_tasks, replace=False))
    drawn = np.isin(votes.row, kept)
    workers, columns = np.unique(votes.col[drawn], return_inverse=True)
    rows = np.searchsorted(kept, votes.row[drawn])
    return sp.coo_array((votes.data[drawn], (rows, columns)),
                        shape=(n_tasks, len(workers))), kept
