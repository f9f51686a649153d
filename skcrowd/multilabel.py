"""Multi-label votes: each vote is the set of labels a worker ticked on a task.

A multi-label crowd has ``n_labels`` binary questions per task ("does this
image show a dog? a cat? ..."). A worker who answers a task gives one bit per
label: 1 if ticked, 0 if not. The votes are either a 3-D array
``(n_tasks, n_workers, n_labels)`` with ``missing_label`` where a worker did
not answer, or a list of ``n_labels`` votes matrices ``(n_tasks, n_workers)``
of 0/1 (dense with the marker, or scipy.sparse whose stored entries,
explicit zeros included, are the votes), or a dict ``{label name: votes
matrix}`` of the same, whose names the estimators keep as ``classes_``.
A long table (one row per task and
worker, the ticked labels as a list or a delimited string) converts with
:func:`multilabel_votes_from_long`.

- :class:`BinaryRelevance`: any categorical aggregator, fitted once per label
  (as crowd-kit's ``BinaryRelevance``).
- :class:`MultiLabelDawidSkene`: one worker model shared by all labels (a
  sensitivity and a specificity per worker), fitted by EM: a worker careless
  on one label is careless on the others, so that each worker's reliability
  is estimated from all of their bits, not from one label's.

Both ``predict`` an indicator matrix ``(n_tasks, n_labels)``, the format of
scikit-learn's multi-label targets (columns in the order of ``classes_``),
``predict_proba`` the probability of each label, and ``score`` the mean
per-task log-likelihood of held-out votes.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .aggregation._priors import fit_beta_prior

__all__ = ["BinaryRelevance", "MultiLabelDawidSkene", "multilabel_votes_from_long"]


class _MultiLabelVotes:
    """Observed bits of a multi-label crowd: one entry per (task, worker, label) answered."""

    def __init__(self, task, worker, label, value, shape):
        self.task, self.worker, self.label, self.value = task, worker, label, value
        self.n_tasks, self.n_workers, self.n_labels = shape
        self.cell = task * self.n_labels + label  # (task, label) of each entry, flat

    def label_matrix(self, label):
        """The 0/1 votes of one label, as a sparse matrix whose stored entries are the votes."""
        keep = self.label == label
        return sp.csr_matrix((self.value[keep], (self.task[keep], self.worker[keep])),
                             shape=(self.n_tasks, self.n_workers))


def _is_long_table(X):
    return hasattr(X, "columns") and hasattr(X, "iloc")


def _show(value):
    """``repr`` of a value as the user wrote it (numpy scalars as Python ones)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _check_bits(values, where):
    """``values`` as int8 0/1, or a ValueError naming the first other value and ``where``."""
    values = np.asarray(values)
    if values.dtype == bool:
        return values.astype(np.int8)
    if not np.issubdtype(values.dtype, np.number):
        bad = next(v for v in values.ravel() if not isinstance(v, (numbers.Real, np.bool_)))
        raise ValueError(f"{where(np.flatnonzero(values.ravel() == bad)[0])}: {_show(bad)} is not "
                         "a vote; a multi-label vote is 1 (label ticked) or 0 (not ticked).")
    bad = np.flatnonzero((values != 0) & (values != 1))
    if bad.size:
        raise ValueError(f"{where(bad[0])}: {_show(values.ravel()[bad[0]])} is not a vote; a "
                         "multi-label vote is 1 (label ticked) or 0 (not ticked).")
    return values.astype(np.int8)


def _missing(values, missing_label):
    """Where ``values`` holds the marker of a worker who did not answer."""
    if isinstance(missing_label, float) and np.isnan(missing_label):
        return np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)
    if missing_label is None:
        return np.zeros(values.shape, dtype=bool)
    return values == missing_label


def _validate_multilabel(X, missing_label, n_workers=None, n_labels=None):
    """The observed bits of ``X`` (3-D array, list or dict of per-label votes matrices) and the
    label names (the dict's keys; ``None`` for an array or a list)."""
    names = None
    if isinstance(X, dict):
        if not X:
            raise ValueError("X is an empty dict: give one votes matrix per label name.")
        names, X = list(X), list(X.values())
    if _is_long_table(X):
        raise ValueError(
            "X looks like a long table of multi-label votes (a DataFrame, one row per task and "
            "worker); convert it first: `votes, tasks, workers, labels = "
            "skcrowd.multilabel_votes_from_long(X, task='task', worker='worker', "
            "labels='labels')`, then fit on votes.")
    if isinstance(X, (list, tuple)):
        if not X:
            raise ValueError("X is an empty list: give one votes matrix per label.")
        parts = []
        shape = None
        for label, matrix in enumerate(X):
            if sp.issparse(matrix):
                coo = sp.coo_matrix(matrix)
                rows, cols, values = coo.row, coo.col, np.asarray(coo.data)
                this = coo.shape
            else:
                matrix = np.asarray(matrix)
                if matrix.ndim != 2:
                    raise ValueError(f"X[{label}] has {matrix.ndim} dimensions; each votes "
                                     "matrix of the list is (n_tasks, n_workers).")
                this = matrix.shape
                rows, cols = np.nonzero(~_missing(matrix, missing_label))
                values = matrix[rows, cols]
            if shape is None:
                shape = this
            elif this != shape:
                raise ValueError(f"X[{label}] has shape {this}, X[0] has {shape}: every "
                                 "label's votes matrix is (n_tasks, n_workers) of the same crowd.")
            order = np.lexsort((cols, rows))
            rows, cols, values = rows[order], cols[order], values[order]
            bits = _check_bits(values, lambda e, r=rows, c=cols, lab=label:
                               f"X[{label}] (label {lab}), row {r[e]}, worker {c[e]}")
            parts.append((rows, cols, np.full(len(rows), label), bits))
        task, worker, label_idx, value = (np.concatenate(p) for p in zip(*parts))
        shape = (*shape, len(X))
    else:
        X = np.asarray(X)
        if X.ndim != 3:
            raise ValueError(
                f"X has {X.ndim} dimensions; multi-label votes are a 3-D array (n_tasks, "
                "n_workers, n_labels) or a list of n_labels votes matrices (n_tasks, n_workers).")
        task, worker, label_idx = np.nonzero(~_missing(X, missing_label))
        value = _check_bits(X[task, worker, label_idx], lambda e: (
            f"X[{task[e]}, {worker[e]}, {label_idx[e]}] (row {task[e]}, worker {worker[e]}, "
            f"label {label_idx[e]})"))
        shape = X.shape
    if 0 in shape:
        raise ValueError(f"X has shape {shape}: it needs at least one task, worker and label.")
    if n_workers is not None and (shape[1], shape[2]) != (n_workers, n_labels):
        raise ValueError(f"X has {shape[1]} workers and {shape[2]} labels; the estimator was "
                         f"fitted on {n_workers} workers and {n_labels} labels.")
    order = np.lexsort((label_idx, worker, task))  # one order whatever the input's layout
    return _MultiLabelVotes(task[order].astype(np.int64), worker[order].astype(np.int64),
                            label_idx[order].astype(np.int64), value[order], shape), names


class _MultiLabelAggregator(BaseEstimator):
    """What the multi-label aggregators share: reading the votes, the fitted sizes, fit_predict."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the votes are a 3-D array (n_tasks, n_workers, n_labels) of bits, or a list of
        # n_labels votes matrices; no target
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        tags.target_tags.required = False
        return tags

    def _read(self, X, reset):
        """The observed bits of ``X``; ``reset`` records the sizes and label names, else checks
        them."""
        if reset:
            votes, names = _validate_multilabel(X, self.missing_label)
            self.n_labels_, self.n_features_in_ = votes.n_labels, votes.n_workers
            self.classes_ = np.arange(votes.n_labels) if names is None else np.asarray(names)
            return votes
        check_is_fitted(self)
        votes, names = _validate_multilabel(X, self.missing_label, self.n_features_in_,
                                            self.n_labels_)
        if names is not None and names != self.classes_.tolist():
            raise ValueError(f"X has the labels {names!r}; the estimator was fitted on "
                             f"{self.classes_.tolist()!r}, in that order.")
        return votes

    @available_if(lambda self: hasattr(self, "score_samples"))
    def score(self, X, y=None):
        """Mean per-task log-likelihood of the votes (higher is better), as the class
        aggregators': on held-out tasks of the fitted workers, a gold-free score.

        Parameters
        ----------
        X : ndarray of shape (n_tasks, n_workers, n_labels), list or dict of n_labels matrices
            Votes of the fitted workers on the fitted labels.
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        return float(np.mean(self.score_samples(X)))

    def fit_predict(self, X, y=None):
        """``fit(X).predict(X)``: the indicator matrix ``(n_tasks, n_labels)`` of ``X``."""
        return self.fit(X).predict(X)


class BinaryRelevance(_MultiLabelAggregator):
    """One categorical aggregator per label of multi-label votes.

    Each label's bits (1 ticked, 0 not, on the tasks a worker answered) are a
    binary votes matrix; a clone of ``aggregator`` aggregates each, with
    ``n_classes=2``. Workers' reliabilities are estimated label by label:
    :class:`MultiLabelDawidSkene` shares them across labels.

    Parameters
    ----------
    aggregator : aggregator, default=None
        Categorical aggregator cloned for each label; default
        :class:`~skcrowd.aggregation.DawidSkene`.
    missing_label : int, float or None, default=-1
        Marker of a worker who did not answer, in dense votes.

    Attributes
    ----------
    estimators_ : list of aggregators
        The fitted aggregator of each label.
    classes_ : ndarray of shape (n_labels,)
        The label names (the keys of a dict ``X``; else ``0 .. n_labels - 1``).
    n_labels_ : int
        Number of labels.
    n_features_in_ : int
        Number of workers.

    See Also
    --------
    MultiLabelDawidSkene : One worker model for all labels.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import BinaryRelevance
    >>> from skcrowd.aggregation import MajorityVote
    >>> votes = np.array([[[1, 0], [1, 1], [1, 0]],    # task 0: label 0 by all, label 1 by one
    ...                   [[0, 1], [0, 1], [-1, -1]]])  # task 1: two workers, label 1
    >>> BinaryRelevance(MajorityVote()).fit(votes).predict(votes)
    array([[1, 0],
           [0, 1]])
    """

    _parameter_constraints: dict = {
        "aggregator": [None, HasMethods(["fit", "predict_proba"])],
        "missing_label": [numbers.Real, None],
    }

    def __init__(self, aggregator=None, *, missing_label=-1):
        self.aggregator = aggregator
        self.missing_label = missing_label

    def fit(self, X, y=None):
        """Fit one aggregator per label.

        Parameters
        ----------
        X : ndarray of shape (n_tasks, n_workers, n_labels), list or dict of n_labels matrices
            Multi-label votes (see the module's description).
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._validate_params()
        from .aggregation import DawidSkene

        votes = self._read(X, reset=True)
        base = DawidSkene() if self.aggregator is None else self.aggregator
        estimators = []
        for label in range(votes.n_labels):
            model = clone(base)
            model.set_params(**{k: v for k, v in {"n_classes": 2, "missing_label": -1}.items()
                                if k in model.get_params()})
            estimators.append(model.fit(votes.label_matrix(label)))
        self.estimators_ = estimators
        return self

    def predict_proba(self, X):
        """Probability that each label is on, from each label's aggregator.

        Parameters
        ----------
        X : ndarray of shape (n_tasks, n_workers, n_labels), list or dict of n_labels matrices

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_labels)
        """
        votes = self._read(X, reset=False)
        return np.column_stack([np.asarray(model.predict_proba(votes.label_matrix(label)))[:, 1]
                                for label, model in enumerate(self.estimators_)])

    def predict(self, X):
        """Indicator matrix of the labels, each from its aggregator's ``predict``.

        Parameters
        ----------
        X : ndarray of shape (n_tasks, n_workers, n_labels), list or dict of n_labels matrices

        Returns
        -------
        indicator : ndarray of shape (n_tasks, n_labels) of 0/1
        """
        votes = self._read(X, reset=False)
        return np.column_stack([np.asarray(model.predict(votes.label_matrix(label)))
                                for label, model in enumerate(self.estimators_)]).astype(int)

    def _aggregator_scores(self):
        return self.aggregator is None or hasattr(self.aggregator, "score_samples")

    @available_if(_aggregator_scores)
    def score_samples(self, X):
        """Log-likelihood of each task's votes: the sum over labels of each label's aggregator's
        ``score_samples`` (available when the aggregator has it).

        Parameters
        ----------
        X : ndarray of shape (n_tasks, n_workers, n_labels), list or dict of n_labels matrices
            Votes of the fitted workers on the fitted labels.

        Returns
        -------
        log_likelihood : ndarray of shape (n_tasks,)
        """
        votes = self._read(X, reset=False)
        return np.sum([np.asarray(model.score_samples(votes.label_matrix(label)))
                       for label, model in enumerate(self.estimators_)], axis=0)


class MultiLabelDawidSkene(_MultiLabelAggregator):
    """Multi-label votes with one worker model shared by all labels, fitted by EM.

    Each label ``l`` of task ``i`` is on (``z_il = 1``) with probability
    ``prevalence_l``; worker ``j`` ticks an on label with probability
    ``sensitivity_j`` and leaves an off label unticked with probability
    ``specificity_j``, the same for every label (the two-coin model of Raykar
    et al., 2010, with the workers' coins shared across labels, as a worker's
    confusion matrix is shared across tasks in Dawid & Skene, 1979). The bits
    of one answer are independent given the labels. EM maximizes the log
    posterior: the votes' log-likelihood plus the workers' Beta priors
    (``sensitivity_j ~ Beta(a + 1, b + 1)`` in pseudo-counts ``(a, b)``, the
    same for the specificities) and a Beta(2, 2) prior on each prevalence.

    With ``prior="auto"`` the pseudo-counts are chosen by the data before EM:
    the empirical-Bayes Beta (largest beta-binomial evidence) of the workers'
    bits scored against the per-label vote shares, one for the
    sensitivities and one for the specificities; they stay fixed during EM,
    so the objective never decreases. A worker with few answers is pulled
    towards the crowd's typical reliability, one with many keeps their own.

    Parameters
    ----------
    prior : "auto" or tuple of two floats, default="auto"
        Pseudo-counts ``(a, b)`` of the workers' Beta priors (``a`` for a
        right bit, ``b`` for a wrong one), or "auto" (chosen by the data).
    max_iter : int, default=100
        Maximum number of EM iterations.
    tol : float, default=1e-6
        Stop when the objective per task gains less than ``tol``.
    missing_label : int, float or None, default=-1
        Marker of a worker who did not answer, in dense votes.

    Attributes
    ----------
    sensitivity_ : ndarray of shape (n_workers,)
        ``P(ticked | label on)`` of each worker.
    specificity_ : ndarray of shape (n_workers,)
        ``P(not ticked | label off)`` of each worker.
    prevalence_ : ndarray of shape (n_labels,)
        ``P(label on)`` of each label.
    classes_ : ndarray of shape (n_labels,)
        The label names (the keys of a dict ``X``; else ``0 .. n_labels - 1``).
    prior_pseudo_counts_ : ndarray of shape (2, 2)
        ``(a, b)`` of the sensitivities' prior (row 0) and the
        specificities' (row 1).
    lower_bound_ : float
        Final objective (log posterior per task).
    lower_bounds_ : ndarray
        Objective after each iteration; never decreases.
    n_iter_ : int
        Number of EM iterations run.
    converged_ : bool
        Whether ``tol`` was reached.
    n_labels_ : int
    n_features_in_ : int
        Number of workers.

    See Also
    --------
    BinaryRelevance : One independent aggregator per label.

    References
    ----------
    A. P. Dawid and A. M. Skene. "Maximum likelihood estimation of observer
    error-rates using the EM algorithm". Applied Statistics, 1979.
    V. C. Raykar et al. "Learning from crowds". JMLR, 2010.

    Examples
    --------
    Sixty tasks with four labels, five workers of whom two tick at random:

    >>> import numpy as np
    >>> from skcrowd import MultiLabelDawidSkene
    >>> rng = np.random.default_rng(0)
    >>> truth = (rng.random((60, 4)) < 0.3).astype(int)
    >>> right = rng.random((60, 5, 4)) < np.array([0.95, 0.95, 0.9, 0.5, 0.5])[:, None]
    >>> votes = np.where(right, truth[:, None, :], 1 - truth[:, None, :])
    >>> model = MultiLabelDawidSkene().fit(votes)
    >>> model.sensitivity_.round(1), model.specificity_.round(1)
    (array([0.9, 0.9, 0.8, 0.6, 0.4]), array([1. , 1. , 0.9, 0.4, 0.5]))
    >>> float(np.mean(model.predict(votes) == truth))
    1.0
    """

    _parameter_constraints: dict = {
        "prior": [StrOptions({"auto"}), tuple],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "missing_label": [numbers.Real, None],
    }

    def __init__(self, *, prior="auto", max_iter=100, tol=1e-6, missing_label=-1):
        self.prior = prior
        self.max_iter = max_iter
        self.tol = tol
        self.missing_label = missing_label

    def fit(self, X, y=None):
        """Fit the workers' and labels' parameters by EM.

        Parameters
        ----------
        X : ndarray of shape (n_tasks, n_workers, n_labels), list or dict of n_labels matrices
            Multi-label votes (see the module's description).
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._validate_params()
        if self.prior != "auto":
            if len(self.prior) != 2 or not all(isinstance(p, numbers.Real) and p >= 0
                                               for p in self.prior):
                raise ValueError(f"prior must be 'auto' or two non-negative pseudo-counts "
                                 f"(a, b), got {self.prior!r}.")
        votes = self._read(X, reset=True)
        cell = votes.cell
        n_cells = votes.n_tasks * votes.n_labels
        # start: each label's share of the bits given on the task (a soft majority vote)
        ticked = np.bincount(cell, votes.value.astype(float), minlength=n_cells)
        given = np.bincount(cell, minlength=n_cells)
        posterior = np.where(given > 0, ticked / np.maximum(given, 1), 0.5)
        counts = self._counts(votes, posterior)
        if self.prior == "auto":
            pseudo = np.array([fit_beta_prior(counts[0], counts[1], (2.0, 1.0)),
                               fit_beta_prior(counts[2], counts[3], (2.0, 1.0))])
        else:
            pseudo = np.array([self.prior, self.prior], dtype=float)
        self.prior_pseudo_counts_ = pseudo
        params = self._m_step(votes, posterior, counts)
        bounds = []
        self.converged_ = False
        for self.n_iter_ in range(1, self.max_iter + 1):
            posterior, log_likelihood = self._e_step(votes, *params)
            bounds.append((float(log_likelihood.sum()) + self._log_prior(*params))
                          / votes.n_tasks)
            params = self._m_step(votes, posterior)  # never lowers the objective
            if len(bounds) > 1 and bounds[-1] - bounds[-2] < self.tol:
                self.converged_ = True
                break
        if not self.converged_:
            warnings.warn(f"MultiLabelDawidSkene did not converge in {self.max_iter} iterations "
                          f"(tol={self.tol}); raise max_iter.", ConvergenceWarning, stacklevel=2)
        self.sensitivity_, self.specificity_, self.prevalence_ = params
        self.lower_bounds_ = np.asarray(bounds)
        self.lower_bound_ = bounds[-1]
        return self

    @staticmethod
    def _counts(votes, posterior):
        """Per worker: expected right ticks, on labels, right blanks, off labels."""
        q = posterior[votes.cell]
        on = votes.value.astype(float)
        W = votes.n_workers
        return np.array([np.bincount(votes.worker, q * on, minlength=W),
                         np.bincount(votes.worker, q, minlength=W),
                         np.bincount(votes.worker, (1.0 - q) * (1.0 - on), minlength=W),
                         np.bincount(votes.worker, 1.0 - q, minlength=W)])

    def _m_step(self, votes, posterior, counts=None):
        if counts is None:
            counts = self._counts(votes, posterior)
        (a_s, b_s), (a_p, b_p) = self.prior_pseudo_counts_
        sensitivity = (counts[0] + a_s) / (counts[1] + a_s + b_s)
        specificity = (counts[2] + a_p) / (counts[3] + a_p + b_p)
        on = posterior.reshape(votes.n_tasks, votes.n_labels).sum(axis=0)
        prevalence = (on + 1.0) / (votes.n_tasks + 2.0)
        return sensitivity, specificity, prevalence

    def _log_prior(self, sensitivity, specificity, prevalence):
        (a_s, b_s), (a_p, b_p) = self.prior_pseudo_counts_
        return float(np.sum(a_s * np.log(sensitivity) + b_s * np.log1p(-sensitivity))
                     + np.sum(a_p * np.log(specificity) + b_p * np.log1p(-specificity))
                     + np.sum(np.log(prevalence) + np.log1p(-prevalence)))

    @staticmethod
    def _e_step(votes, sensitivity, specificity, prevalence):
        """Posterior of every (task, label) being on, and the log-likelihood of each cell's
        votes, ``(n_tasks, n_labels)``."""
        on = votes.value.astype(bool)
        w = votes.worker
        log_on = np.where(on, np.log(sensitivity[w]), np.log1p(-sensitivity[w]))
        log_off = np.where(on, np.log1p(-specificity[w]), np.log(specificity[w]))
        n_cells = votes.n_tasks * votes.n_labels
        cell = votes.cell
        log_p1 = (np.bincount(cell, log_on, minlength=n_cells).reshape(-1, votes.n_labels)
                  + np.log(prevalence))
        log_p0 = (np.bincount(cell, log_off, minlength=n_cells).reshape(-1, votes.n_labels)
                  + np.log1p(-prevalence))
        posterior = expit(log_p1 - log_p0).ravel()
        return posterior, np.logaddexp(log_p1, log_p0)

    def predict_proba(self, X):
        """Posterior probability that each label of each task is on.

        Parameters
        ----------
        X : ndarray of shape (n_tasks, n_workers, n_labels), list or dict of n_labels matrices
            Votes of the fitted workers on the fitted labels.

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_labels)
        """
        votes = self._read(X, reset=False)
        posterior, _ = self._e_step(votes, self.sensitivity_, self.specificity_,
                                    self.prevalence_)
        return posterior.reshape(votes.n_tasks, votes.n_labels)

    def predict(self, X):
        """Indicator matrix: the labels whose posterior is above one half.

        Parameters
        ----------
        X : ndarray of shape (n_tasks, n_workers, n_labels), list or dict of n_labels matrices

        Returns
        -------
        indicator : ndarray of shape (n_tasks, n_labels) of 0/1
        """
        return (self.predict_proba(X) > 0.5).astype(int)

    def score_samples(self, X):
        """Log-likelihood of each task's votes under the fitted model (0 without votes).

        Parameters
        ----------
        X : ndarray of shape (n_tasks, n_workers, n_labels), list or dict of n_labels matrices
            Votes of the fitted workers on the fitted labels.

        Returns
        -------
        log_likelihood : ndarray of shape (n_tasks,)
        """
        votes = self._read(X, reset=False)
        _, log_likelihood = self._e_step(votes, self.sensitivity_, self.specificity_,
                                         self.prevalence_)
        return log_likelihood.sum(axis=1)


def multilabel_votes_from_long(data, task="task", worker="worker", labels="labels", *,
                               sep=None, label_names=None):
    """Multi-label votes from a long table: one row per task and worker, the ticked labels.

    Parameters
    ----------
    data : pandas DataFrame or mapping of columns
    task, worker, labels : str
        Column names. Each entry of ``labels`` is a list, tuple or set of
        label names, or a string of names separated by ``sep`` (an empty
        string or list: the worker ticked none).
    sep : str or None, default=None
        Delimiter of label strings (required when they are strings).
    label_names : sequence or None, default=None
        All label names, in the column order wanted (default: the sorted
        names seen); a name not in it raises a ValueError.

    Returns
    -------
    votes : list of n_labels sparse matrices of shape (n_tasks, n_workers)
        Each label's 0/1 votes; the stored entries (explicit zeros included)
        are the answers.
    tasks, workers : ndarray
        Task and worker ids of the rows and columns (sorted).
    label_names : ndarray
        Label of each matrix.

    Examples
    --------
    >>> import pandas as pd
    >>> from skcrowd import multilabel_votes_from_long
    >>> frame = pd.DataFrame({"task": ["a", "a", "b"], "worker": [1, 2, 1],
    ...                       "labels": ["cat|dog", "cat", ""]})
    >>> votes, tasks, workers, names = multilabel_votes_from_long(frame, sep="|")
    >>> names.tolist(), votes[1].toarray().tolist()  # dog: ticked by worker 1 on a only
    (['cat', 'dog'], [[1, 0], [0, 0]])
    """
    columns = {}
    for role, key in (("task", task), ("worker", worker), ("labels", labels)):
        try:
            columns[role] = list(data[key])
        except (KeyError, IndexError):
            raise ValueError(f"data has no column {key!r} (the {role} column); pass "
                             f"{role}=<column name>.") from None
    sets = []
    for row, entry in enumerate(columns["labels"]):
        if isinstance(entry, str):
            if sep is None:
                raise ValueError(f"labels, row {row}: {entry!r} is a string; give sep, the "
                                 "delimiter between label names (e.g. sep='|').")
            names = [n for n in entry.split(sep) if n != ""]
        elif isinstance(entry, (list, tuple, set, frozenset, np.ndarray)):
            names = list(entry)
        else:
            raise ValueError(f"labels, row {row}: {entry!r} is neither a list of labels nor "
                             "a delimited string.")
        sets.append(names)
    tasks, task_index = np.unique(np.asarray(columns["task"]), return_inverse=True)
    workers, worker_index = np.unique(np.asarray(columns["worker"]), return_inverse=True)
    pairs = task_index * len(workers) + worker_index
    unique_pairs, counts = np.unique(pairs, return_counts=True)
    if np.any(counts > 1):
        first = unique_pairs[counts > 1][0]
        raise ValueError(f"task {_show(tasks[first // len(workers)])}, worker "
                         f"{_show(workers[first % len(workers)])} has {counts[counts > 1][0]} "
                         "rows; one row per task and worker holds all the labels they ticked.")
    seen = sorted({n for names in sets for n in names})
    if label_names is None:
        if not seen:
            raise ValueError(f"labels: none of the {len(sets)} rows ticks a label, so the label "
                             "names cannot be read from them; pass label_names=[...] (every "
                             "answer then says that none of those labels is on).")
        label_names = np.asarray(seen)
    else:
        label_names = np.asarray(label_names)
        unknown = [n for n in seen if n not in set(label_names.tolist())]
        if unknown:
            raise ValueError(f"labels: {unknown[0]!r} is not in label_names.")
    shape = (len(tasks), len(workers))
    votes = []
    for name in label_names.tolist():
        bits = np.array([int(name in names) for names in sets], dtype=np.int8)
        votes.append(sp.csr_matrix((bits, (task_index, worker_index)), shape=shape))
    return votes, tasks, workers, label_names
