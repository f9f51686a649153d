"""One-coin kernels: the E-step of the models where a vote either gives the true class or
is drawn from a distribution that does not depend on it, fused with its statistics.

In such a model the probability that a vote of *slot* ``u`` (a worker, or a
worker and the label it gave) says ``a`` when the true class is ``t`` is

    ``P(a | t) = exp(log_other[u] + 1{a == t} log_ratio[u])``,

so a task's log-posterior is its class priors plus the sum of its votes'
``log_other`` plus, for each class, the ``log_ratio`` of the votes for it:
``O(votes + K)`` per task, never ``K x K`` per vote. Two models take this form:

- one-coin Dawid-Skene, slots are workers: ``log_other[j] = log((1 - p_j) /
  (K - 1))`` and ``log_ratio[j] = log(p_j) - log_other[j]``, ``p_j`` the
  worker's accuracy;
- MACE, slots are the ``(worker, label)`` cells (``layout.cell``):
  ``log_other[j, a] = log((1 - theta_j) xi_j[a])`` (a spammed ``a``) and
  ``log_ratio[j, a] = log(1 + theta_j / ((1 - theta_j) xi_j[a]))`` (or a
  known one), see :mod:`.mace`.

Variational Bayes models pass the expected logs (``E_q[log p]``) instead of
logs. The statistic of the M-step is each slot's *agreement*: the expected
number of its votes that give the true class, ``sum over its votes v of
P(true class of task i_v = a_v | votes)``.

numpy engine: ``np.bincount`` over the votes.

numba engine: one pass over the block's tasks, in chunks of whole tasks with
equal vote counts (:func:`._common._fused_chunks`), each adding into its own
copy of the per-slot agreement (a float per slot), summed at the end;
posteriors are normalized 64 tasks at a time, class-major
(``_softmax_columns``), as in :mod:`.dawid_skene`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._common import (_CHUNK_MEMORY, _MAX_CHUNKS, _engine, _fused_chunks, _jit, _log_priors,
                      _normalize_log_rows, _out, _parallel, _soft_vote_logsumexp, numba)

_SOFTMAX_BATCH = 64  # tasks whose posteriors are normalized together (numba pass)
_E_STEP, _FUSED, _COUNTS = 0, 1, 2  # what a numba one-coin pass computes (_oc_chunk)


class OneCoinBlockStatistics(NamedTuple):
    """Result of :func:`one_coin_block_statistics` for one block."""

    resp: np.ndarray | None
    """(n_tasks, K): posterior probability of each true class (None unless a buffer was given)."""
    agreement: np.ndarray
    """(n_slots,): expected number of each slot's votes that give the true class."""
    class_counts: np.ndarray
    """(K,): expected number of tasks of each true class."""
    log_likelihood: float
    """Sum over the block's tasks of ``log p(votes of task i)``."""


def _slots(layout, per_cell):
    """Slot of each vote (task order) and the number of slots."""
    if per_cell:
        return layout.cell, layout.n_workers * layout.n_classes
    return layout.worker, layout.n_workers


def _tables(layout, per_cell, log_other, log_ratio):
    n_slots = _slots(layout, per_cell)[1]
    tables = []
    for name, table in (("log_other", log_other), ("log_ratio", log_ratio)):
        table = np.ascontiguousarray(table, dtype=np.float64).reshape(-1)
        if table.shape != (n_slots,):
            raise ValueError(f"{name} must hold {n_slots} values (one per "
                             f"{'worker and label' if per_cell else 'worker'}), got "
                             f"{table.size}.")
        tables.append(table)
    return tables


def one_coin_e_step(layout, log_other, log_ratio, log_class_priors, *, per_cell=False,
                    resp=None, log_task_priors=None):
    """One-coin E-step of a block: posteriors and per-task log-likelihoods.

    Parameters
    ----------
    layout : BlockLayout
        The block's votes.
    log_other : ndarray of shape (n_workers,) or (n_workers, K)
        Log-probability of a slot's vote when it is not the true class (per
        worker, or per worker and label with ``per_cell=True``).
    log_ratio : ndarray, same shape as ``log_other``
        Log-probability of the vote when it is the true class, minus
        ``log_other``.
    log_class_priors : ndarray of shape (K,)
        ``log P(true class k)``.
    per_cell : bool, default=False
        Slots are ``(worker, label)`` cells instead of workers.
    resp : ndarray of shape (n_tasks, K), default=None
        Output buffer (allocated when None).
    log_task_priors : ndarray of shape (n_tasks, K), default=None
        Per-task log-priors ``log P(true class of task i = k)`` that replace
        ``log_class_priors`` for the block's tasks, in the posteriors, the
        log-likelihoods and the statistics (known tasks: ``-inf`` but at the
        label); ``-inf`` rules a class out: its posterior is exactly 0. Every
        row needs a finite entry.

    Returns
    -------
    resp : ndarray of shape (n_tasks, K)
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
    >>> from skcrowd.aggregation.kernels import BlockLayout, one_coin_e_step
    >>> layout = BlockLayout(check_votes(np.array([[0, 0, 1]])))
    >>> accuracy = np.array([0.9, 0.6, 0.8])  # two classes: wrong = 1 - accuracy
    >>> resp, ll = one_coin_e_step(layout, np.log(1 - accuracy),
    ...                            np.log(accuracy / (1 - accuracy)), np.log([0.5, 0.5]))
    >>> resp.round(4)  # 0.9 * 0.6 * 0.2 against 0.1 * 0.4 * 0.8
    array([[0.7714, 0.2286]])
    """
    resp = _out(resp, layout)
    task_ll = np.empty(layout.n_tasks)
    log_other, log_ratio = _tables(layout, per_cell, log_other, log_ratio)
    log_priors = _log_priors(layout, log_class_priors, log_task_priors)
    if _engine(layout.n_votes) == "numba":
        _oc_pass(layout, per_cell, _E_STEP, _MAX_CHUNKS if _parallel(layout.n_votes) else 1,
                 resp, log_other, log_ratio, log_priors, task_ll)
        return resp, task_ll
    _oc_logits_numpy(layout, per_cell, log_other, log_ratio, log_priors, resp)
    _normalize_log_rows(resp, task_ll)
    return resp, task_ll


def one_coin_agreement(layout, resp, *, per_cell=False, soft=None):
    """Expected agreement of each slot for given posteriors (no E-step).

    Used to start EM from initial soft labels; :func:`one_coin_block_statistics`
    returns the same statistic for the posteriors of its own E-step.

    Parameters
    ----------
    layout : BlockLayout
    resp : ndarray of shape (n_tasks, K)
        Posterior (or any soft label) of each task.
    per_cell : bool, default=False
        Slots are ``(worker, label)`` cells instead of workers.
    soft : OneCoinSoftTerms, default=None
        With soft votes (weighted rows): the terms (:func:`one_coin_soft_terms`) under the
        parameters whose answer posteriors weigh each row (an E-step's agreement); None
        counts each row by its weight (the initial statistics).

    Returns
    -------
    agreement : ndarray of shape (n_slots,)
        ``sum of resp[i, a]`` over the votes ``(i, a)`` of each slot
        (``n_slots`` = ``n_workers``, or ``n_workers * K`` with ``per_cell``:
        row-major ``[worker, label]``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, one_coin_agreement
    >>> layout = BlockLayout(check_votes(np.array([[0, 1], [1, 1]])))
    >>> one_coin_agreement(layout, np.array([[0.8, 0.2], [0.3, 0.7]]))  # 0.8 + 0.7, 0.2 + 0.7
    array([1.5, 0.9])
    """
    resp = np.require(resp, np.float64, ["C", "W"])  # the numba pass shares a writing kernel
    if _engine(layout.n_votes) == "numba":
        return _oc_pass(layout, per_cell, _COUNTS, _oc_n_chunks(layout, per_cell), resp)[0]
    slot, n_slots = _slots(layout, per_cell)
    right = resp[layout.task, layout.label]
    if soft is not None:
        # a soft vote's row: its answer's posterior given the true class a, q_a P(a | a) /
        # sum_b q_b P(b | a), times P(true class a)
        right *= soft.row_right
    else:
        right = layout.weighted(right)
    return np.bincount(slot, weights=right, minlength=n_slots)


def one_coin_block_statistics(layout, log_other, log_ratio, log_class_priors, *,
                              per_cell=False, resp=None, agreement=None, log_task_priors=None):
    """One-coin E-step of a block fused with its sufficient statistics.

    Parameters
    ----------
    layout : BlockLayout
        The block's votes.
    log_other, log_ratio : ndarray of shape (n_workers,) or (n_workers, K)
        The slots' vote log-probabilities (see :func:`one_coin_e_step`).
    log_class_priors : ndarray of shape (K,)
    per_cell : bool, default=False
        Slots are ``(worker, label)`` cells instead of workers.
    resp : ndarray of shape (n_tasks, K), default=None
        Output buffer for the responsibilities; when None they are not kept.
    agreement : ndarray of shape (n_slots,), default=None
        Running sums to add this block's agreement into (out of core).
    log_task_priors : ndarray of shape (n_tasks, K), default=None
        Per-task log-priors that replace ``log_class_priors`` (see
        :func:`one_coin_e_step`); the statistics are those of the posteriors.

    Returns
    -------
    OneCoinBlockStatistics
        ``(resp, agreement, class_counts, log_likelihood)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, one_coin_block_statistics
    >>> layout = BlockLayout(check_votes(np.array([[0, 0], [1, 0]])))
    >>> st = one_coin_block_statistics(layout, np.log([0.2, 0.2]), np.log([4.0, 4.0]),
    ...                                np.log([0.5, 0.5]))
    >>> st.agreement  # task 0: both agree (0.9412 each); task 1: a tie
    array([1.44117647, 1.44117647])
    >>> st.class_counts.round(4), round(st.log_likelihood, 4)  # log(0.5 * 0.68) + log(0.5 * 0.32)
    (array([1.4412, 0.5588]), -2.9114)
    """
    log_other, log_ratio = _tables(layout, per_cell, log_other, log_ratio)
    if _engine(layout.n_votes) == "numba":
        counts, class_counts, log_lik = _oc_pass(
            layout, per_cell, _FUSED, _oc_n_chunks(layout, per_cell),
            None if resp is None else _out(resp, layout), log_other, log_ratio,
            _log_priors(layout, log_class_priors, log_task_priors))
    else:
        posteriors, task_ll = one_coin_e_step(layout, log_other, log_ratio, log_class_priors,
                                              per_cell=per_cell, resp=resp,
                                              log_task_priors=log_task_priors)
        counts = one_coin_agreement(layout, posteriors, per_cell=per_cell,
                                    soft=one_coin_soft_terms(layout, log_other, log_ratio,
                                                             per_cell=per_cell))
        class_counts, log_lik = posteriors.sum(axis=0), float(task_ll.sum())
    if agreement is not None:
        agreement += counts
        counts = agreement
    return OneCoinBlockStatistics(resp=resp, agreement=counts, class_counts=class_counts,
                                  log_likelihood=log_lik)


def _oc_logits_numpy(layout, per_cell, log_other, log_ratio, log_priors, logits):
    """logits[i, k] = log P(true class k) + sum over task i's votes of log P(vote | k)
    (``log_priors``: ``(1, K)`` or ``(n_tasks, K)``, see :func:`._common._log_priors`)."""
    K = layout.n_classes
    slot = _slots(layout, per_cell)[0]
    soft = one_coin_soft_terms(layout, log_other, log_ratio, per_cell=per_cell)
    logits.reshape(-1)[:] = np.bincount(layout.task.astype(np.int64) * K + layout.label,
                                        weights=log_ratio[slot] if soft is None
                                        else soft.row_term, minlength=layout.n_tasks * K)
    if soft is None:
        base = np.bincount(layout.task, weights=log_other[slot], minlength=layout.n_tasks)
    else:
        base = np.bincount(layout.soft_rows[1], weights=soft.vote_base, minlength=layout.n_tasks)
    logits += base[:, None]
    logits += log_priors


class OneCoinSoftTerms(NamedTuple):
    """The terms of weighted votes (soft votes) under a one-coin model:
    :func:`one_coin_soft_terms`."""

    vote_base: np.ndarray
    """``(n_soft,)``: ``log S_v``, ``S_v = sum_a q_a exp(log_other[slot of a])``: what the vote
    adds to every class's logit."""
    row_share: np.ndarray
    """``(n_rows,)``: ``q_a exp(log_other[slot of a]) / S_v`` of each row ``(vote, a)``."""
    row_term: np.ndarray
    """``(n_rows,)``: ``log(1 + row_share (exp(log_ratio[slot of a]) - 1))``, what the row adds
    to its class's logit beyond ``vote_base``."""
    row_right: np.ndarray
    """``(n_rows,)``: ``q_a P(a | a) / p(q | a)``, the posterior that the vote's answer is
    ``a`` when the true class is ``a`` (1 for a one-hot vote's row)."""


def one_coin_soft_terms(layout, log_other, log_ratio, *, per_cell=False):
    """One-coin terms of a block of weighted votes (soft votes), or None for hard votes.

    A soft vote ``q`` is virtual evidence on the answer (as in :func:`.ds_soft_vote_terms`):
    with ``P(a | t) = exp(log_other[a] + 1{a == t} log_ratio[a])``, ``p(q | t) = sum_a q_a
    P(a | t) = S_v (1 + share_t (exp(log_ratio[t]) - 1))``; a one-hot vote gives ``P(a | t)``.

    Parameters
    ----------
    layout : BlockLayout
    log_other, log_ratio : ndarray of shape (n_slots,)
        The slots' tables, flattened (see :func:`one_coin_e_step`).
    per_cell : bool, default=False
        Slots are ``(worker, label)`` cells instead of workers.

    Returns
    -------
    OneCoinSoftTerms or None

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import soft_votes
    >>> from skcrowd.aggregation.kernels import BlockLayout, one_coin_soft_terms
    >>> layout = BlockLayout(soft_votes(proba=[[[0.75, 0.25]]]).to_votes())
    >>> terms = one_coin_soft_terms(layout, np.log([0.2]), np.log([0.8 / 0.2]))
    >>> np.exp(terms.vote_base + terms.row_term)  # 0.75 * 0.8 + 0.25 * 0.2, 0.75 * 0.2 + 0.25 * 0.8
    array([0.65, 0.35])
    """
    if layout.weight is None:
        return None
    slot = _slots(layout, per_cell)[0]
    vote_base, split_share = _soft_vote_logsumexp(layout, log_other[slot])
    row_share = np.ones(layout.n_votes)
    row_share[layout.soft_rows[3]] = split_share
    ratio = log_ratio[slot]
    row_term = np.log1p(row_share * np.expm1(ratio))
    return OneCoinSoftTerms(vote_base, row_share, row_term,
                            row_share * np.exp(ratio - row_term))


def _oc_n_chunks(layout, per_cell):
    """Chunks of the fused numba pass (:func:`._common._fused_chunks`, a float per slot).

    Where it gives 0 (tables beyond the CPU caches with under 2 votes per slot and chunk), two
    chunks still halve the pass, and a per-slot table is small next to the votes: 2 chunks if
    their tables fit in ``_CHUNK_MEMORY``, else 1.
    """
    n_slots = _slots(layout, per_cell)[1]
    n_chunks = _fused_chunks(layout, n_slots, 8)
    if n_chunks == 0:
        n_chunks = 2 if 2 * 8 * n_slots <= _CHUNK_MEMORY else 1
    return n_chunks


def _oc_pass(layout, per_cell, mode, n_chunks, resp, log_other=None, log_ratio=None,
             log_priors=None, task_ll=None):
    """A numba pass over the block's tasks, in ``n_chunks`` chunks of equal vote counts.

    ``mode`` and the arrays are those of ``_oc_chunk`` (``log_priors``: ``(1, K)`` or
    ``(n_tasks, K)``, see :func:`._common._log_priors`); returns ``(agreement, class_counts,
    log_likelihood)``, the counts summed over the chunks (None for ``_E_STEP``).
    """
    K = layout.n_classes
    slot, n_slots = _slots(layout, per_cell)
    counted = mode != _E_STEP
    counts = layout.scratch("one_coin_counts", (n_chunks, n_slots if counted else 0))
    class_counts = np.empty((n_chunks, K))
    log_liks = np.empty(n_chunks)
    if log_other is None:  # typed placeholders: _COUNTS does not read them
        log_other = log_ratio = np.zeros(1)
        log_priors = np.zeros((1, K))
    kernel = _oc_chunks_parallel if n_chunks > 1 else _oc_chunks_serial
    kernel(layout.task_indptr, slot, layout.label, log_other, log_ratio, log_priors,
           np.empty((0, K)) if resp is None else resp,
           np.empty(0) if task_ll is None else task_ll,
           layout.chunk_bounds(n_chunks), counts, class_counts, log_liks, mode)
    if not counted:
        return None, None, float(log_liks.sum())
    return counts.sum(axis=0), class_counts.sum(axis=0), float(log_liks.sum())


# ---------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------


if numba is not None:
    from ._common import _batch_rows, _softmax_batch, prange

    @_jit(parallel=False, fastmath={"contract"})
    def _oc_chunk(first, stop, indptr, slot, label, log_other, log_ratio, log_prior, resp,
                  task_ll, agreement, class_counts, mode):
        """Tasks ``first..stop-1`` of a block, ``_SOFTMAX_BATCH`` at a time; by ``mode``:

        - ``_E_STEP``: their posteriors into ``resp`` and log-likelihoods into ``task_ll``;
        - ``_FUSED``: E-step, each vote's posterior of its own label added into
          ``agreement[slot[v]]`` and the posteriors into ``class_counts`` (both zeroed first),
          also stored in ``resp`` when it has rows;
        - ``_COUNTS``: the same sums for the posteriors already in ``resp``.

        ``log_prior`` is ``(1, K)`` (every task's) or ``(n_tasks, K)`` (row ``i``: task
        ``i``'s). Returns the sum of the tasks' log-likelihoods (0 for ``_COUNTS``).
        """
        K = log_prior.shape[1]
        per_task = log_prior.shape[0] > 1
        B = _SOFTMAX_BATCH
        rows = np.empty((B, K))
        logits = np.empty((K, B))
        top = np.empty(B)
        total = np.empty(B)
        if mode != _E_STEP:
            agreement[:] = 0.0
            class_counts[:] = 0.0
        log_lik = 0.0
        for start in range(first, stop, B):
            n = min(B, stop - start)
            if mode == _COUNTS:
                _batch_rows(resp, start, n, rows)
            else:
                for b in range(n):
                    i = start + b
                    for k in range(K):
                        rows[b, k] = 0.0
                    base = 0.0
                    for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                        u = np.uint64(slot[v])
                        base += log_other[u]
                        rows[b, np.uint64(label[v])] += log_ratio[u]
                    r = i if per_task else 0
                    for k in range(K):
                        rows[b, k] += base + log_prior[r, k]
                log_lik += _softmax_batch(rows, start, n, logits, top, total, resp, task_ll,
                                          mode == _E_STEP)
                if mode == _E_STEP:
                    continue
            for b in range(n):
                i = start + b
                for k in range(K):
                    class_counts[k] += rows[b, k]
                for v in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    agreement[np.uint64(slot[v])] += rows[b, np.uint64(label[v])]
        return log_lik

    @_jit(parallel=False)
    def _oc_chunks_serial(indptr, slot, label, log_other, log_ratio, log_prior, resp, task_ll,
                          bounds, counts, class_counts, log_liks, mode):
        for c in range(bounds.shape[0] - 1):
            log_liks[c] = _oc_chunk(bounds[c], bounds[c + 1], indptr, slot, label, log_other,
                                    log_ratio, log_prior, resp, task_ll, counts[c],
                                    class_counts[c], mode)

    @_jit
    def _oc_chunks_parallel(indptr, slot, label, log_other, log_ratio, log_prior, resp, task_ll,
                            bounds, counts, class_counts, log_liks, mode):
        for c in prange(bounds.shape[0] - 1):
            log_liks[c] = _oc_chunk(bounds[c], bounds[c + 1], indptr, slot, label, log_other,
                                    log_ratio, log_prior, resp, task_ll, counts[c],
                                    class_counts[c], mode)
