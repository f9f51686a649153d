"""Tests of the quality-control plots of skcrowd.plotting (headless): what is drawn."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from skcrowd.aggregation import DawidSkene, MajorityVote  # noqa: E402
from skcrowd.datasets import simulate_annotators  # noqa: E402
from skcrowd.metrics import krippendorff_alpha  # noqa: E402
from skcrowd.plotting import plot_class_agreement, plot_worker_quality  # noqa: E402
from skcrowd.quality import worker_report  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def crowd():
    y = np.random.RandomState(0).randint(3, size=400)
    sim = simulate_annotators(y, 15, accuracy=(0.6, 0.95), votes_per_task=4, spammers=0.2,
                              random_state=0)
    sim.target = y
    return sim


def test_worker_quality_draws_every_worker_and_circles_the_first_to_review(crowd):
    report = worker_report(DawidSkene().fit(crowd.votes), crowd.votes)
    ax = plot_worker_quality(report, n_review=3)
    points = ax.collections[0]
    np.testing.assert_array_equal(points.get_offsets()[:, 0], report["n_votes"])
    np.testing.assert_allclose(points.get_offsets()[:, 1], report["accuracy"])
    np.testing.assert_allclose(points.get_array(), report["spammer_score"])
    first = report.sort_values("review_rank").index[:3]
    assert [t.get_text() for t in ax.texts] == [str(w) for w in first]
    assert set(first) == set(np.flatnonzero(crowd.worker_type == "spammer"))
    assert ax.get_lines()[0].get_ydata()[0] == pytest.approx(1 / 3)  # random answers


def test_worker_quality_labels_do_not_overlap():
    # the plot: workers "90" and "100" at the same point (3 votes, all right) had their
    # labels drawn over each other; close points, labels near the Axes' top edge
    import pandas as pd

    ids = ["90", "100", "7", "8", "12", "13", "14", "200", "201", "202", "300"]
    n_votes = np.array([3, 3, 3, 4, 4, 5, 5, 40, 41, 42, 10])
    accuracy = np.array([1, 1, 1, 0.98, 0.97, 0.3, 0.32, 0.25, 0.26, 0.24, 0.8])
    report = pd.DataFrame({
        "n_votes": n_votes, "accuracy": accuracy, "accuracy_low": accuracy - 0.1,
        "accuracy_high": np.minimum(accuracy + 0.1, 1.0),
        "spammer_score": np.linspace(0, 1, 11), "below_chance": np.arange(11) == 5,
        "review_rank": np.arange(1, 12)}, index=pd.Index(ids, name="worker"))
    ax = plot_worker_quality(report, n_review=10)
    ax.figure.canvas.draw()
    texts = [t.get_text() for t in ax.texts]
    assert texts[0] == "90, 100, 7"  # one label for the workers drawn at one point
    assert sorted(", ".join(texts).split(", ")) == sorted(ids[:10])
    boxes = [Text.get_window_extent(t) for t in ax.texts]  # the text, not its line
    for a in range(len(boxes)):
        assert ax.bbox.x0 <= boxes[a].x0 and boxes[a].x1 <= ax.bbox.x1
        assert ax.bbox.y0 <= boxes[a].y0 and boxes[a].y1 <= ax.bbox.y1
        for b in range(a):
            assert not boxes[a].overlaps(boxes[b]), (texts[a], texts[b])
    # the legend hides no circled worker
    circled = ax.transData.transform(np.column_stack([n_votes[:10], accuracy[:10]]))
    assert ax.get_legend().get_window_extent().count_contains(circled) == 0
    # red circles: below chance only; the others of the review list in orange
    circles = {c.get_label(): c for c in ax.collections}
    red = circles["to review: below chance (1)"]
    np.testing.assert_array_equal(red.get_offsets(), [[5, 0.3]])
    assert red.get_edgecolor().tolist() == [list(matplotlib.colors.to_rgba("C3"))]
    assert len(circles["to review: closest to spammers (9)"].get_offsets()) == 9
    assert [t.get_color() for t in ax.texts if t.get_text().startswith("13")] == ["C3"]


def test_worker_quality_on_known_tasks_skips_workers_without_known_votes(crowd):
    known = np.where(np.arange(400) < 40, crowd.target, -1)
    votes = crowd.votes.copy()
    votes[:40, 0] = -1  # worker 0 never votes on a known task
    report = worker_report(DawidSkene().fit(votes), votes, known=known)
    ax = plot_worker_quality(report, accuracy="known_accuracy", n_review=0)
    offsets = ax.collections[0].get_offsets()
    assert len(offsets) == 14
    np.testing.assert_array_equal(offsets[:, 0], report["n_known"].iloc[1:])
    assert len(ax.texts) == 0


def test_worker_quality_bad_report(crowd):
    report = worker_report(MajorityVote().fit(crowd.votes), crowd.votes)
    with pytest.raises(ValueError, match="make it with known="):
        plot_worker_quality(report, accuracy="known_accuracy")
    with pytest.raises(ValueError, match="must be a worker_report"):
        plot_worker_quality(report.drop(columns="spammer_score"))


def test_class_agreement_hand_computed_bars_and_chance():
    votes = np.array([[0, 0, 0], [0, 1, -1], [1, 1, 0], [2, 2, -1], [2, -1, -1]])
    ax = plot_class_agreement(votes)
    # pairable votes: 5 of class 0 (3 matched), 3 of class 1 (1 matched), 2 of class 2 (2);
    # the single vote of task 4 is not pairable. Chance: (n_c - 1) / (n - 1), n = 10
    np.testing.assert_allclose([bar.get_height() for bar in ax.patches], [3 / 5, 1 / 3, 1])
    np.testing.assert_allclose(ax.collections[0].get_offsets()[:, 1], [4 / 9, 2 / 9, 1 / 9])
    assert f"{krippendorff_alpha(votes):.3f}" in ax.get_title()


def test_class_agreement_with_string_labels_in_a_given_order():
    votes = np.array([["b", "b"], ["a", "b"], ["c", None]], dtype=object)
    ax = plot_class_agreement(votes, missing_label=None, classes=["c", "b", "a"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["c", "b", "a"]
    np.testing.assert_allclose([bar.get_height() for bar in ax.patches], [0, 2 / 3, 0])
    with pytest.raises(ValueError, match="no task has two votes"):
        plot_class_agreement(np.array([[0, -1], [-1, 1]]))
