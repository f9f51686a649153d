"""The base aggregator: the votes matrix as ``X``.

Aggregators treat the votes matrix the way :class:`~sklearn.mixture.GaussianMixture`
treats its data: tasks are samples (rows), workers are features (columns),
and an entry is a worker's label for a task or the ``missing_label`` marker.
The EM aggregators derive from :class:`~skcrowd.aggregation._em.BaseEM`, the
EM driver (module ``_em``).
"""

from __future__ import annotations

import numbers
import sys
from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Integral, Interval, StrOptions
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted, validate_data

from .._optional import import_optional
from ..backends import MemoryVotes
from ..backends._dispatch import BACKENDS, is_long_format, open_votes
from ..votes import (SoftVotes, _as_array, _nan_marks_missing, check_not_long_format,
                     check_votes, refuse_soft_votes)
from .kernels import row_argmax


class BaseAggregator(TransformerMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class of the aggregators: the votes matrix is ``X``.

    ``predict_proba`` gives soft labels, ``predict`` the most probable class
    (in ``classes_``), ``transform`` the soft labels as features. Per-task
    outputs are keyed like ``X``: numpy arrays for an array or sparse matrix,
    a pandas DataFrame (columns ``classes_``) or Series with ``X.index`` for
    a pandas DataFrame, indexed by task id for long-format votes;
    ``transform`` follows ``set_output`` instead.
    """

    _parameter_constraints: dict = {
        "missing_label": [numbers.Real, str, None],
        "n_classes": [Interval(Integral, 1, None, closed="left"), None],
        "backend": [StrOptions(set(BACKENDS))],
    }

    #: the votes are ``X`` (what :func:`skcrowd.aggregate_long` asks of an aggregator)
    _votes_as_X = True
    #: ``X`` may be soft votes (:class:`skcrowd.SoftVotes`): the model reads weighted votes
    _accepts_soft_votes = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Votes are categorical labels given as dense, sparse or string arrays; no target.
        # Negative labels are valid (positive_only stays False), and NaN is a vote's
        # marker only where missing_label is NaN or None: the default -1 refuses NaN.
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = _nan_marks_missing(self.missing_label)
        tags.input_tags.sparse = True
        tags.input_tags.string = True
        tags.target_tags.required = False
        return tags

    def _validate_votes(self, X, *, reset, allow_no_votes=False):
        """Validate the votes matrix ``X`` and encode it as :class:`skcrowd.Votes`.

        ``reset=True`` (fit) records ``n_features_in_`` (the number of
        workers), feature names and ``classes_``; ``reset=False`` (prediction,
        warm start) checks ``X`` against them. ``allow_no_votes``: accept an
        ``X`` without any observed vote.
        """
        # soft votes have their own source (_soft_votes_source); here, hard votes only
        refuse_soft_votes(X, "X", type(self).__name__)
        # validate_data would read a long table (one row per vote) as a votes matrix
        check_not_long_format(X, "X")
        # check_array would drop a masked array's mask, and turns a DataFrame of nullable
        # integers with a missing entry into floats (an integer label above 2**53 then changes):
        # validate their data, encode X itself.
        masked = isinstance(X, np.ma.MaskedArray)
        if isinstance(X, (list, tuple)):
            # numpy would turn a list mixing strings with NaN or numbers into text
            X = _as_array(X)
        checked = validate_data(
            self,
            np.ma.getdata(X) if masked else X,
            reset=reset,
            dtype=None,
            accept_sparse=True,  # keeps the format: coo duplicates are detected, not summed
            ensure_all_finite=False,
        )
        raw = X if masked or _is_pandas_frame(X) else checked
        if reset:
            votes = check_votes(raw, missing_label=self.missing_label, n_classes=self.n_classes,
                                name="X")
            self.classes_ = votes.classes
            return votes
        return check_votes(raw, missing_label=self.missing_label, classes=self.classes_,
                           n_workers=self.n_features_in_, allow_no_votes=allow_no_votes,
                           name="X")

    def _votes_source(self, X, *, reset, allow_no_votes=False):
        """The source of the votes ``X`` (:mod:`skcrowd.backends`), and whether to close it.

        A votes matrix is validated by :meth:`_validate_votes` and held in
        memory; long-format votes (a parquet path, a pyarrow dataset, a dask
        DataFrame, a source) are opened by :func:`skcrowd.backends._dispatch.open_votes`
        according to ``backend``. ``reset=True`` records ``classes_``,
        ``n_features_in_`` and, for long-format votes, ``worker_ids_``.
        """
        if isinstance(X, SoftVotes):
            return self._soft_votes_source(X, reset=reset), False
        if not is_long_format(X):
            if self.backend in ("outofcore", "dask"):
                raise ValueError(
                    f"backend={self.backend!r} needs long-format votes (a parquet path, a "
                    "pyarrow dataset or a dask DataFrame with columns task, worker, label); "
                    f"X is a {type(X).__name__}."
                )
            if reset:
                self.__dict__.pop("worker_ids_", None)
            votes = self._validate_votes(X, reset=reset, allow_no_votes=allow_no_votes)
            return MemoryVotes(votes), False
        if reset:
            source, owned = open_votes(X, self.backend, n_classes=self.n_classes, name="X")
            self.classes_ = source.classes
            self.n_features_in_ = source.n_workers
            self.worker_ids_ = source.worker_ids
            self.__dict__.pop("feature_names_in_", None)
            return source, owned
        return open_votes(X, self.backend, classes=self.classes_, name="X",
                          worker_ids=getattr(self, "worker_ids_",
                                             np.arange(self.n_features_in_)))

    def _soft_votes_source(self, X, *, reset):
        """The source of the soft votes ``X`` (in memory: weighted triplets, one per class of
        positive probability); ``reset=True`` records ``classes_``, ``n_features_in_`` and
        ``worker_ids_`` (the ids of ``X``, when it has them), else checks ``X`` against them."""
        if not self._accepts_soft_votes:
            refuse_soft_votes(X, "X", type(self).__name__)
        if self.backend not in ("auto", "memory"):
            raise ValueError(f"soft votes are held in memory; backend={self.backend!r} needs "
                             "long-format hard votes.")
        if reset:
            if self.n_classes is not None and self.n_classes != X.n_classes:
                raise ValueError(f"n_classes={self.n_classes} but the soft votes X have "
                                 f"{X.n_classes} classes {X.classes.tolist()!r}.")
            self.classes_ = X.classes
            self.n_features_in_ = X.n_workers
            self.__dict__.pop("feature_names_in_", None)
            if X.workers is None:
                self.__dict__.pop("worker_ids_", None)
            else:
                self.worker_ids_ = X.workers
        else:
            check_is_fitted(self)
            fitted_ids = getattr(self, "worker_ids_", None)
            if (len(X.classes) != len(self.classes_)
                    or not np.array_equal(X.classes, self.classes_)):
                raise ValueError(f"the soft votes X have the classes {X.classes.tolist()!r}; "
                                 f"the estimator was fitted on {self.classes_.tolist()!r}.")
            if X.n_workers != self.n_features_in_ or (
                    fitted_ids is not None and X.workers is not None
                    and not np.array_equal(X.workers, fitted_ids)):
                raise ValueError(f"the soft votes X have {X.n_workers} workers; the estimator "
                                 f"was fitted on {self.n_features_in_} (the same workers, "
                                 "in the same order, are needed).")
        return MemoryVotes(X.to_votes(), worker_ids=X.workers, task_ids=X.tasks)

    def _votes_for_prediction(self, X):
        check_is_fitted(self)
        return self._votes_source(X, reset=False, allow_no_votes=True)

    def _task_output(self, source, out, X):
        """Per-task output of the votes ``X`` (opened as ``source``), keyed like ``X``.

        Long-format votes give a pandas Series / DataFrame indexed by task id;
        a pandas DataFrame votes matrix (rows are tasks) gives one with
        ``X.index``; other votes matrices give ``out``, a numpy array. A
        DataFrame's columns are ``classes_``. Out of core and in memory,
        ``out`` is the array of the tasks in order; on Dask it is already a
        dask collection indexed by task.
        """
        if not isinstance(out, np.ndarray):
            return out
        ids = source.task_ids()
        if ids is None and not _is_pandas_frame(X):
            return out
        pd = import_optional("pandas", "results indexed by task id")

        index = X.index if ids is None else pd.Index(ids, name="task")
        if out.ndim == 1:
            return pd.Series(out, index=index)
        return pd.DataFrame(out, index=index, columns=self.classes_)

    def _labels(self, proba):
        """Most probable class of each row of ``proba`` (numpy, pandas or dask)."""
        if isinstance(proba, np.ndarray):
            return self.classes_[row_argmax(proba)]
        if hasattr(proba, "map_partitions"):  # dask: stays lazy
            meta = _argmax_labels(proba._meta, self.classes_)
            return proba.map_partitions(_argmax_labels, self.classes_, meta=meta)
        return _argmax_labels(proba, self.classes_)

    @abstractmethod
    def predict_proba(self, X):
        """Soft labels of the tasks of ``X``."""

    def fit_predict(self, X, y=None):
        """Fit on the votes ``X`` and return the aggregated label of each task.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes.
        y : None
            Ignored.

        Returns
        -------
        labels : ndarray of shape (n_tasks,) or pandas Series
            Aggregated label of each task, in ``classes_``; a Series with
            ``X.index`` when ``X`` is a DataFrame.
        """
        return self.fit(X).predict(X)

    def predict(self, X):
        """Aggregated label of each task.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes, with the fitted workers as columns.

        Returns
        -------
        labels : ndarray of shape (n_tasks,) or pandas Series
            The most probable class of each task, in ``classes_``; a Series
            with ``X.index`` when ``X`` is a DataFrame, indexed by task id for
            long-format votes.
        """
        return self._labels(self.predict_proba(X))

    def transform(self, X):
        """Soft labels, the values of :meth:`predict_proba`, as features.

        As scikit-learn's transformers do, ``transform`` returns an array for
        a votes matrix, a DataFrame included, unless asked for pandas output:
        with ``set_output(transform="pandas")`` the result is a DataFrame with
        columns :meth:`get_feature_names_out` and the index of ``X``
        (long-format votes: the task ids).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes.

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_classes) or pandas DataFrame
            Soft labels; a DataFrame indexed by task id for long-format votes.
        """
        proba = self.predict_proba(X)
        # set_output's default keeps arrays for matrices; the wrapper adds names and index
        return proba.to_numpy() if _is_pandas_frame(X) else proba

    def get_feature_names_out(self, input_features=None):
        """Names of the soft-label columns: ``"<estimator>_<class>"``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Not used for the names (the output columns are classes, not
            workers); when given, it must match the workers seen at fit.

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self)
        _check_feature_names_in(self, input_features, generate_names=False)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}_{c}" for c in self.classes_.tolist()], dtype=object)

    def _vote_log_likelihood(self, context, task, worker, label):
        """Log-probability of held-out votes given the other votes of their tasks.

        The hook of model choice without gold (:class:`~skcrowd.aggregation.AggregatorSelector`,
        :func:`skcrowd.metrics.held_out_vote_scorer`). For each held-out vote
        ``(task[v], worker[v], label[v])``: ``log sum_k p(k | the votes of
        context on that task) p(label | k, worker)`` under the fitted model,
        through the model's own worker model (see :class:`BaseEM`, Notes).

        Parameters
        ----------
        context : Votes
            Class indices of the fitted classes, on the fitted workers; the
            held-out votes are not among them.
        task, worker, label : ndarray of shape (n_held_out,)
            Row in ``context``, worker (column) index and class index of each
            held-out vote.

        Returns
        -------
        ndarray of shape (n_held_out,)
        """
        raise NotImplementedError(
            f"{type(self).__name__} cannot score held-out votes: it does not implement "
            "_vote_log_likelihood (for an EM model: _vote_log_proba); see the Notes of "
            "skcrowd.aggregation._em.BaseEM."
        )


def _aggregators_with(flag):
    """skcrowd's public aggregators whose class attribute ``flag`` is set, as "A, B and C" in
    name order: the subclasses of ``BaseAggregator`` defined in skcrowd.aggregation (all
    imported by then: the package imports every model)."""
    found, todo = set(), [BaseAggregator]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if (getattr(cls, flag, False) and not cls.__name__.startswith("_")
                and cls.__module__.startswith("skcrowd.aggregation.")):
            found.add(cls.__name__)
    names = sorted(found)
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def _is_pandas_frame(X):
    """Whether ``X`` is a pandas DataFrame (without importing pandas)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(X, pd.DataFrame)


def _keyed_like(values, X):
    """``values``, one per row of ``X``, as a pandas Series with ``X.index`` when ``X`` is a
    DataFrame (as the aggregators' per-task outputs are), else as they are."""
    if not _is_pandas_frame(X):
        return values
    import pandas as pd

    return pd.Series(values, index=X.index)


def _argmax_labels(frame, classes):
    """Series of the most probable class of each row of a soft-label DataFrame."""
    import pandas as pd

    return pd.Series(classes[np.argmax(frame.to_numpy(), axis=1)], index=frame.index)
