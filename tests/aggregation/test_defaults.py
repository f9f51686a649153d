"""The defaults of DawidSkene and GLAD on simulated crowds where fixed priors failed (issue 12).

Each regime of ``_regimes.py`` reproduces a failure seen on real crowds: binary with most workers
giving one to three votes, binary entity linking with many few-vote workers biased to "no",
five skewed classes with sparse workers, a few prolific spammers. With their data-chosen priors
(``smoothing="auto"``, GLAD's ``"auto"`` priors) neither falls more than one point below
majority vote (its expected accuracy, ties broken at random) on any of them.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from skcrowd.aggregation import GLAD, DawidSkene

from ._regimes import REGIMES, entity_linking, mv_accuracy

ONE_POINT = 0.01 + 1e-9


def _accuracy(model, votes, truth):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return float(np.mean(model.fit_predict(votes) == truth))


@pytest.mark.parametrize("regime", list(REGIMES))
@pytest.mark.parametrize("model", [DawidSkene(), GLAD()], ids=["DawidSkene", "GLAD"])
def test_defaults_never_fall_a_point_below_majority_vote(model, regime):
    for seed in range(2):
        votes, truth = REGIMES[regime](seed)
        assert _accuracy(model, votes, truth) >= mv_accuracy(votes, truth) - ONE_POINT, seed


@pytest.mark.parametrize("regime", list(REGIMES))
@pytest.mark.parametrize("model", [DawidSkene(), GLAD()], ids=["DawidSkene", "GLAD"])
def test_defaults_never_fall_a_point_below_majority_vote_more_seeds(model, regime):
    for seed in range(2, 5):
        votes, truth = REGIMES[regime](seed)
        assert _accuracy(model, votes, truth) >= mv_accuracy(votes, truth) - ONE_POINT, seed


def test_entity_linking_regime_reproduces_the_fixed_prior_failure():
    """The old default (smoothing=3) falls below majority vote here, the data-chosen strength
    does not: the regime tests what it should.

    Per crowd (500 tasks) the gap varies: fixed prior minus majority vote on seeds 0-5 -0.034,
    -0.002, -0.022, -0.044, -0.034, -0.034 (mean -0.028; 1000, 2000, 3000: -0.018, -0.024,
    -0.022), the data-chosen prior +0.002, +0.020, -0.002, +0.008, +0.002, +0.008 (mean +0.006),
    so the former single-crowd "over three points below" and "at least majority vote" held on
    seed 0 only by chance. Asserted on the mean of seeds 0-5 (per-crowd sd about 0.014, so a
    standard error of 0.006): fixed below majority vote by more than 1.5 points and the
    data-chosen prior above the fixed one by more than 2 (measured 3.4), within the module's one
    point of majority vote on every crowd, with a stronger prior than 3 (measured 3.98-9.87).
    """
    fixed, auto = [], []
    for seed in range(6):
        votes, truth = entity_linking(seed)
        mv = mv_accuracy(votes, truth)
        fixed.append(_accuracy(DawidSkene(smoothing=3.0), votes, truth) - mv)
        ds = DawidSkene().fit(votes)
        auto.append(np.mean(ds.predict(votes) == truth) - mv)
        assert auto[-1] >= -ONE_POINT, seed
        assert ds.smoothing_ > 3.0  # these sparse, alike workers call for a stronger prior
    assert np.mean(fixed) < -0.015
    assert np.mean(auto) - np.mean(fixed) > 0.02


def test_fixed_priors_are_kept():
    votes, _ = REGIMES["few_votes"](0)
    ds = DawidSkene(smoothing=2.0).fit(votes)
    assert ds.smoothing_ == pytest.approx(2.0)
    glad = GLAD(ability_prior=(0.5, 2.0), difficulty_prior=0.3).fit(votes)
    np.testing.assert_allclose(glad.ability_prior_, [0.5, 2.0])
    assert glad.difficulty_prior_ == 0.3
