"""Tests of the quality-control plots of skcrowd.plotting (headless): what is drawn."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

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
