"""Weighted-vote kernels: the soft labels of a weighted majority vote, and each worker's
agreement with it (Wawa, ZeroBasedSkill, KOS, MMSR).

numpy engine: per-task, per-class sums of the weights with ``np.bincount``.

numba engine: one pass over each task's votes (parallel over tasks, or over chunks of tasks for
the agreement credit); both engines add a task's votes in the same order, so that ties of the
weighted vote are the same ties.
"""

from __future__ import annotations

import numpy as np

from ._common import _engine, _jit, _parallel, numba

SHARES, SOFTMAX = 0, 1  # kinds of soft labels of a weighted vote (weighted_vote_proba)


def weighted_vote_proba(layout, weights, empty_row, *, kind=SHARES):
    """Soft labels of the votes of a block weighted by ``weights[worker]``.

    Parameters
    ----------
    layout : BlockLayout
        Task-sorted votes.
    weights : ndarray of shape (n_workers,)
        Weight of each worker's votes.
    empty_row : ndarray of shape (K,)
        ``kind=SHARES``: the soft label of a task whose votes weigh nothing (or without votes);
        ``kind=SOFTMAX``: the log class priors.
    kind : {SHARES, SOFTMAX}
        ``SHARES``: the share of each class in the task's total absolute weight; a vote of
        weight ``w >= 0`` gives ``w`` to its class, one of weight ``w < 0`` gives ``-w / (K-1)``
        to each other class (a worse-than-random worker's vote is evidence against its class).
        ``SOFTMAX``: ``softmax_k(empty_row[k] + sum of the weights of the votes for k)``, the
        posterior of a one-coin model whose weights are the log-odds
        ``log((K - 1) p_j / (1 - p_j))`` of the workers' accuracies ``p_j``.

    Returns
    -------
    proba : ndarray of shape (n_tasks, K)
    log_norm : ndarray of shape (n_tasks,) or None
        ``kind=SOFTMAX``: the log-sum-exp of each task's scores.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout
    >>> from skcrowd.aggregation.kernels import weighted_vote_proba
    >>> layout = BlockLayout(check_votes(np.array([[0, 1, 1], [-1, -1, -1]])))
    >>> proba, _ = weighted_vote_proba(layout, np.array([3.0, 1.0, 1.0]), np.array([0.5, 0.5]))
    >>> proba
    array([[0.6, 0.4],
           [0.5, 0.5]])
    """
    K = layout.n_classes
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    empty_row = np.ascontiguousarray(empty_row, dtype=np.float64)
    out = np.empty((layout.n_tasks, K))
    log_norm = np.empty(layout.n_tasks)
    if _engine(layout.n_votes) == "numba":
        driver = _vote_rows_parallel if _parallel(layout.n_votes) else _vote_rows_serial
        driver(layout.task_indptr, layout.worker, layout.label, weights, empty_row, out,
               log_norm, kind)
        return out, (log_norm if kind == SOFTMAX else None)
    task = layout.task.astype(np.int64)
    w = weights[layout.worker]
    flat = out.reshape(-1)
    if kind == SOFTMAX:
        flat[:] = np.bincount(task * K + layout.label, weights=w, minlength=out.size)
        out += empty_row
        top = out.max(axis=1, keepdims=True)
        np.exp(out - top, out=out)
        total = out.sum(axis=1, keepdims=True)
        out /= total
        return out, np.log(total[:, 0]) + top[:, 0]
    flat[:] = np.bincount(task * K + layout.label, weights=np.maximum(w, 0.0),
                          minlength=out.size)
    if (w < 0).any() and K > 1:
        against = np.maximum(-w, 0.0)
        per_class = np.bincount(task * K + layout.label, weights=against, minlength=out.size)
        per_task = np.bincount(task, weights=against, minlength=layout.n_tasks)
        out += (per_task[:, None] - per_class.reshape(out.shape)) / (K - 1)
    total = out.sum(axis=1, keepdims=True)
    np.divide(out, total, out=out, where=total > 0)
    out[total[:, 0] <= 0] = empty_row
    return out, None


def agreement_credit(layout, weights):
    """Each worker's summed agreement with the weighted vote of the tasks it voted on.

    A vote gets credit ``1/t`` when its label is one of the ``t`` voted classes with the largest
    summed weight of the task (all voted classes tie when every vote weighs 0), else 0: the
    expected agreement with a uniform pick among tied classes.

    Parameters
    ----------
    layout : BlockLayout
        Task-sorted votes.
    weights : ndarray of shape (n_workers,)
        Non-negative weight of each worker's votes (ones: majority vote).

    Returns
    -------
    credit : ndarray of shape (n_workers,)
        Divide by the workers' vote counts for their agreement rates.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout
    >>> from skcrowd.aggregation.kernels import agreement_credit
    >>> layout = BlockLayout(check_votes(np.array([[0, 0, 1], [0, 1, -1]])))
    >>> agreement_credit(layout, np.ones(3))  # task 1 is a tie: half a point each
    array([1.5, 1.5, 0. ])
    """
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if _engine(layout.n_votes) == "numba":
        credit = np.empty(layout.n_votes)
        K = layout.n_classes
        driver = _credit_parallel if _parallel(layout.n_votes) else _credit_serial
        driver(layout.task_indptr, layout.worker, layout.label, weights, K, credit)
    else:
        K = layout.n_classes
        key = layout.task.astype(np.int64) * K + layout.label
        shape = (layout.n_tasks, K)
        scores = np.bincount(key, weights=weights[layout.worker],
                             minlength=shape[0] * K).reshape(shape)
        voted = np.bincount(key, minlength=shape[0] * K).reshape(shape) > 0
        scores[~voted] = -np.inf
        top = voted & (scores == scores.max(axis=1, keepdims=True))
        credit = top.reshape(-1)[key] / top.sum(axis=1)[layout.task]
    return np.bincount(layout.worker, weights=credit, minlength=layout.n_workers)


if numba is not None:
    prange = numba.prange

    @_jit(parallel=False, inline="always")
    def _task_scores(i, indptr, worker, label, weights, row):
        """row <- the summed weights of each class among task ``i``'s votes."""
        for k in range(row.shape[0]):
            row[k] = 0.0
        for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            row[label[v]] += weights[worker[v]]

    @_jit(parallel=False, inline="always")
    def _vote_row(i, indptr, worker, label, weights, empty_row, out, log_norm, kind):
        K = out.shape[1]
        if kind == SOFTMAX:
            for k in range(K):
                out[i, k] = empty_row[k]
            for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                out[i, label[v]] += weights[worker[v]]
            top = out[i, 0]
            for k in range(1, K):
                top = max(top, out[i, k])
            total = 0.0
            for k in range(K):
                out[i, k] = np.exp(out[i, k] - top)
                total += out[i, k]
            for k in range(K):
                out[i, k] /= total
            log_norm[i] = np.log(total) + top
            return
        for k in range(K):
            out[i, k] = 0.0
        for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            w = weights[worker[v]]
            if w >= 0:
                out[i, label[v]] += w
            elif K > 1:
                share = -w / (K - 1)
                for k in range(K):
                    if k != label[v]:
                        out[i, k] += share
        total = 0.0
        for k in range(K):
            total += out[i, k]
        for k in range(K):
            out[i, k] = out[i, k] / total if total > 0 else empty_row[k]

    @_jit(parallel=False)
    def _vote_rows_serial(indptr, worker, label, weights, empty_row, out, log_norm, kind):
        for i in range(indptr.shape[0] - 1):
            _vote_row(i, indptr, worker, label, weights, empty_row, out, log_norm, kind)

    @_jit
    def _vote_rows_parallel(indptr, worker, label, weights, empty_row, out, log_norm, kind):
        for i in prange(indptr.shape[0] - 1):
            _vote_row(i, indptr, worker, label, weights, empty_row, out, log_norm, kind)

    @_jit(parallel=False, inline="always")
    def _credit_task(i, indptr, worker, label, weights, row, voted, credit):
        """credit[v] of task ``i``'s votes: 1/t if its label is one of the t top voted classes."""
        _task_scores(i, indptr, worker, label, weights, row)
        for k in range(row.shape[0]):
            voted[k] = False
        for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            voted[label[v]] = True
        top = -np.inf
        for k in range(row.shape[0]):
            if voted[k] and row[k] > top:
                top = row[k]
        n_top = 0
        for k in range(row.shape[0]):
            if voted[k] and row[k] == top:
                n_top += 1
        for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            credit[v] = 1.0 / n_top if row[label[v]] == top else 0.0

    @_jit(parallel=False)
    def _credit_serial(indptr, worker, label, weights, K, credit):
        row = np.empty(K)
        voted = np.empty(K, dtype=np.bool_)
        for i in range(indptr.shape[0] - 1):
            _credit_task(i, indptr, worker, label, weights, row, voted, credit)

    @_jit
    def _credit_parallel(indptr, worker, label, weights, K, credit):
        n_tasks = indptr.shape[0] - 1
        n_chunks = min(n_tasks, 64)
        for c in prange(n_chunks):
            row = np.empty(K)
            voted = np.empty(K, dtype=np.bool_)
            for i in range(c * n_tasks // n_chunks, (c + 1) * n_tasks // n_chunks):
                _credit_task(i, indptr, worker, label, weights, row, voted, credit)
