"""GLAD: generative model of labels, abilities and difficulties."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, Real, StrOptions

from ._em import BaseEM, PerTask, PerWorker, Shared
from ._online import ONLINE_CONSTRAINTS, OnlineEMMixin
from ._prior_from import PriorFromMixin
from .kernels import (
    glad_block_statistics,
    glad_gradients,
    glad_task_difficulties,
    safe_log,
)
from .kernels.glad import _sigmoid_terms

# Gaussian priors with unit variance, as in Whitehill et al.'s reference code:
# abilities ~ N(1, 1) (workers better than random a priori); log(beta) ~ N(0, 1),
# centred on beta = 1, the difficulty given to a task nothing is known about (the
# reference code centres log(beta) on 1, i.e. beta = e).
_ABILITY_MEAN = 1.0
_ABILITY_SCALE = 1.0
_LOG_BETA_SCALE = 1.0
# Priors chosen from the data (ability_prior / difficulty_prior "auto"): range of their
# scales; they are re-estimated at each M-step until the scales change by less than this
# (relative) and the mean by less than this times the scale, then kept.
_MIN_SCALE, _MAX_SCALE = 0.05, 1e2
_PRIOR_SETTLED = 1e-2


class GLADParameters(NamedTuple):
    """The parameters of :class:`GLAD`."""

    abilities: PerWorker
    """Each worker's ability ``alpha_j``."""
    log_betas: PerTask
    """Each task's log inverse difficulty ``log beta_i`` (None outside a block)."""
    log_class_priors: Shared
    """``(K,)`` log class priors (uniform)."""
    hyper: Shared
    """``[ability mean, ability scale, log-difficulty scale, settled, drift]``: the priors,
    whether their "auto" re-estimation has stopped, and the between-project drift ``tau`` of
    the abilities carried by ``prior_from``."""
    ability_precision: PerWorker
    """The curvature of the M-step's objective in each ability, less the population prior's:
    the precision of its likelihood, plus that of ``prior_from`` (``ability_precisions_``;
    the precision of ``prior_strength="auto"`` when the model is the ``prior_from`` of another
    fit)."""


class GLADStatistics(NamedTuple):
    """The statistics of :class:`GLAD`'s M-step: the per-worker ones and the shared one summed
    over the blocks, the per-task one kept with its block."""

    ability_gradient: PerWorker
    """The gradient of the M-step's objective ``Q`` in each ability."""
    ability_curvature: PerWorker
    """The curvature of ``Q`` in each ability, at the ability."""
    ability_curvature_half: PerWorker
    """The same at half the ability."""
    ability_curvature_zero: PerWorker
    """The same at 0."""
    log_betas: PerTask
    """The next log inverse difficulties, from the difficulties' half of the M-step run in the
    block's E-step pass."""
    difficulty_moment: Shared
    """``[sum of b_i**2, number of well-determined b_i]``: for the log-difficulties' prior."""


class GLAD(OnlineEMMixin, PriorFromMixin, BaseEM):
    """GLAD aggregation: worker abilities and task difficulties, fitted by MAP EM.

    Worker ``j`` answers task ``i`` correctly with probability
    ``sigmoid(alpha_j * beta_i)`` and otherwise picks one of the ``K - 1``
    wrong classes uniformly (Whitehill et al., 2009, multiclass form, as
    recalled by Lefort et al., 2024, appendix A.5). ``alpha_j`` in R is the
    worker's ability (negative: adversarial; 0: random), ``beta_i = exp(b_i)
    > 0`` the task's inverse difficulty: ``1 / beta_i`` near 0 is an easy
    task, large is an ambiguous one. The true classes follow the class
    priors.

    Priors (MAP): ``alpha_j ~ N(mu, sigma**2)`` and ``log(beta_i) ~ N(0,
    tau**2)``, with ``mu``, ``sigma`` and ``tau`` chosen by the data
    (``"auto"``, the default: MacKay's evidence updates at each M-step
    until they settle, see ``ability_prior``), or fixed; Whitehill et al.'s
    reference code uses ``N(1, 1)`` and unit variance (it centres
    ``log(beta)`` on 1 instead of 0). The
    class priors are fixed and uniform, as in Whitehill et al.'s model:
    learning them let the symmetric noise model explain class-biased workers
    by a skewed prevalence (accuracy on the bluebirds data of
    ``zheng_d_Duck_Identification``: 0.59 with learned priors, 0.72 with fixed
    ones; 0.897 and 0.928 on ``zheng_d_jn_product``, whose gold classes are
    88 % / 12 %). EM runs in log space: the E-step computes the posteriors
    with a log-sum-exp. The M-step is one round of block-coordinate ascent on
    the expected complete log-likelihood plus the log-priors, each half of
    which never decreases it, so that the objective never decreases: first
    every log-difficulty with the abilities held fixed (a safeguarded Newton
    step per task, halved until the task's objective does not fall; see
    :func:`skcrowd.aggregation.kernels.glad_block_statistics`), then every
    ability with the new difficulties held fixed (a Newton step, or a step
    under a bound of the curvature where the curvature grows along it), each
    step at most 1. Both halves at once from the same statistics, the former
    M-step, overshot along the direction where abilities and difficulties
    trade off (``alpha * beta`` unchanged): on ``act_CF_amt`` the objective
    fell at every other iteration. The kernels work on the observed votes
    only, so hundreds of votes per task do not overflow.

    **Difficulties of predicted tasks.** ``predict``, ``predict_proba`` and
    ``score_samples`` estimate the difficulty of every task of ``X`` with the
    fitted abilities and class priors held fixed: the MAP ``log(beta_i)``,
    found by a safeguarded Newton search from ``beta_i = 1`` (see
    :func:`skcrowd.aggregation.kernels.glad_task_difficulties`); a task
    without votes keeps ``beta_i = 1`` and gets the class priors. ``fit`` ends
    with the same computation on the fitted tasks (``difficulties_``), so
    ``fit_predict(X)`` equals ``fit(X).predict(X)``.

    Parameters
    ----------
    n_classes : int, default=None
        Number of classes when some never appear in the votes: labels must be
        integers in ``range(n_classes)``. Default: the distinct labels seen.
    ability_prior : "auto" or (float, float), default="auto"
        Mean and standard deviation of the Gaussian prior of the abilities.
        ``"auto"``: chosen by the data (empirical Bayes, Laplace
        approximation of the evidence; MacKay, 1992): at each M-step the
        mean becomes the mean ability of the workers with votes and the
        variance ``sum_j (alpha_j - mu)**2 / gamma``, ``gamma`` the number of
        well-determined abilities (``sum_j c_j / (c_j + 1 / sigma**2)``, ``c_j``
        the curvature of the likelihood), from ``N(1, 1)`` until they change
        by less than 1 %; fitted values in ``ability_prior_``. ``(1.0,
        1.0)`` is the former fixed prior.
    difficulty_prior : "auto" or float, default="auto"
        Standard deviation ``tau`` of the prior of the log-difficulties
        ``log(beta_i) ~ N(0, tau**2)``; ``"auto"`` re-estimates it like the
        ability scale (from 1); fitted value in ``difficulty_prior_``.
    prior_from : fitted GLAD, default=None
        An earlier fit (another project of the same workers) whose abilities
        become the prior of this fit: each worker of ``X`` that voted in
        ``prior_from`` (matched by id, as in :class:`DawidSkene`) gets, on
        top of the population prior ``N(mu, sigma**2)``, a Gaussian factor
        ``N(alpha'_j, 1 / lambda_j)`` centred on its earlier ability
        ``alpha'_j``, with the precision ``lambda_j`` of ``prior_strength``
        (applied once as a prior: a pseudo-observation of the ability, in
        the M-step and the objective, never clamped); a new worker gets the
        population prior alone. The class priors are fixed and uniform, as
        without it. See :ref:`prior_from`.
    prior_strength : "auto" or float, default="auto"
        The precision ``lambda_j`` (inverse variance) of the earlier
        ability's factor. ``"auto"``: the precision the earlier votes gave
        that ability (``prior_from.ability_precisions_``, the curvature of
        their log-likelihood at the fitted ability: a Laplace approximation
        of the earlier posterior, sequential Bayes). A number ``s >= 0``: the
        same precision ``s`` for every matched worker (``s = 10``: the
        earlier ability known within a standard deviation of about 0.3).
    prior_drift : "auto" or float, default="auto"
        The between-project drift ``tau`` of the abilities: how far a
        worker's ability may move from one project to the next, whatever
        the earlier votes measured. The earlier factor's variance becomes
        ``1 / lambda_j + tau**2`` (hierarchical: the ability here is drawn
        around the earlier one), so that ``tau = 0`` keeps ``prior_strength``
        as it is and a large ``tau`` gives a fresh fit. ``"auto"``: chosen by
        maximum likelihood at each M-step until the priors settle, from the
        matched workers with votes here (their earlier abilities against
        their estimates from these votes alone, see ``prior_drift_``). A
        number: that ``tau``.
    half_life : float or None, default=250
        :meth:`partial_fit` only: the number of votes per worker after which
        a batch's statistics weigh half (see :class:`DawidSkene`). The
        batches that have left the ``window`` enter each ability's M-step as
        a quadratic around the abilities of their last E-step (their summed gradient, moved
        along their curvature): stepwise EM on a Laplace approximation, not
        exact sums. See :ref:`online`.
    window : float or None, default=500
        :meth:`partial_fit` only: the votes per known worker kept and re-read
        at every batch (None or 0: none), as in :class:`DawidSkene`; the
        batches that leave it join the quadratic above. See :ref:`online`.
    init : {"majority", "random"}, default="majority"
        Initial responsibilities: the naive soft labels (vote frequencies of
        each task), or random rows drawn with ``random_state``; the first
        M-step starts from abilities at the prior mean and ``beta = 1``.
    max_iter : int, default=100
        Maximum number of EM iterations per initialization.
    tol : float, default=1e-6
        Stop when the objective (per task) changes by less than ``tol``;
        ``tol=0`` runs exactly ``max_iter`` iterations.
    n_init : int, default=1
        Number of initializations; the one with the best objective is kept
        (use with ``init="random"``).
    random_state : int, RandomState instance or None, default=None
        Seed of ``init="random"``.
    warm_start : bool, default=False
        Resume from the fitted abilities and class priors on the next ``fit``
        (same workers and classes); ``n_init`` is then ignored.
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
    abilities_ : ndarray of shape (n_workers,)
        ``alpha_j``; a worker without votes keeps the prior mean.
    ability_prior_ : ndarray of shape (2,)
        Mean and standard deviation of the abilities' prior used in the fit.
    difficulty_prior_ : float
        Standard deviation of the log-difficulties' prior used in the fit.
    difficulties_ : ndarray of shape (n_fitted_tasks,)
        ``1 / beta_i`` of each fitted task (larger: harder); ``beta_i =
        1 / difficulties_[i]``. Tasks in the order of the rows of ``X``, or
        of increasing task id for long-format votes. Not set by a fit on
        Dask, whose per-task results stay on the cluster.
    class_priors_ : ndarray of shape (n_classes,)
        The fixed, uniform class priors.
    ability_precisions_ : ndarray of shape (n_workers,)
        The precision of each ability from the votes (the curvature of their
        expected log-likelihood at the fitted ability, population prior left
        out), plus that of ``prior_from``: what ``prior_strength="auto"``
        reads when this model is the prior of the next project.
    prior_workers_ : ndarray of shape (n_workers,) of bool
        With ``prior_from``: whether each worker got its earlier ability as
        prior (matched, with votes in ``prior_from``).
    prior_drift_ : float
        The drift ``tau`` of the abilities carried by ``prior_from``:
        ``prior_drift`` when a number; with ``"auto"``, the one chosen (0
        where the abilities moved no more than their precisions allow, and
        without ``prior_from``).
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
        decreases (up to rounding). The iterations that choose the "auto"
        priors come first and are not recorded (each has its own prior).
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
    DawidSkene : Full confusion matrix per worker, no task difficulty.

    References
    ----------
    J. Whitehill, T. Wu, J. Bergsma, J. Movellan and P. Ruvolo. "Whose vote
    should count more: optimal integration of labels from labelers of unknown
    expertise". NeurIPS, 2009.

    T. Lefort, B. Charlier, A. Joly and J. Salmon. "Identify ambiguous tasks
    combining crowdsourced labels by weighting Areas Under the Margin". TMLR,
    2024 (appendix A.5, algorithm 3).

    D. J. C. MacKay. "Bayesian interpolation". Neural Computation 4(3), 1992
    (re-estimation of prior variances from the evidence: the "auto" priors).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import GLAD
    >>> votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]] * 10)
    >>> glad = GLAD(ability_prior=(1.0, 1.0), difficulty_prior=1.0).fit(votes)  # fixed priors
    >>> glad.abilities_.round(2)  # worker 2 is adversarial
    array([ 2.52,  1.69, -2.06])
    >>> glad.difficulties_[:5].round(2)  # workers 0 and 1 disagree on the fifth task
    array([0.67, 0.67, 0.67, 0.67, 1.62])
    >>> glad.predict([[0, 1, 1]])
    array([0])
    >>> auto = GLAD().fit(votes)  # priors chosen by the data: tasks alike, workers distinct
    >>> auto.ability_prior_.round(2), round(auto.difficulty_prior_, 2)
    (array([0.52, 4.6 ]), 0.05)

    The next project of the same workers, where worker 2 has turned reliable:
    its earlier ability, carried as a prior, moved further than its
    precision allows, and the drift chosen from the data lets the new votes
    win:

    >>> later = np.array([[0, 0, 0], [1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 1, 0]] * 4)
    >>> carried = GLAD(prior_from=auto).fit(later)
    >>> round(carried.prior_drift_, 1), carried.abilities_.round(1)
    (4.9, array([3.6, 1.7, 3.3]))
    """

    _parameter_constraints: dict = {
        **BaseEM._parameter_constraints,
        "ability_prior": [StrOptions({"auto"}), tuple, list],
        "difficulty_prior": [StrOptions({"auto"}), Interval(Real, 0.0, None, closed="neither")],
        "prior_from": [None, HasMethods(["fit", "predict_proba"])],
        "prior_strength": [StrOptions({"auto"}), Interval(Real, 0.0, None, closed="left")],
        "prior_drift": [StrOptions({"auto"}), Interval(Real, 0.0, None, closed="left")],
        **ONLINE_CONSTRAINTS,
    }

    def __init__(
        self,
        n_classes=None,
        *,
        ability_prior="auto",
        difficulty_prior="auto",
        prior_from=None,
        prior_strength="auto",
        prior_drift="auto",
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
        self.ability_prior = ability_prior
        self.difficulty_prior = difficulty_prior
        self.prior_from = prior_from
        self.prior_strength = prior_strength
        self.prior_drift = prior_drift
        self.half_life = half_life
        self.window = window

    # Parameters: GLADParameters, whose hyper is chosen by the M-step with "auto" priors until
    # they settle, so it travels with the parameters. The M-step is block-coordinate ascent
    # on the expected complete log-likelihood Q plus the log-priors, each half never
    # decreasing it, so that EM never decreases the objective: the E-step pass of a block
    # runs the difficulties' half for its tasks right after their posteriors
    # (glad_block_statistics: a line search per task, abilities fixed) and returns the next
    # log-difficulties as a task statistic, which _task_m_step hands on; the abilities' half
    # (_ability_step) runs in _m_step on the gradient and curvatures of Q in the abilities at
    # the new difficulties, summed over the blocks. Statistics: GLADStatistics.
    _Parameters = GLADParameters
    _Statistics = GLADStatistics
    _supports_task_priors = True

    _prior_from_models = "GLAD"

    def _earlier_table(self, earlier):
        """``([j] = (precision, ability), precisions)``: each earlier worker's ability with the
        precision of its factor ("auto": the earlier ``ability_precisions_``, else
        ``prior_strength``), and that earlier precision (0: a worker without votes)."""
        precision = earlier.ability_precisions_
        strength = (precision if self.prior_strength == "auto"
                    else np.full_like(precision, float(self.prior_strength)))
        return np.column_stack([strength, earlier.abilities_]), precision

    def _fixed_priors(self):
        """The fixed priors ((ability mean, ability scale), log-difficulty scale), None where
        "auto"."""
        ability = self.ability_prior
        if isinstance(ability, str):
            ability = None
        elif not (len(ability) == 2 and np.all(np.isfinite(ability)) and ability[1] > 0):
            raise ValueError(f"ability_prior must be 'auto' or a (mean, standard deviation) pair "
                             f"with a finite mean and a positive, finite deviation; got "
                             f"{ability!r}.")
        else:
            ability = (float(ability[0]), float(ability[1]))
        difficulty = self.difficulty_prior
        return ability, None if isinstance(difficulty, str) else float(difficulty)

    def _initial_hyper(self):
        ability, difficulty = self._fixed_priors()
        mean, scale = (_ABILITY_MEAN, _ABILITY_SCALE) if ability is None else ability
        drift = None if self.prior_drift == "auto" else float(self.prior_drift)
        carried = getattr(self, "_earlier_counts", None) is not None
        settled = ability is not None and difficulty is not None and not (
            carried and drift is None)
        return np.array([mean, scale, _LOG_BETA_SCALE if difficulty is None else difficulty,
                         settled, 0.0 if drift is None else drift])

    def _statistics(self, layout, resp):
        hyper = self._initial_hyper()
        log_betas, curv_b, *per_worker = glad_gradients(
            layout, resp, np.full(layout.n_workers, hyper[0]), np.zeros(layout.n_tasks),
            prior_scale=hyper[2])
        return GLADStatistics(*per_worker, log_betas, _second_moment(log_betas, curv_b, hyper))

    def _m_step(self, stats, params):
        per_worker = stats[:4]  # gradient and curvatures of Q in the abilities
        if params is None:
            hyper = self._initial_hyper()
            abilities = np.full(len(per_worker[0]), hyper[0])
        else:
            abilities, hyper = params.abilities, params.hyper
        mean, scale, _, settled, drift = hyper
        votes_curvature = per_worker[1]
        if self._earlier_counts is not None:
            # the earlier ability: a Gaussian pseudo-observation of precision lam at centre,
            # -lam (alpha - centre)**2 / 2 added to Q (a constant curvature lam), lam the
            # earlier precision widened by the drift
            lam, centre = self._earlier_counts.T
            lam = _drifted_precision(lam, drift)
            grad, *curvatures = per_worker
            per_worker = (grad - lam * (abilities - centre), *(c + lam for c in curvatures))
        precision = per_worker[1]
        abilities = abilities + _ability_step(abilities, *per_worker, mean, scale)
        K = len(self.classes_)
        log_priors = np.full(K, -np.log(K))
        if settled:
            return GLADParameters(abilities, None, log_priors, hyper, precision)
        ability, difficulty = self._fixed_priors()
        new = hyper.copy()
        if self._earlier_counts is not None and self.prior_drift == "auto":
            # the drift by maximum likelihood, from the workers with votes here (the others say
            # nothing of it): ability j estimated from its votes alone (curvature c, the
            # population prior and the earlier factor taken out of the posterior mean alpha of
            # total curvature H) is a_j with a_j - centre = (H (alpha - centre) + (centre -
            # mean) / scale**2) / c, within 1 / c of the ability
            moved = (votes_curvature > 0) & (lam > 0)
            alone = votes_curvature[moved]
            distance = ((per_worker[1][moved] + 1.0 / scale**2) * (abilities - centre)[moved]
                        + (centre[moved] - mean) / scale**2) / alone
            new[4] = _drift_scale(distance**2,
                                  1.0 / self._earlier_counts[moved, 0] + 1.0 / alone)
        curv_a = per_worker[1]
        voted = curv_a > 0
        if ability is None and voted.any():
            # MacKay's re-estimation of the prior's mean and scale from the abilities of the
            # workers with votes (Laplace approximation of the evidence: its gradient in the
            # mean is sum_j (a_j - mean) / scale**2 at the MAP abilities a_j, zero at their
            # mean; gamma: the number of well-determined abilities). The step to it is
            # stretched by n / gamma (the abilities follow the mean by about gamma / n of a
            # move), at most by n: with gamma near 0 the stretch would overflow
            inv_var_a = 1.0 / scale**2
            a, curv = abilities[voted], curv_a[voted]
            gamma = np.sum(curv / (curv + inv_var_a))
            new[0] = mean + np.sum(a - mean) / max(gamma, 1.0)
            new[1] = _mackay_scale(np.sum((a - new[0]) ** 2), gamma)
        if difficulty is None and params is not None:  # not from the initial soft labels
            new[2] = _mackay_scale(*stats.difficulty_moment)
        change = np.abs(np.log(new[1:3] / hyper[1:3])).max()
        new[3] = params is not None and change < _PRIOR_SETTLED and max(
            abs(new[0] - mean), abs(new[4] - drift)) < _PRIOR_SETTLED * new[1]
        return GLADParameters(abilities, None, log_priors, new, precision)

    _prior_per_window = True  # see OnlineEMMixin

    def _with_carried(self, carried, stats, params):
        # the folded batches' Q in each ability as a quadratic around the abilities of their
        # last E-step (abilities_; a new worker's carried rows are zero): its gradient moves
        # along its curvature to params' abilities, where the window's statistics are (the
        # prior mean at the first M-step of a batch that chooses its priors afresh)
        curv = carried.ability_curvature
        a0 = np.zeros(len(curv))
        a0[:len(self.abilities_)] = self.abilities_
        abilities = (np.full(len(curv), self._initial_hyper()[0]) if params is None
                     else params.abilities)
        moved = carried._replace(
            ability_gradient=carried.ability_gradient - curv * (abilities - a0),
            ability_curvature_half=curv, ability_curvature_zero=curv)
        return super()._with_carried(moved, stats, params)

    def _prior_settled(self, params):
        return bool(params.hyper[3])

    def _settle_prior(self, params):
        hyper = params.hyper.copy()
        hyper[3] = 1.0
        return params._replace(hyper=hyper)

    def _task_m_step(self, task_stats, task_params, shared):
        # the difficulties' M-step ran in the block's E-step pass, with the abilities held
        # fixed (glad_block_statistics): its result is the block's task statistic
        (log_betas,) = task_stats
        return (log_betas,)

    def _class_log_priors(self, params):
        return params.log_class_priors

    def _e_step(self, layout, params, out=None, *, log_task_priors=None):
        abilities, log_betas, log_priors, hyper, _ = params
        resp = layout.scratch("resp", (layout.n_tasks, layout.n_classes))  # kept by a kept block
        st = glad_block_statistics(layout, abilities, log_betas, log_priors, prior_scale=hyper[2],
                                   resp=resp, log_task_priors=log_task_priors)
        per_worker = (st.ability_gradient, st.ability_curvature, st.ability_curvature_half,
                      st.ability_curvature_zero)
        if out is not None:
            for total, value in zip(out, per_worker):
                np.add(total, value, out=total)
        stats = GLADStatistics(*per_worker, st.log_betas,
                               _second_moment(st.log_betas, st.difficulty_curvature, hyper))
        return stats, float(st.task_log_likelihood.sum())

    def _parameter_term(self, params):
        abilities, (mean, scale, *_) = params.abilities, params.hyper
        term = float(-0.5 * np.sum((abilities - mean) ** 2) / scale**2
                     - len(abilities) * np.log(scale))
        if self._earlier_counts is not None:  # the earlier abilities' Gaussian factors
            lam, centre = self._earlier_counts.T
            lam = _drifted_precision(lam, params.hyper[4])
            term -= 0.5 * float(lam @ (abilities - centre) ** 2)
        return term

    def _task_parameter_term(self, task_params, shared):
        (log_betas,) = task_params
        _, hyper = shared  # the Shared fields: log_class_priors, hyper
        scale_b = hyper[2]
        return float(-0.5 * np.sum(log_betas**2) / scale_b**2 - len(log_betas) * np.log(scale_b))

    def _set_fitted(self, params):
        abilities, _, log_priors, hyper, precision = params
        self.abilities_ = abilities
        self.ability_precisions_ = precision
        self.class_priors_ = np.exp(log_priors)
        self.ability_prior_ = hyper[:2].copy()
        self.difficulty_prior_ = float(hyper[2])
        self._prior_settled_ = bool(hyper[3])
        self.prior_drift_ = float(hyper[4])

    def _fitted_parameters(self):
        return GLADParameters(
            self.abilities_.copy(), None, safe_log(self.class_priors_),
            np.r_[self.ability_prior_, self.difficulty_prior_, self._prior_settled_,
                  self.prior_drift_],
            self.ability_precisions_)

    def _difficulties(self, layout, params, resp=None, log_task_priors=None):
        abilities, _, log_priors, hyper, _ = params
        return glad_task_difficulties(layout, abilities, log_priors, prior_scale=hyper[2],
                                      resp=resp, log_task_priors=log_task_priors)

    def _task_parameters(self, layout, params, *, log_task_priors=None):
        return (self._difficulties(layout, params, log_task_priors=log_task_priors)[1],)

    def _posterior(self, layout, params, resp=None, *, log_task_priors=None):
        resp, _, task_ll = self._difficulties(layout, params, resp, log_task_priors)
        return resp, task_ll

    def _final_e_step(self, layout, params, *, log_task_priors=None):
        resp, log_betas, _ = self._difficulties(layout, params, log_task_priors=log_task_priors)
        return resp, {"difficulties_": np.exp(-log_betas)}

    def _vote_log_proba(self, layout, params, task, worker, label):
        K = layout.n_classes
        if K == 1:
            return np.zeros((len(task), 1))
        log_betas = self._difficulties(layout, params)[1]  # from the other votes of the tasks
        log_right, log_not_right = _sigmoid_terms(
            params.abilities[worker] * np.exp(log_betas[task]))[:2]
        right = np.arange(K) == label[:, None]
        return np.where(right, log_right[:, None], (log_not_right - np.log(K - 1))[:, None])


def _ability_step(abilities, grad, curv, curv_half, curv_zero, mean, scale):
    """The step of each ability in GLAD's M-step: it never decreases the M-step's objective.

    With the difficulties held fixed, the objective in ``alpha_j`` is ``Q_j(alpha) = sum_v
    q_v log s_v + (1 - q_v) log(1 - s_v) - (alpha - mean)**2 / (2 scale**2)``, concave, with
    gradient ``g = grad - (alpha_j - mean) / scale**2`` and curvature ``C(alpha) = c(alpha) +
    1 / scale**2`` where ``c`` (``curv`` at ``alpha_j``, ``curv_half`` at ``alpha_j / 2``,
    ``curv_zero`` at 0) grows as ``alpha`` moves toward 0 (see
    :func:`~skcrowd.aggregation.kernels.glad_block_statistics`). On a segment where ``C <= C0``,
    ``Q_j(alpha_j + d) >= Q_j(alpha_j) + g d - C0 d**2 / 2``, which increases from ``d = 0``
    to ``g / C0``: a step that far, or less far in the same direction, never decreases
    ``Q_j``. So:

    - away from 0 (``g alpha_j >= 0``), ``C <= C(alpha_j)``: the Newton step ``g /
      C(alpha_j)``;
    - toward 0, ``C <= C(alpha_j / 2)`` until half-way to 0: the step ``g / C(alpha_j / 2)``
      when it stops there; otherwise the further of half-way to 0 and ``g / C(0)``
      (``C(0)`` bounds ``C`` everywhere, so this step may cross 0).

    Each step is then clipped to ``[-1, 1]``: a shorter step in the same direction keeps the
    guarantee.

    Parameters
    ----------
    abilities, grad, curv, curv_half, curv_zero : ndarray of shape (n_workers,)
        The abilities and the statistics of
        :class:`~skcrowd.aggregation.kernels.GLADBlockStatistics` summed over the blocks.
    mean, scale : float
        The abilities' Gaussian prior.

    Returns
    -------
    step : ndarray of shape (n_workers,)
    """
    inv_var = 1.0 / scale**2
    g = grad - inv_var * (abilities - mean)
    step = g / (curv + inv_var)
    inward = step * abilities < 0
    half = np.where(inward, g / (curv_half + inv_var), 0.0)
    beyond = inward & (np.abs(half) > 0.5 * np.abs(abilities))
    zero = np.where(beyond, g / (curv_zero + inv_var), 0.0)
    step = np.where(inward, half, step)
    step = np.where(beyond, -0.5 * abilities, step)
    step = np.where(beyond & (np.abs(zero) > 0.5 * np.abs(abilities)), zero, step)
    return np.clip(step, -1.0, 1.0)


def _drifted_precision(precision, drift):
    """The precision ``1 / (1 / precision + drift**2)`` of an earlier ability seen through a
    between-project change of standard deviation ``drift`` (0 stays 0)."""
    return precision / (1.0 + precision * drift**2)


def _drift_scale(squares, variance, max_iter=200):
    """The between-project standard deviation ``tau`` of GLAD's abilities carried by
    ``prior_from``, by maximum likelihood.

    Worker ``j``'s earlier ability and its estimate from this project's votes alone (priors
    left out) differ by ``d_j ~ N(0, v_j + tau**2)``, ``v_j`` the sum of their variances (``1 /
    lambda_j`` and the inverse curvature of the votes' log-likelihood), as the effects of a
    random-effects meta-analysis. The likelihood of ``t = tau**2`` is highest at the root ``t >=
    0`` of ``sum_j (d_j**2 - v_j - t) / (v_j + t)**2 = 0``, found by the fixed point ``t = sum_j
    w_j**2 (d_j**2 - v_j) / sum_j w_j**2`` with ``w_j = 1 / (v_j + t)`` (with equal ``v_j``, ``t
    = mean(d_j**2) - v``); ``t = 0`` where the abilities moved no more than their variances
    allow (with ``d_j**2 <= v_j`` for all ``j``). ``tau`` is clipped to ``_MAX_SCALE``.

    Parameters
    ----------
    squares, variance : ndarray of shape (n_matched,)
        ``d_j**2`` and ``v_j`` of the matched workers with votes.

    Returns
    -------
    float
    """
    if len(squares) == 0:
        return 0.0
    excess, t = squares - variance, 0.0
    for _ in range(max_iter):
        w2 = (variance + t) ** -2.0
        t_new = min(max(float(w2 @ excess / w2.sum()), 0.0), _MAX_SCALE**2)
        if abs(t_new - t) <= 1e-10 * (1.0 + t):
            t = t_new
            break
        t = t_new
    return float(np.sqrt(t))


def _second_moment(log_betas, curvature, hyper):
    """[sum of b_i**2, number of well-determined b_i] over a block's tasks: the statistics of
    the empirical-Bayes scale of the log-difficulties (see :func:`_mackay_scale`)."""
    inv_var = 1.0 / hyper[2] ** 2
    return np.array([np.sum(log_betas**2), np.sum(curvature / (curvature + inv_var))])


def _mackay_scale(sum_squares, determined):
    """Standard deviation of a zero-mean Gaussian prior re-estimated from MAP estimates.

    MacKay's update ``sigma**2 = sum_i x_i**2 / gamma`` with ``gamma = sum_i c_i / (c_i +
    1 / sigma**2)`` the number of well-determined parameters (``c_i``: the curvature of the
    likelihood in ``x_i``): the stationary point of the Laplace approximation of the
    evidence, reached in fewer iterations than the EM update ``mean(x_i**2 + posterior
    variance)`` (MacKay, 1992; Bishop, 2006, section 3.5.2). Clipped to
    ``[_MIN_SCALE, _MAX_SCALE]``.
    """
    if determined <= 0 or sum_squares >= determined * _MAX_SCALE**2:
        return _MAX_SCALE  # (almost) nothing determined: the ratio is past the bound
    return float(np.clip(np.sqrt(sum_squares / determined), _MIN_SCALE, _MAX_SCALE))
