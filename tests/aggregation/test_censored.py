"""CensoredRatingEM: Tobit workers, ratings censored at the floor and the ceiling (issue 37).

The scikit-learn checks, the DataFrame, sparse, pickle, bad-input and affine-change tests are
in test_continuous.py, which runs them on every rating aggregator."""

import warnings

import numpy as np
import pytest
from scipy.special import log_ndtr, logsumexp
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning

from skcrowd.aggregation import BiasPrecisionEM, CensoredRatingEM, MeanRating
from skcrowd.aggregation._censored import _expected_clipped


def floor_crowd(seed, n_tasks=200, n_workers=10, floor=0.0):
    """Truths N(0, 30) on a scale floored at ``floor``; workers with a noise sd of 5, 10 or 20
    and a bias N(0, 5), but the first two with a bias of -20 (they answer the floor more
    often); 40 % of the ratings missing; a third of the ratings at the floor. Returns the
    ratings, the latent truths, the workers' noise sds and biases."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0, 30, n_tasks)
    sds = rng.choice([5.0, 10.0, 20.0], n_workers)
    biases = rng.normal(0, 5, n_workers)
    biases[:2] = -20.0
    latent = truth[:, None] + biases + rng.normal(size=(n_tasks, n_workers)) * sds
    X = np.maximum(latent, floor)
    X[rng.random(X.shape) < 0.4] = np.nan
    return X, truth, sds, biases


def test_expected_clipped_rating_by_hand():
    # E[min(1, max(0, x))] for x ~ N(0.3, 0.5^2), by quadrature; one side and no side
    x = np.linspace(-5, 5, 200001) * 0.5 + 0.3
    density = norm.pdf(x, 0.3, 0.5)
    for low, high in ((0.0, 1.0), (0.0, np.inf), (-np.inf, 1.0), (-np.inf, np.inf)):
        expected = np.trapezoid(np.clip(x, low, high) * density, x)
        assert _expected_clipped(0.3, 0.5, low, high) == pytest.approx(expected, abs=1e-6)


def test_likelihood_of_a_censored_rating_by_hand():
    # the log-likelihood of a task is the grid sum of the prior times, for a rating at the
    # floor, Phi((floor - a z - b) sqrt(lambda)), and for one inside the scale, the density
    X, _, _, _ = floor_crowd(0, n_tasks=60, n_workers=6)
    model = CensoredRatingEM().fit(X)
    new = np.full((2, X.shape[1]), np.nan)
    new[0, 3], new[1, 4], new[1, 5] = 0.0, 0.0, 30.0
    grid = model._grid * model.rating_scale_ + model.rating_location_  # ratings' units
    mu, var = model.prior_mean_, model.prior_variance_
    log_prior = -0.5 * (grid - mu) ** 2 / var
    log_prior -= logsumexp(log_prior)
    sd = 1 / np.sqrt(model.precisions_)
    mean = model.slopes_[:, None] * grid + model.biases_[:, None]

    def floor(j):
        return log_ndtr((0.0 - mean[j]) / sd[j])

    expected = [logsumexp(log_prior + floor(3)),
                logsumexp(log_prior + floor(4) + norm.logpdf(30.0, mean[5], sd[5]))]
    np.testing.assert_allclose(model.score_samples(new), expected, rtol=1e-9)
    # target="rating": the expected rating of an unbiased worker of the median precision
    weights = np.exp(log_prior + floor(3) - expected[0])
    assert model.bounds_ == (0.0, np.nanmax(X))
    np.testing.assert_allclose(model.predict(new)[0], weights @ _expected_clipped(
        grid, model._reference_sd * model.rating_scale_, *model.bounds_), rtol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, pytest.param(2, marks=pytest.mark.slow),
                                  pytest.param(3, marks=pytest.mark.slow)])
def test_recovers_workers_and_truth_on_a_floored_crowd(seed):
    # the Gaussian worker model reads the floor ratings as exact values; the censored one
    # recovers the workers' noise and biases, and the floored truths better than it does
    X, truth, sds, biases = floor_crowd(seed)
    gold = np.maximum(truth, 0.0)
    model = CensoredRatingEM(scale=False, target="truth").fit(X)
    assert model.converged_ and np.all(np.diff(model.lower_bounds_) >= -1e-10)
    noise = 1 / np.sqrt(model.precisions_)
    assert np.corrcoef(np.log(noise), np.log(sds))[0, 1] > 0.8
    shift = np.median(model.biases_ - biases)  # what the crowd cannot see: a shared shift
    np.testing.assert_allclose(model.biases_ - shift, biases, atol=6)
    mae = np.abs(model.predict(X) - gold).mean()
    assert mae < np.abs(BiasPrecisionEM().fit(X).predict(X) - gold).mean()


@pytest.mark.slow
def test_beats_the_mean_on_floored_crowds_on_average():
    # over six crowds: 2.02 against the mean's 2.63 (it loses on two of them, where the two
    # low-biased workers shift the truths: the shift the crowd cannot see)
    ratios = []
    for seed in range(6):
        X, truth, _, _ = floor_crowd(seed)
        gold = np.maximum(truth, 0.0)
        model = CensoredRatingEM(scale=False, target="truth").fit(X)
        ratios.append(np.abs(model.predict(X) - gold).mean()
                      / np.abs(MeanRating().fit_predict(X) - gold).mean())
    assert np.mean(ratios) < 0.85


@pytest.mark.parametrize("seed", range(2))
def test_without_a_floor_it_is_about_the_gaussian_worker_model(seed):
    # no bound (or only the two extreme ratings at one): the Gaussian worker model of
    # BiasPrecisionEM, up to the priors (a fixed Gamma prior and point precisions here, an
    # evidence-chosen prior and Gamma posteriors there) and the grid
    rng = np.random.default_rng(seed)
    truth = rng.normal(50, 20, 120)
    sds, biases = rng.choice([2.0, 5.0, 15.0], 8), rng.normal(0, 5, 8)
    X = truth[:, None] + biases + rng.normal(size=(120, 8)) * sds
    X[rng.random(X.shape) < 0.4] = np.nan
    gaussian = BiasPrecisionEM().fit(X).predict(X)
    for bounds in ((-np.inf, np.inf), None):
        model = CensoredRatingEM(bounds=bounds, scale=False).fit(X)
        assert np.corrcoef(model.predict(X), gaussian)[0, 1] > 0.995
        mae, reference = (np.abs(p - truth - np.mean(p - truth)).mean()
                          for p in (model.predict(X), gaussian))
        assert mae < 1.1 * reference
    assert np.all(model.censored_share_ <= 2 / np.sum(~np.isnan(X), axis=0))


def test_bounds_parameter():
    X, _, _, _ = floor_crowd(2, n_tasks=60, n_workers=5)
    X = np.minimum(X, 80.0)
    # the scale, not the observed extremes
    model = CensoredRatingEM(bounds=(0, 100), scale=False).fit(X)
    assert model.bounds_ == (0.0, 100.0)
    np.testing.assert_array_equal(model.censored_share_, np.sum(X == 0, 0) / np.sum(X >= 0, 0))
    assert np.all((model.predict(X) >= 0) & (model.predict(X) <= 100))
    floor_only = CensoredRatingEM(bounds=(0, np.inf), scale=False).fit(X)
    assert np.all(floor_only.censored_share_ == model.censored_share_)
    with pytest.raises(ValueError, match=r"X row \d+, worker 1 \(column 1\): rating -1.0 is "
                                         r"outside bounds \(0, 100\)"):
        bad = X.copy()
        bad[np.flatnonzero(~np.isnan(bad[:, 1]))[0], 1] = -1.0
        CensoredRatingEM(bounds=(0, 100)).fit(bad)
    with pytest.raises(ValueError, match="bounds must be a pair"):
        CensoredRatingEM(bounds=(5, 5)).fit(X)
    # bounds=None: a new rating beyond the fitted extremes counts as at the bound
    model = CensoredRatingEM(scale=False).fit(X)
    new = np.full((1, 5), np.nan)
    new[0, 2] = 0.0
    below = new.copy()
    below[0, 2] = -50.0
    np.testing.assert_allclose(model.predict(below), model.predict(new))


def test_convergence_warning_and_default_rating():
    X, _, _, _ = floor_crowd(3, n_tasks=50, n_workers=4)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        model = CensoredRatingEM(max_iter=2).fit(X)
    assert not model.converged_ and model.n_iter_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = CensoredRatingEM().fit(X)
    assert model.predict(np.full((1, 4), np.nan))[0] == model.default_rating_
    assert model.lower_bound_ == model.lower_bounds_[-1]


def test_auto_scale_chooses_slopes_by_held_out_ratings():
    # workers who use a compressed part of the scale: slopes; a floored crowd without: none
    rng = np.random.default_rng(0)
    truth = rng.normal(0, 1, 120)
    slopes = np.array([1.0, 1.0, 0.5, 2.0, 0.2, 1.0])
    X = truth[:, None] * slopes + rng.normal(size=(120, 6)) * 0.2
    model = CensoredRatingEM().fit(X)
    assert model.scale_ and model.held_out_log_likelihoods_[True] > \
        model.held_out_log_likelihoods_[False]
    np.testing.assert_allclose(model.slopes_ / model.slopes_[0], slopes, atol=0.15)
    X, _, _, _ = floor_crowd(0, n_tasks=100)
    model = CensoredRatingEM().fit(X)
    assert not model.scale_ and np.all(model.slopes_ == 1)
    assert not hasattr(CensoredRatingEM(scale=False).fit(X), "held_out_log_likelihoods_")
