"""GLAD: generative model of labels, abilities and difficulties."""

from __future__ import annotations

import numpy as np

from ._base import BaseEM
from .kernels import (
    LOG_BETA_BOUND,
    glad_block_statistics,
    glad_gradients,
    glad_task_difficulties,
    safe_log,
)

# Gaussian priors with unit variance, as in Whitehill et al.'s reference code:
# abilities ~ N(1, 1) (workers better than random a priori); log(beta) ~ N(0, 1),
# centred on beta = 1, the difficulty given to a task nothing is known about (the
# reference code centres log(beta) on 1, i.e. beta = e).
_ABILITY_MEAN = 1.0
_ABILITY_SCALE = 1.0
_LOG_BETA_SCALE = 1.0


class GLAD(BaseEM):
    """GLAD aggregation: worker abilities and task difficulties, fitted by MAP EM.

    Worker ``j`` answers task ``i`` correctly with probability
    ``sigmoid(alpha_j * beta_i)`` and otherwise picks one of the ``K - 1``
    wrong classes uniformly (Whitehill et al., 2009, multiclass form, as
    recalled by Lefort et al., 2024, appendix A.5). ``alpha_j`` in R is the
    worker's ability (negative: adversarial; 0: random), ``beta_i = exp(b_i)
    > 0`` the task's inverse difficulty: ``1 / beta_i`` near 0 is an easy
    task, large is an ambiguous one. The true classes follow the class
    priors.

    Priors (MAP): ``alpha_j ~ N(1, 1)`` and ``log(beta_i) ~ N(0, 1)`` (unit
    variances and the ability prior of Whitehill et al.'s reference code,
    which centres ``log(beta)`` on 1 instead of 0). The
    class priors are fixed and uniform, as in Whitehill et al.'s model:
    learning them let the symmetric noise model explain class-biased workers
    by a skewed prevalence (accuracy on the bluebirds data of
    ``zheng_d_Duck_Identification``: 0.59 with learned priors, 0.72 with fixed
    ones; 0.897 and 0.928 on ``zheng_d_jn_product``, whose gold classes are
    88 % / 12 %). EM runs in log space: the E-step computes the posteriors
    with a log-sum-exp; the M-step takes one Newton step on the expected
    complete log-likelihood for every ability (exact second derivative) and
    every log-difficulty (expected curvature), all at once from per-worker and
    per-task sums, each step clipped to at most 1.
    The kernels work on the observed votes only, so hundreds of votes per task
    do not overflow.

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
    init : {"majority", "random"}, default="majority"
        Initial responsibilities: the naive soft labels (vote frequencies of
        each task), or random rows drawn with ``random_state``; the first
        M-step starts from abilities 1 and ``beta = 1``.
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
        ``alpha_j``; a worker without votes keeps the prior mean 1.
    difficulties_ : ndarray of shape (n_fitted_tasks,)
        ``1 / beta_i`` of each fitted task (larger: harder); ``beta_i =
        1 / difficulties_[i]``. Tasks in the order of the rows of ``X``, or
        of increasing task id for long-format votes. Not set by a fit on
        Dask, whose per-task results stay on the cluster.
    class_priors_ : ndarray of shape (n_classes,)
        The fixed, uniform class priors.
    converged_ : bool
        Whether the best initialization converged.
    n_iter_ : int
        Iterations of the best initialization.
    lower_bound_ : float
        Objective of the fitted parameters: (log-likelihood of the votes +
        log-prior) / n_tasks, log-prior up to an additive constant.
    lower_bounds_ : list of float
        Objective after each iteration of the best initialization. It
        usually increases, but one Newton step per M-step is a generalized EM
        step that does not guarantee it (on the bluebirds data one iteration
        of 52 lowered it).
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

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import GLAD
    >>> votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]] * 10)
    >>> glad = GLAD().fit(votes)
    >>> glad.abilities_.round(2)  # worker 2 is adversarial
    array([ 2.52,  1.69, -2.06])
    >>> glad.difficulties_[:5].round(2)  # workers 0 and 1 disagree on the fifth task
    array([0.67, 0.67, 0.67, 0.67, 1.62])
    >>> glad.predict([[0, 1, 1]])
    array([0])
    """

    def __init__(
        self,
        n_classes=None,
        *,
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

    # Parameters are (abilities, log_betas, log_class_priors); statistics are the
    # gradients and curvatures of the expected complete log-likelihood in the
    # abilities and in the log-difficulties. The log-difficulties, their
    # statistics and their Newton step belong to the tasks: they stay with the
    # task's block (the per-task half of the M-step runs there).
    _parameter_axes = ("worker", "task", "shared")
    _statistic_axes = ("worker", "worker", "task", "task")
    _supports_task_priors = True

    def _statistics(self, layout, resp):
        return glad_gradients(layout, resp, np.full(layout.n_workers, _ABILITY_MEAN),
                              np.zeros(layout.n_tasks))

    def _m_step(self, stats, params):
        grad_a, curv_a = stats
        abilities = np.full(len(grad_a), _ABILITY_MEAN) if params is None else params[0]
        inv_var_a = 1.0 / _ABILITY_SCALE**2
        step_a = (grad_a - inv_var_a * (abilities - _ABILITY_MEAN)) / (curv_a + inv_var_a)
        K = len(self.classes_)
        return abilities + np.clip(step_a, -1.0, 1.0), np.full(K, -np.log(K))

    def _task_m_step(self, task_stats, task_params):
        grad_b, curv_b = task_stats
        log_betas = np.zeros(len(grad_b)) if task_params is None else task_params[0]
        inv_var_b = 1.0 / _LOG_BETA_SCALE**2
        step_b = (grad_b - inv_var_b * log_betas) / (curv_b + inv_var_b)
        return (np.clip(log_betas + np.clip(step_b, -1.0, 1.0), -LOG_BETA_BOUND, LOG_BETA_BOUND),)

    def _class_log_priors(self, params):
        return params[2]

    def _e_step(self, layout, params, out=None, *, log_task_priors=None):
        resp = layout.scratch("resp", (layout.n_tasks, layout.n_classes))  # kept by a kept block
        st = glad_block_statistics(layout, *params, resp=resp, log_task_priors=log_task_priors)
        if out is not None:
            np.add(out[0], st.ability_gradient, out=out[0])
            np.add(out[1], st.ability_curvature, out=out[1])
        stats = (st.ability_gradient, st.ability_curvature, st.difficulty_gradient,
                 st.difficulty_curvature)
        return stats, float(st.task_log_likelihood.sum())

    def _parameter_term(self, params):
        abilities, _ = params
        return float(-0.5 * np.sum((abilities - _ABILITY_MEAN) ** 2) / _ABILITY_SCALE**2)

    def _task_parameter_term(self, task_params):
        (log_betas,) = task_params
        return float(-0.5 * np.sum(log_betas**2) / _LOG_BETA_SCALE**2)

    def _set_fitted(self, params):
        abilities, log_priors = params
        self.abilities_ = abilities
        self.class_priors_ = np.exp(log_priors)

    def _fitted_parameters(self):
        return self.abilities_.copy(), safe_log(self.class_priors_)

    def _difficulties(self, layout, params, resp=None, log_task_priors=None):
        abilities, _, log_priors = params
        return glad_task_difficulties(layout, abilities, log_priors, prior_scale=_LOG_BETA_SCALE,
                                      resp=resp, log_task_priors=log_task_priors)

    def _task_parameters(self, layout, params, *, log_task_priors=None):
        return (self._difficulties(layout, params, log_task_priors=log_task_priors)[1],)

    def _posterior(self, layout, params, resp=None, *, log_task_priors=None):
        resp, _, task_ll = self._difficulties(layout, params, resp, log_task_priors)
        return resp, task_ll

    def _final_e_step(self, layout, params, *, log_task_priors=None):
        resp, log_betas, _ = self._difficulties(layout, params, log_task_priors=log_task_priors)
        return resp, {"difficulties_": np.exp(-log_betas)}
