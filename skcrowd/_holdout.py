"""Holding tasks out for validation: shuffled, stratified on a label per task when possible."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit


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
