"""Plots for learning from crowds (matplotlib, the ``plot`` extra).

- :func:`plot_confusion_matrices`: workers' confusion matrices side by side,
  from any fitted estimator that exposes them (``confusion_matrices_`` of
  :class:`~skcrowd.aggregation.DawidSkene`, ``annotator_confusions_`` of the
  neural crowd classifiers, with CoNAL's ``common_confusion_``) or from an
  array such as the true confusions of a simulated crowd;
- :func:`plot_reliability_diagram`: accuracy per confidence bin, with the
  expected calibration error of :func:`skcrowd.metrics.expected_calibration_error`;
- :func:`plot_waum_vs_entropy`: the WAUM of each task against the entropy of
  its votes, pruned tasks highlighted (from a fitted
  :class:`~skcrowd.pruning.WAUMPruner`);
- :func:`plot_vote_counts`: histogram of the number of votes per task or per
  worker;
- :func:`plot_selftraining_history`: validation accuracy and imbalance ratios
  per Self-Crowd iteration;
- :func:`plot_worker_quality`: each worker's estimated accuracy against their
  number of votes, coloured by spammer score, the workers to review
  highlighted (from :func:`skcrowd.quality.worker_report`);
- :func:`plot_class_agreement`: per class, how often a vote is matched by
  another vote on the same task, against chance.

Every function returns what it drew on: the Axes, or the Figure when the plot
has several panels. None of them imports torch: estimators are read through
their fitted attributes only.
"""

from __future__ import annotations

import numpy as np
from scipy.special import entr
from sklearn.exceptions import NotFittedError

from ._optional import import_optional
from .metrics import expected_calibration_error, krippendorff_alpha
from .metrics._agreement import _agreement_counts, _class_agreement
from .metrics._gold import _check_proba, _column_indices
from .votes import _fmt, check_votes

plt = import_optional("matplotlib.pyplot", "skcrowd.plotting")

__all__ = [
    "plot_confusion_matrices",
    "plot_reliability_diagram",
    "plot_waum_vs_entropy",
    "plot_vote_counts",
    "plot_selftraining_history",
    "plot_worker_quality",
    "plot_class_agreement",
]

# Attributes holding per-worker confusion matrices, rows = true class.
_CONFUSION_ATTRIBUTES = ("confusion_matrices_", "annotator_confusions_")
# Largest number of classes whose matrix cells are annotated with their value.
_MAX_ANNOTATED_CLASSES = 10
# Worker-quality plot: size (points^2) of the circles of the workers to review, and the gap
# (points) between a circle and its label.
_REVIEW_MARKER_SIZE = 110
_LABEL_GAP = 2.0
# Where the worker-quality plot's legend may go, in order of preference.
_LEGEND_PLACES = ("lower right", "upper right", "lower left", "upper left", "center right",
                  "center left", "lower center", "upper center")
_DEFAULT_N_WORKERS_SHOWN = 6


def _fitted_attribute(estimator, names):
    """Name of the first of ``names`` that ``estimator`` has (duck typing).

    An estimator with none of them is unfitted, or does not estimate them:
    NotFittedError (an AttributeError too) says so.
    """
    for name in names:
        if hasattr(estimator, name):
            return name
    raise NotFittedError(
        f"{type(estimator).__name__} has no {' or '.join(names)}: fit it first, or pass an "
        "estimator that estimates them."
    )


def _confusion_stack(matrices, name):
    """A float array of shape (n, K, K) with entries in [0, 1], or a ValueError."""
    arr = np.asarray(matrices, dtype=np.float64)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2]:
        raise ValueError(
            f"{name} must have shape (n_workers, n_classes, n_classes), got {arr.shape}."
        )
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > 1)
    if bad.any():
        j, k, m = np.argwhere(bad)[0]
        raise ValueError(
            f"{name}[{j}, {k}, {m}] = {_fmt(arr[j, k, m])}; confusion probabilities must lie "
            "in [0, 1]."
        )
    return arr


def _panels(axes, n_panels, ncols=4):
    """``n_panels`` Axes: new ones in a grid, or the caller's (exactly ``n_panels``)."""
    if axes is None:
        ncols = min(ncols, n_panels)
        nrows = -(-n_panels // ncols)
        fig, grid = plt.subplots(
            nrows, ncols, figsize=(3.2 * ncols, 3.0 * nrows), squeeze=False,
            layout="constrained",
        )
        grid = list(grid.ravel())
        for extra in grid[n_panels:]:
            extra.set_visible(False)
        return fig, grid[:n_panels]
    axes = list(np.ravel(axes))
    if len(axes) != n_panels:
        raise ValueError(f"axes has {len(axes)} Axes but {n_panels} panels are drawn.")
    return axes[0].figure, axes


def plot_confusion_matrices(
    confusions,
    *,
    workers=None,
    class_names=None,
    include_common=True,
    annotate=True,
    cmap="Blues",
    axes=None,
):
    """Plot workers' confusion matrices side by side.

    Row ``k`` of a matrix is the distribution of a worker's vote on a task of
    true class ``k`` (the convention of :class:`~skcrowd.aggregation.DawidSkene`
    and of the neural crowd classifiers), shown on a common ``[0, 1]`` color
    scale.

    Parameters
    ----------
    confusions : fitted estimator or array-like of shape (n_workers, n_classes, n_classes)
        A fitted estimator exposing ``confusion_matrices_`` (e.g.
        :class:`~skcrowd.aggregation.DawidSkene`) or ``annotator_confusions_``
        (CrowdLayer, CoNAL, deep EM classifiers), or the matrices themselves,
        such as ``simulate_annotators(...).confusions``.
    workers : array-like of int, default=None
        Indices of the workers to show; default the first six.
    class_names : array-like of shape (n_classes,), default=None
        Tick labels; default the estimator's ``classes_``, else ``0 .. K-1``.
    include_common : bool, default=True
        Add a panel for the estimator's common confusion (``common_confusion_``
        of :class:`~skcrowd.neural.CoNALClassifier`) when it has one.
    annotate : bool, default=True
        Write each probability in its cell (up to 10 classes).
    cmap : str or matplotlib colormap, default="Blues"
        Colormap of the probabilities.
    axes : array-like of matplotlib Axes, default=None
        One Axes per panel (workers, then the common confusion), e.g. a row
        of ``plt.subplots``; default a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the panels.

    Raises
    ------
    ValueError
        If the matrices are malformed, a worker index is out of range, or
        ``axes`` does not hold one Axes per panel.
    sklearn.exceptions.NotFittedError
        If the estimator exposes no confusion matrices (it is not fitted).

    See Also
    --------
    skcrowd.datasets.simulate_annotators : crowds with known confusions.

    References
    ----------
    A. P. Dawid and A. M. Skene. "Maximum likelihood estimation of observer
    error-rates using the EM algorithm". Applied Statistics 28(1), 1979.

    Z. Chu, J. Ma and H. Wang. "Learning from crowds by modeling common
    confusions". AAAI, 2021.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcrowd.aggregation import DawidSkene
    >>> from skcrowd.plotting import plot_confusion_matrices
    >>> votes = np.array([[0, 0, 1], [1, 1, 1], [0, 0, -1], [1, -1, 0]])
    >>> fig = plot_confusion_matrices(DawidSkene().fit(votes))
    >>> [ax.get_title() for ax in fig.axes[:3]]
    ['worker 0', 'worker 1', 'worker 2']
    """
    common = None
    if hasattr(confusions, "fit"):
        estimator = confusions
        attribute = _fitted_attribute(estimator, _CONFUSION_ATTRIBUTES)
        matrices = _confusion_stack(getattr(estimator, attribute), attribute)
        if include_common and hasattr(estimator, "common_confusion_"):
            common = _confusion_stack(estimator.common_confusion_, "common_confusion_")[0]
        if class_names is None and hasattr(estimator, "classes_"):
            class_names = estimator.classes_
        names = getattr(estimator, "feature_names_in_", None)
    else:
        matrices = _confusion_stack(confusions, "confusions")
        names = None
    n_workers, n_classes = matrices.shape[:2]

    if workers is None:
        workers = np.arange(min(n_workers, _DEFAULT_N_WORKERS_SHOWN))
    workers = np.atleast_1d(np.asarray(workers))
    if workers.dtype.kind not in "iu" or len(workers) == 0:
        raise ValueError(f"workers must be a non-empty list of worker indices, got {workers!r}.")
    for j in workers:
        if not 0 <= j < n_workers:
            raise ValueError(
                f"workers has worker {int(j)}, but there are {n_workers} workers "
                f"(0 .. {n_workers - 1})."
            )
    if class_names is None:
        class_names = np.arange(n_classes)
    class_names = [str(c) for c in np.asarray(class_names).ravel()]
    if len(class_names) != n_classes:
        raise ValueError(
            f"class_names has {len(class_names)} entries but the matrices have {n_classes} "
            "classes."
        )

    panels = [(matrices[j], f"worker {names[j] if names is not None else int(j)}")
              for j in workers]
    if common is not None:
        if common.shape[0] != n_classes:
            raise ValueError(
                f"common_confusion_ has {common.shape[0]} classes, the workers' matrices "
                f"{n_classes}."
            )
        panels.append((common, "common confusion"))
    fig, panel_axes = _panels(axes, len(panels))
    for i, (ax, (matrix, title)) in enumerate(zip(panel_axes, panels)):
        image = ax.imshow(matrix, vmin=0.0, vmax=1.0, cmap=cmap)
        ax.set_title(title)
        ax.set_xticks(range(n_classes), class_names, rotation=90 if n_classes > 4 else 0)
        ax.set_yticks(range(n_classes), class_names)
        ax.set_xlabel("vote")
        if i == 0:
            ax.set_ylabel("true class")
        if annotate and n_classes <= _MAX_ANNOTATED_CLASSES:
            for (k, l), p in np.ndenumerate(matrix):
                ax.text(l, k, f"{p:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if p > 0.5 else "black")
    fig.colorbar(image, ax=panel_axes, shrink=0.8, label="probability")
    return fig


def plot_reliability_diagram(y_true, y_proba, *, n_bins=15, labels=None, ax=None):
    """Plot accuracy against confidence per confidence bin, with the ECE.

    Predictions are binned by confidence (their largest probability) into
    ``n_bins`` equal-width bins, the bins of
    :func:`skcrowd.metrics.expected_calibration_error`: a bar per non-empty
    bin shows the accuracy of its predictions, a red segment their mean
    confidence, and the diagonal perfect calibration. The title gives the ECE.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Gold labels: column indices of ``y_proba``, or labels from ``labels``.
    y_proba : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities (a 1-D array is the probability of class 1).
    n_bins : int, default=15
        Number of equal-width confidence bins on ``[0, 1]``.
    labels : array-like of shape (n_classes,), default=None
        Label of each column of ``y_proba`` (e.g. ``estimator.classes_``).
    ax : matplotlib Axes, default=None
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    See Also
    --------
    skcrowd.metrics.expected_calibration_error : the ECE in the title.

    References
    ----------
    C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. "On calibration of modern
    neural networks". ICML, 2017.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skcrowd.plotting import plot_reliability_diagram
    >>> y_proba = [[0.9, 0.1], [0.9, 0.1], [0.4, 0.6], [0.3, 0.7]]
    >>> ax = plot_reliability_diagram([0, 1, 1, 1], y_proba, n_bins=5)
    >>> ax.get_title()
    'Reliability diagram (ECE = 0.375)'
    >>> [float(bar.get_height()) for bar in ax.patches]
    [1.0, 1.0, 0.5]
    """
    ece = expected_calibration_error(y_true, y_proba, n_bins=n_bins, labels=labels)
    proba = _check_proba(y_proba)
    y = _column_indices(y_true, proba.shape[1], labels)
    confidence = proba.max(axis=1)
    correct = proba.argmax(axis=1) == y
    edges = np.arange(n_bins + 1) / n_bins
    bins = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, n_bins - 1)
    count = np.bincount(bins, minlength=n_bins)
    filled = count > 0
    accuracy = np.bincount(bins, weights=correct, minlength=n_bins)[filled] / count[filled]
    mean_confidence = (
        np.bincount(bins, weights=confidence, minlength=n_bins)[filled] / count[filled]
    )
    left = edges[:-1][filled]

    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5), layout="constrained")
    width = 1.0 / n_bins
    ax.bar(left, accuracy, width=width, align="edge", edgecolor="black", label="accuracy")
    ax.hlines(mean_confidence, left, left + width, colors="C3", label="mean confidence")
    ax.plot([0, 1], [0, 1], linestyle="--", color="gray", label="perfect calibration")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    ax.set_title(f"Reliability diagram (ECE = {ece:.3f})")
    ax.legend(loc="upper left")
    return ax


def _vote_entropy(votes):
    """Entropy (nats) of each task's vote distribution; NaN for tasks without votes."""
    counts = votes.counts()
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return entr(counts / total).sum(axis=1)


def plot_waum_vs_entropy(pruner, votes, *, missing_label=-1, ax=None):
    """Scatter each task's WAUM against the entropy of its votes, pruned tasks highlighted.

    The entropy of a task's votes only sees disagreement; the WAUM (Lefort et
    al., 2024) also weighs it by how much each worker is trusted and by how
    hard the task is for a classifier. Tasks the pruner dropped are drawn as
    red crosses, the pruning threshold as a dashed line. Tasks without votes
    have no entropy and are not drawn.

    Parameters
    ----------
    pruner : fitted WAUMPruner
        Any fitted object with ``support_`` (True for kept tasks) and
        ``waum_`` or ``aumc_`` (one score per task), like
        :class:`~skcrowd.pruning.WAUMPruner`.
    votes : array-like or sparse matrix of shape (n_tasks, n_workers), or Votes
        The votes the pruner was fitted on.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in dense ``votes``.
    ax : matplotlib Axes, default=None
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ValueError
        If ``votes`` has another number of tasks than the pruner's scores.

    References
    ----------
    T. Lefort, B. Charlier, A. Joly and J. Salmon. "Identify ambiguous tasks
    combining crowdsourced labels by weighting Areas Under the Margin". TMLR,
    2024 (figure 3).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcrowd.pruning import WAUMPruner
    >>> from skcrowd.plotting import plot_waum_vs_entropy
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(40, 2))
    >>> truth = (X[:, 0] > 0).astype(int)
    >>> votes = np.column_stack([truth, truth, truth])
    >>> votes[:4, 1:] = 1 - truth[:4, None]
    >>> pruner = WAUMPruner(alpha=0.1, method="aumc", n_epochs=20, random_state=0)
    >>> ax = plot_waum_vs_entropy(pruner.fit(X, votes), votes)
    >>> [len(c.get_offsets()) for c in ax.collections[:2]]
    [36, 4]
    """
    _fitted_attribute(pruner, ["support_"])
    kind = _fitted_attribute(pruner, ["waum_", "aumc_"])
    scores = np.asarray(getattr(pruner, kind), dtype=np.float64)
    support = np.asarray(pruner.support_, dtype=bool)
    votes = check_votes(votes, missing_label=missing_label, allow_no_votes=True)
    if votes.n_tasks != len(scores):
        raise ValueError(
            f"votes has {votes.n_tasks} tasks but the pruner scored {len(scores)}; pass the "
            "votes it was fitted on."
        )
    entropy = _vote_entropy(votes)
    has_votes = votes.votes_per_task() > 0

    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5), layout="constrained")
    kept, pruned = has_votes & support, has_votes & ~support
    ax.scatter(entropy[kept], scores[kept], s=12, alpha=0.6, color="C0",
               label=f"kept ({int(kept.sum())})")
    ax.scatter(entropy[pruned], scores[pruned], s=30, marker="x", color="C3",
               label=f"pruned ({int(pruned.sum())})")
    threshold = getattr(pruner, "threshold_", None)
    if threshold is not None and pruned.any():
        ax.axhline(threshold, linestyle="--", color="gray", label="threshold")
    name = kind.rstrip("_").upper()
    ax.set_xlabel("entropy of the votes (nats)")
    ax.set_ylabel(name)
    ax.set_title(f"{name} vs vote entropy")
    ax.legend(loc="best")
    return ax


def plot_vote_counts(votes, *, per="task", missing_label=-1, ax=None):
    """Histogram of the number of votes per task or per worker.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_workers), or Votes
        The votes matrix.
    per : {"task", "worker"}, default="task"
        Count the votes of each task (rows) or of each worker (columns).
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in dense ``votes``.
    ax : matplotlib Axes, default=None
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on; one bar per count when the counts span at most
        50 values, automatic bins otherwise.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skcrowd.plotting import plot_vote_counts
    >>> votes = [[0, 1, -1], [1, -1, -1], [0, 0, 1]]
    >>> ax = plot_vote_counts(votes, per="task")
    >>> [int(bar.get_height()) for bar in ax.patches]
    [1, 1, 1]
    >>> ax.get_title()
    'Votes per task (3 tasks, mean 2.00, median 2)'
    """
    if per not in ("task", "worker"):
        raise ValueError(f"per must be 'task' or 'worker', got {per!r}.")
    votes = check_votes(votes, missing_label=missing_label, allow_no_votes=True)
    counts = votes.votes_per_task() if per == "task" else votes.votes_per_worker()
    low, high = int(counts.min()), int(counts.max())
    bins = np.arange(low, high + 2) - 0.5 if high - low < 50 else "auto"
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 3.5), layout="constrained")
    ax.hist(counts, bins=bins, edgecolor="black")
    ax.set_xlabel(f"number of votes per {per}")
    ax.set_ylabel(f"number of {per}s")
    ax.set_title(
        f"Votes per {per} ({len(counts)} {per}s, mean {counts.mean():.2f}, "
        f"median {np.median(counts):g})"
    )
    return ax


def _history_series(history, key):
    values = [entry.get(key) for entry in history]
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def plot_selftraining_history(history, *, axes=None):
    """Plot validation accuracy and imbalance ratios per Self-Crowd iteration.

    Parameters
    ----------
    history : fitted SelfCrowdClassifier or list of dict
        An estimator with ``history_`` (like
        :class:`~skcrowd.selftraining.SelfCrowdClassifier`) or the list
        itself: one dict per iteration with ``iteration``,
        ``imbalance_ratio_combined``, ``imbalance_ratio_selected`` (None
        before any selection) and, when the model was fitted with validation
        data, ``valid_accuracy``.
    axes : array-like of two matplotlib Axes, default=None
        Where to draw the accuracy and the imbalance ratios; default a new
        figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure: validation accuracy (left; a note when it was not
        recorded) and the imbalance ratio ``R`` of the selected and of all
        (observed + selected) annotations (right).

    References
    ----------
    Shi, Li and Huang. "Learning from crowds with sparse and imbalanced
    annotations", 2022 (imbalance ratio R, eq. 6).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skcrowd.plotting import plot_selftraining_history
    >>> history = [
    ...     {"iteration": 0, "imbalance_ratio_selected": None,
    ...      "imbalance_ratio_combined": 3.0, "valid_accuracy": 0.70},
    ...     {"iteration": 1, "imbalance_ratio_selected": 1.5,
    ...      "imbalance_ratio_combined": 2.4, "valid_accuracy": 0.74},
    ... ]
    >>> fig = plot_selftraining_history(history)
    >>> fig.axes[0].lines[0].get_ydata().tolist()
    [0.7, 0.74]
    """
    if hasattr(history, "fit"):
        history = getattr(history, _fitted_attribute(history, ["history_"]))
    history = list(history)
    if not history:
        raise ValueError("history is empty.")
    for i, entry in enumerate(history):
        missing = {"iteration", "imbalance_ratio_combined"} - set(entry)
        if missing:
            raise ValueError(f"history entry {i} lacks {', '.join(sorted(missing))}.")
    iteration = _history_series(history, "iteration")
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.5), layout="constrained")
    axes = list(np.ravel(axes))
    if len(axes) != 2:
        raise ValueError(f"axes must hold 2 Axes, got {len(axes)}.")
    fig = axes[0].figure
    accuracy_ax, ratio_ax = axes

    accuracy = _history_series(history, "valid_accuracy")
    if np.isfinite(accuracy).any():
        accuracy_ax.plot(iteration, accuracy, marker="o")
    else:
        accuracy_ax.text(0.5, 0.5, "no validation accuracy recorded\n(fit with X_val, y_val)",
                         ha="center", va="center", transform=accuracy_ax.transAxes)
    accuracy_ax.set_xlabel("iteration")
    accuracy_ax.set_ylabel("validation accuracy")
    accuracy_ax.set_title("Validation accuracy")

    for key, label in (("imbalance_ratio_selected", "selected"),
                       ("imbalance_ratio_combined", "observed + selected")):
        ratio_ax.plot(iteration, _history_series(history, key), marker="o", label=label)
    ratio_ax.set_xlabel("iteration")
    ratio_ax.set_ylabel("imbalance ratio R")
    ratio_ax.set_title("Imbalance of the annotations")
    ratio_ax.legend(loc="best")
    for ax in axes:
        ax.xaxis.get_major_locator().set_params(integer=True)
    return fig


def plot_worker_quality(report, *, accuracy="accuracy", n_review=10, ax=None):
    """Each worker's accuracy against their number of votes, the workers to review highlighted.

    One point per worker, coloured by spammer score (Raykar & Yu, 2012: 0
    answers at random, 1 fully informative), with the accuracy interval as a
    vertical bar. The first ``n_review`` workers of the review list
    (``review_rank``) are circled and labelled with their id: in red those
    below chance (``below_chance``: a test, never a worker whose votes all
    agree with the aggregate), in orange the others, those closest to
    spammers. Workers drawn at one point share one label (their ids in review
    order); labels are placed clear of each other, with a thin line to
    their point when set apart. The dotted line is
    the accuracy of uniform random answers, ``1 / n_classes``. Workers
    without votes (or, for ``accuracy="known_accuracy"``, without votes on
    known tasks) are not drawn.

    Parameters
    ----------
    report : pandas.DataFrame
        A :func:`skcrowd.quality.worker_report`.
    accuracy : {"accuracy", "known_accuracy"}, default="accuracy"
        The estimated accuracy, or the accuracy on known tasks (the report
        must have been made with ``known``).
    n_review : int, default=10
        Number of workers of the review list to highlight (0: none).
    ax : matplotlib Axes, default=None
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcrowd import DawidSkene, simulate_annotators, worker_report
    >>> from skcrowd.plotting import plot_worker_quality
    >>> y = np.random.RandomState(0).randint(3, size=300)
    >>> crowd = simulate_annotators(y, 12, accuracy=(0.6, 0.9), votes_per_task=4,
    ...                             spammers=0.25, random_state=0)
    >>> report = worker_report(DawidSkene().fit(crowd.votes), crowd.votes)
    >>> ax = plot_worker_quality(report, n_review=3)
    >>> crowd.worker_type[[4, 6, 11]].tolist()
    ['spammer', 'spammer', 'spammer']
    >>> len(ax.collections[0].get_offsets()), sorted(int(t.get_text()) for t in ax.texts)
    (12, [4, 6, 11])
    """
    required = {"n_votes", "spammer_score", "below_chance", "review_rank", accuracy,
                f"{accuracy}_low", f"{accuracy}_high"}
    missing = sorted(required - set(getattr(report, "columns", ())))
    if accuracy not in ("accuracy", "known_accuracy") or missing:
        raise ValueError(
            f"report must be a worker_report with columns {sorted(required)}; missing "
            f"{missing or [accuracy]}" + (" (make it with known=)" if accuracy ==
                                          "known_accuracy" else "") + "."
        )
    counts = report["n_known"] if accuracy == "known_accuracy" else report["n_votes"]
    shown = report[(counts.to_numpy() > 0) & report[accuracy].notna().to_numpy()]
    x = (shown["n_known"] if accuracy == "known_accuracy" else shown["n_votes"]).to_numpy()
    y = shown[accuracy].to_numpy(dtype=np.float64)
    low, high = shown[f"{accuracy}_low"].to_numpy(), shown[f"{accuracy}_high"].to_numpy()

    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 4.5), layout="constrained")
    points = ax.scatter(x, y, c=shown["spammer_score"].to_numpy(dtype=np.float64), s=28,
                        cmap="viridis", vmin=0.0, vmax=1.0, zorder=3, edgecolors="none")
    ax.vlines(x, low, high, color="0.7", linewidth=1, zorder=1)
    review = shown[shown["review_rank"] <= n_review].sort_values("review_rank", kind="stable")
    rx = (review["n_known"] if accuracy == "known_accuracy" else review["n_votes"]).to_numpy()
    flagged = review["below_chance"].to_numpy(dtype=bool)
    colors = np.where(flagged, "C3", "C1")
    for mask, name in ((flagged, "below chance"), (~flagged, "closest to spammers")):
        if mask.any():
            ax.scatter(rx[mask], review[accuracy].to_numpy()[mask], s=_REVIEW_MARKER_SIZE,
                       facecolors="none", edgecolors=colors[mask][0], linewidths=1.5,
                       zorder=4, label=f"to review: {name} ({mask.sum()})")
    classes = report.attrs.get("classes")
    if classes:
        ax.axhline(1.0 / len(classes), linestyle=":", color="gray",
                   label=f"random answers (1/{len(classes)})")
    if len(x) and x.max() > 20 * max(x.min(), 1):
        ax.set_xscale("log")
    ax.figure.colorbar(points, ax=ax, label="spammer score")
    ax.set_xlabel("votes on known tasks" if accuracy == "known_accuracy" else "votes given")
    ax.set_ylabel("accuracy on known tasks" if accuracy == "known_accuracy"
                  else "estimated accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Worker quality ({len(shown)} workers)")
    ry = review[accuracy].to_numpy(dtype=np.float64)
    if ax.get_legend_handles_labels()[0]:
        _legend_clear_of(ax, np.column_stack([x, y]), np.column_stack([rx, ry]))
    _label_points(ax, rx, ry, [str(worker) for worker in review.index], colors)
    return ax


def _legend_clear_of(ax, points, circled):
    """The legend at the place of ``_LEGEND_PLACES`` that hides the fewest circled points, then
    the fewest points (the first on ties); matplotlib's ``"best"`` weighs every point alike."""
    figure = ax.figure
    figure.draw_without_rendering()  # the final layout: where the points land
    radius = np.sqrt(_REVIEW_MARKER_SIZE) / 2.0 * figure.dpi / 72.0
    points, circled = ax.transData.transform(points), ax.transData.transform(circled)
    hidden = []
    for place in _LEGEND_PLACES:
        box = ax.legend(loc=place, fontsize=8).get_window_extent()
        hidden.append((box.padded(radius).count_contains(circled), box.count_contains(points)))
    ax.legend(loc=_LEGEND_PLACES[min(range(len(hidden)), key=hidden.__getitem__)], fontsize=8)


def _label_points(ax, x, y, labels, colors):
    """Label circled points without overlap: one label per position, placed around it.

    Points drawn within a circle's radius of each other share one label (their
    labels joined by commas, in the given order). Each label takes the first
    place around its point, nearest first, inside the Axes and clear of the
    labels and circles already placed; where none is free it takes the first.
    A label away from its point gets a thin line to it.
    """
    if not len(labels):
        return
    figure = ax.figure
    figure.draw_without_rendering()  # the final layout: where the points land
    to_points = 72.0 / figure.dpi
    radius = np.sqrt(_REVIEW_MARKER_SIZE) / 2.0
    anchors = ax.transData.transform(np.column_stack([x, y])) * to_points
    groups = []  # [position in points, point index, labels]
    for i, (anchor, label) in enumerate(zip(anchors, labels)):
        near = [g for g in groups if np.hypot(*(g[0] - anchor)) < radius]
        if near:
            near[0][2].append(label)
        else:
            groups.append([anchor, i, [label]])
    frame = ax.bbox.extents * to_points
    taken = [(gx - radius, gy - radius, gx + radius, gy + radius) for (gx, gy), _, _ in groups]
    legend = ax.get_legend()
    if legend is not None:
        taken.append(tuple(legend.get_window_extent().extents * to_points))
    style = dict(textcoords="offset points", fontsize=8, ha="left", va="bottom", zorder=5)
    for (gx, gy), i, names in groups:
        text = ax.annotate(", ".join(names), (x[i], y[i]), xytext=(0, 0), **style)
        extent = text.get_window_extent()
        text.remove()
        width, height = extent.width * to_points, extent.height * to_points
        gap = radius + _LABEL_GAP
        best = None
        for step in range(4):
            shift = step * height
            for dx, dy in ((gap, gap / 2 + shift), (gap, -gap / 2 - height - shift),
                           (-gap - width, gap / 2 + shift),
                           (-gap - width, -gap / 2 - height - shift)):
                box = (gx + dx, gy + dy, gx + dx + width, gy + dy + height)
                inside = (box[0] >= frame[0] and box[1] >= frame[1] and box[2] <= frame[2]
                          and box[3] <= frame[3])
                if inside and not any(box[0] < t[2] and t[0] < box[2] and box[1] < t[3]
                                      and t[1] < box[3] for t in taken):
                    best = (dx, dy, box, step)
                    break
            if best is not None:
                break
        if best is None:
            best = (gap, gap / 2, (gx + gap, gy + gap / 2, gx + gap + width,
                                   gy + gap / 2 + height), 0)
        dx, dy, box, step = best
        line = dict(arrowstyle="-", color=colors[i], linewidth=0.5, shrinkA=0, shrinkB=radius)
        text = ax.annotate(", ".join(names), (x[i], y[i]), xytext=(dx, dy), color=colors[i],
                           arrowprops=line if step else None, **style)
        text.set_in_layout(False)
        taken.append(box)


def plot_class_agreement(votes, *, missing_label=-1, classes=None, ax=None):
    """Per class, how often a vote is matched by another vote on the same task, against chance.

    For each class ``c``, the bar is the share of the (pairable) votes for
    ``c`` that another vote of the same task matches: ``o_cc / n_c`` in the
    coincidences of Krippendorff's alpha (a task with ``m`` votes, ``n`` of
    them for ``c``, adds ``n (n - 1) / (m - 1)`` to ``o_cc``). The black
    tick is the share expected by chance, ``(n_c - 1) / (n - 1)``. A class
    far above its tick is recognised consistently; a class near it is voted
    at random. The title gives the nominal Krippendorff's alpha. Tasks with
    fewer than two votes are left out, as in
    :func:`skcrowd.metrics.krippendorff_alpha`.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_workers)
        The votes, in any format of :func:`skcrowd.check_votes`.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote.
    classes : array-like, default=None
        All classes, in the order to draw them (a class without pairable
        votes gets no bar). Default: the sorted distinct labels.
    ax : matplotlib Axes, default=None
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skcrowd.plotting import plot_class_agreement
    >>> votes = np.array([[0, 0, 0], [0, 1, -1], [1, 1, 0], [2, 2, -1]])
    >>> ax = plot_class_agreement(votes)
    >>> # class 0: 3 of its 5 pairable votes matched (all from task 0); class 1: 1 of 3
    >>> [round(float(bar.get_height()), 3) for bar in ax.patches]
    [0.6, 0.333, 1.0]
    """
    counts, labels = _agreement_counts(votes, missing_label, classes)
    if not (counts.sum(axis=1) >= 2).any():
        raise ValueError("no task has two votes or more: there is no agreement to draw.")
    observed, expected, totals = _class_agreement(counts)
    try:
        alpha = f"{krippendorff_alpha(votes, missing_label=missing_label, classes=classes):.3f}"
    except ValueError:  # a single class among the pairable votes
        alpha = "undefined"
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(labels) + 2.0), 3.8),
                             layout="constrained")
    positions = np.arange(len(labels))
    ax.bar(positions, np.nan_to_num(observed), color="C0", edgecolor="black",
           label="observed")
    ax.scatter(positions, expected, marker="_", s=600, color="black", linewidths=2,
               zorder=3, label="chance")
    ax.set_xticks(positions, [str(label) for label in labels.tolist()],
                  rotation=45 if len(labels) > 8 else 0)
    for pos, total in zip(positions, totals):
        ax.annotate(f"{int(round(total))}", (pos, 0.02), ha="center", fontsize=7,
                    color="white" if total else "gray")
    ax.set_ylim(0.0, 1.05)
    ax.set_xlabel("class (number of pairable votes at the bottom)")
    ax.set_ylabel("share of votes matched on the same task")
    ax.set_title(f"Agreement per class (Krippendorff's alpha {alpha})")
    ax.legend(loc="upper right", fontsize=8)
    return ax
