"""The EM driver of the latent-class aggregators, and its block functions.

:class:`BaseEM` is the one EM driver of :class:`DawidSkene`,
:class:`WeightedDawidSkene`, :class:`GLAD`, :class:`OneCoinDawidSkene`,
:class:`MACE`, :class:`BayesianDawidSkene` and :class:`EBCC`, modelled on
``sklearn.mixture._base.BaseMixture``: ``fit`` calls ``fit_predict``, which
runs ``n_init`` initializations of at most ``max_iter`` iterations and keeps
the one with the best objective. Subclasses provide the model through
``_statistics``, ``_m_step``, ``_e_step`` and ``_parameter_term`` (see
:class:`BaseEM` and the contributor guide); each E-step is one call of a
per-block kernel (:mod:`.kernels`). The same driver runs MAP EM and
mean-field variational Bayes.

The votes come from a *source* (:mod:`skcrowd.backends`) of blocks of whole
tasks: one block in memory, streamed blocks out of core, partitions of a Dask
cluster. Every iteration hands the parameters to each block (the rows of its
workers), runs the same kernel there and sums the statistics, so the three
sources give the same model.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import typing
import warnings
from abc import abstractmethod
from typing import Annotated

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binomtest
from sklearn.base import _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Integral, Interval, Real, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..backends import MemoryVotes
from ..base import _as_it_was_on_error
from ..votes import _fmt, check_known_labels
from ._base import BaseAggregator
from ._task_draws import _TaskDraws
from ._task_priors import (_by_task, _check_task_prior, _log_task_priors,
                           _models_with_task_priors, _prior_kwargs, _task_keys, _TaskPriors,
                           _weigh_by_priors)
from .kernels import (BlockLayout, fit_engine, naive_soft_labels, numpy_engine, row_argmax,
                      safe_log)


# The axis of each field of a model's parameter and statistic NamedTuples (BaseEM._Parameters,
# BaseEM._Statistics), declared by its annotation: one row per worker (given to each block as
# the rows of its workers; statistics summed over the blocks), one row per task (kept with the
# task's block), or shared by all (statistics summed over the blocks).
PerWorker = Annotated[np.ndarray, "worker"]
PerTask = Annotated[np.ndarray, "task"]
Shared = Annotated[np.ndarray, "shared"]


@functools.cache
def field_axes(fields):
    """The axis (``"worker"``, ``"task"`` or ``"shared"``) of each field of the NamedTuple class
    ``fields`` (a model's parameters or statistics), in field order, read from its annotations
    (:data:`PerWorker`, :data:`PerTask`, :data:`Shared`)."""
    hints = typing.get_type_hints(fields, include_extras=True)
    axes = tuple(getattr(hints[name], "__metadata__", (None,))[0] for name in fields._fields)
    if not set(axes) <= {"worker", "task", "shared"}:
        raise TypeError(f"every field of {fields.__name__} must be annotated PerWorker, "
                        f"PerTask or Shared; got the axes {axes}.")
    return axes


# Iterations in which a data-chosen prior may settle before EM proper starts (see
# BaseEM._prior_settled); a prior still moving then is kept as it is.
_MAX_PRIOR_ITER = 50


class BaseEM(BaseAggregator):
    """EM driver of the latent-class aggregators (MAP EM or mean-field variational Bayes).

    The objective is ``(sum_i log p(votes of task i) + parameter term) /
    n_tasks``: the E-step's log-likelihood of the votes plus the model's
    parameter term (``_parameter_term``, plus each block's
    ``_task_parameter_term`` for per-task parameters). For MAP EM the
    parameter term is the log-density of the parameters' prior (up to a
    constant). Each iteration is an M-step (parameters from the statistics of
    the previous E-step) followed by an E-step (posteriors, log-likelihood and
    statistics under the new parameters), so that ``lower_bounds_[t]`` is the
    objective of the parameters of iteration ``t``. Iterations stop when the
    objective changes by less than ``tol``. A model whose M-step chooses its
    prior from the data (``_prior_settled``) first iterates until the prior
    settles; those iterations optimize no one objective (each has its own
    prior) and are neither recorded nor counted in ``n_iter_``, so that
    ``lower_bounds_`` is the objective of one model, which EM never
    decreases (the contract of scikit-learn's mixtures).

    The E-step runs block by block on the votes' source: the per-worker
    parameters go to each block as the rows of its workers, and the M-step
    sees the statistics summed over blocks. The model's parameters are a
    NamedTuple, ``_Parameters``, whose field annotations declare where each
    lives: :data:`PerWorker` (one row per worker), :data:`PerTask` (one row
    per task, kept with the task's block; its M-step, ``_task_m_step``, runs
    there) or :data:`Shared` (see :func:`field_axes`); its statistics are a
    NamedTuple too, ``_Statistics``, whose per-worker and shared fields are
    summed over the blocks.

    Notes
    -----
    **Variational Bayes.** A mean-field VB model (``q(true classes)
    q(parameters)``, as in MACE, Bayesian classifier combination or EBCC)
    runs on the same driver. Its ``_m_step`` returns the variational
    parameters (for instance Dirichlet posterior counts: prior plus expected
    counts) together with the expected log-parameters ``E_q[log theta]`` that
    its E-step kernels use in place of log-parameters. The E-step's
    log-likelihood is then the sum over tasks of the log-normalizer ``log
    sum_k exp(E_q[log p(true class k, votes of task i | theta)])``, and
    ``_parameter_term`` returns ``-KL(q(parameters) || prior)``, so that the
    objective is the evidence lower bound (ELBO) per task, which VB never
    decreases. ``score_samples`` reports the second output of ``_posterior``:
    a VB model says in its docstring what it gives there (the per-task
    log-normalizer, or ``log p(votes of task i)`` at the posterior mean of the
    parameters).

    **Held-out votes (model choice without gold).**
    :class:`~skcrowd.aggregation.AggregatorSelector`
    and :func:`skcrowd.metrics.held_out_vote_scorer` compare models by the
    log-probability of held-out votes given the other votes of their tasks,
    ``log sum_k p(k | other votes of the task) p(vote | k, worker)``: the
    first factor is ``_soft_labels`` of the other votes (what ``predict_proba``
    returns for them), the second the model's own worker model, from the hook
    ``_vote_log_proba(layout, params, task, worker, label)``: an array of
    shape ``(n_held_out, K)`` of ``log p(label[v] | true class k, worker[v])``
    for held-out votes on the tasks ``task`` of the block ``layout`` (the
    other votes; a model with per-task parameters, like GLAD's difficulties,
    estimates them from these votes), with the block parameters ``params``
    built from the fitted attributes. A model without it cannot be compared
    this way: the selector raises a TypeError naming it. A
    model whose held-out probability does not factor this way overrides
    ``_vote_log_likelihood`` (see :class:`BaseAggregator`) instead.

    **Adding a model.** The guide to adding a model (kernels, the estimator's
    hooks and parameter NamedTuple, scale, per-task priors, tests) is the
    contributor page of the documentation, ``doc/contributing.rst``.
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

    _Parameters: type  # the model's parameter NamedTuple, fields annotated with their axes
    _Statistics: type  # the model's statistic NamedTuple, fields annotated with their axes
    _supports_task_priors = False  # True once the model's E-step takes log_task_priors
    # ENGINE="auto" from AUTO_NUMBA_MIN_VOTES votes while numba's cache is cold: run numpy
    # (True) or compile at the first call (False: where numpy's fit costs more than compiling)
    _numpy_while_cold = True

    def __init__(self, n_classes, *, init, max_iter, tol, n_init, random_state, warm_start,
                 verbose, missing_label, backend):
        """The parameters every EM model has; each model lists them in its own signature
        (scikit-learn's ``get_params`` reads it) and passes them here."""
        self.n_classes = n_classes
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.missing_label = missing_label
        self.backend = backend

    # -- model interface ------------------------------------------------------
    # Parameters are a _Parameters NamedTuple. Those passed to and returned by _m_step,
    # _parameter_term, _set_fitted and _fitted_parameters have None in their PerTask
    # fields; the per-block hooks (_e_step, _posterior, _soft_labels, _final_e_step,
    # _task_parameters) get every field, with the rows of the block's workers.

    @abstractmethod
    def _statistics(self, layout, resp):
        """Sufficient statistics of given responsibilities of a block's tasks."""

    def _initial_statistics(self, layout, draws):
        """Statistics of a block's initial responsibilities, for the first M-step."""
        resp = np.empty((layout.n_tasks, layout.n_classes))
        self._initial_responsibilities(layout, draws, resp)
        return self._start_statistics(layout, resp, draws)

    def _start_statistics(self, layout, resp, draws):
        """Statistics of a block's initial class responsibilities ``resp`` for the first
        M-step; ``draws`` (:class:`_TaskDraws`) gives the block's per-task random numbers to a
        model that splits them further (EBCC's subtypes)."""
        return self._statistics(layout, resp)

    @abstractmethod
    def _m_step(self, stats, params):
        """New parameters from the summed statistics (``params`` is None on the first)."""

    def _task_m_step(self, task_stats, task_params, shared):
        """New per-task parameters of a block (``task_params`` is None on the first);
        ``shared``: the ``"shared"`` parameter entries of the iteration, in order."""
        raise NotImplementedError  # only models with "task" parameters

    @abstractmethod
    def _e_step(self, layout, params, out=None):
        """A block's E-step: ``(statistics, log-likelihood)``.

        ``out``: the running sums of the per-worker statistics of a pass over
        blocks numbered crowd-wide, to add this block's into (out of core);
        the returned per-worker statistics are then ignored. A model with
        ``_supports_task_priors`` also takes the keyword ``log_task_priors``
        (see the contributor page, "Per-task priors").
        """

    def _class_log_priors(self, params):
        """The ``(K,)`` log class priors that the E-step adds to every task's logits (for VB,
        ``E_q[log rho]``), from a block's full parameter tuple (models with per-task priors)."""
        raise NotImplementedError

    @abstractmethod
    def _parameter_term(self, params):
        """The parameters' term of the objective: the log-density of their prior, up to a
        constant (MAP EM), or ``-KL(q(parameters) || prior)`` (variational Bayes)."""

    def _prior_settled(self, params):
        """Whether the prior of ``params`` (returned by ``_m_step``) is final.

        A model that chooses its prior from the data ("auto" priors, empirical Bayes) moves it
        in its M-steps until it settles, then keeps it (returns True from then on, for
        instance with a flag carried in its parameters). The objective is that of one fixed
        model only from the first iteration whose prior is final: the driver records and
        counts only those iterations, so that ``lower_bounds_`` never decreases.
        """
        return True

    def _settle_prior(self, params):
        """``params`` with their prior made final (kept by the next M-steps), for a prior
        that did not settle in ``_MAX_PRIOR_ITER`` iterations."""
        return params

    def _task_parameter_term(self, task_params, shared):
        """The term of a block's per-task parameters in the objective (as ``_parameter_term``);
        ``shared`` as in ``_task_m_step``."""
        raise NotImplementedError  # only models with "task" parameters

    @abstractmethod
    def _set_fitted(self, params):
        """Store ``params`` as fitted attributes."""

    @abstractmethod
    def _fitted_parameters(self):
        """Parameters built from the fitted attributes (warm start, prediction)."""

    def _task_parameters(self, layout, params, **priors):
        """Per-task parameters of a block for fitted ``params`` (warm start); ``priors``: the
        keyword ``log_task_priors`` when given (as for every per-block hook)."""
        raise NotImplementedError  # only models with "task" parameters

    @abstractmethod
    def _posterior(self, layout, params, resp=None):
        """Posteriors and per-task log-likelihoods of a block under fitted ``params``."""

    def _soft_labels(self, layout, params, resp=None, **priors):
        """The soft labels that ``predict_proba`` returns."""
        return self._posterior(layout, params, resp, **priors)[0]

    def _final_e_step(self, layout, params, **priors):
        """Soft labels of fitted tasks (as ``predict_proba``), and per-task fitted attributes."""
        return self._soft_labels(layout, params, **priors), {}

    # -- fitting ----------------------------------------------------------------

    def fit(self, X, y=None, *, task_prior=None):
        """Estimate the model with the EM algorithm.

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or dask DataFrame
            Votes: a matrix of shape (n_tasks, n_workers) whose entry ``(i, j)``
            is the label worker ``j`` gave task ``i``, or ``missing_label``
            (sparse input: stored entries are votes); or long-format votes
            (columns ``task``, ``worker``, ``label``) in a parquet file or
            folder, a :class:`pyarrow.dataset.Dataset` (out of core) or a
            ``dask.dataframe.DataFrame`` (on Dask); see :ref:`scale`.
        y : array-like of shape (n_tasks,) or pandas Series, default=None
            Known labels of control tasks (gold, honeypots): the label of a
            task whose answer is known, ``missing_label`` (or None / NaN in
            an object or float array) where it is not. A known task keeps its
            label during EM (its posterior is fixed to it), which anchors the
            worker models. An array is read in the order of the tasks (rows
            of a votes matrix); a pandas Series with a DataFrame ``X`` (or
            long-format votes) is read by task, ``X.index`` (task ids), and a
            task absent from its index is unknown. A known label that no
            worker gave joins ``classes_``. With ``init="majority"`` EM starts
            from the model fitted on the known tasks alone (its class priors
            are theirs): this undoes an adversarial majority and mostly helps
            on imbalanced crowds, but a few known tasks can also move EM to
            another optimum, a less accurate one on some crowds; check on
            held-out gold. Votes in memory only. See :ref:`control_tasks`.
        task_prior : array-like of shape (n_tasks, n_classes) or pandas DataFrame, default=None
            Prior probabilities of each task's true class (columns in
            ``classes_`` order, rows summing to one; zeros allowed), for
            instance a classifier's out-of-fold ``predict_proba`` on the
            tasks' features: it replaces the class priors for these tasks in
            EM. A DataFrame with a DataFrame ``X`` (or long-format votes) is
            read by task, its columns by class. Votes in memory only.

        Returns
        -------
        self : object
            The fitted aggregator.
        """
        self.fit_predict(X, y, task_prior=task_prior)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_predict(self, X, y=None, *, task_prior=None):
        """Estimate the model and return the aggregated label of each task.

        The result equals ``fit(X).predict(X)``: after the last iteration a
        final E-step computes the labels from the fitted attributes, exactly
        as :meth:`predict` does. With known tasks (``y``) the final E-step
        keeps their posteriors fixed too, so a known task gets its known
        label (the other tasks get ``fit(X, y).predict(X)``); with
        ``task_prior``, the labels are ``fit(X, task_prior=P).predict(X,
        task_prior=P)``.

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or dask DataFrame
            Votes, as in :meth:`fit`.
        y : array-like of shape (n_tasks,) or pandas Series, default=None
            Known labels of control tasks, as in :meth:`fit`.
        task_prior : array-like of shape (n_tasks, n_classes) or pandas DataFrame, default=None
            Per-task prior probabilities, as in :meth:`fit`.

        Returns
        -------
        labels : ndarray of shape (n_tasks,), pandas Series or dask Series
            Aggregated label of each task, in ``classes_``; a Series with
            ``X.index`` when ``X`` is a DataFrame, and for long-format votes a
            Series indexed by task id (lazy on Dask).
        """
        with _as_it_was_on_error(self):
            warm = self.warm_start and hasattr(self, "converged_")
            source, owned = self._votes_source(X, reset=not warm)
            try:
                source, priors = self._task_priors(source, X, y, task_prior, reset=not warm)
                # ENGINE="auto": one engine for the whole fit
                # weighted (soft) votes: the numpy kernels, the ones that read weights
                with fit_engine(source.n_votes, numpy_while_cold=self._numpy_while_cold), \
                        numpy_engine(_weighted(source)):
                    labels = self._fit_source(source, warm, priors)
                return self._task_output(source, labels, X)
            finally:
                if owned:
                    source.close()

    def _task_priors(self, source, X, y, task_prior, *, reset):
        """The validated ``y`` and ``task_prior`` of the tasks of ``source``:
        ``(source, _TaskPriors or None)``.

        At ``reset``, known labels that no worker gave join ``classes_`` (the
        votes' class indices are renumbered, giving a new source).
        """
        if y is None and task_prior is None:
            return source, None
        if not self._supports_task_priors:
            raise ValueError(
                f"{type(self).__name__} does not support known tasks (y) or task_prior; "
                f"{_models_with_task_priors()} do."
            )
        if not isinstance(source, MemoryVotes):
            raise ValueError(
                f"y (known tasks) and task_prior need the votes in memory; backend="
                f"{self.backend!r} keeps them in a {type(source).__name__}. Pass "
                "backend='memory' to read long-format votes into memory."
            )
        keys, what = _task_keys(source, X)
        known = None
        if y is not None:
            y = _by_task(y, keys, "y", what)
            known, y_classes = check_known_labels(
                y, source.n_tasks, missing_label=self.missing_label,
                classes=None if reset else self.classes_,
                n_classes=self.n_classes if reset else None, name="y", what=what)
            if reset:
                source, known = self._add_known_classes(source, known, y_classes)
        log_prior = None
        if task_prior is not None:
            log_prior = _check_task_prior(_by_task(task_prior, keys, "task_prior", what),
                                          source.n_tasks, self.classes_, what, known)
        return source, _TaskPriors.of(known, log_prior)

    def _add_known_classes(self, source, known, y_classes):
        """``classes_`` extended with the known labels (indices ``known`` in ``y_classes``)
        that no worker gave: ``(source, known)`` renumbered in the new ``classes_``."""
        is_known = known >= 0
        if not is_known.any():
            return source, known
        classes = self.classes_
        if (y_classes.dtype.kind in "US") != (classes.dtype.kind in "US"):
            i = int(np.argmax(is_known))
            raise ValueError(
                f"y has label {_fmt(y_classes[known[i]])} at task {i}, of another type than "
                f"the labels of the votes {classes.tolist()!r}."
            )
        union = np.union1d(classes, y_classes)
        if len(union) > len(classes):
            votes = source.block.votes
            renumber = np.searchsorted(union, classes)
            votes = dataclasses.replace(votes, label=renumber[votes.label], classes=union)
            source = MemoryVotes(votes, worker_ids=source.worker_ids,
                                 task_ids=source.task_ids())
            self.classes_ = union
        return source, np.where(is_known, np.searchsorted(union, y_classes)[known], -1)

    def _fit_source(self, source, warm, priors=None):
        """EM on the blocks of ``source``; returns the labels of its tasks (array or dask).

        Per-worker parameters stay in the source's order of the workers
        (``source.worker_order``) until they are stored.
        """
        n_tasks = source.n_tasks
        model = clone(self)  # what the blocks need: the parameters, not the fitted attributes
        random_state = check_random_state(self.random_state)
        best = None
        # With known tasks, each initialization starts twice: from the model fitted on the known
        # tasks, and from the usual start with the known tasks at their labels (see
        # _known_label_score for the choice between the two).
        starts = [((), None)] if warm else [self._known_task_parameters(source, model, priors)]
        if starts[0][1] is not None:
            starts.append(((), None))
        best = [None] * len(starts)  # the best initialization of each start
        for init, (start, (tables, shared)) in itertools.product(
                range(1 if warm else self.n_init), enumerate(starts)):
            if warm:
                params = self._reorder_workers(self._fitted_parameters(), source.worker_order)
                stats, log_lik, task_term = self._run_e_step(source, model, params, priors,
                                                             warm=True)
                previous = self._objective(params, log_lik, task_term, n_tasks)
            else:
                # one seed per start; each task's random numbers follow from it and the task's
                # id, whatever the blocks (see _TaskDraws)
                seed = random_state.randint(np.iinfo(np.int32).max)
                stats = source.map_reduce(_initial_block, tables,
                                          (model, seed, priors, shared), stateful=True,
                                          with_tasks=True)
                params, previous = None, -np.inf
            end, stats = self._iterate(source, model, stats, params, previous, priors)
            lower_bound, params, n_iter, _, converged = end
            if self.verbose:
                print(f"Initialization {init}: {'converged' if converged else 'did not converge'}"
                      f" after {n_iter} iterations, lower bound {lower_bound:.8g}")
            if best[start] is None or lower_bound > best[start][0]:
                best[start] = end

        del stats  # the last statistics (as large as the tables) are not needed any more
        best = best[0] if len(best) == 1 else self._better_end(source, model, priors, *best)
        self.lower_bound_, params, self.n_iter_, self.lower_bounds_, self.converged_ = best
        self._warn_if_not_converged()
        tables, shared = self._split_parameters(params)
        self._set_fitted(self._reorder_workers(params, source.worker_order, inverse=True))
        if _is_distributed(source):  # per-task outputs stay on the cluster
            return self._labels(source.map_tasks(_soft_label_block, tables,
                                                 (model, shared, priors), columns=self.classes_))
        best_class, task_attributes = source.map_tasks(_final_block, tables,
                                                       (model, shared, priors))
        for name, value in task_attributes.items():
            setattr(self, name, value)
        return self.classes_[best_class]

    def _warn_if_not_converged(self):
        if not self.converged_:
            warnings.warn(
                f"{type(self).__name__} did not converge in max_iter={self.max_iter} iterations "
                f"(last change of the objective above tol={self.tol}). Increase max_iter or tol.",
                ConvergenceWarning,
            )

    def _iterate(self, source, model, stats, params, previous, priors, carried=None):
        """EM iterations from the block statistics ``stats`` (and the parameters ``params``
        they were computed under, None at the start) until the objective changes by less than
        ``tol`` or ``max_iter`` iterations: ``((lower_bound, params, n_iter, lower_bounds,
        converged), stats)``, with the statistics of the last E-step.

        ``carried``: the statistics of earlier batches in
        :meth:`~skcrowd.aggregation._online.OnlineEMMixin.partial_fit` (a ``_Statistics``,
        per-worker fields over every worker of ``source``), joined to those of the E-step at
        every M-step (``_with_carried``).
        """
        lower_bounds, converged, n_iter, choosing = [], False, 0, 0
        while n_iter < self.max_iter:
            merged = _merge(self, stats)
            if carried is not None:
                merged = self._with_carried(carried, merged, params)
            params = self._m_step(merged, params)
            stats, log_lik, task_term = self._run_e_step(source, model, params, priors)
            if not self._prior_settled(params):
                # the M-step is still choosing the prior from the data: the objective of
                # this iteration belongs to a provisional prior, not comparable with the
                # next one; these iterations are not EM iterations of one objective, so
                # they are neither recorded nor counted (at most _MAX_PRIOR_ITER of them)
                choosing += 1
                if choosing < _MAX_PRIOR_ITER:
                    if self.verbose >= 2:
                        print(f"  Choosing the prior: iteration {choosing}")
                    continue
                params = self._settle_prior(params)
            n_iter += 1
            lower_bound = self._objective(params, log_lik, task_term, source.n_tasks)
            lower_bounds.append(lower_bound)
            change, previous = lower_bound - previous, lower_bound
            if self.verbose >= 2:
                print(f"  Iteration {n_iter}: lower bound {lower_bound:.8g} "
                      f"(change {change:.3g})")
            if abs(change) < self.tol:
                converged = True
                break
        return (lower_bound, params, n_iter, lower_bounds, converged), stats

    def _known_task_parameters(self, source, model, priors):
        """With known tasks and ``init="majority"``: the model fitted on the known tasks
        alone, one M-step from their labels, as ``(per-worker tables, shared)``; else
        ``((), None)``.

        One of the two starts of such a fit (the other is the usual one; see
        :meth:`_better_end`) is the posteriors of every task under this model (see
        :func:`_initial_block`): from the naive vote shares, EM follows a majority of
        adversarial or class-swapping workers to a labelling that the known tasks alone cannot
        undo. The model's prior keeps a worker without known tasks at its prior mode, so that
        such workers weigh alike, as in majority vote.
        """
        if priors is None or priors.known_rows is None or self.init != "majority":
            return (), None
        stats = source.map_reduce(_known_task_block, args=(model, priors))
        return self._split_parameters(self._m_step(_merge(self, stats), None))

    def _better_end(self, source, model, priors, known_start, usual_start):
        """The better of the two ends of a fit with known tasks (``(lower_bound, params, ...)``
        from the known-task model's start and from the usual one).

        Both climb the same objective, log p(votes, known labels), but a few known tasks weigh
        little in it against the votes of every task: where a majority of workers swaps
        classes, the votes are explained as well swapped, and the objective can prefer the end
        that follows them (MACE, three classes, 2 % known tasks: by 120 nats), which the start
        from the known-task model undoes. From a few known tasks of an imbalanced crowd that
        start can instead lead EM to a worse optimum than the usual start (issue 23, section 4:
        by 9 to 99 nats). So the known labels decide where they can tell the ends apart: each
        end labels the known tasks from their votes alone, and when one is right on
        significantly more of them (exact two-sided sign test over the tasks where exactly one
        is right, at 5 %), it is kept; otherwise the end of the better objective is.
        """
        right = [source.map_reduce(_known_label_block, tables, (model, shared, priors))[1][0]
                 for tables, shared in (self._split_parameters(end[1])
                                        for end in (known_start, usual_start))]
        only_known, only_usual = (int(np.sum(a & ~b)) for a, b in (right, right[::-1]))
        differ = only_known + only_usual
        if differ and binomtest(only_known, differ).pvalue < 0.05:
            return known_start if only_known > only_usual else usual_start
        return known_start if known_start[0] >= usual_start[0] else usual_start

    def _reorder_workers(self, params, order, inverse=False):
        """``params`` with the per-worker rows in ``order`` (or put back, ``inverse=True``)."""
        if order is None:
            return params
        out = []
        for p, a in zip(params, field_axes(self._Parameters)):
            if a == "worker" and inverse:
                p, reordered = np.empty_like(p), p
                p[order] = reordered
            elif a == "worker":
                p = p[order]
            out.append(p)
        return self._Parameters(*out)

    def _split_parameters(self, params):
        """(per-worker tables, shared entries) of the M-step's parameters."""
        axes = field_axes(self._Parameters)
        return (tuple(p for p, a in zip(params, axes) if a == "worker"),
                tuple(p for p, a in zip(params, axes) if a == "shared"))

    def _run_e_step(self, source, model, params, priors, warm=False):
        """One E-step over the blocks: (summed statistics, log-likelihood, per-task parameters'
        term of the objective)."""
        tables, shared = self._split_parameters(params)
        per_worker, other = source.map_reduce(_e_step_block, tables,
                                              (model, shared, warm, priors), stateful=True)
        *other, log_lik, task_term = other
        return (per_worker, tuple(other)), log_lik, task_term

    def _objective(self, params, log_lik, task_term, n_tasks):
        """Per-task objective of ``params``: MAP objective or ELBO (see the class docstring)."""
        return (log_lik + self._parameter_term(params) + task_term) / n_tasks

    def _initial_responsibilities(self, layout, draws, resp):
        """Fill ``resp``: naive soft labels (paper 002, algorithm 2 line 1; a task without votes
        gets the frequencies of all votes) or random rows, flat-Dirichlet draws of each task
        (``draws``, a :class:`_TaskDraws`)."""
        if self.init == "random":
            resp[:] = draws.flat_dirichlet(0, 1, resp.shape[1])[:, 0]
            return
        naive_soft_labels(layout.task, layout.label, layout.n_tasks, _vote_frequencies(layout),
                          weights=layout.weight, out=resp)

    # -- prediction -------------------------------------------------------------

    def _map_fitted(self, X, fn, task_prior=None):
        """``fn`` on the blocks of ``X`` under the fitted parameters: per-task output."""
        source, owned = self._votes_for_prediction(X)
        try:
            _, priors = self._task_priors(source, X, None, task_prior, reset=False)
            params = self._reorder_workers(self._fitted_parameters(), source.worker_order)
            tables, shared = self._split_parameters(params)
            with numpy_engine(_weighted(source)):
                out = source.map_tasks(fn, tables, (clone(self), shared, priors),
                                       columns=self.classes_)
            return self._task_output(source, out, X)
        finally:
            if owned:
                source.close()

    def predict(self, X, *, task_prior=None):
        """Aggregated label of each task.

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or dask DataFrame
            Votes, with the fitted workers.
        task_prior : array-like of shape (n_tasks, n_classes) or pandas DataFrame, default=None
            Prior probabilities of the true class of each task of ``X``, in
            place of the class priors (see :meth:`fit`).

        Returns
        -------
        labels : ndarray of shape (n_tasks,), pandas or dask Series
            The most probable class of each task, in ``classes_``; a Series
            with ``X.index`` when ``X`` is a DataFrame, indexed by task id for
            long-format votes.
        """
        return self._labels(self.predict_proba(X, task_prior=task_prior))

    def predict_proba(self, X, *, task_prior=None):
        """Soft labels (posterior probability of each class) of each task.

        Worker models come from the fit, so ``X`` may hold new tasks voted on
        by the fitted workers; a task without votes gets the class priors.
        Known labels given to ``fit`` (``y``) are not used here: on the
        fitted tasks this is the model's own posterior given their votes,
        which a control task's known label can be checked against.

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or dask DataFrame
            Votes, with the fitted workers (as columns of a matrix, or as
            worker ids of long-format votes).
        task_prior : array-like of shape (n_tasks, n_classes) or pandas DataFrame, default=None
            Prior probabilities of the true class of each task of ``X``, in
            place of the class priors (see :meth:`fit`).

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_classes), pandas or dask DataFrame
            Rows sum to one; columns follow ``classes_``. A DataFrame ``X``
            gives a DataFrame with ``X.index`` and columns ``classes_``;
            long-format votes give one indexed by task id (lazy on Dask).
        """
        return self._map_fitted(X, _soft_label_block, task_prior)

    def score_samples(self, X):
        """Log-likelihood of the votes of each task under the fitted model.

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or dask DataFrame
            Votes.

        Returns
        -------
        log_likelihood : ndarray of shape (n_tasks,), pandas or dask Series
            ``log p(votes of task i)``; 0 for a task without votes. A Series
            with ``X.index`` when ``X`` is a DataFrame, indexed by task id for
            long-format votes.
        """
        return self._map_fitted(X, _log_likelihood_block)

    def score(self, X, y=None):
        """Mean per-task log-likelihood of the votes (higher is better).

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or dask DataFrame
            Votes, for instance held-out tasks of the fitted workers.
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        mean = np.mean(self.score_samples(X))
        return float(mean.compute() if hasattr(mean, "compute") else mean)

    # -- held-out votes (see the class Notes) ------------------------------------

    def _vote_log_proba(self, layout, params, task, worker, label):
        """``(n_held_out, K)``: ``log p(label[v] | true class k, worker[v])`` of held-out votes
        on the tasks ``task`` of ``layout`` (the other votes), under the block ``params``."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot score held-out votes: it does not implement "
            "_vote_log_proba; see the Notes of skcrowd.aggregation._em.BaseEM."
        )

    def _vote_log_likelihood(self, context, task, worker, label):
        check_is_fitted(self)
        layout = BlockLayout(context, len(self.classes_))
        params = _block_parameters(self, *self._split_parameters(self._fitted_parameters()))
        log_vote = self._vote_log_proba(layout, params, task, worker, label)
        proba = self._soft_labels(layout, params)
        return logsumexp(safe_log(proba[task]) + log_vote, axis=1)


# -- block functions (module level: they run on Dask workers too) ----------------------------


def _weighted(source):
    """Whether the votes of ``source`` are weighted (soft votes, held in memory)."""
    return isinstance(source, MemoryVotes) and source.block.votes.weight is not None


def _is_distributed(source):
    return hasattr(source, "client")


def _merge(model, stats):
    """The M-step's statistics: the summed per-worker and shared fields (per-task ones None)."""
    sources = dict(zip(("worker", "shared"), map(iter, stats)))
    return model._Statistics(*(None if a == "task" else next(sources[a])
                               for a in field_axes(model._Statistics)))


def _split_statistics(model, stats):
    """(per-worker, shared, per-task) entries of a block's statistics."""
    axes = field_axes(model._Statistics)
    return tuple(tuple(s for s, a in zip(stats, axes) if a == kind)
                 for kind in ("worker", "shared", "task"))


def _block_parameters(model, tables, shared, task_params=None):
    """The model's parameters of a block (per-task entries None if not given)."""
    axes = field_axes(model._Parameters)
    if task_params is None:
        task_params = (None,) * axes.count("task")
    sources = {"worker": iter(tables), "shared": iter(shared), "task": iter(task_params)}
    return model._Parameters(*(next(sources[a]) for a in axes))


def _vote_frequencies(layout):
    """Frequencies of the classes among a block's votes: the naive soft label of a task
    without votes."""
    frequencies = np.bincount(layout.label, weights=layout.weight, minlength=layout.n_classes)
    return frequencies / frequencies.sum()


def _has_task_parameters(model):
    return "task" in field_axes(model._Parameters)


def _initial_block(block, tables, model, seed, priors, shared, state):
    """Statistics of a block's initial responsibilities; the block keeps its per-task ones.

    With per-task priors, the initial responsibilities are multiplied by them (a known task
    starts at its label); given parameters (``shared`` not None: the model fitted on the known
    tasks, see ``BaseEM._known_task_parameters``), they are the posteriors under them. Random
    numbers come from ``seed`` and each task's id (:class:`_TaskDraws`).
    """
    layout = block.layout
    draws = _TaskDraws(seed, block.tasks, layout.n_tasks)
    if priors is None:
        stats = model._initial_statistics(layout, draws)
    elif shared is not None:
        params = _block_parameters(model, tables, shared)
        resp = model._posterior(layout, params,
                                **_prior_kwargs(model, priors, layout, params))[0]
        stats = model._start_statistics(layout, resp, draws)
    else:
        resp = np.empty((layout.n_tasks, layout.n_classes))
        model._initial_responsibilities(layout, draws, resp)
        _weigh_by_priors(resp, _log_task_priors(model, priors, layout, None))
        stats = model._start_statistics(layout, resp, draws)
    per_worker, shared, task_stats = _split_statistics(model, stats)
    return per_worker, shared, (task_stats, None)


def _known_task_block(block, tables, model, priors, state):
    """Statistics of the known tasks of a block alone, their posteriors fixed to their labels."""
    known = BlockLayout(block.votes.take_tasks(priors.known_rows))
    resp = np.zeros((known.n_tasks, known.n_classes))
    resp[np.arange(known.n_tasks), priors.known_classes] = 1.0
    per_worker, shared, _ = _split_statistics(model, model._statistics(known, resp))
    return per_worker, shared, None


def _known_label_block(block, tables, model, shared, priors, state):
    """Whether the most probable class of each known task given its votes alone (the class
    priors, not its label) is its label; known tasks are fitted in memory only, in one block."""
    known = BlockLayout(block.votes.take_tasks(priors.known_rows))
    proba = model._soft_labels(known, _block_parameters(model, tables, shared))
    return (), (row_argmax(proba) == priors.known_classes,), None


def _e_step_block(block, tables, model, shared, warm, priors, state, out=None):
    """A block's per-task M-step (if any) and E-step: (per-worker, shared + (ll, task term),
    state).

    With ``out`` (running per-worker sums), the per-worker statistics are added into it and
    None is returned for them.
    """
    layout = block.layout
    prior_kwargs = {}
    if priors is not None:
        params = _block_parameters(model, tables, shared)
        prior_kwargs["log_task_priors"] = _log_task_priors(model, priors, layout, params)
    task_params = None
    if _has_task_parameters(model):
        if warm:
            task_params = model._task_parameters(layout, _block_parameters(model, tables, shared),
                                                 **prior_kwargs)
        else:
            task_stats, task_params = state
            task_params = model._task_m_step(task_stats, task_params, shared)
    stats, log_lik = model._e_step(layout, _block_parameters(model, tables, shared, task_params),
                                   out=out, **prior_kwargs)
    per_worker, shared_stats, task_stats = _split_statistics(model, stats)
    if out is not None:
        per_worker = None
    task_term = (0.0 if task_params is None
                 else model._task_parameter_term(task_params, shared))
    return per_worker, (*shared_stats, log_lik, task_term), (task_stats, task_params)


def _soft_label_block(block, tables, model, shared, priors, state):
    params = _block_parameters(model, tables, shared)
    return model._soft_labels(block.layout, params,
                              **_prior_kwargs(model, priors, block.layout, params))


def _log_likelihood_block(block, tables, model, shared, priors, state):
    params = _block_parameters(model, tables, shared)
    return model._posterior(block.layout, params,
                            **_prior_kwargs(model, priors, block.layout, params))[1]


def _final_block(block, tables, model, shared, priors, state):
    """Most probable class of each fitted task of a block, and per-task fitted attributes."""
    params = _block_parameters(model, tables, shared)
    proba, task_attributes = model._final_e_step(
        block.layout, params, **_prior_kwargs(model, priors, block.layout, params))
    return row_argmax(proba), task_attributes
