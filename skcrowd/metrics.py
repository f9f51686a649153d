"""Scores for crowdsourced learning: calibration, soft accuracy, votes-aware scorers.

Two families live here.

* **Scores against gold labels** (``y_true``, one class per task) of predicted
  probabilities ``y_proba`` of shape ``(n_samples, n_classes)``:
  :func:`expected_calibration_error`, :func:`soft_accuracy_score`,
  :func:`top_k_accuracy_score`. Their ``y_true`` follows one convention: by
  default it holds **column indices** of ``y_proba`` (``0 .. n_classes - 1``),
  so a test set that misses a class still works; pass ``labels`` (for example
  a fitted ``classes_``) to give ``y_true`` in label space, ``labels[k]`` being
  the label of column ``k``.
* **Scores against votes**, for model selection without gold labels:
  :func:`mv_accuracy_score`, and the scorers :func:`mv_accuracy_scorer` and
  :func:`annotation_log_likelihood_scorer` with the scikit-learn scorer
  signature ``scorer(estimator, X, votes)``, usable as
  ``GridSearchCV(scoring=...)``; for aggregators (the votes matrix is ``X``),
  :func:`held_out_vote_scorer`.

:func:`imbalance_ratio` measures how unbalanced annotations are across classes.

**Inter-annotator agreement** of a votes matrix, chance-corrected:
:func:`krippendorff_alpha` (nominal, ordinal or interval) and
:func:`fleiss_kappa`, both on votes matrices with missing entries and with
bootstrap confidence intervals over tasks.
"""

from __future__ import annotations

from collections import namedtuple
from numbers import Integral, Real

import numpy as np
from sklearn.metrics import top_k_accuracy_score as _sklearn_top_k_accuracy_score
from sklearn.utils import check_array, check_consistent_length, check_random_state, column_or_1d
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .votes import _fmt, check_votes

__all__ = [
    "expected_calibration_error",
    "soft_accuracy_score",
    "top_k_accuracy_score",
    "mv_accuracy_score",
    "mv_accuracy_scorer",
    "annotation_log_likelihood_scorer",
    "held_out_vote_scorer",
    "imbalance_ratio",
    "krippendorff_alpha",
    "fleiss_kappa",
    "AgreementInterval",
]

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


# ---------------------------------------------------------------------------
# Scores against votes (no gold labels)
# ---------------------------------------------------------------------------


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


def mv_accuracy_scorer(estimator, X, votes=None):
    """Scorer: :func:`mv_accuracy_score` of ``estimator.predict(X)`` against ``votes``.

    Has the scikit-learn scorer signature, so it can be passed as
    ``scoring=`` to :class:`~sklearn.model_selection.GridSearchCV` or
    :func:`~sklearn.model_selection.cross_val_score` for feature models (``X``
    features, ``y`` the votes). The missing-vote marker is the estimator's
    ``missing_label`` parameter when it has one, else -1. For aggregators,
    whose ``X`` is the votes matrix and ``y`` None, the votes are ``X``.

    Parameters
    ----------
    estimator : fitted estimator
        Any classifier with ``predict``.
    X : array-like
        Input of ``estimator.predict``.
    votes : array-like or sparse matrix of shape (n_tasks, n_workers), default=None
        Held-out votes on the tasks of ``X``.

    Returns
    -------
    float
        Tie-aware accuracy against the majority vote; higher is better.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> from skcrowd.metrics import mv_accuracy_scorer
    >>> votes = np.array([[1, 1, -1], [1, 0, 1], [0, -1, -1]])
    >>> clf = DummyClassifier(strategy="constant", constant=1).fit([[0]] * 3, [1, 1, 0])
    >>> round(mv_accuracy_scorer(clf, [[0]] * 3, votes), 4)
    0.6667
    """
    if votes is None:  # an aggregator: the votes are X
        votes = X
    params = estimator.get_params() if hasattr(estimator, "get_params") else {}
    missing_label = params.get("missing_label", -1)
    return mv_accuracy_score(votes, estimator.predict(X), missing_label=missing_label)


def annotation_log_likelihood_scorer(estimator, X, votes=None):
    """Scorer: mean log-probability of held-out votes under the model's noise model.

    Returns ``estimator.annotation_log_likelihood(X, votes)``: the mean, over
    observed votes, of ``log p(vote | x)`` where the model predicts each
    worker's vote through its own annotator-noise model (confusion matrices,
    crowd layer, ...). Higher is better. Plain log-loss of the class
    probabilities against individual votes is not used because it rewards
    under-confident models (noisy votes look like uncertainty).

    For an ``sklearn.pipeline.Pipeline``, ``X`` goes through all steps but the
    last, whose method is called. For aggregators (``X`` is the votes matrix,
    ``votes`` None) ``estimator.annotation_log_likelihood(X)`` is called.

    Parameters
    ----------
    estimator : fitted estimator
        A model with an ``annotation_log_likelihood(X, votes)`` method (the
        deep crowd models, DawidSkene).
    X : array-like
        Features (or votes, for aggregators).
    votes : array-like or sparse matrix of shape (n_tasks, n_workers), default=None
        Held-out votes on the tasks of ``X``.

    Returns
    -------
    float
        Mean per-vote log-likelihood (at most 0).

    Raises
    ------
    TypeError
        If the estimator has no ``annotation_log_likelihood`` method.

    Examples
    --------
    >>> from skcrowd.metrics import annotation_log_likelihood_scorer
    >>> class Fair:  # every worker votes uniformly among 2 classes
    ...     def annotation_log_likelihood(self, X, votes=None):
    ...         return float(np.log(0.5))
    >>> round(annotation_log_likelihood_scorer(Fair(), [[0], [1]], [[0], [1]]), 4)
    -0.6931
    """
    from sklearn.pipeline import Pipeline

    model = estimator
    if isinstance(estimator, Pipeline):
        model = estimator.steps[-1][1]
        X = estimator[:-1].transform(X) if len(estimator.steps) > 1 else X
    method = getattr(model, "annotation_log_likelihood", None)
    if method is None:
        raise TypeError(
            f"{type(model).__name__} has no annotation_log_likelihood method: this scorer "
            "needs a model of the annotators' noise (e.g. DawidSkene, CrowdLayerClassifier). "
            "Use skcrowd.metrics.mv_accuracy_scorer for other estimators."
        )
    score = method(X) if votes is None else method(X, votes)
    return float(score)


def held_out_vote_scorer(estimator, X, y=None, *, test_size=0.2, random_state=0):
    """Scorer of a fitted aggregator: log-probability of held-out votes of the tasks of ``X``.

    A share ``test_size`` of each task's votes in ``X`` is held out (at random
    with ``random_state``; every task keeps a vote), and each held-out vote is
    scored through the aggregator's own worker model given the other votes of
    its task: ``log sum_k p(k | other votes) p(vote | k, worker)``. Returns
    the mean over the held-out votes (higher is better).

    With the votes matrix as ``X`` and a splitter over its rows (tasks), for
    instance ``KFold(5, shuffle=True)``,
    ``GridSearchCV(aggregator, grid, cv=..., scoring=held_out_vote_scorer)``
    fits on the tasks of the training folds and scores, on the tasks of the
    test fold, how well the fitted worker models predict some of their votes
    from the others. To choose among different aggregators in one step, use
    :class:`skcrowd.aggregation.AggregatorSelector`, which holds out votes of
    every task instead.

    Parameters
    ----------
    estimator : fitted aggregator
        MajorityVote, DawidSkene, WeightedDawidSkene or GLAD (an aggregator
        that implements the held-out vote hook).
    X : array-like or sparse matrix of shape (n_tasks, n_workers)
        Votes on (new) tasks by the fitted workers, labels in
        ``estimator.classes_``.
    y : None
        Ignored.
    test_size : float, default=0.2
        Expected share of each task's votes held out.
    random_state : int, default=0
        Seed of the hold-out: the same for every estimator scored.

    Returns
    -------
    float
        Mean log-probability per held-out vote (at most 0).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV, KFold
    >>> from skcrowd.aggregation import DawidSkene
    >>> from skcrowd.metrics import held_out_vote_scorer
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(2, size=300)
    >>> right = rng.random((300, 6)) < [0.95, 0.9, 0.8, 0.6, 0.6, 0.55]
    >>> votes = np.where(right, truth[:, None], 1 - truth[:, None])
    >>> search = GridSearchCV(DawidSkene(), {"smoothing": [0.0, 3.0, "auto"]},
    ...                       cv=KFold(5, shuffle=True, random_state=0),
    ...                       scoring=held_out_vote_scorer).fit(votes)
    >>> search.cv_results_["mean_test_score"].round(3)
    array([-0.504, -0.506, -0.507])
    """
    from .aggregation._selection import _subset, held_out_score, held_out_votes

    votes = estimator._validate_votes(X, reset=False, allow_no_votes=True)
    held = held_out_votes(votes, test_size, check_random_state(random_state))
    return held_out_score(estimator, _subset(votes, ~held), _subset(votes, held))


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


# ---------------------------------------------------------------------------
# Inter-annotator agreement
# ---------------------------------------------------------------------------

AgreementInterval = namedtuple("AgreementInterval", ["estimate", "low", "high"])
AgreementInterval.__doc__ = """An agreement coefficient and its bootstrap confidence interval.

``estimate`` is the coefficient of all the tasks; ``low`` and ``high`` bound
the percentile bootstrap interval (tasks resampled with replacement). It
unpacks as a tuple: ``alpha, low, high = krippendorff_alpha(votes,
confidence_level=0.95)``.
"""

# Bootstrap replicates x tasks entries held at once (about 32 MB of float64).
_BOOTSTRAP_BATCH_ENTRIES = 2**22

_AGREEMENT_PARAMS = {
    "votes": ["array-like", "sparse matrix"],
    "missing_label": "no_validation",
    "classes": ["array-like", None],
    "confidence_level": [Interval(Real, 0, 1, closed="neither"), None],
    "n_resamples": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}


def _agreement_counts(votes, missing_label, classes):
    """Class counts ``(n_units, n_classes)`` of the tasks with a vote, and the classes.

    With ``classes`` given, class index ``k`` is ``classes[k]`` (their order
    is kept); otherwise the classes are the sorted distinct labels.
    """
    if classes is not None:
        classes = column_or_1d(np.asarray(classes))
        if len(np.unique(classes)) != len(classes):
            raise ValueError(f"classes must be distinct, got {classes.tolist()!r}.")
    v = check_votes(votes, missing_label=missing_label, classes=classes)
    counts = v.counts()
    return counts[counts.sum(axis=1) > 0], v.classes


def _resampling_weights(n_units, n_resamples, random_state):
    """Batches of bootstrap weights: how often each task is drawn, ``(batch, n_units)``."""
    rng = check_random_state(random_state)
    batch = max(1, _BOOTSTRAP_BATCH_ENTRIES // n_units)
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        draws = rng.randint(n_units, size=(b, n_units)) + n_units * np.arange(b)[:, None]
        yield np.bincount(draws.ravel(), minlength=b * n_units).reshape(b, n_units).astype(
            np.float64
        )


def _with_interval(statistic, n_units, confidence_level, n_resamples, random_state):
    """The statistic of all the tasks, or an AgreementInterval with its bootstrap interval.

    ``statistic(weights)`` maps task weights ``(n_replicates, n_units)`` to one
    value per replicate (NaN where a replicate leaves it undefined).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = float(statistic(np.ones((1, n_units)))[0])
        if confidence_level is None:
            return estimate
        replicates = np.concatenate([
            statistic(w) for w in _resampling_weights(n_units, n_resamples, random_state)
        ])
    replicates = replicates[np.isfinite(replicates)]
    if len(replicates) == 0:
        return AgreementInterval(estimate, np.nan, np.nan)
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    return AgreementInterval(estimate, float(low), float(high))


def _interval_values(classes, level):
    """Numeric value of each class for the interval metric (centred: distances ignore shifts)."""
    if classes.dtype.kind not in "iufb":
        raise ValueError(
            f"level_of_measurement={level!r} needs numeric labels (their differences are the "
            f"distances), got labels {classes.tolist()!r}; use 'nominal', or 'ordinal' with "
            "classes= in their order."
        )
    values = classes.astype(np.float64)
    return values - values.mean()


def _alpha_statistic(counts, level, classes):
    """Krippendorff's alpha of weighted tasks: ``weights (B, n_units) -> (B,)``.

    With ``n_u`` the class counts of unit ``u``, ``m_u`` its number of values
    and ``D`` the squared distances between classes, the coincidences give
    ``sum_ck o_ck D_ck = sum_u n_u' D n_u / (m_u - 1)`` over pairable units
    (``m_u >= 2``) and ``sum_ck n_c n_k D_ck`` with the pairable values'
    class totals ``n_c``; ``alpha = 1 - (n - 1) * observed / expected``.
    """
    m = counts.sum(axis=1)
    pairable = m >= 2
    inv = np.zeros_like(m)
    inv[pairable] = 1.0 / (m[pairable] - 1.0)
    c = counts * pairable[:, None]  # values of unpairable units do not count

    if level == "nominal":
        # n_u' D n_u = m_u^2 - |n_u|^2 with D = 1 off the diagonal
        per_unit = (m**2 - (c**2).sum(axis=1)) * inv

        def disagreements(w, totals):
            n = totals.sum(axis=1)
            return w @ per_unit, n**2 - (totals**2).sum(axis=1)
    elif level == "interval":
        v = _interval_values(classes, level)
        # sum_ck a_c b_k (v_c - v_k)^2 = 2 (|a| (a . v^2) - (a . v)^2) for a = b
        per_unit = 2.0 * (m * (c @ v**2) - (c @ v) ** 2) * inv

        def disagreements(w, totals):
            n = totals.sum(axis=1)
            return w @ per_unit, 2.0 * (n * (totals @ v**2) - (totals @ v) ** 2)
    else:  # ordinal: the interval metric on mid-ranks, which depend on the totals
        scaled = c * (m * inv)[:, None]

        def disagreements(w, totals):
            n = totals.sum(axis=1)
            # sum_{g=c..k} n_g - (n_c + n_k) / 2 = M_k - M_c with M_c = N_{c-1} + n_c / 2
            ranks = np.cumsum(totals, axis=1) - totals / 2.0
            ranks -= (totals * ranks).sum(axis=1, keepdims=True) / n[:, None]
            observed = 2.0 * (((w @ scaled) * ranks**2).sum(axis=1)
                              - ((w * inv) * (c @ ranks.T).T ** 2).sum(axis=1))
            expected = 2.0 * (n * (totals * ranks**2).sum(axis=1)
                              - (totals * ranks).sum(axis=1) ** 2)
            return observed, expected

    def statistic(w):
        totals = w @ c
        observed, expected = disagreements(w, totals)
        n = totals.sum(axis=1)
        return 1.0 - (n - 1.0) * observed / expected

    return statistic, c


def _class_agreement(counts):
    """Per class: share of its pairable votes matched by another vote of the same task.

    Returns the observed share ``o_cc / n_c`` (from the coincidences of
    :func:`krippendorff_alpha`), the share expected by chance ``(n_c - 1) /
    (n - 1)`` and the pairable votes ``n_c``; NaN for a class without any.
    """
    m = counts.sum(axis=1)
    c = counts[m >= 2]
    totals = c.sum(axis=0)
    n = totals.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = ((c * (c - 1.0)) / (m[m >= 2, None] - 1.0)).sum(axis=0) / totals
        expected = np.where(totals > 0, (totals - 1.0) / (n - 1.0), np.nan)
    return observed, expected, totals


@validate_params(
    {**_AGREEMENT_PARAMS,
     "level_of_measurement": [StrOptions({"nominal", "ordinal", "interval"})]},
    prefer_skip_nested_validation=True,
)
def krippendorff_alpha(votes, *, level_of_measurement="nominal", missing_label=-1, classes=None,
                       confidence_level=None, n_resamples=1000, random_state=None):
    r"""Krippendorff's alpha: agreement between workers beyond chance, missing votes allowed.

    Tasks are Krippendorff's *units*, workers his *coders*, votes the
    *values*. Following Krippendorff's definition (2011, "Computing
    Krippendorff's alpha-reliability"), only **pairable values** count: the
    votes of tasks with at least two votes. A task with a single vote (or
    none) is dropped whole: it says nothing about agreement, and its vote is
    not counted in the expected disagreement either. From the coincidences
    :math:`o_{ck} = \sum_u \frac{\#\{\text{ordered pairs of votes } (c, k)
    \text{ in task } u\}}{m_u - 1}` of tasks with :math:`m_u \ge 2` votes,
    the class totals :math:`n_c = \sum_k o_{ck}` and :math:`n = \sum_c n_c`,

    .. math:: \alpha = 1 - \frac{D_o}{D_e}
              = 1 - (n - 1) \frac{\sum_{c,k} o_{ck}\, \delta^2_{ck}}
                                 {\sum_{c,k} n_c n_k\, \delta^2_{ck}} .

    1 is perfect agreement, 0 agreement at chance level, negative values
    systematic disagreement. Krippendorff suggests relying on data with
    :math:`\alpha \ge 0.8` and drawing tentative conclusions from
    :math:`0.667 \le \alpha < 0.8`.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_workers)
        Votes, in any format of :func:`skcrowd.check_votes` (entry ``(i, j)``
        is the label worker ``j`` gave task ``i``, or ``missing_label``).
    level_of_measurement : {"nominal", "ordinal", "interval"}, default="nominal"
        The distance :math:`\delta^2_{ck}` between classes: ``"nominal"``
        1 for different classes; ``"interval"`` :math:`(v_c - v_k)^2` for
        numeric labels :math:`v`; ``"ordinal"``
        :math:`(\sum_{g=c}^{k} n_g - \frac{n_c + n_k}{2})^2`, classes in the
        order of ``classes`` (default: sorted labels; string labels need
        ``classes``, their order is not the alphabet's).
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote, as for the aggregators.
    classes : array-like, default=None
        All the classes, in their order (used by ``"ordinal"``). A vote
        outside them raises. Default: the sorted distinct labels.
    confidence_level : float in (0, 1), default=None
        When given, also return a percentile bootstrap interval at this level.
    n_resamples : int, default=1000
        Bootstrap replicates: each draws as many tasks (with at least one
        vote) as the data have, with replacement.
    random_state : int, RandomState instance or None, default=None
        Seed of the bootstrap draws.

    Returns
    -------
    float or AgreementInterval
        Alpha; with ``confidence_level``, ``AgreementInterval(estimate, low,
        high)``. Replicates where alpha is undefined (no pairable votes, or
        one class only) are left out of the interval.

    Raises
    ------
    ValueError
        If no task has two votes, if every pairable vote has the same value
        (alpha is 0 / 0, undefined), or if the labels do not fit the level of
        measurement.

    See Also
    --------
    fleiss_kappa : The kappa of Fleiss (1971), generalized to missing votes.

    Notes
    -----
    crowd-kit's ``alpha_krippendorff`` (through NLTK's ``AnnotationTask``)
    follows the same convention for tasks with a single vote; on every
    dataset where both are defined they agree to within rounding (see
    ``benchmarks/agreement.py``). Where all the votes are of one class NLTK
    returns 1 while skcrowd raises: alpha is undefined there.

    References
    ----------
    K. Krippendorff. "Computing Krippendorff's alpha-reliability". Annenberg
    School for Communication, University of Pennsylvania, 2011.

    K. Krippendorff. *Content analysis: an introduction to its methodology*.
    Sage, 2004 (chapter 11).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.metrics import krippendorff_alpha
    >>> votes = np.array([[0, 0, -1],
    ...                   [1, 1, 1],
    ...                   [0, 1, -1],
    ...                   [1, -1, -1]])  # one vote: not pairable, left out
    >>> krippendorff_alpha(votes)  # 1 - (7 - 1) * 2 / (2 * 3 * 4)
    0.5
    >>> alpha, low, high = krippendorff_alpha(votes, confidence_level=0.9, random_state=0)
    >>> alpha, bool(low < alpha < high)
    (0.5, True)
    """
    ordered = classes is not None
    counts, classes = _agreement_counts(votes, missing_label, classes)
    if level_of_measurement == "ordinal" and not ordered and classes.dtype.kind not in "iufb":
        raise ValueError(
            f"level_of_measurement='ordinal' with labels {classes.tolist()!r}: pass classes= "
            "the labels in their order (sorting strings gives the alphabet's order)."
        )
    statistic, pairable_counts = _alpha_statistic(counts, level_of_measurement, classes)
    n_pairable = int(np.count_nonzero(pairable_counts.sum(axis=1)))
    if n_pairable == 0:
        raise ValueError(
            "no task has two votes or more: Krippendorff's alpha needs pairable values "
            "(at least one task with two votes)."
        )
    totals = pairable_counts.sum(axis=0)
    if np.count_nonzero(totals) == 1:
        raise ValueError(
            f"every pairable vote is {_fmt(classes[np.argmax(totals)])}: with a single value "
            "there is no expected disagreement and alpha is undefined (0 / 0)."
        )
    return _with_interval(statistic, len(counts), confidence_level, n_resamples, random_state)


def _kappa_statistic(counts):
    """Fleiss' kappa of weighted tasks: ``weights (B, n_units) -> (B,)``."""
    m = counts.sum(axis=1)
    pairable = (m >= 2).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = np.where(m >= 2, (counts * (counts - 1.0)).sum(axis=1) / (m * (m - 1.0)), 0.0)
    shares = counts / m[:, None]

    def statistic(w):
        observed = (w @ agreement) / (w @ pairable)
        prevalence = (w @ shares) / w.sum(axis=1)[:, None]
        chance = (prevalence**2).sum(axis=1)
        return (observed - chance) / (1.0 - chance)

    return statistic


@validate_params(_AGREEMENT_PARAMS, prefer_skip_nested_validation=True)
def fleiss_kappa(votes, *, missing_label=-1, classes=None, confidence_level=None,
                 n_resamples=1000, random_state=None):
    r"""Fleiss' kappa: agreement between workers beyond chance, missing votes allowed.

    Fleiss (1971) assumes every task has the same number of votes; skcrowd
    uses its generalization to any number of votes per task (Gwet, 2014,
    "Fleiss' generalized kappa"). With :math:`n_{ic}` the votes for class
    :math:`c` on task :math:`i` and :math:`m_i` its number of votes:

    - observed agreement :math:`P_o`: the mean, over the tasks with at least
      two votes, of the share of agreeing pairs of votes
      :math:`P_i = \sum_c \frac{n_{ic}(n_{ic} - 1)}{m_i (m_i - 1)}`;
    - chance agreement :math:`P_e = \sum_c \pi_c^2`, where the class
      prevalence :math:`\pi_c` is the mean, over the tasks with at least one
      vote, of :math:`n_{ic} / m_i`;
    - :math:`\kappa = \frac{P_o - P_e}{1 - P_e}`.

    With the same number of votes on every task this is Fleiss' kappa
    exactly. Unlike :func:`krippendorff_alpha`, a task with a single vote
    counts in the prevalences.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_workers)
        Votes, in any format of :func:`skcrowd.check_votes`.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote, as for the aggregators.
    classes : array-like, default=None
        All the classes; a vote outside them raises. Default: the distinct
        labels.
    confidence_level : float in (0, 1), default=None
        When given, also return a percentile bootstrap interval at this level.
    n_resamples : int, default=1000
        Bootstrap replicates: each draws as many tasks (with at least one
        vote) as the data have, with replacement.
    random_state : int, RandomState instance or None, default=None
        Seed of the bootstrap draws.

    Returns
    -------
    float or AgreementInterval
        Kappa; with ``confidence_level``, ``AgreementInterval(estimate, low,
        high)``, replicates where kappa is undefined left out.

    Raises
    ------
    ValueError
        If no task has two votes or every vote is of one class (kappa is
        0 / 0, undefined).

    See Also
    --------
    krippendorff_alpha : Agreement of pairable values, with distances between classes.

    References
    ----------
    J. L. Fleiss. "Measuring nominal scale agreement among many raters".
    Psychological Bulletin 76(5), 1971.

    K. L. Gwet. *Handbook of inter-rater reliability*, 4th edition. Advanced
    Analytics, 2014 (chapter 2, Fleiss' generalized kappa).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.metrics import fleiss_kappa
    >>> votes = np.array([[0, 0, -1],
    ...                   [1, 1, 1],
    ...                   [0, 1, -1],
    ...                   [1, -1, -1]])
    >>> # P_o = (1 + 1 + 0) / 3, prevalences (1 + 0 + 1/2 + 0) / 4 and (0 + 1 + 1/2 + 1) / 4
    >>> round(fleiss_kappa(votes), 4)  # (2/3 - 17/32) / (1 - 17/32)
    0.2889
    """
    counts, classes = _agreement_counts(votes, missing_label, classes)
    if not (counts.sum(axis=1) >= 2).any():
        raise ValueError(
            "no task has two votes or more: Fleiss' kappa needs tasks with several votes."
        )
    totals = counts.sum(axis=0)
    if np.count_nonzero(totals) == 1:
        raise ValueError(
            f"every vote is {_fmt(classes[np.argmax(totals)])}: with a single class the chance "
            "agreement is 1 and kappa is undefined (0 / 0)."
        )
    return _with_interval(_kappa_statistic(counts), len(counts), confidence_level, n_resamples,
                          random_state)
