"""Weighted majority votes: the estimator side shared by Wawa, ZeroBasedSkill, KOS and MMSR.

These aggregators are not EM-shaped: each estimates one weight per worker its own way
(agreement with the aggregate, message passing, rank-one completion of the workers' agreement
matrix), then labels every task by the weighted votes of its workers.
:class:`BaseWeightedVote` fits on the votes held in memory (long-format votes are read into
memory) and predicts new tasks with the fitted weights; the soft labels and the agreement with
the weighted vote are kernels (:mod:`.kernels.weighted_vote`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Integral, Interval

from ..base import _as_it_was_on_error
from ._base import BaseAggregator
from .kernels import SHARES, SOFTMAX, BlockLayout, weighted_vote_proba


class BaseWeightedVote(BaseAggregator):
    """Base class of the aggregators that are a weighted vote with one weight per worker.

    Subclasses estimate the weights in ``_fit_layout`` and give them to prediction through
    ``_worker_weights``; ``_soft_label_kind`` says how weighted votes become soft labels
    (:func:`weighted_vote_proba`). Long-format votes (a parquet path, a pyarrow dataset, a dask
    DataFrame) are read into memory.
    """

    _parameter_constraints: dict = {
        "missing_label": BaseAggregator._parameter_constraints["missing_label"],
        "n_classes": [Interval(Integral, 1, None, closed="left"), None],
    }
    backend = "memory"  # not a parameter: these models read long-format votes into memory
    _soft_label_kind = SHARES

    def _fit_layout(self, layout):
        """Estimate the per-worker model from the votes of ``layout``; set fitted attributes."""
        raise NotImplementedError

    def _worker_weights(self):
        """Weight of each fitted worker's votes."""
        raise NotImplementedError

    def _empty_row(self):
        """``empty_row`` of :func:`weighted_vote_proba`."""
        if self._soft_label_kind == SOFTMAX:
            return np.log(self.class_priors_)
        return self.class_priors_

    def fit(self, X, y=None):
        """Estimate the worker weights from the votes ``X``.

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or dask DataFrame
            Votes: a matrix of shape (n_tasks, n_workers) whose entry ``(i, j)`` is the label
            worker ``j`` gave task ``i``, or ``missing_label`` (sparse input: stored entries are
            votes); or long-format votes (columns ``task``, ``worker``, ``label``) in a parquet
            file or folder, a :class:`pyarrow.dataset.Dataset` or a
            ``dask.dataframe.DataFrame``, read into memory.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted aggregator.
        """
        self._fit(X, labels=False)
        return self

    def fit_predict(self, X, y=None):
        """Estimate the worker weights and return the aggregated label of each task.

        Equals ``fit(X).predict(X)``, with the votes validated once.

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or dask DataFrame
            Votes, as in :meth:`fit`.
        y : None
            Ignored.

        Returns
        -------
        labels : ndarray of shape (n_tasks,) or pandas Series
            Aggregated label of each task, in ``classes_``; a Series with ``X.index`` when ``X``
            is a DataFrame, indexed by task id for long-format votes.
        """
        return self._fit(X, labels=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X, labels):
        with _as_it_was_on_error(self):
            source, owned = self._votes_source(X, reset=True)
            try:
                layout = BlockLayout(source.block.votes)
                self._fit_layout(layout)
                if labels:
                    return self._task_output(source, self._labels(self._layout_proba(layout)), X)
            finally:
                if owned:
                    source.close()
        return None

    def _layout_proba(self, layout):
        return weighted_vote_proba(layout, self._worker_weights(), self._empty_row(),
                                   kind=self._soft_label_kind)[0]

    def _predict_layout(self, X, fn):
        """``fn(layout)`` on the votes of ``X`` (fitted workers), keyed like ``X``."""
        source, owned = self._votes_for_prediction(X)
        try:
            return self._task_output(source, fn(BlockLayout(source.block.votes)), X)
        finally:
            if owned:
                source.close()

    def predict_proba(self, X):
        """Soft labels of each task: its weighted votes, with the fitted worker weights.

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or dask DataFrame
            Votes, with the fitted workers (as columns of a matrix, or as worker ids of
            long-format votes).

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_classes) or pandas DataFrame
            Rows sum to one; columns follow ``classes_``; a task without votes (or whose votes
            weigh nothing) gets ``class_priors_``. A DataFrame with ``X.index`` when ``X`` is a
            DataFrame, indexed by task id for long-format votes.
        """
        return self._predict_layout(X, self._layout_proba)

    def _vote_frequencies(self, layout):
        counts = np.bincount(layout.label, minlength=layout.n_classes)
        return counts / counts.sum()


def fill_unassessed(values, assessed):
    """``values`` where ``assessed``, elsewhere the mean of the assessed values (or 0 if none).

    A worker without votes at fit (or whom the model could not assess) counts as an average
    worker of the crowd when it votes on new tasks.
    """
    out = np.array(values, dtype=np.float64)
    out[~assessed] = out[assessed].mean() if assessed.any() else 0.0
    return out
