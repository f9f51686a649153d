"""GLAD kernels: the E-step of a block fused with the gradient pieces of the M-step, and the
MAP difficulty of each task for fixed workers.

Parameters reach the kernels as the abilities ``alpha_j``, the
log-difficulties ``b_i = log(beta_i)`` and the log class priors.

numpy engine: per-vote arrays summed per task and per worker with
``np.bincount``; the per-task Newton search runs on all the tasks at once.

numba engine: one E-step per task (parallel over tasks), whose per-vote
gradient pieces are written in worker order and summed per worker
(``_segment_sums_*``, parallel over workers); the Newton search of the
difficulties runs task by task, parallel over chunks of tasks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._common import _engine, _jit, _log_priors, _normalize_log_rows, _out, _parallel, numba

# Bounds and stopping rule of the per-task Newton search on log(beta).
LOG_BETA_BOUND = 20.0
_NEWTON_MAX_EVALS = 100
_NEWTON_STEP_TOL = 1e-10
_NEWTON_MIN_SCALE = 2.0**-30


class GLADBlockStatistics(NamedTuple):
    """Result of :func:`glad_block_statistics` for one block."""

    resp: np.ndarray
    """(n_tasks, K): posterior probability of each true class."""
    task_log_likelihood: np.ndarray
    """(n_tasks,): ``log p(votes of task i)``."""
    ability_gradient: np.ndarray
    """(n_workers,): gradient of the expected complete log-likelihood Q in each ability."""
    ability_curvature: np.ndarray
    """(n_workers,): minus the second derivative of Q in each ability (> 0)."""
    difficulty_gradient: np.ndarray
    """(n_tasks,): gradient of Q in each task's log(beta)."""
    difficulty_curvature: np.ndarray
    """(n_tasks,): expected (Fisher) curvature of Q in each task's log(beta) (>= 0)."""


def glad_block_statistics(layout, abilities, log_betas, log_class_priors, *, resp=None,
                          log_task_priors=None):
    """GLAD E-step of a block fused with the gradient pieces of its M-step.

    Model (Whitehill et al., 2009, multiclass form): worker ``j`` answers task
    ``i`` correctly with probability ``sigmoid(alpha_j * beta_i)`` and
    otherwise picks one of the ``K - 1`` wrong classes uniformly. With the
    posteriors ``q_v`` that vote ``v`` is correct and ``s_v =
    sigmoid(alpha_j beta_i)``, the expected complete log-likelihood ``Q`` has

    - ``dQ/dalpha_j = sum_v (q_v - s_v) beta_i``,
      ``-d2Q/dalpha_j2 = sum_v s_v (1 - s_v) beta_i**2``;
    - ``dQ/db_i = sum_v (q_v - s_v) alpha_j beta_i`` with ``b_i = log beta_i``,
      and the expected curvature ``sum_v s_v (1 - s_v) (alpha_j beta_i)**2``.

    Parameters
    ----------
    layout : BlockLayout
    abilities : ndarray of shape (n_workers,)
        ``alpha_j``.
    log_betas : ndarray of shape (n_tasks,)
        ``b_i = log(beta_i)``; ``1 / beta_i`` is the task's difficulty.
    log_class_priors : ndarray of shape (K,)
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
    """
    resp = _out(resp, layout)
    abilities = np.ascontiguousarray(abilities, dtype=np.float64)
    log_betas = np.ascontiguousarray(log_betas, dtype=np.float64)
    log_priors = _log_priors(layout, log_class_priors, log_task_priors)
    task_ll = np.empty(layout.n_tasks)
    grad_b = np.empty(layout.n_tasks)
    curv_b = np.empty(layout.n_tasks)
    if _engine() == "numba":
        indptr, position, _, _ = layout.worker_order
        per_vote = layout.scratch("glad_per_vote", (2, layout.n_votes))
        worker_sums = np.empty((2, layout.n_workers))
        parallel = _parallel(layout.n_votes)
        (_glad_e_step_parallel if parallel else _glad_e_step_serial)(
            layout.task_indptr, layout.worker, layout.label, position, abilities, log_betas,
            log_priors, resp, task_ll, grad_b, curv_b, per_vote,
        )
        (_segment_sums_parallel if parallel else _segment_sums_serial)(
            indptr, per_vote, worker_sums)
        grad_a, curv_a = worker_sums
    else:
        grad_a, curv_a = _glad_e_step_numpy(
            layout, abilities, log_betas, log_priors, resp, task_ll, grad_b, curv_b
        )
    return GLADBlockStatistics(
        resp=resp,
        task_log_likelihood=task_ll,
        ability_gradient=grad_a,
        ability_curvature=curv_a,
        difficulty_gradient=grad_b,
        difficulty_curvature=curv_b,
    )


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


def _glad_e_step_numpy(layout, abilities, log_betas, log_priors, resp, task_ll, grad_b, curv_b):
    z, log_right, log_not_right, sig, var = _glad_vote_terms(layout, abilities, log_betas)
    _glad_logits(layout, log_right, log_not_right, log_priors, resp)
    _normalize_log_rows(resp, task_ll)
    grad_a, curv_a, grad_b[:], curv_b[:] = _glad_gradients_numpy(
        layout, resp, z, sig, var, log_betas
    )
    return grad_a, curv_a


def _glad_gradients_numpy(layout, resp, z, sig, var, log_betas):
    residual = resp[layout.task, layout.label] - sig
    beta = np.exp(log_betas)[layout.task]
    n, W = layout.n_tasks, layout.n_workers
    return (
        np.bincount(layout.worker, weights=residual * beta, minlength=W),
        np.bincount(layout.worker, weights=var * beta * beta, minlength=W),
        np.bincount(layout.task, weights=residual * z, minlength=n),
        np.bincount(layout.task, weights=var * z * z, minlength=n),
    )


def glad_gradients(layout, resp, abilities, log_betas):
    """Gradient pieces of GLAD's M-step for given responsibilities (no E-step).

    Used to start EM from initial soft labels; :func:`glad_block_statistics`
    returns the same pieces for the posteriors of its own E-step.

    Parameters
    ----------
    layout : BlockLayout
    resp : ndarray of shape (n_tasks, K)
        Soft labels of the tasks.
    abilities : ndarray of shape (n_workers,)
    log_betas : ndarray of shape (n_tasks,)

    Returns
    -------
    ability_gradient, ability_curvature : ndarray of shape (n_workers,)
    difficulty_gradient, difficulty_curvature : ndarray of shape (n_tasks,)
        As in :class:`GLADBlockStatistics`.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, glad_gradients
    >>> layout = BlockLayout(check_votes(np.array([[0, 1]])))
    >>> grad_a, _, grad_b, _ = glad_gradients(layout, np.array([[1.0, 0.0]]), np.zeros(2),
    ...                                       np.zeros(1))
    >>> grad_a, grad_b  # worker 0 was right (q=1), worker 1 wrong (q=0); sigmoid(0) = 0.5
    (array([ 0.5, -0.5]), array([0.]))
    """
    z, _, _, sig, var = _glad_vote_terms(layout, abilities, log_betas)
    return _glad_gradients_numpy(layout, resp, z, sig, var, log_betas)


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
    def _glad_task_e_step(i, indptr, worker, label, position, abilities, log_betas, log_prior,
                          resp, task_ll, grad_b, curv_b, per_vote):
        """Posterior of task i, its log-likelihood and gradient pieces (per vote for workers);
        ``log_prior``: ``(1, K)`` or ``(n_tasks, K)`` (row ``i``: task ``i``'s)."""
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
        g = 0.0
        c = 0.0
        for v in range(indptr[i], indptr[i + 1]):
            z = abilities[worker[v]] * beta
            sig, var = _sigmoid_moments(np.exp(-abs(z)), z)
            residual = row[label[v]] - sig
            g += residual * z
            c += var * z * z
            p = position[v]
            per_vote[0, p] = residual * beta
            per_vote[1, p] = var * beta * beta
        grad_b[i] = g
        curv_b[i] = c

    @_jit(parallel=False)
    def _glad_e_step_serial(indptr, worker, label, position, abilities, log_betas, log_prior,
                            resp, task_ll, grad_b, curv_b, per_vote):
        for i in range(indptr.shape[0] - 1):
            _glad_task_e_step(i, indptr, worker, label, position, abilities, log_betas,
                              log_prior, resp, task_ll, grad_b, curv_b, per_vote)

    @_jit
    def _glad_e_step_parallel(indptr, worker, label, position, abilities, log_betas, log_prior,
                              resp, task_ll, grad_b, curv_b, per_vote):
        for i in prange(indptr.shape[0] - 1):
            _glad_task_e_step(i, indptr, worker, label, position, abilities, log_betas,
                              log_prior, resp, task_ll, grad_b, curv_b, per_vote)

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
