"""Holding out data for validation, without gold labels.

- :func:`holdout_tasks`: whole tasks (the nets' ``train_split``, Self-Crowd's check), shuffled and
  stratified on a label per task when possible;
- :func:`held_out_votes`: a share of each task's votes (choosing an aggregator, scoring on
  held-out votes), and :func:`held_out_score`, the mean log-probability a fitted aggregator
  gives them.
"""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

from .votes import Votes


def holdout_tasks(n_tasks, valid_size, strata=None, random_state=None):
    """Indices ``(train, valid)`` of a random split of ``n_tasks`` tasks.

    Stratified on ``strata`` (one label per task, e.g. its majority vote, -1
    for none) when every label occurs at least twice and both parts can hold
    every label; otherwise only shuffled. ``valid`` is None when
    ``valid_size`` leaves no task for one of the parts.

    Parameters
    ----------
    n_tasks : int
        Number of tasks.
    valid_size : float or int
        Fraction (float in (0, 1)) or number (int) of tasks held out.
    strata : array-like of shape (n_tasks,), default=None
        Labels to stratify on.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffle.

    Returns
    -------
    train : ndarray of int
    valid : ndarray of int or None
    """
    size = valid_size
    if isinstance(size, Real) and not isinstance(size, Integral) and 0 < size < 1:
        n_valid = math.ceil(size * n_tasks)
    elif isinstance(size, Integral) and not isinstance(size, bool) and size >= 0:
        n_valid = int(size)
    else:
        raise ValueError(
            f"valid_size must be a float in (0, 1) or a non-negative int, got {size!r}."
        )
    if not 0 < n_valid < n_tasks:
        return np.arange(n_tasks), None
    if strata is not None:
        strata = np.asarray(strata)
        _, counts = np.unique(strata, return_counts=True)
        if counts.min() < 2 or len(counts) > min(n_valid, n_tasks - n_valid):
            strata = None
    splitter = StratifiedShuffleSplit if strata is not None else ShuffleSplit
    return next(splitter(n_splits=1, test_size=n_valid, random_state=random_state).split(
        np.zeros(n_tasks), strata))


def held_out_votes(votes, test_size, random_state):
    """Mask of the held-out votes: about ``test_size`` of each task's votes, at random.

    Each task holds out ``floor(test_size * n + u)`` of its ``n`` votes (``u``
    uniform in [0, 1), so the share is ``test_size`` on average), at most
    ``n - 1``: every task keeps a vote.

    Parameters
    ----------
    votes : Votes
    test_size : float
    random_state : RandomState

    Returns
    -------
    ndarray of bool of shape (n_votes,)
    """
    n = votes.votes_per_task()
    key = random_state.random_sample(votes.n_votes)
    order = np.lexsort((key, votes.task))  # each task's votes in random order
    rank = np.empty(votes.n_votes, dtype=np.int64)
    rank[order] = np.arange(votes.n_votes) - np.repeat(votes.task_indptr()[:-1], n)
    held = np.minimum(np.floor(test_size * n + random_state.random_sample(len(n))), n - 1)
    return rank < held[votes.task]


def held_out_score(model, context, held_out):
    """Mean log-probability of the ``held_out`` votes given the ``context`` votes of their
    tasks under the fitted ``model`` (see :meth:`BaseAggregator._vote_log_likelihood`)."""
    if held_out.n_votes == 0:
        raise ValueError("no vote to hold out: every task has a single vote.")
    log_proba = model._vote_log_likelihood(context, held_out.task, held_out.worker,
                                           held_out.label)
    return float(np.mean(log_proba))


def _subset(votes, mask):
    """The votes selected by ``mask`` (still sorted by task)."""
    return Votes(task=votes.task[mask], worker=votes.worker[mask], label=votes.label[mask],
                 n_tasks=votes.n_tasks, n_workers=votes.n_workers, classes=votes.classes)
