"""Shared machinery of the aggregators: the votes matrix as ``X`` and the EM driver.

Aggregators treat the votes matrix the way :class:`~sklearn.mixture.GaussianMixture`
treats its data: tasks are samples (rows), workers are features (columns),
and an entry is a worker's label for a task or the ``missing_label`` marker.

:class:`BaseEM` is the one EM driver of :class:`DawidSkene`,
:class:`WeightedDawidSkene` and :class:`GLAD`, modelled on
``sklearn.mixture._base.BaseMixture``: ``fit`` calls ``fit_predict``, which
runs ``n_init`` initializations of at most ``max_iter`` iterations and keeps
the one with the best objective. Subclasses provide the model through
``_initial_statistics``, ``_m_step``, ``_e_step`` and ``_log_prior``; each
E-step is one call of a per-block kernel (:mod:`._kernels`).
"""

from __future__ import annotations

import numbers
import warnings
from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Integral, Interval, Real, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..votes import check_votes
from ._kernels import BlockLayout


class BaseAggregator(TransformerMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class of the aggregators: the votes matrix is ``X``.

    ``predict_proba`` gives soft labels, ``predict`` the most probable class
    (in ``classes_``), ``transform`` is ``predict_proba``.
    """

    _parameter_constraints: dict = {
        "missing_label": [numbers.Real, str, None],
        "n_classes": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Votes are categorical labels, possibly NaN-marked, given as dense,
        # sparse or string arrays; no target.
        tags.input_tags.categorical = True
        tags.input_tags.allow_nan = True
        tags.input_tags.positive_only = True
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
        # check_array would drop a masked array's mask: validate its data,
        # encode the masked array itself.
        masked = isinstance(X, np.ma.MaskedArray)
        checked = validate_data(
            self,
            np.ma.getdata(X) if masked else X,
            reset=reset,
            dtype=None,
            accept_sparse=True,  # keeps the format: coo duplicates are detected, not summed
            ensure_all_finite=False,
        )
        raw = X if masked else checked
        if reset:
            votes = check_votes(raw, missing_label=self.missing_label, n_classes=self.n_classes,
                                name="X")
            self.classes_ = votes.classes
            return votes
        return check_votes(raw, missing_label=self.missing_label, classes=self.classes_,
                           n_workers=self.n_features_in_, allow_no_votes=allow_no_votes,
                           name="X")

    def _votes_for_prediction(self, X):
        check_is_fitted(self)
        return self._validate_votes(X, reset=False, allow_no_votes=True)

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
        labels : ndarray of shape (n_tasks,)
            Aggregated label of each task, in ``classes_``.
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
        labels : ndarray of shape (n_tasks,)
            The most probable class of each task, in ``classes_``.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def transform(self, X):
        """Soft labels, the same as :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes.

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_classes)
        """
        return self.predict_proba(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the soft-label columns: ``"<estimator>_<class>"``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored (the output columns are classes, not workers).

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}_{c}" for c in self.classes_.tolist()], dtype=object)


def naive_soft_labels(task, label, n_tasks, empty_row, *, out=None):
    """Vote frequencies of each task (paper 002, eq. 6); ``empty_row`` for a task without votes.

    ``task`` and ``label`` are the votes' task and class indices; the result
    (shape ``(n_tasks, K)``) is written into ``out`` when given.
    """
    K = len(empty_row)
    key = task.astype(np.int64)
    key *= K
    key += label
    out = np.empty((n_tasks, K)) if out is None else out
    out.reshape(-1)[:] = np.bincount(key, minlength=n_tasks * K)
    del key
    total = out.sum(axis=1, keepdims=True)
    np.divide(out, total, out=out, where=total > 0)
    out[total[:, 0] == 0] = empty_row
    return out


class BaseEM(BaseAggregator):
    """EM driver of the latent-class aggregators (MAP estimation).

    The objective is the log-likelihood of the votes, ``sum_i log p(votes of
    task i)``, plus the log-density of the parameters' prior, divided by the
    number of tasks. Each iteration is an M-step (parameters from the
    statistics of the previous E-step) followed by an E-step (posteriors,
    log-likelihood and statistics under the new parameters), so that
    ``lower_bounds_[t]`` is the objective of the parameters of iteration
    ``t``. Iterations stop when the objective changes by less than ``tol``.
    """

    _parameter_constraints: dict = {
        **BaseAggregator._parameter_constraints,
        "init": [StrOptions({"majority", "random"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
    }

    # -- model interface ------------------------------------------------------

    @abstractmethod
    def _initial_statistics(self, layout, resp):
        """Sufficient statistics of initial responsibilities, for the first M-step."""

    @abstractmethod
    def _m_step(self, layout, resp, stats, params):
        """New parameters from the E-step's statistics (``params`` is None on the first)."""

    @abstractmethod
    def _e_step(self, layout, params, resp):
        """Fill ``resp``; return ``(statistics, log-likelihood of the votes)``."""

    @abstractmethod
    def _log_prior(self, params):
        """Log-density of the parameters' prior, up to a constant."""

    @abstractmethod
    def _set_fitted(self, params):
        """Store ``params`` as fitted attributes."""

    @abstractmethod
    def _warm_start_parameters(self, layout):
        """Parameters to resume from, built from the fitted attributes."""

    @abstractmethod
    def _posterior(self, layout, resp=None):
        """Posteriors and per-task log-likelihoods under the fitted attributes."""

    def _soft_labels(self, layout, resp=None):
        """The soft labels that ``predict_proba`` returns."""
        return self._posterior(layout, resp)[0]

    def _final_e_step(self, layout, resp):
        """Soft labels of the fitted tasks, computed the way ``predict_proba`` does."""
        return self._soft_labels(layout, resp)

    # -- fitting ----------------------------------------------------------------

    def fit(self, X, y=None):
        """Estimate the model with the EM algorithm.

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
        self.fit_predict(X, y)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_predict(self, X, y=None):
        """Estimate the model and return the aggregated label of each task.

        The result equals ``fit(X).predict(X)``: after the last iteration a
        final E-step computes the labels from the fitted attributes, exactly
        as :meth:`predict` does.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes.
        y : None
            Ignored.

        Returns
        -------
        labels : ndarray of shape (n_tasks,)
            Aggregated label of each task, in ``classes_``.
        """
        warm = self.warm_start and hasattr(self, "converged_")
        votes = self._validate_votes(X, reset=not warm)
        layout = BlockLayout(votes, n_classes=len(self.classes_))
        n_tasks = layout.n_tasks
        resp = np.empty((n_tasks, layout.n_classes))
        del votes

        random_state = check_random_state(self.random_state)
        best = None
        for init in range(1 if warm else self.n_init):
            if warm:
                params = self._warm_start_parameters(layout)
                stats, log_lik = self._e_step(layout, params, resp)
                previous = (log_lik + self._log_prior(params)) / n_tasks
            else:
                self._initial_responsibilities(layout, random_state, resp)
                stats, params, previous = self._initial_statistics(layout, resp), None, -np.inf
            lower_bounds, converged = [], False
            for n_iter in range(1, self.max_iter + 1):
                params = self._m_step(layout, resp, stats, params)
                stats, log_lik = self._e_step(layout, params, resp)
                lower_bound = (log_lik + self._log_prior(params)) / n_tasks
                lower_bounds.append(lower_bound)
                change, previous = lower_bound - previous, lower_bound
                if self.verbose >= 2:
                    print(f"  Iteration {n_iter}: lower bound {lower_bound:.8g} "
                          f"(change {change:.3g})")
                if abs(change) < self.tol:
                    converged = True
                    break
            if self.verbose:
                print(f"Initialization {init}: {'converged' if converged else 'did not converge'}"
                      f" after {n_iter} iterations, lower bound {lower_bound:.8g}")
            if best is None or lower_bound > best[0]:
                best = (lower_bound, params, n_iter, lower_bounds, converged)

        self.lower_bound_, params, self.n_iter_, self.lower_bounds_, self.converged_ = best
        if not self.converged_:
            warnings.warn(
                f"{type(self).__name__} did not converge in max_iter={self.max_iter} iterations "
                f"(last change of the objective above tol={self.tol}). Increase max_iter or tol.",
                ConvergenceWarning,
            )
        self._set_fitted(params)
        proba = self._final_e_step(layout, resp)
        return self.classes_[np.argmax(proba, axis=1)]

    def _initial_responsibilities(self, layout, random_state, resp):
        """Fill ``resp``: naive soft labels (paper 002, algorithm 2 line 1; a task without votes
        gets the frequencies of all votes) or random rows."""
        if self.init == "random":
            rows = random_state.exponential(size=resp.shape)
            np.divide(rows, rows.sum(axis=1, keepdims=True), out=resp)
            return
        frequencies = np.bincount(layout.label, minlength=layout.n_classes)
        naive_soft_labels(layout.task, layout.label, layout.n_tasks,
                          frequencies / frequencies.sum(), out=resp)

    # -- prediction -------------------------------------------------------------

    def predict_proba(self, X):
        """Soft labels (posterior probability of each class) of each task.

        Worker models come from the fit, so ``X`` may hold new tasks voted on
        by the fitted workers; a task without votes gets the class priors.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes, with the fitted workers as columns.

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_classes)
            Rows sum to one; columns follow ``classes_``.
        """
        votes = self._votes_for_prediction(X)
        return self._soft_labels(BlockLayout(votes, n_classes=len(self.classes_)))

    def score_samples(self, X):
        """Log-likelihood of the votes of each task under the fitted model.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes.

        Returns
        -------
        log_likelihood : ndarray of shape (n_tasks,)
            ``log p(votes of task i)``; 0 for a task without votes.
        """
        votes = self._votes_for_prediction(X)
        return self._posterior(BlockLayout(votes, n_classes=len(self.classes_)))[1]

    def score(self, X, y=None):
        """Mean per-task log-likelihood of the votes (higher is better).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes, for instance held-out tasks of the fitted workers.
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        return float(np.mean(self.score_samples(X)))

