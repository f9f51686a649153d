"""Out-of-core votes: long-format parquet files streamed in task-sorted blocks.

:class:`OutOfCoreVotes` reads a parquet file, a folder of parquet files or a
:class:`pyarrow.dataset.Dataset` of long-format votes (columns ``task``, ``worker``, ``label``,
one row per vote) and encodes it once into a cache folder of :class:`~._blocks.VoteBlock` files:

1. a first pass counts the votes of each worker, collects the labels, checks for missing values
   and tells whether the votes are sorted by task;
2. votes that are not sorted are bucketed by task on disk (each bucket holds a range of task
   ids, split at quantiles of a sample, so sorting the buckets one by one sorts the file);
3. a second pass maps worker ids and labels to integer indices and cuts the stream into blocks of
   about ``block_votes`` votes made of whole tasks, stored with the kernels' index arrays (the
   votes in worker order, an argsort, is computed once here).

Each EM iteration then streams the blocks (one block in memory, the next one loading in a
thread). The blocks keep crowd-wide worker numbers, ordered by activity (busiest first, so that
their table rows share cache): with many votes per worker every block meets nearly every worker,
and block-local tables would copy the whole tables in and out of every block (measured on
Dawid-Skene at 1e8 votes and 1e6 workers: 54 s per iteration and 6.6 GB with block-local tables,
18 s and 3.4 GB with crowd-wide ones). Memory: the worker tables and their statistics, a task
sample of at most ``_SAMPLE_SIZE`` ids and one or two blocks, whatever the number of votes.
"""

from __future__ import annotations

import concurrent.futures
import inspect
import numbers
import pickle
import shutil
import tempfile
import weakref
from pathlib import Path

import numpy as np

from .._optional import import_optional
from ..votes import Votes, _fmt
from ._blocks import (
    StatisticsSum,
    VoteBlock,
    concatenate_tasks,
    repeated_vote_error,
    run_block,
)

__all__ = ["OutOfCoreVotes"]

COLUMNS = ("task", "worker", "label")
_READ_ROWS = 1 << 20  # rows per record batch read from parquet
_SAMPLE_SIZE = 1 << 16  # task ids kept to choose bucket boundaries
_MAX_BUCKETS = 1024


def _pa():
    """``(pyarrow, pyarrow.compute, pyarrow.dataset)``."""
    return tuple(import_optional(name, "out-of-core votes (parquet)")
                 for name in ("pyarrow", "pyarrow.compute", "pyarrow.dataset"))


def open_votes_dataset(source, name="votes"):
    """A :class:`pyarrow.dataset.Dataset` of long-format votes, its columns checked.

    ``source`` is a path (str or :class:`~pathlib.Path`) of a parquet file or folder, or a
    dataset.
    """
    pa, pc, ds = _pa()
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"{name}: no parquet file or folder at {str(path)!r}.")
        try:
            dataset = ds.dataset(path, format="parquet")
        except (OSError, pa.ArrowException) as exc:  # e.g. the first file is truncated
            raise ValueError(f"{name}: cannot read the parquet votes at {str(path)!r}: "
                             f"{exc}") from exc
    elif isinstance(source, ds.Dataset):
        dataset = source
    else:
        raise TypeError(
            f"{name} must be a path of parquet votes or a pyarrow.dataset.Dataset, got "
            f"{type(source).__name__}."
        )
    missing = [c for c in COLUMNS if c not in dataset.schema.names]
    if missing:
        raise ValueError(
            f"{name} has no column {missing[0]!r}: long-format votes need the columns "
            f"{list(COLUMNS)} (one row per vote), got {dataset.schema.names}."
        )
    for col in COLUMNS:
        typ = dataset.schema.field(col).type
        if pa.types.is_dictionary(typ):
            typ = typ.value_type
        ok = (pa.types.is_integer(typ) or pa.types.is_string(typ)
              or pa.types.is_large_string(typ) or (col == "label" and (
                  pa.types.is_floating(typ) or pa.types.is_boolean(typ))))
        if not ok:
            raise TypeError(
                f"{name} column {col!r} has type {typ}; ids must be integers or strings and "
                "labels integers, integral floats, booleans or strings."
            )
    _check_files(dataset, name)
    return dataset


def _kind(typ):
    """The kind of a column type that every file must share: integer, floating, string..."""
    pa, pc, ds = _pa()
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    for kind in ("integer", "floating", "string", "large_string", "boolean"):
        if getattr(pa.types, f"is_{kind}")(typ):
            return "string" if kind == "large_string" else kind
    return str(typ)


def _where(fragment, i):
    return repr(fragment.path) if hasattr(fragment, "path") else f"fragment {i}"


def _check_files(dataset, name):
    """Every file of ``dataset`` is readable and holds the three columns with one kind of type
    each: the dataset's schema is read from one file, and a file that differs would be cast
    (label "1" read as 1, worker "7" as 7) or filled with nulls."""
    pa, pc, ds = _pa()
    first = {}
    for i, fragment in enumerate(dataset.get_fragments()):
        try:
            schema = fragment.physical_schema
        except (OSError, pa.ArrowException) as exc:
            raise ValueError(f"{name}: cannot read the parquet file {_where(fragment, i)}: "
                             f"{exc}") from exc
        for col in COLUMNS:
            if col not in schema.names:
                raise ValueError(
                    f"{name}: file {_where(fragment, i)} has no column {col!r} (columns "
                    f"{schema.names}); every file needs the columns {list(COLUMNS)}."
                )
            typ = schema.field(col).type
            kind, where, first_typ = first.setdefault(col, (_kind(typ), _where(fragment, i), typ))
            if _kind(typ) != kind:
                raise ValueError(
                    f"{name}: column {col!r} is {typ} in file {_where(fragment, i)} but "
                    f"{first_typ} in file {where}; write every file with one schema."
                )


def _fingerprint(dataset, fragment):
    """(size, modification time) of a fragment's file, or None (not a file)."""
    if not hasattr(fragment, "path") or not hasattr(dataset, "filesystem"):
        return None
    info = dataset.filesystem.get_file_info(fragment.path)
    return info.size, info.mtime_ns


def _scan_batches(dataset, columns=COLUMNS, fingerprints=None, name="votes"):
    """Yield ``(first_row, {column: pyarrow.Array})`` in file order, dictionaries decoded.

    One parquet row group at a time, on the calling thread: the dataset scanner's read-ahead
    held over 1 GB of decoded batches of a 1e8-vote file while the consumer was busy.
    ``fingerprints`` (a dict, filled on the first pass over the files and checked on the next
    ones) makes a file that changes while it is read, or between two passes, an error naming
    it; a file that cannot be decoded (corrupted, truncated) is one too.
    """
    pa, pc, ds = _pa()
    row = 0
    for i, fragment in enumerate(dataset.get_fragments()):
        parquet = isinstance(fragment, ds.ParquetFileFragment)
        options = ds.ParquetFragmentScanOptions(pre_buffer=False, page_checksum_verification=True
                                                ) if parquet else None
        before = _fingerprint(dataset, fragment)
        if fingerprints is not None:
            _check_unchanged(fingerprints.setdefault(i, before), before, fragment, i, name)
        try:
            for part in fragment.split_by_row_group() if parquet else [fragment]:
                for batch in part.to_batches(schema=dataset.schema, columns=list(columns),
                                             batch_size=_READ_ROWS, use_threads=False,
                                             fragment_scan_options=options):
                    cols = {}
                    for c in columns:
                        arr = batch.column(c)
                        if pa.types.is_dictionary(arr.type):
                            arr = arr.dictionary_decode()
                        cols[c] = arr
                    yield row, cols
                    row += batch.num_rows
        except (OSError, pa.ArrowException) as exc:
            raise ValueError(f"{name}: cannot read the parquet file {_where(fragment, i)} "
                             f"(corrupted or truncated?): {exc}") from exc
        _check_unchanged(before, _fingerprint(dataset, fragment), fragment, i, name)


def _check_unchanged(before, after, fragment, i, name):
    if before != after:
        raise ValueError(
            f"{name}: file {_where(fragment, i)} changed while the votes were read (size and "
            f"modification time {before} then {after}); nothing was fitted. Fit again once the "
            "file is complete."
        )


def _check_batch(row, cols, name, n_classes, class_set, worker_set):
    """Raise on missing values, labels that are not integral or not known, naming the row."""
    pa, pc, ds = _pa()
    for c, arr in cols.items():
        if arr.null_count:
            i = int(np.argmax(pc.is_null(arr).to_numpy(zero_copy_only=False)))
            raise ValueError(
                f"{name} row {row + i} has a missing {c}; drop rows without a vote first."
            )
    lab = cols["label"]
    if pa.types.is_floating(lab.type):
        x = lab.to_numpy()
        bad = ~np.isfinite(x) | (x != np.round(x))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"{name} row {row + i} has label {_fmt(x[i])}; labels must be integers, "
                "integral floats or strings."
            )
    if n_classes is not None:
        if not pa.types.is_integer(lab.type) and not pa.types.is_floating(lab.type):
            raise ValueError(
                f"n_classes={n_classes} requires integer labels in range(n_classes), but the "
                f"{name} label column has type {lab.type}."
            )
        x = lab.to_numpy()
        bad = (x < 0) | (x >= n_classes)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"{name} row {row + i} has label {_fmt(x[i])}, outside range(n_classes) with "
                f"n_classes={n_classes}."
            )
    if class_set is not None:
        _index_in(lab.cast("int64") if pa.types.is_floating(lab.type) else lab, class_set,
                  "label", name, row)
    if worker_set is not None:
        _index_in(cols["worker"], worker_set, "worker", name, row)


class _Scan:
    """First pass: worker vote counts, distinct labels, sortedness, a sample of task ids."""

    def __init__(self, dataset, name, n_classes, class_set, worker_set, seed=0):
        pa, pc, ds = _pa()
        rng = np.random.default_rng(seed)
        counts, labels = [], []
        sample_keys = np.empty(0)
        sample = None
        self.sorted = True
        self.n_votes = 0
        self.n_task_runs = 0  # number of runs of equal task ids: n_tasks when sorted
        last = None
        self.fingerprints = {}
        for row, cols in _scan_batches(dataset, fingerprints=self.fingerprints, name=name):
            _check_batch(row, cols, name, n_classes, class_set, worker_set)
            t = cols["task"]
            n = len(t)
            if n == 0:
                continue
            if last is not None and self.sorted and pc.less(t[0], last).as_py():
                self.sorted = False
            if n > 1:
                if self.sorted and pc.any(pc.less(t[1:], t[:-1])).as_py():
                    self.sorted = False
                self.n_task_runs += int(pc.sum(pc.not_equal(t[1:], t[:-1])).as_py() or 0)
            self.n_task_runs += int(last is None or t[0] != last)
            last = t[n - 1]
            vc = pc.value_counts(cols["worker"])
            counts.append(pa.table({"id": vc.field(0), "n": vc.field(1)}))
            if sum(len(x) for x in counts) > 4 * len(counts[0]) + (1 << 20):
                counts = [_merge_counts(counts)]
            labels.append(pc.unique(cols["label"]))
            # bottom-k sample by random keys: a uniform sample of the task ids of all votes
            keys = rng.random(n)
            take = np.argpartition(keys, min(_SAMPLE_SIZE, n) - 1)[:_SAMPLE_SIZE]
            cand_keys = np.concatenate([sample_keys, keys[take]])
            cand = t.take(pa.array(take)) if sample is None else pa.concat_arrays(
                [sample, t.take(pa.array(take))])
            keep = np.argsort(cand_keys)[:_SAMPLE_SIZE]
            sample_keys, sample = cand_keys[keep], cand.take(pa.array(keep))
            self.n_votes += n
        if self.n_votes == 0:
            raise ValueError(f"{name} contains no vote (no rows).")
        merged = _merge_counts(counts).sort_by("id")
        self.worker_ids = merged.column("id").combine_chunks()
        self.worker_counts = merged.column("n").to_numpy().astype(np.int64)
        self.labels = pc.unique(pa.chunked_array(labels))
        self.task_sample = sample


def _merge_counts(tables):
    pa, pc, ds = _pa()
    table = pa.concat_tables(tables).group_by("id").aggregate([("n", "sum")])
    return table.rename_columns(["id", "n"])


def _numpy(arr):
    """numpy copy of a pyarrow array (strings as a ``str`` array, like ``np.unique`` gives)."""
    pa, pc, ds = _pa()
    out = arr.to_numpy(zero_copy_only=False)
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        out = out.astype(str)
    return out


def _index_in(arr, value_set, what, name, row):
    """Index of each value of ``arr`` in ``value_set`` (int64); unknown values raise."""
    pa, pc, ds = _pa()
    try:
        idx = pc.index_in(arr, value_set=value_set)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise TypeError(
            f"{name} {what} column of type {arr.type} does not match the known {what}s of type "
            f"{value_set.type}: {exc}"
        ) from exc
    if idx.null_count:
        i = int(np.argmax(pc.is_null(idx).to_numpy(zero_copy_only=False)))
        known = "classes" if what == "label" else "workers seen at fit"
        raise ValueError(
            f"{name} row {row + i} has {what} {_fmt(arr[i].as_py())}, which is not one of the "
            f"known {known}."
        )
    return idx.to_numpy().astype(np.int64)


class OutOfCoreVotes:
    """Long-format votes on disk, encoded once into task-sorted blocks of whole tasks.

    Parameters
    ----------
    source : str, pathlib.Path or pyarrow.dataset.Dataset
        A parquet file or folder, or a dataset, with columns ``task``, ``worker`` and ``label``
        (one row per vote; ids integers or strings). Sorted by task is fastest; other orders are
        bucketed by task on disk first.
    classes : array-like, default=None
        Known classes (a fitted ``classes_``): every label must be one of them.
    n_classes : int, default=None
        Number of classes when some never appear (integer labels in ``range(n_classes)``).
    worker_ids : array-like, default=None
        Known worker ids (a fitted model's): the workers are numbered as in it and an unknown
        worker is an error. By default the workers are the sorted distinct ids of the file.
    block_votes : int, default=4_000_000
        About how many votes each block holds (blocks hold whole tasks).
    tmp_dir : str or Path, default=None
        Where the cache folder is created (default: the system's temporary folder). It needs
        about 20 bytes per vote, plus a copy of the votes while unsorted input is bucketed.
    name : str, default="votes"
        Name of the argument, used in error messages.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
    worker_ids : ndarray of shape (n_workers,)
        Original id of each worker index.
    votes_per_worker : ndarray of shape (n_workers,)
    worker_order : ndarray of shape (n_workers,)
        The blocks' numbering of the workers, by decreasing number of votes: block worker
        ``r`` is worker ``worker_order[r]``; per-worker tables of :meth:`map_reduce` and
        :meth:`map_tasks` have their rows in this order.
    n_votes, n_tasks, n_workers, n_blocks : int
    was_sorted : bool
        Whether the source was already sorted by task (no bucketing pass was needed).

    Examples
    --------
    >>> import tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> from skcrowd.backends import OutOfCoreVotes
    >>> path = tempfile.mkdtemp() + "/votes.parquet"
    >>> pq.write_table(pa.table({"task": [7, 3, 3], "worker": ["b", "a", "b"],
    ...                          "label": ["cat", "dog", "cat"]}), path)
    >>> with OutOfCoreVotes(path) as votes:
    ...     blocks = list(votes)
    ...     print(votes.n_tasks, votes.worker_ids.tolist(), votes.classes.tolist(),
    ...           votes.was_sorted)
    2 ['a', 'b'] ['cat', 'dog'] False
    >>> block = blocks[0]
    >>> block.tasks.tolist(), block.votes.task.tolist(), block.votes.label.tolist()
    ([3, 7], [0, 0, 1], [1, 0, 0])
    >>> block.workers[block.votes.worker].tolist()  # index of each vote's worker in worker_ids
    [0, 1, 1]
    """

    def __init__(self, source, *, classes=None, n_classes=None, worker_ids=None,
                 block_votes=4_000_000, tmp_dir=None, name="votes"):
        pa, pc, ds = _pa()
        if not isinstance(block_votes, numbers.Integral) or block_votes < 1:
            raise ValueError(f"block_votes must be a positive integer, got {block_votes!r}.")
        if n_classes is not None and (not isinstance(n_classes, numbers.Integral)
                                      or isinstance(n_classes, bool) or n_classes < 1):
            raise ValueError(f"n_classes must be a positive integer or None, got {n_classes!r}.")
        self._name = name
        self._block_votes = int(block_votes)
        dataset = open_votes_dataset(source, name)
        known_classes = None if classes is None else np.asarray(classes)
        known_workers = None if worker_ids is None else np.asarray(worker_ids)
        scan = _Scan(
            dataset, name, n_classes if classes is None else None,
            None if known_classes is None else pa.array(known_classes.tolist()),
            None if known_workers is None else pa.array(known_workers.tolist()),
        )
        self.n_votes = scan.n_votes
        self.was_sorted = scan.sorted

        if known_classes is not None:
            self.classes = known_classes
        elif n_classes is not None:
            self.classes = np.arange(n_classes)
        else:
            labels = scan.labels
            if pa.types.is_floating(labels.type):
                labels = labels.cast(pa.int64())
            self.classes = np.sort(_numpy(labels))
        self._class_set = pa.array(self.classes.tolist())

        if known_workers is None:
            self.worker_ids = _numpy(scan.worker_ids)
            self.votes_per_worker = scan.worker_counts
        else:
            self.worker_ids = known_workers
            self.votes_per_worker = np.zeros(len(known_workers), dtype=np.int64)
            self.votes_per_worker[_index_in(scan.worker_ids, pa.array(known_workers.tolist()),
                                            "worker", name, 0)] = scan.worker_counts
        self._worker_set = pa.array(self.worker_ids.tolist())
        self.n_workers = len(self.worker_ids)
        # blocks number the workers by activity (busiest first): their table rows share cache
        self.worker_order = np.argsort(-self.votes_per_worker, kind="stable")
        self._activity_rank = np.empty_like(self.worker_order)
        self._activity_rank[self.worker_order] = np.arange(self.n_workers)

        self._dir = Path(tempfile.mkdtemp(prefix="skcrowd-votes-", dir=tmp_dir))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._dir, True)
        try:
            if scan.sorted:
                stream = _scan_batches(dataset, fingerprints=scan.fingerprints, name=name)
            else:
                stream = _bucketed(dataset, scan, self._dir, self._block_votes, name)
            self.n_blocks, self.n_tasks = self._encode(stream)
        except BaseException:
            self.close()
            raise

    # -- encoding ------------------------------------------------------------------------

    def _encode(self, stream):
        """Cut a task-contiguous stream of ``(row, columns)`` into block files."""
        pa, pc, ds = _pa()
        pending = []  # list of (task ids, task_start, worker, label) pieces
        n_pending = 0
        last = None
        n_blocks = n_tasks = 0
        for row, cols in stream:
            t = cols["task"]
            if len(t) == 0:
                continue
            start = np.empty(len(t), dtype=bool)
            start[0] = last is None or t[0] != last
            if len(t) > 1:
                start[1:] = pc.not_equal(t[1:], t[:-1]).to_numpy(zero_copy_only=False)
            last = t[len(t) - 1]
            lab = cols["label"]
            if pa.types.is_floating(lab.type):
                lab = lab.cast(pa.int64())
            pending.append((t, start,
                            _index_in(cols["worker"], self._worker_set, "worker", self._name, row),
                            _index_in(lab, self._class_set, "label", self._name, row)))
            n_pending += len(t)
            while n_pending > self._block_votes:
                t_all, start_all, w_all, l_all = _concat(pending)
                later = np.flatnonzero(start_all[self._block_votes:])
                if len(later) == 0:
                    pending = [(t_all, start_all, w_all, l_all)]
                    break
                cut = self._block_votes + int(later[0])
                n_tasks += self._write_block(n_blocks, t_all[:cut], start_all[:cut],
                                             w_all[:cut], l_all[:cut])
                n_blocks += 1
                pending = [(t_all[cut:], start_all[cut:], w_all[cut:], l_all[cut:])]
                n_pending = len(start_all) - cut
        if n_pending:
            t_all, start_all, w_all, l_all = _concat(pending)
            n_tasks += self._write_block(n_blocks, t_all, start_all, w_all, l_all)
            n_blocks += 1
        return n_blocks, n_tasks

    def _write_block(self, i, t, start, worker, label):
        pa, pc, ds = _pa()
        tasks = t.filter(pa.array(start))
        task = np.cumsum(start, dtype=np.int64) - 1
        block = VoteBlock(Votes(task=task, worker=self._activity_rank[worker], label=label,
                                n_tasks=int(task[-1]) + 1, n_workers=self.n_workers,
                                classes=self.classes), workers=self.worker_order, tasks=tasks)
        repeated = block.repeated_vote()
        if repeated is not None:
            raise repeated_vote_error(self._name, repeated[0], self.worker_ids[repeated[1]])
        v = block.votes
        label_dtype = np.int8 if len(self.classes) <= 127 else np.int32
        # the layout's votes-by-worker order (an argsort) is computed once, here, and stored
        with open(self._dir / f"block-{i:06d}.npy", "wb") as f:
            for arr in (np.bincount(v.task, minlength=v.n_tasks).astype(np.int32),
                        v.worker.astype(np.int32), v.label.astype(label_dtype),
                        *block.layout.worker_order):
                np.save(f, arr)
        with pa.OSFile(str(self._dir / f"tasks-{i:06d}.arrow"), "wb") as sink:
            with pa.ipc.new_file(sink, pa.schema([("task", tasks.type)])) as writer:
                writer.write_batch(pa.record_batch([tasks], names=["task"]))
        return v.n_tasks

    # -- reading -------------------------------------------------------------------------

    def _load(self, i, with_tasks=False, with_state=False, source_order=False):
        path = self._dir / f"block-{i:06d}.npy"
        try:
            with open(path, "rb") as f:
                task_len, worker, label, *worker_order = (np.load(f) for _ in range(7))
            tasks = self._load_tasks(i) if with_tasks else None
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(
                f"{self._name}: the cache file {str(path)!r} of these out-of-core votes is "
                f"missing or damaged ({exc}); was the temporary folder cleaned during the fit? "
                "Open the votes again."
            ) from exc
        votes = Votes(
            task=np.repeat(np.arange(len(task_len), dtype=np.int64), task_len),
            worker=worker.astype(np.int64),
            label=label.astype(np.int64),
            n_tasks=len(task_len),
            n_workers=self.n_workers,
            classes=self.classes,
        )
        # map_reduce hands whole tables in worker_order (source_order=True): no per-block copy
        block = VoteBlock(votes=votes, workers=None if source_order else self.worker_order,
                          tasks=tasks)
        block.layout.__dict__["worker_order"] = tuple(worker_order)  # cached at encode time
        state = None
        if with_state and (self._dir / f"state-{i:06d}.pkl").exists():
            with open(self._dir / f"state-{i:06d}.pkl", "rb") as f:
                state = pickle.load(f)
        return block, state

    def _save_state(self, i, state):
        with open(self._dir / f"state-{i:06d}.pkl", "wb") as f:
            pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)

    def _iter_loaded(self, with_tasks=False, with_state=False, source_order=False):
        """``(index, block, state)`` in order, the next block loading in a thread."""
        if self._dir is None:
            raise ValueError("these out-of-core votes are closed (their cache was deleted).")
        if self.n_blocks == 0:
            return
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            nxt = pool.submit(self._load, 0, with_tasks, with_state, source_order)
            for i in range(self.n_blocks):
                block, state = nxt.result()
                if i + 1 < self.n_blocks:
                    nxt = pool.submit(self._load, i + 1, with_tasks, with_state, source_order)
                yield i, block, state
                del block, state

    def blocks(self, *, with_tasks=False):
        """Iterate over the blocks in order, the next one loading in a thread.

        ``with_tasks=True`` also reads the original task ids (``block.tasks``), needed only for
        per-task outputs.
        """
        for _, block, _ in self._iter_loaded(with_tasks):
            yield block

    def map_reduce(self, fn, tables=(), args=(), *, stateful=False, with_tasks=False):
        """Sum of ``fn(block, tables, *args, state)`` over the blocks, streamed from disk.

        Every block meets most workers when they vote often, so the blocks keep crowd-wide
        worker numbers, in :attr:`worker_order`: ``fn`` gets the whole per-worker ``tables``
        (rows in that order) and returns ``(per_worker_stats, other_stats, state)``, whose
        per-worker statistics (one row per worker, same order) and other statistics are summed
        over the blocks. A ``fn`` with an ``out`` keyword gets the running per-worker sums
        (after the first block) to add its statistics into, and returns None for them: no
        crowd-sized temporary per block. With ``stateful=True`` the block's state from the
        previous call (None at first) is passed in and the new one written next to the block.
        ``with_tasks=True`` also reads each block's original task ids (``block.tasks``).
        Returns ``(per_worker_totals, other_totals)``.
        """
        accumulates = "out" in inspect.signature(fn).parameters
        total = StatisticsSum(self.n_workers)
        for i, block, state in self._iter_loaded(with_tasks, with_state=stateful,
                                                 source_order=True):
            kwargs = {"out": total.per_worker} if accumulates and total.per_worker else {}
            per_worker, other, state = run_block(fn, block, tables, args, state, **kwargs)
            total.add(None, per_worker, other)
            if stateful:
                self._save_state(i, state)
            del per_worker
        return total.result()

    def map_tasks(self, fn, tables=(), args=(), *, stateful=False, columns=None):
        """``fn(block, tables, *args, state)`` of every block, concatenated in task order.

        ``tables`` rows follow :attr:`worker_order`. ``fn`` returns per-task arrays (or a tuple
        or dict of them); rows follow the blocks' task order, which is increasing task id.
        ``columns`` is ignored (see :meth:`DaskVotes.map_tasks`).
        """
        return concatenate_tasks([
            run_block(fn, block, tables, args, state)
            for _, block, state in self._iter_loaded(False, stateful, source_order=True)])

    def task_ids(self):
        """Original id of every task, in the order of :meth:`map_tasks` rows (increasing)."""
        return np.concatenate([self._load_tasks(i) for i in range(self.n_blocks)])

    def _load_tasks(self, i):
        pa, pc, ds = _pa()
        with pa.memory_map(str(self._dir / f"tasks-{i:06d}.arrow")) as src:
            return _numpy(pa.ipc.open_file(src).read_all().column(0).combine_chunks())

    def __iter__(self):
        return self.blocks(with_tasks=True)

    def close(self):
        """Delete the cache folder (also done when the object is garbage-collected)."""
        self._cleanup()
        self._dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _concat(pieces):
    pa, pc, ds = _pa()
    if len(pieces) == 1:
        return pieces[0]
    t = pa.concat_arrays([p[0] for p in pieces])
    return (t, *(np.concatenate([p[k] for p in pieces]) for k in (1, 2, 3)))


def _bucketed(dataset, scan, folder, block_votes, name):
    """Votes bucketed by task range on disk, then each bucket sorted: a task-sorted stream."""
    pa, pc, ds = _pa()
    n_buckets = int(min(_MAX_BUCKETS, max(1, -(-scan.n_votes // block_votes))))
    sample = np.sort(_numpy(scan.task_sample))
    splitters = np.unique(sample[(np.arange(1, n_buckets) * len(sample)) // n_buckets])
    schema = None
    sinks, writers = [], []
    try:
        for row, cols in _scan_batches(dataset, fingerprints=scan.fingerprints, name=name):
            batch = pa.record_batch(list(cols.values()), names=list(cols))
            if schema is None:
                schema = batch.schema
                for b in range(len(splitters) + 1):
                    sinks.append(pa.OSFile(str(folder / f"bucket-{b:05d}.arrow"), "wb"))
                    writers.append(pa.ipc.new_stream(sinks[-1], schema))
            bucket = np.searchsorted(splitters, _numpy(cols["task"]), side="right")
            order = np.argsort(bucket, kind="stable")
            bounds = np.searchsorted(bucket[order], np.arange(len(writers) + 1))
            batch = batch.take(pa.array(order))
            for b, w in enumerate(writers):
                if bounds[b + 1] > bounds[b]:
                    w.write_batch(batch.slice(bounds[b], bounds[b + 1] - bounds[b]))
    finally:
        for w in writers:
            w.close()
        for s in sinks:
            s.close()
    for b in range(len(writers)):
        path = folder / f"bucket-{b:05d}.arrow"
        with pa.OSFile(str(path), "rb") as src:
            table = pa.ipc.open_stream(src).read_all()
        path.unlink()
        table = table.sort_by([("task", "ascending")]).combine_chunks()
        for batch in table.to_batches(max_chunksize=_READ_ROWS):
            yield -1, {c: batch.column(c) for c in COLUMNS}
        del table
