"""Majority vote and naive soft labels."""

from __future__ import annotations

import zlib

import numpy as np
from scipy.special import logsumexp
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..base import _as_it_was_on_error
from ._base import BaseAggregator
from .kernels import naive_soft_labels, safe_log


class MajorityVote(BaseAggregator):
    """Majority vote, with the vote frequencies as soft labels.

    ``predict`` returns the most voted class of each task (Lefort et al.,
    2024, appendix A.2, eq. 7), ties broken uniformly at random with
    ``random_state``; ``predict_proba`` returns the naive soft labels, the
    vote frequencies of each task (appendix A.1, eq. 6). A task without votes
    gets the class priors: the frequencies of all the votes seen at fit.
    ``X`` may hold soft votes (:class:`~skcrowd.SoftVotes`): the frequencies
    are then the sums of the votes' probabilities (see :ref:`soft_votes`).

    Majority vote is not a probabilistic model of the votes, so it has no
    likelihood: there is no ``score`` method. Compare it with other
    aggregators on gold labels or with the scorers of :mod:`skcrowd.metrics`.

    Parameters
    ----------
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``X`` (``np.nan`` or ``None`` for NaN /
        None entries).
    backend : {"auto", "memory", "outofcore", "dask"}, default="auto"
        Where the votes are processed. "auto" follows the type of ``X``: a
        votes matrix in memory, a parquet path or pyarrow dataset out of core,
        a dask DataFrame on Dask. "memory" reads long-format votes into
        memory; "dask" runs a parquet path on Dask. See :ref:`scale`.
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
    vote_accuracy_ : float
        The worker model that majority vote implies, used only to score
        held-out votes (:class:`AggregatorSelector`): every worker right with
        this probability and otherwise uniform over the other classes. It is
        estimated from the share of pairs of votes of a task that agree
        (Laplace-smoothed), which is ``a**2 + (1 - a)**2 / (K - 1)`` for such
        workers.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of shape (n_workers,)
        Worker names, when ``X`` is a DataFrame with string column names.
    worker_ids_ : ndarray of shape (n_workers,)
        Original id of each worker, when fitted on long-format votes (a
        parquet path, a pyarrow dataset or a dask DataFrame): the rows of the
        per-worker attributes follow it.

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
    _accepts_soft_votes = True  # X may be SoftVotes: the sums of the probabilities

    def __init__(self, *, missing_label=-1, n_classes=None, random_state=None, backend="auto"):
        self.missing_label = missing_label
        self.backend = backend
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
        with _as_it_was_on_error(self):
            source, owned = self._votes_source(X, reset=True)
            try:
                _, (counts, pairs) = source.map_reduce(_label_counts_block)
            finally:
                if owned:
                    source.close()
            self.class_priors_ = counts / counts.sum()
            self.vote_accuracy_ = _symmetric_accuracy(pairs, len(self.classes_))
        return self

    def predict_proba(self, X):
        """Naive soft labels: the vote frequencies of each task.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes, with the fitted workers as columns.

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_classes) or pandas DataFrame
            Rows sum to one; a task without votes gets ``class_priors_``. A
            DataFrame with ``X.index`` and columns ``classes_`` when ``X`` is
            a DataFrame, indexed by task id for long-format votes.
        """
        source, owned = self._votes_for_prediction(X)
        try:
            proba = source.map_tasks(_naive_soft_labels_block, args=(self.class_priors_,),
                                     columns=self.classes_)
            return self._task_output(source, proba, X)
        finally:
            if owned:
                source.close()

    def _vote_log_likelihood(self, context, task, worker, label):
        # MV's own model: the vote frequencies of the other votes as the task's soft label
        # (the class priors without them), every worker right with vote_accuracy_
        check_is_fitted(self)
        K = len(self.classes_)
        proba = naive_soft_labels(context.task, context.label, context.n_tasks,
                                  self.class_priors_)
        a = self.vote_accuracy_
        wrong = np.log1p(-a) - np.log(K - 1) if K > 1 else -np.inf
        log_vote = np.where(np.arange(K) == label[:, None], np.log(a), wrong)
        return logsumexp(safe_log(proba[task]) + log_vote, axis=1)

    def predict(self, X):
        """Most voted class of each task, ties broken at random.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes, with the fitted workers as columns.

        Returns
        -------
        labels : ndarray of shape (n_tasks,) or pandas Series
            In ``classes_``. A task without votes gets the most frequent class
            of the fit (ties at random too). A Series with ``X.index`` when
            ``X`` is a DataFrame, indexed by task id for long-format votes.
        """
        proba = self.predict_proba(X)
        random_state = check_random_state(self.random_state)
        if isinstance(proba, np.ndarray):
            return _break_ties(proba, self.classes_, random_state)
        if hasattr(proba, "map_partitions"):  # dask: one seed, a stream per partition
            seed = random_state.randint(np.iinfo(np.int32).max)
            meta = _break_ties_frame(proba._meta, self.classes_, seed)
            return proba.map_partitions(_break_ties_frame, self.classes_, seed, meta=meta)
        return _break_ties_frame(proba, self.classes_, random_state)


def _break_ties(proba, classes, random_state):
    """Most voted class of each row, ties broken by uniform draws of ``random_state``."""
    tied = proba == proba.max(axis=1, keepdims=True)
    # the largest of independent uniforms over the tied classes is a uniform pick
    draws = random_state.uniform(size=proba.shape)
    return classes[np.argmax(np.where(tied, draws, -1.0), axis=1)]


def _break_ties_frame(frame, classes, random_state):
    """:func:`_break_ties` on a soft-label DataFrame; an int seed gets a stream per frame."""
    import pandas as pd

    if not isinstance(random_state, np.random.RandomState):
        key = zlib.crc32(repr(frame.index[:1].tolist()).encode())
        random_state = np.random.RandomState([random_state, key])
    return pd.Series(_break_ties(frame.to_numpy(), classes, random_state), index=frame.index)


def _label_counts_block(block, tables, state):
    """Votes of each class, and [pairs of votes of a task that agree, pairs of votes of a
    task]."""
    v = block.votes
    per_task = v.counts()
    n = per_task.sum(axis=1)
    # a pair of votes agrees on k with probability q_k q'_k: per class, the square of the
    # task's sum less its votes' own squares (c (c - 1) for hard votes)
    own = per_task if v.weight is None else v.counts(v.weight)
    pairs = np.array([np.sum(per_task * per_task - own), np.sum(n * (n - 1))])
    return (), (np.bincount(v.label, weights=v.weight, minlength=v.n_classes), pairs), state


def _symmetric_accuracy(pairs, K):
    """Accuracy ``a`` of identical workers, right with probability ``a`` and otherwise uniform
    over the other classes, whose two votes on a task agree with the observed probability.

    Two such votes agree with probability ``a**2 + (1 - a)**2 / (K - 1)``; the agreement is
    the Laplace-smoothed share of agreeing pairs (one pseudo-pair agreeing, one not), so that
    ``1 / K <= a < 1`` even without pairs.
    """
    if K < 2:
        return 1.0
    agreement = (pairs[0] + 1.0) / (pairs[1] + 2.0)
    return float((1.0 + np.sqrt(max((K - 1) * (K * agreement - 1.0), 0.0))) / K)


def _naive_soft_labels_block(block, tables, empty_row, state):
    v = block.votes
    return naive_soft_labels(v.task, v.label, v.n_tasks, empty_row, weights=v.weight)
