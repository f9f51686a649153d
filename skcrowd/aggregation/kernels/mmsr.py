"""M-MSR kernels: the workers' agreement counts, and the trimmed means of one M-MSR half-step.

numpy engine: the co-vote counts are scipy.sparse products (one for all votes, one per class);
the trimmed means sort every row's values (2-D blocks of rows of one padded width, laid out
once per fit, sorted row-wise) and sum the kept ones in order.

numba engine: the co-vote counts in two passes over each worker's tasks (parallel over chunks
of workers, one marker array of ``n_workers`` entries per chunk): the first counts a worker's
neighbours, the second fills its row, sorted by neighbour; the work is ``sum_i d_i^2`` over the
tasks' vote counts ``d_i``, the memory that of the pairs. The trimmed means sort each row in
place and sum it, parallel over rows. Both engines add the kept values in the same (sorted)
order.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ._common import _engine, _jit, _parallel, numba


def worker_agreement(layout):
    """Pairs of workers who voted on common tasks, and how often they agreed.

    Returns
    -------
    indptr : ndarray of shape (n_workers + 1,)
        The pairs of worker ``j`` are ``indptr[j]:indptr[j + 1]`` (CSR, no diagonal).
    neighbour : ndarray of shape (n_pairs,)
        The other worker of each pair (sorted within a row).
    common, agree : ndarray of shape (n_pairs,)
        Number of tasks both voted on; number of those on which they gave the same label.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, worker_agreement
    >>> layout = BlockLayout(check_votes(np.array([[0, 0, 1], [1, 0, -1]])))
    >>> indptr, neighbour, common, agree = worker_agreement(layout)
    >>> indptr, neighbour
    (array([0, 2, 4, 6]), array([1, 2, 0, 2, 0, 1], dtype=int32))
    >>> common, agree  # workers 0 and 1 share both tasks and agree on the first
    (array([2., 1., 2., 1., 1., 1.]), array([1., 0., 1., 0., 0., 0.]))
    """
    T, W = layout.n_tasks, layout.n_workers
    if _engine(layout.n_votes) == "numba":
        worker_indptr, _, worker_task, worker_label = layout.worker_order
        n_chunks = max(min(W, 16), 1)
        n_pairs = np.zeros(W, dtype=np.int64)
        _pair_rows(layout.task_indptr, layout.worker, worker_indptr, worker_task, n_chunks,
                   n_pairs)
        indptr = np.zeros(W + 1, dtype=np.int64)
        np.cumsum(n_pairs, out=indptr[1:])
        neighbour = np.empty(indptr[-1], dtype=layout.worker.dtype)
        common, agree = np.empty(indptr[-1]), np.empty(indptr[-1])
        _pair_counts(layout.task_indptr, layout.worker, layout.label, worker_indptr,
                     worker_task, worker_label, n_chunks, indptr, neighbour, common, agree)
        return indptr, neighbour, common, agree
    task, worker, label = layout.task, layout.worker, layout.label

    def co_votes(mask):
        B = sp.csr_array((np.ones(int(mask.sum())), (task[mask], worker[mask])), shape=(T, W))
        return (B.T @ B).tocoo()

    everything = np.ones(layout.n_votes, dtype=bool)
    common = co_votes(everything)
    agreeing = [co_votes(label == k) for k in range(layout.n_classes)]
    # keys of the pairs, sorted (CSR order); agreeing pairs are a subset of the common ones
    key = common.row.astype(np.int64) * W + common.col
    order = np.argsort(key, kind="stable")
    key, n_common = key[order], common.data[order]
    n_agree = np.zeros(len(key))
    for a in agreeing:  # each holds a pair once
        n_agree[np.searchsorted(key, a.row.astype(np.int64) * W + a.col)] += a.data
    row, col = np.divmod(key, W)
    off = row != col
    indptr = np.zeros(W + 1, dtype=np.int64)
    np.cumsum(np.bincount(row[off], minlength=W), out=indptr[1:])
    return indptr, col[off].astype(layout.worker.dtype), n_common[off], n_agree[off]


def msr_step(indptr, neighbour, X, other, own, trimmed, *, rows=None):
    """One half-step of M-MSR: for every row ``j``, the trimmed mean of ``X[j, i] / other[i]``.

    Around the row's current value ``own[j]``, the ``trimmed[j]`` largest values above it and
    the ``trimmed[j]`` smallest below it are removed (all of them when fewer), and the rest
    averaged; a row left empty keeps ``own[j]``. ``rows``: :func:`msr_rows` of ``indptr``,
    computed once for the many steps of a fit (else at each call).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation.kernels import msr_step
    >>> indptr, neighbour = np.array([0, 4]), np.array([0, 1, 2, 3])
    >>> X = np.array([0.5, 0.6, 0.7, 90.0])  # one corrupted entry
    >>> msr_step(indptr, neighbour, X, np.ones(4), np.array([0.6]), np.array([1]))
    array([0.65])
    >>> msr_step(indptr, neighbour, X, np.ones(4), np.array([0.6]), np.array([0]))
    array([22.95])
    """
    trimmed = np.asarray(trimmed, dtype=np.int64)
    out = np.empty(len(indptr) - 1)
    if _engine() == "numba":
        driver = _msr_parallel if _parallel(len(X)) else _msr_serial
        driver(indptr, neighbour, X, other, own, trimmed, np.empty(len(X)), out)
        return out
    if rows is None:
        rows = msr_rows(indptr)
    values = np.empty(len(X) + 1)
    np.divide(X, other[neighbour], out=values[:-1])
    values[-1] = np.inf  # the value of every padding cell
    out[:] = own  # a row left empty keeps its value
    for row, cell, degree in rows.blocks:
        block = values[cell]
        block.sort(axis=1)
        n_rows, width = block.shape
        a = own[row][:, None]
        below = np.count_nonzero(block < a, axis=1)
        above = np.count_nonzero(block > a, axis=1) - (width - degree)
        low = np.minimum(trimmed[row], below)
        high = degree - np.minimum(trimmed[row], above)
        count = high - low
        kept = count > 0
        if not kept.any():
            continue
        # the kept values, a window of each sorted row, summed in order one after the other
        # (a row sum would add pairwise)
        window = low[:, None] + np.arange(count.max())
        inside = window < high[:, None]
        values_kept = block[np.arange(n_rows)[:, None], np.minimum(window, width - 1)]
        total = np.cumsum(np.where(inside, values_kept, 0.0), axis=1)[:, -1]
        out[row[kept]] = total[kept] / count[kept]
    return out


# rows of up to this many values share one block: fewer, larger blocks (each costs a dozen numpy
# calls per step), the padding cheap to sort
_MIN_WIDTH = 32


class MSRRows(NamedTuple):
    """:func:`msr_step`'s CSR rows as 2-D blocks (numpy engine): see :func:`msr_rows`."""

    blocks: tuple
    """``(row, cell, degree)`` per padded width: the CSR rows of that width, the position of
    each cell's value among the CSR values (``(len(row), width)``; one past the last value in
    the padding, where :func:`msr_step` puts +inf), and the number of values of each row."""


def msr_rows(indptr):
    """The layout of :func:`msr_step`'s rows for the numpy engine, computed once per fit.

    Rows are sorted as 2-D blocks, one per padded width (the power of two at or above the
    row's length, at least 32, the padding +inf): a row-wise sort of a block is many times
    faster than one ``np.lexsort`` of every value by (row, value) (5 ms against 430 ms for
    2000 rows of 200), and a row's sorted values are the same whatever sorts them. The
    trimmed means are then taken on the sorted blocks. Which value goes to which cell depends
    on ``indptr`` only: placing the values and reading them back took most of a step when it
    was redone at every step (MMSR on 1000 workers of about 1000 neighbours each); so do the
    padding (cells that read a +inf put after the values) and each row's number of values,
    recomputed at every step they cost 3 to 17 % of it (four crowds of the shared data).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation.kernels import msr_rows
    >>> indptr = np.array([0, 3, 3, 4, 44])  # rows of 3, 0, 1 and 40 values
    >>> for row, cell, degree in msr_rows(indptr).blocks:
    ...     print(row, cell.shape, cell[:, :4].tolist(), degree)
    [0 2] (2, 32) [[0, 1, 2, 44], [3, 44, 44, 44]] [3 1]
    [3] (1, 64) [[4, 5, 6, 7]] [40]
    """
    degree = np.diff(indptr)
    width = np.zeros(len(degree), dtype=np.int64)
    filled = degree > 0
    width[filled] = np.maximum(1 << np.ceil(np.log2(degree[filled])).astype(np.int64),
                               _MIN_WIDTH)
    blocks = []
    for w in np.unique(width[filled]):
        row = np.flatnonzero(width == w)
        rank = np.arange(w)
        cell = np.where(rank < degree[row][:, None], indptr[row][:, None] + rank, indptr[-1])
        blocks.append((row, cell, degree[row]))
    return MSRRows(tuple(blocks))


if numba is not None:
    prange = numba.prange

    @_jit
    def _pair_rows(task_indptr, worker, worker_indptr, worker_task, n_chunks, n_pairs):
        """n_pairs[j] <- the number of other workers who share a task with worker j."""
        W = worker_indptr.shape[0] - 1
        for c in prange(n_chunks):
            seen = np.full(W, -1, dtype=np.int64)
            for j in range(c * W // n_chunks, (c + 1) * W // n_chunks):
                count = 0
                for p in range(worker_indptr[j], worker_indptr[j + 1]):
                    t = worker_task[p]
                    for v in range(task_indptr[t], task_indptr[t + 1]):
                        i = worker[v]
                        if i != j and seen[i] != j:
                            seen[i] = j
                            count += 1
                n_pairs[j] = count

    @_jit
    def _pair_counts(task_indptr, worker, label, worker_indptr, worker_task, worker_label,
                     n_chunks, indptr, neighbour, common, agree):
        """Row j of the pairs: each neighbour (sorted), the tasks shared, the agreements."""
        W = worker_indptr.shape[0] - 1
        for c in prange(n_chunks):
            slot = np.full(W, -1, dtype=np.int64)
            for j in range(c * W // n_chunks, (c + 1) * W // n_chunks):
                start = indptr[j]
                filled = start
                for p in range(worker_indptr[j], worker_indptr[j + 1]):
                    t = worker_task[p]
                    for v in range(task_indptr[t], task_indptr[t + 1]):
                        i = worker[v]
                        if i != j and slot[i] < start:  # first met in this row
                            slot[i] = filled
                            neighbour[filled] = i
                            filled += 1
                order = np.argsort(neighbour[start:filled])
                for q in range(filled - start):
                    slot[neighbour[start + order[q]]] = start + q
                sorted_row = neighbour[start:filled][order]
                for q in range(filled - start):
                    neighbour[start + q] = sorted_row[q]
                    common[start + q] = 0.0
                    agree[start + q] = 0.0
                for p in range(worker_indptr[j], worker_indptr[j + 1]):
                    t = worker_task[p]
                    for v in range(task_indptr[t], task_indptr[t + 1]):
                        i = worker[v]
                        if i != j:
                            common[slot[i]] += 1.0
                            if label[v] == worker_label[p]:
                                agree[slot[i]] += 1.0

    @_jit(parallel=False, inline="always")
    def _msr_row(j, indptr, neighbour, X, other, own, trimmed, buffer, out):
        start, stop = indptr[j], indptr[j + 1]
        n = stop - start
        if n == 0:
            out[j] = own[j]
            return
        for p in range(start, stop):
            buffer[p] = X[p] / other[neighbour[p]]
        values = buffer[start:stop]
        values.sort()
        a = own[j]
        below = 0
        above = 0
        for p in range(n):
            if values[p] < a:
                below += 1
            elif values[p] > a:
                above += 1
        low = min(trimmed[j], below)
        high = n - min(trimmed[j], above)
        if high <= low:
            out[j] = a
            return
        total = 0.0
        for p in range(low, high):
            total += values[p]
        out[j] = total / (high - low)

    @_jit(parallel=False)
    def _msr_serial(indptr, neighbour, X, other, own, trimmed, buffer, out):
        for j in range(indptr.shape[0] - 1):
            _msr_row(j, indptr, neighbour, X, other, own, trimmed, buffer, out)

    @_jit
    def _msr_parallel(indptr, neighbour, X, other, own, trimmed, buffer, out):
        for j in prange(indptr.shape[0] - 1):
            _msr_row(j, indptr, neighbour, X, other, own, trimmed, buffer, out)
