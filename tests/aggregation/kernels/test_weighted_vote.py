"""Weighted-vote kernels: soft labels and agreement credit by hand, parallel drivers."""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation import kernels
from skcrowd.aggregation.kernels import (SHARES, SOFTMAX, BlockLayout, _common, agreement_credit,
                                         weighted_vote_proba)

from ._crowds import random_votes


def test_agreement_credit_splits_ties_over_voted_classes_only(engine):
    layout = BlockLayout(check_votes(np.array([[0, 1, 2, -1], [2, 2, -1, -1]]), n_classes=4))
    # task 0: a three-way tie; task 1: workers 0 and 1 agree on class 2 (class 3: nobody)
    credit = agreement_credit(layout, np.ones(4))
    np.testing.assert_allclose(credit, [1 / 3 + 1, 1 / 3 + 1, 1 / 3, 0])
    # every vote weighs 0: the voted classes tie (unvoted class 3 is never a winner)
    np.testing.assert_allclose(agreement_credit(layout, np.zeros(4)), credit)
    layout = BlockLayout(check_votes(np.array([[0, 1, 1]]), n_classes=3))
    np.testing.assert_allclose(agreement_credit(layout, np.zeros(3)), [1 / 2, 1 / 2, 1 / 2])
    # weights break the tie of task 0 of the first crowd
    layout = BlockLayout(check_votes(np.array([[0, 1, 1, 0]])))
    np.testing.assert_allclose(agreement_credit(layout, np.array([1.0, 0.2, 0.3, 0.4])),
                               [1, 0, 0, 1])


def test_weighted_vote_shares_and_softmax_by_hand(engine):
    layout = BlockLayout(check_votes(np.array([[0, 1, 2], [0, -1, -1], [-1, -1, -1]]),
                                     n_classes=3))
    priors = np.array([0.2, 0.3, 0.5])
    weights = np.array([2.0, -1.0, 0.0])
    proba, log_norm = weighted_vote_proba(layout, weights, priors, kind=SHARES)
    assert log_norm is None
    # worker 0 gives 2 to class 0; worker 1 (negative) gives 1/2 to classes 0 and 2
    np.testing.assert_allclose(proba, [[2.5 / 3, 0, 0.5 / 3], [1, 0, 0], priors])
    zero, _ = weighted_vote_proba(layout, np.zeros(3), priors, kind=SHARES)
    np.testing.assert_allclose(zero, [priors] * 3)  # votes that weigh nothing
    proba, log_norm = weighted_vote_proba(layout, weights, np.log(priors), kind=SOFTMAX)
    scores = np.log(priors) + weights
    np.testing.assert_allclose(proba[0], np.exp(scores) / np.exp(scores).sum())
    np.testing.assert_allclose(log_norm, [np.log(np.exp(scores).sum()), np.log(0.2 * np.e**2 + 0.8),
                                          0.0], atol=1e-15)
    np.testing.assert_allclose(proba[2], priors)


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
def test_parallel_drivers_agree_with_numpy(monkeypatch):
    rng = np.random.default_rng(7)
    layout = BlockLayout(random_votes(rng, n_tasks=300, n_workers=9, K=4))
    weights = rng.uniform(-0.5, 1.0, size=9)
    positive = np.abs(weights)
    monkeypatch.setattr(kernels, "ENGINE", "numpy")
    expected = [*weighted_vote_proba(layout, weights, np.full(4, 0.25))[:1],
                *weighted_vote_proba(layout, weights, np.log(np.full(4, 0.25)), kind=SOFTMAX),
                agreement_credit(layout, positive), agreement_credit(layout, np.ones(9))]
    monkeypatch.setattr(kernels, "ENGINE", "numba")
    monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 0)
    got = [*weighted_vote_proba(layout, weights, np.full(4, 0.25))[:1],
           *weighted_vote_proba(layout, weights, np.log(np.full(4, 0.25)), kind=SOFTMAX),
           agreement_credit(layout, positive), agreement_credit(layout, np.ones(9))]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
