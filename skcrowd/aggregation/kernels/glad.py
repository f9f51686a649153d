"""GLAD kernels: the E-step of a block fused with the M-step of its tasks' difficulties and the
statistics of the abilities' M-step, and the MAP difficulty of each task for fixed workers.

Parameters reach the kernels as the abilities ``alpha_j``, the
log-difficulties ``b_i = log(beta_i)`` and the log class priors.

numpy engine: per-vote arrays summed per task and per worker with
``np.bincount``; the per-task searches (the difficulties' M-step, the MAP
difficulties) run on all the tasks at once.

numba engine: one E-step and difficulty step per task (parallel over tasks),
whose per-vote pieces of the abilities' statistics are written in worker
order and summed per worker (``_segment_sums_*``, parallel over workers); the
Newton search of the MAP difficulties runs task by task, parallel over chunks
of tasks.
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
# Accepted steps of the difficulties' M-step per call (per EM iteration).
_DIFFICULTY_STEPS = 1


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
    the given ``b_i``, ``_DIFFICULTY_STEPS`` safeguarded Newton step(s) (Newton
    where ``Q_i`` is concave, a gradient step scaled by the expected curvature
    elsewhere, of at most 1), each halved until ``Q_i`` does not decrease, so
    that ``Q_i`` never falls; ``b`` stays in ``[-20, 20]``. ``Q_i`` is not
    concave in ``b`` and couples the task's votes only, so the search is
    exact and per task.

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
    if _engine() == "numba":
        m_step = _glad_m_step_numba(layout, resp, abilities, log_betas, float(prior_scale),
                                    log_priors, task_ll)
    else:
        _glad_e_step_numpy(layout, abilities, log_betas, log_priors, resp, task_ll)
        m_step = _glad_m_step_numpy(layout, resp, abilities, log_betas, float(prior_scale))
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
    if _engine() == "numba":
        return _glad_m_step_numba(layout, resp, abilities, log_betas, float(prior_scale))
    return _glad_m_step_numpy(layout, resp, abilities, log_betas, float(prior_scale))


def _glad_m_step_numba(layout, resp, abilities, log_betas, prior_scale, log_priors=None,
                       task_ll=None):
    """The numba pass of :func:`glad_block_statistics` (E-step first when ``log_priors`` is
    given) or of :func:`glad_gradients`: the fields after ``task_log_likelihood``."""
    e_step = log_priors is not None
    if not e_step:  # placeholders the kernel does not read
        log_priors, task_ll = np.zeros((1, layout.n_classes)), np.empty(0)
    indptr, position, _, _ = layout.worker_order
    per_vote = layout.scratch("glad_per_vote", (4, layout.n_votes))
    next_b = np.empty(layout.n_tasks)
    curv_b = np.empty(layout.n_tasks)
    worker_sums = np.empty((4, layout.n_workers))
    parallel = _parallel(layout.n_votes)
    (_glad_block_parallel if parallel else _glad_block_serial)(
        layout.task_indptr, layout.worker, layout.label, position, abilities, log_betas,
        log_priors, 1.0 / prior_scale**2, e_step, resp, task_ll, next_b, curv_b, per_vote,
    )
    segment_sums = _segment_sums_parallel if parallel else _segment_sums_serial
    segment_sums(indptr, per_vote[:2], worker_sums[:2])
    segment_sums(indptr, per_vote[2:], worker_sums[2:])
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


def _glad_e_step_numpy(layout, abilities, log_betas, log_priors, resp, task_ll):
    _, log_right, log_not_right, _, _ = _glad_vote_terms(layout, abilities, log_betas)
    _glad_logits(layout, log_right, log_not_right, log_priors, resp)
    _normalize_log_rows(resp, task_ll)


def _glad_q_profile_numpy(layout, q, abilities, inv_var, log_betas):
    """Each task's ``Q_i(b)`` (prior included), its first and second derivatives, and the
    expected curvature of its votes' part, at ``b = log_betas``; ``q``: per vote."""
    z, log_right, log_not_right, sig, var = _glad_vote_terms(layout, abilities, log_betas)
    n = layout.n_tasks
    f = np.bincount(layout.task, weights=q * log_right + (1.0 - q) * log_not_right, minlength=n)
    grad = np.bincount(layout.task, weights=(q - sig) * z, minlength=n)
    fisher = np.bincount(layout.task, weights=var * z * z, minlength=n)
    return (f - 0.5 * inv_var * log_betas * log_betas, grad - inv_var * log_betas,
            grad - fisher - inv_var, fisher)


def _glad_m_step_numpy(layout, resp, abilities, log_betas, prior_scale):
    """The numpy pass of :func:`glad_gradients`: the difficulties' M-step on all the tasks at
    once, then the abilities' statistics."""
    q = resp[layout.task, layout.label]
    inv_var = 1.0 / prior_scale**2
    log_betas = log_betas.copy()
    f, grad, hess, fisher = _glad_q_profile_numpy(layout, q, abilities, inv_var, log_betas)
    n = layout.n_tasks
    scale = np.ones(n)
    steps = np.zeros(n, dtype=np.int64)
    active = np.ones(n, dtype=bool)
    for _ in range(_NEWTON_MAX_EVALS):
        step = np.where(active, _newton_proposal(grad, hess, fisher + inv_var, scale), 0.0)
        active &= np.abs(step) >= _NEWTON_STEP_TOL
        if not active.any():
            break
        trial = np.where(active, np.clip(log_betas + step, -LOG_BETA_BOUND, LOG_BETA_BOUND),
                         log_betas)
        f_t, g_t, h_t, fi_t = _glad_q_profile_numpy(layout, q, abilities, inv_var, trial)
        accept = active & (f_t >= f)
        log_betas[accept] = trial[accept]
        f[accept], grad[accept], hess[accept], fisher[accept] = (
            f_t[accept], g_t[accept], h_t[accept], fi_t[accept]
        )
        steps += accept
        scale = np.where(accept, 1.0, scale * 0.5)
        active &= (scale >= _NEWTON_MIN_SCALE) & (steps < _DIFFICULTY_STEPS)
    beta = np.exp(log_betas)[layout.task]
    z = abilities[layout.worker] * beta
    sig, var = _sigmoid_terms(z)[2:]
    var_half = _sigmoid_terms(0.5 * z)[3]
    beta2 = beta * beta
    W = layout.n_workers
    return (
        log_betas,
        fisher,
        np.bincount(layout.worker, weights=(q - sig) * beta, minlength=W),
        np.bincount(layout.worker, weights=var * beta2, minlength=W),
        np.bincount(layout.worker, weights=var_half * beta2, minlength=W),
        np.bincount(layout.worker, weights=0.25 * beta2, minlength=W),
    )


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
    if _engine() == "numba":
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
    from ._common import _segment_sums_parallel, _segment_sums_serial, _softmax_row, prange

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

    @_jit(parallel=False)
    def _glad_task_e_step(i, indptr, worker, label, abilities, log_betas, log_prior, resp,
                          task_ll):
        """Posterior of task i and its log-likelihood; ``log_prior``: ``(1, K)`` or
        ``(n_tasks, K)`` (row ``i``: task ``i``'s)."""
        K = log_prior.shape[1]
        log_km1 = np.log(max(K - 1, 1))
        row = resp[i]
        row[:] = 0.0
        beta = np.exp(log_betas[i])
        wrong_total = 0.0
        for v in range(indptr[i], indptr[i + 1]):
            lr, lw, _, _ = _sigmoid_terms_scalar(abilities[worker[v]] * beta)
            lw -= log_km1
            row[label[v]] += lr - lw
            wrong_total += lw
        prior = log_prior[np.int64(i) if log_prior.shape[0] > 1 else np.int64(0)]
        task_ll[i] = _softmax_row(row, prior, wrong_total)

    @_jit(parallel=False)
    def _glad_q_profile(start, stop, worker, label, abilities, row, inv_var, b):
        """The scalar :func:`_glad_q_profile_numpy` of the task whose votes are start..stop-1
        and whose posterior is ``row``."""
        beta = np.exp(b)
        f = 0.0
        grad = 0.0
        fisher = 0.0
        for v in range(start, stop):
            z = abilities[worker[v]] * beta
            lr, lnr, sig, var = _sigmoid_terms_scalar(z)
            q = row[label[v]]
            f += q * lr + (1.0 - q) * lnr
            grad += (q - sig) * z
            fisher += var * z * z
        return (f - 0.5 * inv_var * b * b, grad - inv_var * b, grad - fisher - inv_var,
                fisher)

    @_jit(parallel=False)
    def _glad_task_m_step(i, indptr, worker, label, position, abilities, log_betas, inv_var,
                          row, next_b, curv_b, per_vote):
        """The M-step of task i's log-difficulty for its posterior ``row`` (as
        :func:`_glad_m_step_numpy`), then its votes' pieces of the abilities' statistics,
        written at their positions in worker order."""
        start, stop = indptr[i], indptr[i + 1]
        b = log_betas[i]
        f, g, h, fi = _glad_q_profile(start, stop, worker, label, abilities, row, inv_var, b)
        scale = 1.0
        steps = 0
        for _ in range(_NEWTON_MAX_EVALS):
            step = -g / h if h < 0 else g / (fi + inv_var)
            step = min(max(step, -1.0), 1.0) * scale
            if abs(step) < _NEWTON_STEP_TOL:
                break
            trial = min(max(b + step, -LOG_BETA_BOUND), LOG_BETA_BOUND)
            f_t, g_t, h_t, fi_t = _glad_q_profile(start, stop, worker, label, abilities, row,
                                                  inv_var, trial)
            if f_t >= f:
                b, f, g, h, fi = trial, f_t, g_t, h_t, fi_t
                steps += 1
                scale = 1.0
                if steps >= _DIFFICULTY_STEPS:
                    break
            else:
                scale *= 0.5
                if scale < _NEWTON_MIN_SCALE:
                    break
        next_b[i] = b
        curv_b[i] = fi
        beta = np.exp(b)
        beta2 = beta * beta
        for v in range(start, stop):
            z = abilities[worker[v]] * beta
            sig, var = _sigmoid_moments(np.exp(-abs(z)), z)
            half = 0.5 * z
            var_half = _sigmoid_moments(np.exp(-abs(half)), half)[1]
            p = position[v]
            per_vote[0, p] = (row[label[v]] - sig) * beta
            per_vote[1, p] = var * beta2
            per_vote[2, p] = var_half * beta2
            per_vote[3, p] = 0.25 * beta2

    @_jit(parallel=False)
    def _glad_task(i, indptr, worker, label, position, abilities, log_betas, log_prior,
                   inv_var, e_step, resp, task_ll, next_b, curv_b, per_vote):
        if e_step:
            _glad_task_e_step(i, indptr, worker, label, abilities, log_betas, log_prior, resp,
                              task_ll)
        _glad_task_m_step(i, indptr, worker, label, position, abilities, log_betas, inv_var,
                          resp[i], next_b, curv_b, per_vote)

    @_jit(parallel=False)
    def _glad_block_serial(indptr, worker, label, position, abilities, log_betas, log_prior,
                           inv_var, e_step, resp, task_ll, next_b, curv_b, per_vote):
        for i in range(indptr.shape[0] - 1):
            _glad_task(i, indptr, worker, label, position, abilities, log_betas, log_prior,
                       inv_var, e_step, resp, task_ll, next_b, curv_b, per_vote)

    @_jit
    def _glad_block_parallel(indptr, worker, label, position, abilities, log_betas, log_prior,
                             inv_var, e_step, resp, task_ll, next_b, curv_b, per_vote):
        for i in prange(indptr.shape[0] - 1):
            _glad_task(i, indptr, worker, label, position, abilities, log_betas, log_prior,
                       inv_var, e_step, resp, task_ll, next_b, curv_b, per_vote)

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
