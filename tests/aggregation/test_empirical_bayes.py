"""Priors fitted to the crowd: recovery of simulated priors, never worse than the start, finite."""

import numpy as np
import pytest
from scipy.special import betaln, gammaln

from skcrowd.aggregation._empirical_bayes import (beta_log_hyperprior, dirichlet_log_hyperprior,
                                                  fit_beta_prior, fit_dirichlet_prior)


def _beta_objective(prior, successes, trials):
    a, b = prior
    return (betaln(a + successes, b + trials - successes) - betaln(a, b)).sum() + \
        beta_log_hyperprior(a, b)


def _dirichlet_objective(g, counts):
    K = counts.shape[1]
    n = counts.sum(axis=1)
    return ((gammaln(K * g) - gammaln(K * g + n)).sum() + (gammaln(g + counts) - gammaln(g)).sum()
            + dirichlet_log_hyperprior(g, K))


@pytest.mark.parametrize("shape", [(8.0, 2.0), (0.4, 0.6), (30.0, 30.0)])
def test_beta_prior_is_recovered(shape):
    rng = np.random.default_rng(0)
    p = rng.beta(*shape, size=4000)
    trials = rng.integers(5, 40, size=4000).astype(float)
    successes = rng.binomial(trials.astype(int), p).astype(float)
    fitted = fit_beta_prior(successes, trials, [1.0, 1.0])
    np.testing.assert_allclose(fitted, shape, rtol=0.12)
    # the maximum: no nearby value is better
    best = _beta_objective(fitted, successes, trials)
    for factor in (0.98, 1.02):
        for k in range(2):
            near = fitted.copy()
            near[k] *= factor
            assert _beta_objective(near, successes, trials) < best


def test_beta_prior_never_worse_than_its_start():
    rng = np.random.default_rng(1)
    trials = rng.integers(1, 4, size=50).astype(float)
    successes = trials * rng.random(50)  # fractional expected counts
    for start in ([0.5, 0.5], [3.0, 1.0], [200.0, 1e-3]):
        fitted = fit_beta_prior(successes, trials, start)
        assert (_beta_objective(fitted, successes, trials)
                >= _beta_objective(np.clip(start, 1e-3, 1e6), successes, trials) - 1e-9)


def test_beta_prior_stays_finite_when_every_vote_is_right():
    trials = np.full(30, 10.0)
    fitted = fit_beta_prior(trials.copy(), trials, [1.0, 1.0])  # no wrong vote at all
    assert np.all(np.isfinite(fitted)) and np.all(fitted >= 1e-3) and np.all(fitted <= 1e6)
    assert fitted[0] / fitted.sum() > 0.9
    # workers without votes do not count; none at all leaves the hyperprior's Beta(1, 1)
    np.testing.assert_allclose(fit_beta_prior(np.zeros(3), np.zeros(3), [5.0, 5.0]), [1, 1],
                               rtol=1e-6)


@pytest.mark.parametrize("g", [0.3, 2.0, 20.0])
def test_dirichlet_prior_is_recovered(g):
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.full(4, g), size=3000)
    counts = np.array([rng.multinomial(n, q) for n, q in
                       zip(rng.integers(10, 40, size=3000), p)], dtype=float)
    fitted = fit_dirichlet_prior(counts, 1.0)
    assert fitted == pytest.approx(g, rel=0.12)
    best = _dirichlet_objective(fitted, counts)
    assert _dirichlet_objective(fitted * 0.98, counts) < best
    assert _dirichlet_objective(fitted * 1.02, counts) < best


def test_dirichlet_prior_never_worse_than_its_start_and_finite():
    rng = np.random.default_rng(3)
    counts = rng.random((40, 3)) * (rng.random((40, 1)) < 0.5)  # half the workers without counts
    for start in (1e-3, 0.5, 10.0, 1e5):
        fitted = fit_dirichlet_prior(counts, start)
        assert np.isfinite(fitted) and 1e-3 <= fitted <= 1e6
        assert _dirichlet_objective(fitted, counts) >= _dirichlet_objective(start, counts) - 1e-9
