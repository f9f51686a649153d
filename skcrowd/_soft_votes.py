"""Soft votes: a worker gives a probability vector over the classes instead of one label.

A model annotator's ``predict_proba``, or an annotator's stated confidence, is a *soft
vote*. :class:`SoftVotes` holds the observed ``(task, worker)`` pairs, sorted by task (then
worker), each with its probability vector over ``classes``: the triplet layout of hard votes
(:class:`~skcrowd.Votes`) with an ``(n_obs, K)`` matrix in place of the labels, never a
dense ``tasks x workers x classes`` tensor. A hard vote is the one-hot soft vote, so the
humans' labels and the models' probabilities of a mixed crowd sit in one input. Build it
with :func:`soft_votes` (a votes matrix and models' ``predict_proba`` arrays) or
:func:`soft_votes_from_long` (one row per vote or per vote and class).

The aggregators that accept soft votes (``fit(X)`` with ``X`` a :class:`SoftVotes`) read
a vote ``q`` as fractional counts: its log-likelihood given the true class ``k`` is
``sum_l q_l log P(answer l | k)`` (the expected complete log-likelihood of an answer drawn
from ``q``), and the M-step adds ``q`` to the counts; see :ref:`soft_votes`.
"""

from __future__ import annotations

import numbers

import numpy as np

from .votes import (SoftVotes, _column, _fmt, _none_and_nan, _normalize_values,
                    check_votes)

__all__ = ["SoftVotes", "soft_votes", "soft_votes_from_long"]

#: default tolerance on the sum of a soft vote's probabilities (absolute): float32
#: ``predict_proba`` outputs sum to one within about 1e-7
SUM_TOL = 1e-6


def _check_proba_rows(proba, where, tol):
    """Check the soft votes ``proba`` (n, K): finite, non-negative, summing to one within
    ``tol``; ``where(i)`` names vote ``i``. Returns the rows divided by their sums."""
    bad = ~np.isfinite(proba)
    if bad.any():
        i, k = np.argwhere(bad)[0]
        raise ValueError(f"the soft vote of {where(i)} has the probability "
                         f"{float(proba[i, k])!r} (class index {k}); probabilities must be "
                         "finite.")
    bad = proba < 0
    if bad.any():
        i, k = np.argwhere(bad)[0]
        raise ValueError(f"the soft vote of {where(i)} has the negative probability "
                         f"{float(proba[i, k])!r} (class index {k}).")
    total = proba.sum(axis=1)
    bad = np.abs(total - 1.0) > tol
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"the soft vote of {where(i)} sums to {float(total[i])!r}, not 1 "
                         f"(tolerance tol={tol!r}); pass probabilities over all the classes, "
                         "or normalize them.")
    return proba / total[:, None]


def _check_tol(tol):
    if not isinstance(tol, numbers.Real) or isinstance(tol, bool) or not 0 <= tol < 1:
        raise ValueError(f"tol must be a number in [0, 1), got {tol!r}.")


def _sorted_soft_votes(task, worker, proba, n_tasks, n_workers, classes, tasks=None,
                       workers=None):
    order = np.lexsort((worker, task))
    return SoftVotes(task[order].astype(np.int64), worker[order].astype(np.int64),
                     np.ascontiguousarray(proba[order], dtype=np.float64), int(n_tasks),
                     int(n_workers), classes, tasks, workers)


def soft_votes(votes=None, proba=(), *, classes=None, missing_label=-1, tol=SUM_TOL):
    """Soft votes of a crowd: a votes matrix of hard votes and probability vectors.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_humans), default=None
        Hard votes, as :func:`skcrowd.check_votes` reads them (``missing_label``): the
        first ``n_humans`` workers, each vote one-hot.
    proba : sequence of array-likes of shape (n_tasks, n_classes), or ndarray of shape \
(n_models, n_tasks, n_classes), default=()
        One array per soft worker (a model's ``predict_proba`` on the tasks), its columns in
        ``classes`` order; a row of NaN is a task that worker did not label. These workers
        follow the hard ones: worker ``n_humans + m`` is ``proba[m]``.
    classes : array-like of shape (n_classes,), default=None
        The classes of ``proba``'s columns. Default: the classes of ``votes`` (all must
        appear there), or ``0 .. n_classes - 1`` without ``votes``. Every label of
        ``votes`` must be one of them.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``votes``.
    tol : float, default=1e-6
        Largest accepted distance of a soft vote's sum from 1; the rows are then divided by
        their sums.

    Returns
    -------
    SoftVotes

    Raises
    ------
    ValueError
        If a probability vector is not of ``n_classes`` finite, non-negative entries summing
        to one (naming the task, the worker and the sum), a label of ``votes`` is not among
        ``classes``, or the arrays do not have one row per task.

    Examples
    --------
    Two humans and one model whose ``predict_proba`` labels every task:

    >>> import numpy as np
    >>> from skcrowd import DawidSkene, soft_votes
    >>> votes = np.array([["cat", "dog"], ["dog", None], [None, "cat"]], dtype=object)
    >>> model = np.array([[0.7, 0.3], [0.1, 0.9], [0.6, 0.4]])
    >>> sv = soft_votes(votes, [model], classes=["cat", "dog"], missing_label=None)
    >>> sv.n_workers, sv.n_votes
    (3, 7)
    >>> DawidSkene(smoothing=1.0).fit(sv).predict(sv)
    array(['cat', 'dog', 'cat'], dtype='<U3')
    """
    _check_tol(tol)
    proba = [np.asarray(p, dtype=np.float64) for p in proba]
    if classes is not None:
        classes = np.asarray(classes)
        if classes.ndim != 1 or len(classes) == 0 or len(np.unique(classes)) != len(classes):
            raise ValueError(f"classes must be a non-empty 1-D array of distinct labels, got "
                             f"{classes!r}.")
    if votes is not None:
        hard = check_votes(votes, missing_label=missing_label, classes=classes)
        classes, n_tasks, n_humans = hard.classes, hard.n_tasks, hard.n_workers
        task, worker, label = [hard.task], [hard.worker], hard.label
    elif not proba:
        raise ValueError("soft_votes needs votes, proba or both.")
    else:
        n_tasks, n_humans, task, worker, label = proba[0].shape[0], 0, [], [], np.zeros(0, int)
    if classes is None:
        classes = np.arange(proba[0].shape[-1] if proba[0].ndim == 2 else 0)
    K = len(classes)
    rows = [np.eye(K)[label]]
    for m, p in enumerate(proba):
        worker_id = n_humans + m
        if p.shape != (n_tasks, K):
            raise ValueError(
                f"proba[{m}] (worker {worker_id}) has shape {p.shape}; expected ({n_tasks}, {K})"
                f": one row per task, one column per class of {classes.tolist()!r}.")
        missing = np.isnan(p).all(axis=1)
        (observed,) = np.nonzero(~missing)
        rows.append(_check_proba_rows(
            p[observed], lambda i, o=observed, w=worker_id: f"task {int(o[i])}, worker {w}",
            tol))
        task.append(observed)
        worker.append(np.full(len(observed), worker_id))
    task = np.concatenate(task)
    if len(task) == 0:
        raise ValueError("soft_votes got no observed vote.")
    return _sorted_soft_votes(task, np.concatenate(worker), np.concatenate(rows), n_tasks,
                              n_humans + len(proba), classes)


def soft_votes_from_long(data=None, task="task", worker="worker", label="label",
                         proba="proba", *, classes=None, tol=SUM_TOL):
    """Soft votes from a long table: one row per vote and class, or one per vote.

    Two layouts:

    - rows ``(task, worker, label, proba)``: the probability ``proba`` that the worker gives
      to ``label`` on the task; a class without a row has probability 0. ``proba=None``
      makes every row a hard vote (probability 1), and a hard vote of a mixed crowd is one
      row of probability 1.
    - rows ``(task, worker, <one column per class>)``: ``proba`` is the list of the class
      columns (their names are the classes, unless ``classes`` is given) and ``label`` is
      not read.

    Parameters
    ----------
    data : pandas DataFrame, mapping of arrays, or None
        The long table. With ``data=None`` the other arguments are the columns themselves.
    task, worker, label : str or array-like, default "task", "worker", "label"
        Column names in ``data``, or the columns. Ids and labels may be ints or strings.
    proba : str, array-like, list of str or None, default="proba"
        The probability column, the list of class columns (second layout), or None (hard
        votes).
    classes : array-like, default=None
        The classes, in the order of the columns of the soft votes. Default: the sorted
        labels of the table (first layout), the names of the class columns (second).
        Every label must be one of them.
    tol : float, default=1e-6
        Largest accepted distance of a vote's sum from 1; the votes are then divided by
        their sums.

    Returns
    -------
    SoftVotes
        With the task and worker ids sorted (``tasks``, ``workers``).

    Raises
    ------
    ValueError
        If a (task, worker, label) row repeats, a label is not among ``classes`` (naming
        them), a probability is negative or not finite, or a vote does not sum to one
        within ``tol`` (naming its task, worker and sum).

    Examples
    --------
    A human's hard vote and a model's probabilities, one row per vote and class:

    >>> from skcrowd import soft_votes_from_long
    >>> sv = soft_votes_from_long(None, task=["t1", "t1", "t1", "t2"],
    ...                           worker=["ann", "gpt", "gpt", "gpt"],
    ...                           label=["cat", "cat", "dog", "dog"],
    ...                           proba=[1.0, 0.25, 0.75, 1.0])
    >>> sv.proba
    array([[1.  , 0.  ],
           [0.25, 0.75],
           [0.  , 1.  ]])
    >>> sv.tasks.tolist(), sv.workers.tolist(), sv.classes.tolist()
    (['t1', 't2'], ['ann', 'gpt'], ['cat', 'dog'])

    One column per class:

    >>> import pandas as pd
    >>> df = pd.DataFrame({"task": [1, 1], "worker": ["a", "b"],
    ...                    "cat": [0.9, 0.5], "dog": [0.1, 0.5]})
    >>> soft_votes_from_long(df, proba=["cat", "dog"]).proba
    array([[0.9, 0.1],
           [0.5, 0.5]])
    """
    _check_tol(tol)
    wide = isinstance(proba, (list, tuple)) and all(isinstance(c, str) for c in proba) \
        and data is not None
    cols = {what: _column(data, key, what) for key, what in ((task, "task"), (worker, "worker"))}
    if wide:
        if not proba:
            raise ValueError("proba lists no class column.")
        values = np.column_stack([_column(data, c, f"class {c!r}") for c in proba])
        column_classes = np.asarray(proba) if classes is None else np.asarray(classes)
        if len(column_classes) != len(proba):
            raise ValueError(f"classes {np.asarray(classes).tolist()!r} do not match the "
                             f"{len(proba)} class columns {list(proba)!r}.")
    else:
        cols["label"] = _column(data, label, "label")
        if proba is not None:
            cols["proba"] = _column(data, proba, "proba")
    lengths = {k: len(v) for k, v in cols.items()}
    if wide:
        lengths["class columns"] = len(values)
    if len(set(lengths.values())) != 1:
        raise ValueError(f"long-format columns differ in length: {lengths}.")
    n_rows = lengths["task"]
    if n_rows == 0:
        raise ValueError("long-format data has no rows (no votes).")
    for what in ("task", "worker") + (() if wide else ("label",)):
        col = cols[what]
        if col.dtype.kind == "O":
            isna = np.logical_or(*_none_and_nan(col))
        else:
            isna = np.isnan(col) if col.dtype.kind == "f" else np.zeros(len(col), bool)
        if isna.any():
            raise ValueError(f"long-format {what} column has a missing value at row "
                             f"{int(np.argmax(isna))}.")
    tasks, t = np.unique(cols["task"], return_inverse=True)
    workers, w = np.unique(cols["worker"], return_inverse=True)
    t, w = t.ravel(), w.ravel()
    n_w = len(workers)

    def where(i):
        return f"task {_fmt(tasks[t[i]])}, worker {_fmt(workers[w[i]])}"

    if wide:
        classes = column_classes
        values = np.asarray(values, dtype=np.float64)
        key = t.astype(np.int64) * n_w + w
        _no_repeated_rows(key, lambda i: where(i))
        vote_t, vote_w, rows = t, w, np.arange(n_rows)
    else:
        labels = _normalize_values(cols["label"], np.arange(n_rows), np.zeros(n_rows, int),
                                   "label column")
        if classes is None:
            classes = np.unique(labels)
        classes = np.asarray(classes)
        sorter = np.argsort(classes, kind="stable")
        pos = np.clip(np.searchsorted(classes, labels, sorter=sorter), 0, len(classes) - 1)
        lab = sorter[pos]
        unknown = classes[lab] != labels
        if unknown.any():
            i = int(np.argmax(unknown))
            raise ValueError(f"row {i} of the long data ({where(i)}) has the label "
                             f"{_fmt(labels[i])}, not one of the classes {classes.tolist()!r}.")
        p = (np.ones(n_rows) if proba is None
             else np.asarray(cols["proba"], dtype=np.float64))
        K = len(classes)
        cell = (t.astype(np.int64) * n_w + w) * K + lab
        _no_repeated_rows(cell, lambda i: f"{where(i)}, label {_fmt(labels[i])}")
        key, first = np.unique(cell // K, return_index=True)
        vote_t, vote_w = t[first], w[first]
        vote = np.searchsorted(key, cell // K)
        values = np.full((len(key), K), 0.0)
        bad = ~np.isfinite(p) | (p < 0)
        if bad.any():  # named at its row, before the rows are summed into votes
            i = int(np.argmax(bad))
            raise ValueError(f"row {i} of the long data ({where(i)}, label "
                             f"{_fmt(labels[i])}) has the probability {float(p[i])!r}; "
                             "probabilities must be finite and non-negative.")
        values[vote, lab] = p
        rows = first
    values = _check_proba_rows(values, lambda i: where(rows[i]), tol)
    return _sorted_soft_votes(vote_t, vote_w, values, len(tasks), n_w, classes, tasks, workers)


def _no_repeated_rows(key, where):
    """ValueError naming the first key that two rows share (``where(row)``)."""
    _, first, count = np.unique(key, return_index=True, return_counts=True)
    if (count > 1).any():
        repeated = np.flatnonzero(key == key[first[count > 1].min()])
        raise ValueError(f"{where(repeated[0])} has more than one row (rows "
                         f"{repeated[:5].tolist()} of the long data); give one per vote.")
