"""Dask backend: long-format votes in a ``dask.dataframe``, EM statistics summed across a cluster.

:class:`DaskVotes` encodes a dask DataFrame of votes (columns ``task``, ``worker``, ``label``)
once: worker ids and labels become integer indices, the votes are shuffled by task **once** so
that each partition holds whole tasks, and each partition becomes a :class:`~._blocks.VoteBlock`
kept in the cluster's memory. An EM iteration then scatters the parameters (once; the Dask
workers fetch them from each other), runs the kernel on every block where it lives, and brings
back per-block statistics indexed by the workers present in the block.

The cluster is the user's :class:`distributed.Client` when one is active (``Client(...)``
anywhere in the session, e.g. connected to a remote scheduler); otherwise an embedded
:class:`distributed.LocalCluster` is started on first use and kept for the session.

**Lost workers.** Dask recomputes a lost result from its lineage, but data sent with ``scatter``
has none and is lost with its worker (Dask's resilience notes). So the blocks are built from
the task graph alone (the small encoding tables travel in the graph), and every iteration keeps
on the client what a lost worker would take with it: the parameter tables (the client's own
arrays) and a checkpoint of the blocks' states (per-task parameters, e.g. GLAD's difficulties:
a few floats per task; nothing for Dawid-Skene). An iteration that loses data with a worker is
run again on the remaining or restarted workers, the lost blocks recomputed from the votes'
source and their states restored from the checkpoint, so the fit equals the one without the
fault. A cluster that is gone (closed client or scheduler) raises :class:`DaskClusterError`.
"""

from __future__ import annotations

import atexit
import numbers
import threading

import numpy as np

from .._optional import import_optional
from ..votes import _fmt
from ._blocks import StatisticsSum, VoteBlock, repeated_vote_error, run_block

__all__ = ["DaskClusterError", "DaskVotes", "get_client"]

COLUMNS = ("task", "worker", "label")
_RETRIES = 3  # runs of an iteration that lost data with a worker, after the first


class DaskClusterError(RuntimeError):
    """The Dask cluster that holds the votes is gone (its client or scheduler was closed)."""


# Embedded cluster: one Dask worker whose threads share this process (processes=False).
# Measured on the shared 2-core machine (benchmarks/scale.py table, Dawid-Skene, 1e7 votes,
# 1e5 workers): 0.75 s per iteration with 2 worker threads (in-memory: 0.75 s), 1.39 s with
# 2 worker processes, which copy the parameter tables and the statistics every iteration.
EMBEDDED_CLUSTER = {"processes": False, "n_workers": 1, "threads_per_worker": None}

_embedded = {}
_embedded_lock = threading.Lock()


def _distributed():
    import_optional("dask.dataframe", "Dask input")
    return import_optional("distributed", "Dask input")


def is_dask_frame(obj) -> bool:
    """Whether ``obj`` is a ``dask.dataframe.DataFrame`` (without importing dask)."""
    return any(c.__module__.startswith("dask") and c.__name__ == "DataFrame"
               for c in type(obj).__mro__)


def get_client(client=None):
    """The Dask client that runs skcrowd's work.

    Parameters
    ----------
    client : distributed.Client, default=None
        Use this client.

    Returns
    -------
    distributed.Client
        ``client`` if given; else the session's default client (any ``distributed.Client(...)``
        created by the user, local or connected to a remote scheduler); else an embedded
        :class:`distributed.LocalCluster` started on the first call and closed at exit.

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> from skcrowd.backends import get_client
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster, \\
    ...         Client(cluster) as client:
    ...     get_client() is client
    True
    """
    distributed = _distributed()
    if client is not None:
        return client
    try:
        return distributed.default_client()
    except ValueError:
        pass
    with _embedded_lock:
        c = _embedded.get("client")
        if c is None or c.status in ("closing", "closed"):
            cluster = distributed.LocalCluster(dashboard_address=":0", **EMBEDDED_CLUSTER)
            _embedded["cluster"] = cluster
            _embedded["client"] = c = distributed.Client(cluster, set_as_default=False)
            atexit.register(close_embedded_cluster)
        return c


def close_embedded_cluster():
    """Close the embedded LocalCluster, if one was started (it restarts on next use).

    It is closed at exit anyway; close it to free its threads and memory sooner.

    Examples
    --------
    >>> from skcrowd.backends import close_embedded_cluster
    >>> close_embedded_cluster()  # nothing to do when none was started
    """
    with _embedded_lock:
        client, cluster = _embedded.pop("client", None), _embedded.pop("cluster", None)
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()


def _encode_partition(part, worker_ids, classes, label_is_float):
    """Map worker ids and labels of a pandas partition to int32 / int16 indices.

    Each task builds its own lookup indexes: partitions encoded on threads of one worker would
    otherwise share a pandas Index, whose lazily built hash table is not thread-safe (pandas
    issue 21150: a unique Index can read as non-unique, and ``get_indexer`` then raises).
    """
    import pandas as pd

    worker_index, class_index = pd.Index(worker_ids), pd.Index(classes)
    lab = part["label"].to_numpy()
    if label_is_float:
        lab = lab.astype(np.int64)
    return pd.DataFrame({
        "task": part["task"].to_numpy(),
        "worker": worker_index.get_indexer(part["worker"].to_numpy()).astype(np.int32),
        "label": class_index.get_indexer(lab).astype(np.int16),
    }, index=part.index)


def _make_block(part, activity_rank, classes):
    """:class:`VoteBlock` of an encoded pandas partition that holds whole tasks."""
    part = part.sort_values("task", kind="stable")
    t = part["task"].to_numpy()
    start = np.ones(len(t), dtype=bool)
    start[1:] = t[1:] != t[:-1]
    return VoteBlock.from_encoded(start, part["worker"].to_numpy(), part["label"].to_numpy(),
                                  t[start], activity_rank, classes)


def _block_summary(block):
    return block.votes.n_tasks, block.repeated_vote()


def _first_row(frame, mask):
    """Index label of the first row of ``frame`` where ``mask`` holds (computed on demand)."""
    return frame[mask].head(1, npartitions=-1).index.tolist()[0]


class DaskVotes:
    """Long-format votes in a dask DataFrame, encoded once into task-partitioned blocks.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        Columns ``task``, ``worker`` and ``label``, one row per vote (ids integers or strings).
    classes : array-like, default=None
        Known classes (a fitted ``classes_``): every label must be one of them.
    n_classes : int, default=None
        Number of classes when some never appear (integer labels in ``range(n_classes)``).
    worker_ids : array-like, default=None
        Known worker ids (a fitted model's); by default the sorted distinct ids of ``frame``.
    client : distributed.Client, default=None
        The client to use; by default :func:`get_client`'s.
    npartitions : int, default=None
        Number of task partitions (blocks); by default the cluster's number of threads. Every
        block sends back statistics for the workers present in it, nearly the whole crowd when
        workers vote often, so fewer, larger blocks move less data per iteration.
    name : str, default="votes"
        Name of the argument, used in error messages.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
    worker_ids : ndarray of shape (n_workers,)
    votes_per_worker : ndarray of shape (n_workers,)
    n_votes, n_tasks, n_workers, n_blocks : int
    client : distributed.Client
    block_futures : list of distributed.Future
        One :class:`~._blocks.VoteBlock` per partition, in the cluster's memory.

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd
    >>> from distributed import Client, LocalCluster
    >>> from skcrowd.backends import DaskVotes
    >>> frame = dd.from_pandas(pd.DataFrame({"task": [7, 3, 3], "worker": ["b", "a", "b"],
    ...                                      "label": ["cat", "dog", "cat"]}), npartitions=2)
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster, \\
    ...         Client(cluster) as client:
    ...     votes = DaskVotes(frame)
    ...     print(votes.n_tasks, votes.worker_ids.tolist(), votes.classes.tolist())
    ...     per_worker, other = votes.map_reduce(
    ...         lambda block, tables, state: ((np.bincount(block.votes.worker),),
    ...                                       (block.votes.n_votes,), None))
    ...     print(per_worker[0], other)
    2 ['a', 'b'] ['cat', 'dog']
    [1. 2.] (3.0,)
    """

    def __init__(self, frame, *, classes=None, n_classes=None, worker_ids=None, client=None,
                 npartitions=None, name="votes"):
        import dask
        import pandas as pd

        _distributed()
        if not is_dask_frame(frame):
            raise TypeError(f"{name} must be a dask.dataframe.DataFrame, got "
                            f"{type(frame).__name__}.")
        missing = [c for c in COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(
                f"{name} has no column {missing[0]!r}: long-format votes need the columns "
                f"{list(COLUMNS)} (one row per vote), got {list(frame.columns)}."
            )
        if n_classes is not None and (not isinstance(n_classes, numbers.Integral)
                                      or isinstance(n_classes, bool) or n_classes < 1):
            raise ValueError(f"n_classes must be a positive integer or None, got {n_classes!r}.")
        self.client = client = get_client(client)
        self._scheduler = getattr(getattr(client, "scheduler", None), "address", None)
        self._check_cluster()
        frame = frame[list(COLUMNS)]

        # pass 1: missing values, worker vote counts, distinct labels
        nulls, counts, labels = client.compute(
            [frame.isna().sum(), frame["worker"].value_counts(split_out=1),
             frame["label"].unique(split_out=1)],
            sync=True)
        for col in COLUMNS:
            if nulls[col]:
                raise ValueError(
                    f"{name} row {_first_row(frame, frame[col].isna())!r} has a missing {col}; "
                    "drop rows without a vote first."
                )
        labels = np.asarray(labels)
        label_is_float = labels.dtype.kind == "f"
        if label_is_float:
            bad = ~np.isfinite(labels) | (labels != np.round(labels)) | (np.abs(labels) >= 2.0**63)
            if bad.any():
                raise ValueError(
                    f"{name} has label {_fmt(labels[bad][0])} at row "
                    f"{_first_row(frame, frame['label'] == labels[bad][0])!r}; labels must be "
                    "integers, integral floats or strings."
                )
            labels = labels.astype(np.int64)
        if classes is not None:
            self.classes = np.asarray(classes)
        elif n_classes is not None:
            if labels.dtype.kind not in "iu" or ((labels < 0) | (labels >= n_classes)).any():
                bad = labels if labels.dtype.kind not in "iu" else labels[
                    (labels < 0) | (labels >= n_classes)]
                raise ValueError(
                    f"{name} has label {_fmt(bad[0])}, outside range(n_classes) with "
                    f"n_classes={n_classes}."
                )
            self.classes = np.arange(n_classes)
        else:
            self.classes = np.sort(labels)
        class_index = pd.Index(self.classes)
        unknown = labels[class_index.get_indexer(labels) < 0]
        if len(unknown):
            raise ValueError(
                f"{name} has label {_fmt(unknown[0])} at row "
                f"{_first_row(frame, frame['label'] == unknown[0])!r}, which is not one of the "
                f"known classes {self.classes.tolist()!r}."
            )

        if worker_ids is None:
            counts = counts.sort_index()
            self.worker_ids = counts.index.to_numpy()
            self.votes_per_worker = counts.to_numpy().astype(np.int64)
        else:
            self.worker_ids = np.asarray(worker_ids)
            pos = pd.Index(self.worker_ids).get_indexer(counts.index)
            if (pos < 0).any():
                w = counts.index[pos < 0][0]
                raise ValueError(
                    f"{name} row {_first_row(frame, frame['worker'] == w)!r} has worker {_fmt(w)}, "
                    "which is not one of the known workers seen at fit."
                )
            self.votes_per_worker = np.zeros(len(self.worker_ids), dtype=np.int64)
            self.votes_per_worker[pos] = counts.to_numpy()
        if self.worker_ids.dtype.kind == "O":
            self.worker_ids = self.worker_ids.astype(str)
        self.n_workers = len(self.worker_ids)
        self.n_votes = int(self.votes_per_worker.sum())
        activity_rank = np.empty(self.n_workers, dtype=np.int64)
        activity_rank[np.argsort(-self.votes_per_worker, kind="stable")] = np.arange(
            self.n_workers)

        # encode, partition by task once, one block per partition, kept on the cluster
        encoded = frame.map_partitions(
            _encode_partition, self.worker_ids, self.classes, label_is_float,
            meta={"task": frame.dtypes["task"], "worker": np.int32, "label": np.int16})
        if npartitions is None:
            npartitions = sum(client.nthreads().values())
        shuffled = encoded.shuffle("task", npartitions=int(npartitions))
        # the tables travel in the graph, not by scatter: a lost block is recomputed from it
        rank, classes_ = dask.delayed(activity_rank), dask.delayed(self.classes)
        make_block = dask.delayed(_make_block, pure=True)
        self._block_graph = [make_block(part, rank, classes_) for part in shuffled.to_delayed()]
        self.block_futures = client.compute(self._block_graph)
        summary = client.gather([client.submit(_block_summary, b) for b in self.block_futures])
        for _, repeated in summary:
            if repeated is not None:
                raise repeated_vote_error(name, repeated[0], self.worker_ids[repeated[1]])
        self.n_blocks = len(self.block_futures)
        self.n_tasks = sum(n for n, _ in summary)
        self.worker_order = None  # tables have one row per worker; blocks take their rows
        self._states = [None] * self.n_blocks
        self._checkpoint = None  # the blocks' states, on the client

    def blocks(self, *, with_tasks=True):
        """Iterate over the blocks, fetched one by one from the cluster."""
        for future in self.block_futures:
            yield future.result()

    def task_ids(self):
        """Original id of every task, in block order."""
        return np.concatenate(self.client.gather(
            [self.client.submit(_task_ids, b) for b in self.block_futures]))

    def close(self):
        """Release the blocks and their states on the cluster."""
        for future in [*self.block_futures, *(s for s in self._states if s is not None)]:
            future.release()
        self.block_futures, self._states, self._checkpoint = [], [], None
        self.n_blocks = 0

    def map_reduce(self, fn, tables=(), args=(), *, stateful=False, with_tasks=False):
        """Sum of ``fn(block, local_tables, *args, state)`` over the blocks, run on the cluster.

        The per-worker ``tables`` are scattered once, not broadcast (the scheduler's replication
        waited for ever on a worker that had died but was not removed yet): the Dask workers
        fetch them from each other. Each block takes the rows of its workers. ``fn`` returns
        ``(per_worker_stats, other_stats, state)``: the per-worker statistics come back indexed
        by the block's workers and are added into crowd-wide arrays, the others summed, in block
        order (so the result does not depend on which block finishes first). With
        ``stateful=True`` the block's state from the previous call (None at first) is passed in
        and the new one stays on the cluster, with a copy on the client. A call that loses data
        with a Dask worker runs again (see the module's notes); a cluster that is gone raises
        :class:`DaskClusterError`. The blocks always carry their task ids (``with_tasks`` is
        for the out-of-core source).
        Returns ``(per_worker_totals, other_totals)``.
        """
        for attempt in range(_RETRIES + 1):
            try:
                self._check_cluster()
                if attempt:  # recovering can meet the lost worker too (a scatter to a worker
                    self._recover()  # killed but not yet removed): it is retried with the run
                return self._map_reduce(fn, tables, args, stateful)
            except DaskClusterError:
                raise
            except Exception as exc:
                self._check_cluster(exc)
                if attempt == _RETRIES or not _lost_data(exc):
                    raise

    def _map_reduce(self, fn, tables, args, stateful):
        client = self.client
        tables = client.scatter(list(tables), hash=False) if tables else []
        states = self._states if stateful else [None] * self.n_blocks
        results = [client.submit(_run_block, fn, b, args, s, *tables, pure=False)
                   for b, s in zip(self.block_futures, states)]
        statistics = [client.submit(_without_state, r, pure=False) for r in results]
        new_states = [client.submit(_state_of, r, pure=False) for r in results] if stateful \
            else None
        del results
        total = StatisticsSum(self.n_workers)
        for future in statistics:
            total.add(*future.result())
        if stateful:  # committed only once the whole call succeeded
            self._checkpoint = client.gather(new_states)
            self._states = new_states
        return total.result()

    def _recover(self):
        """After data was lost with a worker: recompute the blocks that are not in the cluster's
        memory any more from the votes' source, and restore the states from the checkpoint."""
        client = self.client
        for i, future in enumerate(self.block_futures):
            if future.status != "finished":
                future.release()
                self.block_futures[i] = client.compute(self._block_graph[i])
        for future in self._states:
            if future is not None:
                future.release()
        self._states = ([None] * self.n_blocks if self._checkpoint is None
                        else client.scatter(list(self._checkpoint), hash=False))

    def _check_cluster(self, exc=None):
        """Raise :class:`DaskClusterError` if the client or its scheduler is gone (after an
        error ``exc``: also if the client lost its scheduler, status "connecting")."""
        status = self.client.status
        if status == "running" or (exc is None and status not in ("closing", "closed")):
            return
        raise DaskClusterError(
            f"the Dask cluster that holds these votes is gone (client {status}, scheduler "
            f"{self._scheduler}); start a cluster (or let skcrowd start one) and fit again."
        ) from exc

    def map_tasks(self, fn, tables=(), args=(), *, stateful=False, columns=None):
        """Per-task outputs of every block as a dask collection indexed by task id.

        ``fn(block, local_tables, *args, state)`` returns an array with one row per task of the
        block: a 1-D result gives a dask Series, a 2-D one a dask DataFrame with ``columns``.
        The blocks stay on the cluster; nothing is gathered here.
        """
        import dask.dataframe as dd

        self._check_cluster()
        client = self.client
        # tables in the graph (one task holds each), not scattered: the lazy output can be
        # recomputed after a worker is lost
        tables = [client.submit(_identity, t, pure=False) for t in tables]
        states = self._states if stateful else [None] * self.n_blocks
        parts = [client.submit(_run_block_frame, fn, b, args, s, columns, *tables, pure=False)
                 for b, s in zip(self.block_futures, states)]
        meta = client.submit(_empty_like, parts[0]).result()
        return dd.from_delayed(parts, meta=meta, verify_meta=False)


def _run_block(fn, block, args, state, *tables):
    return block.workers, *run_block(fn, block, tables, args, state)


def _lost_data(exc):
    """Whether ``exc`` says that a result was lost with a worker (worth running again)."""
    import concurrent.futures

    return isinstance(exc, (concurrent.futures.CancelledError, OSError, TimeoutError))


def _identity(x):
    return x


def _task_ids(block):
    return np.asarray(block.tasks)


def _without_state(result):
    return result[:3]


def _state_of(result):
    return result[3]


def _run_block_frame(fn, block, args, state, columns, *tables):
    import pandas as pd

    out = run_block(fn, block, tables, args, state)
    index = pd.Index(block.tasks, name="task")
    if np.ndim(out) == 1:
        return pd.Series(out, index=index)
    return pd.DataFrame(out, index=index, columns=columns)


def _empty_like(frame):
    return frame.iloc[:0]
