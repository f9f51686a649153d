"""Vote blocks and the map-reduce step shared by every votes source.

A :class:`VoteBlock` holds the votes of a set of whole tasks (a task's votes never straddle two
blocks), with the workers renumbered *locally*: the block's per-worker statistics are indexed by
the workers present in it, so a block costs ``O(votes + workers present)`` memory however large
the crowd. Local numbers follow the crowd-wide activity rank, so the busiest workers' table rows
sit side by side in the block's copy of the tables.

An EM iteration over any source (:class:`MemoryVotes`, :class:`~._outofcore.OutOfCoreVotes`,
:class:`~._dask.DaskVotes`) is one :meth:`map_reduce`: every block receives the rows of the
per-worker parameter tables of its workers, runs the estimator's kernel and returns statistics;
per-worker statistics are added into crowd-wide arrays at the block's workers, the others summed.
Per-task state (GLAD's task difficulties) stays with its block between iterations.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._layout import BlockLayout
from ..votes import Votes, _fmt


@dataclass(frozen=True, eq=False)
class VoteBlock:
    """The votes of whole tasks, with block-local worker numbers.

    Parameters
    ----------
    votes : Votes
        Task-sorted triplets: ``votes.task`` in ``range(n_tasks of the block)``, ``votes.worker``
        the *local* worker number, ``votes.label`` the class index.
    workers : ndarray of shape (votes.n_workers,), dtype int64, or None
        Crowd-wide index of each local worker, busiest worker (crowd-wide) first; None when the
        local numbers are the crowd-wide ones (a source of one in-memory block).
    tasks : array-like of shape (votes.n_tasks,) or None
        Original id of each task of the block, in block order (None: positions).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.backends import VoteBlock
    >>> # votes of tasks "a" (workers 7 and 3) and "b" (worker 7); worker 7 is the busiest
    >>> block = VoteBlock.from_encoded(
    ...     task_start=np.array([True, False, True]), worker=np.array([7, 3, 7]),
    ...     label=np.array([1, 0, 1]), tasks=np.array(["a", "b"]),
    ...     activity_rank=np.array([8, 7, 6, 1, 5, 4, 3, 0, 2]), classes=np.array([0, 1]))
    >>> block.workers, block.votes.worker  # local worker 0 is crowd-wide worker 7
    (array([7, 3]), array([0, 1, 0]))
    >>> block.votes.task, block.layout.task_indptr
    (array([0, 0, 1]), array([0, 2, 3]))
    """

    votes: Votes
    workers: np.ndarray | None = None
    tasks: object = None

    @cached_property
    def layout(self):
        """The kernels' :class:`~skcrowd.aggregation.kernels.BlockLayout` of the votes."""
        return BlockLayout(self.votes)

    @classmethod
    def from_encoded(cls, task_start, worker, label, tasks, activity_rank, classes):
        """Block of crowd-wide encoded votes of whole tasks.

        ``task_start`` (bool) is True where a vote starts a new task, ``worker`` the crowd-wide
        worker index, ``label`` the class index, ``tasks`` the original id of each task and
        ``activity_rank[j]`` the rank of worker ``j`` by number of votes (0 = busiest).
        """
        task = np.cumsum(task_start, dtype=np.int64) - 1
        present, inverse = np.unique(worker, return_inverse=True)
        by_activity = np.argsort(activity_rank[present], kind="stable")
        local = np.empty(len(present), dtype=np.int64)
        local[by_activity] = np.arange(len(present))
        votes = Votes(
            task=task,
            worker=local[inverse.ravel()],
            label=np.asarray(label, dtype=np.int64),
            n_tasks=int(task[-1]) + 1 if len(task) else 0,
            n_workers=len(present),
            classes=classes,
        )
        return cls(votes=votes, workers=present[by_activity].astype(np.int64), tasks=tasks)

    def repeated_vote(self):
        """``(task id, crowd-wide worker index)`` of a worker who voted twice on a task, or None."""
        v = self.votes
        key = v.task * max(v.n_workers, 1) + v.worker
        order = np.argsort(key, kind="stable")
        dup = np.flatnonzero(np.diff(key[order]) == 0)
        if len(dup) == 0:
            return None
        k = order[dup[0]]
        task = self.tasks[int(v.task[k])] if self.tasks is not None else int(v.task[k])
        worker = int(v.worker[k]) if self.workers is None else int(self.workers[v.worker[k]])
        return getattr(task, "as_py", lambda: task)(), worker


def repeated_vote_error(name, task, worker):
    """The error raised when ``worker`` voted more than once on ``task``."""
    return ValueError(
        f"{name}: worker {_fmt(worker)} voted more than once on task {_fmt(task)}; keep one "
        "vote per (task, worker)."
    )


def run_block(fn, block, tables, args, state, **kwargs):
    """``fn(block, local_tables, *args, state)``; ``local_tables``: rows of the block's workers."""
    local = tables if block.workers is None else tuple(t[block.workers] for t in tables)
    return fn(block, local, *args, state, **kwargs)


def concatenate_tasks(parts):
    """Concatenate per-block per-task outputs: arrays, or tuples or dicts of arrays."""
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(concatenate_tasks([p[k] for p in parts]) for k in range(len(first)))
    if isinstance(first, dict):
        return {k: concatenate_tasks([p[k] for p in parts]) for k in first}
    return np.concatenate(parts)


class StatisticsSum:
    """Running sum of block statistics ``(per-worker tuple, other tuple)``.

    Per-worker statistics (first axis: the block's workers) are added into crowd-wide arrays of
    ``n_workers`` rows at the block's workers; the others (arrays or floats) are summed.
    """

    def __init__(self, n_workers):
        self.n_workers = n_workers
        self.per_worker = None
        self.other = None

    def add(self, workers, per_worker, other):
        """Add a block's statistics (``per_worker`` None: already added into :attr:`per_worker`)."""
        if per_worker is None:
            self.other = tuple(total + s for total, s in zip(self.other, other))
            return
        if self.per_worker is None:
            self.other = tuple(np.zeros(np.shape(s)) for s in other)
            if workers is None:  # crowd-wide rows: the first block's statistics start the sums
                self.per_worker = tuple(np.asarray(s, dtype=np.float64) for s in per_worker)
                self.other = tuple(total + s for total, s in zip(self.other, other))
                return
            self.per_worker = tuple(np.zeros((self.n_workers, *np.shape(s)[1:]))
                                    for s in per_worker)
        for total, s in zip(self.per_worker, per_worker):
            if workers is None:
                total += s
            else:
                total[workers] += s
        self.other = tuple(total + s for total, s in zip(self.other, other))

    def result(self):
        return self.per_worker, tuple(o if np.ndim(o) else float(o) for o in self.other)


class MemoryVotes:
    """Votes held in memory: a source of one block, with crowd-wide worker numbers.

    Parameters
    ----------
    votes : Votes
        Validated votes (see :func:`skcrowd.check_votes`).
    worker_ids, task_ids : ndarray, default=None
        Original ids of the workers and tasks of long-format votes (None: column and row
        numbers of a votes matrix).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.backends import MemoryVotes
    >>> source = MemoryVotes(check_votes(np.array([[0, 1], [1, -1]])))
    >>> per_worker, other = source.map_reduce(
    ...     lambda block, tables, state: ((np.bincount(block.votes.worker),),
    ...                                   (block.votes.n_votes,), None))
    >>> per_worker[0], other
    (array([2, 1]), (3,))
    """

    def __init__(self, votes, *, worker_ids=None, task_ids=None):
        self.block = VoteBlock(votes, tasks=task_ids)
        self.classes = votes.classes
        self.worker_ids, self._task_ids = worker_ids, task_ids
        self.n_tasks, self.n_workers, self.n_votes = votes.n_tasks, votes.n_workers, votes.n_votes
        self.n_blocks = 1
        self.worker_order = None  # tables have one row per worker, in worker order
        self._state = None

    @classmethod
    def from_blocks(cls, source):
        """All the votes of an out-of-core or Dask ``source`` in memory, as one block."""
        task, worker, label, ids = [], [], [], []
        offset = 0
        for block in source.blocks(with_tasks=True):
            v = block.votes
            task.append(v.task + offset)
            worker.append(v.worker if block.workers is None else block.workers[v.worker])
            label.append(v.label)
            ids.append(np.asarray(block.tasks))
            offset += v.n_tasks
        votes = Votes(task=np.concatenate(task), worker=np.concatenate(worker),
                      label=np.concatenate(label), n_tasks=offset, n_workers=source.n_workers,
                      classes=source.classes)
        return cls(votes, worker_ids=source.worker_ids, task_ids=np.concatenate(ids))

    def task_ids(self):
        """Original id of every task (None for a votes matrix: rows are tasks)."""
        return self._task_ids

    def blocks(self, *, with_tasks=True):
        """The one block."""
        yield self.block

    def close(self):
        """Nothing to release."""

    def map_reduce(self, fn, tables=(), args=(), *, stateful=False, with_tasks=False):
        """Sum of ``fn(block, local_tables, *args, state)`` over the blocks (here one).

        ``fn`` returns ``(per_worker_stats, other_stats, state)``; with ``stateful=True`` the
        block's state from the previous call is passed in (None at first) and the new one kept.
        The block always carries its task ids (``with_tasks`` is for the out-of-core source).
        Returns ``(per_worker_totals, other_totals)``.
        """
        per_worker, other, state = run_block(fn, self.block, tables, args,
                                             self._state if stateful else None)
        if stateful:
            self._state = state
        return tuple(per_worker), tuple(other)

    def map_tasks(self, fn, tables=(), args=(), *, stateful=False, columns=None):
        """``fn(block, local_tables, *args, state)`` of the block: per-task output."""
        return run_block(fn, self.block, tables, args, self._state if stateful else None)
