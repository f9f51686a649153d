"""Tests of skcrowd.plotting, headless (Agg): what is drawn, not how it looks."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skcrowd.aggregation import DawidSkene  # noqa: E402
from skcrowd.metrics import expected_calibration_error  # noqa: E402
from skcrowd.plotting import (  # noqa: E402
    plot_confusion_matrices,
    plot_reliability_diagram,
    plot_selftraining_history,
    plot_vote_counts,
    plot_waum_vs_entropy,
)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


class FittedStandIn:
    """An object that looks like a fitted estimator: a fit method and attributes."""

    def __init__(self, **attributes):
        for name, value in attributes.items():
            setattr(self, name, value)

    def fit(self, X, y=None):
        return self


def _images(fig):
    return [im for ax in fig.axes for im in ax.images]


def _confusions(n_workers, n_classes, seed=0):
    rng = np.random.RandomState(seed)
    m = rng.rand(n_workers, n_classes, n_classes) + 3 * np.eye(n_classes)
    return m / m.sum(axis=2, keepdims=True)


# ---------------------------------------------------------------------------
# confusion matrices
# ---------------------------------------------------------------------------


def test_confusion_matrices_of_dawid_skene_show_its_fitted_matrices():
    votes = np.array([[0, 0, 1], [1, 1, 1], [0, 0, -1], [1, -1, 0], [1, 1, 0]])
    ds = DawidSkene().fit(votes)
    fig = plot_confusion_matrices(ds)
    images = _images(fig)
    assert len(images) == 3
    for j, image in enumerate(images):
        np.testing.assert_allclose(image.get_array(), ds.confusion_matrices_[j])
        assert image.get_clim() == (0.0, 1.0)
    titles = [ax.get_title() for ax in fig.axes if ax.images]
    assert titles == ["worker 0", "worker 1", "worker 2"]
    # one annotation per cell, class names from classes_, and a shared colorbar
    first = fig.axes[0]
    assert sorted(t.get_text() for t in first.texts) == sorted(
        f"{p:.2f}" for p in ds.confusion_matrices_[0].ravel()
    )
    assert [t.get_text() for t in first.get_yticklabels()] == ["0", "1"]
    assert len(fig.axes) == 4  # three panels and the colorbar


def test_confusion_matrices_of_a_conal_like_estimator_include_the_common_confusion():
    individual, common = _confusions(4, 3), _confusions(1, 3, seed=1)[0]
    clf = FittedStandIn(annotator_confusions_=individual, common_confusion_=common,
                        classes_=np.array(["cat", "dog", "fox"]))
    fig = plot_confusion_matrices(clf, workers=[2, 0])
    images = _images(fig)
    assert len(images) == 3
    np.testing.assert_allclose(images[0].get_array(), individual[2])
    np.testing.assert_allclose(images[1].get_array(), individual[0])
    np.testing.assert_allclose(images[2].get_array(), common)
    assert [ax.get_title() for ax in fig.axes[:3]] == ["worker 2", "worker 0", "common confusion"]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["cat", "dog", "fox"]

    fig = plot_confusion_matrices(clf, workers=[1], include_common=False)
    assert len(_images(fig)) == 1


def test_confusion_matrices_default_to_six_workers_and_use_feature_names():
    clf = FittedStandIn(confusion_matrices_=_confusions(9, 2),
                        feature_names_in_=np.array([f"w{j}" for j in range(9)], dtype=object))
    fig = plot_confusion_matrices(clf, annotate=False)
    assert len(_images(fig)) == 6
    assert fig.axes[5].get_title() == "worker w5"
    assert not fig.axes[0].texts
    # a 4-column grid: the two unused slots of the second row are hidden
    assert sum(not ax.get_visible() for ax in fig.axes) == 2


def test_true_and_estimated_confusions_side_by_side_on_given_axes():
    true = _confusions(5, 3)
    estimated = _confusions(5, 3, seed=2)
    fig, axes = plt.subplots(2, 3)
    out_true = plot_confusion_matrices(true, workers=[0, 1, 4], axes=axes[0])
    out_estimated = plot_confusion_matrices(FittedStandIn(confusion_matrices_=estimated),
                                            workers=[0, 1, 4], axes=axes[1])
    assert out_true is fig and out_estimated is fig
    np.testing.assert_allclose(axes[0, 2].images[0].get_array(), true[4])
    np.testing.assert_allclose(axes[1, 2].images[0].get_array(), estimated[4])


@pytest.mark.deep
def test_confusion_matrices_of_a_fitted_conal_classifier():
    pytest.importorskip("torch")
    pytest.importorskip("skorch")
    from skcrowd.neural import CoNALClassifier

    rng = np.random.RandomState(0)
    X = np.r_[rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))]
    truth = np.r_[np.zeros(30, int), np.ones(30, int)]
    clf = CoNALClassifier(max_epochs=3, module__hidden_units=4, train_split=None,
                          random_state=0).fit(X, np.c_[truth, 1 - truth])
    fig = plot_confusion_matrices(clf)
    images = _images(fig)
    assert [ax.get_title() for ax in fig.axes[:3]] == ["worker 0", "worker 1", "common confusion"]
    np.testing.assert_allclose(images[1].get_array(), clf.annotator_confusions_[1])
    np.testing.assert_allclose(images[2].get_array(), clf.common_confusion_)


def test_confusion_matrices_bad_input_names_the_problem():
    good = _confusions(3, 2)
    with pytest.raises(ValueError, match="worker 5, but there are 3 workers"):
        plot_confusion_matrices(good, workers=[0, 5])
    with pytest.raises(ValueError, match="worker -1"):
        plot_confusion_matrices(good, workers=[-1])
    with pytest.raises(ValueError, match="worker indices"):
        plot_confusion_matrices(good, workers=["a"])
    with pytest.raises(ValueError, match=r"shape \(n_workers, n_classes, n_classes\)"):
        plot_confusion_matrices(np.ones((3, 2, 4)) / 4)
    bad = good.copy()
    bad[1, 0, 1] = 1.5
    with pytest.raises(ValueError, match=r"confusions\[1, 0, 1\] = 1.5"):
        plot_confusion_matrices(bad)
    with pytest.raises(ValueError, match="class_names has 3 entries"):
        plot_confusion_matrices(good, class_names=["a", "b", "c"])
    with pytest.raises(ValueError, match="axes has 2 Axes but 3 panels"):
        plot_confusion_matrices(good, axes=plt.subplots(1, 2)[1])
    with pytest.raises(NotFittedError):
        plot_confusion_matrices(DawidSkene())
    with pytest.raises(AttributeError, match="has no confusion_matrices_ or annotator_confusions_"):
        plot_confusion_matrices(FittedStandIn(classes_=np.arange(2)))


# ---------------------------------------------------------------------------
# reliability diagram
# ---------------------------------------------------------------------------


def test_reliability_diagram_hand_computed_bins():
    # confidences 0.9, 0.9 (bin (0.8, 1]: one right, one wrong), 0.6 (bin (0.4, 0.6]),
    # 0.7 (bin (0.6, 0.8]); ECE = (|1 - 0.6| + |1 - 0.7| + |1 - 1.8|) / 4 = 0.375
    y_proba = [[0.9, 0.1], [0.9, 0.1], [0.4, 0.6], [0.3, 0.7]]
    ax = plot_reliability_diagram([0, 1, 1, 1], y_proba, n_bins=5)
    assert ax.get_title() == "Reliability diagram (ECE = 0.375)"
    bars = ax.patches
    assert [round(b.get_x(), 6) for b in bars] == [0.4, 0.6, 0.8]
    assert [b.get_height() for b in bars] == [1.0, 1.0, 0.5]
    assert all(b.get_width() == pytest.approx(0.2) for b in bars)
    segments = ax.collections[0].get_segments()
    np.testing.assert_allclose([s[0, 1] for s in segments], [0.6, 0.7, 0.9])
    assert ax.get_xlim() == (0.0, 1.0) and ax.get_ylim() == (0.0, 1.0)
    np.testing.assert_allclose(ax.lines[0].get_xydata(), [[0, 0], [1, 1]])


def test_reliability_diagram_bins_are_those_of_the_ece():
    rng = np.random.RandomState(0)
    proba = rng.dirichlet(np.ones(4) * 0.5, size=300)
    y = rng.randint(0, 4, size=300)
    ax = plot_reliability_diagram(y, proba, n_bins=10)
    confidence = proba.max(axis=1)
    # |B_m|/n |acc - conf| summed over the drawn bins is the metric's ECE
    total = 0.0
    for bar, segment in zip(ax.patches, ax.collections[0].get_segments()):
        left = bar.get_x()
        in_bin = (confidence > left) & (confidence <= left + 0.1 + 1e-12)
        total += in_bin.sum() * abs(bar.get_height() - segment[0, 1])
    ece = expected_calibration_error(y, proba, n_bins=10)
    assert total / 300 == pytest.approx(ece)
    assert ax.get_title() == f"Reliability diagram (ECE = {ece:.3f})"


def test_reliability_diagram_with_labels_and_given_axes():
    _, ax = plt.subplots()
    out = plot_reliability_diagram(["b", "a"], [[0.2, 0.8], [0.7, 0.3]], labels=["a", "b"],
                                   n_bins=2, ax=ax)
    assert out is ax
    assert [b.get_height() for b in ax.patches] == [1.0]
    assert ax.get_title() == "Reliability diagram (ECE = 0.250)"
    with pytest.raises(ValueError, match="not one of labels"):
        plot_reliability_diagram(["c"], [[0.2, 0.8]], labels=["a", "b"])


# ---------------------------------------------------------------------------
# WAUM against vote entropy
# ---------------------------------------------------------------------------


def _stand_in_pruner(scores, support, threshold, kind="waum_"):
    return FittedStandIn(**{kind: np.asarray(scores, dtype=float),
                            "support_": np.asarray(support), "threshold_": threshold})


def test_waum_vs_entropy_places_each_task_and_highlights_pruned_ones():
    votes = np.array([
        [0, 0, 0, 0],      # entropy 0
        [0, 1, -1, -1],    # log 2
        [0, 1, 2, 2],      # -(2 * 1/4 log 1/4 + 1/2 log 1/2) = 1.5 log 2
        [-1, -1, -1, -1],  # no votes: not drawn
        [1, 1, 1, -1],     # entropy 0
    ])
    pruner = _stand_in_pruner([2.0, -0.5, -1.0, -3.0, 1.5],
                              [True, False, False, False, True], threshold=-0.5)
    ax = plot_waum_vs_entropy(pruner, votes)
    kept, pruned = ax.collections[:2]
    np.testing.assert_allclose(kept.get_offsets(), [[0.0, 2.0], [0.0, 1.5]])
    np.testing.assert_allclose(pruned.get_offsets(),
                               [[np.log(2), -0.5], [1.5 * np.log(2), -1.0]])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "kept (2)", "pruned (2)", "threshold"]
    assert ax.lines[0].get_ydata()[0] == -0.5
    assert ax.get_ylabel() == "WAUM" and ax.get_title() == "WAUM vs vote entropy"


def test_waum_vs_entropy_of_a_fitted_waum_pruner():
    from skcrowd.pruning import WAUMPruner

    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 2))
    truth = (X[:, 0] > 0).astype(int)
    votes = np.column_stack([truth, truth, truth])
    votes[:4, 1:] = 1 - truth[:4, None]  # tasks 0-3: two of three workers disagree
    pruner = WAUMPruner(alpha=0.1, n_epochs=5, random_state=0).fit(X, votes)
    ax = plot_waum_vs_entropy(pruner, votes)
    kept, pruned = ax.collections[:2]
    assert len(kept.get_offsets()) == 36 and len(pruned.get_offsets()) == 4
    np.testing.assert_allclose(np.sort(pruned.get_offsets()[:, 1]),
                               np.sort(pruner.waum_[~pruner.support_]))
    assert ax.lines[0].get_ydata()[0] == pruner.threshold_


def test_waum_vs_entropy_with_aumc_sparse_votes_and_bad_votes():
    # stored zeros are votes: task 0 has votes 0 and 1, task 2 two votes 0
    votes = sp.csr_array(([0, 1, 1, 1, 0, 0], ([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1])),
                         shape=(3, 2))
    pruner = _stand_in_pruner([0.1, 0.5, 0.9], [True, True, True], threshold=0.1,
                              kind="aumc_")
    _, ax = plt.subplots()
    assert plot_waum_vs_entropy(pruner, votes, ax=ax) is ax
    assert ax.get_ylabel() == "AUMC"
    np.testing.assert_allclose(ax.collections[0].get_offsets()[:, 0], [np.log(2), 0.0, 0.0])
    assert len(ax.collections[1].get_offsets()) == 0
    assert not ax.lines  # nothing pruned: no threshold line
    with pytest.raises(ValueError, match="votes has 2 tasks but the pruner scored 3"):
        plot_waum_vs_entropy(pruner, [[0, 1], [1, 1]])
    with pytest.raises(NotFittedError):
        plot_waum_vs_entropy(FittedStandIn(), votes)


# ---------------------------------------------------------------------------
# votes per task / per worker
# ---------------------------------------------------------------------------


def test_vote_counts_per_task_and_per_worker():
    votes = np.array([[0, 1, -1], [1, -1, -1], [0, 0, 1], [-1, -1, -1]])
    ax = plot_vote_counts(votes, per="task")
    # counts 2, 1, 3, 0: one bar per integer from 0 to 3
    assert [b.get_x() + b.get_width() / 2 for b in ax.patches] == [0.0, 1.0, 2.0, 3.0]
    assert [b.get_height() for b in ax.patches] == [1, 1, 1, 1]
    assert ax.get_title() == "Votes per task (4 tasks, mean 1.50, median 1.5)"
    assert ax.get_xlabel() == "number of votes per task"

    ax = plot_vote_counts(votes, per="worker")  # worker counts 3, 2, 1
    assert [b.get_height() for b in ax.patches] == [1, 1, 1]
    assert ax.get_ylabel() == "number of workers"


def test_vote_counts_wide_range_uses_automatic_bins():
    rng = np.random.RandomState(0)
    votes = np.full((60, 200), -1)
    for i in range(60):
        votes[i, : 1 + 3 * i] = rng.randint(0, 2, size=1 + 3 * i)
    _, ax = plt.subplots()
    assert plot_vote_counts(votes, ax=ax) is ax
    heights = [b.get_height() for b in ax.patches]
    assert sum(heights) == 60 and len(heights) < 178
    with pytest.raises(ValueError, match="per must be 'task' or 'worker'"):
        plot_vote_counts(votes, per="label")


# ---------------------------------------------------------------------------
# Self-Crowd history
# ---------------------------------------------------------------------------


HISTORY = [
    {"iteration": 0, "imbalance_ratio_selected": None, "imbalance_ratio_combined": 4.0,
     "valid_accuracy": 0.60},
    {"iteration": 1, "imbalance_ratio_selected": 2.0, "imbalance_ratio_combined": 3.0,
     "valid_accuracy": 0.65},
    {"iteration": 2, "imbalance_ratio_selected": 1.5, "imbalance_ratio_combined": 2.5,
     "valid_accuracy": 0.70},
]


def test_selftraining_history_of_an_estimator():
    fig = plot_selftraining_history(FittedStandIn(history_=HISTORY))
    accuracy_ax, ratio_ax = fig.axes
    np.testing.assert_allclose(accuracy_ax.lines[0].get_xydata(),
                               [[0, 0.60], [1, 0.65], [2, 0.70]])
    selected, combined = ratio_ax.lines
    np.testing.assert_allclose(selected.get_ydata(), [np.nan, 2.0, 1.5])
    np.testing.assert_allclose(combined.get_ydata(), [4.0, 3.0, 2.5])
    assert [t.get_text() for t in ratio_ax.get_legend().get_texts()] == [
        "selected", "observed + selected"]


def test_selftraining_history_without_validation_accuracy():
    history = [{k: v for k, v in entry.items() if k != "valid_accuracy"} for entry in HISTORY]
    fig, axes = plt.subplots(1, 2)
    assert plot_selftraining_history(history, axes=axes) is fig
    assert not axes[0].lines
    assert "no validation accuracy" in axes[0].texts[0].get_text()
    assert len(axes[1].lines) == 2


def test_selftraining_history_bad_input():
    with pytest.raises(ValueError, match="history entry 1 lacks imbalance_ratio_combined"):
        plot_selftraining_history([HISTORY[0], {"iteration": 1}])
    with pytest.raises(ValueError, match="history is empty"):
        plot_selftraining_history([])
    with pytest.raises(ValueError, match="axes must hold 2 Axes"):
        plot_selftraining_history(HISTORY, axes=plt.subplots(1, 3)[1])
    with pytest.raises(NotFittedError):
        plot_selftraining_history(FittedStandIn())
