"""Vote blocks: the unit of work shared by the out-of-core and the Dask backends.

A :class:`VoteBlock` holds the votes of a set of whole tasks (a task's votes never straddle two
blocks), with the workers renumbered *locally*: the block's per-worker statistics are indexed by
the workers present in it, so a block costs ``O(votes + workers present)`` memory however large
the crowd. Local numbers follow the crowd-wide activity rank, so the busiest workers' tables sit
side by side in memory (better cache use in the kernel's random accesses).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..votes import Votes, _fmt


@dataclass(frozen=True, eq=False)
class VoteBlock:
    """The votes of whole tasks, with block-local worker numbers.

    Parameters
    ----------
    votes : Votes
        Task-sorted triplets: ``votes.task`` in ``range(n_tasks of the block)``, ``votes.worker``
        the *local* worker number, ``votes.label`` the class index.
    workers : ndarray of shape (votes.n_workers,), dtype int64
        Crowd-wide index of each local worker, busiest worker (crowd-wide) first.
    tasks : array-like of shape (votes.n_tasks,)
        Original id of each task of the block, in block order.
    """

    votes: Votes
    workers: np.ndarray
    tasks: object

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
        task = self.tasks[int(v.task[k])]
        return getattr(task, "as_py", lambda: task)(), int(self.workers[v.worker[k]])


def repeated_vote_error(name, task, worker):
    """The error raised when ``worker`` voted more than once on ``task``."""
    return ValueError(
        f"{name}: worker {_fmt(worker)} voted more than once on task {_fmt(task)}; keep one "
        "vote per (task, worker)."
    )
