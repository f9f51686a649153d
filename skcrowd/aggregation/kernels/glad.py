"""GLAD kernels: the E-step of a block fused with the M-step of its tasks' difficulties and the
statistics of the abilities' M-step, and the MAP difficulty of each task for fixed workers.

Parameters reach the kernels as the abilities ``alpha_j``, the
log-difficulties ``b_i = log(beta_i)`` and the log class priors.

numpy engine: per-vote arrays summed per task and per worker with
``np.bincount``; the per-task searches (the difficulties' M-step, the MAP
difficulties) run on all the tasks at once.

numba engine: the E-step and the difficulty step task by task (parallel over
chunks of tasks), whose per-vote pieces of the abilities' statistics are
written in worker order and summed per worker (``_glad_worker_sums_*``, parallel over
workers); the Newton search of the MAP difficulties runs task by task,
parallel over chunks of tasks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._common import _engine, _jit, _log_priors, _normalize_log_rows, _out, _parallel, numba

# Bounds and stopping rule of the per-task Newton searches on log(beta).
LOG_BETA_BOUND = 20.0
_NEWTON_MAX_EVALS = 100
_NEWTON_STEP_TOL = 1e-10
_NEWTON_MIN_SCALE = 2.0**-30


class GLADBlockStatistics(NamedTuple):
    """Result of :func:`glad_block_statistics` for one block.

    ``Q`` is the expected complete log-likelihood of the votes under the
    posteriors ``resp``; the gradients and curvatures are those of its votes'
    part (the priors' terms are added by the M-step).
    """

    resp: np.ndarray
    """(n_tasks, K): posterior probability of each true class."""
    task_log_likelihood: np.ndarray
    """(n_tasks,): ``log p(votes of task i)`` at the given parameters."""
    log_betas: np.ndarray
    """(n_tasks,): the next log-difficulties, the M-step of each task's ``log(beta)`` with the
    abilities held fixed."""
    difficulty_curvature: np.ndarray
    """(n_tasks,): expected (Fisher) curvature of Q in each next ``log(beta)`` (>= 0)."""
    ability_gradient: np.ndarray
    """(n_workers,): gradient of Q in each ability, at the next log-difficulties."""
    ability_curvature: np.ndarray
    """(n_workers,): minus the second derivative of Q in each ability (>= 0), there."""
    ability_curvature_half: np.ndarray
    """(n_workers,): the same at half of each ability, ``alpha_j / 2``."""
    ability_curvature_zero: np.ndarray
    """(n_workers,): the same at ability 0, ``sum_v beta_i**2 / 4``: its largest value."""


def glad_block_statistics(layout, abilities, log_betas, log_class_priors, *, prior_scale=1.0,
                          resp=None, log_task_priors=None):
    """GLAD E-step of a block fused with the M-step of its tasks' difficulties.

    Model (Whitehill et al., 2009, multiclass form): worker ``j`` answers task
    ``i`` correctly with probability ``s_v = sigmoid(alpha_j * beta_i)`` and
    otherwise picks one of the ``K - 1`` wrong classes uniformly. The E-step
    gives the posteriors and, for each vote ``v``, the posterior ``q_v`` that
    it is correct. The expected complete log-likelihood is then, up to terms
    without parameters, ``Q = sum_v q_v log s_v + (1 - q_v) log(1 - s_v)``.

    Difficulties: each task's ``b_i = log(beta_i)`` takes the M-step of
    ``Q_i(b) = sum over the task's votes of those terms - b**2 / (2
    prior_scale**2)`` (its Gaussian prior) with the abilities held fixed: from
    the given ``b_i``, one safeguarded Newton step (Newton where ``Q_i`` is
    concave, a gradient step scaled by the expected curvature elsewhere, of
    at most 1), halved until ``Q_i`` does not decrease, so that ``Q_i`` never
    falls; ``b`` stays in ``[-20, 20]``. ``Q_i`` is not concave in ``b`` and
    couples the task's votes only, so the search is per task. A step is kept
    when a lower bound of the gain, from the derivative at its end (no log),
    is not negative, else when ``Q_i`` itself does not fall: the bound
    decides almost every step, so the search costs about one pass over the
    votes without a log.

    Abilities: at the next difficulties, ``Q`` is concave in each ``alpha_j``
    with ``dQ/dalpha_j = sum_v (q_v - s_v) beta_i`` and ``-d2Q/dalpha_j2 =
    sum_v s_v (1 - s_v) beta_i**2``. ``s (1 - s)`` is largest at 0 and falls
    with ``|alpha_j beta_i|``, so the curvature grows as ``alpha_j`` moves
    toward 0: it is returned at ``alpha_j``, at ``alpha_j / 2`` and at 0 (its
    largest value), bounds of the curvature along a step of the ability that
    the M-step uses to never decrease ``Q``.

    Parameters
    ----------
    layout : BlockLayout
    abilities : ndarray of shape (n_workers,)
        ``alpha_j``.
    log_betas : ndarray of shape (n_tasks,)
        ``b_i = log(beta_i)``; ``1 / beta_i`` is the task's difficulty.
    log_class_priors : ndarray of shape (K,)
    prior_scale : float, default=1.0
        Standard deviation of the Gaussian prior of the log-difficulties.
    resp : ndarray of shape (n_tasks, K), default=None
        Output buffer.
    log_task_priors : ndarray of shape (n_tasks, K), default=None
        Per-task log-priors that replace ``log_class_priors`` for the block's
        tasks (see :func:`ds_e_step`); ``-inf`` rules a class out.

    Returns
    -------
    GLADBlockStatistics

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, glad_block_statistics
    >>> layout = BlockLayout(check_votes(np.array([[0, 0, 1]])))
    >>> st = glad_block_statistics(layout, np.array([1.0, 1.0, 1.0]), np.zeros(1),
    ...                            np.log([0.5, 0.5]))
    >>> st.resp.round(4)
    array([[0.7311, 0.2689]])
    >>> st.log_betas.round(4)  # one step from b = 0: a split task is harder (beta < 1)
    array([-0.2252])
    """
    resp = _out(resp, layout)
    abilities = np.ascontiguousarray(abilities, dtype=np.float64)
    log_betas = np.ascontiguousarray(log_betas, dtype=np.float64)
    log_priors = _log_priors(layout, log_class_priors, log_task_priors)
    task_ll = np.empty(layout.n_tasks)
    if _engine(layout.n_votes) == "numba":
        m_step = _glad_m_step_numba(layout, resp, abilities, log_betas, float(prior_scale),
                                    log_priors, task_ll)
    else:
        inv_var = 1.0 / prior_scale**2
        at_start = _glad_e_step_numpy(layout, abilities, log_betas, log_priors, resp, task_ll,
                                      inv_var)
        m_step = _glad_m_step_numpy(layout, resp, abilities, log_betas, inv_var, at_start)
    return GLADBlockStatistics(resp, task_ll, *m_step)


def glad_gradients(layout, resp, abilities, log_betas, *, prior_scale=1.0):
    """GLAD's difficulty M-step and abilities' statistics for given responsibilities.

    The second half of :func:`glad_block_statistics`, without its E-step:
    used to start EM from initial soft labels.

    Parameters
    ----------
    layout : BlockLayout
    resp : ndarray of shape (n_tasks, K)
        Soft labels of the tasks.
    abilities : ndarray of shape (n_workers,)
    log_betas : ndarray of shape (n_tasks,)
        Log-difficulties the M-step starts from.
    prior_scale : float, default=1.0
        Standard deviation of the Gaussian prior of the log-difficulties.

    Returns
    -------
    log_betas, difficulty_curvature : ndarray of shape (n_tasks,)
    ability_gradient, ability_curvature, ability_curvature_half, ability_curvature_zero : \
ndarray of shape (n_workers,)
        As in :class:`GLADBlockStatistics`.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, glad_gradients
    >>> layout = BlockLayout(check_votes(np.array([[0, 1]])))
    >>> log_betas, _, grad_a, *_ = glad_gradients(layout, np.array([[1.0, 0.0]]), np.zeros(2),
    ...                                           np.zeros(1))
    >>> grad_a, log_betas  # worker 0 was right (q=1), worker 1 wrong (q=0); sigmoid(0) = 0.5
    (array([ 0.5, -0.5]), array([0.]))
    """
    resp = np.ascontiguousarray(resp, dtype=np.float64)
    abilities = np.ascontiguousarray(abilities, dtype=np.float64)
    log_betas = np.ascontiguousarray(log_betas, dtype=np.float64)
    if _engine(layout.n_votes) == "numba":
        return _glad_m_step_numba(layout, resp, abilities, log_betas, float(prior_scale))
    inv_var = 1.0 / prior_scale**2
    q = resp[layout.task, layout.label]
    at_start = _glad_q_derivatives(_glad_q_votes_numpy(layout, q, abilities, log_betas),
                                   *_glad_q_slope_numpy(layout, q, abilities, log_betas),
                                   inv_var, log_betas)
    return _glad_m_step_numpy(layout, resp, abilities, log_betas, inv_var, at_start)


def _glad_m_step_numba(layout, resp, abilities, log_betas, prior_scale, log_priors=None,
                       task_ll=None):
    """The numba pass of :func:`glad_block_statistics` (E-step first when ``log_priors`` is
    given) or of :func:`glad_gradients`: the fields after ``task_log_likelihood``."""
    e_step = log_priors is not None
    if not e_step:  # placeholders the kernel does not read
        log_priors, task_ll = np.zeros((1, layout.n_classes)), np.empty(0)
    indptr, position, _, _ = layout.worker_order
    per_vote = layout.scratch("glad_per_vote", (layout.n_votes, 4))  # a vote's 4 together
    next_b = np.empty(layout.n_tasks)
    curv_b = np.empty(layout.n_tasks)
    worker_sums = np.empty((4, layout.n_workers))
    parallel = _parallel(layout.n_votes)
    (_glad_block_parallel if parallel else _glad_block_serial)(
        layout.task_indptr, layout.worker, layout.label, position, abilities, log_betas,
        log_priors, 1.0 / prior_scale**2, e_step, resp, task_ll, next_b, curv_b, per_vote,
    )
    (_glad_worker_sums_parallel if parallel else _glad_worker_sums_serial)(
        indptr, per_vote, worker_sums)
    return (next_b, curv_b, *worker_sums)


def _sigmoid_terms(z):
    """``log sigmoid(z)``, ``log sigmoid(-z)``, ``sigmoid(z)``, ``sigmoid(z) sigmoid(-z)``.

    From one ``exp(-|z|)`` and one ``log1p``: no overflow for any ``z``.
    """
    e = np.exp(-np.abs(z))
    tail = np.log1p(e)
    neg = np.minimum(z, 0.0)
    inv = 1.0 / (1.0 + e)
    return neg - tail, neg - z - tail, np.where(z >= 0, inv, e * inv), e * inv * inv


def _glad_vote_terms(layout, abilities, log_betas):
    """Per vote: ``z = alpha_j beta_i`` and its :func:`_sigmoid_terms`."""
    z = abilities[layout.worker] * np.exp(log_betas)[layout.task]
    return (z, *_sigmoid_terms(z))


def _glad_logits(layout, log_right, log_not_right, log_priors, logits):
    """logits[i, k] = log P(true class k) + sum over task i's votes of log P(vote | k)
    (``log_priors``: ``(1, K)`` or ``(n_tasks, K)``)."""
    K = layout.n_classes
    log_wrong = log_not_right - np.log(max(K - 1, 1))
    logits[:] = np.bincount(
        layout.task.astype(np.int64) * K + layout.label, weights=log_right - log_wrong,
        minlength=layout.n_tasks * K,
    ).reshape(layout.n_tasks, K)
    logits += np.bincount(layout.task, weights=log_wrong, minlength=layout.n_tasks)[:, None]
    logits += log_priors


def _glad_e_step_numpy(layout, abilities, log_betas, log_priors, resp, task_ll, inv_var):
    """E-step, then each task's ``Q_i`` at its log-difficulty and its derivatives (as
    :func:`_glad_q_derivatives`) from the same per-vote terms, through the per-class sums of
    ``z``: ``q`` is known only after the log-sum-exp."""
    z, log_right, log_not_right, sig, var = _glad_vote_terms(layout, abilities, log_betas)
    _glad_logits(layout, log_right, log_not_right, log_priors, resp)
    _normalize_log_rows(resp, task_ll)
    n, K = layout.n_tasks, layout.n_classes
    class_z = np.bincount(layout.task.astype(np.int64) * K + layout.label, weights=z,
                          minlength=n * K).reshape(n, K)
    qz = (resp * class_z).sum(axis=1)
    return _glad_q_derivatives(
        qz + np.bincount(layout.task, weights=log_not_right, minlength=n),
        qz - np.bincount(layout.task, weights=sig * z, minlength=n),
        np.bincount(layout.task, weights=var * z * z, minlength=n), inv_var, log_betas)


def _glad_q_derivatives(f, slope, fisher, inv_var, b):
    """``(Q_i, dQ_i/db, d2Q_i/db2, expected curvature)`` from the votes' sums ``f = sum_v q_v
    z_v + log(1 - s_v)`` (the votes' part of ``Q_i``: ``q log s + (1 - q) log(1 - s) = q z +
    log(1 - s)``), ``slope = sum_v (q_v - s_v) z_v`` and ``fisher = sum_v s_v (1 - s_v)
    z_v**2`` (``d slope / db = slope - fisher``: ``dz / db = z``), with the prior's terms."""
    return (f - 0.5 * inv_var * b * b, slope - inv_var * b, slope - fisher - inv_var, fisher)


def _glad_q_votes_numpy(layout, q, abilities, log_betas, tasks=None):
    """The votes' part of each task's ``Q_i`` at ``b = log_betas`` (``q``: per vote), for the
    ``tasks`` of a mask only (0 elsewhere)."""
    keep = slice(None) if tasks is None else tasks[layout.task]
    task = layout.task[keep]
    z = abilities[layout.worker[keep]] * np.exp(log_betas)[task]
    log_not_right = _sigmoid_terms(z)[1]
    return np.bincount(task, weights=q[keep] * z + log_not_right, minlength=layout.n_tasks)


def _glad_q_slope_numpy(layout, q, abilities, log_betas):
    """``slope`` and ``fisher`` of :func:`_glad_q_derivatives` at ``b = log_betas``: no log."""
    z = abilities[layout.worker] * np.exp(log_betas)[layout.task]
    e = np.exp(-np.abs(z))
    inv = 1.0 / (1.0 + e)
    n = layout.n_tasks
    return (np.bincount(layout.task, weights=(q - np.where(z >= 0, inv, e * inv)) * z,
                        minlength=n),
            np.bincount(layout.task, weights=e * inv * inv * z * z, minlength=n))


def _glad_m_step_numpy(layout, resp, abilities, log_betas, inv_var, at_start):
    """The difficulties' M-step on all the tasks at once, from ``at_start`` (``Q_i`` and its
    derivatives at ``log_betas``), then the abilities' statistics."""
    q = resp[layout.task, layout.label]
    log_betas = log_betas.copy()
    f, grad, hess, fisher = at_start
    n = layout.n_tasks
    scale = np.ones(n)
    active = np.ones(n, dtype=bool)
    for _ in range(_NEWTON_MAX_EVALS):
        step = np.where(active, _newton_proposal(grad, hess, fisher + inv_var, scale), 0.0)
        active &= np.abs(step) >= _NEWTON_STEP_TOL
        if not active.any():
            break
        trial = np.where(active, np.clip(log_betas + step, -LOG_BETA_BOUND, LOG_BETA_BOUND),
                         log_betas)
        slope, fisher_t = _glad_q_slope_numpy(layout, q, abilities, trial)
        accept = active & (_glad_gain_bound(log_betas, trial, slope, inv_var) >= 0)
        check = active & ~accept
        if check.any():
            f_t = (_glad_q_votes_numpy(layout, q, abilities, trial, check)
                   - 0.5 * inv_var * trial * trial)
            accept |= check & (f_t >= f)
        log_betas[accept] = trial[accept]
        fisher[accept] = fisher_t[accept]
        active &= ~accept
        scale *= 0.5
        active &= scale >= _NEWTON_MIN_SCALE
    beta = np.exp(log_betas)[layout.task]
    z = abilities[layout.worker] * beta
    e = np.exp(-np.abs(z))
    inv = 1.0 / (1.0 + e)
    root = np.sqrt(e)  # exp(-|z| / 2), of sigmoid(z / 2)
    inv_root = 1.0 / (1.0 + root)
    beta2 = beta * beta
    W = layout.n_workers
    return (
        log_betas,
        fisher,
        np.bincount(layout.worker, weights=(q - np.where(z >= 0, inv, e * inv)) * beta,
                    minlength=W),
        np.bincount(layout.worker, weights=e * inv * inv * beta2, minlength=W),
        np.bincount(layout.worker, weights=root * inv_root * inv_root * beta2, minlength=W),
        np.bincount(layout.worker, weights=0.25 * beta2, minlength=W),
    )


def _glad_gain_bound(b, trial, slope, inv_var):
    """A lower bound of ``Q_i(trial) - Q_i(b)`` from ``slope`` at ``trial`` (as in
    :func:`_glad_q_derivatives`), without a log: each vote's ``q z + log(1 - s)`` changes by
    ``(q - s(z')) (z' - z)`` or more from ``z`` to ``z'`` (its derivative ``q - s`` falls as
    ``z`` grows), and ``z = z' e**(b - trial)``. Works on scalars and arrays."""
    return -np.expm1(b - trial) * slope - 0.5 * inv_var * (trial - b) * (trial + b)


def glad_task_difficulties(layout, abilities, log_class_priors, *, prior_scale=1.0, resp=None,
                           log_task_priors=None):
    """MAP difficulty of every task of a block for fixed workers, and posteriors.

    For each task, maximizes over ``b = log(beta)``
    ``f(b) = log p(votes of task | abilities, class priors, beta=e**b) - b**2 / (2 prior_scale**2)``
    (a Gaussian prior on ``log(beta)`` centred on ``beta = 1``) with a
    safeguarded Newton search started at ``b = 0``: Newton steps where ``f``
    is concave, curvature-scaled gradient steps elsewhere, steps of at most 1,
    halved until ``f`` does not decrease; ``b`` stays in ``[-20, 20]``. Each
    task is solved independently, so the result of a task does not depend on
    the other tasks of the block.

    Parameters
    ----------
    layout : BlockLayout
    abilities : ndarray of shape (n_workers,)
    log_class_priors : ndarray of shape (K,)
    prior_scale : float, default=1.0
        Standard deviation of the Gaussian prior on ``log(beta)``.
    resp : ndarray of shape (n_tasks, K), default=None
        Output buffer.
    log_task_priors : ndarray of shape (n_tasks, K), default=None
        Per-task log-priors that replace ``log_class_priors`` for the block's
        tasks (see :func:`ds_e_step`); ``-inf`` rules a class out.

    Returns
    -------
    resp : ndarray of shape (n_tasks, K)
        Posteriors at the MAP difficulties.
    log_betas : ndarray of shape (n_tasks,)
        MAP ``log(beta_i)`` (0 for a task without votes).
    task_log_likelihood : ndarray of shape (n_tasks,)
        ``log p(votes of task i)`` at the MAP difficulty.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, glad_task_difficulties
    >>> layout = BlockLayout(check_votes(np.array([[0, 0, 0], [0, 1, -1]])))
    >>> resp, log_betas, ll = glad_task_difficulties(layout, np.ones(3), np.log([0.5, 0.5]))
    >>> log_betas.round(3)  # unanimous: easier (larger beta); split: harder
    array([ 0.698, -0.275])
    """
    resp = _out(resp, layout)
    abilities = np.ascontiguousarray(abilities, dtype=np.float64)
    log_priors = _log_priors(layout, log_class_priors, log_task_priors)
    log_betas = np.zeros(layout.n_tasks)
    task_ll = np.empty(layout.n_tasks)
    if _engine(layout.n_votes) == "numba":
        parallel = _parallel(layout.n_votes)
        kernel = _glad_difficulties_parallel if parallel else _glad_difficulties_serial
        kernel(layout.task_indptr, layout.worker, layout.label, abilities, log_priors,
               float(prior_scale), resp, log_betas, task_ll)
    else:
        _glad_difficulties_numpy(layout, abilities, log_priors, float(prior_scale), resp,
                                 log_betas, task_ll)
    return resp, log_betas, task_ll


def _newton_proposal(grad, hess, fisher, scale):
    """Safeguarded Newton step on a maximization problem (vectorized)."""
    step = np.where(hess < 0, -grad / np.where(hess < 0, hess, -1.0), grad / fisher)
    return np.clip(step, -1.0, 1.0) * scale


def _glad_profile_numpy(layout, abilities, log_priors, prior_scale, log_betas, logits, task_ll):
    """Objective, gradient, curvature and Fisher curvature of every task's f(b)."""
    K = layout.n_classes
    z, log_right, log_not_right, sig, var = _glad_vote_terms(layout, abilities, log_betas)
    _glad_logits(layout, log_right, log_not_right, log_priors, logits)
    _normalize_log_rows(logits, task_ll)
    n = layout.n_tasks
    S = np.bincount(layout.task, weights=sig * z, minlength=n)
    U = np.bincount(layout.task, weights=var * z * z, minlength=n)
    T = np.bincount(layout.task.astype(np.int64) * K + layout.label, weights=z,
                    minlength=n * K).reshape(n, K)
    ET = (logits * T).sum(axis=1)
    ET2 = (logits * T * T).sum(axis=1)
    inv_var = 1.0 / prior_scale**2
    f = task_ll - 0.5 * inv_var * log_betas**2
    grad = ET - S - inv_var * log_betas
    hess = ET - S - U + ET2 - ET * ET - inv_var
    return f, grad, hess, U + inv_var


def _glad_difficulties_numpy(layout, abilities, log_priors, prior_scale, resp, log_betas,
                             task_ll):
    n = layout.n_tasks
    f, grad, hess, fisher = _glad_profile_numpy(
        layout, abilities, log_priors, prior_scale, log_betas, resp, task_ll
    )
    scale = np.ones(n)
    active = np.ones(n, dtype=bool)
    trial_resp = np.empty_like(resp)
    trial_ll = np.empty(n)
    for _ in range(_NEWTON_MAX_EVALS):
        step = np.where(active, _newton_proposal(grad, hess, fisher, scale), 0.0)
        active &= np.abs(step) >= _NEWTON_STEP_TOL
        if not active.any():
            break
        trial = np.where(active, np.clip(log_betas + step, -LOG_BETA_BOUND, LOG_BETA_BOUND),
                         log_betas)
        f_t, g_t, h_t, fi_t = _glad_profile_numpy(
            layout, abilities, log_priors, prior_scale, trial, trial_resp, trial_ll
        )
        accept = active & (f_t >= f - 1e-12 * (1.0 + np.abs(f)))
        log_betas[accept] = trial[accept]
        f[accept], grad[accept], hess[accept], fisher[accept] = (
            f_t[accept], g_t[accept], h_t[accept], fi_t[accept]
        )
        resp[accept] = trial_resp[accept]
        task_ll[accept] = trial_ll[accept]
        scale = np.where(accept, 1.0, scale * 0.5)
        active &= scale >= _NEWTON_MIN_SCALE


# ---------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------


if numba is not None:
    from ._common import _softmax_row, prange

    @_jit(parallel=False)
    def _sigmoid_moments(e, z):
        """sigmoid(z) and sigmoid(z) sigmoid(-z) from e = exp(-|z|)."""
        inv = 1.0 / (1.0 + e)
        return (inv if z >= 0 else e * inv), e * inv * inv

    @_jit(parallel=False)
    def _sigmoid_terms_scalar(z):
        """The scalar :func:`_sigmoid_terms`."""
        e = np.exp(-abs(z))
        tail = np.log1p(e)
        neg = min(z, 0.0)
        sig, var = _sigmoid_moments(e, z)
        return neg - tail, neg - z - tail, sig, var

    # the numpy helpers on scalars, compiled: the same formulas in both engines
    _glad_q_derivatives_scalar = _jit(_glad_q_derivatives, parallel=False)
    _glad_gain_bound_scalar = _jit(_glad_gain_bound, parallel=False)

    @_jit(parallel=False)
    def _glad_task_e_step(i, indptr, worker, label, abilities, log_betas, log_prior, inv_var,
                          resp, task_ll, class_z):
        """Posterior of task i and its log-likelihood, then its ``Q_i`` at its log-difficulty
        and derivatives (as :func:`_glad_e_step_numpy`); ``log_prior``: ``(1, K)`` or
        ``(n_tasks, K)`` (row ``i``: task ``i``'s); ``class_z``: scratch of size ``K``."""
        K = log_prior.shape[1]
        log_km1 = np.log(max(K - 1, 1))
        row = resp[i]
        row[:] = 0.0
        class_z[:] = 0.0
        b = log_betas[i]
        beta = np.exp(b)
        wrong_total = 0.0
        not_right = 0.0
        sz = 0.0
        fisher = 0.0
        for v in range(indptr[i], indptr[i + 1]):
            z = abilities[worker[v]] * beta
            lr, lnr, sig, var = _sigmoid_terms_scalar(z)
            lw = lnr - log_km1
            row[label[v]] += lr - lw
            wrong_total += lw
            class_z[label[v]] += z
            not_right += lnr
            sz += sig * z
            fisher += var * z * z
        prior = log_prior[np.int64(i) if log_prior.shape[0] > 1 else np.int64(0)]
        task_ll[i] = _softmax_row(row, prior, wrong_total)
        qz = 0.0
        for k in range(K):
            qz += row[k] * class_z[k]
        return _glad_q_derivatives_scalar(qz + not_right, qz - sz, fisher, inv_var, b)

    @_jit(parallel=False)
    def _glad_q_votes(start, stop, worker, label, abilities, row, b):
        """The scalar :func:`_glad_q_votes_numpy` of the task whose votes are start..stop-1
        and whose posterior is ``row``."""
        beta = np.exp(b)
        f = 0.0
        for v in range(start, stop):
            z = abilities[worker[v]] * beta
            f += row[label[v]] * z + _sigmoid_terms_scalar(z)[1]
        return f

    @_jit(parallel=False)
    def _glad_q_slope(start, stop, worker, label, position, abilities, row, b, per_vote):
        """The scalar :func:`_glad_q_slope_numpy` of the task whose votes are start..stop-1 and
        whose posterior is ``row``, and its votes' pieces of the abilities' statistics at
        ``b`` (as :func:`_glad_m_step_numpy`), written at their positions in worker order."""
        beta = np.exp(b)
        beta2 = beta * beta
        slope = 0.0
        fisher = 0.0
        for v in range(start, stop):
            z = abilities[worker[v]] * beta
            e = np.exp(-abs(z))
            sig, var = _sigmoid_moments(e, z)
            q = row[label[v]]
            slope += (q - sig) * z
            fisher += var * z * z
            root = np.sqrt(e)  # exp(-|z| / 2), of sigmoid(z / 2)
            inv_root = 1.0 / (1.0 + root)
            p = position[v]
            per_vote[p, 0] = (q - sig) * beta
            per_vote[p, 1] = var * beta2
            per_vote[p, 2] = root * inv_root * inv_root * beta2
            per_vote[p, 3] = 0.25 * beta2
        return slope, fisher

    @_jit(parallel=False)
    def _glad_task_m_step(i, indptr, worker, label, position, abilities, log_betas, inv_var,
                          row, at_start, written, next_b, curv_b, per_vote):
        """The M-step of task i's log-difficulty for its posterior ``row`` (as
        :func:`_glad_m_step_numpy`), from ``at_start`` (``Q_i`` and its derivatives at
        ``log_betas[i]``); its votes' pieces of the abilities' statistics at the result end in
        ``per_vote`` (``written``: they are there already for ``log_betas[i]``)."""
        start, stop = indptr[i], indptr[i + 1]
        b = log_betas[i]
        f, g, h, fisher = at_start
        scale = 1.0
        for _ in range(_NEWTON_MAX_EVALS):
            step = -g / h if h < 0 else g / (fisher + inv_var)
            step = min(max(step, -1.0), 1.0) * scale
            if abs(step) < _NEWTON_STEP_TOL:
                break
            trial = min(max(b + step, -LOG_BETA_BOUND), LOG_BETA_BOUND)
            slope, fisher_t = _glad_q_slope(start, stop, worker, label, position, abilities,
                                            row, trial, per_vote)
            written = True  # per_vote holds the trial's pieces
            if (_glad_gain_bound_scalar(b, trial, slope, inv_var) >= 0
                    or _glad_q_votes(start, stop, worker, label, abilities, row, trial)
                    - 0.5 * inv_var * trial * trial >= f):
                b, fisher = trial, fisher_t
                break
            written = False
            scale *= 0.5
            if scale < _NEWTON_MIN_SCALE:
                break
        if not written:
            _glad_q_slope(start, stop, worker, label, position, abilities, row, b, per_vote)
        next_b[i] = b
        curv_b[i] = fisher

    @_jit(parallel=False)
    def _glad_block_chunk(first, stop, indptr, worker, label, position, abilities, log_betas,
                          log_prior, inv_var, e_step, resp, task_ll, next_b, curv_b, per_vote):
        """Tasks first..stop-1: E-step (if ``e_step``) and M-step of their difficulties."""
        class_z = np.empty(resp.shape[1])
        for i in range(first, stop):
            if e_step:
                at_start = _glad_task_e_step(i, indptr, worker, label, abilities, log_betas,
                                             log_prior, inv_var, resp, task_ll, class_z)
            else:
                start, end, b = indptr[i], indptr[i + 1], log_betas[i]
                slope, fisher = _glad_q_slope(start, end, worker, label, position, abilities,
                                              resp[i], b, per_vote)
                at_start = _glad_q_derivatives_scalar(
                    _glad_q_votes(start, end, worker, label, abilities, resp[i], b), slope,
                    fisher, inv_var, b)
            _glad_task_m_step(i, indptr, worker, label, position, abilities, log_betas,
                              inv_var, resp[i], at_start, not e_step, next_b, curv_b, per_vote)

    @_jit(parallel=False)
    def _glad_block_serial(indptr, worker, label, position, abilities, log_betas, log_prior,
                           inv_var, e_step, resp, task_ll, next_b, curv_b, per_vote):
        _glad_block_chunk(0, indptr.shape[0] - 1, indptr, worker, label, position, abilities,
                          log_betas, log_prior, inv_var, e_step, resp, task_ll, next_b, curv_b,
                          per_vote)

    @_jit
    def _glad_block_parallel(indptr, worker, label, position, abilities, log_betas, log_prior,
                             inv_var, e_step, resp, task_ll, next_b, curv_b, per_vote):
        n = indptr.shape[0] - 1
        n_chunks = min(n, 256)
        for c in prange(n_chunks):
            _glad_block_chunk(c * n // n_chunks, (c + 1) * n // n_chunks, indptr, worker,
                              label, position, abilities, log_betas, log_prior, inv_var, e_step,
                              resp, task_ll, next_b, curv_b, per_vote)

    @_jit(parallel=False)
    def _glad_worker_sum(values, start, stop, out, j):
        """out[:, j] <- sums of the rows start..stop-1 of values (its 4 columns)."""
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for p in range(start, stop):
            s0 += values[p, 0]
            s1 += values[p, 1]
            s2 += values[p, 2]
            s3 += values[p, 3]
        out[0, j] = s0
        out[1, j] = s1
        out[2, j] = s2
        out[3, j] = s3

    @_jit(parallel=False)
    def _glad_worker_sums_serial(indptr, values, out):
        for j in range(indptr.shape[0] - 1):
            _glad_worker_sum(values, indptr[j], indptr[j + 1], out, j)

    @_jit
    def _glad_worker_sums_parallel(indptr, values, out):
        for j in prange(indptr.shape[0] - 1):
            _glad_worker_sum(values, indptr[j], indptr[j + 1], out, j)

    @_jit(parallel=False)
    def _glad_profile_task(start, stop, worker, label, abilities, log_prior, inv_var, log_km1,
                           b, row, scratch):
        """f, f', f'' and Fisher curvature at b for one task; row <- posterior."""
        K = row.shape[0]
        beta = np.exp(b)
        row[:] = 0.0
        scratch[:] = 0.0  # T_k = sum of z over votes for class k
        wrong_total = 0.0
        S = 0.0
        U = 0.0
        for v in range(start, stop):
            z = abilities[worker[v]] * beta
            lr, lw, sig, var = _sigmoid_terms_scalar(z)
            S += sig * z
            U += var * z * z
            lw -= log_km1
            row[label[v]] += lr - lw
            wrong_total += lw
            scratch[label[v]] += z
        ll = _softmax_row(row, log_prior, wrong_total)
        ET = 0.0
        ET2 = 0.0
        for k in range(K):
            ET += row[k] * scratch[k]
            ET2 += row[k] * scratch[k] * scratch[k]
        f = ll - 0.5 * inv_var * b * b
        grad = ET - S - inv_var * b
        hess = ET - S - U + ET2 - ET * ET - inv_var
        return f, grad, hess, U + inv_var, ll

    @_jit(parallel=False)
    def _glad_difficulties_chunk(first, stop, indptr, worker, label, abilities, log_prior,
                                 prior_scale, resp, log_betas, task_ll):
        """Safeguarded Newton search of the MAP log(beta) of tasks first..stop-1
        (``log_prior``: ``(1, K)`` or ``(n_tasks, K)``)."""
        K = log_prior.shape[1]
        inv_var = 1.0 / (prior_scale * prior_scale)
        log_km1 = np.log(max(K - 1, 1))
        scratch = np.empty(K)
        trial_row = np.empty(K)
        for i in range(first, stop):
            start, end = indptr[i], indptr[i + 1]
            row = resp[i]
            prior = log_prior[np.int64(i) if log_prior.shape[0] > 1 else np.int64(0)]
            b = 0.0
            f, g, h, fi, ll = _glad_profile_task(start, end, worker, label, abilities, prior,
                                                 inv_var, log_km1, b, row, scratch)
            scale = 1.0
            for _ in range(_NEWTON_MAX_EVALS):
                step = -g / h if h < 0 else g / fi
                step = min(max(step, -1.0), 1.0) * scale
                if abs(step) < _NEWTON_STEP_TOL:
                    break
                trial = min(max(b + step, -LOG_BETA_BOUND), LOG_BETA_BOUND)
                f_t, g_t, h_t, fi_t, ll_t = _glad_profile_task(
                    start, end, worker, label, abilities, prior, inv_var, log_km1, trial,
                    trial_row, scratch)
                if f_t >= f - 1e-12 * (1.0 + abs(f)):
                    b, f, g, h, fi, ll = trial, f_t, g_t, h_t, fi_t, ll_t
                    row[:] = trial_row
                    scale = 1.0
                else:
                    scale *= 0.5
                    if scale < _NEWTON_MIN_SCALE:
                        break
            log_betas[i] = b
            task_ll[i] = ll

    @_jit(parallel=False)
    def _glad_difficulties_serial(indptr, worker, label, abilities, log_prior, prior_scale,
                                  resp, log_betas, task_ll):
        _glad_difficulties_chunk(0, indptr.shape[0] - 1, indptr, worker, label, abilities,
                                 log_prior, prior_scale, resp, log_betas, task_ll)

    @_jit
    def _glad_difficulties_parallel(indptr, worker, label, abilities, log_prior, prior_scale,
                                    resp, log_betas, task_ll):
        n = indptr.shape[0] - 1
        n_chunks = min(n, 256)
        for c in prange(n_chunks):
            _glad_difficulties_chunk(c * n // n_chunks, (c + 1) * n // n_chunks, indptr, worker,
                                     label, abilities, log_prior, prior_scale, resp, log_betas,
                                     task_ll)
