"""Margins, trust scores and the weighted area under the margin (vectorized).

Notation of Lefort, Charlier, Joly and Salmon, "Identify ambiguous tasks
combining crowdsourced labels by weighting Areas Under the Margin", TMLR 2024
(paper 002 in ``shared/papers``): ``sigma`` is a row of class scores (softmax
probabilities, or logits), ``sigma_[k]`` its k-th largest entry.

- margin of label ``y`` (eq. 2, the top-k margin of Yang & Koyejo, ``psi_5``):
  ``sigma_y - sigma_[k+1]`` (``k = 1`` for top-1);
- Pleiss et al. (2020) margin (``psi_1``, appendix G):
  ``sigma_y - (k-th largest of sigma_l, l != y)``, i.e.
  ``sigma_y - max_{l != y} sigma_l`` for ``k = 1``;
- trust score (eq. 5): ``s_j(x_i) = <diag(pi_j), sigma^(T)(x_i)>``;
- WAUM (eq. 4): ``sum_j s_j(x_i) AUM(x_i, y_i^j) / sum_j s_j(x_i)``.

Everything works on the observed-vote triplets of :class:`skcrowd.Votes`, one
entry per vote, never on a dense tasks x workers x classes tensor.
"""

from __future__ import annotations

import numpy as np

from ..votes import Votes, check_votes

__all__ = ["margins", "trust_scores", "weighted_aum"]

MARGIN_KINDS = ("top-k", "pleiss")


def _as_votes(votes, name="votes"):
    return votes if isinstance(votes, Votes) else check_votes(votes, name=name)


def _order_statistics(scores, top_k):
    """The ``top_k``-th and ``top_k + 1``-th largest entry of each row."""
    part = np.partition(scores, (-top_k - 1, -top_k), axis=1)
    return part[:, -top_k], part[:, -top_k - 1]


def _margins_at(scores, labels, rows, kind, top_k):
    """Margin of ``labels[v]`` in ``scores[rows[v]]`` for every entry ``v``.

    Order statistics are computed once per row of ``scores`` and gathered per
    entry, so many votes on one task cost one partition.
    """
    kth, next_ = _order_statistics(scores, top_k)
    own = scores[rows, labels]
    kth, next_ = kth[rows], next_[rows]
    if kind == "top-k":
        return own - next_
    # Pleiss: the k-th largest score among the other classes is sigma_[k+1]
    # when y is within the top k (ties included), sigma_[k] otherwise.
    return own - np.where(own >= kth, next_, kth)


def margins(scores, labels, *, kind="top-k", top_k=1):
    """Margin of a given label in each row of class scores.

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_classes)
        Class scores of each sample: softmax probabilities (the paper's
        default) or logits. At least two classes.
    labels : array-like of shape (n_samples,)
        Class index (``0 .. n_classes - 1``) whose margin is measured.
    kind : {"top-k", "pleiss"}, default="top-k"
        ``"top-k"``: ``scores[y] - scores_[top_k + 1]``, the margin of Yang &
        Koyejo (2020) used in eq. 2 of Lefort et al. (2024) (``psi_5``).
        ``"pleiss"``: ``scores[y] - (top_k-th largest score of the other
        classes)``, for ``top_k=1`` the margin ``scores[y] - max_{l != y}
        scores[l]`` of Pleiss et al. (2020) (``psi_1``).
    top_k : int, default=1
        ``k`` of the top-k margin, ``1 <= top_k < n_classes``.

    Returns
    -------
    margins : ndarray of shape (n_samples,)
        Positive when the label is ranked among the top ``top_k`` classes by a
        margin, negative when it is beaten.

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D with at least two classes, a label is out of
        range, or ``top_k`` is not in ``[1, n_classes)``.

    Notes
    -----
    For ``top_k=1`` both kinds give the gap to the runner-up when the label is
    the top class. When it is beaten, ``"pleiss"`` measures it against the top
    class and ``"top-k"`` against the second largest score (0 for a label in
    second place). Lefort, Charlier, Joly and Salmon, "Identify ambiguous tasks
    combining crowdsourced labels by weighting Areas Under the Margin", TMLR
    2024, use ``"top-k"`` and report similar rankings with both (appendix G).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.pruning import margins
    >>> p = np.array([[0.6, 0.3, 0.1],
    ...               [0.2, 0.5, 0.3]])
    >>> margins(p, [0, 0])
    array([ 0.3, -0.1])
    >>> margins(p, [0, 0], kind="pleiss")
    array([ 0.3, -0.3])
    >>> margins(p, [2, 2], top_k=2)   # class 2 against the third largest
    array([0. , 0.1])
    >>> margins(p, [2, 2], kind="pleiss", top_k=2)
    array([-0.2,  0.1])
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError(
            f"scores must be 2-D (n_samples, n_classes) with at least 2 classes, got shape "
            f"{scores.shape}."
        )
    labels = np.asarray(labels)
    if labels.shape != (scores.shape[0],):
        raise ValueError(
            f"labels must have shape ({scores.shape[0]},) to match scores, got {labels.shape}."
        )
    if labels.dtype.kind not in "iu":
        raise ValueError(f"labels must be integer class indices, got dtype {labels.dtype}.")
    bad = (labels < 0) | (labels >= scores.shape[1])
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"labels has class index {int(labels[i])} at row {i}, outside "
            f"range(n_classes) with n_classes={scores.shape[1]}."
        )
    _check_margin_kind(kind, top_k, scores.shape[1])
    return _margins_at(scores, labels, np.arange(len(labels)), kind, top_k)


def _check_margin_kind(kind, top_k, n_classes):
    if kind not in MARGIN_KINDS:
        raise ValueError(f"kind must be one of {MARGIN_KINDS}, got {kind!r}.")
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)):
        raise TypeError(f"top_k must be an int, got {top_k!r}.")
    if not 1 <= top_k < n_classes:
        raise ValueError(
            f"top_k={top_k} needs 1 <= top_k < n_classes, and the votes have {n_classes} classes."
        )


def _trust_at(proba, worker, diagonals):
    """Eq. 5 per vote: ``<diag(pi_worker), proba>`` with ``proba`` one row per vote."""
    return np.einsum("vk,vk->v", proba, diagonals[worker])


def trust_scores(proba, votes, confusion_matrices):
    """Trust score of every observed vote (eq. 5 of Lefort et al., 2024).

    ``s_j(x_i) = <diag(pi_j), sigma(x_i)>``: the probability that worker ``j``
    answers task ``i`` correctly, with the class of task ``i`` drawn from the
    classifier's probabilities ``sigma(x_i)`` and worker ``j`` recognizing class
    ``k`` with probability ``pi_j[k, k]`` (its confusion matrix's diagonal).

    Parameters
    ----------
    proba : array-like of shape (n_tasks, n_classes)
        Class probabilities of each task, e.g. from the margin model at its
        last epoch. Columns in the order of the sorted class labels.
    votes : array-like or sparse matrix of shape (n_tasks, n_workers), or Votes
        The votes matrix (-1 for missing), as accepted by
        :func:`skcrowd.check_votes`.
    confusion_matrices : array-like of shape (n_workers, n_classes, n_classes)
        ``confusion_matrices[j, l, k]``: probability that worker ``j`` answers
        ``k`` when the true class is ``l`` (rows = true class), e.g.
        ``DawidSkene().fit(votes).confusion_matrices_``.

    Returns
    -------
    scores : ndarray of shape (n_votes,)
        One score in ``[0, 1]`` per observed vote, in the order of
        ``check_votes(votes)`` (sorted by task).

    Raises
    ------
    ValueError
        If the shapes of ``proba``, ``votes`` and ``confusion_matrices``
        disagree.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.pruning import trust_scores
    >>> votes = np.array([[0, 1]])              # one task, two workers
    >>> proba = np.array([[0.8, 0.2]])
    >>> pi = np.array([[[0.9, 0.1], [0.2, 0.8]],   # worker 0: reliable
    ...                [[0.5, 0.5], [0.5, 0.5]]])  # worker 1: a coin
    >>> trust_scores(proba, votes, pi)      # 0.8*0.9 + 0.2*0.8, 0.8*0.5 + 0.2*0.5
    array([0.88, 0.5 ])
    """
    votes = _as_votes(votes)
    proba = np.asarray(proba, dtype=np.float64)
    pi = np.asarray(confusion_matrices, dtype=np.float64)
    if proba.ndim != 2 or proba.shape[0] != votes.n_tasks:
        raise ValueError(
            f"proba must have shape (n_tasks, n_classes) with n_tasks={votes.n_tasks}, got "
            f"{proba.shape}."
        )
    k = proba.shape[1]
    if pi.shape != (votes.n_workers, k, k):
        raise ValueError(
            f"confusion_matrices must have shape (n_workers, n_classes, n_classes) = "
            f"({votes.n_workers}, {k}, {k}) to match votes and proba, got {pi.shape}."
        )
    if votes.n_classes > k:
        raise ValueError(
            f"votes has {votes.n_classes} classes but proba has {k} columns."
        )
    return _trust_at(proba[votes.task], votes.worker, np.diagonal(pi, axis1=1, axis2=2))


def _weighted_mean_per_task(values, weights, task, n_tasks):
    """Per-task ``sum(w * v) / sum(w)``; the plain mean where the weights sum to 0.

    Returns the means and a mask of the tasks that have at least one entry.
    """
    count = np.bincount(task, minlength=n_tasks)
    total = np.bincount(task, weights=weights, minlength=n_tasks)
    weighted = np.bincount(task, weights=weights * values, minlength=n_tasks)
    plain = np.bincount(task, weights=values, minlength=n_tasks)
    has = count > 0
    out = np.zeros(n_tasks)
    pos = total > 0
    out[pos] = weighted[pos] / total[pos]
    zero = has & ~pos
    out[zero] = plain[zero] / count[zero]
    return out, has


def _fill_unscored(scores, has):
    """Give tasks without votes a score at or below every other (never NaN)."""
    if has.all():
        return scores
    floor = min(-1.0, float(scores[has].min())) if has.any() else -1.0
    scores = scores.copy()
    scores[~has] = floor
    return scores


def weighted_aum(aum, trust, votes):
    """Weighted area under the margin of each task (eq. 4 of Lefort et al., 2024).

    ``WAUM(x_i) = sum_j s_j(x_i) AUM(x_i, y_i^j) / sum_j s_j(x_i)`` over the
    workers ``j`` who labelled task ``i``.

    Parameters
    ----------
    aum : array-like of shape (n_votes,)
        Area under the margin of each observed vote, in the order of
        ``check_votes(votes)``.
    trust : array-like of shape (n_votes,)
        Non-negative weight of each vote, e.g. from :func:`trust_scores`.
    votes : array-like or sparse matrix of shape (n_tasks, n_workers), or Votes
        The votes matrix.

    Returns
    -------
    waum : ndarray of shape (n_tasks,)
        Where a task's weights sum to zero, the plain mean of its AUMs. A task
        without any vote has no AUM to average: it gets ``min(-1, lowest
        WAUM of the other tasks)``, so it ranks as the most ambiguous (a
        softmax margin is never below -1).

    Raises
    ------
    ValueError
        If ``aum`` or ``trust`` does not have one entry per vote, or a trust
        score is negative or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.pruning import weighted_aum
    >>> votes = np.array([[0, 1], [1, -1]])
    >>> weighted_aum([0.4, -0.2, 0.3], [3.0, 1.0, 0.5], votes)
    array([0.25, 0.3 ])
    """
    votes = _as_votes(votes)
    aum = np.asarray(aum, dtype=np.float64)
    trust = np.asarray(trust, dtype=np.float64)
    for name, arr in (("aum", aum), ("trust", trust)):
        if arr.shape != (votes.n_votes,):
            raise ValueError(
                f"{name} must have one entry per observed vote, shape ({votes.n_votes},), got "
                f"{arr.shape}."
            )
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"{name} has value {arr[i]} for the vote of worker {int(votes.worker[i])} on "
                f"task {int(votes.task[i])}; values must be finite."
            )
    neg = trust < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise ValueError(
            f"trust has negative weight {trust[i]} for the vote of worker "
            f"{int(votes.worker[i])} on task {int(votes.task[i])}."
        )
    out, has = _weighted_mean_per_task(aum, trust, votes.task, votes.n_tasks)
    return _fill_unscored(out, has)
