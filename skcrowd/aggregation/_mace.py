"""MACE: multi-annotator competence estimation (Hovy et al., 2013)."""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, Real, StrOptions

from ._em import BaseEM, PerWorker, Shared
from ._priors import (beta_log_hyperprior, dirichlet_log_hyperprior, fit_beta_prior,
                      fit_dirichlet_prior)
from ._one_coin import class_log_priors, class_prior_term
from ._online import ONLINE_CONSTRAINTS, OnlineEMMixin
from ._prior_from import PriorFromMixin
from .kernels import (dirichlet_expected_log, dirichlet_kl, mace_expected_counts,
                      mace_soft_counts, mace_vote_tables, one_coin_agreement,
                      one_coin_block_statistics, one_coin_e_step, one_coin_soft_terms,
                      safe_log)


class MACEParameters(NamedTuple):
    """The parameters of :class:`MACE` (variational Bayes or EM)."""

    competence: PerWorker
    """``(n_workers, 2)``: each worker's (knowing, spamming) row, Beta posterior parameters
    (VB) or probabilities (EM)."""
    spam_rows: PerWorker
    """``(n_workers, K)``: each worker's spamming distribution, Dirichlet posterior parameters
    (VB) or probabilities (EM)."""
    log_other: PerWorker
    """The one-coin pass's table ``(n_workers, K)`` of a vote for another class."""
    log_ratio: PerWorker
    """The one-coin pass's table ``(n_workers, K)`` of a vote for the true class, relative to
    ``log_other``."""
    hyper: Shared
    """``(a, b, g)``: the Beta(a, b) prior of the competences and the Dirichlet(g, ..., g)
    prior of the spam rows (VB)."""
    log_class_priors: Shared
    """``(K,)`` log class priors."""


class MACEStatistics(NamedTuple):
    """The statistics of :class:`MACE`'s M-step, summed over the blocks."""

    knowing: PerWorker
    """The expected number of each worker's known votes."""
    spam: PerWorker
    """``(n_workers, K)``: the expected number of each worker's spammed votes of each
    label."""
    class_counts: Shared
    """``(K,)``: the expected number of tasks of each class."""


class MACE(OnlineEMMixin, PriorFromMixin, BaseEM):
    """MACE: each worker either knows the answer or spams, fitted by variational Bayes.

    Multi-Annotator Competence Estimation (Hovy, Berg-Kirkpatrick, Vaswani &
    Hovy, 2013). On each task, worker ``j`` spams with probability ``1 -
    theta_j``: then its answer is drawn from its own *spam distribution*
    ``xi_j`` over the labels, whatever the truth; otherwise it gives the true
    class ``T_i``. So

        ``P(worker j answers a | T_i = t) = theta_j 1{a = t} + (1 - theta_j) xi_j[a]``,

    and ``theta_j`` is the worker's *competence*. A spammer (``theta_j`` near
    0) is found whatever its strategy: always the same label, or random
    labels in any proportions.
    ``X`` may hold soft votes (:class:`~skcrowd.SoftVotes`), virtual evidence
    on the answer: ``p(q | t) = theta_j q_t + (1 - theta_j) sum_b q_b xi_j[b]``
    (see :ref:`soft_votes`).

    **Fit.** Variational Bayes (``method="vb"``, the paper's recommended
    training) with ``theta_j ~ Beta(a, b)`` and ``xi_j ~ Dirichlet(g, ...,
    g)``: mean-field ``q(T, S) q(theta) q(xi)`` (``S`` the per-vote spamming
    indicators), alternating the posterior of the true classes and spamming
    indicators (E-step, in log space, with ``E_q[log theta]``, ``E_q[log(1 -
    theta)]`` and ``E_q[log xi]``) and the Beta and Dirichlet posteriors
    (prior plus expected counts of known and spammed votes). The objective
    (``lower_bound_``) is the evidence lower bound per task.
    ``method="em"`` is the paper's other training: EM with the counts
    smoothed by ``smoothing / K`` before normalizing (MAP under Beta and
    Dirichlet priors of parameter ``1 + smoothing / K``).

    **Priors fitted to the crowd.** The paper fixes ``Beta(0.5, 0.5)`` (a
    worker tries, or does not care) and its reference implementation
    ``Dirichlet(10)``; the paper also takes the true classes as uniform. By
    default (``"auto"``, ``class_priors="fit"``) these are fitted to the
    crowd being aggregated instead: each M-step also maximizes the evidence
    lower bound over ``(a, b)`` and ``g`` (empirical Bayes: the beta-binomial
    marginal likelihood of the workers' expected known / spammed counts, the
    Dirichlet-multinomial one of their spam counts, each with a weak
    hyperprior worth one pseudo-worker of uniform parameters) and estimates
    the class priors (MAP, one pseudo-task per class). On 11 real crowds
    (9 binary or up to 8 classes, 1,770 to 27,746 votes) this lifted the mean
    gold accuracy from 0.876 (the paper's fixed priors and uniform classes)
    to 0.889 and never fell below majority vote, where the fixed setting fell
    6.2 points below it on a crowd whose classes are 88 % / 12 %: uniform
    class priors let skewed spam distributions over-predict the rare class.
    ``competence_prior=(0.5, 0.5), spam_prior=10.0, class_priors="uniform"``
    is the paper's setting.

    **Restarts.** The paper keeps the best of several random restarts by the
    likelihood; here ``init="random"`` with ``n_init`` initializations starts
    each from random soft labels and keeps the one with the best objective
    (the ELBO for VB). The default starts once from the vote frequencies: on
    the crowds above, ten random restarts gave the same accuracy.

    Parameters
    ----------
    n_classes : int, default=None
        Number of classes when some never appear in the votes: labels must be
        integers in ``range(n_classes)``. Default: the distinct labels seen.
    method : {"vb", "em"}, default="vb"
        Variational Bayes with the priors below, or EM with ``smoothing``.
    competence_prior : "auto" or (a, b), default="auto"
        Beta prior of the competences (VB): fitted to the crowd, or ``a``
        pseudo-votes given knowingly and ``b`` spammed (the paper: ``(0.5,
        0.5)``).
    spam_prior : "auto" or float, default="auto"
        Parameter ``g`` of the symmetric Dirichlet prior of the spam
        distributions (VB): fitted to the crowd, or fixed (the reference
        implementation: 10).
    class_priors : {"fit", "uniform"}, default="fit"
        Estimate the prevalence of the classes (MAP, one pseudo-task per
        class), or keep it uniform as in the paper.
    smoothing : float, default=0.01
        Pseudo-count added to each expected count, divided by the number of
        classes, before normalizing (EM).
    prior_from : fitted MACE, default=None
        An earlier fit whose workers' competences and spam distributions
        become the prior of this fit: a worker matched by id (as in
        :class:`DawidSkene`) gets pseudo-votes added to its expected known
        and spammed votes (counted in the fit of the population priors and in
        the objective like votes); a new worker the population priors alone.
        See :ref:`prior_from`.
    prior_strength : "auto" or float, default="auto"
        ``"auto"``: the earlier worker's expected known and spammed votes
        (its earlier posteriors less the earlier priors; needs a
        ``prior_from`` fitted with ``method="vb"``); a number ``s``: ``s``
        pseudo-votes per worker, ``s * theta`` known and ``s * (1 - theta) *
        spam_distribution`` spammed.
    half_life : float or None, default=250
    window : float or None, default=500
        :meth:`partial_fit` only, as in :class:`DawidSkene`: the number of
        votes per worker after which a batch's statistics weigh half (None:
        never forgotten), and the votes per known worker kept and re-read at
        every batch (None or 0: none). See :ref:`online`.
    init : {"majority", "random"}, default="majority"
        Initial soft labels: the vote frequencies of each task, or random rows
        drawn with ``random_state``; the first M-step reads each vote of class
        ``a`` on a task with soft label ``r[a]`` as known with probability
        ``r[a] K / (K + 1)`` (its posterior for a competence of 0.5 and a
        uniform spam distribution).
    max_iter : int, default=200
        Maximum number of iterations (M-step then E-step) per initialization
        (MACE converges more slowly than Dawid-Skene: 14 to 119 iterations on
        the crowds above).
    tol : float, default=1e-6
        Stop when the objective (per task) changes by less than ``tol``;
        ``tol=0`` runs exactly ``max_iter`` iterations.
    n_init : int, default=1
        Number of initializations; the one with the best objective is kept
        (use with ``init="random"``).
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
        a dask DataFrame on Dask. See :ref:`scale`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    competences_ : ndarray of shape (n_workers,)
        ``theta_j``, the probability that worker ``j`` knows the answer
        (posterior mean for VB); a worker without votes gets the prior mean.
    spam_distributions_ : ndarray of shape (n_workers, n_classes)
        ``xi_j``, the distribution of worker ``j``'s answers when it spams
        (posterior mean for VB).
    confusion_matrices_ : ndarray of shape (n_workers, n_classes, n_classes)
        The implied confusion matrices ``theta_j I + (1 - theta_j) 1 xi_j^T``:
        ``[j, k, l] = P(worker j answers classes_[l] | true class classes_[k])``.
    competence_posteriors_ : ndarray of shape (n_workers, 2)
        VB only: ``q(theta_j) = Beta(competence_posteriors_[j])``, the prior
        plus the expected numbers of known and spammed votes.
    spam_posteriors_ : ndarray of shape (n_workers, n_classes)
        VB only: ``q(xi_j) = Dirichlet(spam_posteriors_[j])``.
    competence_prior_ : ndarray of shape (2,)
        VB only: ``(a, b)`` of the Beta prior of the competences (fitted with
        ``competence_prior="auto"``).
    spam_prior_ : float
        VB only: ``g`` of the Dirichlet prior of the spam distributions.
    class_priors_ : ndarray of shape (n_classes,)
        Prevalence of each class (uniform with ``class_priors="uniform"``).
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
        Objective of the fitted model per task: the evidence lower bound plus
        the log-densities of the hyperpriors and the class priors' prior (VB),
        or the log-likelihood plus the log-prior of the smoothing (EM), up to
        constants.
    lower_bounds_ : list of float
        Objective after each iteration of the best initialization; it never
        decreases.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of shape (n_workers,)
        Worker names, when ``X`` is a DataFrame with string column names.
    worker_ids_ : ndarray of shape (n_workers,)
        Original id of each worker, when fitted on long-format votes.

    See Also
    --------
    OneCoinDawidSkene : One accuracy per worker, errors uniform over the other classes.
    DawidSkene : A full confusion matrix per worker.

    Notes
    -----
    ``predict_proba`` gives the variational posterior of the true classes,
    the one the fit converges to (so ``fit_predict(X)`` equals
    ``fit(X).predict(X)``). ``score_samples`` gives ``log p(votes of task i)``
    with the worker parameters integrated over their variational posterior:
    exact because a worker votes at most once per task, which makes it the
    likelihood at the posterior means (``confusion_matrices_``); with
    ``method="em"``, the likelihood at the fitted parameters.

    The E-step never builds a ``K x K`` matrix per vote: a task's posterior is
    the sum of its votes' spam log-probabilities plus, for each class, a
    bonus from the votes for it (:mod:`skcrowd.aggregation.kernels.one_coin`).

    References
    ----------
    D. Hovy, T. Berg-Kirkpatrick, A. Vaswani and E. Hovy. "Learning whom to
    trust with MACE". NAACL-HLT, 2013, pages 1120-1130.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import MACE
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(3, size=300)
    >>> noisy = lambda accuracy: np.where(rng.random(300) < accuracy, truth,
    ...                                   rng.integers(3, size=300))
    >>> votes = np.column_stack([noisy(0.9), noisy(0.8), noisy(0.7),
    ...                          np.full(300, 2)])  # worker 3 always says 2
    >>> votes[rng.random(votes.shape) < 0.3] = -1
    >>> mace = MACE().fit(votes)
    >>> mace.competences_.round(2)  # the spammer is found
    array([0.9 , 0.89, 0.7 , 0.  ])
    >>> mace.spam_distributions_[3].round(2)
    array([0., 0., 1.])
    >>> mace.predict([[0, -1, -1, 2], [-1, 1, -1, 2]])  # its votes count for nothing
    array([0, 1])
    """

    _parameter_constraints: dict = {
        **BaseEM._parameter_constraints,
        "method": [StrOptions({"vb", "em"})],
        "competence_prior": [StrOptions({"auto"}), "array-like"],
        "spam_prior": [StrOptions({"auto"}), Interval(Real, 0.0, None, closed="neither")],
        "class_priors": [StrOptions({"fit", "uniform"})],
        "smoothing": [Interval(Real, 0.0, None, closed="left")],
        "prior_from": [None, HasMethods(["fit", "predict_proba"])],
        "prior_strength": [StrOptions({"auto"}), Interval(Real, 0.0, None, closed="left")],
        **ONLINE_CONSTRAINTS,
    }

    def __init__(
        self,
        n_classes=None,
        *,
        method="vb",
        competence_prior="auto",
        spam_prior="auto",
        class_priors="fit",
        smoothing=0.01,
        prior_from=None,
        prior_strength="auto",
        half_life=250,
        window=500,
        init="majority",
        max_iter=200,
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
        self.method = method
        self.competence_prior = competence_prior
        self.spam_prior = spam_prior
        self.class_priors = class_priors
        self.smoothing = smoothing
        self.prior_from = prior_from
        self.prior_strength = prior_strength
        self.half_life = half_life
        self.window = window

    _Parameters = MACEParameters
    _Statistics = MACEStatistics
    _supports_task_priors = True
    _accepts_soft_votes = True  # X may be SoftVotes (see _base.BaseAggregator)
    _prior_from_models = "MACE"

    def _earlier_table(self, earlier):
        """``([known, spammed label 0, ..., spammed label K-1] pseudo-votes, votes)`` of each
        earlier worker."""
        if not hasattr(earlier, "competence_posteriors_"):
            if self.prior_strength == "auto":
                raise ValueError(
                    "prior_strength='auto' reads the earlier expected votes of a MACE fitted "
                    "with method='vb'; prior_from was fitted with method='em'. Pass a number "
                    "of pseudo-votes per worker."
                )
            votes = np.ones(len(earlier.competences_))  # an EM fit keeps no vote counts
        else:
            knowing = earlier.competence_posteriors_[:, 0] - earlier.competence_prior_[0]
            spam = earlier.spam_posteriors_ - earlier.spam_prior_
            table = np.column_stack([knowing, spam])
            votes = table.sum(axis=1)
        if self.prior_strength != "auto":
            theta = earlier.competences_[:, None]
            table = float(self.prior_strength) * np.column_stack(
                [theta, (1.0 - theta) * earlier.spam_distributions_])
        return table, votes

    def _fixed_priors(self):
        """``(a, b)`` and ``g`` of the priors given as numbers (None where "auto")."""
        competence = None
        if not isinstance(self.competence_prior, str):
            competence = np.asarray(self.competence_prior, dtype=object)
            if (competence.shape != (2,) or not all(isinstance(v, numbers.Real) for v in competence)
                    or not all(np.isfinite(float(v)) and float(v) > 0 for v in competence)):
                raise ValueError("competence_prior must be 'auto' or two positive numbers (a, b), "
                                 f"got {self.competence_prior!r}.")
            competence = competence.astype(np.float64)
        spam = None if isinstance(self.spam_prior, str) else float(self.spam_prior)
        return competence, spam

    def _statistics(self, layout, resp):
        K = layout.n_classes
        # the knowing probability of a vote for its class under competence 0.5, uniform spam
        log_ratio = np.full((layout.n_workers, K), np.log1p(K))
        return MACEStatistics(*mace_expected_counts(one_coin_agreement(layout, resp,
                                                                       per_cell=True),
                                                    layout.cell_counts, log_ratio),
                              resp.sum(axis=0))

    def _m_step(self, stats, params):
        knowing, spam, class_counts = stats
        if self._earlier_counts is not None:  # pseudo-votes, counted as votes
            knowing = knowing + self._earlier_counts[:, 0]
            spam = spam + self._earlier_counts[:, 1:]
        K = spam.shape[1]
        spam_totals = spam.sum(axis=1)
        hyper = np.array([0.5, 0.5, 1.0]) if params is None else params.hyper.copy()
        if self.method == "vb":
            competence_prior, spam_prior = self._fixed_priors()
            hyper[:2] = (fit_beta_prior(knowing, knowing + spam_totals, hyper[:2])
                         if competence_prior is None else competence_prior)
            hyper[2] = fit_dirichlet_prior(spam, hyper[2]) if spam_prior is None else spam_prior
            competence = hyper[:2] + np.column_stack([knowing, spam_totals])
            spam_rows = spam + hyper[2]
            log_competence = dirichlet_expected_log(competence)
            log_spam = dirichlet_expected_log(spam_rows)
        else:
            s = float(self.smoothing) / K
            competence = np.column_stack([knowing, spam_totals]) + s
            competence /= competence.sum(axis=1, keepdims=True)
            spam_rows = spam + s
            spam_rows /= spam_rows.sum(axis=1, keepdims=True)
            log_competence, log_spam = safe_log(competence), safe_log(spam_rows)
        log_other, log_ratio = mace_vote_tables(log_competence[:, 0], log_competence[:, 1],
                                                log_spam)
        return MACEParameters(competence, spam_rows, log_other, log_ratio, hyper,
                              class_log_priors(class_counts, self.class_priors))

    def _class_log_priors(self, params):
        return params.log_class_priors

    def _e_step(self, layout, params, out=None, *, log_task_priors=None):
        _, _, log_other, log_ratio, _, log_priors = params
        soft = one_coin_soft_terms(layout, log_other.ravel(), log_ratio.ravel(), per_cell=True)
        st = one_coin_block_statistics(layout, log_other, log_ratio, log_priors, per_cell=True,
                                       log_task_priors=log_task_priors,
                                       resp=None if soft is None
                                       else np.empty((layout.n_tasks, layout.n_classes)))
        if soft is None:
            knowing, spam = mace_expected_counts(st.agreement, layout.cell_counts, log_ratio)
        else:  # soft votes: each vote's answer is latent too
            knowing, spam = mace_soft_counts(layout, st.resp, soft)
        if out is not None:
            np.add(out[0], knowing, out=out[0])
            np.add(out[1], spam, out=out[1])
        return MACEStatistics(knowing, spam, st.class_counts), st.log_likelihood

    def _parameter_term(self, params):
        competence, spam_rows, _, _, hyper, log_priors = params
        term = class_prior_term(log_priors, self.class_priors)
        if self._earlier_counts is not None:  # the pseudo-votes' (expected) log-likelihood
            log = dirichlet_expected_log if self.method == "vb" else safe_log
            log_competence, log_spam = log(competence), log(spam_rows)
            term += float(self._earlier_counts[:, 0] @ log_competence[:, 0] + np.sum(
                self._earlier_counts[:, 1:] * (log_competence[:, 1:] + log_spam)))
        if self.method == "em":
            s = float(self.smoothing) / spam_rows.shape[1]
            return term + s * float(safe_log(competence).sum() + safe_log(spam_rows).sum())
        term -= dirichlet_kl(competence, hyper[:2]) + dirichlet_kl(spam_rows, hyper[2])
        competence_prior, spam_prior = self._fixed_priors()
        if competence_prior is None:
            term += beta_log_hyperprior(*hyper[:2])
        if spam_prior is None:
            term += dirichlet_log_hyperprior(hyper[2], spam_rows.shape[1])
        return term

    def _set_fitted(self, params):
        competence, spam_rows, _, _, hyper, log_priors = params
        self.competences_ = competence[:, 0] / competence.sum(axis=1)
        self.spam_distributions_ = spam_rows / spam_rows.sum(axis=1, keepdims=True)
        if self.method == "vb":
            self.competence_posteriors_, self.spam_posteriors_ = competence, spam_rows
            self.competence_prior_, self.spam_prior_ = hyper[:2], float(hyper[2])
        else:
            for name in ("competence_posteriors_", "spam_posteriors_", "competence_prior_",
                         "spam_prior_"):
                self.__dict__.pop(name, None)
        K = len(log_priors)
        theta = self.competences_[:, None, None]
        self.confusion_matrices_ = (theta * np.eye(K)
                                    + (1.0 - theta) * self.spam_distributions_[:, None, :])
        self.class_priors_ = np.exp(log_priors)

    def _fitted_parameters(self):
        if hasattr(self, "competence_posteriors_"):  # fitted by VB
            competence = np.array(self.competence_posteriors_, dtype=np.float64)
            spam_rows = np.array(self.spam_posteriors_, dtype=np.float64)
            log_competence = dirichlet_expected_log(competence)
            log_spam = dirichlet_expected_log(spam_rows)
            hyper = np.array([*self.competence_prior_, self.spam_prior_], dtype=np.float64)
        else:
            theta = np.asarray(self.competences_, dtype=np.float64)
            competence = np.column_stack([theta, 1.0 - theta])
            spam_rows = np.array(self.spam_distributions_, dtype=np.float64)
            log_competence, log_spam = safe_log(competence), safe_log(spam_rows)
            hyper = np.array([0.5, 0.5, 1.0])
        return MACEParameters(
            competence, spam_rows,
            *mace_vote_tables(log_competence[:, 0], log_competence[:, 1], log_spam), hyper,
            safe_log(self.class_priors_))

    def _soft_labels(self, layout, params, resp=None, *, log_task_priors=None):
        _, _, log_other, log_ratio, _, log_priors = params
        return one_coin_e_step(layout, log_other, log_ratio, log_priors, per_cell=True,
                               resp=resp, log_task_priors=log_task_priors)[0]

    def _posterior(self, layout, params, resp=None, *, log_task_priors=None):
        competence, spam_rows, _, _, _, log_priors = params
        log_competence = safe_log(competence / competence.sum(axis=1, keepdims=True))
        log_spam = safe_log(spam_rows / spam_rows.sum(axis=1, keepdims=True))
        log_other, log_ratio = mace_vote_tables(log_competence[:, 0], log_competence[:, 1],
                                                log_spam)
        task_ll = one_coin_e_step(layout, log_other, log_ratio, log_priors, per_cell=True,
                                  log_task_priors=log_task_priors)[1]
        return self._soft_labels(layout, params, resp, log_task_priors=log_task_priors), task_ll

    def _vote_log_proba(self, layout, params, task, worker, label):
        # the posterior predictive of a new vote (Hovy et al., 2013, eq. 1 at the posterior
        # means): E[theta_j] 1{l = k} + E[1 - theta_j] E[xi_j[l]]; q(theta) and q(xi) are
        # independent, so the mean of the product is the product of the means (EM: the
        # point estimates)
        competence, spam_rows = params.competence, params.spam_rows
        K = spam_rows.shape[1]
        theta = competence[worker, 0] / competence[worker].sum(axis=1)
        spam = spam_rows[worker, label] / spam_rows[worker].sum(axis=1)
        right = np.arange(K) == label[:, None]
        return safe_log(np.where(right, theta[:, None], 0.0) + ((1.0 - theta) * spam)[:, None])
