"""Scores of annotations without gold labels: the majority vote, the class imbalance.

:func:`mv_accuracy_score` scores predictions against the majority vote of the
votes (tie-aware); :func:`imbalance_ratio` measures how unbalanced
annotations are across classes.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils import check_array, column_or_1d
from sklearn.utils._param_validation import Interval, validate_params

from ..votes import _fmt, check_votes

__all__ = ["mv_accuracy_score", "imbalance_ratio"]


def _prediction_labels(y_pred, n_tasks, vote_classes):
    """``y_pred`` as a 1-D label array comparable with the vote labels."""
    pred = column_or_1d(np.asarray(y_pred), warn=True)
    if len(pred) != n_tasks:
        raise ValueError(
            f"y_pred has {len(pred)} predictions but votes has {n_tasks} tasks (rows)."
        )
    if pred.dtype.kind == "f":
        frac = ~np.isfinite(pred) | (pred != np.round(pred))
        if frac.any():
            i = int(np.argmax(frac))
            raise ValueError(
                f"y_pred has non-integer label {_fmt(pred[i])} at row {i}; "
                "predictions must be class labels."
            )
        pred = pred.astype(np.int64)
    if len(pred) and (pred.dtype.kind in "USO") != (vote_classes.dtype.kind in "USO"):
        raise TypeError(
            f"y_pred has label {_fmt(pred[0])} at row 0, of a different type than the vote "
            f"labels {vote_classes.tolist()[:10]!r}."
        )
    return pred


@validate_params(
    {
        "votes": ["array-like", "sparse matrix"],
        "y_pred": ["array-like"],
        "missing_label": "no_validation",
        "classes": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def mv_accuracy_score(votes, y_pred, *, missing_label=-1, classes=None):
    """Tie-aware accuracy of predictions against the majority vote of the votes.

    For each task with at least one vote, let ``m`` be the number of classes
    sharing the largest vote count: the prediction earns ``1/m`` if it is one
    of them, else 0 (the expected accuracy against a majority vote whose ties
    are broken uniformly at random). Tasks without votes are skipped. This is
    the default ``score`` of skcrowd's feature models: it needs no gold labels,
    so it works for model selection on held-out votes.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_workers)
        Votes as accepted by :func:`skcrowd.check_votes`.
    y_pred : array-like of shape (n_tasks,)
        Predicted labels, in the same label space as the votes.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in dense ``votes``.
    classes : array-like, default=None
        All labels. Default: the labels seen in ``votes`` and ``y_pred``.
        When given, a vote or a prediction outside it raises.

    Returns
    -------
    float
        The mean credit over tasks with votes, in ``[0, 1]``.

    Raises
    ------
    ValueError
        If no task has a vote, ``y_pred`` has the wrong length, or a label is
        not in ``classes``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.metrics import mv_accuracy_score
    >>> votes = np.array([[0, 0, 1],      # majority 0
    ...                   [0, 1, -1],     # tie between 0 and 1
    ...                   [-1, -1, -1]])  # no vote: skipped
    >>> mv_accuracy_score(votes, [0, 1, 1])
    0.75
    """
    if classes is not None:
        classes = np.unique(np.asarray(classes))
    v = check_votes(votes, missing_label=missing_label, classes=classes)
    pred = _prediction_labels(y_pred, v.n_tasks, v.classes)
    if classes is None:
        classes = np.union1d(v.classes, pred)
    vote_class = np.searchsorted(classes, v.classes)[v.label]
    pred_class = np.clip(np.searchsorted(classes, pred), 0, len(classes) - 1)
    bad = classes[pred_class] != pred
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"y_pred has label {_fmt(pred[i])} at row {i}, which is not one of the classes "
            f"{classes.tolist()!r}."
        )
    counts = np.bincount(
        v.task * len(classes) + vote_class, minlength=v.n_tasks * len(classes)
    ).reshape(v.n_tasks, len(classes))
    top = counts.max(axis=1)
    voted = top > 0
    n_tied = (counts == top[:, None]).sum(axis=1)
    hit = counts[np.arange(v.n_tasks), pred_class] == top
    return float(np.mean(hit[voted] / n_tied[voted]))


@validate_params(
    {
        "y": ["array-like", "sparse matrix", None],
        "class_counts": ["array-like", None],
        "missing_label": "no_validation",
        "classes": ["array-like", None],
        "n_classes": [Interval(Integral, 1, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def imbalance_ratio(y=None, *, class_counts=None, missing_label=-1, classes=None, n_classes=None):
    """Class-imbalance ratio ``R = (N_max - N_min) / N`` of annotations.

    ``N_max`` and ``N_min`` are the numbers of annotations of the most and the
    least frequent class and ``N`` the total number of annotations (Shi et al.,
    eq. 6). ``R`` lies in ``[0, 1]``: 0 for perfectly balanced annotations,
    close to 1 when one class takes nearly all of them.

    Give either the annotations ``y`` or the per-class counts.

    Parameters
    ----------
    y : array-like or sparse matrix of shape (n_tasks, n_workers) or (n_tasks,), default=None
        A votes matrix (every observed vote is one annotation) or a 1-D array
        of labels (e.g. gold or pseudo-labels, one annotation per entry).
    class_counts : array-like of shape (n_classes,), default=None
        Number of annotations of each class, instead of ``y``.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``y``.
    classes : array-like, default=None
        All classes, so that a class without annotations counts as
        ``N_min = 0``. By default only the labels seen in ``y`` count.
    n_classes : int, default=None
        For integer labels ``0 .. n_classes - 1``, the number of classes
        (alternative to ``classes``).

    Returns
    -------
    float
        The imbalance ratio ``R``.

    References
    ----------
    Shi, Li, Huang. "Learning from crowds with sparse and imbalanced
    annotations" (Self-Crowd), equation 6.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.metrics import imbalance_ratio
    >>> imbalance_ratio(class_counts=[50, 30, 20])
    0.3
    >>> votes = np.array([[0, 0, -1], [0, 1, 1]])
    >>> imbalance_ratio(votes)   # 3 votes for 0, 2 for 1
    0.2
    >>> imbalance_ratio(votes, n_classes=3)   # class 2 never voted
    0.6
    """
    if (y is None) == (class_counts is None):
        raise ValueError("give exactly one of y (annotations) and class_counts.")
    if class_counts is not None:
        counts = check_array(
            class_counts, ensure_2d=False, dtype=np.float64, input_name="class_counts"
        )
        if counts.ndim != 1 or len(counts) == 0:
            raise ValueError(f"class_counts must be 1-D and non-empty, got shape {counts.shape}.")
        if (counts < 0).any():
            k = int(np.argmax(counts < 0))
            raise ValueError(f"class_counts has negative count {_fmt(counts[k])} for class {k}.")
    else:
        v = check_votes(y, missing_label=missing_label, classes=classes, n_classes=n_classes,
                        name="y")
        counts = np.bincount(v.label, minlength=v.n_classes).astype(np.float64)
    total = counts.sum()
    if total == 0:
        raise ValueError("class_counts sums to 0: the imbalance ratio needs annotations.")
    return float((counts.max() - counts.min()) / total)
