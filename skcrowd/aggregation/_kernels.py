"""Per-block EM kernels of the Dawid-Skene and GLAD aggregators.

The EM loops never touch the votes themselves: each iteration hands the
current parameters to a kernel that processes the votes of a *block* of whole
tasks (all tasks of a fit, or one partition of them) and returns the block's
responsibilities, its log-likelihood and its sufficient statistics; the M-step
only sees statistics summed over blocks. In memory there is one block; an
out-of-core or distributed back end calls the same kernels on partitions and
adds up the per-worker statistics, which are indexed by the block's own worker
numbers (give each block the parameter rows of its workers).

A block is described by a :class:`BlockLayout`, built once from a
:class:`skcrowd.Votes` and reused by every kernel call.

Two engines compute the same numbers (to rounding, about 1e-12):

- ``"numba"`` (when numba is installed, extra ``skcrowd[fast]``): compiled
  loops, parallel over tasks for the per-task work and over workers for the
  per-worker sums. Each thread owns the rows it writes, and every sum runs in
  a fixed order, so results do not depend on the number of threads. The
  Dawid-Skene E-step is fused with its statistics: the tasks are cut into
  chunks of equal vote counts (their number depends on the block's size
  only: a power of two up to 16, each with about 24 and at least 2 votes
  per worker and label, their tables within 256 MB) and each chunk adds its
  votes' posteriors into its own copy of the per-worker count tables, summed
  at the end. When fewer than
  two chunks qualify, one fused pass runs on one thread, unless the tables
  outgrow the CPU caches (about 4 MB, many workers): then the counts are
  summed in parallel over the votes in worker order. Posteriors are
  normalized 64 tasks at a time, class-major, with an ``exp`` written as
  arithmetic the compiler vectorizes (libm's is a call per value): on 1e6
  votes this pass is 1.4 times faster than one task at a time. Loops index
  element by element with unsigned indices (no array views, no wrap-around
  of negative indices), 1.4 times faster again. A fit's
  passes keep only the statistics, not the posteriors. Blocks of fewer than
  ``PARALLEL_MIN_VOTES`` votes run on one thread: starting the threads costs
  more than the work (ten times more on a busy machine). On a machine busier
  than its cores, two threads are no faster than one (measured on a shared
  2-core machine); on an idle one they are about 1.8 times faster.
- ``"numpy"``: scipy.sparse products (Dawid-Skene) and ``np.bincount`` (GLAD).

The module attribute ``ENGINE`` selects the engine for later calls (it is
``"numba"`` when numba imports, else ``"numpy"``).

Log-probabilities are floored at the log of the smallest positive float
(about -708) so that an E-step never meets ``-inf - -inf``; every
normalization is a log-sum-exp.
"""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

try:  # optional dependency, extra "fast"
    import numba
except ImportError:  # pragma: no cover - exercised on installs without numba
    numba = None

__all__ = [
    "ENGINE",
    "naive_soft_labels",
    "row_argmax",
    "BlockLayout",
    "DSBlockStatistics",
    "GLADBlockStatistics",
    "ds_e_step",
    "ds_worker_counts",
    "ds_vote_share_counts",
    "ds_log_confusions",
    "ds_block_statistics",
    "glad_block_statistics",
    "glad_gradients",
    "glad_task_difficulties",
]

ENGINE = "numba" if numba is not None else "numpy"
PARALLEL_MIN_VOTES = 100_000
_MAX_CHUNKS = 16
_CHUNK_MEMORY = 256 * 2**20  # bytes of per-chunk count tables of the fused DS pass
_VOTES_PER_CELL = 24  # votes per count-table entry (worker, label) a fused DS chunk aims at
_CACHE_BYTES = 4 * 2**20  # count tables beyond this size: worker-order pass
_SOFTMAX_BATCH = 64  # tasks whose posteriors are normalized together (numba DS pass)
_E_STEP, _FUSED, _COUNTS, _VOTE_SHARES = 0, 1, 2, 3  # what a numba DS pass computes (_ds_chunk)
_LOG2_E = 1.4426950408889634
_LN2_HIGH = 6.93147180369123816490e-01  # ln(2) = _LN2_HIGH + _LN2_LOW, the first exact
_LN2_LOW = 1.90821492927058770002e-10  # in 32 bits (Cody-Waite)


# GLAD: bounds and stopping rule of the per-task Newton search on log(beta).
LOG_BETA_BOUND = 20.0
_NEWTON_MAX_EVALS = 100
_NEWTON_STEP_TOL = 1e-10
_NEWTON_MIN_SCALE = 2.0**-30


def _engine():
    if ENGINE not in ("numba", "numpy"):
        raise ValueError(
            f"skcrowd.aggregation._kernels.ENGINE must be 'numba' or 'numpy', got {ENGINE!r}."
        )
    if ENGINE == "numba" and numba is None:
        raise ImportError("ENGINE='numba' needs numba: pip install 'skcrowd[fast]'.")
    return ENGINE


def _parallel(layout):
    """Whether a block is large enough for the parallel numba drivers."""
    return layout.n_votes >= PARALLEL_MIN_VOTES


def safe_log(p):
    """``log(p)`` floored at ``log(tiny) ~ -708`` (no ``-inf``, no warning for zeros)."""
    return np.log(np.maximum(p, np.finfo(np.float64).tiny))


# ---------------------------------------------------------------------------
# Block layout
# ---------------------------------------------------------------------------


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

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation._kernels import BlockLayout
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

    @cached_property
    def task(self):
        """Task index of each vote (task order)."""
        return np.repeat(
            np.arange(self.n_tasks, dtype=self.worker.dtype), np.diff(self.task_indptr)
        )

    @cached_property
    def cell(self):
        """``worker * K + label`` of each vote (task order): the row of a vote in a
        ``(n_workers * K, K)`` view of per-worker tables laid out ``[worker, label, class]``."""
        index = _index_dtype(self.n_workers * self.n_classes)
        return self.worker.astype(index) * self.n_classes + self.label.astype(index)

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
        """CSR ``(n_tasks, n_workers * K)``: one 1 per vote, at column ``worker * K + label``."""
        cols = self.worker.astype(np.int64) * self.n_classes + self.label
        return sp.csr_array(
            (np.ones(self.n_votes), cols.astype(_index_dtype(self.n_workers * self.n_classes)),
             self.task_indptr),
            shape=(self.n_tasks, self.n_workers * self.n_classes),
        )

    @cached_property
    def indicator_t(self):
        """Transpose of :attr:`indicator`, as CSR."""
        return self.indicator.T.tocsr()


def _index_dtype(n):
    return np.int32 if n < np.iinfo(np.int32).max else np.int64


def _out(resp, layout):
    shape = (layout.n_tasks, layout.n_classes)
    if resp is None:
        return np.empty(shape)
    if resp.shape != shape or resp.dtype != np.float64 or not resp.flags.c_contiguous:
        raise ValueError(f"resp must be a C-contiguous float64 array of shape {shape}.")
    return resp


# ---------------------------------------------------------------------------
# Vote frequencies, most probable classes
# ---------------------------------------------------------------------------


def naive_soft_labels(task, label, n_tasks, empty_row, *, out=None):
    """Vote frequencies of each task (paper 002, eq. 6); ``empty_row`` for a task without votes.

    Parameters
    ----------
    task, label : ndarray of shape (n_votes,)
        Task and class index of each vote (any order).
    n_tasks : int
    empty_row : ndarray of shape (K,)
        Row of a task without votes.
    out : ndarray of shape (n_tasks, K), default=None
        C-contiguous float64 output buffer (allocated when None).

    Returns
    -------
    frequencies : ndarray of shape (n_tasks, K)

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._kernels import naive_soft_labels
    >>> naive_soft_labels(np.array([0, 0, 0]), np.array([1, 1, 0]), 2, np.array([0.5, 0.5]))
    array([[0.33333333, 0.66666667],
           [0.5       , 0.5       ]])
    """
    K = len(empty_row)
    out = np.empty((n_tasks, K)) if out is None else out
    empty_row = np.ascontiguousarray(empty_row, dtype=np.float64)
    if _engine() == "numba":
        _naive_soft_labels_serial(task, label, empty_row, out)
        return out
    key = task.astype(np.int64)
    key *= K
    key += label
    out.reshape(-1)[:] = np.bincount(key, minlength=n_tasks * K)
    del key
    total = out.sum(axis=1, keepdims=True)
    np.divide(out, total, out=out, where=total > 0)
    out[total[:, 0] == 0] = empty_row
    return out


def row_argmax(proba):
    """``np.argmax(proba, axis=1)`` of a 2-D float array (the first largest entry of each row).

    numpy runs one call per row: 6 ms for 2e5 rows of 10; the numba engine takes 0.3 ms.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._kernels import row_argmax
    >>> row_argmax(np.array([[0.2, 0.8], [0.5, 0.5]]))
    array([1, 0])
    """
    if _engine() == "numpy" or proba.ndim != 2 or proba.dtype != np.float64:
        return np.argmax(proba, axis=1)
    best = np.empty(proba.shape[0], dtype=np.intp)
    parallel = proba.size >= PARALLEL_MIN_VOTES
    (_row_argmax_parallel if parallel else _row_argmax_serial)(proba, best)
    return best


# ---------------------------------------------------------------------------
# Dawid-Skene
# ---------------------------------------------------------------------------


class DSBlockStatistics(NamedTuple):
    """Result of :func:`ds_block_statistics` for one block."""

    resp: np.ndarray | None
    """(n_tasks, K): posterior probability of each true class (None unless a buffer was given)."""
    worker_counts: np.ndarray
    """(n_workers, K, K): ``[j, l, k]`` = expected number of votes ``l`` by worker ``j`` on
    tasks of true class ``k``."""
    class_counts: np.ndarray
    """(K,): expected number of tasks of each true class."""
    log_likelihood: float
    """Sum over the block's tasks of ``log p(votes of task i)``."""


def ds_e_step(layout, log_confusions_t, log_class_priors, *, resp=None):
    """Dawid-Skene E-step of a block: posteriors and per-task log-likelihoods.

    Parameters
    ----------
    layout : BlockLayout
        The block's votes.
    log_confusions_t : ndarray of shape (n_workers, K, K), float64, C-contiguous
        ``[j, l, k] = log P(worker j answers l | true class k)``: the
        transposed log-confusion matrices, so that the ``K`` values one vote
        needs are contiguous.
    log_class_priors : ndarray of shape (K,)
        ``log P(true class k)``.
    resp : ndarray of shape (n_tasks, K), default=None
        Output buffer (allocated when None).

    Returns
    -------
    resp : ndarray of shape (n_tasks, K)
        ``P(true class k | votes of task i)``; a task without votes gets the
        class priors.
    task_log_likelihood : ndarray of shape (n_tasks,)
        ``log p(votes of task i)`` (0 for a task without votes).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation._kernels import BlockLayout, ds_e_step
    >>> layout = BlockLayout(check_votes(np.array([[0, 1]])))
    >>> log_conf_t = np.log(np.array([[0.9, 0.1], [0.1, 0.9]]))[None].repeat(2, 0)
    >>> resp, ll = ds_e_step(layout, log_conf_t, np.log([0.5, 0.5]))
    >>> resp, ll  # p(votes) = 0.5 * 0.9 * 0.1 + 0.5 * 0.1 * 0.9
    (array([[0.5, 0.5]]), array([-2.40794561]))
    """
    resp = _out(resp, layout)
    task_ll = np.empty(layout.n_tasks)
    log_confusions_t = np.ascontiguousarray(log_confusions_t, dtype=np.float64)
    log_class_priors = np.ascontiguousarray(log_class_priors, dtype=np.float64)
    if _engine() == "numba":
        _ds_pass(layout, _E_STEP, _MAX_CHUNKS if _parallel(layout) else 1, resp,
                 log_confusions_t, log_class_priors, task_ll)
        return resp, task_ll
    resp[:] = layout.indicator @ log_confusions_t.reshape(-1, layout.n_classes)
    resp += log_class_priors
    _normalize_log_rows(resp, task_ll)
    return resp, task_ll


def _normalize_log_rows(logits, log_norm):
    """In place: rows of ``logits`` -> softmax; ``log_norm`` <- their log-sum-exp."""
    top = logits.max(axis=1)
    logits -= top[:, None]
    np.exp(logits, out=logits)
    total = logits.sum(axis=1)
    logits /= total[:, None]
    np.log(total, out=log_norm)
    log_norm += top


def ds_worker_counts(layout, resp, *, out=None):
    """Expected per-worker confusion counts of a block for given posteriors.

    Parameters
    ----------
    layout : BlockLayout
    resp : ndarray of shape (n_tasks, K)
        Posterior (or any soft label) of each task.
    out : ndarray of shape (n_workers, K, K), default=None
        C-contiguous float64 counts to add this block's counts into (the
        running sum over the blocks of an out-of-core pass), instead of
        returning new ones.

    Returns
    -------
    worker_counts : ndarray of shape (n_workers, K, K)
        ``[j, l, k] = sum of resp[i, k] over the tasks i that worker j
        labelled l`` (``out`` when given).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation._kernels import BlockLayout, ds_worker_counts
    >>> layout = BlockLayout(check_votes(np.array([[0], [1]])))
    >>> ds_worker_counts(layout, np.array([[0.8, 0.2], [0.3, 0.7]]))[0]
    array([[0.8, 0.2],
           [0.3, 0.7]])
    """
    resp = np.require(resp, np.float64, ["C", "W"])  # the numba pass shares a writing kernel
    K = layout.n_classes
    if _engine() == "numpy":
        counts = (layout.indicator_t @ resp).reshape(layout.n_workers, K, K)
    elif _ds_n_chunks(layout):
        counts = _ds_pass(layout, _COUNTS, _ds_n_chunks(layout), resp)[0]
    else:  # worker order: each worker's rows written by one thread, added to in place
        indptr, _, task, label = layout.worker_order
        counts = np.empty((layout.n_workers, K, K)) if out is None else out
        _ds_worker_counts_parallel(indptr, task, label, resp, counts, out is None)
        return counts
    if out is None:
        return counts
    out += counts
    return out


def ds_vote_share_counts(layout, empty_row):
    """Dawid-Skene statistics of the naive soft labels (each task's vote frequencies).

    The same as ``ds_worker_counts(layout, naive_soft_labels(...))`` and the
    soft labels' column sums, without the soft labels: the numba engine
    computes each task's frequencies from its votes as it adds them (the
    initial statistics of ``DawidSkene(init="majority")``).

    Parameters
    ----------
    layout : BlockLayout
    empty_row : ndarray of shape (K,)
        Soft label of a task without votes.

    Returns
    -------
    worker_counts : ndarray of shape (n_workers, K, K)
    class_counts : ndarray of shape (K,)

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation._kernels import BlockLayout, ds_vote_share_counts
    >>> layout = BlockLayout(check_votes(np.array([[0, 1, 1], [-1, -1, -1]])))
    >>> counts, class_counts = ds_vote_share_counts(layout, np.array([0.5, 0.5]))
    >>> counts[0]  # worker 0 said 0 on a task whose votes are 1/3 class 0
    array([[0.33333333, 0.66666667],
           [0.        , 0.        ]])
    >>> class_counts
    array([0.83333333, 1.16666667])
    """
    empty_row = np.ascontiguousarray(empty_row, dtype=np.float64)
    n_chunks = _ds_n_chunks(layout) if _engine() == "numba" else 0
    if n_chunks:
        counts, class_counts, _ = _ds_pass(layout, _VOTE_SHARES, n_chunks, None,
                                           log_class_priors=empty_row)
        return counts, class_counts
    resp = naive_soft_labels(layout.task, layout.label, layout.n_tasks, empty_row)
    return ds_worker_counts(layout, resp), resp.sum(axis=0)


def ds_log_confusions(worker_counts, pseudo_counts):
    """Dawid-Skene M-step of the confusion matrices, in place on the summed counts.

    Parameters
    ----------
    worker_counts : ndarray of shape (n_workers, K, K), float64, C-contiguous
        Expected counts ``[j, l, k]`` (see :func:`ds_worker_counts`), summed over
        the blocks; overwritten by the result.
    pseudo_counts : ndarray of shape (K, K)
        Dirichlet pseudo-counts ``[k, l]`` of confusion row ``k``.

    Returns
    -------
    log_confusions_t : ndarray of shape (n_workers, K, K)
        ``worker_counts``, now ``[j, l, k] = log P(worker j answers l | true class k)``:
        the counts plus pseudo-counts normalized over ``l`` (a class ``k`` without mass,
        possible only without pseudo-counts, gets the uniform row), floored at the
        smallest float as in :func:`safe_log`.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._kernels import ds_log_confusions
    >>> counts = np.array([[[3.0, 0.0], [1.0, 0.0]]])  # [j, l, k]: 4 tasks of class 0
    >>> np.exp(ds_log_confusions(counts, np.zeros((2, 2))))
    array([[[0.75, 0.5 ],
            [0.25, 0.5 ]]])
    """
    K = worker_counts.shape[-1]
    pseudo_t = np.ascontiguousarray(np.asarray(pseudo_counts, dtype=np.float64).T)
    if _engine() == "numba":
        parallel = worker_counts.size >= PARALLEL_MIN_VOTES
        (_ds_normalize_parallel if parallel else _ds_normalize_serial)(worker_counts, pseudo_t)
    else:
        worker_counts += pseudo_t
        total = worker_counts.sum(axis=1, keepdims=True)
        np.divide(worker_counts, total, out=worker_counts, where=total > 0)
        worker_counts.transpose(0, 2, 1)[total[:, 0, :] <= 0] = 1.0 / K
        np.maximum(worker_counts, np.finfo(np.float64).tiny, out=worker_counts)
    return np.log(worker_counts, out=worker_counts)  # numpy's log is vectorized, numba's is not


def _ds_n_chunks(layout):
    """Chunks of the fused numba pass (0: sum the counts in worker order instead).

    A power of two (as many chunks per thread on 2, 4, 8 or 16 cores), up to 16, with
    ``_VOTES_PER_CELL`` votes per count-table entry where there are enough votes (the
    per-chunk tables cost their zeroing and summing: on 1e6 votes of 1000 workers, 4 chunks
    are 10 % faster than 12), but at least 2: with 2 chunks of 5 votes per entry (1e6 votes
    of 1e4 workers, or 1e7 of 1e5) the fused pass is 1.3 times faster than the worker-order
    counts; with 2 chunks of 0.5 it is 1.1 times slower.
    """
    if layout.n_votes < PARALLEL_MIN_VOTES:
        return 1
    K = layout.n_classes
    cells = layout.n_workers * K
    table = 8 * cells * K
    most = min(_MAX_CHUNKS, layout.n_votes // (2 * cells), _CHUNK_MEMORY // table)
    if most >= 2:
        n = min(most, max(2, layout.n_votes // (_VOTES_PER_CELL * cells)))
        return 1 << (n.bit_length() - 1)
    return 0 if table > _CACHE_BYTES else 1


def _ds_pass(layout, mode, n_chunks, resp, log_confusions_t=None, log_class_priors=None,
             task_ll=None):
    """A numba pass over the block's tasks, in ``n_chunks`` chunks of equal vote counts.

    ``mode`` and the arrays are those of ``_ds_chunk``; returns ``(worker_counts,
    class_counts, log_likelihood)``, the counts summed over the chunks (None for ``_E_STEP``).
    """
    K = layout.n_classes
    counted = mode != _E_STEP
    shape = (n_chunks, layout.n_workers * K, K) if counted else (n_chunks, 0, K)
    counts = layout.scratch("ds_counts", shape)
    class_counts = np.empty((n_chunks, K))
    log_liks = np.empty(n_chunks)
    if log_confusions_t is None:  # typed placeholder: _COUNTS and _VOTE_SHARES do not read it
        log_confusions_t = np.zeros((1, 1, K))
    if log_class_priors is None:
        log_class_priors = np.zeros(K)
    kernel = _ds_chunks_parallel if n_chunks > 1 else _ds_chunks_serial
    kernel(layout.task_indptr, layout.cell, log_confusions_t.reshape(-1, K), log_class_priors,
           np.empty((0, K)) if resp is None else resp,
           np.empty(0) if task_ll is None else task_ll,
           layout.chunk_bounds(n_chunks), counts, class_counts, log_liks, mode)
    if not counted:
        return None, None, float(log_liks.sum())
    return (counts.sum(axis=0).reshape(layout.n_workers, K, K), class_counts.sum(axis=0),
            float(log_liks.sum()))


def ds_block_statistics(layout, log_confusions_t, log_class_priors, *, resp=None,
                        worker_counts=None):
    """Dawid-Skene E-step of a block fused with its sufficient statistics.

    One call is everything an EM iteration needs from a block: the M-step
    (see :class:`skcrowd.aggregation.DawidSkene`) only uses the returned
    ``worker_counts`` and ``class_counts``, summed over blocks.

    Parameters
    ----------
    layout : BlockLayout
        The block's votes.
    log_confusions_t : ndarray of shape (n_workers, K, K)
        ``[j, l, k] = log P(worker j answers l | true class k)``.
    log_class_priors : ndarray of shape (K,)
        ``log P(true class k)``.
    resp : ndarray of shape (n_tasks, K), default=None
        Output buffer for the responsibilities; when None they are not kept
        (an EM iteration needs only the statistics).
    worker_counts : ndarray of shape (n_workers, K, K), default=None
        Counts to add this block's counts into (see :func:`ds_worker_counts`).

    Returns
    -------
    DSBlockStatistics
        ``(resp, worker_counts, class_counts, log_likelihood)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation._kernels import BlockLayout, ds_block_statistics
    >>> layout = BlockLayout(check_votes(np.array([[0, 0], [1, 1]])))
    >>> log_conf_t = np.log(np.array([[0.9, 0.1], [0.1, 0.9]]))[None].repeat(2, 0)
    >>> stats = ds_block_statistics(layout, log_conf_t, np.log([0.5, 0.5]), resp=np.empty((2, 2)))
    >>> stats.resp.round(4)
    array([[0.9878, 0.0122],
           [0.0122, 0.9878]])
    >>> stats.class_counts, round(stats.log_likelihood, 4)
    (array([1., 1.]), -1.7832)
    """
    n_chunks = _ds_n_chunks(layout) if _engine() == "numba" else 0
    if n_chunks:
        counts, class_counts, log_lik = _ds_pass(
            layout, _FUSED, n_chunks, None if resp is None else _out(resp, layout),
            np.ascontiguousarray(log_confusions_t, dtype=np.float64),
            np.ascontiguousarray(log_class_priors, dtype=np.float64),
        )
        if worker_counts is None:
            worker_counts = counts
        else:
            worker_counts += counts
    else:
        posteriors, task_ll = ds_e_step(layout, log_confusions_t, log_class_priors, resp=resp)
        worker_counts = ds_worker_counts(layout, posteriors, out=worker_counts)
        class_counts, log_lik = posteriors.sum(axis=0), float(task_ll.sum())
    return DSBlockStatistics(
        resp=resp,
        worker_counts=worker_counts,
        class_counts=class_counts,
        log_likelihood=log_lik,
    )


# ---------------------------------------------------------------------------
# GLAD
# ---------------------------------------------------------------------------


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


def glad_block_statistics(layout, abilities, log_betas, log_class_priors, *, resp=None):
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

    Returns
    -------
    GLADBlockStatistics

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation._kernels import BlockLayout, glad_block_statistics
    >>> layout = BlockLayout(check_votes(np.array([[0, 0, 1]])))
    >>> st = glad_block_statistics(layout, np.array([1.0, 1.0, 1.0]), np.zeros(1),
    ...                            np.log([0.5, 0.5]))
    >>> st.resp.round(4)
    array([[0.7311, 0.2689]])
    """
    resp = _out(resp, layout)
    abilities = np.ascontiguousarray(abilities, dtype=np.float64)
    log_betas = np.ascontiguousarray(log_betas, dtype=np.float64)
    log_class_priors = np.ascontiguousarray(log_class_priors, dtype=np.float64)
    task_ll = np.empty(layout.n_tasks)
    grad_b = np.empty(layout.n_tasks)
    curv_b = np.empty(layout.n_tasks)
    if _engine() == "numba":
        indptr, position, _, _ = layout.worker_order
        per_vote = layout.scratch("glad_per_vote", (2, layout.n_votes))
        worker_sums = np.empty((2, layout.n_workers))
        parallel = _parallel(layout)
        (_glad_e_step_parallel if parallel else _glad_e_step_serial)(
            layout.task_indptr, layout.worker, layout.label, position, abilities, log_betas,
            log_class_priors, resp, task_ll, grad_b, curv_b, per_vote,
        )
        (_segment_sums_parallel if parallel else _segment_sums_serial)(
            indptr, per_vote, worker_sums)
        grad_a, curv_a = worker_sums
    else:
        grad_a, curv_a = _glad_e_step_numpy(
            layout, abilities, log_betas, log_class_priors, resp, task_ll, grad_b, curv_b
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


def _glad_logits(layout, log_right, log_not_right, log_class_priors, logits):
    """logits[i, k] = log P(true class k) + sum over task i's votes of log P(vote | k)."""
    K = layout.n_classes
    log_wrong = log_not_right - np.log(max(K - 1, 1))
    logits[:] = np.bincount(
        layout.task.astype(np.int64) * K + layout.label, weights=log_right - log_wrong,
        minlength=layout.n_tasks * K,
    ).reshape(layout.n_tasks, K)
    logits += np.bincount(layout.task, weights=log_wrong, minlength=layout.n_tasks)[:, None]
    logits += log_class_priors


def _glad_e_step_numpy(layout, abilities, log_betas, log_class_priors, resp, task_ll, grad_b,
                       curv_b):
    z, log_right, log_not_right, sig, var = _glad_vote_terms(layout, abilities, log_betas)
    _glad_logits(layout, log_right, log_not_right, log_class_priors, resp)
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
    >>> from skcrowd.aggregation._kernels import BlockLayout, glad_gradients
    >>> layout = BlockLayout(check_votes(np.array([[0, 1]])))
    >>> grad_a, _, grad_b, _ = glad_gradients(layout, np.array([[1.0, 0.0]]), np.zeros(2),
    ...                                       np.zeros(1))
    >>> grad_a, grad_b  # worker 0 was right (q=1), worker 1 wrong (q=0); sigmoid(0) = 0.5
    (array([ 0.5, -0.5]), array([0.]))
    """
    z, _, _, sig, var = _glad_vote_terms(layout, abilities, log_betas)
    return _glad_gradients_numpy(layout, resp, z, sig, var, log_betas)


def glad_task_difficulties(layout, abilities, log_class_priors, *, prior_scale=1.0, resp=None):
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
    >>> from skcrowd.aggregation._kernels import BlockLayout, glad_task_difficulties
    >>> layout = BlockLayout(check_votes(np.array([[0, 0, 0], [0, 1, -1]])))
    >>> resp, log_betas, ll = glad_task_difficulties(layout, np.ones(3), np.log([0.5, 0.5]))
    >>> log_betas.round(3)  # unanimous: easier (larger beta); split: harder
    array([ 0.698, -0.275])
    """
    resp = _out(resp, layout)
    abilities = np.ascontiguousarray(abilities, dtype=np.float64)
    log_class_priors = np.ascontiguousarray(log_class_priors, dtype=np.float64)
    log_betas = np.zeros(layout.n_tasks)
    task_ll = np.empty(layout.n_tasks)
    if _engine() == "numba":
        kernel = _glad_difficulties_parallel if _parallel(layout) else _glad_difficulties_serial
        kernel(layout.task_indptr, layout.worker, layout.label, abilities, log_class_priors,
               float(prior_scale), resp, log_betas, task_ll)
    else:
        _glad_difficulties_numpy(layout, abilities, log_class_priors, float(prior_scale), resp,
                                 log_betas, task_ll)
    return resp, log_betas, task_ll


def _newton_proposal(grad, hess, fisher, scale):
    """Safeguarded Newton step on a maximization problem (vectorized)."""
    step = np.where(hess < 0, -grad / np.where(hess < 0, hess, -1.0), grad / fisher)
    return np.clip(step, -1.0, 1.0) * scale


def _glad_profile_numpy(layout, abilities, log_class_priors, prior_scale, log_betas, logits,
                        task_ll):
    """Objective, gradient, curvature and Fisher curvature of every task's f(b)."""
    K = layout.n_classes
    z, log_right, log_not_right, sig, var = _glad_vote_terms(layout, abilities, log_betas)
    _glad_logits(layout, log_right, log_not_right, log_class_priors, logits)
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


def _glad_difficulties_numpy(layout, abilities, log_class_priors, prior_scale, resp, log_betas,
                             task_ll):
    n = layout.n_tasks
    f, grad, hess, fisher = _glad_profile_numpy(
        layout, abilities, log_class_priors, prior_scale, log_betas, resp, task_ll
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
            layout, abilities, log_class_priors, prior_scale, trial, trial_resp, trial_ll
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


def _jit(func=None, **options):
    """``numba.njit(**options)`` (parallel by default), cached on disk where a cache directory
    is writable: the package's ``__pycache__``, else numba's user-wide cache (a read-only
    install); compiled in every process when neither is writable."""
    if func is None:
        return lambda f: _jit(f, **options)
    options = {"parallel": True, **options}
    try:
        return numba.njit(cache=True, **options)(func)
    except RuntimeError:  # no writable cache location
        return numba.njit(**options)(func)


if numba is not None:
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    prange = numba.prange

    # Each kernel is a per-unit body (a task, a chunk of tasks) compiled once, and two
    # drivers that loop over the units: ``*_serial`` (small blocks) and ``*_parallel``.
    # Choosing the driver never changes numba's thread count, which with the OpenMP
    # threading layer would also change the thread count of torch in the same process.

    @intrinsic
    def _pow2(typingctx, n):
        """``2.0 ** n`` for an int64 ``n`` in [-1022, 1023], written as the bits of a float64."""

        def codegen(context, builder, signature, args):
            biased = builder.add(args[0], ir.Constant(ir.IntType(64), 1023))
            bits = builder.shl(biased, ir.Constant(ir.IntType(64), 52))
            return builder.bitcast(bits, ir.DoubleType())

        return types.float64(types.int64), codegen

    @_jit(parallel=False, inline="always", fastmath={"contract"})
    def _exp_nonpositive(x):
        """``exp(x)`` for ``x <= 0``, within 1e-15 relative (values below ``exp(-708)`` give
        ``exp(-708)``, negligible next to the 1 of a softmax's largest term).

        Straight-line arithmetic (Cody-Waite reduction to ``|r| <= ln(2) / 2``, then the degree
        13 Taylor polynomial of ``exp(r)``, whose remainder is below 2e-16, in fused
        multiply-adds) that the compiler vectorizes; libm's ``exp`` is one call per value, five
        times slower here.
        """
        x = max(x, -708.0)
        n = np.floor(x * _LOG2_E + 0.5)
        r = (x - n * _LN2_HIGH) - n * _LN2_LOW
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        return p * _pow2(np.int64(n))

    @_jit(parallel=False, inline="always", fastmath={"contract"})
    def _softmax_columns(rows, n, logits, top, total):
        """Rows ``0..n-1`` of ``rows`` (batch, K) -> softmax, in place, through ``logits``.

        The rows are copied class-major into ``logits`` (K, batch), so that every step runs
        across the tasks of the batch (vectorized), not along one task's few classes.
        ``top[b]`` gets each row's largest logit and ``total[b]`` the inverse of its sum of
        ``exp(logit - top)``; returns ``sum_b top[b] - log(total[b])``, the sum of the rows'
        log-sum-exp (one ``log`` per batch: the sums are multiplied, each in ``[1, K]``).
        """
        K = logits.shape[0]
        for k in range(K):
            for b in range(n):
                logits[k, b] = rows[b, k]
        for b in range(n):
            top[b] = logits[0, b]
            total[b] = 0.0
        for k in range(1, K):
            for b in range(n):
                top[b] = max(top[b], logits[k, b])
        for k in range(K):
            for b in range(n):
                e = _exp_nonpositive(logits[k, b] - top[b])
                logits[k, b] = e
                total[b] += e
        log_sum, product = 0.0, 1.0
        for b in range(n):
            log_sum += top[b]
            product *= total[b]
            if product > 1e250:
                log_sum += np.log(product)
                product = 1.0
            total[b] = 1.0 / total[b]
        for k in range(K):
            for b in range(n):
                rows[b, k] = logits[k, b] * total[b]
        return log_sum + np.log(product)

    @_jit(parallel=False, fastmath={"contract"})
    def _ds_chunk(first, stop, indptr, cell, log_conf_t, log_prior, resp, task_ll, counts,
                  class_counts, mode):
        """Tasks ``first..stop-1`` of a block, ``_SOFTMAX_BATCH`` at a time; by ``mode``:

        - ``_E_STEP``: their posteriors into ``resp`` and log-likelihoods into ``task_ll``;
        - ``_FUSED``: E-step, its posteriors added into ``counts`` and ``class_counts``
          (zeroed first) and also stored in ``resp`` when it has rows;
        - ``_COUNTS``: the posteriors already in ``resp`` added into the zeroed counts;
        - ``_VOTE_SHARES``: each task's vote frequencies (``log_prior`` for a task without
          votes) added into the zeroed counts.

        ``log_conf_t`` and ``counts`` are ``(n_workers * K, K)`` views of ``[worker, label,
        class]`` tables, whose row ``cell[v]`` is the one vote ``v`` reads or adds to.
        Returns the sum of the tasks' log-likelihoods (0 for ``_COUNTS`` and ``_VOTE_SHARES``).

        Every loop indexes with plain element loops and unsigned indices: no array views, no
        negative-index wrap-around (together 1.4 times faster than with them).
        """
        K = log_prior.shape[0]
        B = _SOFTMAX_BATCH
        rows = np.empty((B, K))
        logits = np.empty((K, B))
        top = np.empty(B)
        total = np.empty(B)
        store = resp.shape[0] > 0
        if mode != _E_STEP:
            counts[:] = 0.0
            class_counts[:] = 0.0
        log_lik = 0.0
        for start in range(first, stop, B):
            n = min(B, stop - start)
            if mode == _COUNTS:
                for b in range(n):
                    for k in range(K):
                        rows[b, k] = resp[start + b, k]
            elif mode == _VOTE_SHARES:
                for b in range(n):
                    i = start + b
                    for k in range(K):
                        rows[b, k] = 0.0
                    for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                        rows[b, np.uint64(cell[v]) % np.uint64(K)] += 1.0
                    _counts_to_shares(rows, b, float(indptr[i + 1] - indptr[i]), log_prior)
            else:
                for b in range(n):
                    i = start + b
                    for k in range(K):
                        rows[b, k] = log_prior[k]
                    for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                        c = np.uint64(cell[v])
                        for k in range(K):
                            rows[b, k] += log_conf_t[c, k]
                log_lik += _softmax_columns(rows, n, logits, top, total)
                if store:
                    for b in range(n):
                        for k in range(K):
                            resp[start + b, k] = rows[b, k]
                if mode == _E_STEP:
                    for b in range(n):
                        task_ll[start + b] = top[b] - np.log(total[b])  # total holds 1 / sum
                    continue
            for b in range(n):
                i = start + b
                for k in range(K):
                    class_counts[k] += rows[b, k]
                for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    c = np.uint64(cell[v])
                    for k in range(K):
                        counts[c, k] += rows[b, k]
        return log_lik

    @_jit(parallel=False)
    def _ds_chunks_serial(indptr, cell, log_conf_t, log_prior, resp, task_ll, bounds, counts,
                          class_counts, log_liks, mode):
        for c in range(bounds.shape[0] - 1):
            log_liks[c] = _ds_chunk(bounds[c], bounds[c + 1], indptr, cell, log_conf_t,
                                    log_prior, resp, task_ll, counts[c], class_counts[c], mode)

    @_jit
    def _ds_chunks_parallel(indptr, cell, log_conf_t, log_prior, resp, task_ll, bounds, counts,
                            class_counts, log_liks, mode):
        for c in prange(bounds.shape[0] - 1):
            log_liks[c] = _ds_chunk(bounds[c], bounds[c + 1], indptr, cell, log_conf_t,
                                    log_prior, resp, task_ll, counts[c], class_counts[c], mode)

    @_jit
    def _ds_worker_counts_parallel(worker_indptr, task, label, resp, counts, zero):
        """counts[j] (+)= the counts of worker j's votes; zeroed first when ``zero``."""
        K = resp.shape[1]
        for j in prange(worker_indptr.shape[0] - 1):
            table = counts[j]
            if zero:
                table[:] = 0.0
            for p in range(worker_indptr[j], worker_indptr[j + 1]):
                r = resp[task[p]]
                row = table[label[p]]
                for k in range(K):
                    row[k] += r[k]

    @_jit(parallel=False)
    def _ds_normalize_worker(counts, pseudo_t, j):
        """In place: worker ``j``'s counts ``[j, a, k]`` (``a`` the answer) plus ``pseudo_t``,
        normalized over ``a`` (uniform for a ``k`` without mass), floored at the smallest
        positive float."""
        K = counts.shape[2]
        tiny = np.finfo(np.float64).tiny
        for k in range(K):
            total = 0.0
            for a in range(K):
                counts[j, a, k] += pseudo_t[a, k]
                total += counts[j, a, k]
            if total > 0:
                for a in range(K):
                    counts[j, a, k] = max(counts[j, a, k] / total, tiny)
            else:
                for a in range(K):
                    counts[j, a, k] = 1.0 / K

    @_jit(parallel=False)
    def _ds_normalize_serial(counts, pseudo_t):
        for j in range(counts.shape[0]):
            _ds_normalize_worker(counts, pseudo_t, j)

    @_jit
    def _ds_normalize_parallel(counts, pseudo_t):
        for j in prange(counts.shape[0]):
            _ds_normalize_worker(counts, pseudo_t, j)

    @_jit(parallel=False, inline="always")
    def _counts_to_shares(rows, i, n_votes, empty_row):
        """Row ``i`` of ``rows``, the class counts of a task's ``n_votes`` votes -> their
        shares (``empty_row`` for a task without votes)."""
        if n_votes > 0:
            for k in range(rows.shape[1]):
                rows[i, k] /= n_votes
        else:
            for k in range(rows.shape[1]):
                rows[i, k] = empty_row[k]

    @_jit(parallel=False)
    def _naive_soft_labels_serial(task, label, empty_row, out):
        """``out`` <- vote frequencies of each task (``empty_row`` for a task without votes)."""
        out[:] = 0.0
        for v in range(task.shape[0]):
            out[task[v], label[v]] += 1.0
        for i in range(out.shape[0]):
            n_votes = 0.0
            for k in range(out.shape[1]):
                n_votes += out[i, k]
            _counts_to_shares(out, i, n_votes, empty_row)

    @_jit(parallel=False, inline="always")
    def _argmax_of_row(proba, i):
        best = 0
        for k in range(1, proba.shape[1]):
            if proba[i, k] > proba[i, best]:
                best = k
        return best

    @_jit(parallel=False)
    def _row_argmax_serial(proba, best):
        for i in range(proba.shape[0]):
            best[i] = _argmax_of_row(proba, i)

    @_jit
    def _row_argmax_parallel(proba, best):
        for i in prange(proba.shape[0]):
            best[i] = _argmax_of_row(proba, i)

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
    def _softmax_row(row, log_prior, shift):
        """In place: row <- softmax(row + shift + log_prior); returns the log-sum-exp."""
        K = row.shape[0]
        top = -np.inf
        for k in range(K):
            row[k] += shift + log_prior[k]
            top = max(top, row[k])
        total = 0.0
        for k in range(K):
            row[k] = np.exp(row[k] - top)
            total += row[k]
        for k in range(K):
            row[k] /= total
        return top + np.log(total)

    @_jit(parallel=False)
    def _glad_task_e_step(i, indptr, worker, label, position, abilities, log_betas, log_prior,
                          resp, task_ll, grad_b, curv_b, per_vote):
        """Posterior of task i, its log-likelihood and gradient pieces (per vote for workers)."""
        K = log_prior.shape[0]
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
        task_ll[i] = _softmax_row(row, log_prior, wrong_total)
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
    def _segment_sum(values, start, stop, out, j):
        """out[:, j] <- sums of the two rows of values over start..stop-1."""
        s0 = 0.0
        s1 = 0.0
        for p in range(start, stop):
            s0 += values[0, p]
            s1 += values[1, p]
        out[0, j] = s0
        out[1, j] = s1

    @_jit(parallel=False)
    def _segment_sums_serial(indptr, values, out):
        for j in range(indptr.shape[0] - 1):
            _segment_sum(values, indptr[j], indptr[j + 1], out, j)

    @_jit
    def _segment_sums_parallel(indptr, values, out):
        for j in prange(indptr.shape[0] - 1):
            _segment_sum(values, indptr[j], indptr[j + 1], out, j)

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
        """Safeguarded Newton search of the MAP log(beta) of tasks first..stop-1."""
        K = log_prior.shape[0]
        inv_var = 1.0 / (prior_scale * prior_scale)
        log_km1 = np.log(max(K - 1, 1))
        scratch = np.empty(K)
        trial_row = np.empty(K)
        for i in range(first, stop):
            start, end = indptr[i], indptr[i + 1]
            row = resp[i]
            b = 0.0
            f, g, h, fi, ll = _glad_profile_task(start, end, worker, label, abilities, log_prior,
                                                 inv_var, log_km1, b, row, scratch)
            scale = 1.0
            for _ in range(_NEWTON_MAX_EVALS):
                step = -g / h if h < 0 else g / fi
                step = min(max(step, -1.0), 1.0) * scale
                if abs(step) < _NEWTON_STEP_TOL:
                    break
                trial = min(max(b + step, -LOG_BETA_BOUND), LOG_BETA_BOUND)
                f_t, g_t, h_t, fi_t, ll_t = _glad_profile_task(
                    start, end, worker, label, abilities, log_prior, inv_var, log_km1, trial,
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
