"""Margins (eq. 2 and appendix G), trust scores (eq. 5) and the WAUM (eq. 4) by hand."""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.pruning import margins, trust_scores, weighted_aum

P = np.array(
    [
        [0.5, 0.3, 0.2],  # label 0 on top
        [0.2, 0.5, 0.3],  # label 0 last
        [0.3, 0.5, 0.2],  # label 0 second
        [0.4, 0.4, 0.2],  # label 0 tied on top
    ]
)


def test_top1_margin_is_label_minus_second_largest():
    # sigma_y - sigma_[2]: 0.5-0.3, 0.2-0.3, 0.3-0.3, 0.4-0.4
    np.testing.assert_allclose(margins(P, [0, 0, 0, 0]), [0.2, -0.1, 0.0, 0.0])


def test_pleiss_margin_is_label_minus_best_other():
    # sigma_y - max_{l != y} sigma_l: 0.5-0.3, 0.2-0.5, 0.3-0.5, 0.4-0.4
    np.testing.assert_allclose(margins(P, [0, 0, 0, 0], kind="pleiss"), [0.2, -0.3, -0.2, 0.0])


def test_top2_margins_use_the_third_largest():
    # top-k: sigma_y - sigma_[3]; pleiss: sigma_y - (2nd largest other)
    labels = [2, 0, 0, 1]
    np.testing.assert_allclose(margins(P, labels, top_k=2), [0.0, 0.0, 0.1, 0.2])
    np.testing.assert_allclose(
        margins(P, labels, kind="pleiss", top_k=2), [-0.1, -0.1, 0.1, 0.2]
    )


def test_margins_on_logits_are_shift_invariant_and_unbounded():
    logits = np.array([[10.0, -5.0, 0.0], [0.0, 1000.0, -1000.0]])
    m = margins(logits, [0, 2])
    np.testing.assert_allclose(m, [10.0, -1000.0])
    np.testing.assert_allclose(margins(logits + [[3.0], [-7.0]], [0, 2]), m)


def test_margins_agree_on_the_top_class_for_any_scores():
    rng = np.random.RandomState(0)
    scores = rng.dirichlet(np.ones(5), size=200)
    top = scores.argmax(axis=1)
    np.testing.assert_allclose(margins(scores, top), margins(scores, top, kind="pleiss"))
    assert (margins(scores, top) >= 0).all()
    other = (top + 1) % 5
    assert (margins(scores, other, kind="pleiss") <= 0).all()
    # a softmax margin stays within [-1, 1]
    assert np.abs(margins(scores, other)).max() <= 1


@pytest.mark.parametrize(
    "scores, labels, kwargs, match",
    [
        (np.ones((2, 1)), [0, 0], {}, "at least 2 classes"),
        (P, [0, 3, 0, 0], {}, "class index 3 at row 1"),
        (P, [0, 0], {}, r"shape \(4,\)"),
        (P, [0.0, 0.0, 0.0, 0.0], {}, "integer class indices"),
        (P, [0, 0, 0, 0], {"top_k": 3}, "top_k=3"),
        (P, [0, 0, 0, 0], {"kind": "psi"}, "kind must be one of"),
    ],
)
def test_margins_reject_bad_input(scores, labels, kwargs, match):
    with pytest.raises(ValueError, match=match):
        margins(scores, labels, **kwargs)


def test_trust_scores_by_hand():
    votes = np.array([[0, 1, -1], [-1, 1, 1]])
    proba = np.array([[0.7, 0.3], [0.1, 0.9]])
    diag = np.array([[0.9, 0.6], [0.5, 0.5], [0.2, 1.0]])
    pi = np.zeros((3, 2, 2))
    pi[:, [0, 1], [0, 1]] = diag
    pi[:, [0, 1], [1, 0]] = 1 - diag
    s = trust_scores(proba, votes, pi)
    # votes in task order: (0, w0), (0, w1), (1, w1), (1, w2)
    expected = [
        0.7 * 0.9 + 0.3 * 0.6,
        0.7 * 0.5 + 0.3 * 0.5,
        0.1 * 0.5 + 0.9 * 0.5,
        0.1 * 0.2 + 0.9 * 1.0,
    ]
    np.testing.assert_allclose(s, expected)


def test_trust_scores_reject_mismatched_shapes():
    votes = np.array([[0, 1], [1, 1]])
    with pytest.raises(ValueError, match="n_tasks=2"):
        trust_scores(np.ones((3, 2)) / 2, votes, np.ones((2, 2, 2)) / 2)
    with pytest.raises(ValueError, match=r"\(2, 2, 2\)"):
        trust_scores(np.ones((2, 2)) / 2, votes, np.ones((3, 2, 2)) / 2)


def test_weighted_aum_by_hand():
    votes = np.array([[0, 1, 1], [1, -1, 0], [-1, -1, 1]])
    # votes in task order: (0,w0) (0,w1) (0,w2) (1,w0) (1,w2) (2,w2)
    aum = [0.4, -0.2, -0.1, 0.3, 0.1, -0.5]
    trust = [2.0, 1.0, 1.0, 0.5, 1.5, 0.7]
    expected = [(0.8 - 0.2 - 0.1) / 4, (0.15 + 0.15) / 2, -0.5]
    np.testing.assert_allclose(weighted_aum(aum, trust, votes), expected)


def test_weighted_aum_is_a_mean_within_the_task_range():
    rng = np.random.RandomState(1)
    votes = rng.randint(-1, 3, size=(50, 6))
    votes[:, 0] = rng.randint(0, 3, size=50)  # every task voted
    v = check_votes(votes)
    aum = rng.uniform(-1, 1, v.n_votes)
    w = weighted_aum(aum, rng.uniform(0, 1, v.n_votes), votes)
    lo = np.full(50, np.inf)
    hi = np.full(50, -np.inf)
    np.minimum.at(lo, v.task, aum)
    np.maximum.at(hi, v.task, aum)
    assert ((lo - 1e-12 <= w) & (w <= hi + 1e-12)).all()
    # equal trust: the plain mean of the task's AUMs
    mean = np.bincount(v.task, aum) / np.bincount(v.task)
    np.testing.assert_allclose(weighted_aum(aum, np.ones(v.n_votes), votes), mean)


def test_weighted_aum_zero_trust_and_tasks_without_votes():
    votes = np.array([[0, 1], [-1, -1], [1, 1]])
    w = weighted_aum([0.2, 0.6, -0.3, 0.1], [0.0, 0.0, 1.0, 3.0], check_votes(votes))
    # task 0: all weights zero -> plain mean; task 1: no votes -> below all and <= -1
    np.testing.assert_allclose(w, [0.4, -1.0, 0.0], atol=1e-15)
    assert np.isfinite(w).all()


def test_weighted_aum_many_votes_per_task_and_single_vote_workers():
    rng = np.random.RandomState(2)
    n_tasks, per_task = 3, 1000
    task = np.repeat(np.arange(n_tasks), per_task)
    worker = np.arange(n_tasks * per_task)  # every worker votes once
    votes = np.full((n_tasks, n_tasks * per_task), -1)
    votes[task, worker] = rng.randint(0, 4, size=task.size)
    aum = rng.uniform(-1, 1, task.size)
    w = weighted_aum(aum, rng.uniform(0, 1e-300, task.size), votes)  # tiny weights
    assert np.isfinite(w).all() and (np.abs(w) <= 1).all()


def test_weighted_aum_rejects_bad_entries():
    votes = np.array([[0, 1]])
    with pytest.raises(ValueError, match="shape \\(2,\\)"):
        weighted_aum([0.1], [1.0, 1.0], votes)
    with pytest.raises(ValueError, match="worker 1 on task 0"):
        weighted_aum([0.1, np.nan], [1.0, 1.0], votes)
    with pytest.raises(ValueError, match="negative weight -1.0 for the vote of worker 0"):
        weighted_aum([0.1, 0.2], [-1.0, 1.0], votes)
