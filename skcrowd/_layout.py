"""The index arrays of a block of votes, as the EM kernels read them.

:class:`BlockLayout` is built once per fit from a block's
:class:`~skcrowd.votes.Votes` (task-sorted triplets): the task offsets, the
worker and class index of each vote in compact integer types, the ``(worker,
label)`` cells and their counts, the votes in worker order, the CSR vote
indicator, chunks of whole tasks with equal vote counts, and work arrays kept
between kernel calls. It sits beside :mod:`skcrowd.votes` (it depends on
numpy and scipy only), below the backends that build one per block of votes
and the kernels that read it; its public path is
``skcrowd.aggregation.kernels.BlockLayout``.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp

__all__ = ["BlockLayout"]


class BlockLayout:
    """Index arrays of the votes of a block of tasks, built once per fit.

    Parameters
    ----------
    votes : Votes
        Task-sorted ``(task, worker, label)`` triplets of the block (see
        :func:`skcrowd.check_votes`); ``votes.worker`` indexes the rows of the
        per-worker parameters handed to the kernels.
    n_classes : int, default=None
        Number of classes ``K``; default ``votes.n_classes``.

    Attributes
    ----------
    n_tasks, n_workers, n_classes, n_votes : int
    task_indptr : ndarray of shape (n_tasks + 1,)
        Votes of task ``i`` are ``indptr[i]:indptr[i + 1]``.
    worker, label : ndarray of shape (n_votes,)
        Worker and class index of each vote, in task order.
    weight : ndarray of shape (n_votes,) or None
        Weight of each vote (soft votes, see :attr:`skcrowd.Votes.weight`), None when every
        vote weighs one. Only the numpy engine reads it: an estimator fitting weighted votes
        runs its kernels within :func:`~skcrowd.aggregation.kernels.numpy_engine`.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout
    >>> layout = BlockLayout(check_votes(np.array([[0, 1], [-1, 1]])))
    >>> layout.task_indptr, layout.worker, layout.label
    (array([0, 2, 3]), array([0, 1, 1], dtype=int32), array([0, 1, 1], dtype=int32))
    """

    def __init__(self, votes, n_classes=None):
        self._scratch = {}
        self.n_tasks = int(votes.n_tasks)
        self.n_workers = int(votes.n_workers)
        self.n_classes = int(votes.n_classes if n_classes is None else n_classes)
        self.n_votes = int(votes.n_votes)
        self.task_indptr = votes.task_indptr()
        index = _index_dtype(max(self.n_tasks, self.n_workers, self.n_votes))
        self.worker = votes.worker.astype(index)
        self.label = votes.label.astype(np.int32)
        self.weight = votes.weight

    @cached_property
    def task(self):
        """Task index of each vote (task order)."""
        return np.repeat(
            np.arange(self.n_tasks, dtype=self.worker.dtype), np.diff(self.task_indptr)
        )

    def weighted(self, values):
        """``values`` (one per vote, task order) times the votes' weights; themselves when
        the votes have none (hard votes)."""
        return values if self.weight is None else values * self.weight

    @cached_property
    def soft_rows(self):
        """The votes of weighted rows (soft votes: one row per class of positive probability,
        a vote's rows consecutive, :meth:`skcrowd.SoftVotes.to_votes`), built once per fit.

        ``(vote_of_row, vote_task, single, split, split_starts, split_vote, split_log_weight)``:
        the vote of each row, the task of each vote, the rows that are a whole vote (a one-hot
        vote), the rows of the votes of several rows, where each of those votes starts among
        them, which of them each such row belongs to, and the log-weights of these rows.
        """
        task, worker = self.task, self.worker
        new = np.empty(self.n_votes, dtype=bool)
        new[:1] = True
        np.not_equal(task[1:], task[:-1], out=new[1:])
        new[1:] |= worker[1:] != worker[:-1]
        starts = np.flatnonzero(new)
        vote_of_row = np.cumsum(new) - 1
        lengths = np.diff(np.r_[starts, self.n_votes])
        alone = (lengths == 1)[vote_of_row]
        split = np.flatnonzero(~alone)
        split_starts = np.flatnonzero(new[split])
        split_vote = np.repeat(np.arange(len(split_starts)),
                               np.diff(np.r_[split_starts, len(split)]))
        return (vote_of_row, task[starts], np.flatnonzero(alone), split, split_starts,
                split_vote, np.log(self.weight[split]))

    @cached_property
    def cell(self):
        """``worker * K + label`` of each vote (task order): the row of a vote in a
        ``(n_workers * K, K)`` view of per-worker tables laid out ``[worker, label, class]``."""
        index = _index_dtype(self.n_workers * self.n_classes)
        return self.worker.astype(index) * self.n_classes + self.label.astype(index)

    @cached_property
    def cell_counts(self):
        """Number of votes of each ``(worker, label)`` cell, at ``worker * K + label``."""
        return np.bincount(self.cell, weights=self.weight,
                           minlength=self.n_workers * self.n_classes).astype(np.float64)

    @cached_property
    def worker_order(self):
        """Votes in worker order: ``(worker_indptr, position, task, label)``.

        ``position[v]`` is the place of vote ``v`` (task order) in the worker
        order; ``task`` and ``label`` are listed in worker order.
        """
        order = np.argsort(self.worker, kind="stable")
        position = np.empty_like(order)
        position[order] = np.arange(self.n_votes)
        indptr = np.zeros(self.n_workers + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.worker, minlength=self.n_workers), out=indptr[1:])
        return (
            indptr,
            position.astype(self.worker.dtype),
            self.task[order],
            self.label[order],
        )

    def chunk_bounds(self, n_chunks):
        """First task of each of ``n_chunks`` runs of whole tasks with equal vote counts."""
        key = ("chunk_bounds", n_chunks)  # kept with the work arrays: one search per fit
        if key not in self._scratch:
            targets = np.linspace(0, self.n_votes, n_chunks + 1)
            bounds = np.searchsorted(self.task_indptr, targets).astype(np.int64)
            bounds[0], bounds[-1] = 0, self.n_tasks
            self._scratch[key] = bounds
        return self._scratch[key]

    def scratch(self, name, shape):
        """A work array kept between kernel calls (no allocation per EM iteration)."""
        array = self._scratch.get(name)
        if array is None or array.shape != shape:
            array = self._scratch[name] = np.empty(shape)
        return array

    def __getstate__(self):
        # work arrays are not shipped (to a Dask worker, to disk): they are rebuilt on use
        return {**self.__dict__, "_scratch": {}}

    @cached_property
    def indicator(self):
        """CSR ``(n_tasks, n_workers * K)``: one 1 (the vote's weight) per vote, at column
        ``worker * K + label``."""
        cols = self.worker.astype(np.int64) * self.n_classes + self.label
        data = np.ones(self.n_votes) if self.weight is None else self.weight
        return sp.csr_array(
            (data, cols.astype(_index_dtype(self.n_workers * self.n_classes)), self.task_indptr),
            shape=(self.n_tasks, self.n_workers * self.n_classes),
        )

    @cached_property
    def indicator_t(self):
        """Transpose of :attr:`indicator`, as CSR."""
        return self.indicator.T.tocsr()


def _index_dtype(n):
    return np.int32 if n < np.iinfo(np.int32).max else np.int64
