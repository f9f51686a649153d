"""Bayesian Dawid-Skene: variational Bayes with a confusion prior learned from the crowd."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._em import BaseEM, PerWorker, Shared
from ._dawid_skene import DawidSkene
from ._priors import fit_dirichlet_multinomial
from .kernels import (dirichlet_expectations, dirichlet_posterior_kl, ds_block_statistics,
                      ds_e_step, safe_log)

# Box of the learned Dirichlet pseudo-counts: finite when the data cannot bound them (all
# workers alike: the optimum is at infinity; an answer nobody gives: at zero).
PRIOR_BOUNDS = (1e-2, 1e5)
PRIOR_NEWTON_STEPS = 1  # per iteration: the prior and the posteriors converge together


class BayesianDawidSkeneParameters(NamedTuple):
    """The variational parameters of :class:`BayesianDawidSkene`."""

    posterior_t: PerWorker
    """``[j, l, k]``: the Dirichlet parameters of ``q(pi[j, k])`` (transposed as the
    Dawid-Skene kernels want them)."""
    expected_log_t: PerWorker
    """``[j, l, k] = E_q[log pi[j, k, l]]``."""
    prior: Shared
    """``[k, l] = alpha[k, l]``."""
    log_class_priors: Shared
    """``(K,)`` log class priors."""
    kl: Shared
    """``sum_{j, k} KL(q(pi[j, k]) || Dir(alpha_k))``, computed with the expected logs."""


class BayesianDawidSkeneStatistics(NamedTuple):
    """The statistics of :class:`BayesianDawidSkene`: :class:`DawidSkene`'s expected counts
    without the leave-one-out counts of its ``smoothing="auto"`` (the prior here is learned
    from the expected counts)."""

    worker_counts: PerWorker
    """``[j, l, k]``: the expected counts of worker ``j``'s answers ``l`` on tasks of class
    ``k``."""
    class_counts: Shared
    """``(K,)``: the expected number of tasks of each class."""


class BayesianDawidSkene(DawidSkene):
    """Dawid-Skene with Bayesian confusion matrices whose prior is learned from the crowd.

    The model of :class:`DawidSkene` (a latent true class per task, a
    confusion matrix per worker), made Bayesian and hierarchical: row ``k``
    of every worker's confusion matrix is drawn from one Dirichlet
    distribution ``Dir(alpha_k)`` shared by the crowd, ``pi[j, k] ~
    Dir(alpha_k)``, whose mean ``alpha_k / sum(alpha_k)`` is the crowd's
    typical way of answering on tasks of class ``k`` (``prior_confusion_``)
    and whose concentration ``sum(alpha_k)`` says how much workers differ
    from it (``prior_concentration_``, in pseudo-votes). A worker with three
    votes is thus pulled toward the crowd's typical confusion, a prolific one
    is fitted to their own votes, and how strongly is learned from the data
    instead of fixed (:class:`DawidSkene`'s ``smoothing``). ``X`` may hold
    soft votes (:class:`~skcrowd.SoftVotes`), read as in :class:`DawidSkene`
    with ``exp E_q[log pi]`` (see :ref:`soft_votes`).

    This is independent Bayesian classifier combination (IBCC; Kim &
    Ghahramani, 2012) with its variational inference (Simpson et al., 2013),
    and with the prior's parameters estimated by empirical Bayes: the
    algorithm maximizes the evidence lower bound (ELBO) over the variational
    posterior (Dirichlet rows ``q(pi[j, k])``, class posteriors ``q(t_i)``)
    and over the hyperparameters ``alpha_k`` together. Each iteration

    1. refits each ``alpha_k`` to the workers' expected counts (the
       empirical-Bayes step: the maximum of their Dirichlet-multinomial
       evidence ``sum_j log B(alpha_k + N[j, k]) / B(alpha_k)``, which is the
       ELBO's maximum over ``alpha_k`` jointly with ``q(pi)``, by Minka's
       (2000) Newton iterations,
       ``skcrowd.aggregation._priors.fit_dirichlet_multinomial``);
    2. sets ``q(pi[j, k]) = Dir(alpha_k + expected counts of worker j's
       answers on tasks of class k)`` and the class priors;
    3. sets ``q(t_i)`` proportional to ``exp(log rho_k + sum_j E_q[log
       pi[j, k, y_ij]])``: the E-step of :class:`DawidSkene` with expected
       log-probabilities (``digamma``) in place of log-probabilities.

    Each step maximizes the ELBO over its block of variables, so the
    objective ``lower_bound_`` (the ELBO per task, hyperparameters' updates
    included) never decreases. The class priors ``rho`` are a point estimate
    (the expected class frequencies): the empirical-Bayes estimate of a
    Dirichlet prior from its single draw is the limit of infinite
    concentration at those frequencies, so the class priors' term of the
    ELBO is their expected log-likelihood. The learned pseudo-counts are kept
    within ``[0.01, 1e5]``: the data cannot bound them when every worker
    answers alike (the optimum concentration is then infinite) or when
    nobody gives some answer (its pseudo-count then goes to zero).

    Parameters
    ----------
    n_classes : int, default=None
        Number of classes when some never appear in the votes: labels must be
        integers in ``range(n_classes)``. Default: the distinct labels seen.
    prior_from : fitted BayesianDawidSkene, default=None
        An earlier fit (another project of the same workers) whose worker
        posteriors become the prior of this fit: each worker of ``X`` that
        voted in ``prior_from`` (matched by id, as in :class:`DawidSkene`)
        gets the earlier pseudo-votes of each confusion row added to its
        statistics at every iteration, as votes seen again with their
        tasks' posteriors held, so that its row ``k`` has the posterior
        ``Dir(alpha_k + earlier pseudo-votes + expected counts in X)``; the
        crowd's prior ``alpha`` is learned from these totals. A new worker
        gets ``Dir(alpha_k + expected counts)``. See :ref:`prior_from`.
    prior_strength : "auto" or float, default="auto"
        The earlier pseudo-votes of a matched worker's row ``k``.
        ``"auto"``: its posterior counts in ``prior_from`` less that fit's
        prior (``confusion_counts_ - prior``: its expected votes on tasks of
        class ``k``, plus the pseudo-votes that fit carried itself), so that
        the prior is the earlier posterior over the crowd's prior (sequential
        Bayes). A number ``s >= 0``: ``s`` pseudo-votes per row at the
        earlier posterior mean ``prior_from.confusion_matrices_[j', k]``.
    half_life : float or None, default=250
    window : float or None, default=500
        :meth:`partial_fit` only, as in :class:`DawidSkene`: the number of
        votes per worker after which a batch's statistics weigh half (None:
        never forgotten), and the votes per known worker kept and re-read at
        every batch (None or 0: none). See :ref:`online`.
    init : {"majority", "random"}, default="majority"
        Initial class posteriors: the naive soft labels (vote frequencies of
        each task), or random rows drawn with ``random_state``. The prior
        starts at ``Dir(I + 1 / K)`` per row (one pseudo-vote for the right
        class and one spread over all classes).
    max_iter : int, default=100
        Maximum number of iterations per initialization.
    tol : float, default=1e-6
        Stop when the ELBO (per task) changes by less than ``tol``;
        ``tol=0`` runs exactly ``max_iter`` iterations.
    n_init : int, default=1
        Number of initializations; the one with the best ELBO is kept
        (use with ``init="random"``).
    random_state : int, RandomState instance or None, default=None
        Seed of ``init="random"``.
    warm_start : bool, default=False
        Resume from the fitted posteriors and prior on the next ``fit`` (same
        workers and classes); ``n_init`` is then ignored.
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
        Posterior means: ``[j, k, l] = E_q[P(worker j answers classes_[l] |
        true class classes_[k])]``, the probability of worker ``j``'s next
        answer under the posterior. A worker without votes gets the prior's
        mean ``prior_confusion_``.
    confusion_counts_ : ndarray of shape (n_workers, n_classes, n_classes)
        Dirichlet parameters of the posterior of each row: the prior's
        pseudo-counts plus the expected counts of the worker's answers;
        ``confusion_matrices_`` is its row-normalized version.
    prior_confusion_ : ndarray of shape (n_classes, n_classes)
        Mean of the learned prior, the crowd's typical confusion matrix:
        ``[k, l] = alpha[k, l] / sum_l alpha[k, l]``.
    prior_concentration_ : ndarray of shape (n_classes,)
        Concentration ``sum_l alpha[k, l]`` of each row of the learned prior,
        in pseudo-votes: large when workers answer alike on tasks of class
        ``k``, small when they differ.
    class_priors_ : ndarray of shape (n_classes,)
        Estimated prevalence of each class.
    prior_workers_ : ndarray of shape (n_workers,) of bool
        With ``prior_from``: whether each worker got its earlier posterior as
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
        ELBO of the fit, per task: ``(sum_i log sum_k exp(log rho_k + sum_j
        E_q[log pi[j, k, y_ij]]) - sum_{j, k} KL(q(pi[j, k]) ||
        Dir(alpha_k))) / n_tasks``.
    lower_bounds_ : list of float
        ELBO after each iteration of the best initialization; it never
        decreases.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of shape (n_workers,)
        Worker names, when ``X`` is a DataFrame with string column names.
    worker_ids_ : ndarray of shape (n_workers,)
        Original id of each worker, when fitted on long-format votes.

    See Also
    --------
    DawidSkene : The same model fitted by MAP EM with a fixed prior.
    EBCC : Classes with subtypes: correlated workers.

    Notes
    -----
    ``predict_proba`` gives the variational class posteriors ``q(t_i)`` of
    the tasks of ``X`` under the fitted worker posteriors.
    ``score_samples`` gives ``log p(votes of task i)`` under the posterior
    means (``confusion_matrices_``, ``class_priors_``), which is the
    posterior predictive probability of the task's votes, as the workers'
    posteriors are independent.

    References
    ----------
    H.-C. Kim and Z. Ghahramani. "Bayesian classifier combination". AISTATS,
    2012.

    E. Simpson, S. Roberts, I. Psorakis and A. Smith. "Dynamic Bayesian
    combination of multiple imperfect classifiers". In *Decision Making and
    Imperfection*, Springer, 2013 (variational IBCC).

    T. P. Minka. "Estimating a Dirichlet distribution". Technical report,
    MIT, 2000.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import BayesianDawidSkene, DawidSkene
    >>> from skcrowd.datasets import simulate_annotators
    >>> # 1000 tasks, 3 votes each, from 1000 workers who all miss 40 % of the positives
    >>> y = np.random.default_rng(0).integers(2, size=1000)
    >>> votes = simulate_annotators(y, 1000, sensitivity=0.6, specificity=0.95,
    ...                             votes_per_task=3, random_state=0).votes
    >>> bds = BayesianDawidSkene().fit(votes)
    >>> bds.prior_confusion_.round(2)  # the crowd's typical confusion, learned
    array([[0.99, 0.01],
           [0.41, 0.59]])
    >>> bds.prior_concentration_ > 1000  # workers this alike: pooled
    array([ True,  True])
    >>> print(np.mean(bds.predict(votes) == y), np.mean(DawidSkene().fit_predict(votes) == y))
    0.918 0.84
    """

    _parameter_constraints: dict = {
        k: v for k, v in DawidSkene._parameter_constraints.items() if k != "smoothing"
    }

    def __init__(
        self,
        n_classes=None,
        *,
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
        # BaseEM's parameters only: DawidSkene's smoothing is not one of this model's
        BaseEM.__init__(
            self, n_classes, init=init, max_iter=max_iter, tol=tol, n_init=n_init,
            random_state=random_state, warm_start=warm_start, verbose=verbose,
            missing_label=missing_label, backend=backend)
        self.prior_from = prior_from
        self.prior_strength = prior_strength
        self.half_life = half_life
        self.window = window

    _Parameters = BayesianDawidSkeneParameters
    _Statistics = BayesianDawidSkeneStatistics

    # its prior is re-fitted at every M-step as part of the ELBO's maximization (never worse
    # than before), not settled as DawidSkene's "auto" strength
    _prior_settled = BaseEM._prior_settled
    _settle_prior = BaseEM._settle_prior

    _prior_from_models = "BayesianDawidSkene"

    def _earlier_table(self, earlier):
        """``([j, l, k], votes)``: each earlier worker's expected counts (its posterior counts
        less the earlier prior; "auto") or ``prior_strength`` times its posterior mean rows,
        and its number of (pseudo-)votes."""
        prior = earlier.prior_confusion_ * earlier.prior_concentration_[:, None]
        counts = np.maximum(earlier.confusion_counts_ - prior, 0.0)
        table = (counts if self.prior_strength == "auto"
                 else float(self.prior_strength) * earlier.confusion_matrices_)
        return np.ascontiguousarray(table.transpose(0, 2, 1)), counts.sum(axis=(1, 2))

    def _statistics(self, layout, resp):
        return BayesianDawidSkeneStatistics(*super()._statistics(layout, resp)[:2])

    def _initial_statistics(self, layout, draws):
        return BayesianDawidSkeneStatistics(*super()._initial_statistics(layout, draws)[:2])

    def _m_step(self, stats, params):
        worker_counts, class_counts = stats
        K = len(class_counts)
        if self._earlier_counts is not None:  # pseudo-votes, counted as votes (in place)
            worker_counts += self._earlier_counts
        if self._share_pseudo_tasks is not None:  # a MAP estimate (see PriorFromMixin)
            class_counts = class_counts + self._share_pseudo_tasks
        # empirical Bayes: the prior of highest evidence for the expected counts, jointly with
        # the posteriors it gives (from the initial prior, then from the last one)
        prior_t = (np.eye(K) + 1.0 / K).T if params is None else params.prior.T
        prior, evidence = fit_dirichlet_multinomial(worker_counts, prior_t, bounds=PRIOR_BOUNDS,
                                                    max_iter=PRIOR_NEWTON_STEPS,
                                                    return_evidence=True)
        prior = prior.T
        posterior_t = worker_counts + prior.T
        expected_log_t, _ = dirichlet_expectations(posterior_t, prior.T)
        # the divergence from the counts: as a difference of log-gamma values it keeps only
        # about 1e-9 of precision once the prior's pseudo-counts reach 1e5
        kl = dirichlet_posterior_kl(worker_counts, prior.T, expected_log_t, evidence=evidence)
        return BayesianDawidSkeneParameters(posterior_t, expected_log_t, prior,
                                            safe_log(class_counts / class_counts.sum()),
                                            np.float64(kl))

    def _class_log_priors(self, params):
        return params.log_class_priors

    def _e_step(self, layout, params, out=None, *, log_task_priors=None):
        _, expected_log_t, _, log_priors, _ = params
        stats = ds_block_statistics(layout, expected_log_t, log_priors,
                                    worker_counts=None if out is None else out[0],
                                    log_task_priors=log_task_priors)
        return (BayesianDawidSkeneStatistics(stats.worker_counts, stats.class_counts),
                stats.log_likelihood)

    def _parameter_term(self, params):
        term = -float(params.kl)
        if self._earlier_counts is not None:  # the pseudo-votes' expected log-likelihood
            term += float(np.einsum("jlk,jlk->", params.expected_log_t, self._earlier_counts))
        if self._share_pseudo_tasks is not None:  # the class priors' Dirichlet log-density
            term += float(self._share_pseudo_tasks @ params.log_class_priors)
        return term

    def _set_fitted(self, params):
        posterior_t, _, prior, log_priors, _ = params
        self.confusion_counts_ = np.ascontiguousarray(posterior_t.transpose(0, 2, 1))
        self.confusion_matrices_ = (self.confusion_counts_
                                    / self.confusion_counts_.sum(axis=2, keepdims=True))
        self.prior_concentration_ = prior.sum(axis=1)
        self.prior_confusion_ = prior / self.prior_concentration_[:, None]
        self.class_priors_ = np.exp(log_priors)

    def _fitted_parameters(self):
        posterior_t = np.ascontiguousarray(self.confusion_counts_.transpose(0, 2, 1))
        prior = self.prior_confusion_ * self.prior_concentration_[:, None]
        expected_log_t, kl = dirichlet_expectations(posterior_t, prior.T)
        return BayesianDawidSkeneParameters(posterior_t, expected_log_t, prior,
                                            safe_log(self.class_priors_), np.float64(kl))

    def _soft_labels(self, layout, params, resp=None, *, log_task_priors=None):
        _, expected_log_t, _, log_priors, _ = params
        return ds_e_step(layout, expected_log_t, log_priors, resp=resp,
                         log_task_priors=log_task_priors)[0]

    def _vote_log_proba(self, layout, params, task, worker, label):
        # the posterior predictive of a new vote (DawidSkene's hook reads log-probabilities,
        # where this model has Dirichlet parameters)
        return _log_posterior_means(params.posterior_t)[worker, label]

    def _posterior(self, layout, params, resp=None, *, log_task_priors=None):
        posterior_t, _, _, log_priors, _ = params
        return (self._soft_labels(layout, params, resp, log_task_priors=log_task_priors),
                ds_e_step(layout, _log_posterior_means(posterior_t), log_priors,
                          log_task_priors=log_task_priors)[1])


def _log_posterior_means(posterior_t):
    """``[j, l, k] = log E_q[pi[j, k, l]]`` of the Dirichlet parameters ``posterior_t[j, l, k]``:
    the posterior predictive of worker ``j`` answering ``l`` on a task of class ``k``."""
    return safe_log(posterior_t / posterior_t.sum(axis=1, keepdims=True))
