"""The votes model: validation, encodings and the long format.

A *votes matrix* has shape ``(n_tasks, n_workers)``; entry ``(i, j)`` is the
label worker ``j`` gave to task ``i``, or a missing marker. Internally every
skcrowd estimator works on the observed votes only, stored as
:class:`Votes`: three aligned arrays ``(task, worker, label)`` sorted by task,
with labels encoded as integer class indices ``0 .. n_classes - 1``.

The conversion happens once, at the boundary, in :func:`check_votes`.
"""

from __future__ import annotations

import numbers
import re
import sys
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._optional import import_optional

__all__ = [
    "Votes",
    "SoftVotes",
    "check_votes",
    "votes_from_long",
    "votes_to_long",
    "LongVotes",
    "aggregate_long",
    "check_not_long_format",
]


class _Observed:
    """What hard and soft votes share: observed (task, worker) pairs sorted by task."""

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_votes(self) -> int:
        return len(self.task)


@dataclass(frozen=True, eq=False)
class Votes(_Observed):
    """Observed votes as (task, worker, label) triplets sorted by task.

    Parameters
    ----------
    task : ndarray of shape (n_votes,), dtype int64
        Task (row) index of each vote, non-decreasing.
    worker : ndarray of shape (n_votes,), dtype int64
        Worker (column) index of each vote.
    label : ndarray of shape (n_votes,), dtype int64
        Class index of each vote, in ``range(n_classes)``.
    n_tasks, n_workers : int
        Shape of the votes matrix the triplets came from.
    classes : ndarray of shape (n_classes,)
        The original label of each class index.
    weight : ndarray of shape (n_votes,) or None, default=None
        Weight of each triplet: None for hard votes (every weight one); the probability of
        the label in a soft vote (:meth:`SoftVotes.to_votes`, one triplet per class of
        positive probability). ``counts`` and the kernels' layouts read it.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> v = check_votes(np.array([[0, -1], [1, 1]]))
    >>> v.task, v.worker, v.label
    (array([0, 1, 1]), array([0, 0, 1]), array([0, 1, 1]))
    >>> v.counts()
    array([[1., 0.],
           [0., 2.]])
    """

    task: np.ndarray
    worker: np.ndarray
    label: np.ndarray
    n_tasks: int
    n_workers: int
    classes: np.ndarray
    weight: np.ndarray | None = None

    def counts(self, weights=None) -> np.ndarray:
        """Per-task vote counts, shape ``(n_tasks, n_classes)``.

        ``weights`` (one per vote) gives weighted counts; the votes' own ``weight`` (soft
        votes) multiplies them.
        """
        if self.weight is not None:
            weights = self.weight if weights is None else weights * self.weight
        flat = self.task * self.n_classes + self.label
        out = np.bincount(flat, weights=weights, minlength=self.n_tasks * self.n_classes)
        return out.astype(np.float64, copy=False).reshape(self.n_tasks, self.n_classes)

    def task_indptr(self) -> np.ndarray:
        """CSR-style pointer: votes of task ``i`` are ``indptr[i]:indptr[i+1]``."""
        return np.concatenate(
            [[0], np.cumsum(np.bincount(self.task, minlength=self.n_tasks))]
        ).astype(np.int64)

    def votes_per_task(self) -> np.ndarray:
        return np.bincount(self.task, minlength=self.n_tasks)

    def votes_per_worker(self) -> np.ndarray:
        return np.bincount(self.worker, minlength=self.n_workers)

    def to_dense(self) -> np.ndarray:
        """Dense ``(n_tasks, n_workers)`` matrix of class indices, -1 for missing."""
        out = np.full((self.n_tasks, self.n_workers), -1, dtype=np.int64)
        out[self.task, self.worker] = self.label
        return out

    def to_sparse(self) -> sp.csr_array:
        """CSR matrix of class indices; stored entries (explicit zeros too) are votes."""
        return sp.csr_array(
            (self.label, (self.task, self.worker)), shape=(self.n_tasks, self.n_workers)
        )

    def take_tasks(self, rows) -> "Votes":
        """Votes of the tasks ``rows`` (integer indices), renumbered ``0..len(rows)-1``."""
        rows = np.asarray(rows, dtype=np.int64)
        indptr = self.task_indptr()
        starts, stops = indptr[rows], indptr[rows + 1]
        lengths = stops - starts
        idx = np.repeat(starts - np.cumsum(np.r_[0, lengths[:-1]]), lengths) + np.arange(
            lengths.sum()
        )
        return Votes(
            task=np.repeat(np.arange(len(rows), dtype=np.int64), lengths),
            worker=self.worker[idx],
            label=self.label[idx],
            n_tasks=len(rows),
            n_workers=self.n_workers,
            classes=self.classes,
            weight=None if self.weight is None else self.weight[idx],
        )


@dataclass(frozen=True, eq=False)
class SoftVotes(_Observed):
    """Observed soft votes: ``(task, worker)`` pairs sorted by task, a probability vector each.

    Build it with :func:`soft_votes` or :func:`soft_votes_from_long`, which check it; the
    aggregators that accept soft votes take it as ``X`` (see :ref:`soft_votes`).

    Parameters
    ----------
    task : ndarray of shape (n_obs,), dtype int64
        Task (row) index of each vote, non-decreasing; the workers of a task increase.
    worker : ndarray of shape (n_obs,), dtype int64
        Worker (column) index of each vote.
    proba : ndarray of shape (n_obs, n_classes), dtype float64
        Probability of each class in each vote: non-negative, rows summing to one.
    n_tasks, n_workers : int
        Number of tasks and workers.
    classes : ndarray of shape (n_classes,)
        The label of each column of ``proba``.
    tasks, workers : ndarray or None
        Original ids of the tasks and workers (long format), or None (row and column
        numbers). Aggregators fitted on soft votes with task ids key their per-task outputs
        by them, as for long-format votes.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import soft_votes
    >>> sv = soft_votes([[0, -1], [1, 1]], [[[0.9, 0.1], [0.2, 0.8]]])
    >>> sv.task, sv.worker
    (array([0, 0, 1, 1, 1]), array([0, 2, 0, 1, 2]))
    >>> sv.proba[:2]
    array([[1. , 0. ],
           [0.9, 0.1]])
    >>> sv.harden().proba[:2]  # each vote's most probable class, one-hot
    array([[1., 0.],
           [1., 0.]])
    """

    task: np.ndarray
    worker: np.ndarray
    proba: np.ndarray
    n_tasks: int
    n_workers: int
    classes: np.ndarray
    tasks: np.ndarray | None = None
    workers: np.ndarray | None = None

    def to_votes(self) -> Votes:
        """The weighted triplets the kernels read: one ``(task, worker, label)`` row per
        positive entry of ``proba``, of weight that probability (:attr:`Votes.weight`).

        A one-hot soft vote gives one row of weight 1, the hard vote's triplet.
        """
        vote, label = np.nonzero(self.proba)  # row-major: task order, then worker, then label
        return Votes(task=self.task[vote], worker=self.worker[vote],
                     label=label.astype(np.int64), n_tasks=self.n_tasks,
                     n_workers=self.n_workers, classes=self.classes,
                     weight=self.proba[vote, label])

    def harden(self) -> "SoftVotes":
        """The same votes hardened: each one-hot at its most probable class (the first of
        tied ones), as if the workers had given labels."""
        hard = np.zeros_like(self.proba)
        hard[np.arange(self.n_votes), np.argmax(self.proba, axis=1)] = 1.0
        return SoftVotes(self.task, self.worker, hard, self.n_tasks, self.n_workers,
                         self.classes, self.tasks, self.workers)


def refuse_soft_votes(votes, name="votes", who=None):
    """TypeError if ``votes`` is a :class:`SoftVotes` where hard votes are read.

    ``who``: the estimator that refuses them (default: hard votes are expected of ``name``).
    The message names the aggregators that accept soft votes (read from the aggregation
    package when it is imported: the votes know nothing of the estimators above them).
    """
    if not isinstance(votes, SoftVotes):
        return
    base = sys.modules.get("skcrowd.aggregation._base")
    accepting = base._aggregators_with("_accepts_soft_votes") if base is not None else None
    head = (f"{who} does not accept soft votes" if who is not None
            else f"{name} must be hard votes (a votes matrix)")
    raise TypeError(
        f"{head}, and {name} is a SoftVotes. The aggregators that accept soft votes (as X): "
        f"{accepting or 'see the soft votes section of the votes format page'}.")


# ---------------------------------------------------------------------------
# check_votes
# ---------------------------------------------------------------------------


def _is_nan_marker(missing_label) -> bool:
    return isinstance(missing_label, numbers.Real) and bool(np.isnan(missing_label))


def _nan_marks_missing(missing_label) -> bool:
    """Whether NaN (and None) in a votes matrix are missing votes under ``missing_label``."""
    return missing_label is None or _is_nan_marker(missing_label)


def _validate_missing_label(missing_label):
    if missing_label is None or isinstance(missing_label, (numbers.Number, str, np.generic)):
        return
    raise TypeError(
        f"missing_label must be None, a number (e.g. -1 or np.nan) or a string, got "
        f"{missing_label!r} of type {type(missing_label).__name__}."
    )


def _position(mask_2d_or_rows, cols=None):
    """Human-readable position of the first True entry (of a 1-D mask, or column -1: a task)."""
    if cols is None:
        first = np.argwhere(mask_2d_or_rows)[0]
        r, c = (first[0], -1) if len(first) == 1 else first
    else:
        r, c = mask_2d_or_rows, cols
    if c < 0:
        return f"task {int(r)}"
    return f"row (task) {int(r)}, column (worker) {int(c)}"


def _none_and_nan(arr):
    """Masks of the None / pandas NA and of the float NaN entries of an object array."""
    is_none = np.frompyfunc(lambda v: v is None, 1, 1)(arr).astype(bool)
    is_nan = np.frompyfunc(
        lambda v: isinstance(v, float) and v != v, 1, 1  # noqa: PLR0124 (NaN test)
    )(arr).astype(bool)
    try:
        import pandas as pd

        is_none |= np.frompyfunc(lambda v: v is pd.NA or v is pd.NaT, 1, 1)(arr).astype(bool)
    except ImportError:  # pragma: no cover - pandas absent
        pass
    return is_none, is_nan


def _blank(values):
    """Mask of the empty or whitespace-only strings (``str.strip``) of an array."""
    if values.dtype.kind not in "UO":
        return np.zeros(values.shape, dtype=bool)
    return np.frompyfunc(lambda v: isinstance(v, str) and not v.strip(), 1, 1)(values).astype(
        bool)


def _is_blank_marker(missing_label):
    return isinstance(missing_label, str) and not missing_label.strip()


def _check_no_blank_label(classes, label, name, where, fix):
    """Raise if a vote's label is an empty or whitespace-only string: never a silent class.

    ``classes`` are the encoded classes, ``label`` the votes' class indices; ``where(i)``
    names the place of vote ``i``, ``fix`` says how to mark missing votes instead.
    """
    blank = np.flatnonzero(_blank(np.asarray(classes)))
    hits = np.isin(label, blank) if len(blank) else ()
    if len(blank) and hits.any():
        i = int(np.argmax(hits))
        raise ValueError(
            f"{name} has the label {_fmt(classes[label[i]])} at {where(i)}: an empty or "
            f"whitespace-only string is not a label. {fix}"
        )


def _dense_to_triplets(arr, missing_label, name, hidden=None):
    """Split a dense 2-D array into (rows, cols, raw values) of observed entries (a 1-D array:
    one label per task, column -1).

    ``hidden`` (bool, optional): entries missing whatever they hold (a masked array's mask).
    """
    visible = np.ones(arr.shape, dtype=bool) if hidden is None else ~hidden
    if arr.dtype.kind == "O":
        # pd.NA / None / NaN handling for object arrays.
        is_none, is_nan = _none_and_nan(arr)
        if _nan_marks_missing(missing_label):
            missing = is_none | is_nan
        else:
            if (is_none & visible).any():
                raise ValueError(
                    f"{name} contains None/NA at {_position(is_none & visible)} but "
                    f"missing_label={missing_label!r}; pass missing_label=None to treat None as "
                    "missing."
                )
            if (is_nan & visible).any():
                raise ValueError(
                    f"{name} contains NaN at {_position(is_nan & visible)} but missing_label="
                    f"{missing_label!r}; pass missing_label=np.nan to treat NaN as missing."
                )
            missing = _blank(arr) if _is_blank_marker(missing_label) else np.frompyfunc(
                lambda v: _equal_marker(v, missing_label), 1, 1)(arr).astype(bool)
    elif arr.dtype.kind == "f":
        nan = np.isnan(arr)
        if _nan_marks_missing(missing_label):
            missing = nan
        else:
            if (nan & visible).any():
                raise ValueError(
                    f"{name} contains NaN at {_position(nan & visible)} but missing_label="
                    f"{missing_label!r}; pass missing_label=np.nan to treat NaN as missing."
                )
            missing = arr == missing_label
    elif arr.dtype.kind in "iub":
        no_marker = _nan_marks_missing(missing_label) or isinstance(missing_label, str)
        if no_marker or (arr.dtype.kind == "b") != isinstance(missing_label, (bool, np.bool_)):
            missing = np.zeros(arr.shape, dtype=bool)  # True is not the marker 1, nor 1 True
        else:
            missing = arr == missing_label
    elif arr.dtype.kind in "USa":
        if isinstance(missing_label, str):
            missing = _blank(arr) if _is_blank_marker(missing_label) else arr == missing_label
        else:
            _check_no_marker_text(arr, missing_label, name)
            missing = np.zeros(arr.shape, dtype=bool)
    elif arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} has dtype {arr.dtype}; labels "
                         "must be integers or strings.")
    else:
        raise TypeError(f"{name} has unsupported dtype {arr.dtype}; expected labels.")
    if arr.ndim == 1:
        (rows,) = np.nonzero(~missing & visible)
        return rows, np.full(len(rows), -1), arr[rows]
    rows, cols = np.nonzero(~missing & visible)
    return rows, cols, arr[rows, cols]


def _as_array(data):
    """``np.asarray(data)``, except that a list mixing strings and other values stays an object
    array: numpy would turn ``[0, "a"]`` into strings, making label ``-1`` a vote and ids ``0``
    and ``"0"`` one task."""
    arr = np.asarray(data)
    if arr.dtype.kind in "US" and not isinstance(data, np.ndarray):
        items = np.asarray(data, dtype=object)
        kind = str if arr.dtype.kind == "U" else bytes
        if items.shape == arr.shape and not all(isinstance(x, kind) for x in items.flat):
            return items
    return arr


def _check_no_marker_text(arr, missing_label, name):
    """Raise if a string array holds the text of a non-string ``missing_label`` ("-1", "nan").

    numpy turns a list mixing strings with numbers or NaN into strings: the missing markers
    would become the labels "-1" or "nan".
    """
    if arr.dtype.kind != "U":
        return
    texts = ["nan", "None"] if _nan_marks_missing(missing_label) else [str(missing_label)]
    found = np.isin(arr, texts)
    if found.any():
        raise ValueError(
            f"{name} holds the string {_fmt(arr[found][0])} at {_position(found)} where "
            f"missing_label={missing_label!r} is not a string: numpy turned numbers or NaN mixed "
            "with strings into text. Pass an object array (np.array(votes, dtype=object)) or "
            "a string missing_label."
        )


def _fmt(value):
    """repr of a label without numpy's scalar wrapper (``5``, not ``np.int64(5)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _equal_marker(v, marker):
    """Whether the entry ``v`` is the missing marker: of its type (True is not the marker 1)."""
    for kind in (str, (bool, np.bool_)):
        if isinstance(v, kind) != isinstance(marker, kind):
            return False
    try:
        return bool(v == marker)
    except Exception:  # pragma: no cover - exotic objects
        return False


def _normalize_values(values, rows, cols, name):
    """Turn raw observed values into a homogeneous numpy array of labels.

    Integral floats become ints; non-integral floats, NaN/inf and mixed
    numeric/string labels raise, naming the first offending entry.
    """
    if values.dtype.kind == "O":
        if len(values) == 0:
            return values.astype(np.int64)
        is_str = np.frompyfunc(lambda v: isinstance(v, (str, np.str_)), 1, 1)(values).astype(bool)
        is_num = np.frompyfunc(
            lambda v: isinstance(v, (numbers.Number, np.number)) and not isinstance(v, bool), 1, 1
        )(values).astype(bool)
        is_bool = np.frompyfunc(lambda v: isinstance(v, (bool, np.bool_)), 1, 1)(values).astype(
            bool
        )
        # str, bool and numbers never mix: True would become the class 1, 1 the class "1"
        for first, second in ((is_str, is_num | is_bool), (is_bool, is_num)):
            if first.any() and second.any():
                i_s, i_n = np.argmax(first), np.argmax(second)
                raise TypeError(
                    f"{name} mixes label types: {_fmt(values[i_s])} "
                    f"({type(values[i_s]).__name__}) at {_position(rows[i_s], cols[i_s])} and "
                    f"{_fmt(values[i_n])} ({type(values[i_n]).__name__}) at "
                    f"{_position(rows[i_n], cols[i_n])}. Use one type for all labels."
                )
        is_complex = np.frompyfunc(lambda v: isinstance(v, (complex, np.complexfloating)), 1, 1)(
            values).astype(bool)
        if is_complex.any():
            i = np.argmax(is_complex)
            raise _complex_label(name, values[i], rows[i], cols[i])
        other = ~(is_str | is_num | is_bool)
        if other.any():
            i = np.argmax(other)
            raise TypeError(
                f"{name} has a label of unsupported type {type(values[i]).__name__} "
                f"({_fmt(values[i])}) at {_position(rows[i], cols[i])}."
            )
        if is_str.all():
            return values.astype(str)
        if is_bool.all():
            return values.astype(bool)
        values = _numeric_labels(values)
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values)
        if bad.any():
            i = np.argmax(bad)
            raise ValueError(
                f"{name} has label {_fmt(values[i])} at {_position(rows[i], cols[i])}; labels must "
                "be finite (set missing_label=np.nan if NaN marks missing votes)."
            )
        frac = values != np.round(values)
        if frac.any():
            i = np.argmax(frac)
            raise ValueError(
                f"{name} has non-integer float label {_fmt(values[i])} at "
                f"{_position(rows[i], cols[i])}; labels must be integers or strings, not "
                "continuous values."
            )
        huge = (values >= 2.0**63) | (values < -(2.0**63))
        if huge.any():
            i = np.argmax(huge)
            raise ValueError(
                f"{name} has float label {_fmt(values[i])} at {_position(rows[i], cols[i])}, "
                "beyond the 64-bit integers that integral float labels become."
            )
        return values.astype(np.int64)
    if values.dtype.kind == "c":
        raise _complex_label(name, values[0], rows[0], cols[0])
    return values


def _numeric_labels(values):
    """An object array of numbers as a numeric array. Integers keep their values exactly:
    int64, else uint64 (all non-negative), else Python ints in an object array (labels on both
    sides of the 64-bit range, which numpy would round to float64)."""
    if all(isinstance(v, (numbers.Integral, np.integer)) for v in values):
        ints = [int(v) for v in values]
        for dtype in (np.int64, np.uint64):
            try:
                return np.array(ints, dtype=dtype)
            except OverflowError:
                pass
        return np.array(ints, dtype=object)
    return np.asarray(values.tolist())


def _complex_label(name, value, row, col):
    """The error of a complex label ``value`` at ``row``, ``col`` of ``name`` (scikit-learn's
    wording, then where it is)."""
    return ValueError(f"Complex data not supported: {name} has complex label {_fmt(value)} at "
                      f"{_position(row, col)}; labels must be integers or strings.")


def _encode(values, rows, cols, classes, n_classes, name):
    """Map label values to class indices; return (indices, classes)."""
    if classes is not None:
        classes = np.asarray(classes)
        if len(values) and (values.dtype.kind in "US") != (classes.dtype.kind in "US"):
            i = 0
            raise ValueError(
                f"{name} has label {_fmt(values[i])} at {_position(rows[i], cols[i])}, "
                "of a different "
                f"type than the fitted classes {classes.tolist()!r}."
            )
        sorter = np.argsort(classes, kind="stable")
        pos = np.searchsorted(classes, values, sorter=sorter) if len(values) else values
        pos = np.clip(pos, 0, len(classes) - 1)
        idx = sorter[pos] if len(values) else np.zeros(0, dtype=np.int64)
        bad = classes[idx] != values if len(values) else np.zeros(0, dtype=bool)
        if bad.any():
            i = np.argmax(bad)
            raise ValueError(
                f"{name} has label {_fmt(values[i])} at {_position(rows[i], cols[i])}, "
                "which is not "
                f"one of the known classes {classes.tolist()!r}."
            )
        return idx.astype(np.int64), classes
    if n_classes is not None:
        if len(values) and values.dtype.kind not in "iu":
            i = 0
            raise ValueError(
                f"n_classes={n_classes} requires integer labels in range(n_classes), but {name} "
                f"has label {_fmt(values[i])} at {_position(rows[i], cols[i])}."
            )
        bad = (values < 0) | (values >= n_classes) if len(values) else np.zeros(0, dtype=bool)
        if bad.any():
            i = np.argmax(bad)
            raise ValueError(
                f"{name} has label {_fmt(values[i])} at {_position(rows[i], cols[i])}, outside "
                f"range(n_classes) with n_classes={n_classes}."
            )
        return values.astype(np.int64), np.arange(n_classes)
    if values.dtype.kind in "iu" and len(values):
        low, high = int(values.min()), int(values.max())
        if high - low <= 4 * len(values) + 1024:  # a table of the value range is small: O(n)
            # (one pass and one array: values.astype(np.int64) - low took two)
            offset = (values - values.dtype.type(low) if values.dtype.kind == "u"
                      else np.subtract(values, low, dtype=np.int64)).astype(np.intp, copy=False)
            present = np.bincount(offset, minlength=high - low + 1) > 0
            classes = np.flatnonzero(present).astype(values.dtype) + values.dtype.type(low)
            if present.all():  # labels low..high all given: the offsets are the indices
                return offset.astype(np.int64, copy=False), classes
            return (np.cumsum(present) - 1)[offset], classes
    classes, idx = np.unique(values, return_inverse=True)
    return idx.astype(np.int64).ravel(), classes


def check_known_labels(known, n_tasks, *, missing_label=-1, classes=None, n_classes=None,
                       name="known", what="tasks"):
    """Validate the known labels of tasks (control tasks, gold) and encode them.

    Parameters
    ----------
    known : array-like of shape (n_tasks,)
        The known label of each task, or ``missing_label`` where it is unknown;
        ``None`` and ``NaN`` also mark unknown tasks in an object or float
        array (or pandas Series, read by position).
    n_tasks : int
        Number of tasks.
    missing_label : int, float, str or None, default=-1
        Marker of an unknown task.
    classes : array-like, default=None
        Known classes: every label must be one of them.
    n_classes : int, default=None
        As in :func:`check_votes`: integer labels in ``range(n_classes)``.
        When both are None, the classes are the sorted distinct known labels.
    name : str, default="known"
        Name of the argument in error messages.
    what : str, default="tasks"
        What the tasks are, in error messages (e.g. ``"tasks (rows of X)"``).

    Returns
    -------
    known_class : ndarray of shape (n_tasks,), int64
        Class index of each known task, -1 where unknown.
    classes : ndarray
        The classes of the indices.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.votes import check_known_labels
    >>> known_class, classes = check_known_labels(["cat", None, "dog"], 3)
    >>> known_class.tolist(), classes.tolist()
    ([0, -1, 1], ['cat', 'dog'])
    """
    if hasattr(known, "to_numpy") and not hasattr(known, "columns"):  # Series: by position
        known = known.to_numpy()
    try:
        arr = np.asarray(known)
    except ValueError as exc:
        raise ValueError(f"{name} could not be read as an array of labels: {exc}") from exc
    expected = (f"{name} must hold one label per task ({missing_label!r} where unknown): "
                f"expected shape ({n_tasks},) for the {n_tasks} {what}")
    if arr.ndim != 1:
        raise ValueError(f"{expected}, got a {arr.ndim}-D array of shape {arr.shape}.")
    if len(arr) != n_tasks:
        raise ValueError(f"{expected}, got {len(arr)} labels (shape {arr.shape}).")
    if arr.dtype.kind in "fO" and missing_label is not None:
        # None / NaN (and pandas NA) mark unknown tasks too, whatever the marker
        arr = arr.astype(object)
        is_na = np.frompyfunc(lambda v: v is None or (isinstance(v, float) and v != v)
                              or _is_pandas_na(v), 1, 1)(arr).astype(bool)
        arr[is_na | np.frompyfunc(lambda v: _equal_marker(v, missing_label), 1, 1)(arr)
            .astype(bool)] = None
        missing_label = None
    rows, cols, values = _dense_to_triplets(arr, missing_label, name)
    values = _normalize_values(np.asarray(values), rows, cols, name)
    label, classes = _encode(values, rows, cols, classes, n_classes, name)
    known_class = np.full(n_tasks, -1, dtype=np.int64)
    known_class[rows] = label
    return known_class, classes


def _is_pandas_na(value):
    pd = sys.modules.get("pandas")
    return pd is not None and (value is pd.NA or value is pd.NaT)


def _check_no_duplicate_entry(rows, cols, shape, name, entries="votes"):
    """ValueError naming the first entry that a sparse votes matrix (or ratings matrix:
    ``entries="ratings"``) stores twice.

    ``rows`` and ``cols`` are the matrix's own index arrays, of its index type: scipy would
    convert 64-bit copies back to it (on 1e6 votes in int32, 3 ms instead of 7).
    """
    if not len(rows):
        return
    # worker-major: each worker's tasks in the order of the entries (a stable counting sort), so
    # for task-sorted votes they are already sorted and summing duplicates is linear, without
    # the per-row sort that a task-major pattern needs (8 instead of 11 ms on 1e6 votes)
    pattern = sp.csr_array((np.ones(len(rows), dtype=np.int8), (cols, rows)),
                           shape=shape[::-1])
    pattern.sum_duplicates()  # compiled; keeps the entries' count only
    if pattern.nnz == len(rows):
        return
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    key = rows * max(shape[1], 1) + cols
    _, first, count = np.unique(key, return_index=True, return_counts=True)
    i = first[np.argmax(count > 1)]
    raise ValueError(
        f"sparse {name} stores two {entries} at {_position(rows[i], cols[i])}; "
        f"sum_duplicates() would add the {entries}, so resolve the duplicate first."
    )


# Column names (lower case, without "_", "-", "." and spaces) that mark each role of a long
# table: skcrowd's and crowd-kit's defaults first, then older crowd-kit / Toloka ("performer")
# and common platform exports ("item", "annotator", "answer", "WorkerId", ...).
_LONG_ROLES = {
    "task": ("task", "taskid", "item", "itemid", "question", "questionid", "hitid"),
    "worker": ("worker", "workerid", "performer", "performerid", "annotator", "annotatorid",
               "rater", "raterid", "user", "userid"),
    "label": ("label", "answer", "response", "annotation", "vote"),
}
_ROLE_OF = {alias: role for role, aliases in _LONG_ROLES.items() for alias in aliases}
_SEPARATORS = str.maketrans("", "", "_-. ")
_MAX_ALIAS = 24  # longer names are no alias, even with separators: skip them unread


def _roles(names):
    """role -> the name of ``names`` (strings only) that is its first alias, for roles found."""
    best = {}
    for n in names:
        if isinstance(n, str) and len(n) <= _MAX_ALIAS:
            key = n.strip().lower().translate(_SEPARATORS)
            role = _ROLE_OF.get(key)
            if role is not None:
                rank = _LONG_ROLES[role].index(key)
                if role not in best or rank < best[role][0]:
                    best[role] = (rank, n)
    return {role: n for role, (_, n) in best.items()}


def _long_table_names(data):
    """``(column names, index level names)`` of a table-like ``data``, or None for an array.

    pandas / polars / dask frames and pyarrow tables (their columns), pandas Series (its name),
    mappings (keys) and numpy structured arrays (field names); the index level names of a
    pandas object count too.
    """
    from collections.abc import Mapping

    if sp.issparse(data) or isinstance(data, (Votes, str, bytes)):
        return None
    if isinstance(data, Mapping):
        names = list(data.keys())
    elif isinstance(getattr(data, "column_names", None), list):  # a pyarrow Table
        names = data.column_names
    elif hasattr(data, "columns"):
        try:
            names = list(data.columns)
        except TypeError:  # pragma: no cover - exotic frame
            return None
    elif hasattr(data, "to_numpy") and hasattr(data, "name") and hasattr(data, "index"):
        names = [0 if data.name is None else data.name]  # a Series: reset_index() names it 0
    elif getattr(getattr(data, "dtype", None), "names", None):
        names = list(data.dtype.names)  # a numpy structured array
    else:
        return None
    index = getattr(data, "index", None)
    index_names = [n for n in getattr(index, "names", None) or [] if n is not None] \
        if not isinstance(data, Mapping) else []
    return names, index_names


def _long_format_roles(data):
    """The task, worker and label names of ``data`` if it is a long table, else None.

    Returns ``(task, worker, label, others, in_index)``: the original names (``label`` None when
    it cannot be told, ``others`` the remaining columns then), and whether one of them is an
    index level. See :func:`check_not_long_format` for the rule.
    """
    found = _long_table_names(data)
    if found is None:
        return None
    columns, index_names = found
    found = _roles(columns)
    task, worker, label = found.get("task"), found.get("worker"), found.get("label")
    if task is None or worker is None:
        # a Series / frame indexed by (task, worker), or indexed by task with worker and label
        # columns; an index named "task" alone is a votes matrix's (rows are tasks)
        in_idx = _roles(index_names)
        i_task, i_worker = in_idx.get("task"), in_idx.get("worker")
        if i_task is not None and i_worker is not None:
            task, worker = i_task, i_worker
        elif i_task is not None and worker is not None and label is not None:
            task = i_task
        else:
            return None
        in_index = True
    else:
        in_index = False
    others = [n for n in columns if n not in (task, worker)]
    if label is None and len(others) == 1:
        label = others[0]
    return task, worker, label, others, in_index


def check_not_long_format(data, name="votes"):
    """Raise a ValueError if ``data`` is long-format votes rather than a votes matrix.

    A long table (one row per vote, columns ``task``, ``worker``, ``label`` as crowd-kit and
    :func:`votes_from_long` use) read as a votes matrix would make every vote a task and the
    ids votes. :func:`check_votes` and every estimator call this before reading ``data``; the
    error shows the :func:`votes_from_long` call that converts it.

    A pandas, polars or dask frame, a pyarrow table, a mapping of columns, a pandas Series or a
    numpy structured array is long format when its column names include a task column and a
    worker column: ``task``, ``item``, ``question`` (with or without ``_id``; also ``HITId``)
    and ``worker``, ``performer``, ``annotator``, ``rater``, ``user`` (likewise), compared as
    strings without case, ``_``, ``-``, ``.`` or spaces. The label column is ``label``,
    ``answer``, ``response``, ``annotation`` or ``vote``, else the only other column. A pandas
    object indexed by (task, worker), or indexed by task with worker and label columns, is long
    format too (the call then starts with ``reset_index()``); an index named ``task`` alone is
    a votes matrix's. A votes matrix whose worker ids are other names (``0, 1, 2``, ``"w1"``,
    ``"alice"``) is never taken for one.

    Parameters
    ----------
    data : object
        The input to check; arrays and sparse matrices always pass.
    name : str, default="votes"
        Name of the argument in the message; its leading identifier is used in the suggested
        call.

    Raises
    ------
    ValueError
        If ``data`` looks like long-format votes.

    Examples
    --------
    >>> import pandas as pd
    >>> from skcrowd import check_not_long_format
    >>> check_not_long_format(pd.DataFrame({"alice": [0, 1], "bob": [1, -1]}), "X")
    >>> long = pd.DataFrame({"task": ["t1", "t1"], "worker": ["a", "b"], "label": [0, 1]})
    >>> try:
    ...     check_not_long_format(long, "X")
    ... except ValueError as exc:
    ...     print(str(exc).split("`")[1].split(" = ")[1])  # the call it suggests
    skcrowd.votes_from_long(X, task='task', worker='worker', label='label')
    """
    found = _long_format_roles(data)
    if found is None:
        return
    task, worker, label, others, in_index = found
    match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", name)
    base = match.group(0) if match else "data"
    expr = base + (".reset_index()" if in_index else "")
    if label is None:
        label_arg = ("<the label column, one of " + ", ".join(map(_fmt, others)) + ">"
                     if others else "<the label column>")
        shown = f"{_fmt(task)}, {_fmt(worker)}"
    else:
        label_arg = _fmt(label)
        shown = f"{_fmt(task)}, {_fmt(worker)}, {label_arg}"
    where = "columns / index levels" if in_index else "columns"
    align = " (order the rows of X the same way)" if base == "y" else ""
    by_id = (f"; for one label per task id, as crowd-kit gives, skcrowd.aggregate_long(aggregator, "
             f"{expr}, task={_fmt(task)}, worker={_fmt(worker)}, label={label_arg})"
             if base == "X" else "")
    call = (f"votes, tasks, workers, classes = skcrowd.votes_from_long({expr}, "
            f"task={_fmt(task)}, worker={_fmt(worker)}, label={label_arg})")
    raise ValueError(
        f"{name} looks like long-format votes (one row per vote, {where} {shown}), not a votes "
        f"matrix (tasks x workers). Convert it first: `{call}`; the rows of votes follow "
        f"tasks{align} and its labels are indices into classes{by_id}."
    )


def check_votes(
    votes,
    *,
    missing_label=-1,
    classes=None,
    n_classes=None,
    n_workers=None,
    allow_no_votes=False,
    name="votes",
):
    """Validate a votes matrix and encode it as task-sorted triplets.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_workers)
        Entry ``(i, j)`` is the label worker ``j`` gave task ``i``, or
        ``missing_label``. Accepted: numpy arrays (int, float, str or object),
        numpy masked arrays (masked entries are missing), pandas DataFrames,
        nested lists, and scipy.sparse matrices/arrays, whose *stored* entries
        are the votes (an explicitly stored 0 is label 0; implicit entries are
        missing). A 1-D array is one vote per task (a single worker).
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in dense input. ``np.nan`` and ``None`` both
        mark NaN, None and pandas NA entries as missing; ``""`` marks the
        empty and whitespace-only strings. Such a string is never a label:
        with another marker it raises a ``ValueError`` that says so.
    classes : array-like, default=None
        Known classes (e.g. a fitted ``classes_``): every label must be one of
        them. Takes precedence over ``n_classes``.
    n_classes : int, default=None
        Number of classes when some never appear: integer labels must lie in
        ``range(n_classes)`` and ``classes`` becomes ``arange(n_classes)``.
        When both are None, the classes are the sorted distinct labels.
    n_workers : int, default=None
        Expected number of columns (the fitted number of workers).
    allow_no_votes : bool, default=False
        Whether a matrix without any observed vote is accepted.
    name : str, default="votes"
        Name of the argument, used in error messages.

    Returns
    -------
    votes : Votes
        The observed votes, sorted by task, with labels as class indices.

    Raises
    ------
    ValueError, TypeError
        With a message naming the offending argument, entry and label.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import check_votes
    >>> v = check_votes(np.array([["cat", None], ["dog", "cat"]], dtype=object),
    ...                 missing_label=None)
    >>> v.classes.tolist(), v.label.tolist()
    (['cat', 'dog'], [0, 1, 0])
    """
    refuse_soft_votes(votes, name)
    check_not_long_format(votes, name)
    _validate_missing_label(missing_label)
    if n_classes is not None and (
        not isinstance(n_classes, numbers.Integral) or isinstance(n_classes, bool) or n_classes < 1
    ):
        raise ValueError(f"n_classes must be a positive integer or None, got {n_classes!r}.")
    if classes is not None:
        classes = np.asarray(classes)
        if classes.ndim != 1 or len(classes) == 0 or len(np.unique(classes)) != len(classes):
            raise ValueError(
                f"classes must be a non-empty 1-D array of distinct labels, got {classes!r}."
            )

    if sp.issparse(votes):
        coo = votes.tocoo()  # keeps explicit zeros; duplicates are checked below
        if coo.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_tasks, n_workers), got {coo.ndim}-D sparse.")
        n_tasks, n_cols = coo.shape
        _check_no_duplicate_entry(coo.row, coo.col, coo.shape, name)
        rows, cols = np.asarray(coo.row, dtype=np.int64), np.asarray(coo.col, dtype=np.int64)
        values = np.asarray(coo.data)
    else:
        if isinstance(votes, np.ma.MaskedArray):
            mask = np.ma.getmaskarray(votes)
            arr = np.asarray(votes.data)
            if arr.ndim == 1:
                arr, mask = arr[:, None], mask[:, None]
            if arr.ndim != 2:
                raise ValueError(f"{name} must be 2-D (n_tasks, n_workers), got {arr.ndim}-D.")
            n_tasks, n_cols = arr.shape
            # masked entries are missing, and so are unmasked entries equal to missing_label
            rows, cols, values = _dense_to_triplets(arr, missing_label, name, hidden=mask)
        else:
            if hasattr(votes, "to_numpy") and hasattr(votes, "columns"):  # DataFrame
                arr = votes.to_numpy(dtype=object) if any(
                    str(d) in ("object", "string", "category") or "Int" in str(d)
                    or str(d).startswith("string")
                    for d in getattr(votes, "dtypes", [])
                ) else votes.to_numpy()
            elif hasattr(votes, "to_numpy"):  # Series
                arr = votes.to_numpy()
            else:
                arr = votes
            try:
                arr = _as_array(arr)
            except ValueError as exc:
                raise ValueError(f"{name} could not be read as an array: {exc}") from exc
            if arr.ndim == 1:
                arr = arr[:, None]
            if arr.ndim != 2:
                raise ValueError(
                    f"{name} must be 2-D (n_tasks, n_workers), got an array of shape {arr.shape}."
                )
            n_tasks, n_cols = arr.shape
            rows, cols, values = _dense_to_triplets(arr, missing_label, name)

    if n_tasks == 0 or n_cols == 0:
        raise ValueError(
            f"{name} is empty: shape ({n_tasks}, {n_cols}); at least one task and one worker "
            "are required."
        )
    if n_workers is not None and n_cols != n_workers:
        raise ValueError(
            f"{name} has {n_cols} workers (columns) but the estimator was fitted with "
            f"{n_workers}; keep one column per fitted worker, -1 where a worker did not vote."
        )
    if len(values) == 0 and not allow_no_votes:
        raise ValueError(f"{name} contains no observed vote (every entry is missing).")

    values = _normalize_values(np.asarray(values), rows, cols, name)
    label, classes = _encode(values, rows, cols, classes, n_classes, name)
    _check_no_blank_label(
        classes, label, name, lambda i: _position(rows[i], cols[i]),
        "Mark missing votes with missing_label='' (empty and whitespace-only strings are then "
        f"missing) or with None / NaN and missing_label=None (now {missing_label!r}).")
    if len(rows) > 1 and np.any(rows[1:] < rows[:-1]):
        order = np.argsort(rows, kind="stable")
        rows, cols, label = rows[order], cols[order], label[order]
    return Votes(
        task=rows.astype(np.int64, copy=False),
        worker=cols.astype(np.int64, copy=False),
        label=label.astype(np.int64, copy=False),
        n_tasks=int(n_tasks),
        n_workers=int(n_cols),
        classes=classes,
    )


# ---------------------------------------------------------------------------
# Long format
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LongVotes:
    """Result of :func:`votes_from_long`.

    Attributes
    ----------
    votes : ndarray of shape (n_tasks, n_workers) or sparse array
        Class indices with ``-1`` for missing (dense), or a CSR array whose
        stored entries are class indices (``sparse=True``).
    tasks : ndarray of shape (n_tasks,)
        Original task id of each row.
    workers : ndarray of shape (n_workers,)
        Original worker id of each column.
    classes : ndarray of shape (n_classes,)
        Original label of each class index.
    """

    votes: object
    tasks: np.ndarray
    workers: np.ndarray
    classes: np.ndarray

    def __iter__(self):
        return iter((self.votes, self.tasks, self.workers, self.classes))


def _column(data, key, what):
    if isinstance(key, str) or np.isscalar(key):
        try:
            col = data[key]
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise KeyError(f"long-format data has no {what} column {key!r}.") from exc
    else:
        col = key
    col = _as_array(col.to_numpy() if hasattr(col, "to_numpy") else col)
    if col.ndim != 1:
        raise ValueError(f"the {what} column must be 1-D, got shape {col.shape}.")
    return col


_INTEGER_RE = re.compile(r"[+-]?[0-9]+")


def _as_ints_if_possible(values):
    """String values as an int64 array if every one is written as an integer, else as str.

    How ids and labels read as text (a long-format votes CSV, the id tables of
    a dataset folder) become labels: ``"2"`` sorts before ``"10"`` when every
    value is an integer. Only plain decimal integers count (``int()`` would
    also read ``"6_11"`` as 611 and ``" 7"`` as 7, merging distinct ids).
    """
    values = np.asarray(values, dtype=str)
    if not all(_INTEGER_RE.fullmatch(v) for v in values):
        return values
    try:
        return np.array([int(v) for v in values], dtype=np.int64)
    except OverflowError:
        return values


class _DuplicateVoteError(ValueError):
    """A worker voted more than once on a task of long-format votes.

    Raised by :func:`votes_from_long` with ``duplicates="raise"``; ``task`` and
    ``worker`` are the ids of the first repeated pair, ``rows`` the positions
    (from 0) of its rows in the long data.
    """

    def __init__(self, task, worker, rows):
        self.task, self.worker, self.rows = task, worker, rows
        super().__init__(
            f"worker {_fmt(worker)} voted more than once on task {_fmt(task)} (rows of the "
            f"long data: {rows[:5]}); keep one vote per (task, worker), or pass "
            "duplicates='first' or 'last'."
        )


_DUPLICATE_POLICIES = ("raise", "first", "last")


def _one_vote_per_pair(key, duplicates):
    """Rows (sorted) to keep of the votes of keys ``key`` (one per (task, worker) pair).

    ``duplicates``: "first" or "last" keeps the first or last row of each key in row
    order; "raise" keeps all the rows and returns the rows of the repeated key that comes
    first in row order too (None when no key repeats).
    """
    if duplicates == "last":
        _, from_end = np.unique(key[::-1], return_index=True)
        return np.sort(len(key) - 1 - from_end), None
    _, first, count = np.unique(key, return_index=True, return_counts=True)
    if duplicates == "first":
        return np.sort(first), None
    repeated = None
    if (count > 1).any():  # the repeated key whose first row comes first
        repeated = np.flatnonzero(key == key[first[count > 1].min()])
    return np.arange(len(key)), repeated


def votes_from_long(data=None, task="task", worker="worker", label="label", *, sparse=False,
                    duplicates="raise"):
    """Build a votes matrix from long-format votes (one row per vote).

    Parameters
    ----------
    data : pandas DataFrame, mapping of arrays, or None
        The long table. With ``data=None``, ``task``, ``worker`` and ``label``
        are the columns themselves (array-likes).
    task, worker, label : str or array-like, default "task", "worker", "label"
        Column names in ``data`` or the columns. Ids and labels may be of any
        hashable, sortable type (ints, strings).
    sparse : bool, default=False
        Return a ``scipy.sparse.csr_array`` (stored entries are votes) instead
        of a dense array: use it when ``n_tasks * n_workers`` is large.
    duplicates : {"raise", "first", "last"}, default="raise"
        What to do when a worker voted more than once on a task (a repeated
        ``(task, worker)`` pair, even with the same label): raise a ValueError
        naming the pair and its rows, or keep the first or the last of its rows
        in the order of the long data. The classes are the labels of the votes
        kept; every row is checked, the dropped ones included.

    Returns
    -------
    LongVotes
        ``(votes, tasks, workers, classes)``; unpacks as a tuple. ``votes``
        holds class indices (``-1`` missing); ``tasks[i]``, ``workers[j]`` and
        ``classes[k]`` give back the original ids and labels.

    Raises
    ------
    ValueError
        If a column is missing or of the wrong length, a value is missing,
        ``duplicates`` is not one of its values, or (``duplicates="raise"``)
        one worker voted twice on one task.

    See Also
    --------
    votes_to_long : the inverse.

    Examples
    --------
    >>> from skcrowd import votes_from_long
    >>> lv = votes_from_long(None, task=["a", "a", "b"], worker=[10, 11, 10],
    ...                      label=["cat", "dog", "dog"])
    >>> lv.votes
    array([[ 0,  1],
           [ 1, -1]])
    >>> lv.tasks.tolist(), lv.workers.tolist(), lv.classes.tolist()
    (['a', 'b'], [10, 11], ['cat', 'dog'])

    Worker 10 voted twice on task "a" (first "cat", then "dog"); keep the first or the last:

    >>> task, worker = ["a", "a", "b", "a"], [10, 11, 10, 10]
    >>> label = ["cat", "cat", "dog", "dog"]
    >>> votes_from_long(None, task, worker, label, duplicates="first").votes
    array([[ 0,  0],
           [ 1, -1]])
    >>> votes_from_long(None, task, worker, label, duplicates="last").votes
    array([[ 1,  0],
           [ 1, -1]])
    """
    if not (isinstance(duplicates, str) and duplicates in _DUPLICATE_POLICIES):
        raise ValueError(
            f"duplicates must be one of {', '.join(map(repr, _DUPLICATE_POLICIES))}, "
            f"got {duplicates!r}."
        )
    cols = {}
    for key, what in ((task, "task"), (worker, "worker"), (label, "label")):
        cols[what] = _column(data, key, what) if data is not None else _column(None, key, what)
    lengths = {k: len(v) for k, v in cols.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"long-format columns differ in length: {lengths}.")
    if lengths["task"] == 0:
        raise ValueError("long-format data has no rows (no votes).")
    encoded = {}
    for what, col in cols.items():
        if col.dtype.kind == "O":
            is_none, is_nan = _none_and_nan(col)
            isna = is_none | is_nan
        elif col.dtype.kind == "f":
            isna = np.isnan(col)
        else:
            isna = np.zeros(len(col), dtype=bool)
        if isna.any():
            raise ValueError(
                f"long-format {what} column has a missing value at row {int(np.argmax(isna))}; "
                "drop rows without a vote before converting."
            )
        if what == "label":
            col = _normalize_values(col, np.arange(len(col)), np.zeros(len(col), int),
                                    "label column")
        try:
            uniq, inv = np.unique(col, return_inverse=True)
        except TypeError as exc:
            raise TypeError(f"long-format {what} column mixes incomparable types: {exc}") from exc
        encoded[what] = (uniq, inv.ravel().astype(np.int64))
    _check_no_blank_label(*encoded["label"], "long-format label column",
                          lambda i: f"row {i} of the long data",
                          "Drop the rows without a vote before converting.")
    (tasks, t), (workers, w), (classes, lab) = encoded["task"], encoded["worker"], encoded["label"]
    n_t, n_w = len(tasks), len(workers)
    key = t * n_w + w
    keep, repeated = _one_vote_per_pair(key, duplicates)
    if repeated is not None:
        i = repeated[0]
        raise _DuplicateVoteError(tasks[t[i]], workers[w[i]], repeated.tolist())
    if len(keep) < len(key):
        t, w, lab = t[keep], w[keep], lab[keep]
        used = np.unique(lab)
        if len(used) < len(classes):  # a label only of dropped rows is no class
            classes, lab = classes[used], np.searchsorted(used, lab)
    if sparse:
        votes = sp.csr_array((lab, (t, w)), shape=(n_t, n_w))
    else:
        votes = np.full((n_t, n_w), -1, dtype=np.int64)
        votes[t, w] = lab
    return LongVotes(votes=votes, tasks=tasks, workers=workers, classes=classes)


def aggregate_long(aggregator, data=None, task="task", worker="worker", label="label", *,
                   proba=False, duplicates="raise"):
    """Fit an aggregator on long-format votes and give one result per task id (as crowd-kit).

    A convenience outside the estimators, whose ``fit_predict`` keeps scikit-learn's contract
    (one output row per input row): the long table is converted with :func:`votes_from_long`
    (as a sparse votes matrix), ``aggregator`` is fitted on it, and its labels are mapped back
    to the task ids and original labels.

    Parameters
    ----------
    aggregator : aggregator
        An unfitted or fitted aggregator (votes as ``X``: :class:`~skcrowd.MajorityVote`,
        :class:`~skcrowd.DawidSkene`, ...); it is fitted in place, on the workers sorted by id
        (the columns of the votes matrix).
    data : pandas DataFrame, mapping of arrays, or None
        The long table, one row per vote; see :func:`votes_from_long`.
    task, worker, label : str or array-like, default "task", "worker", "label"
        Column names in ``data``, or the columns themselves.
    proba : bool, default=False
        Return the soft labels (``predict_proba``) instead of the labels.
    duplicates : {"raise", "first", "last"}, default="raise"
        A worker's repeated votes on a task: an error, or the first or last row kept;
        see :func:`votes_from_long`.

    Returns
    -------
    pandas.Series or pandas.DataFrame
        The aggregated label of each task, indexed by task id (sorted); with ``proba=True``,
        a DataFrame with one column per original label.

    Raises
    ------
    TypeError
        If ``aggregator`` is not an aggregator (feature models take the votes as ``y``). An
        aggregator is an estimator whose class sets ``_votes_as_X = True``, as every subclass
        of skcrowd's base aggregator does: the votes module names the protocol, the
        aggregation layer above it implements it.

    Examples
    --------
    >>> import pandas as pd
    >>> from skcrowd import MajorityVote, aggregate_long
    >>> df = pd.DataFrame({"task": ["t1", "t1", "t1", "t2", "t2"],
    ...                    "worker": ["a", "b", "c", "a", "b"],
    ...                    "label": ["cat", "cat", "dog", "dog", "dog"]})
    >>> aggregate_long(MajorityVote(), df).to_dict()
    {'t1': 'cat', 't2': 'dog'}
    """
    pd = import_optional("pandas", "aggregate_long (it returns a pandas Series)")
    if not getattr(aggregator, "_votes_as_X", False):
        raise TypeError(
            f"aggregate_long needs an aggregator (the votes are its X), got "
            f"{type(aggregator).__name__}; feature models take the votes matrix of "
            "votes_from_long as y."
        )
    votes, tasks, _, classes = votes_from_long(data, task, worker, label, sparse=True,
                                               duplicates=duplicates)
    index = pd.Index(tasks, name=task if isinstance(task, str) else "task")
    if proba:
        out = np.asarray(aggregator.fit(votes).predict_proba(votes))
        return pd.DataFrame(out, index=index, columns=classes[aggregator.classes_])
    labels = classes[np.asarray(aggregator.fit_predict(votes))]
    return pd.Series(labels, index=index, name=label if isinstance(label, str) else "label")


def votes_to_long(
    votes, *, tasks=None, workers=None, classes=None, missing_label=-1, as_frame=False
):
    """Turn a votes matrix into long format, one row per observed vote.

    The inverse of :func:`votes_from_long`.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_workers)
        Votes as accepted by :func:`check_votes`.
    tasks, workers : array-like, default=None
        Ids of the rows and columns (default ``0 .. n - 1``).
    classes : array-like, default=None
        When given, ``votes`` holds class indices and labels are mapped back
        through ``classes`` (as returned by :func:`votes_from_long`).
    missing_label : default=-1
        Missing marker of ``votes``.
    as_frame : bool, default=False
        Return a pandas DataFrame (needs pandas) instead of a dict of arrays.

    Returns
    -------
    dict or pandas.DataFrame
        Columns ``task``, ``worker``, ``label``, sorted by task then worker.

    Examples
    --------
    >>> from skcrowd import votes_from_long, votes_to_long
    >>> lv = votes_from_long(None, task=["a", "b"], worker=[1, 1], label=["x", "y"])
    >>> out = votes_to_long(lv.votes, tasks=lv.tasks, workers=lv.workers,
    ...                     classes=lv.classes)
    >>> [v.tolist() for v in out.values()]
    [['a', 'b'], [1, 1], ['x', 'y']]
    """
    if classes is not None:
        classes = np.asarray(classes)
        v = check_votes(votes, missing_label=missing_label, n_classes=len(classes))
        labels = classes[v.label]
    else:
        v = check_votes(votes, missing_label=missing_label)
        labels = v.classes[v.label]
    for what, ids, n in (("tasks", tasks, v.n_tasks), ("workers", workers, v.n_workers)):
        if ids is not None and len(ids) != n:
            raise ValueError(f"{what} has {len(ids)} ids for {n} {what} in votes.")
    order = np.lexsort((v.worker, v.task))
    t, w = v.task[order], v.worker[order]
    out = {
        "task": np.asarray(tasks)[t] if tasks is not None else t,
        "worker": np.asarray(workers)[w] if workers is not None else w,
        "label": labels[order],
    }
    if as_frame:
        pd = import_optional("pandas", "votes_to_long(as_frame=True)")
        return pd.DataFrame(out)
    return out
