"""Dawid-Skene kernels: the E-step of a block fused with its confusion counts, and the M-step.

Parameters reach the kernels as ``log_confusions_t[j, l, k] = log P(worker j
answers l | true class k)`` (transposed, so that the ``K`` values a vote needs
are contiguous) and the log class priors; the statistics are the expected
counts ``[j, l, k]`` and the expected number of tasks of each class.

The columns of these tables are the latent *states* of a task, ``S`` of them:
its true class for Dawid-Skene (``S = K``), and any other latent variable with
the same E-step, which a model gets by passing ``S`` columns: the
``(class, subtype)`` pairs of :class:`~skcrowd.aggregation.EBCC` (``S = K M``);
variational models pass expected log-parameters (``E_q[log theta]``) in place of
log-parameters (:class:`~skcrowd.aggregation.BayesianDawidSkene`). The rows stay
the ``K`` answers of each worker.

numpy engine: scipy.sparse products with the block's one-hot vote indicator
(:attr:`BlockLayout.indicator`).

numba engine: one pass over the block's tasks does the E-step and adds each
vote's posterior into the counts (``_ds_chunk``). The tasks are cut into
chunks of equal vote counts (:func:`._common._fused_chunks`: a power of two up
to 16, each with about 24 and at least 2 votes per worker and label, their
tables within 256 MB), each adding into its own copy of the per-worker count
tables, summed at the end. When fewer than two chunks qualify, one fused pass
runs on one thread, unless the tables outgrow the CPU caches (about 4 MB, many
workers): then the counts are summed in parallel over the votes in worker
order. Posteriors are normalized 64 tasks at a time, class-major
(``_softmax_columns``, whose vectorized ``exp`` makes this pass 1.4 times
faster on 1e6 votes than one task at a time). Loops index element by element
with unsigned indices (no array views, no wrap-around of negative indices), 1.4
times faster again. A fit's passes keep only the statistics, not the
posteriors. While ``DawidSkene(smoothing="auto")`` chooses its prior, the same
pass also counts each vote against its task's leave-one-out class
(:func:`ds_cavity_counts`, ``cavity=True`` of :func:`ds_block_statistics`),
from the task's log-posterior as it is normalized: no second pass over the
votes, no table of log-posteriors. A vote whose task's best class, less the
vote's term, beats the bound ``second-best log-posterior - min_k log P(vote |
k)`` on every other class by more than the tie margin goes to that class
without comparing the classes one by one (91 % of the votes at 1e6 votes of
1000 workers, K=10); only the tasks of the other votes get their whole row
of log-posteriors. The same counts, bit for bit, in 2.1 times the time of a
plain pass instead of 3.6 (one thread, 1e6 votes); the plain passes, compiled
in the same function, became 5 % slower. A function of its own for this pass
kept them as they were but doubled the kernel's compilation at a first fit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._common import (_MAX_CHUNKS, _engine, _fused_chunks, _jit, _log_priors, _normalize_log_rows,
                      _out, _parallel, _soft_vote_logsumexp, naive_soft_labels, numba, safe_log)

_SOFTMAX_BATCH = 64  # tasks whose posteriors are normalized together (numba DS pass)
_CAVITY_CHUNK = 2**20  # floats of leave-one-out logits per chunk of votes (ds_cavity_counts)
_CAVITY_TIE = 1e-9  # leave-one-out log-posteriors this close are a tie (ds_cavity_counts)
# what a numba DS pass computes (_ds_chunk)
_E_STEP, _FUSED, _COUNTS, _VOTE_SHARES, _FUSED_CAVITY = 0, 1, 2, 3, 4
_LOG_TINY = float(np.log(np.finfo(np.float64).tiny))  # safe_log's floor


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
    cavity_counts: np.ndarray | None = None
    """(n_workers, K, K): the leave-one-out counts of :func:`ds_cavity_counts` under the same
    parameters (None unless asked for with ``cavity=True``)."""


def ds_e_step(layout, log_confusions_t, log_class_priors, *, resp=None, log_task_priors=None):
    """Dawid-Skene E-step of a block: posteriors and per-task log-likelihoods.

    Parameters
    ----------
    layout : BlockLayout
        The block's votes.
    log_confusions_t : ndarray of shape (n_workers, K, S), float64, C-contiguous
        ``[j, l, k] = log P(worker j answers l | true class k)``: the
        transposed log-confusion matrices, so that the ``S`` values one vote
        needs are contiguous (``S = K`` classes, or latent states, see above).
    log_class_priors : ndarray of shape (S,)
        ``log P(true class k)``.
    resp : ndarray of shape (n_tasks, S), default=None
        Output buffer (allocated when None).
    log_task_priors : ndarray of shape (n_tasks, S), default=None
        Per-task log-priors ``log P(true class of task i = k)`` that replace
        ``log_class_priors`` for the block's tasks, in the posteriors, the
        log-likelihoods and the statistics (known tasks, a classifier's
        predictions); ``-inf`` rules a class out: its posterior is exactly 0.
        Every row needs a finite entry.

    Returns
    -------
    resp : ndarray of shape (n_tasks, S)
        ``P(true class k | votes of task i)``; a task without votes gets the
        class priors (its row of ``log_task_priors``, exponentiated).
    task_log_likelihood : ndarray of shape (n_tasks,)
        ``log p(votes of task i)`` (0 for a task without votes); with
        ``log_task_priors``, the log-sum-exp over ``k`` of the prior row plus
        the votes' log-probabilities (a known task's ``log P(votes, its class)``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, ds_e_step
    >>> layout = BlockLayout(check_votes(np.array([[0, 1]])))
    >>> log_conf_t = np.log(np.array([[0.9, 0.1], [0.1, 0.9]]))[None].repeat(2, 0)
    >>> resp, ll = ds_e_step(layout, log_conf_t, np.log([0.5, 0.5]))
    >>> resp, ll  # p(votes) = 0.5 * 0.9 * 0.1 + 0.5 * 0.1 * 0.9
    (array([[0.5, 0.5]]), array([-2.40794561]))
    """
    n_states = len(log_class_priors)
    resp = _out(resp, layout, n_states)
    task_ll = np.empty(layout.n_tasks)
    log_confusions_t = np.ascontiguousarray(log_confusions_t, dtype=np.float64)
    log_priors = _log_priors(layout, log_class_priors, log_task_priors)
    if _engine(layout.n_votes) == "numba":
        _ds_pass(layout, _E_STEP, _MAX_CHUNKS if _parallel(layout.n_votes) else 1, resp,
                 log_confusions_t, log_priors, task_ll)
        return resp, task_ll
    soft = ds_soft_vote_terms(layout, log_confusions_t)
    if soft is not None:
        _ds_soft_posteriors(layout, soft, log_priors, resp, task_ll)
        return resp, task_ll
    resp[:] = layout.indicator @ log_confusions_t.reshape(-1, n_states)
    resp += log_priors
    _normalize_log_rows(resp, task_ll)
    return resp, task_ll


def ds_worker_counts(layout, resp, *, out=None):
    """Expected per-worker confusion counts of a block for given posteriors.

    Parameters
    ----------
    layout : BlockLayout
    resp : ndarray of shape (n_tasks, S)
        Posterior (or any soft label) of each task (``S = K`` classes, or latent states).
    out : ndarray of shape (n_workers, K, S), default=None
        C-contiguous float64 counts to add this block's counts into (the
        running sum over the blocks of an out-of-core pass), instead of
        returning new ones.

    Returns
    -------
    worker_counts : ndarray of shape (n_workers, K, S)
        ``[j, l, k] = sum of resp[i, k] over the tasks i that worker j
        labelled l`` (``out`` when given).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, ds_worker_counts
    >>> layout = BlockLayout(check_votes(np.array([[0], [1]])))
    >>> ds_worker_counts(layout, np.array([[0.8, 0.2], [0.3, 0.7]]))[0]
    array([[0.8, 0.2],
           [0.3, 0.7]])
    """
    resp = np.require(resp, np.float64, ["C", "W"])  # the numba pass shares a writing kernel
    K, n_states = layout.n_classes, resp.shape[1]
    if _engine(layout.n_votes) == "numpy":
        counts = (layout.indicator_t @ resp).reshape(layout.n_workers, K, n_states)
    elif _ds_n_chunks(layout, n_states):
        counts = _ds_pass(layout, _COUNTS, _ds_n_chunks(layout, n_states), resp)[0]
    else:  # worker order: each worker's rows written by one thread, added to in place
        indptr, _, task, label = layout.worker_order
        counts = np.empty((layout.n_workers, K, n_states)) if out is None else out
        _ds_worker_counts_parallel(indptr, task, label, resp, counts, out is None)
        return counts
    return _added_into(counts, out)


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
    >>> from skcrowd.aggregation.kernels import BlockLayout, ds_vote_share_counts
    >>> layout = BlockLayout(check_votes(np.array([[0, 1, 1], [-1, -1, -1]])))
    >>> counts, class_counts = ds_vote_share_counts(layout, np.array([0.5, 0.5]))
    >>> counts[0]  # worker 0 said 0 on a task whose votes are 1/3 class 0
    array([[0.33333333, 0.66666667],
           [0.        , 0.        ]])
    >>> class_counts
    array([0.83333333, 1.16666667])
    """
    empty_row = np.ascontiguousarray(empty_row, dtype=np.float64)
    n_chunks = _ds_n_chunks(layout) if _engine(layout.n_votes) == "numba" else 0
    if n_chunks:
        counts, class_counts, _ = _ds_pass(layout, _VOTE_SHARES, n_chunks, None,
                                           log_priors=empty_row.reshape(1, -1))
        return counts, class_counts
    resp = naive_soft_labels(layout.task, layout.label, layout.n_tasks, empty_row,
                             weights=layout.weight)
    return ds_worker_counts(layout, resp), resp.sum(axis=0)


def ds_cavity_counts(layout, log_confusions_t, resp, *, out=None, rows=None, n_rows=None):
    """Per-worker counts of each vote against its task's most probable class without it.

    For each vote ``(i, j, l)``: ``k = argmax_k [log resp[i, k] - log P(worker j answers l |
    k)]``, the most probable class of task ``i`` given its other votes (the leave-one-out, or
    cavity, posterior: the posterior divided by the vote's own likelihood), and the vote adds
    one to ``[j, l, k]`` (split evenly among classes tied to within 1e-9 in log-probability,
    so that rounding never decides). These hard counts, free of the vote's own weight in its task's
    posterior, are the data of :class:`~skcrowd.aggregation.DawidSkene`'s
    ``smoothing="auto"`` (soft counts make the workers look more alike than they are). numpy
    (in chunks of votes) or a serial numba pass; it runs only while the prior settles.

    Parameters
    ----------
    layout : BlockLayout
    log_confusions_t : ndarray of shape (n_workers, K, K)
        ``[j, l, k] = log P(worker j answers l | true class k)``.
    resp : ndarray of shape (n_tasks, K)
        Posteriors of the tasks under the same parameters.
    out : ndarray of shape (n_rows, K, K), default=None
        Counts to add this block's counts into.
    rows : ndarray of shape (n_workers,), default=None
        The row of each worker's counts (-1: its votes are not counted); default: worker
        ``j`` in row ``j``. A model that reads the counts of a subset of the workers keeps a
        table of that subset only (``DawidSkene``: at most 65536 rows of the crowd's workers
        and classes).
    n_rows : int, default=None
        Rows of the table (default ``n_workers``).

    Returns
    -------
    ndarray of shape (n_rows, K, K)
        ``[rows[j], l, k]``: votes ``l`` of worker ``j`` whose task's leave-one-out class is
        ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, ds_cavity_counts
    >>> layout = BlockLayout(check_votes(np.array([[0, 0, 1]])))
    >>> log_conf_t = np.log(np.array([[0.8, 0.2], [0.2, 0.8]]))[None].repeat(3, 0)
    >>> resp = np.array([[0.8, 0.2]])  # two votes for 0, one for 1
    >>> ds_cavity_counts(layout, log_conf_t, resp)[2]  # without it, worker 2's task is a 0
    array([[0., 0.],
           [1., 0.]])
    >>> ds_cavity_counts(layout, log_conf_t, resp)[0]  # without it, a tie: split
    array([[0.5, 0.5],
           [0. , 0. ]])
    """
    K = layout.n_classes
    rows, n_rows = _cavity_rows(layout, rows, n_rows)
    shape = (n_rows, K, K)
    # added straight into ``out`` (the running sums of an out-of-core pass): no table per block
    into_out = (out is not None and out.shape == shape and out.dtype == np.float64
                and out.flags.c_contiguous)
    counts = out.reshape(-1) if into_out else np.zeros(n_rows * K * K)
    log_resp = safe_log(resp)
    if _engine(layout.n_votes) == "numba":
        _ds_cavity_serial(layout.task, layout.cell, log_resp,
                          np.ascontiguousarray(log_confusions_t).reshape(-1, K),
                          counts.reshape(-1, K), _CAVITY_TIE, rows)
    else:
        step = max(1, _CAVITY_CHUNK // K)
        soft = ds_soft_vote_terms(layout, log_confusions_t)
        if soft is not None:
            row_share = np.ones((layout.n_votes, K))
            row_share[layout.soft_rows[3]] = soft.split_share
        for start in range(0, layout.n_votes, step):
            stop = min(start + step, layout.n_votes)
            task, worker = layout.task[start:stop], layout.worker[start:stop]
            label = layout.label[start:stop]
            kept = rows[worker] >= 0
            task, worker, label = task[kept], worker[kept], label[kept]
            if soft is None:
                cavity = log_resp[task] - log_confusions_t[worker, label]
            else:  # a soft vote's rows leave their task together
                cavity = log_resp[task] - soft.vote_log[soft.vote_of_row[start:stop][kept]]
            # classes within _CAVITY_TIE of the best share the vote: a tie then does not depend
            # on rounding (the order of the sums), so neither do the counts
            tied = cavity >= cavity.max(axis=1, keepdims=True) - _CAVITY_TIE
            tied_vote, classes = np.nonzero(tied)
            share = (1.0 / tied.sum(axis=1))[tied_vote]
            if soft is not None:  # a soft vote's row counts as its answer's posterior
                share *= row_share[start:stop][kept][tied_vote, classes]
            cell = (rows[worker].astype(np.int64) * K + label) * K
            # vote by vote, as the numba pass adds them (bincount would build a table of the
            # whole crowd per chunk of votes)
            np.add.at(counts, cell[tied_vote] + classes, share)
    return out if into_out else _added_into(counts.reshape(shape), out)


class SoftVoteTerms(NamedTuple):
    """The terms of weighted votes (soft votes) under Dawid-Skene: :func:`ds_soft_vote_terms`."""

    vote_log: np.ndarray
    """``(n_soft, S)``: ``log sum_l q_l P(worker answers l | state k)`` of each soft vote."""
    split_share: np.ndarray
    """``(n_split, S)``: ``q_l P(l | k) / sum_l' q_l' P(l' | k)`` of each row ``(vote, l)`` of
    the votes of several rows (``layout.soft_rows``): the posterior of the vote's answer ``l``
    given the state ``k`` (1 for a one-hot vote's row)."""
    vote_of_row: np.ndarray
    """``(n_rows,)``: the soft vote of each row."""
    vote_task: np.ndarray
    """``(n_soft,)``: the task of each soft vote."""


def ds_soft_vote_terms(layout, log_confusions_t):
    """Dawid-Skene terms of a block of weighted votes (soft votes), or None for hard votes.

    A soft vote ``q`` of worker ``j`` (the rows ``(task, j, l)`` of weight ``q_l`` of
    :meth:`skcrowd.SoftVotes.to_votes`, consecutive) is virtual evidence on the answer the
    worker would have given: ``p(q | true class k) = sum_l q_l P(j answers l | k)``, up to a
    factor that does not depend on ``k``; a one-hot ``q`` gives the hard vote's ``P(l | k)``.
    Computed in log space (a log-sum-exp over the vote's rows: exact for a one-hot vote).

    Parameters
    ----------
    layout : BlockLayout
        The block's votes; ``layout.weight`` None (hard votes) gives None.
    log_confusions_t : ndarray of shape (n_workers, K, S)
        ``[j, l, k] = log P(worker j answers l | true class k)``.

    Returns
    -------
    SoftVoteTerms or None

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import soft_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, ds_soft_vote_terms
    >>> layout = BlockLayout(soft_votes(proba=[[[0.75, 0.25]]]).to_votes())
    >>> log_conf_t = np.log(np.array([[[0.9, 0.2], [0.1, 0.8]]]))  # [j, l, k]
    >>> np.exp(ds_soft_vote_terms(layout, log_conf_t).vote_log)  # .75 .9 + .25 .1, .75 .2 + .25 .8
    array([[0.7 , 0.35]])
    """
    if layout.weight is None:
        return None
    n_states = log_confusions_t.shape[-1]
    row_log = np.take(np.ascontiguousarray(log_confusions_t).reshape(-1, n_states), layout.cell,
                      axis=0)  # log P(l | k) of each row
    vote_log, split_share = _soft_vote_logsumexp(layout, row_log)
    return SoftVoteTerms(vote_log, split_share, *layout.soft_rows[:2])


def _ds_soft_posteriors(layout, terms, log_priors, resp, task_ll):
    """Posteriors (into ``resp``) and per-task log-likelihoods of a block of soft votes."""
    n_states = resp.shape[1]
    flat = terms.vote_task.astype(np.int64)[:, None] * n_states + np.arange(n_states)
    resp.reshape(-1)[:] = np.bincount(flat.reshape(-1), weights=terms.vote_log.reshape(-1),
                                      minlength=resp.size)
    resp += log_priors
    _normalize_log_rows(resp, task_ll)


def _ds_soft_counts(layout, terms, resp):
    """``[j, l, k]``: the expected answers ``l`` of worker ``j`` on tasks of state ``k`` (each
    row's answer posterior times its task's posterior), soft votes."""
    K, n_states = layout.n_classes, resp.shape[1]
    cell = layout.cell.astype(np.int64)[:, None] * n_states + np.arange(n_states)
    answers = np.take(resp, layout.task, axis=0)
    answers[layout.soft_rows[3]] *= terms.split_share
    return np.bincount(cell.reshape(-1), weights=answers.reshape(-1),
                       minlength=layout.n_workers * K * n_states).reshape(
                           layout.n_workers, K, n_states)


def _cavity_rows(layout, rows, n_rows):
    """``(rows, n_rows)`` of a leave-one-out table (see :func:`ds_cavity_counts`), as int64."""
    if rows is None:
        return np.arange(layout.n_workers, dtype=np.int64), layout.n_workers
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.shape != (layout.n_workers,):
        raise ValueError(f"rows must have shape ({layout.n_workers},), got {rows.shape}.")
    return rows, int(rows.max(initial=-1) + 1 if n_rows is None else n_rows)


def _added_into(counts, out):
    """``counts``, or ``out`` with ``counts`` added in place when given."""
    if out is None:
        return counts
    out += counts
    return out


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
    >>> from skcrowd.aggregation.kernels import ds_log_confusions
    >>> counts = np.array([[[3.0, 0.0], [1.0, 0.0]]])  # [j, l, k]: 4 tasks of class 0
    >>> np.exp(ds_log_confusions(counts, np.zeros((2, 2))))
    array([[[0.75, 0.5 ],
            [0.25, 0.5 ]]])
    """
    K = worker_counts.shape[-1]
    pseudo_t = np.ascontiguousarray(np.asarray(pseudo_counts, dtype=np.float64).T)
    if _engine() == "numba":
        # a (worker, class) column of K counts costs about what one vote costs in the E-step,
        # so the threshold counts columns: 1e6 votes of 1000 workers (1e4 columns) normalize in
        # 0.3 ms on one thread, and starting the threads cost 8 ms (24 ms wall) per M-step on
        # a busy shared 2-core machine
        parallel = _parallel(worker_counts.size // K)
        (_ds_normalize_parallel if parallel else _ds_normalize_serial)(worker_counts, pseudo_t)
    else:
        worker_counts += pseudo_t
        total = worker_counts.sum(axis=1, keepdims=True)
        np.divide(worker_counts, total, out=worker_counts, where=total > 0)
        worker_counts.transpose(0, 2, 1)[total[:, 0, :] <= 0] = 1.0 / K
        np.maximum(worker_counts, np.finfo(np.float64).tiny, out=worker_counts)
    return np.log(worker_counts, out=worker_counts)  # numpy's log is vectorized, numba's is not


def _ds_n_chunks(layout, n_states=None):
    """Chunks of the fused numba pass (:func:`._common._fused_chunks`; 0: sum the counts in
    worker order instead): its count tables have a row of ``n_states`` floats (default ``K``)
    per worker and label."""
    K = layout.n_classes
    return _fused_chunks(layout, layout.n_workers * K, 8 * (n_states or K))


def _ds_pass(layout, mode, n_chunks, resp, log_confusions_t=None, log_priors=None,
             task_ll=None, cavity_rows=None):
    """A numba pass over the block's tasks, in ``n_chunks`` chunks of equal vote counts.

    ``mode`` and the arrays are those of ``_ds_chunk`` (``log_priors``: ``(1, S)`` or
    ``(n_tasks, S)``, see :func:`._common._log_priors`); returns ``(worker_counts,
    class_counts, log_likelihood)``, the counts summed over the chunks (None for ``_E_STEP``),
    and with ``_FUSED_CAVITY`` the leave-one-out counts ``(n_rows, K, K)`` fourth
    (``cavity_rows``: ``(rows, n_rows)``, see :func:`ds_cavity_counts`).
    The tables have ``S`` columns, the row length of ``log_priors`` (or of ``resp``; ``K``
    without either).
    """
    K = layout.n_classes
    S = (log_priors.shape[1] if log_priors is not None
         else resp.shape[1] if resp is not None else K)
    counted = mode != _E_STEP
    shape = (n_chunks, layout.n_workers * K, S) if counted else (n_chunks, 0, S)
    counts = layout.scratch("ds_counts", shape)
    class_counts = np.empty((n_chunks, S))
    log_liks = np.empty(n_chunks)
    if log_confusions_t is None:  # typed placeholder: _COUNTS and _VOTE_SHARES do not read it
        log_confusions_t = np.zeros((1, 1, S))
    if log_priors is None:
        log_priors = np.zeros((1, S))
    if mode == _FUSED_CAVITY:
        rows, n_rows = cavity_rows
        cavity = layout.scratch("ds_cavity", (n_chunks, n_rows * K, S))
        least = log_confusions_t.reshape(-1, S).min(axis=1)
    else:
        rows, n_rows = np.empty(0, dtype=np.int64), 0
        cavity = np.empty((n_chunks, 0, S))
        least = np.empty(0)
    kernel = _ds_chunks_parallel if n_chunks > 1 else _ds_chunks_serial
    kernel(layout.task_indptr, layout.cell, layout.worker, layout.label,
           log_confusions_t.reshape(-1, S), log_priors,
           np.empty((0, S)) if resp is None else resp,
           np.empty(0) if task_ll is None else task_ll,
           layout.chunk_bounds(n_chunks), counts, class_counts, log_liks, mode, cavity, rows,
           least)
    if not counted:
        return None, None, float(log_liks.sum())
    result = (counts.sum(axis=0).reshape(layout.n_workers, K, S), class_counts.sum(axis=0),
              float(log_liks.sum()))
    if mode == _FUSED_CAVITY:
        return (*result, cavity.sum(axis=0).reshape(n_rows, K, S))
    return result


def ds_block_statistics(layout, log_confusions_t, log_class_priors, *, resp=None,
                        worker_counts=None, log_task_priors=None, cavity=False,
                        cavity_counts=None, cavity_rows=None, n_cavity_rows=None):
    """Dawid-Skene E-step of a block fused with its sufficient statistics.

    One call is everything an EM iteration needs from a block: the M-step
    (see :class:`skcrowd.aggregation.DawidSkene`) only uses the returned
    ``worker_counts`` and ``class_counts``, summed over blocks.

    Parameters
    ----------
    layout : BlockLayout
        The block's votes.
    log_confusions_t : ndarray of shape (n_workers, K, S)
        ``[j, l, k] = log P(worker j answers l | true class k)`` (``S = K``
        classes, or latent states, see the module's docstring).
    log_class_priors : ndarray of shape (S,)
        ``log P(true class k)``.
    resp : ndarray of shape (n_tasks, S), default=None
        Output buffer for the responsibilities; when None they are not kept
        (an EM iteration needs only the statistics).
    worker_counts : ndarray of shape (n_workers, K, S), default=None
        Counts to add this block's counts into (see :func:`ds_worker_counts`).
    log_task_priors : ndarray of shape (n_tasks, S), default=None
        Per-task log-priors that replace ``log_class_priors`` (see
        :func:`ds_e_step`); the statistics are those of the posteriors.
    cavity : bool, default=False
        Also count each vote against its task's leave-one-out class under the same parameters
        (:func:`ds_cavity_counts` of the posteriors; ``S = K`` only): in the same numba pass,
        without the posteriors.
    cavity_counts : ndarray of shape (n_cavity_rows, K, K), default=None
        With ``cavity``: counts to add the block's leave-one-out counts into.
    cavity_rows, n_cavity_rows : ndarray of shape (n_workers,) and int, default=None
        With ``cavity``: the table's row of each worker (-1: not counted) and its number of
        rows (``rows`` and ``n_rows`` of :func:`ds_cavity_counts`; default one per worker).

    Returns
    -------
    DSBlockStatistics
        ``(resp, worker_counts, class_counts, log_likelihood, cavity_counts)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, ds_block_statistics
    >>> layout = BlockLayout(check_votes(np.array([[0, 0], [1, 1]])))
    >>> log_conf_t = np.log(np.array([[0.9, 0.1], [0.1, 0.9]]))[None].repeat(2, 0)
    >>> stats = ds_block_statistics(layout, log_conf_t, np.log([0.5, 0.5]), resp=np.empty((2, 2)))
    >>> stats.resp.round(4)
    array([[0.9878, 0.0122],
           [0.0122, 0.9878]])
    >>> stats.class_counts, round(stats.log_likelihood, 4)
    (array([1., 1.]), -1.7832)
    """
    n_states = len(log_class_priors)
    if cavity and n_states != layout.n_classes:
        raise ValueError("cavity=True needs one state per class (S = K).")
    rows = _cavity_rows(layout, cavity_rows, n_cavity_rows) if cavity else None
    # the per-chunk tables of a fused pass: the counts' and the leave-one-out counts'
    n_chunks = (_fused_chunks(layout, layout.n_workers * layout.n_classes + (
        rows[1] * layout.n_classes if cavity else 0), 8 * n_states)
                if _engine(layout.n_votes) == "numba" else 0)
    if n_chunks:
        counts, class_counts, log_lik, *loo = _ds_pass(
            layout, _FUSED_CAVITY if cavity else _FUSED, n_chunks,
            None if resp is None else _out(resp, layout, n_states),
            np.ascontiguousarray(log_confusions_t, dtype=np.float64),
            _log_priors(layout, log_class_priors, log_task_priors), cavity_rows=rows,
        )
        worker_counts = _added_into(counts, worker_counts)
        cavity_counts = _added_into(loo[0], cavity_counts) if cavity else None
    elif layout.weight is not None:  # soft votes: each row's answer posterior (numpy only)
        soft = ds_soft_vote_terms(layout, log_confusions_t)
        posteriors, task_ll = _out(resp, layout, n_states), np.empty(layout.n_tasks)
        _ds_soft_posteriors(layout, soft, _log_priors(layout, log_class_priors, log_task_priors),
                            posteriors, task_ll)
        worker_counts = _added_into(_ds_soft_counts(layout, soft, posteriors), worker_counts)
        class_counts, log_lik = posteriors.sum(axis=0), float(task_ll.sum())
        if cavity:
            cavity_counts = ds_cavity_counts(layout, log_confusions_t, posteriors,
                                             out=cavity_counts, rows=rows[0], n_rows=rows[1])
    else:
        posteriors, task_ll = ds_e_step(layout, log_confusions_t, log_class_priors, resp=resp,
                                        log_task_priors=log_task_priors)
        worker_counts = ds_worker_counts(layout, posteriors, out=worker_counts)
        class_counts, log_lik = posteriors.sum(axis=0), float(task_ll.sum())
        if cavity:
            cavity_counts = ds_cavity_counts(layout, log_confusions_t, posteriors,
                                             out=cavity_counts, rows=rows[0], n_rows=rows[1])
    return DSBlockStatistics(
        resp=resp,
        worker_counts=worker_counts,
        class_counts=class_counts,
        log_likelihood=log_lik,
        cavity_counts=cavity_counts if cavity else None,
    )


# ---------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------


if numba is not None:
    from ._common import _batch_rows, _counts_to_shares, _softmax_batch, prange

    @_jit(parallel=False, fastmath={"contract"})
    def _ds_chunk(first, stop, indptr, cell, worker, label, log_conf_t, log_prior, resp,
                  task_ll, counts, class_counts, mode, cavity, cavity_rows, least):
        """Tasks ``first..stop-1`` of a block, ``_SOFTMAX_BATCH`` at a time; by ``mode``:

        - ``_E_STEP``: their posteriors into ``resp`` and log-likelihoods into ``task_ll``;
        - ``_FUSED``: E-step, its posteriors added into ``counts`` and ``class_counts``
          (zeroed first) and also stored in ``resp`` when it has rows;
        - ``_FUSED_CAVITY``: ``_FUSED``, and each vote counted in ``cavity`` (zeroed first,
          the layout of ``counts``) against its task's leave-one-out class, as
          :func:`ds_cavity_counts` does from the posteriors: the task's log-posterior,
          floored at ``_LOG_TINY`` (``safe_log`` of the posterior), minus the vote's
          log-probability, its classes within ``_CAVITY_TIE`` of the best sharing the vote;
          worker ``j``'s votes in the rows of ``cavity_rows[j]`` (none where it is -1);
        - ``_COUNTS``: the posteriors already in ``resp`` added into the zeroed counts;
        - ``_VOTE_SHARES``: each task's vote frequencies (``log_prior[0]`` for a task
          without votes) added into the zeroed counts.

        ``log_prior`` is ``(1, K)`` (every task's) or ``(n_tasks, K)`` (row ``i``: task
        ``i``'s). ``log_conf_t`` and ``counts`` are ``(n_workers * K, K)`` views of ``[worker,
        label, class]`` tables, whose row ``cell[v]`` is the one vote ``v`` reads or adds to;
        ``worker[v]`` and ``label[v]`` are its worker and label (the leave-one-out table's row
        without dividing ``cell[v]`` by ``K``); ``least[c]`` is the smallest entry of row ``c``
        of ``log_conf_t`` (``_FUSED_CAVITY`` only: the bound of a vote's leave-one-out gaps).
        Here ``K`` is the number of columns, the latent states (``log_prior``'s row length),
        which ``_VOTE_SHARES`` needs equal to the number of classes.
        Returns the sum of the tasks' log-likelihoods (0 for ``_COUNTS`` and ``_VOTE_SHARES``).

        Every loop indexes with plain element loops and unsigned indices: no array views, no
        negative-index wrap-around (together 1.4 times faster than with them).
        """
        K = log_prior.shape[1]
        per_task = log_prior.shape[0] > 1
        empty_row = log_prior[0]
        B = _SOFTMAX_BATCH
        rows = np.empty((B, K))
        logits = np.empty((K, B))
        top = np.empty(B)
        total = np.empty(B)
        loo = mode == _FUSED_CAVITY
        log_post = np.empty((B if loo else 0, K))
        best_class = np.empty(B if loo else 0, dtype=np.int64)
        runner_up = np.empty(B if loo else 0)
        gap = np.empty(K)
        if mode != _E_STEP:
            counts[:] = 0.0
            class_counts[:] = 0.0
        if loo:
            cavity[:] = 0.0
        log_lik = 0.0
        for start in range(first, stop, B):
            n = min(B, stop - start)
            if mode == _COUNTS:
                _batch_rows(resp, start, n, rows)
            elif mode == _VOTE_SHARES:
                for b in range(n):
                    i = start + b
                    for k in range(K):
                        rows[b, k] = 0.0
                    for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                        rows[b, np.uint64(cell[v]) % np.uint64(K)] += 1.0
                    _counts_to_shares(rows, b, float(indptr[i + 1] - indptr[i]), empty_row)
            else:
                for b in range(n):
                    i = start + b
                    r = i if per_task else 0
                    for k in range(K):
                        rows[b, k] = log_prior[r, k]
                    for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                        c = np.uint64(cell[v])
                        for k in range(K):
                            rows[b, k] += log_conf_t[c, k]
                if loo:  # each task's logits, best class and best logit of the others
                    for b in range(n):
                        best, second, a = -np.inf, -np.inf, 0
                        for k in range(K):
                            x = rows[b, k]
                            log_post[b, k] = x
                            if x > best:
                                best, second, a = x, best, k
                            elif x > second:
                                second = x
                        best_class[b] = a
                        runner_up[b] = second
                log_lik += _softmax_batch(rows, start, n, logits, top, total, resp, task_ll,
                                          mode == _E_STEP)
                if mode == _E_STEP:
                    continue
            for b in range(n):
                i = start + b
                for k in range(K):
                    class_counts[k] += rows[b, k]
                if not loo:
                    for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                        c = np.uint64(cell[v])
                        for k in range(K):
                            counts[c, k] += rows[b, k]
                    continue
                # the log-posteriors of the best class and of the best other one (the flooring
                # and the shift are monotone: the logits' order is theirs); the whole row only
                # once a vote needs it
                log_norm = top[b] - np.log(total[b])  # total holds 1 / sum
                a = best_class[b]
                best = max(log_post[b, a] - log_norm, _LOG_TINY)
                second = max(runner_up[b] - log_norm, _LOG_TINY)
                shifted = False
                for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    c = np.uint64(cell[v])
                    for k in range(K):
                        counts[c, k] += rows[b, k]
                    row = cavity_rows[np.uint64(worker[v])]
                    if row < 0:
                        continue
                    out_row = np.uint64(row) * np.uint64(K) + np.uint64(label[v])
                    # every other class's gap is at most second - least[c] (rounding is
                    # monotone): below the best's threshold, the whole vote goes to a
                    if second - least[c] < best - log_conf_t[c, a] - _CAVITY_TIE:
                        cavity[out_row, a] += 1.0
                        continue
                    if not shifted:
                        for k in range(K):
                            log_post[b, k] = max(log_post[b, k] - log_norm, _LOG_TINY)
                        shifted = True
                    _add_tied_classes(log_post, b, log_conf_t, c, _CAVITY_TIE, gap, cavity,
                                      out_row)
        return log_lik

    @_jit(parallel=False)
    def _ds_chunks_serial(indptr, cell, worker, label, log_conf_t, log_prior, resp, task_ll,
                          bounds, counts, class_counts, log_liks, mode, cavity, cavity_rows,
                          least):
        for c in range(bounds.shape[0] - 1):
            log_liks[c] = _ds_chunk(bounds[c], bounds[c + 1], indptr, cell, worker, label,
                                    log_conf_t, log_prior, resp, task_ll, counts[c],
                                    class_counts[c], mode, cavity[c], cavity_rows, least)

    @_jit
    def _ds_chunks_parallel(indptr, cell, worker, label, log_conf_t, log_prior, resp, task_ll,
                            bounds, counts, class_counts, log_liks, mode, cavity, cavity_rows,
                            least):
        for c in prange(bounds.shape[0] - 1):
            log_liks[c] = _ds_chunk(bounds[c], bounds[c + 1], indptr, cell, worker, label,
                                    log_conf_t, log_prior, resp, task_ll, counts[c],
                                    class_counts[c], mode, cavity[c], cavity_rows, least)

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

    @_jit(parallel=False, inline="always")
    def _add_tied_classes(log_post, p, log_conf, c, tie, gap, out, q):
        """One vote's leave-one-out counts: ``out[q, k] += 1 / t`` for the ``t`` classes ``k``
        whose ``gap[k] = log_post[p, k] - log_conf[c, k]`` (its task's log-posterior without
        the vote's own term) is within ``tie`` of the best; ``gap`` is scratch. Rows are
        indexed in place (no views: this runs once per vote) and a single best class, the
        usual case, takes its whole vote in one addition."""
        K = gap.shape[0]
        best = -np.inf
        for k in range(K):
            g = log_post[p, k] - log_conf[c, k]
            gap[k] = g
            best = g if g > best else best
        threshold = best - tie
        n_tied = 0
        tied = 0
        for k in range(K):
            is_tied = gap[k] >= threshold
            n_tied += is_tied
            tied = k if is_tied else tied
        if n_tied == 1:
            out[q, tied] += 1.0
            return
        for k in range(K):
            if gap[k] >= best - tie:
                out[q, k] += 1.0 / n_tied

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
    def _ds_cavity_serial(task, cell, log_resp, log_conf_rows, counts, tie, rows):
        """ds_cavity_counts: vote v of worker ``j`` adds 1 / t to ``counts[rows[j] * K + l,
        k]`` (``l`` its label; nothing where ``rows[j]`` is -1) for the ``t`` classes ``k``
        within ``tie`` of its task's best leave-one-out log-posterior."""
        K = log_resp.shape[1]
        cavity = np.empty(K)
        for v in range(task.shape[0]):
            c = cell[v]
            row = rows[c // K]
            if row < 0:
                continue
            _add_tied_classes(log_resp, task[v], log_conf_rows, c, tie, cavity, counts,
                              row * K + c % K)

    @_jit(parallel=False)
    def _ds_normalize_serial(counts, pseudo_t):
        for j in range(counts.shape[0]):
            _ds_normalize_worker(counts, pseudo_t, j)

    @_jit
    def _ds_normalize_parallel(counts, pseudo_t):
        for j in prange(counts.shape[0]):
            _ds_normalize_worker(counts, pseudo_t, j)
