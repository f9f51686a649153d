"""One-coin Dawid-Skene: one accuracy per worker, its prior fitted to the crowd."""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, Real, StrOptions

from ._em import BaseEM, PerWorker, Shared
from ._online import ONLINE_CONSTRAINTS, OnlineEMMixin
from ._prior_from import PriorFromMixin
from ._priors import beta_log_hyperprior, fit_beta_prior
from .kernels import (dirichlet_expected_log, dirichlet_kl, one_coin_agreement,
                      one_coin_block_statistics, one_coin_e_step, safe_log)


class OneCoinParameters(NamedTuple):
    """The variational parameters of :class:`OneCoinDawidSkene`."""

    accuracy_posteriors: PerWorker
    """``(n_workers, 2)``: the Beta posterior ``(alpha_j, beta_j)`` of each accuracy."""
    log_other: PerWorker
    """The one-coin kernels' table ``E[log(1 - p_j)] - log(K - 1)``."""
    log_ratio: PerWorker
    """``E[log p_j] - log_other``."""
    accuracy_prior: Shared
    """The Beta prior ``(a, b)`` of the accuracies."""
    log_class_priors: Shared
    """``(K,)`` log class priors."""


class OneCoinStatistics(NamedTuple):
    """The statistics of :class:`OneCoinDawidSkene`'s M-step, summed over the blocks."""

    agreement: PerWorker
    """The expected number of each worker's right votes."""
    n_votes: PerWorker
    """The number of each worker's votes."""
    class_counts: Shared
    """``(K,)``: the expected number of tasks of each class."""


class OneCoinDawidSkene(OnlineEMMixin, PriorFromMixin, BaseEM):
    """One-coin Dawid-Skene: one accuracy per worker, errors uniform over the other classes.

    Each task has a latent true class ``k`` drawn from the class priors
    ``rho``; worker ``j`` gives it with probability ``p_j`` (its accuracy)
    and otherwise one of the ``K - 1`` other classes uniformly (the
    "one-coin" Dawid-Skene model, Zhang et al., 2016; Dawid & Skene, 1979,
    with every confusion matrix ``p_j`` on the diagonal and ``(1 - p_j) /
    (K - 1)`` elsewhere). One parameter per worker instead of ``K (K - 1)``:
    the model to prefer when workers have few votes each or their errors
    carry no class structure. ``X`` may hold soft votes
    (:class:`~skcrowd.SoftVotes`): ``p(q | k) = p_j q_k + (1 - p_j) (1 - q_k)
    / (K - 1)``, virtual evidence on the answer (see :ref:`soft_votes`).

    **The accuracy prior.** Accuracies are Bayesian: ``p_j ~ Beta(a, b)``, and
    the fit is mean-field variational Bayes (``q(true classes) q(p)``, with
    ``q(p_j)`` a Beta, ``accuracy_posteriors_``); the E-step weighs each vote
    by ``E_q[log p_j]`` and ``E_q[log(1 - p_j)]``. With
    ``accuracy_prior="auto"`` (the default) ``(a, b)`` is not a constant but
    fitted to the crowd being aggregated (empirical Bayes): each M-step
    maximizes the evidence lower bound over ``(a, b)`` as well, i.e. the
    beta-binomial marginal likelihood of the workers' expected numbers of
    right answers. The prior is thus the distribution of accuracies across
    this crowd's workers: a worker with three votes is pulled toward the
    crowd's typical accuracy by as much as the spread of the other workers'
    accuracies says, and a worker with hundreds of votes keeps their own.
    A single constant prior cannot do both on crowds whose accuracies spread
    differently. ``(a, b)`` gets a weak hyperprior worth one worker of
    uniformly distributed accuracy (the conjugate prior of the Beta family),
    which keeps it finite when every vote agrees or the crowd has only a few
    workers. Pass ``accuracy_prior=(a, b)`` to fix it instead (``(1, 1)``:
    uniform).

    **Class priors.** Uniform by default, as in GLAD: a symmetric noise
    model explains workers biased toward a class by a skewed prevalence when
    it may learn one, and then labels almost every task with that class. On
    11 real crowds, learned class priors (``class_priors="fit"``, MAP with
    one pseudo-task per class) lowered the mean gold accuracy from 0.869 to
    0.852, and on the bluebirds crowd of ``zheng_d_Duck_Identification``
    from 0.722 to 0.583 (prevalence fitted 96 % / 4 %, gold 56 % / 44 %);
    they helped only on a simulated crowd of unbiased workers and skewed
    classes (0.897 against 0.877). Every E-step works in log space on the
    observed votes: ``O(votes + tasks K)`` per iteration.

    Parameters
    ----------
    n_classes : int, default=None
        Number of classes when some never appear in the votes: labels must be
        integers in ``range(n_classes)``. Default: the distinct labels seen.
    accuracy_prior : "auto" or (a, b), default="auto"
        Beta prior of the accuracies: fitted to the crowd ("auto", see above)
        or the two positive shape parameters.
    class_priors : {"uniform", "fit"}, default="uniform"
        Keep the prevalence of the classes uniform, or estimate it (MAP, one
        pseudo-task per class); see "Class priors" above.
    prior_from : fitted OneCoinDawidSkene, default=None
        An earlier fit whose workers' accuracies become the prior of this
        fit: a worker matched by id (as in :class:`DawidSkene`) gets
        ``strength * (p_j, 1 - p_j)`` pseudo-votes (right, wrong) added to
        its Beta posterior, on top of ``accuracy_prior``; a new worker the
        population prior alone. See :ref:`prior_from`.
    prior_strength : "auto" or float, default="auto"
        ``"auto"``: the earlier worker's expected numbers of right and wrong
        votes (its earlier posterior less the earlier population prior:
        sequential Bayes); a number ``s``: ``s`` pseudo-votes per worker.
    half_life : float or None, default=250
    window : float or None, default=500
        :meth:`partial_fit` only, as in :class:`DawidSkene`: the number of
        votes per worker after which a batch's statistics weigh half (None:
        never forgotten), and the votes per known worker kept and re-read at
        every batch (None or 0: none). See :ref:`online`.
    init : {"majority", "random"}, default="majority"
        Initial responsibilities: the naive soft labels (vote frequencies of
        each task), or random rows drawn with ``random_state``.
    max_iter : int, default=100
        Maximum number of iterations (M-step then E-step) per initialization.
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
    worker_accuracies_ : ndarray of shape (n_workers,)
        Posterior mean of each worker's accuracy ``p_j``, the probability of
        giving the true class (a worker without votes gets the prior mean).
    accuracy_posteriors_ : ndarray of shape (n_workers, 2)
        ``(alpha_j, beta_j)``: ``q(p_j) = Beta(alpha_j, beta_j)``, the prior
        plus the expected numbers of right and wrong votes.
    accuracy_prior_ : ndarray of shape (2,)
        ``(a, b)`` of the Beta prior: fitted with ``accuracy_prior="auto"``;
        its mean ``a / (a + b)`` is the crowd's typical accuracy and ``a + b``
        its strength in votes.
    class_priors_ : ndarray of shape (n_classes,)
        Prevalence of each class: uniform, or estimated with
        ``class_priors="fit"``.
    prior_workers_ : ndarray of shape (n_workers,) of bool
        With ``prior_from``: whether each worker got its earlier accuracy as
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
        Objective of the fitted model per task: the evidence lower bound
        (ELBO) of the votes, plus the log-densities of the hyperprior of
        ``(a, b)`` (with ``accuracy_prior="auto"``) and of the class priors'
        Dirichlet prior (with ``class_priors="fit"``), up to constants.
    lower_bounds_ : list of float
        Objective after each iteration of the best initialization; it never
        decreases (coordinate ascent).
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of shape (n_workers,)
        Worker names, when ``X`` is a DataFrame with string column names.
    worker_ids_ : ndarray of shape (n_workers,)
        Original id of each worker, when fitted on long-format votes.

    See Also
    --------
    DawidSkene : A full confusion matrix per worker.
    MACE : Workers who either know the answer or spam with their own label distribution.

    Notes
    -----
    ``predict_proba`` gives the variational posterior of the true classes,
    the one the fit converges to (so ``fit_predict(X)`` equals
    ``fit(X).predict(X)``). ``score_samples`` gives ``log p(votes of task i)``
    under the posterior of the accuracies: the probability of the votes with
    each ``p_j`` integrated over ``q(p_j)``, exact because a worker votes at
    most once per task, which makes it the likelihood at the posterior-mean
    accuracies ``worker_accuracies_``.

    References
    ----------
    A. P. Dawid and A. M. Skene. "Maximum likelihood estimation of observer
    error-rates using the EM algorithm". Applied Statistics 28(1), 1979.

    Y. Zhang, X. Chen, D. Zhou and M. I. Jordan. "Spectral methods meet EM: a
    provably optimal algorithm for crowdsourcing". JMLR 17, 2016 (the
    one-coin model).

    Q. Liu, J. Peng and A. Ihler. "Variational inference for crowdsourcing".
    NeurIPS, 2012 (Beta priors on one-coin accuracies; the prior matters).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import OneCoinDawidSkene
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(3, size=500)
    >>> right = rng.random((500, 5)) < [0.9, 0.8, 0.7, 0.6, 0.4]  # else a random class
    >>> votes = np.where(right, truth[:, None], rng.integers(3, size=(500, 5)))
    >>> votes[rng.random(votes.shape) < 0.4] = -1
    >>> oc = OneCoinDawidSkene().fit(votes)
    >>> oc.worker_accuracies_.round(2)  # simulated: 0.93, 0.87, 0.8, 0.73, 0.6
    array([0.91, 0.89, 0.83, 0.72, 0.56])
    >>> oc.accuracy_prior_.round(2)  # the crowd's accuracies: Beta(3.15, 1.27)
    array([3.15, 1.27])
    >>> oc.predict_proba([[0, 1, 1, -1, -1]]).round(3)
    array([[0.106, 0.888, 0.005]])
    """

    _parameter_constraints: dict = {
        **BaseEM._parameter_constraints,
        "accuracy_prior": [StrOptions({"auto"}), "array-like"],
        "class_priors": [StrOptions({"fit", "uniform"})],
        "prior_from": [None, HasMethods(["fit", "predict_proba"])],
        "prior_strength": [StrOptions({"auto"}), Interval(Real, 0.0, None, closed="left")],
        **ONLINE_CONSTRAINTS,
    }

    def __init__(
        self,
        n_classes=None,
        *,
        accuracy_prior="auto",
        class_priors="uniform",
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
        self.accuracy_prior = accuracy_prior
        self.class_priors = class_priors
        self.prior_from = prior_from
        self.prior_strength = prior_strength
        self.half_life = half_life
        self.window = window

    _Parameters = OneCoinParameters
    _Statistics = OneCoinStatistics
    _supports_task_priors = True
    _accepts_soft_votes = True  # X may be SoftVotes (see _base.BaseAggregator)
    _prior_from_models = "OneCoinDawidSkene"

    def _earlier_table(self, earlier):
        """``((right, wrong) pseudo-votes, votes)`` of each earlier worker."""
        # the expected right and wrong votes (with their own prior_from's pseudo-votes)
        counts = np.asarray(earlier.accuracy_posteriors_) - earlier.accuracy_prior_
        votes = counts.sum(axis=1)
        if self.prior_strength != "auto":
            accuracy = earlier.worker_accuracies_
            counts = float(self.prior_strength) * np.column_stack([accuracy, 1.0 - accuracy])
        return counts, votes

    def _fixed_prior(self):
        """The ``(a, b)`` of ``accuracy_prior``, None for "auto"."""
        if isinstance(self.accuracy_prior, str):
            return None
        prior = np.asarray(self.accuracy_prior, dtype=object)
        if (prior.shape != (2,) or not all(isinstance(v, numbers.Real) for v in prior)
                or not all(np.isfinite(float(v)) and float(v) > 0 for v in prior)):
            raise ValueError("accuracy_prior must be 'auto' or two positive numbers (a, b), got "
                             f"{self.accuracy_prior!r}.")
        return prior.astype(np.float64)

    def _statistics(self, layout, resp):
        return OneCoinStatistics(one_coin_agreement(layout, resp), _worker_votes(layout),
                                 resp.sum(axis=0))

    def _m_step(self, stats, params):
        agreement, n_votes, class_counts = stats
        if self._earlier_counts is not None:  # pseudo-votes, counted as votes
            agreement = agreement + self._earlier_counts[:, 0]
            n_votes = n_votes + self._earlier_counts.sum(axis=1)
        prior = self._fixed_prior()
        if prior is None:  # "auto": fitted to the crowd, from the previous M-step's
            prior = fit_beta_prior(agreement, n_votes, np.ones(2) if params is None
                                   else params.accuracy_prior)
        posteriors = _beta_posteriors(agreement, n_votes, prior)
        return OneCoinParameters(
            posteriors, *_vote_tables(dirichlet_expected_log(posteriors), len(class_counts)),
            prior, class_log_priors(class_counts, self.class_priors))

    def _class_log_priors(self, params):
        return params.log_class_priors

    def _e_step(self, layout, params, out=None, *, log_task_priors=None):
        _, log_other, log_ratio, _, log_priors = params
        st = one_coin_block_statistics(layout, log_other, log_ratio, log_priors,
                                       agreement=None if out is None else out[0],
                                       log_task_priors=log_task_priors)
        n_votes = _worker_votes(layout)
        if out is not None:
            np.add(out[1], n_votes, out=out[1])
        return OneCoinStatistics(st.agreement, n_votes, st.class_counts), st.log_likelihood

    def _parameter_term(self, params):
        posteriors, _, _, prior, log_priors = params
        term = (class_prior_term(log_priors, self.class_priors)
                - dirichlet_kl(posteriors, prior))
        if self._fixed_prior() is None:
            term += beta_log_hyperprior(*prior)
        if self._earlier_counts is not None:  # the pseudo-votes' expected log-likelihood
            term += float(np.sum(self._earlier_counts * dirichlet_expected_log(posteriors)))
        return term

    def _set_fitted(self, params):
        posteriors, _, _, prior, log_priors = params
        self.accuracy_posteriors_ = posteriors
        self.worker_accuracies_ = posteriors[:, 0] / posteriors.sum(axis=1)
        self.accuracy_prior_ = prior
        self.class_priors_ = np.exp(log_priors)

    def _fitted_parameters(self):
        posteriors = np.array(self.accuracy_posteriors_, dtype=np.float64)
        return OneCoinParameters(
            posteriors, *_vote_tables(dirichlet_expected_log(posteriors), len(self.class_priors_)),
            np.array(self.accuracy_prior_, dtype=np.float64), safe_log(self.class_priors_))

    def _soft_labels(self, layout, params, resp=None, *, log_task_priors=None):
        _, log_other, log_ratio, _, log_priors = params
        return one_coin_e_step(layout, log_other, log_ratio, log_priors, resp=resp,
                               log_task_priors=log_task_priors)[0]

    def _posterior(self, layout, params, resp=None, *, log_task_priors=None):
        posteriors, _, _, _, log_priors = params
        mean = posteriors[:, 0] / posteriors.sum(axis=1)
        log_other, log_ratio = _vote_tables(safe_log(np.column_stack([mean, 1.0 - mean])),
                                            len(log_priors))
        task_ll = one_coin_e_step(layout, log_other, log_ratio, log_priors,
                                  log_task_priors=log_task_priors)[1]
        return self._soft_labels(layout, params, resp, log_task_priors=log_task_priors), task_ll

    def _vote_log_proba(self, layout, params, task, worker, label):
        # the posterior predictive of a new vote: E_q[p_j] on the true class, (1 - E_q[p_j]) /
        # (K - 1) on each other one (Liu, Peng & Ihler, 2012; the vote's p_j integrated over
        # its Beta posterior)
        posteriors, _, _, _, log_priors = params
        K = len(log_priors)
        mean = posteriors[worker, 0] / posteriors[worker].sum(axis=1)
        if K == 1:
            return np.zeros((len(task), 1))
        right = np.arange(K) == label[:, None]
        return np.where(right, safe_log(mean)[:, None],
                        (safe_log(1.0 - mean) - np.log(K - 1))[:, None])


def class_log_priors(class_counts, how):
    """Log class priors of an M-step: ``how="fit"``, MAP with one pseudo-task per class (a
    Dirichlet(2, ..., 2) prior); ``"uniform"``, fixed."""
    if how == "fit":
        priors = class_counts + 1.0
        return safe_log(priors / priors.sum())
    return np.full(len(class_counts), -np.log(len(class_counts)))


def class_prior_term(log_priors, how):
    """The class priors' term of the objective (their Dirichlet(2, ..., 2) log-density, up to a
    constant, when fitted)."""
    return float(log_priors.sum()) if how == "fit" else 0.0


def _vote_tables(log_accuracy, n_classes):
    """``(log_other, log_ratio)`` of the one-coin pass from ``[log p_j, log(1 - p_j)]`` rows (or
    their expectations)."""
    log_other = log_accuracy[:, 1] - np.log(max(n_classes - 1, 1))
    return log_other, log_accuracy[:, 0] - log_other


def _worker_votes(layout):
    """Number of votes of each worker of a block."""
    return layout.cell_counts.reshape(layout.n_workers, layout.n_classes).sum(axis=1)


def _beta_posteriors(agreement, n_votes, prior):
    """``(alpha_j, beta_j)`` rows: the prior plus the expected right and wrong votes."""
    wrong = np.maximum(n_votes - agreement, 0.0)  # agreement <= n_votes up to rounding
    return np.column_stack([prior[0] + agreement, prior[1] + wrong])
