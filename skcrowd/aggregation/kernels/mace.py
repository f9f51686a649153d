"""MACE kernels: the vote tables of the one-coin pass and the expected counts of its M-step.

MACE (Hovy et al., 2013) is a one-coin model whose slots are ``(worker,
label)`` cells (see :mod:`.one_coin`): worker ``j`` knows the answer with
probability ``theta_j`` (its competence) and gives the true class, or spams
and draws its answer from ``xi_j``, so that

    ``P(a | t) = theta_j 1{a == t} + (1 - theta_j) xi_j[a]``.

:func:`mace_vote_tables` turns the (expected) log-parameters into the
``log_other`` and ``log_ratio`` tables of :func:`.one_coin.one_coin_block_statistics`;
:func:`mace_expected_counts` turns the cells' agreement it returns into the
expected counts of knowing and spamming votes, which is all the M-step needs.
Both work on per-worker tables (``n_workers x K`` values, not votes): numpy,
whatever the engine.
"""

from __future__ import annotations

import numpy as np


def mace_vote_tables(log_competence, log_spamming, log_spam_labels):
    """``log_other`` and ``log_ratio`` of MACE's ``(worker, label)`` cells.

    Parameters
    ----------
    log_competence, log_spamming : ndarray of shape (n_workers,)
        ``log theta_j`` and ``log(1 - theta_j)`` (or their expectations under a
        variational posterior).
    log_spam_labels : ndarray of shape (n_workers, K)
        ``log xi_j[a]``, the log-distribution of a spammed answer (or its
        expectation).

    Returns
    -------
    log_other : ndarray of shape (n_workers, K)
        ``log((1 - theta_j) xi_j[a])``: the log-probability of answering ``a``
        when the truth is another class.
    log_ratio : ndarray of shape (n_workers, K)
        ``log(theta_j + (1 - theta_j) xi_j[a]) - log_other``, computed as
        ``log(1 + exp(log theta_j - log_other))`` (no overflow).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation.kernels import mace_vote_tables
    >>> other, ratio = mace_vote_tables(np.log([0.8]), np.log([0.2]), np.log([[0.5, 0.5]]))
    >>> np.exp(other), np.exp(other + ratio)  # P(a | t != a) = 0.1, P(a | t = a) = 0.9
    (array([[0.1, 0.1]]), array([[0.9, 0.9]]))
    """
    log_other = np.asarray(log_spamming, dtype=np.float64)[:, None] + log_spam_labels
    log_ratio = np.logaddexp(0.0, np.asarray(log_competence, dtype=np.float64)[:, None]
                             - log_other)
    return log_other, log_ratio


def mace_expected_counts(agreement, cell_counts, log_ratio):
    """Expected counts of knowing and spamming votes from the cells' agreement.

    A vote ``a`` of worker ``j`` is known only if the truth is ``a``, with the
    posterior probability ``r = P(truth = a | votes)`` that the one-coin pass
    sums per cell (its *agreement*); given that, it was known with probability
    ``q = theta_j / (theta_j + (1 - theta_j) xi_j[a]) = 1 - exp(-log_ratio[j, a])``.
    The expected number of known votes of the cell is ``q`` times its
    agreement; the others are spammed.

    Parameters
    ----------
    agreement : ndarray of shape (n_workers * K,)
        Agreement of each cell (row-major ``[worker, label]``).
    cell_counts : ndarray of shape (n_workers * K,)
        Number of votes of each cell.
    log_ratio : ndarray of shape (n_workers, K)
        The ``log_ratio`` table of :func:`mace_vote_tables` the agreement was
        computed with.

    Returns
    -------
    knowing : ndarray of shape (n_workers,)
        Expected number of each worker's votes given knowingly.
    spam : ndarray of shape (n_workers, K)
        Expected number of each worker's spammed votes for each label.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation.kernels import mace_expected_counts, mace_vote_tables
    >>> _, ratio = mace_vote_tables(np.log([0.8]), np.log([0.2]), np.log([[0.5, 0.5]]))
    >>> # two votes 0 on tasks surely of class 0, one vote 1 on a task surely of class 0
    >>> knowing, spam = mace_expected_counts(np.array([2.0, 0.0]), np.array([2.0, 1.0]), ratio)
    >>> knowing.round(4), spam.round(4)  # q = 0.8 / 0.9
    (array([1.7778]), array([[0.2222, 1.    ]]))
    """
    n_workers, K = log_ratio.shape
    known = agreement.reshape(n_workers, K) * -np.expm1(-log_ratio)
    spam = cell_counts.reshape(n_workers, K) - known
    np.maximum(spam, 0.0, out=spam)  # rounding: agreement <= counts, q <= 1
    return known.sum(axis=1), spam


def mace_soft_counts(layout, resp, soft):
    """Expected counts of knowing and spamming votes of a block of soft votes.

    A soft vote ``q`` is virtual evidence on the answer (see
    :func:`.one_coin.one_coin_soft_terms`): given the true class ``t``, the worker knew with
    probability ``q_t theta_j / p(q | t)``, and spammed the answer ``b`` with probability
    ``q_b (1 - theta_j) xi_j[b] / p(q | t)``. Summed over ``t`` with the task's posterior, a
    vote is known ``k_v = sum_a resp[a] (1 - 1 / (1 + share_a (exp(log_ratio_a) - 1)))`` and
    spams ``b`` ``share_b (1 - k_v)``; a one-hot vote gives :func:`mace_expected_counts`.

    Parameters
    ----------
    layout : BlockLayout
        The block's weighted votes.
    resp : ndarray of shape (n_tasks, K)
        Posteriors of the block's tasks.
    soft : OneCoinSoftTerms
        The votes' terms under the parameters of the posteriors (``per_cell=True``).

    Returns
    -------
    knowing : ndarray of shape (n_workers,)
    spam : ndarray of shape (n_workers, K)

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import soft_votes
    >>> from skcrowd.aggregation.kernels import (BlockLayout, mace_soft_counts,
    ...                                          mace_vote_tables, one_coin_soft_terms)
    >>> layout = BlockLayout(soft_votes(proba=[[[0.75, 0.25]]]).to_votes())
    >>> log_other, log_ratio = mace_vote_tables(np.log([0.5]), np.log([0.5]),
    ...                                         np.log([[0.5, 0.5]]))
    >>> soft = one_coin_soft_terms(layout, log_other.ravel(), log_ratio.ravel(), per_cell=True)
    >>> knowing, spam = mace_soft_counts(layout, np.array([[1.0, 0.0]]), soft)
    >>> knowing, spam  # truth 0: knew with 0.75 * 0.5 / (0.75 * 0.5 + 0.25), spam split by q
    (array([0.6]), array([[0.3, 0.1]]))
    """
    vote_of_row = layout.soft_rows[0]
    known = resp[layout.task, layout.label] * -np.expm1(-soft.row_term)
    known_vote = np.bincount(vote_of_row, weights=known, minlength=len(soft.vote_base))
    knowing = np.bincount(layout.worker, weights=known, minlength=layout.n_workers)
    spam = np.bincount(layout.cell, weights=soft.row_share * (1.0 - known_vote[vote_of_row]),
                       minlength=layout.n_workers * layout.n_classes)
    return knowing, spam.reshape(layout.n_workers, layout.n_classes)
