"""Dawid-Skene (MAP, log-space EM) and weighted Dawid-Skene."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, Real, StrOptions

from ._em import BaseEM, PerWorker, Shared, _vote_frequencies
from ._online import ONLINE_CONSTRAINTS, OnlineEMMixin
from ._prior_from import PriorFromMixin
from ._priors import dirichlet_strength
from .kernels import (ds_block_statistics, ds_e_step, ds_log_confusions, ds_vote_share_counts,
                      ds_worker_counts, safe_log)


class DawidSkeneParameters(NamedTuple):
    """The parameters of :class:`DawidSkene` in EM (and of its weighted variant)."""

    log_confusions_t: PerWorker
    """``[j, l, k] = log P(worker j answers l | true class k)``."""
    log_class_priors: Shared
    """``(K,)`` log class priors."""
    confusion_prior: Shared
    """``[k, l]``: the Dirichlet pseudo-counts of every worker's confusion row ``k``."""
    prior_settled: Shared
    """Whether ``smoothing="auto"`` has stopped re-estimating ``confusion_prior`` (the prior
    travels with the parameters because the M-step chooses it)."""
    evidence_rows: PerWorker
    """The row of each worker in the table of the "auto" prior's evidence (-1: not in it):
    every step-th worker, at most ``_PRIOR_ROWS`` (worker, class) rows."""
    n_evidence_rows: Shared
    """The number of rows of that table."""
    class_votes: PerWorker
    """``[j, k]``: the expected number of votes of worker ``j`` on tasks of class ``k`` in the
    statistics of the M-step, plus the pseudo-votes of ``prior_from`` (``worker_class_votes_``;
    the strength of ``prior_strength="auto"`` when the model is the ``prior_from`` of another
    fit)."""


class DawidSkeneStatistics(NamedTuple):
    """The statistics of :class:`DawidSkene`'s M-step, summed over the blocks."""

    worker_counts: PerWorker
    """``[j, l, k]``: the expected counts of worker ``j``'s answers ``l`` on tasks of class
    ``k``."""
    class_counts: Shared
    """``(K,)``: the expected number of tasks of each class."""
    evidence_counts: Shared
    """While an "auto" prior settles, the leave-one-out hard counts ``[evidence row, l, k]``
    of its evidence (``ds_cavity_counts``; shape ``(0, 0, 0)`` otherwise), a table of the
    evidence's workers only: at 1e6 workers and K=10 it is 5 MB where one row per worker took
    800 MB (the 1e8-vote out-of-core fit's peak memory, issue 25)."""


class DawidSkene(OnlineEMMixin, PriorFromMixin, BaseEM):
    """Dawid-Skene aggregation: one confusion matrix per worker, fitted by MAP EM.

    Each task has a latent true class ``k`` drawn from the class priors
    ``rho``; worker ``j`` answers ``l`` with probability ``pi[j, k, l]``
    (Dawid & Skene, 1979). EM alternates the posterior of the true classes
    (E-step, in log space with log-sum-exp) and the MAP estimate of
    ``pi`` and ``rho`` from the expected counts (M-step), following
    algorithm 2 of Lefort et al. (2024), appendix A.3, with Dirichlet priors.

    ``X`` may hold soft votes (:class:`~skcrowd.SoftVotes`: a probability
    vector per vote, a model's ``predict_proba``), read as virtual evidence
    on the worker's answer: ``p(q | k) = sum_l q_l pi[j, k, l]``, the hard
    vote's ``pi[j, k, l]`` for a one-hot ``q`` (see :ref:`soft_votes`).

    Parameters
    ----------
    n_classes : int, default=None
        Number of classes when some never appear in the votes: labels must be
        integers in ``range(n_classes)``. Default: the distinct labels seen.
    smoothing : "auto" or float, default="auto"
        Strength ``s`` of the Dirichlet prior on the confusion rows (MAP
        smoothing): how many pseudo-votes keep a worker with few votes near
        "better than random" instead of fitting a handful of votes.
        ``"auto"`` chooses ``s`` from the data being aggregated, by type-II
        maximum likelihood (empirical Bayes): row ``k`` gets the
        pseudo-counts ``s * (1{k == l} + m_l)``, with ``m`` the answers'
        shares among all the votes (uniform for WeightedDawidSkene), and
        ``s`` maximizes the Dirichlet-multinomial evidence of the workers'
        counts, each vote counted against the most probable class of its
        task without that vote; re-estimated at each M-step until ``s``
        changes by less than 1 %, then fixed (``smoothing_``); these first
        iterations choose the prior and are not counted in ``n_iter_``. The
        strength follows the crowd's heterogeneity: sparse, alike workers get a
        strong prior, distinct, well-observed ones a weak one. A number
        ``s >= 0`` fixes the pseudo-counts at ``s * (1{k == l} + 1 / K)``
        (``s`` pseudo-votes for the right class and ``s`` spread uniformly;
        the class priors get ``s / K`` pseudo-tasks each, one pseudo-task in
        all with ``"auto"``); ``s = 0`` is maximum likelihood
        (probabilities floored at the smallest float to keep logs finite).
        The former default, 3.0, fell three to four points below majority
        vote on binary crowds of many few-vote workers; see
        :ref:`data-priors` for the figures on real and simulated crowds.
    prior_from : fitted DawidSkene or WeightedDawidSkene, default=None
        An earlier fit (another project of the same workers) whose worker
        models become the prior of this fit, applied once as Dirichlet
        pseudo-counts (never clamped: this fit's votes add to them). A worker
        of ``X`` that voted in ``prior_from`` gets the pseudo-counts
        ``strength * prior_from.confusion_matrices_[j', k]`` on its confusion
        row ``k``, on top of the population prior (``smoothing``); a new
        worker gets the population prior alone. Workers are matched by id
        (``feature_names_in_`` of DataFrames, ``worker_ids_`` of long-format
        votes); when neither fit has ids, by position (same number of
        workers). The class priors do not carry over: they are estimated
        from this fit's tasks, with a Dirichlet prior of two pseudo-tasks per
        task at the answer shares of ``X`` (the earlier model's class
        balance, carried by its confusions, would otherwise take over where
        the new votes are sparse). ``clone`` keeps the fitted estimator (it
        is data, not a hyperparameter to refit). See :ref:`prior_from`.
    prior_strength : "auto" or float, default="auto"
        The number of pseudo-votes the earlier model counts for on each
        confusion row of a matched worker. ``"auto"``: the worker's own
        expected votes on tasks of that class in ``prior_from``
        (``worker_class_votes_``), so that the prior is the earlier fit's
        posterior (sequential Bayes: as if the earlier votes were counted
        again, with their tasks' posteriors held). A number ``s >= 0``
        caps nothing and counts every earlier model as ``s`` pseudo-votes
        per row: lower it for workers whose quality drifts between projects.
        Ignored without ``prior_from``.
    half_life : float or None, default=250
        :meth:`partial_fit` only: the number of votes per worker after which
        a batch's statistics weigh half, for workers whose quality drifts: at
        each batch of ``n`` votes the earlier statistics are scaled by
        ``0.5 ** (n / (half_life * n_workers))`` (``n_workers``: the workers
        known so far), so the decay per vote does not depend on how the
        stream is cut into batches, and the model remembers about
        ``1.44 * half_life`` votes per worker whatever the size of the crowd
        (None: every vote counts alike). The default was chosen on simulated
        drifts (DawidSkene) and checked on others. See :ref:`online`.
    window : float or None, default=500
        :meth:`partial_fit` only: the votes kept and re-read at every batch,
        in votes per known worker on average. Each batch runs EM on the
        votes of the latest batches (at most ``window * n_workers`` of them,
        plus the new batch); when they overflow, the oldest batches leave,
        their expected counts under the model then joining the carried
        sums. Every vote weighs as ``half_life`` says, in the window or not.
        While the window holds every vote so far, ``partial_fit`` with
        ``half_life=None`` is ``fit`` on them. None or 0: no votes kept,
        each batch runs alone against the sums. The default is twice the
        default ``half_life``: the votes kept carry three quarters of a long
        stream's weight. See :ref:`online`.
    init : {"majority", "random"}, default="majority"
        Initial responsibilities: the naive soft labels (vote frequencies of
        each task), or random rows drawn with ``random_state``.
    max_iter : int, default=100
        Maximum number of EM iterations (M-step then E-step) per
        initialization.
    tol : float, default=1e-6
        Stop when the objective (per task) changes by less than ``tol``;
        ``tol=0`` runs exactly ``max_iter`` iterations.
    n_init : int, default=1
        Number of initializations; the one with the best objective is kept.
        With ``init="majority"`` every initialization is the same, so use
        ``n_init > 1`` with ``init="random"``.
    random_state : int, RandomState instance or None, default=None
        Seed of ``init="random"``.
    warm_start : bool, default=False
        Resume from the fitted parameters on the next ``fit`` (same workers
        and classes); ``n_init`` is then ignored.
    verbose : int, default=0
        1: print a line per initialization; 2: also per iteration.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``X`` (``np.nan`` or ``None`` for NaN /
        None entries).
    backend : {"auto", "memory", "outofcore", "dask"}, default="auto"
        Where the votes are processed. "auto" follows the type of ``X``: a
        votes matrix in memory, a parquet path or pyarrow dataset out of core,
        a dask DataFrame on Dask. "memory" reads long-format votes into
        memory; "dask" runs a parquet path on Dask. See :ref:`scale`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    confusion_matrices_ : ndarray of shape (n_workers, n_classes, n_classes)
        ``[j, k, l] = P(worker j answers classes_[l] | true class classes_[k])``;
        rows sum to one. A worker without votes gets the prior's mode.
    class_priors_ : ndarray of shape (n_classes,)
        Estimated prevalence of each class.
    smoothing_ : float
        Strength of the confusion rows' prior used in the fit (chosen by
        the data with ``smoothing="auto"``).
    confusion_prior_ : ndarray of shape (n_classes, n_classes)
        Dirichlet pseudo-counts ``[k, l]`` of every worker's confusion row
        ``k`` (the population prior; see ``prior_from`` for the workers of
        an earlier fit).
    worker_class_votes_ : ndarray of shape (n_workers, n_classes)
        ``[j, k]``: the expected number of votes of worker ``j`` on tasks of
        class ``classes_[k]`` (posteriors of the last E-step before the final
        M-step), plus the pseudo-votes of ``prior_from`` on that row: the
        evidence behind confusion row ``k`` besides the population prior,
        which ``prior_strength="auto"`` reads when this model is the prior of
        the next project (sequential Bayes over a chain of projects).
    prior_workers_ : ndarray of shape (n_workers,) of bool
        With ``prior_from``: whether each worker got its earlier model as
        prior (matched, with votes in ``prior_from``).
    converged_ : bool
        Whether the best initialization converged.
    n_batches_ : int
        Batches seen by :meth:`partial_fit` (absent after :meth:`fit`);
        ``n_iter_``, ``lower_bound_``, ``lower_bounds_`` and ``converged_``
        are then those of the last batch.
    n_iter_ : int
        Iterations of the best initialization.
    lower_bound_ : float
        Objective of the fitted parameters: (log-likelihood of the votes +
        log-prior) / n_tasks, log-prior up to an additive constant.
    lower_bounds_ : list of float
        Objective after each iteration of the best initialization; it never
        decreases (EM for a MAP objective). With ``"auto"`` it starts once the
        prior's strength has settled: the iterations before, each with its own
        strength, are not recorded (their objectives belong to different priors).
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
    WeightedDawidSkene : Soft labels weighted by the workers' diagonals.
    GLAD : Worker abilities and task difficulties.
    MajorityVote : The baseline.

    References
    ----------
    A. P. Dawid and A. M. Skene. "Maximum likelihood estimation of observer
    error-rates using the EM algorithm". Applied Statistics 28(1), 1979.

    T. Lefort, B. Charlier, A. Joly and J. Salmon. "Identify ambiguous tasks
    combining crowdsourced labels by weighting Areas Under the Margin". TMLR,
    2024 (appendix A.3, algorithm 2).

    F. Rodrigues and F. Pereira. "Deep learning from crowds". AAAI, 2018
    (Dirichlet priors on the confusion matrices, MAP estimates).

    T. Minka. "Estimating a Dirichlet distribution". Technical report, 2000
    (the Dirichlet precision by maximum evidence: ``smoothing="auto"``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import DawidSkene
    >>> votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]] * 10)
    >>> ds = DawidSkene().fit(votes)
    >>> round(ds.smoothing_, 2)  # three consistent workers, 50 votes each: a weak prior
    0.33
    >>> ds.confusion_matrices_[2].round(2)  # worker 2 gives the other class
    array([[0.02, 0.98],
           [0.98, 0.02]])
    >>> ds.predict_proba([[0, 1, 1], [1, -1, -1]]).round(3)
    array([[1.   , 0.   ],
           [0.008, 0.992]])
    >>> DawidSkene(smoothing=3.0).fit(votes).confusion_matrices_[2].round(2)  # a fixed prior
    array([[0.13, 0.87],
           [0.82, 0.18]])
    >>> ds.predict([[0, 1, 1]])  # majority vote would say 1
    array([0])

    An earlier fit as the prior of a new project: worker 2 is known to swap
    the classes, so its one new vote counts for class 0.

    >>> new = np.array([[-1, -1, 1], [0, 0, -1], [1, 1, -1], [0, 0, 1], [1, -1, 0]])
    >>> DawidSkene(prior_from=ds).fit(new).predict(new)
    array([0, 0, 1, 0, 1])
    >>> DawidSkene().fit(new).predict(new)  # a fresh fit cannot know it
    array([1, 0, 1, 0, 1])
    """

    _parameter_constraints: dict = {
        **BaseEM._parameter_constraints,
        "smoothing": [StrOptions({"auto"}), Interval(Real, 0.0, None, closed="left")],
        "prior_from": [None, HasMethods(["fit", "predict_proba"])],
        "prior_strength": [StrOptions({"auto"}), Interval(Real, 0.0, None, closed="left")],
        **ONLINE_CONSTRAINTS,
    }

    def __init__(
        self,
        n_classes=None,
        *,
        smoothing="auto",
        prior_from=None,
        prior_strength="auto",
        half_life=250,
        window=500,
        init="majority",
        max_iter=100,
        tol=1e-6,
        n_init=1,
        random_state=None,
        warm_start=False,
        verbose=0,
        missing_label=-1,
        backend="auto",
    ):
        super().__init__(
            n_classes, init=init, max_iter=max_iter, tol=tol, n_init=n_init,
            random_state=random_state, warm_start=warm_start, verbose=verbose,
            missing_label=missing_label, backend=backend)
        self.smoothing = smoothing
        self.prior_from = prior_from
        self.prior_strength = prior_strength
        self.half_life = half_life
        self.window = window

    _supports_task_priors = True
    _accepts_soft_votes = True  # X may be SoftVotes (see _base.BaseAggregator)
    _Parameters = DawidSkeneParameters
    _Statistics = DawidSkeneStatistics

    _prior_from_models = "DawidSkene or WeightedDawidSkene"
    _shares_class_priors = True

    def _earlier_table(self, earlier):
        """``([j, l, k], votes)``: ``strength * earlier.confusion_matrices_[j, k, l]`` per
        earlier worker, with ``strength`` its expected votes on class ``k`` ("auto") or
        ``prior_strength``; and each earlier worker's number of votes."""
        class_votes = earlier.worker_class_votes_
        strength = (class_votes if self.prior_strength == "auto"
                    else np.full_like(class_votes, float(self.prior_strength)))
        table = strength[:, :, None] * earlier.confusion_matrices_
        return np.ascontiguousarray(table.transpose(0, 2, 1)), class_votes.sum(axis=1)

    def _class_pseudo_counts(self, K):
        """Dirichlet pseudo-counts of the class priors."""
        if self._share_pseudo_tasks is not None:  # a fit with prior_from: see PriorFromMixin
            return self._share_pseudo_tasks
        if self.smoothing == "auto":
            return np.full(K, 1.0 / K)  # one pseudo-task
        return np.full(K, float(self.smoothing) / K)

    def _adapting(self, params):
        """Whether the next E-step feeds the re-estimation of an "auto" prior."""
        return self.smoothing == "auto" and not params.prior_settled

    def _prior_settled(self, params):
        return bool(params.prior_settled)

    def _settle_prior(self, params):
        return params._replace(prior_settled=np.array(True))

    def _confusion_prior(self, worker_counts, evidence_counts, params):
        """Pseudo-counts ``[k, l]`` of confusion row ``k``, and whether they are settled.

        ``smoothing="auto"``: ``s * (I + shares)`` with the strength ``s`` maximizing the
        evidence of ``evidence_counts`` (1 before any evidence), searched from the previous
        strength; settled once it moves by less than ``_PRIOR_SETTLED``. A single Newton step
        per M-step overshot: where the evidence grows up to the upper bound, the strength
        climbed by e**2 per step and fell back, never settling.
        """
        K = worker_counts.shape[-1]
        if self.smoothing != "auto":
            return float(self.smoothing) * (np.eye(K) + 1.0 / K), True
        if params is not None and params.prior_settled:
            return params.confusion_prior, True
        # the answers' counts among all the votes (each vote's counts sum to one)
        shape = np.eye(K) + self._guessing(worker_counts.sum(axis=(0, 2)))
        if evidence_counts.size == 0:  # the initial statistics carry no evidence
            return _INITIAL_STRENGTH * shape, False
        previous = _strength(params.confusion_prior)
        # rows (worker, true class) over the answers: the transposed counts of the evidence's
        # workers (_evidence_rows)
        strength = dirichlet_strength(evidence_counts.transpose(0, 2, 1), shape,
                                      init=previous)
        return strength * shape, bool(abs(np.log(strength / previous)) < _PRIOR_SETTLED)

    def _guessing(self, label_counts):
        """Where the non-diagonal half of the "auto" prior's pseudo-votes go: the answers'
        shares among all the votes (with one pseudo-vote each, so that an answer nobody gave
        keeps a positive share)."""
        return (label_counts + 1.0) / (label_counts.sum() + len(label_counts))

    def _statistics(self, layout, resp):
        return DawidSkeneStatistics(ds_worker_counts(layout, resp), resp.sum(axis=0),
                                    _no_counts(layout))

    def _initial_statistics(self, layout, draws):
        if self.init == "random":
            return super()._initial_statistics(layout, draws)
        # the naive soft labels' counts, each task's computed from its votes on the fly
        return DawidSkeneStatistics(*ds_vote_share_counts(layout, _vote_frequencies(layout)),
                                    _no_counts(layout))

    def _m_step(self, stats, params):
        worker_counts, class_counts, evidence_counts = stats
        K = len(class_counts)
        confusion_prior, settled = self._confusion_prior(worker_counts, evidence_counts, params)
        # in place on the summed counts (n_workers x K x K, the largest arrays of a fit)
        evidence_rows = (_evidence_rows(len(worker_counts), K) if params is None
                         else (params.evidence_rows, params.n_evidence_rows))
        if self._earlier_counts is not None:
            worker_counts += self._earlier_counts
        class_votes = worker_counts.sum(axis=1)
        confusions_t = ds_log_confusions(worker_counts, confusion_prior)
        priors = class_counts + self._class_pseudo_counts(K)
        return DawidSkeneParameters(confusions_t, safe_log(priors / priors.sum()),
                                    confusion_prior, np.array(settled), *evidence_rows,
                                    class_votes)

    def _class_log_priors(self, params):
        return params.log_class_priors

    def _e_step(self, layout, params, out=None, *, log_task_priors=None):
        # the M-step needs the counts only; while an "auto" prior settles, the same pass
        # counts the votes against their tasks' leave-one-out classes (ds_cavity_counts)
        adapting = self._adapting(params)
        stats = ds_block_statistics(layout, params.log_confusions_t, params.log_class_priors,
                                    worker_counts=None if out is None else out[0],
                                    log_task_priors=log_task_priors, cavity=adapting,
                                    cavity_rows=params.evidence_rows,
                                    n_cavity_rows=int(params.n_evidence_rows))
        evidence = stats.cavity_counts if adapting else _no_counts(layout)
        return (DawidSkeneStatistics(stats.worker_counts, stats.class_counts, evidence),
                stats.log_likelihood)

    def _parameter_term(self, params):
        log_priors = params.log_class_priors
        term = float(np.einsum("jlk,kl->", params.log_confusions_t, params.confusion_prior)
                     + self._class_pseudo_counts(len(log_priors)) @ log_priors)
        if self._earlier_counts is not None:
            term += float(np.einsum("jlk,jlk->", params.log_confusions_t, self._earlier_counts))
        return term

    def _set_fitted(self, params):
        log_confusions_t = params.log_confusions_t
        self.confusion_matrices_ = np.exp(log_confusions_t.transpose(0, 2, 1),
                                          out=np.empty_like(log_confusions_t))
        self.class_priors_ = np.exp(params.log_class_priors)
        self.confusion_prior_ = params.confusion_prior
        self.smoothing_ = _strength(params.confusion_prior)
        self._prior_settled_ = bool(params.prior_settled)
        self.worker_class_votes_ = params.class_votes

    def _fitted_parameters(self):
        return DawidSkeneParameters(
            np.ascontiguousarray(safe_log(self.confusion_matrices_).transpose(0, 2, 1)),
            safe_log(self.class_priors_),
            self.confusion_prior_,
            np.array(self._prior_settled_),
            *_evidence_rows(*self.confusion_matrices_.shape[:2]),
            self.worker_class_votes_,
        )

    def _posterior(self, layout, params, resp=None, *, log_task_priors=None):
        return ds_e_step(layout, params.log_confusions_t, params.log_class_priors, resp=resp,
                         log_task_priors=log_task_priors)

    def _vote_log_proba(self, layout, params, task, worker, label):
        return params.log_confusions_t[worker, label]  # [j, l, :]


# smoothing="auto": each M-step maximizes the strength's evidence, until the strength changes
# by less than this (relative), then keeps it; at most this many (worker, class) rows enter the
# evidence.
_PRIOR_SETTLED = 1e-2
_PRIOR_ROWS = 2**16
_INITIAL_STRENGTH = 1.0


def _no_counts(layout):
    """The evidence statistic when there is none: an empty table."""
    return np.zeros((0, 0, 0))


def _evidence_rows(n_workers, K):
    """The rows of the workers in the "auto" prior's evidence (every ``step``-th worker, at
    most ``_PRIOR_ROWS`` rows (worker, class) in all; -1 for the others) and their number."""
    step = max(1, -(-n_workers * K // _PRIOR_ROWS))
    workers = np.arange(n_workers, dtype=np.int64)
    return np.where(workers % step == 0, workers // step, -1), np.array(-(-n_workers // step))


def _strength(confusion_prior):
    """The strength ``s`` of pseudo-counts ``s * (I + shares)`` (each row sums to ``2 s``)."""
    return float(confusion_prior.sum() / (2 * len(confusion_prior)))


class WeightedDawidSkene(DawidSkene):
    """Weighted Dawid-Skene (WDS): votes weighted by each worker's estimated accuracy.

    Fits :class:`DawidSkene`, then turns each task's votes into the soft label
    ``Norm(sum_j pi[j, k, k] 1{y_ij = k})_k`` (Lefort et al., 2024, appendix
    A.4, eq. 9): a vote for class ``k`` counts as the worker's estimated
    probability of recognizing class ``k`` (a soft vote ``q``, see
    :ref:`soft_votes`: ``q_k pi[j, k, k]`` for each ``k``). A task without
    votes gets the class priors. ``score`` and ``score_samples`` are those of the fitted
    Dawid-Skene model. Known tasks and ``task_prior`` (see
    :meth:`~DawidSkene.fit`) enter the Dawid-Skene fit; the soft labels are
    then read as posteriors under the class priors that a task's prior
    replaces: they are multiplied by ``task_prior / class_priors_`` (a known
    task gets its label).

    Parameters
    ----------
    n_classes : int, default=None
        See :class:`DawidSkene`.
    smoothing : "auto" or float, default="auto"
        See :class:`DawidSkene` ("auto": the answers' shares in the prior
        are uniform here, so that the weights stay neutral).
    prior_from : fitted DawidSkene or WeightedDawidSkene, default=None
    prior_strength : "auto" or float, default="auto"
    half_life : float or None, default=250
    window : float or None, default=500
    init : {"majority", "random"}, default="majority"
    max_iter : int, default=100
    tol : float, default=1e-6
    n_init : int, default=1
    random_state : int, RandomState instance or None, default=None
    warm_start : bool, default=False
    verbose : int, default=0
    missing_label : int, float, str or None, default=-1
    backend : {"auto", "memory", "outofcore", "dask"}, default="auto"
        All as in :class:`DawidSkene`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    confusion_matrices_ : ndarray of shape (n_workers, n_classes, n_classes)
        The Dawid-Skene confusion matrices; their diagonals are the weights.
    class_priors_ : ndarray of shape (n_classes,)
    converged_ : bool
    n_batches_ : int
    n_iter_ : int
    lower_bound_ : float
    lower_bounds_ : list of float
    worker_class_votes_ : ndarray of shape (n_workers, n_classes)
    prior_workers_ : ndarray of shape (n_workers,) of bool
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_workers,)
    worker_ids_ : ndarray of shape (n_workers,)
        As in :class:`DawidSkene`.

    See Also
    --------
    DawidSkene : The underlying model.

    References
    ----------
    T. Lefort, B. Charlier, A. Joly and J. Salmon. "Identify ambiguous tasks
    combining crowdsourced labels by weighting Areas Under the Margin". TMLR,
    2024 (appendix A.4, eq. 9).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import WeightedDawidSkene
    >>> votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]] * 10)
    >>> wds = WeightedDawidSkene(smoothing=3.0).fit(votes)
    >>> wds.confusion_matrices_[:, [0, 1], [0, 1]].round(2)  # the weights pi[j, k, k]
    array([[0.96, 0.93],
           [0.68, 0.94],
           [0.13, 0.18]])
    >>> wds.predict_proba([[0, 1, 1]]).round(3)  # Norm(0.96, 0.94 + 0.18)
    array([[0.459, 0.541]])
    """

    def _guessing(self, label_counts):
        # the weights are the diagonals: pseudo-votes that follow the answers' shares would
        # favour the frequent answers (on zheng_s4_Face_Sentiment_Identification: 0.622
        # against 0.632 with uniform ones); uniform ones keep the weights neutral
        return np.full(len(label_counts), 1.0 / len(label_counts))

    def _soft_labels(self, layout, params, resp=None, *, log_task_priors=None):
        log_confusions_t, log_priors = params.log_confusions_t, params.log_class_priors
        K = layout.n_classes
        classes = np.arange(K)
        weights = np.exp(log_confusions_t[:, classes, classes])[layout.worker, layout.label]
        scores = np.bincount(layout.task.astype(np.int64) * K + layout.label,
                             weights=layout.weighted(weights),
                             minlength=layout.n_tasks * K).reshape(layout.n_tasks, K)
        if log_task_priors is not None:
            # read as posteriors under the class priors, which the task priors replace
            ratio = log_task_priors - log_priors
            scores *= np.exp(ratio - ratio.max(axis=1, keepdims=True))
        total = scores.sum(axis=1, keepdims=True)
        np.divide(scores, total, out=scores, where=total > 0)
        empty = total[:, 0] <= 0
        if log_task_priors is None:
            scores[empty] = np.exp(log_priors)
        else:  # no votes, or votes only for classes the task prior rules out: the prior
            rows = np.exp(log_task_priors[empty] - log_task_priors[empty].max(axis=1)[:, None])
            scores[empty] = rows / rows.sum(axis=1, keepdims=True)
        return scores
