"""Numerics shared by the kernels of every model.

- the engine: :func:`_engine` reads the package's switch
  (``skcrowd.aggregation.kernels.ENGINE``) at every call and resolves
  ``"auto"`` by the number of votes (:func:`engine_for_votes`, the fit's choice
  set by :func:`fit_engine`); ``numba`` is None when it does not import, and
  :func:`_jit` compiles (and caches) a numba kernel;
- :class:`BlockLayout` (defined in ``skcrowd._layout``, beside the votes, so
  that the backends below the kernels build it without importing them): the
  index arrays of a block's votes, built once per fit, with work arrays kept
  between calls (:meth:`BlockLayout.scratch`) and chunks of whole tasks with
  equal vote counts (:meth:`BlockLayout.chunk_bounds`); :func:`_fused_chunks`
  chooses how many a fused pass uses;
- the thresholds of the parallel drivers (:func:`_parallel`,
  ``PARALLEL_MIN_VOTES``);
- log space: :func:`safe_log`, the numpy log-sum-exp of a table's rows
  (:func:`_normalize_log_rows`) and the numba ones (``_softmax_row``, one
  task; ``_softmax_columns``, a batch of tasks through ``_exp_nonpositive``,
  an ``exp`` the compiler vectorizes);
- :func:`naive_soft_labels` (vote frequencies) and :func:`row_argmax`;
- variational Bayes on parameter tables: :func:`dirichlet_expected_log` and
  :func:`dirichlet_kl` (a Beta is a Dirichlet of two);
- ``_segment_sums_*``: per-worker sums of per-vote values listed in worker
  order (the per-worker half of an M-step's statistics).
"""

from __future__ import annotations

import contextlib
import contextvars
import sys

import numpy as np

from ..._optional import import_optional
from ..._layout import BlockLayout  # noqa: F401 - the kernels' layout, re-exported by kernels

try:  # optional dependency, extra "fast"
    import numba
except ImportError:  # pragma: no cover - exercised on installs without numba
    numba = None

PARALLEL_MIN_VOTES = 100_000
_MAX_CHUNKS = 16
_CHUNK_MEMORY = 256 * 2**20  # bytes of the per-chunk count tables of a fused pass
_VOTES_PER_CELL = 24  # votes per count-table row a fused chunk aims at
_CACHE_BYTES = 4 * 2**20  # count tables beyond this size: no fused pass
_LOG2_E = 1.4426950408889634
_LN2_HIGH = 6.93147180369123816490e-01  # ln(2) = _LN2_HIGH + _LN2_LOW, the first exact
_LN2_LOW = 1.90821492927058770002e-10  # in 32 bits (Cody-Waite)


# ENGINE="auto": numba from this many votes, numpy below. At fewer votes numba's compilation at
# a fresh install (3.6 s for DawidSkene, 7.9 s for GLAD) costs more than a whole numpy fit takes,
# and a numpy fit is well below a second; measured by benchmarks/first_fit.py (see
# doc/benchmarks.rst, "First fits").
AUTO_NUMBA_MIN_VOTES = 1_000_000
_ENGINES = ("auto", "numba", "numpy")
_FIT_ENGINE = contextvars.ContextVar("skcrowd_fit_engine", default=None)
_NUMPY_ONLY = contextvars.ContextVar("skcrowd_numpy_only", default=False)


def _switch():
    ENGINE = sys.modules[__package__].ENGINE  # the package's switch, read at every call

    if ENGINE not in _ENGINES:
        raise ValueError(
            "skcrowd.aggregation.kernels.ENGINE must be 'auto', 'numba' or 'numpy', got "
            f"{ENGINE!r}."
        )
    if ENGINE == "numba" and numba is None:
        import_optional("numba", "ENGINE='numba'")  # raises, naming the extra
    return ENGINE


def engine_for_votes(n_votes, *, numpy_while_cold=True):
    """The engine that the package's ``ENGINE`` gives a fit of ``n_votes`` votes.

    ``"numba"`` or ``"numpy"`` as set; ``"auto"`` (the default): ``"numba"`` from
    ``AUTO_NUMBA_MIN_VOTES`` votes when numba imports and its kernels are compiled (in numba's
    on-disk cache), else ``"numpy"``; a fit that finds them uncompiled starts their compile in
    a background process (see ``_compile``; ``BACKGROUND_COMPILE=False``: numba from the
    threshold, compiling at the first call). ``numpy_while_cold=False`` (a model whose numpy
    fit takes longer than compiling, EBCC) gives numba from the threshold even so, compiling
    at the first call, and starts the background compile of the other kernels all the same.
    Both engines compute the same numbers (to rounding, about 1e-12), so a fit's result does
    not depend on which one ran.

    Examples
    --------
    >>> from skcrowd.aggregation.kernels import engine_for_votes
    >>> engine_for_votes(10_000)
    'numpy'
    """
    engine = _switch()
    if engine != "auto":
        return engine
    if numba is None or n_votes < AUTO_NUMBA_MIN_VOTES:
        return "numpy"
    # the package's _compile module, read at the call (as ENGINE is): _compile reads this module
    compile_state = sys.modules[__package__]._compile
    return "numba" if compile_state.numba_ready() or not numpy_while_cold else "numpy"


@contextlib.contextmanager
def fit_engine(n_votes, *, numpy_while_cold=True):
    """Within the block, the kernels of ``ENGINE="auto"`` run the engine of a fit of
    ``n_votes`` votes (:func:`engine_for_votes`, with ``numpy_while_cold``), whatever the size
    of each call (a block of an out-of-core fit, a table of parameters): one engine for the
    whole fit."""
    token = _FIT_ENGINE.set(engine_for_votes(n_votes, numpy_while_cold=numpy_while_cold))
    try:
        yield
    finally:
        _FIT_ENGINE.reset(token)


@contextlib.contextmanager
def numpy_engine(active=True):
    """Within the block (when ``active``), every kernel runs its numpy engine, whatever
    ``ENGINE`` says: only the numpy kernels read the votes' weights (soft votes,
    :attr:`BlockLayout.weight`), so an estimator runs weighted votes within it."""
    token = _NUMPY_ONLY.set(bool(active) or _NUMPY_ONLY.get())
    try:
        yield
    finally:
        _NUMPY_ONLY.reset(token)


def _engine(n_votes=None):
    """The engine of this call: the package's ``ENGINE``, read now (one switch for all models).

    ``"auto"`` gives the engine of the fit in progress (:func:`fit_engine`), else that of a
    call on ``n_votes`` votes (:func:`engine_for_votes`; numpy for a call that does not say).
    Within :func:`numpy_engine`, numpy.
    """
    if _NUMPY_ONLY.get():
        return "numpy"
    engine = _switch()
    if engine != "auto":
        return engine
    chosen = _FIT_ENGINE.get()
    if chosen is not None:
        return chosen
    return "numpy" if n_votes is None else engine_for_votes(n_votes)


def _parallel(n):
    """Whether ``n`` values (a block's votes, a table's entries) are enough for the parallel
    numba drivers."""
    return n >= PARALLEL_MIN_VOTES


def safe_log(p):
    """``log(p)`` floored at ``log(tiny) ~ -708`` (no ``-inf``, no warning for zeros)."""
    return np.log(np.maximum(p, np.finfo(np.float64).tiny))


def _normalize_log_rows(logits, log_norm):
    """In place: rows of ``logits`` -> softmax; ``log_norm`` <- their log-sum-exp."""
    top = _row_reduce(np.maximum, logits)
    logits -= top[:, None]
    np.exp(logits, out=logits)
    total = _row_reduce(np.add, logits)
    logits /= total[:, None]
    np.log(total, out=log_norm)
    log_norm += top


def _row_reduce(ufunc, a):
    """``ufunc.reduce(a, axis=1)`` (``np.maximum`` or ``np.add``) of a 2-D float array, column
    after column for short rows: the maxima of rows of up to 32 entries, the sums of rows of
    fewer than 8.

    numpy reduces short rows slowly (20000 rows of 2: 1.9 ms for the maxima, 0.8 ms for the
    sums, against 0.02 ms column after column; of 20: 2.5 ms against 1.5 ms for the maxima),
    the cost of the EM E-steps' normalization. A maximum is the same in any order, and numpy
    adds fewer than 8 entries one after the other: the same values, bitwise.
    """
    if not 1 <= a.shape[1] <= (32 if ufunc is np.maximum else 7):
        return ufunc.reduce(a, axis=1)
    out = a[:, 0].copy()
    for k in range(1, a.shape[1]):
        ufunc(out, a[:, k], out=out)
    return out


# ---------------------------------------------------------------------------
# Block layout
# ---------------------------------------------------------------------------


def _log_priors(layout, log_class_priors, log_task_priors):
    """The log-priors of a block's tasks as the kernels read them: ``(1, S)``, the shared
    ``log_class_priors``, or ``(n_tasks, S)``, the ``log_task_priors`` that replace them
    (a view of the caller's array when it is C-contiguous float64); ``S`` is the number of
    latent states, ``len(log_class_priors)`` (the ``K`` classes for Dawid-Skene)."""
    if log_task_priors is None:
        return np.ascontiguousarray(log_class_priors, dtype=np.float64).reshape(1, -1)
    shape = (layout.n_tasks, len(log_class_priors))
    if np.shape(log_task_priors) != shape:
        raise ValueError(f"log_task_priors must have shape {shape} (n_tasks, n_states), got "
                         f"{np.shape(log_task_priors)}.")
    return np.ascontiguousarray(log_task_priors, dtype=np.float64)


def _soft_vote_logsumexp(layout, row_log):
    """Per soft vote of a block of weighted rows (:attr:`BlockLayout.soft_rows`): ``log sum
    over its rows of weight * exp(row_log)``, and the share of each row of the votes of several
    rows, ``weight * exp(row_log) / that sum``. ``row_log``: ``(n_rows,)`` or ``(n_rows, S)``;
    a one-hot vote's sum is its row's value, exactly."""
    vote_of_row, vote_task, single, split, split_starts, split_vote, log_weight = \
        layout.soft_rows
    per_vote = np.empty((len(vote_task),) + row_log.shape[1:])
    per_vote[vote_of_row[single]] = row_log[single]
    split_log = row_log[split]
    split_log += log_weight.reshape((-1,) + (1,) * (row_log.ndim - 1))
    if not len(split):
        return per_vote, split_log
    top = np.maximum.reduceat(split_log, split_starts, axis=0)
    split_log -= top[split_vote]
    np.exp(split_log, out=split_log)
    total = np.add.reduceat(split_log, split_starts, axis=0)
    split_log /= total[split_vote]
    per_vote[vote_of_row[split[split_starts]]] = np.log(total) + top
    return per_vote, split_log


def _out(resp, layout, n_columns=None):
    shape = (layout.n_tasks, layout.n_classes if n_columns is None else n_columns)
    if resp is None:
        return np.empty(shape)
    if resp.shape != shape or resp.dtype != np.float64 or not resp.flags.c_contiguous:
        raise ValueError(f"resp must be a C-contiguous float64 array of shape {shape}.")
    return resp


# ---------------------------------------------------------------------------
# Vote frequencies, most probable classes
# ---------------------------------------------------------------------------


def naive_soft_labels(task, label, n_tasks, empty_row, *, weights=None, out=None):
    """Vote frequencies of each task (paper 002, eq. 6); ``empty_row`` for a task without votes.

    Parameters
    ----------
    task, label : ndarray of shape (n_votes,)
        Task and class index of each vote (any order).
    n_tasks : int
    empty_row : ndarray of shape (K,)
        Row of a task without votes.
    weights : ndarray of shape (n_votes,), default=None
        Weight of each vote (soft votes: the probability of its label); numpy engine.
    out : ndarray of shape (n_tasks, K), default=None
        C-contiguous float64 output buffer (allocated when None).

    Returns
    -------
    frequencies : ndarray of shape (n_tasks, K)

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation.kernels import naive_soft_labels
    >>> naive_soft_labels(np.array([0, 0, 0]), np.array([1, 1, 0]), 2, np.array([0.5, 0.5]))
    array([[0.33333333, 0.66666667],
           [0.5       , 0.5       ]])
    """
    K = len(empty_row)
    out = np.empty((n_tasks, K)) if out is None else out
    empty_row = np.ascontiguousarray(empty_row, dtype=np.float64)
    if weights is None and _engine(task.shape[0]) == "numba":
        _naive_soft_labels_serial(task, label, empty_row, out)
        return out
    key = task.astype(np.int64)
    key *= K
    key += label
    out.reshape(-1)[:] = np.bincount(key, weights=weights, minlength=n_tasks * K)
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
    >>> from skcrowd.aggregation.kernels import row_argmax
    >>> row_argmax(np.array([[0.2, 0.8], [0.5, 0.5]]))
    array([1, 0])
    """
    if _engine() == "numpy" or proba.ndim != 2 or proba.dtype != np.float64:
        return np.argmax(proba, axis=1)
    best = np.empty(proba.shape[0], dtype=np.intp)
    parallel = _parallel(proba.size)
    (_row_argmax_parallel if parallel else _row_argmax_serial)(proba, best)
    return best


# ---------------------------------------------------------------------------
# Chunks of a fused pass
# ---------------------------------------------------------------------------


def _fused_chunks(layout, n_rows, row_bytes):
    """Chunks of a fused numba pass over a block (0: too many rows for one, see below).

    A fused pass runs the E-step of whole tasks, chunk by chunk of equal vote counts
    (:meth:`BlockLayout.chunk_bounds`), and adds each vote's posterior into one of ``n_rows``
    rows (of ``row_bytes`` bytes) of the chunk's own copy of the per-worker count tables,
    summed at the end. The number of chunks is a power of two (as many chunks per thread on 2,
    4, 8 or 16 cores), up to 16, with ``_VOTES_PER_CELL`` votes per table row where there are
    enough votes (the per-chunk tables cost their zeroing and summing: for Dawid-Skene on 1e6
    votes of 1000 workers, 4 chunks are 10 % faster than 12), but at least 2: with 2 chunks of
    5 votes per row (1e6 votes of 1e4 workers, or 1e7 of 1e5) the fused pass is 1.3 times
    faster than summing the counts in worker order; with 2 chunks of 0.5 it is 1.1 times
    slower. A block too small for the parallel drivers takes one chunk; a block with fewer
    than 2 votes per row and 2 chunks gets one chunk while its tables fit in the CPU caches
    (``_CACHE_BYTES``), else 0: the model sums its counts in worker order instead.
    """
    if not _parallel(layout.n_votes):
        return 1
    table = n_rows * row_bytes
    most = min(_MAX_CHUNKS, layout.n_votes // (2 * n_rows), _CHUNK_MEMORY // table)
    if most >= 2:
        n = min(most, max(2, layout.n_votes // (_VOTES_PER_CELL * n_rows)))
        return 1 << (n.bit_length() - 1)
    return 0 if table > _CACHE_BYTES else 1


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
        ``exp(-708)``, negligible next to the 1 of a softmax's largest term), and exactly 0
        for ``x = -inf`` (a class that a per-task log-prior of ``-inf`` rules out).

        Straight-line arithmetic (Cody-Waite reduction to ``|r| <= ln(2) / 2``, then the degree
        13 Taylor polynomial of ``exp(r)``, whose remainder is below 2e-16, in fused
        multiply-adds) that the compiler vectorizes; libm's ``exp`` is one call per value, five
        times slower here.
        """
        y = max(x, -708.0)
        n = np.floor(y * _LOG2_E + 0.5)
        r = (y - n * _LN2_HIGH) - n * _LN2_LOW
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
        return p * _pow2(np.int64(n)) if x > -np.inf else 0.0

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

    @_jit(parallel=False, inline="always", fastmath={"contract"})
    def _softmax_batch(rows, start, n, logits, top, total, resp, task_ll, e_step):
        """The posteriors of the batch of tasks ``start..start+n-1`` from their logit ``rows``
        (:func:`_softmax_columns`), copied into ``resp`` when it has rows; with ``e_step``,
        each task's log-likelihood into ``task_ll``. Returns their summed log-likelihood."""
        K = rows.shape[1]
        log_lik = _softmax_columns(rows, n, logits, top, total)
        if resp.shape[0] > 0:
            for b in range(n):
                for k in range(K):
                    resp[start + b, k] = rows[b, k]
        if e_step:
            for b in range(n):
                task_ll[start + b] = top[b] - np.log(total[b])  # total holds 1 / sum
        return log_lik

    @_jit(parallel=False, inline="always")
    def _batch_rows(resp, start, n, rows):
        """Rows ``start..start+n-1`` of ``resp`` into the batch's ``rows``."""
        for b in range(n):
            for k in range(rows.shape[1]):
                rows[b, k] = resp[start + b, k]

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
