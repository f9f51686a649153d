"""KOS kernels: one iteration of Karger, Oh and Shah's message passing on a block's votes.

Messages live on the votes (one per vote, task order). numpy engine: the task sums and the
worker sums with ``np.bincount``. numba engine: the task pass parallel over tasks, the worker
pass one loop over the votes (a worker's sum is scattered over the whole block).
"""

from __future__ import annotations

import numpy as np

from ._common import _engine, _jit, _parallel, numba


def kos_iteration(layout, sign, y, x):
    """One KOS iteration on the task-sorted votes, in place.

    ``y`` (worker-to-task messages, one per vote) gives the task-to-worker messages ``x``, then
    the new ``y``, rescaled to unit root mean square. Returns the workers' full messages
    divided by the largest absolute one, and the scale divided out (0 when every message
    vanished; ``y`` is then left at 0).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, kos_iteration
    >>> layout = BlockLayout(check_votes(np.array([[1, 1, 1, 0], [0, 0, 0, 1]])))
    >>> sign = 2.0 * layout.label - 1
    >>> y, x = np.ones(8), np.empty(8)
    >>> kos_iteration(layout, sign, y, x)[0]  # worker 3 disagrees on both tasks
    array([ 0.33333333,  0.33333333,  0.33333333, -1.        ])
    """
    if _engine(layout.n_votes) == "numba":
        driver = _kos_tasks_parallel if _parallel(layout.n_votes) else _kos_tasks_serial
        driver(layout.task_indptr, sign, y, x)
        messages = np.zeros(layout.n_workers)
        sum_squares = _kos_workers(layout.worker, sign, x, y, messages)
    else:
        task_sums = np.bincount(layout.task, weights=sign * y, minlength=layout.n_tasks)
        np.subtract(task_sums[layout.task], sign * y, out=x)
        messages = np.bincount(layout.worker, weights=sign * x, minlength=layout.n_workers)
        np.subtract(messages[layout.worker], sign * x, out=y)
        sum_squares = float(np.dot(y, y))
    scale = np.sqrt(sum_squares / max(len(y), 1))
    largest = np.max(np.abs(messages))
    if scale == 0 or largest == 0:
        return messages, 0.0
    y /= scale
    return messages / largest, scale


if numba is not None:
    prange = numba.prange

    @_jit(parallel=False, inline="always")
    def _kos_task(i, indptr, sign, y, x):
        total = 0.0
        for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            total += sign[v] * y[v]
        for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            x[v] = total - sign[v] * y[v]

    @_jit(parallel=False)
    def _kos_tasks_serial(indptr, sign, y, x):
        for i in range(indptr.shape[0] - 1):
            _kos_task(i, indptr, sign, y, x)

    @_jit
    def _kos_tasks_parallel(indptr, sign, y, x):
        for i in prange(indptr.shape[0] - 1):
            _kos_task(i, indptr, sign, y, x)

    @_jit(parallel=False)
    def _kos_workers(worker, sign, x, y, messages):
        """messages <- each worker's full message; y <- its leave-one-out messages; returns
        the sum of squares of y."""
        for v in range(worker.shape[0]):
            messages[worker[v]] += sign[v] * x[v]
        sum_squares = 0.0
        for v in range(worker.shape[0]):
            y[v] = messages[worker[v]] - sign[v] * x[v]
            sum_squares += y[v] * y[v]
        return sum_squares
