"""Dirichlet kernels: expected logs and KL by hand, the empirical-Bayes fit, both engines."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import digamma, gammaln

from skcrowd.aggregation import kernels
from skcrowd.aggregation._priors import fit_dirichlet_multinomial
from skcrowd.aggregation.kernels import (
    dirichlet,
    dirichlet_expectations,
    dirichlet_expected_log,
    dirichlet_kl,
    dirichlet_posterior_kl,
)


def _kl_by_hand(a, b):
    """KL(Dir(a) || Dir(b)) from its definition's closed form, one row."""
    return (gammaln(a.sum()) - gammaln(a).sum() - gammaln(b.sum()) + gammaln(b).sum()
            + np.sum((a - b) * (digamma(a) - digamma(a.sum()))))


def test_dirichlet_expectations_by_hand(engine):
    # worker 0: rows Dir(2, 1) and Dir(1, 3); worker 1: the prior itself (no votes)
    prior_t = np.array([[1.0, 0.5], [1.0, 2.5]])  # [answer, row]
    posterior_t = np.array([[[2.0, 1.0], [1.0, 3.0]], prior_t])
    expected_log, kl = dirichlet_expectations(posterior_t, prior_t)
    # E[log p_0] under Dir(2, 1) = digamma(2) - digamma(3) = -1/2; E[log p_1] = -3/2
    np.testing.assert_allclose(expected_log[0, :, 0], [-0.5, -1.5], rtol=1e-14)
    np.testing.assert_allclose(expected_log[0, :, 1], digamma([1.0, 3.0]) - digamma(4.0),
                               rtol=1e-14)
    np.testing.assert_allclose(expected_log[1], digamma(prior_t) - digamma(prior_t.sum(axis=0)),
                               rtol=1e-14)
    # KL(Dir(2, 1) || Dir(1, 1)) = log 2 - 1/2; the worker without votes adds nothing
    expected_kl = (np.log(2) - 0.5) + _kl_by_hand(np.array([1.0, 3.0]), np.array([0.5, 2.5]))
    assert kl == pytest.approx(expected_kl, rel=1e-13)
    assert dirichlet_kl(posterior_t[0].T, prior_t.T) == pytest.approx(expected_kl, rel=1e-13)
    assert dirichlet_kl(prior_t.T, prior_t.T) == 0.0
    np.testing.assert_allclose(dirichlet_expected_log(posterior_t[0].T), expected_log[0].T,
                               rtol=1e-14)


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
def test_numba_digamma_matches_scipy():
    x = np.concatenate([np.logspace(-8, 8, 3000), np.linspace(0.01, 30.0, 3000)])
    ours = np.array([dirichlet._digamma(v) for v in x])
    np.testing.assert_allclose(ours, digamma(x), rtol=2e-15, atol=2e-15)  # near the root: 1e-15


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
@pytest.mark.parametrize("n_workers", [30, 5000])  # serial and parallel drivers
def test_engines_agree_on_dirichlet_expectations(n_workers, monkeypatch):
    rng = np.random.default_rng(0)
    prior_t = rng.gamma(1.0, 2.0, size=(4, 6)) + 1e-3
    posterior_t = prior_t + rng.gamma(0.3, 5.0, size=(n_workers, 4, 6)) * (
        rng.random((n_workers, 4, 6)) < 0.5)
    posterior_t[0, 1, 2] = 1e5  # a prolific worker
    results = {}
    for engine in ("numba", "numpy"):
        monkeypatch.setattr(kernels, "ENGINE", engine)
        results[engine] = dirichlet_expectations(posterior_t, prior_t)
    np.testing.assert_allclose(results["numba"][0], results["numpy"][0], rtol=1e-12, atol=1e-12)
    assert results["numba"][1] == pytest.approx(results["numpy"][1], rel=1e-12)


def _log_evidence(counts_t, prior_t):
    """sum_j log B(alpha + N_j) / B(alpha), per column, written out (the Polya likelihood)."""
    out = np.zeros(prior_t.shape[1])
    for rows in counts_t:
        for s in range(prior_t.shape[1]):
            a, n = prior_t[:, s], rows[:, s]
            if n.sum() > 0:
                out[s] += (gammaln(a.sum()) - gammaln(a.sum() + n.sum())
                           + np.sum(gammaln(a + n) - gammaln(a)))
    return out


def test_empirical_bayes_update_is_the_evidence_maximum_by_hand():
    # 3 workers, binary rows; fractional (expected) counts; two columns (true classes)
    counts_t = np.array([[[4.0, 3.0], [1.0, 0.2]],
                         [[2.5, 0.5], [2.5, 3.0]],
                         [[6.0, 2.0], [0.2, 2.0]]])
    fitted = fit_dirichlet_multinomial(counts_t, np.ones((2, 2)), bounds=(1e-2, 1e5))
    # the maximum found by a general-purpose optimizer on the written-out evidence
    for s in range(2):
        def loss(log_a, s=s):
            prior = np.ones((2, 2))
            prior[:, s] = np.exp(log_a)
            return -_log_evidence(counts_t, prior)[s]
        best = minimize(loss, np.zeros(2), method="Nelder-Mead",
                        options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 10000})
        assert np.all(np.exp(best.x) < 100)  # an interior optimum
        # as high an evidence (within the update's stopping rule: a predicted gain below
        # 1e-9 per term), at the same point up to the flatness of the evidence there
        assert -loss(np.log(fitted[:, s])) >= -best.fun - 1e-8
        np.testing.assert_allclose(fitted[:, s], np.exp(best.x), rtol=1e-3)
    # the joint update raises the evidence from its starting point
    assert np.all(_log_evidence(counts_t, fitted) > _log_evidence(counts_t, np.ones((2, 2))))


def test_empirical_bayes_update_recovers_a_simulated_prior():
    rng = np.random.default_rng(1)
    truth = np.array([[5.0, 0.5], [1.0, 3.0], [0.5, 1.5]])  # [answer, column]
    rows = np.stack([rng.dirichlet(truth[:, s], size=3000) for s in range(2)], axis=2)
    counts_t = np.stack([[rng.multinomial(20, rows[j, :, s]) for s in range(2)]
                         for j in range(3000)]).transpose(0, 2, 1).astype(float)
    fitted = fit_dirichlet_multinomial(counts_t, np.ones((3, 2)))
    np.testing.assert_allclose(fitted, truth, rtol=0.1)


def test_empirical_bayes_update_never_decreases_and_handles_degenerate_columns():
    rng = np.random.default_rng(2)
    counts_t = rng.gamma(0.5, 2.0, size=(40, 3, 4)) * (rng.random((40, 3, 4)) < 0.4)
    counts_t[:, 2, 1] = 0.0  # answer 2 never given in column 1: its pseudo-count -> the bound
    counts_t[:, :, 3] = 0.0  # column 3 without counts: its prior is kept
    prior = rng.gamma(2.0, 1.0, size=(3, 4))
    start = _log_evidence(counts_t, prior)
    for max_iter in (1, 3, 50):
        fitted = fit_dirichlet_multinomial(counts_t, prior, bounds=(1e-2, 1e5),
                                           max_iter=max_iter)
        assert np.all(_log_evidence(counts_t, fitted) >= start - 1e-12)
        assert fitted[2, 1] == 1e-2
        np.testing.assert_array_equal(fitted[:, 3], prior[:, 3])
        assert np.all((fitted >= 1e-2) & (fitted <= 1e5))
    # identical workers: the evidence grows without bound with the concentration -> the box
    same = np.tile(np.array([[3.0], [1.0]]), (50, 1, 1))
    pooled = fit_dirichlet_multinomial(same, np.ones((2, 1)), bounds=(1e-2, 1e3), max_iter=200)
    assert pooled.max() == 1e3
    assert pooled[1, 0] / pooled.sum() == pytest.approx(0.25, rel=1e-2)


def test_posterior_kl_from_counts_is_the_kl_and_takes_the_fit_s_evidence(engine):
    """The divergence of prior + counts, by hand, with the evidence computed or handed over
    from the prior's fit (the same number: the fit's last value, not a new pass)."""
    rng = np.random.default_rng(1)  # workers' rows from Dir(2, 1, 0.5): a prior of moderate
    # pseudo-counts (the by-hand formula of log-gamma values keeps 1e-7 at 1e7 pseudo-counts)
    rows = rng.dirichlet([2.0, 1.0, 0.5], size=(5, 2))
    counts_t = np.stack([[rng.multinomial(12, rows[j, s]) for s in range(2)]
                         for j in range(5)]).transpose(0, 2, 1).astype(float)
    counts_t[4] = 0.0  # a worker without counts: its rows are the prior, KL 0
    prior_t, evidence = fit_dirichlet_multinomial(counts_t, np.ones((3, 2)),
                                                  return_evidence=True)
    posterior_t = counts_t + prior_t
    expected_log, _ = dirichlet_expectations(posterior_t, prior_t)
    by_hand = sum(_kl_by_hand(posterior_t[j, :, s], prior_t[:, s])
                  for j in range(5) for s in range(2))
    computed = dirichlet_posterior_kl(counts_t, prior_t, expected_log)
    np.testing.assert_allclose(computed, by_hand, rtol=1e-10)
    assert dirichlet_posterior_kl(counts_t, prior_t, expected_log, evidence=evidence) == computed
    assert np.array_equal(fit_dirichlet_multinomial(counts_t, np.ones((3, 2))), prior_t)
