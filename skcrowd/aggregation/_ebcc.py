"""EBCC: enhanced Bayesian classifier combination (classes with subtypes, correlated workers)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp
from sklearn.utils._param_validation import Integral, Interval, Real, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._em import BaseEM, PerWorker, Shared
from .kernels import (BlockLayout, dirichlet_expectations, dirichlet_expected_log, dirichlet_kl,
                      ds_block_statistics, ds_e_step, ds_worker_counts, safe_log)


class EBCCParameters(NamedTuple):
    """The variational parameters of :class:`EBCC`; a task's latent state is its (class
    ``k``, subtype ``m``) pair, column ``s = k * M + m`` of the Dawid-Skene kernels' tables."""

    posterior_t: PerWorker
    """``[j, l, s]``: the Dirichlet parameters of ``q(v[j, k, m])``."""
    expected_log_t: PerWorker
    """``[j, l, s] = E_q[log v[j, k, m, l]]``."""
    class_prior: Shared
    """The prior's parameters ``alpha`` ``(K,)`` (chosen at the first M-step)."""
    class_posterior: Shared
    """The Dirichlet parameters of ``q(tau)`` ``(K,)``."""
    subtype_posterior: Shared
    """The Dirichlet parameters of ``q(pi)`` ``(K, M)``."""
    log_state_prior: Shared
    """``[s] = E[log tau_k] + E[log pi_km]``."""
    kl: Shared
    """The summed KL divergences of the Dirichlet posteriors."""


class EBCCStatistics(NamedTuple):
    """The statistics of :class:`EBCC`'s M-step, summed over the blocks."""

    worker_counts: PerWorker
    """``[j, l, s]``: the expected counts of worker ``j``'s answers ``l`` on tasks in state
    ``s``."""
    state_counts: Shared
    """``(K * M,)``: the expected number of tasks in each state."""


class EBCC(BaseEM):
    """EBCC: Bayesian classifier combination with class subtypes, by variational Bayes.

    Enhanced Bayesian classifier combination (Li, Rubinstein & Cohn, 2019)
    extends the Dawid-Skene / IBCC model with a latent *subtype* of each
    task within its class: tasks of one class that workers find alike
    (easy ones, or ones that look like another class) share a subtype, and
    each worker has one confusion matrix per subtype. Two workers who both
    err on the tasks of one subtype are thereby correlated given the true
    class, which plain Dawid-Skene cannot express; marginalized over
    subtypes the model is a mixture of rank-one tensors (Li et al., 2019,
    section 3). The generative model:

    - class proportions ``tau ~ Dir(class_prior)``, true class ``y_i ~
      Cat(tau)``;
    - subtype weights of class ``k``: ``pi_k ~ Dir(subtype_prior /
      n_subtypes)`` over ``n_subtypes`` subtypes, subtype ``g_i | y_i = k ~
      Cat(pi_k)``;
    - worker ``j``'s answers on subtype ``m`` of class ``k``: ``v[j, k, m]
      ~ Dir(beta_k)`` with ``beta_k[k] = confusion_prior_diagonal`` and
      ``beta_k[l] = confusion_prior_off_diagonal`` for ``l != k``; answer
      ``y_ij ~ Cat(v[j, y_i, g_i])``.

    Mean-field variational inference, ``q(y, g) q(tau) q(pi) q(v)``, with
    coordinate ascent on the evidence lower bound (ELBO): the Dirichlet
    posteriors get their prior plus the expected counts, and the posterior
    of each task over its ``K * n_subtypes`` (class, subtype) pairs is
    ``exp(E[log tau_k] + E[log pi_km] + sum_j E[log v[j, k, m, y_ij]])``,
    normalized: the E-step of :class:`DawidSkene` run on the (class,
    subtype) pairs, with expected log-probabilities. ``lower_bound_`` is
    the ELBO per task, which never decreases.

    The defaults are the authors' procedure (Li et al.'s code, as ported in
    the wrench benchmark): the class posteriors start at the naive soft
    labels (the vote frequencies of each task; random rows with
    ``init="random"``), and each task's posterior of class ``k`` is split
    among the class's subtypes in proportions drawn from ``Dir(1, ..., 1)``,
    one draw per (task, class); the prior of the class proportions is
    empirical, ``alpha_k`` the naive soft labels' total of class ``k``; five
    such random starts run (``n_init``) and the one of best ELBO is kept.
    The draws are functions of ``random_state`` and each task's id only, so
    that the fit is the same in memory, out of core and on Dask.
    ``benchmarks/ebcc_reference.py`` runs the authors' code beside it: on
    19 real crowds, five seeds each, the mean gold accuracy was 0.8318
    against the reference's 0.8326, the worst crowd 1.3 points below it
    (108 tasks). The random starts make the fit depend on ``random_state``,
    and the ELBO does not always prefer the most accurate start: on a
    simulated crowd where a third of the tasks look like another class to
    eight of ten workers, the best-ELBO start gave 0.66-0.95 by seed
    (``benchmarks/selection_correlated.py``). More starts reach higher
    ELBOs: on 18 of the real crowds (four seeds each; cifar10n left out),
    ``n_init=40``, the count of the authors' own experiments, raised the
    mean gold accuracy by 0.2 point over five starts (0.9 point on a
    584-task face-sentiment crowd, 1.2 on a five-class web-relevance crowd),
    at eight times the cost. No cheaper rule found those starts: stopping
    once four to eight starts in a row do not raise the best ELBO ran 6 to
    12 starts on average for a quarter of the gain, and the ELBO after the
    first 3-20 iterations did not single out the start that ends best.

    Parameters
    ----------
    n_classes : int, default=None
        Number of classes when some never appear in the votes: labels must be
        integers in ``range(n_classes)``. Default: the distinct labels seen.
    n_subtypes : int, default=10
        Number of subtypes ``M`` of each class (Li et al.'s default). With
        the sparse prior on the subtype weights, unneeded subtypes get
        (nearly) no tasks. ``n_subtypes=1`` is variational Bayesian
        Dawid-Skene (IBCC) with the fixed prior below.
    subtype_prior : float, default=0.1
        Total concentration ``a_pi`` of the Dirichlet prior of each class's
        subtype weights, ``Dir(a_pi / M, ..., a_pi / M)`` (Li et al.'s
        default): below one, it favours few subtypes per class.
    class_prior : "empirical" or float, default="empirical"
        Parameters ``alpha`` of the Dirichlet prior of the class proportions.
        "empirical" (the authors' experiments): ``alpha_k`` is the total of
        class ``k`` in the initial soft labels (at least 1, for a class no
        vote gives), chosen at the first update of each initialization; a
        float: the symmetric prior ``Dir(alpha, ..., alpha)`` (1.0: uniform,
        the model's default in Li et al.'s paper). The prior used is
        ``class_pseudo_counts_``.
    confusion_prior_diagonal : float, default=4.0
        Pseudo-count ``a_v`` of the right answer in the Dirichlet prior of
        every confusion row (Li et al.'s default).
    confusion_prior_off_diagonal : float, default=1.0
        Pseudo-count ``b_v`` of each wrong answer (Li et al.'s default).
    init : {"majority", "random"}, default="majority"
        Initial class posteriors: the naive soft labels (vote frequencies of
        each task), or random rows drawn with ``random_state``.
    max_iter : int, default=500
        Maximum number of iterations per initialization (Li et al.'s
        default).
    tol : float, default=1e-6
        Stop when the ELBO (per task) changes by less than ``tol``;
        ``tol=0`` runs exactly ``max_iter`` iterations.
    n_init : int, default=5
        Number of initializations (random splits among the subtypes; the
        reference code's five); the one with the best ELBO is kept. The
        authors' experiments ran 40: slightly more accurate, eight times the
        cost (see above).
    random_state : int, RandomState instance or None, default=None
        Seed of the subtypes' initial split (and of ``init="random"``).
        With None, two fits may differ.
    warm_start : bool, default=False
        Resume from the fitted posteriors on the next ``fit`` (same workers
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
        Posterior means marginalized over the subtypes: ``[j, k, l] =
        sum_m E[pi_km] E[v[j, k, m, l]]``, the probability that worker ``j``
        answers ``classes_[l]`` on a task of class ``classes_[k]``.
    subtype_weights_ : ndarray of shape (n_classes, n_subtypes)
        Posterior means of the subtype weights ``pi_k``.
    subtype_confusion_counts_ : ndarray of shape (n_workers, n_classes, n_subtypes, n_classes)
        Dirichlet parameters of the posterior of ``v[j, k, m]``: the prior's
        pseudo-counts plus the expected counts of worker ``j``'s answers on
        tasks of subtype ``m`` of class ``k`` (normalize the last axis for
        the posterior means).
    class_priors_ : ndarray of shape (n_classes,)
        Posterior means of the class proportions.
    class_pseudo_counts_ : ndarray of shape (n_classes,)
        Parameters ``alpha`` of the Dirichlet prior of the class proportions
        that the fit used (see ``class_prior``).
    converged_ : bool
        Whether the best initialization converged.
    n_iter_ : int
        Iterations of the best initialization.
    lower_bound_ : float
        ELBO of the fit, per task.
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
    BayesianDawidSkene : One confusion matrix per worker, prior learned from the crowd.
    DawidSkene : MAP EM with a fixed prior.

    Notes
    -----
    ``predict_proba`` gives the variational class posteriors (summed over
    subtypes) under the fitted worker posteriors. ``score_samples`` gives
    ``log p(votes of task i)`` under the posterior means, the posterior
    predictive probability of the task's votes. The per-worker tables hold
    ``n_workers * K * K * n_subtypes`` entries (three such arrays during a
    fit): mind them with many workers and classes.

    References
    ----------
    Y. Li, B. I. P. Rubinstein and T. Cohn. "Exploiting worker correlation
    for label aggregation in crowdsourcing". ICML, 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import EBCC
    >>> votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]] * 10)
    >>> ebcc = EBCC(random_state=0).fit(votes)
    >>> ebcc.confusion_matrices_[2].round(2)  # worker 2 gives the other class
    array([[0.12, 0.88],
           [0.83, 0.17]])
    >>> ebcc.predict([[0, 1, 1]])
    array([0])
    """

    _parameter_constraints: dict = {
        **BaseEM._parameter_constraints,
        "n_subtypes": [Interval(Integral, 1, None, closed="left")],
        "subtype_prior": [Interval(Real, 0.0, None, closed="neither")],
        "class_prior": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"empirical"})],
        "confusion_prior_diagonal": [Interval(Real, 0.0, None, closed="neither")],
        "confusion_prior_off_diagonal": [Interval(Real, 0.0, None, closed="neither")],
    }

    def __init__(
        self,
        n_classes=None,
        *,
        n_subtypes=10,
        subtype_prior=0.1,
        class_prior="empirical",
        confusion_prior_diagonal=4.0,
        confusion_prior_off_diagonal=1.0,
        init="majority",
        max_iter=500,
        tol=1e-6,
        n_init=5,
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
        self.n_subtypes = n_subtypes
        self.subtype_prior = subtype_prior
        self.class_prior = class_prior
        self.confusion_prior_diagonal = confusion_prior_diagonal
        self.confusion_prior_off_diagonal = confusion_prior_off_diagonal

    # A task's latent state is its (class k, subtype m) pair, column s = k * M + m of the
    # Dawid-Skene kernels' tables.
    _Parameters = EBCCParameters
    _Statistics = EBCCStatistics
    _supports_task_priors = True
    # numba's cache cold at 1e6 votes (K=4, 10000 workers; 5 starts of K M = 40 states, load
    # 12-15): compiling then fitting on numba took 37 s of CPU (29 s once compiled), the numpy
    # fit 65 s (benchmarks/first_fit.py's crowd, one fresh process each)
    _numpy_while_cold = False

    def _confusion_prior_t(self, K):
        """``beta[l, k * M + m]``: the Dirichlet prior of every ``v[j, k, m]``, as a column."""
        beta = np.full((K, K), float(self.confusion_prior_off_diagonal))
        np.fill_diagonal(beta, float(self.confusion_prior_diagonal))
        return np.ascontiguousarray(np.repeat(beta.T, self.n_subtypes, axis=1))

    def _statistics(self, layout, resp):
        # the known tasks' model (BaseEM._known_task_parameters): every subtype gets its class's
        # counts whole; split among the subtypes, a few known votes per worker would leave each
        # subtype's confusion at its prior (honest workers), and EM would start from majority
        # vote
        M = self.n_subtypes
        return EBCCStatistics(np.repeat(ds_worker_counts(layout, resp), M, axis=2),
                              np.repeat(resp.sum(axis=0) / M, M))

    def _start_statistics(self, layout, resp, draws):
        # Li et al.'s start: each task's class posterior split among the class's subtypes in
        # proportions drawn from Dir(1, ..., 1), one draw per (task, class)
        split = draws.flat_dirichlet(1, layout.n_classes, self.n_subtypes)  # [i, k, m]
        states = (resp[:, :, None] * split).reshape(layout.n_tasks, -1)
        return EBCCStatistics(ds_worker_counts(layout, states), states.sum(axis=0))

    def _m_step(self, stats, params):
        worker_counts, state_counts = stats
        M = self.n_subtypes
        K = len(state_counts) // M
        class_counts = state_counts.reshape(K, M).sum(axis=1)
        if params is not None:
            class_prior = params.class_prior
        elif self.class_prior == "empirical":  # the first M-step: the initial soft labels' totals
            class_prior = np.maximum(class_counts, 1.0)
        else:
            class_prior = np.full(K, float(self.class_prior))
        worker_counts += self._confusion_prior_t(K)  # in place: the posteriors' parameters
        return self._parameters(worker_counts, class_prior, class_prior + class_counts,
                                self.subtype_prior / M + state_counts.reshape(K, M))

    def _parameters(self, posterior_t, class_prior, class_posterior, subtype_posterior):
        """The parameters of the Dirichlet posteriors."""
        expected_log_t, kl = dirichlet_expectations(posterior_t,
                                                    self._confusion_prior_t(len(class_prior)))
        kl += dirichlet_kl(class_posterior, class_prior)
        kl += dirichlet_kl(subtype_posterior, self.subtype_prior / self.n_subtypes)
        return EBCCParameters(posterior_t, expected_log_t, class_prior, class_posterior,
                              subtype_posterior,
                              self._log_state_prior(class_posterior, subtype_posterior),
                              np.float64(kl))

    @staticmethod
    def _log_state_prior(class_posterior, subtype_posterior):
        """``E[log tau_k] + E[log pi_km]`` of every state ``k * M + m``."""
        return _spread_log_priors(dirichlet_expected_log(class_posterior),
                                  dirichlet_expected_log(subtype_posterior))

    def _class_log_priors(self, params):
        # E[log tau_k] + log sum_m exp(E[log pi_km]): with the subtypes' shares below, a known
        # task's states keep exactly their terms E[log tau_k] + E[log pi_km] of the ELBO
        return (dirichlet_expected_log(params.class_posterior)
                + logsumexp(dirichlet_expected_log(params.subtype_posterior), axis=1))

    def _log_task_state_priors(self, params, log_task_priors):
        """Per-task log-priors of the states (None without per-task priors): a task's
        log-prior of class ``k`` spread over the class's subtypes in the shares
        ``exp(E[log pi_km])``, normalized over ``m``."""
        if log_task_priors is None:
            return None
        log_shares = dirichlet_expected_log(params.subtype_posterior)
        log_shares -= logsumexp(log_shares, axis=1, keepdims=True)
        return _spread_log_priors(log_task_priors, log_shares)

    def _e_step(self, layout, params, out=None, *, log_task_priors=None):
        _, expected_log_t, _, _, _, log_state_prior, _ = params
        stats = ds_block_statistics(
            layout, expected_log_t, log_state_prior,
            worker_counts=None if out is None else out[0],
            log_task_priors=self._log_task_state_priors(params, log_task_priors))
        return EBCCStatistics(stats.worker_counts, stats.class_counts), stats.log_likelihood

    def _parameter_term(self, params):
        return -float(params.kl)

    def _set_fitted(self, params):
        posterior_t, _, class_prior, class_posterior, subtype_posterior, _, _ = params
        W, K = posterior_t.shape[:2]
        M = self.n_subtypes
        counts = posterior_t.reshape(W, K, K, M).transpose(0, 2, 3, 1)  # [j, k, m, l]
        self.subtype_confusion_counts_ = np.ascontiguousarray(counts)
        self.subtype_weights_ = subtype_posterior / subtype_posterior.sum(axis=1, keepdims=True)
        self.class_priors_ = class_posterior / class_posterior.sum()
        self.class_pseudo_counts_ = class_prior
        means = counts / counts.sum(axis=3, keepdims=True)
        self.confusion_matrices_ = np.einsum("km,jkml->jkl", self.subtype_weights_, means)
        self._class_posterior = class_posterior  # the Dirichlet parameters, for warm start
        self._subtype_posterior = subtype_posterior

    def _fitted_parameters(self):
        counts = self.subtype_confusion_counts_
        W, K, M = counts.shape[:3]
        posterior_t = np.ascontiguousarray(counts.transpose(0, 3, 1, 2).reshape(W, K, K * M))
        return self._parameters(posterior_t, self.class_pseudo_counts_.copy(),
                                self._class_posterior.copy(), self._subtype_posterior.copy())

    def _classes_of(self, states):
        """Class posteriors from (class, subtype) posteriors: the sum over subtypes."""
        return states.reshape(len(states), -1, self.n_subtypes).sum(axis=2)

    def _soft_labels(self, layout, params, resp=None, *, log_task_priors=None):
        _, expected_log_t, _, _, _, log_state_prior, _ = params
        states = ds_e_step(layout, expected_log_t, log_state_prior,
                           log_task_priors=self._log_task_state_priors(params, log_task_priors))
        return self._classes_of(states[0])

    def _posterior(self, layout, params, resp=None, *, log_task_priors=None):
        posterior_t, _, _, class_posterior, subtype_posterior, _, _ = params
        log_means_t = safe_log(posterior_t / posterior_t.sum(axis=1, keepdims=True))
        log_subtype_means = safe_log(subtype_posterior
                                     / subtype_posterior.sum(axis=1, keepdims=True))
        log_state_means = _spread_log_priors(safe_log(class_posterior / class_posterior.sum()),
                                             log_subtype_means)
        log_task_state_means = (None if log_task_priors is None
                                else _spread_log_priors(log_task_priors, log_subtype_means))
        return (self._soft_labels(layout, params, log_task_priors=log_task_priors),
                ds_e_step(layout, log_means_t, log_state_means,
                          log_task_priors=log_task_state_means)[1])

    def _vote_log_likelihood(self, context, task, worker, label):
        # Not the per-class factorization of BaseEM: given its class, a held-out vote still
        # depends on the task's subtype, which the other votes of the task tell (the workers'
        # correlation that EBCC models, Li et al., 2019, section 3). The posterior predictive
        # sums over the (class, subtype) states s: sum_s q(s | other votes) E_q[v[j, s, l]].
        check_is_fitted(self)
        params = self._fitted_parameters()  # no per-task parameters
        posterior_t, expected_log_t, _, _, _, log_state_prior, _ = params
        states = ds_e_step(BlockLayout(context, len(self.classes_)), expected_log_t,
                           log_state_prior)[0]
        log_means_t = safe_log(posterior_t / posterior_t.sum(axis=1, keepdims=True))
        return logsumexp(safe_log(states[task]) + log_means_t[worker, label], axis=1)


def _spread_log_priors(log_class_priors, log_subtype_priors):
    """Log-priors of the states ``k * M + m``: ``log_class_priors[..., k]`` (shape ``(K,)`` or
    ``(n_tasks, K)``) plus ``log_subtype_priors[k, m]``, in the same leading shape."""
    log_class_priors = np.asarray(log_class_priors)
    states = log_class_priors[..., :, None] + log_subtype_priors
    return states.reshape(*log_class_priors.shape[:-1], -1)
