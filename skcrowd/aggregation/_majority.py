"""Majority vote and naive soft labels."""

from __future__ import annotations

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_random_state

from ._base import BaseAggregator, naive_soft_labels


class MajorityVote(BaseAggregator):
    """Majority vote, with the vote frequencies as soft labels.

    ``predict`` returns the most voted class of each task (Lefort et al.,
    2024, appendix A.2, eq. 7), ties broken uniformly at random with
    ``random_state``; ``predict_proba`` returns the naive soft labels, the
    vote frequencies of each task (appendix A.1, eq. 6). A task without votes
    gets the class priors: the frequencies of all the votes seen at fit.

    Majority vote is not a probabilistic model of the votes, so it has no
    likelihood: there is no ``score`` method. Compare it with other
    aggregators on gold labels or with the scorers of :mod:`skcrowd.metrics`.

    Parameters
    ----------
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``X`` (``np.nan`` or ``None`` for NaN /
        None entries).
    n_classes : int, default=None
        Number of classes when some never appear in the votes: labels must be
        integers in ``range(n_classes)``. Default: the distinct labels seen.
    random_state : int, RandomState instance or None, default=None
        Seed of the tie-breaking draws; an int gives the same labels on every
        call of ``predict``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    class_priors_ : ndarray of shape (n_classes,)
        Frequency of each class among the votes seen at fit.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of shape (n_workers,)
        Worker names, when ``X`` is a DataFrame with string column names.

    See Also
    --------
    DawidSkene : Per-worker confusion matrices.

    References
    ----------
    T. Lefort, B. Charlier, A. Joly and J. Salmon. "Identify ambiguous tasks
    combining crowdsourced labels by weighting Areas Under the Margin". TMLR,
    2024 (appendix A.1-A.2).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import MajorityVote
    >>> votes = np.array([["cat", "cat", "dog"],
    ...                   ["dog", "cat", "-"],
    ...                   ["-", "-", "-"]])
    >>> mv = MajorityVote(missing_label="-", random_state=0).fit(votes)
    >>> mv.predict_proba(votes)
    array([[0.66666667, 0.33333333],
           [0.5       , 0.5       ],
           [0.6       , 0.4       ]])
    >>> mv.predict(votes)  # the tie of task 1 is broken at random
    array(['cat', 'cat', 'cat'], dtype='<U3')
    """

    _parameter_constraints: dict = {
        **BaseAggregator._parameter_constraints,
        "random_state": ["random_state"],
    }

    def __init__(self, *, missing_label=-1, n_classes=None, random_state=None):
        self.missing_label = missing_label
        self.n_classes = n_classes
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Record the classes and the class priors (vote frequencies).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes: entry ``(i, j)`` is the label worker ``j`` gave task ``i``,
            or ``missing_label``. Sparse input: stored entries are votes.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted aggregator.
        """
        votes = self._validate_votes(X, reset=True)
        counts = np.bincount(votes.label, minlength=votes.n_classes)
        self.class_priors_ = counts / counts.sum()
        return self

    def predict_proba(self, X):
        """Naive soft labels: the vote frequencies of each task.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes, with the fitted workers as columns.

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_classes)
            Rows sum to one; a task without votes gets ``class_priors_``.
        """
        votes = self._votes_for_prediction(X)
        return naive_soft_labels(votes.task, votes.label, votes.n_tasks, self.class_priors_)

    def predict(self, X):
        """Most voted class of each task, ties broken at random.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes, with the fitted workers as columns.

        Returns
        -------
        labels : ndarray of shape (n_tasks,)
            In ``classes_``. A task without votes gets the most frequent class
            of the fit (ties at random too).
        """
        proba = self.predict_proba(X)
        tied = proba == proba.max(axis=1, keepdims=True)
        # the largest of independent uniforms over the tied classes is a uniform pick
        draws = check_random_state(self.random_state).uniform(size=proba.shape)
        return self.classes_[np.argmax(np.where(tied, draws, -1.0), axis=1)]
