"""Scores of predicted probabilities against gold labels.

:func:`expected_calibration_error`, :func:`soft_accuracy_score` and
:func:`top_k_accuracy_score` score ``y_proba`` of shape ``(n_samples,
n_classes)`` against ``y_true``, one class per task. By default ``y_true``
holds **column indices** of ``y_proba``; ``labels`` gives it in label space
(see :mod:`skcrowd.metrics`).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.metrics import top_k_accuracy_score as _sklearn_top_k_accuracy_score
from sklearn.utils import check_array, check_consistent_length, column_or_1d
from sklearn.utils._param_validation import Interval, validate_params

from ..votes import _fmt

__all__ = ["expected_calibration_error", "soft_accuracy_score", "top_k_accuracy_score"]

# Rows of a probability matrix must sum to one within this tolerance (float32
# softmax outputs over many classes are off by ~1e-6).
_PROBA_SUM_ATOL = 1e-4


# ---------------------------------------------------------------------------
# Input checks shared by the gold-label scores
# ---------------------------------------------------------------------------


def _check_proba(y_proba, name="y_proba"):
    """Probabilities as a float ``(n_samples, n_classes)`` array.

    A 1-D array is the probability of the second of two classes (binary case).
    """
    proba = check_array(y_proba, ensure_2d=False, dtype=np.float64, input_name=name)
    if proba.ndim == 1:
        proba = np.column_stack([1.0 - proba, proba])
    if proba.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {proba.shape}.")
    bad = (proba < 0) | (proba > 1)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} has value {_fmt(proba[row, col])} at row {row}, column {col}; "
            "probabilities must lie in [0, 1]."
        )
    off = np.abs(proba.sum(axis=1) - 1.0) > _PROBA_SUM_ATOL
    if off.any():
        row = int(np.argmax(off))
        raise ValueError(
            f"row {row} of {name} sums to {_fmt(proba[row].sum())}, not 1; pass probabilities "
            "(e.g. predict_proba output), not scores."
        )
    return proba


def _column_indices(y_true, n_classes, labels, name="y_true"):
    """Column index of each entry of ``y_true`` (see the module docstring)."""
    y = column_or_1d(np.asarray(y_true), warn=True)
    if labels is None:
        if y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
            y = y.astype(np.int64)
        if y.dtype.kind not in "iu":
            i = 0 if y.dtype.kind != "f" else int(np.argmax(~np.isfinite(y) | (y != np.round(y))))
            raise ValueError(
                f"{name} has label {_fmt(y[i])} at row {i}; without `labels`, {name} must hold "
                f"column indices 0..{n_classes - 1} of the probabilities; pass labels= the "
                "label of each column (e.g. estimator.classes_)."
            )
        bad = (y < 0) | (y >= n_classes)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"{name} has label {_fmt(y[i])} at row {i}, outside the column indices "
                f"0..{n_classes - 1} of the probabilities; pass labels= the label of each "
                "column if y_true is in label space."
            )
        return y.astype(np.int64)
    labels = column_or_1d(np.asarray(labels))
    if len(labels) != n_classes:
        raise ValueError(
            f"labels has {len(labels)} entries but the probabilities have {n_classes} columns."
        )
    if len(np.unique(labels)) != len(labels):
        raise ValueError(f"labels must be distinct, got {labels.tolist()!r}.")
    if len(y) and (y.dtype.kind in "USO") != (labels.dtype.kind in "USO"):
        raise ValueError(
            f"{name} has label {_fmt(y[0])} at row 0, of a different type than labels "
            f"{labels.tolist()!r}."
        )
    sorter = np.argsort(labels, kind="stable")
    pos = np.clip(np.searchsorted(labels, y, sorter=sorter), 0, n_classes - 1)
    idx = sorter[pos]
    bad = labels[idx] != y
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{name} has label {_fmt(y[i])} at row {i}, which is not one of labels "
            f"{labels.tolist()!r}."
        )
    return idx.astype(np.int64)


# ---------------------------------------------------------------------------
# Scores against gold labels
# ---------------------------------------------------------------------------


@validate_params(
    {
        "y_true": ["array-like"],
        "y_proba": ["array-like"],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "labels": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def expected_calibration_error(y_true, y_proba, *, n_bins=15, labels=None):
    r"""Expected calibration error (ECE) of predicted probabilities.

    The confidence of a prediction is its largest probability and the
    prediction is the class of that probability (the first one on ties).
    Predictions are grouped into ``n_bins`` equal-width confidence bins
    :math:`I_m = (\frac{m-1}{M}, \frac{m}{M}]` and

    .. math:: \mathrm{ECE} = \sum_{m=1}^{M} \frac{|B_m|}{n}
              \left|\mathrm{acc}(B_m) - \mathrm{conf}(B_m)\right|,

    where :math:`B_m` holds the samples whose confidence falls in :math:`I_m`
    (Guo et al., 2017; Lefort et al., 2024, appendix C, with ``M = 15``).
    Empty bins contribute nothing. 0 is perfect calibration; papers often
    report ``1 - ECE``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Gold labels: column indices of ``y_proba``, or labels from ``labels``.
    y_proba : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, rows summing to one. A 1-D array is the
        probability of class 1 in a binary problem.
    n_bins : int, default=15
        Number of equal-width confidence bins on ``[0, 1]``.
    labels : array-like of shape (n_classes,), default=None
        Label of each column of ``y_proba`` (e.g. ``estimator.classes_``).
        When None, ``y_true`` holds column indices ``0 .. n_classes - 1``.

    Returns
    -------
    float
        The ECE, in ``[0, 1]``.

    References
    ----------
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger. "On calibration of modern
    neural networks", ICML 2017.

    T. Lefort, B. Charlier, A. Joly, J. Salmon. "Identify ambiguous tasks
    combining crowdsourced labels by weighting Areas Under the Margin",
    TMLR 2024 (appendix C).

    Examples
    --------
    >>> from skcrowd.metrics import expected_calibration_error
    >>> y_proba = [[0.9, 0.1], [0.9, 0.1], [0.4, 0.6], [0.3, 0.7]]
    >>> y_true = [0, 1, 1, 1]
    >>> round(expected_calibration_error(y_true, y_proba, n_bins=5), 4)
    0.375
    """
    proba = _check_proba(y_proba)
    y = _column_indices(y_true, proba.shape[1], labels)
    check_consistent_length(y, proba)
    if len(y) == 0:
        raise ValueError("y_true is empty; the ECE needs at least one sample.")
    confidence = proba.max(axis=1)
    correct = proba.argmax(axis=1) == y
    edges = np.arange(n_bins + 1) / n_bins  # m / M exactly rounded, like a literal 0.6
    bins = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, n_bins - 1)
    # |B_m| / n * |acc(B_m) - conf(B_m)| = |sum of correct - sum of confidences| / n:
    # no division by the bin size, so empty bins are harmless.
    hits = np.bincount(bins, weights=correct, minlength=n_bins)
    conf = np.bincount(bins, weights=confidence, minlength=n_bins)
    return float(np.abs(hits - conf).sum() / len(y))


@validate_params(
    {"y_true": ["array-like"], "y_proba": ["array-like"], "labels": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def soft_accuracy_score(y_true, y_proba, *, labels=None):
    """Mean probability given to the gold class (expected accuracy of soft labels).

    For hard gold labels this is :math:`\\frac1n\\sum_i p_i(y_i)`: the expected
    accuracy of a prediction drawn at random from each row of ``y_proba``
    (rather than its argmax). It rewards putting mass on the right class and,
    unlike accuracy, distinguishes a confident from a hesitant right answer.

    With soft gold labels (2-D ``y_true``, e.g. the distribution of many
    annotations per task) it is :math:`\\frac1n\\sum_i \\sum_k
    q_i(k)\\,p_i(k)`, the probability that a draw from the prediction agrees
    with a draw from the gold distribution.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_classes)
        Gold labels (column indices of ``y_proba``, or labels from ``labels``),
        or gold distributions with rows summing to one.
    y_proba : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities; 1-D is the probability of class 1.
    labels : array-like of shape (n_classes,), default=None
        Label of each column of ``y_proba``, for 1-D ``y_true`` in label
        space. When None, 1-D ``y_true`` holds column indices.

    Returns
    -------
    float
        The score, in ``[0, 1]``; 1 only for one-hot correct predictions.

    Examples
    --------
    >>> from skcrowd.metrics import soft_accuracy_score
    >>> soft_accuracy_score([0, 1], [[0.8, 0.2], [0.4, 0.6]])
    0.7
    >>> soft_accuracy_score(["cat", "dog"], [[0.8, 0.2], [0.4, 0.6]],
    ...                     labels=["cat", "dog"])
    0.7
    """
    proba = _check_proba(y_proba)
    if np.ndim(y_true) == 2:
        if labels is not None:
            raise ValueError("labels applies to 1-D y_true only; 2-D y_true is column-aligned.")
        gold = _check_proba(y_true, name="y_true")
        if gold.shape != proba.shape:
            raise ValueError(
                f"2-D y_true has shape {gold.shape} but y_proba has shape {proba.shape}."
            )
        return float(np.mean(np.sum(gold * proba, axis=1)))
    y = _column_indices(y_true, proba.shape[1], labels)
    check_consistent_length(y, proba)
    if len(y) == 0:
        raise ValueError("y_true is empty.")
    return float(np.mean(proba[np.arange(len(y)), y]))


@validate_params(
    {
        "y_true": ["array-like"],
        "y_proba": ["array-like"],
        "k": [Interval(Integral, 1, None, closed="left")],
        "labels": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def top_k_accuracy_score(y_true, y_proba, *, k=2, labels=None):
    """Fraction of samples whose gold class is among the ``k`` most probable.

    :func:`sklearn.metrics.top_k_accuracy_score` with this module's
    convention for ``y_true``: without ``labels`` it holds column indices, so
    a test set that misses some classes (or holds only two labels of a
    multiclass model) is scored without passing ``labels``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Gold labels: column indices of ``y_proba``, or labels from ``labels``.
    y_proba : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (or scores, for ``n_classes > 2``); 1-D is the
        probability of class 1.
    k : int, default=2
        Number of most probable classes in which the gold class must be.
    labels : array-like of shape (n_classes,), default=None
        Label of each column of ``y_proba``. When None, ``y_true`` holds
        column indices ``0 .. n_classes - 1``.

    Returns
    -------
    float
        The top-``k`` accuracy. For ``k=1`` this is the accuracy of the argmax.

    See Also
    --------
    sklearn.metrics.top_k_accuracy_score : The implementation used.

    Examples
    --------
    >>> from skcrowd.metrics import top_k_accuracy_score
    >>> y_proba = [[0.5, 0.3, 0.2], [0.1, 0.3, 0.6], [0.2, 0.7, 0.1]]
    >>> top_k_accuracy_score([1, 0, 1], y_proba, k=1)
    0.3333333333333333
    >>> top_k_accuracy_score([1, 0, 1], y_proba, k=2)
    0.6666666666666666
    """
    proba = _check_proba(y_proba)
    y = _column_indices(y_true, proba.shape[1], labels)
    check_consistent_length(y, proba)
    n_classes = proba.shape[1]
    # scikit-learn takes a binary problem's scores as the 1-D positive column.
    score = proba[:, 1] if n_classes == 2 else proba
    return float(_sklearn_top_k_accuracy_score(y, score, k=k, labels=np.arange(n_classes)))
