"""Continuous-rating aggregators: MeanRating, MedianRating, BiasPrecisionEM, CATD (issue 27),
CensoredRatingEM (issue 37; its own tests in test_censored.py)."""

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline

from skcrowd.aggregation import (CATD, BiasPrecisionEM, CensoredRatingEM, MeanRating, MedianRating,
                                 check_ratings)
from skcrowd.utils.estimator_checks import parametrize_with_checks

ALL = [MeanRating, MedianRating, BiasPrecisionEM, CATD, CensoredRatingEM]


# fit ignoring y (expected failures of every rating aggregator) is listed, with its reason, in
# skcrowd.utils.estimator_checks, whose parametrize_with_checks adds the domain checks
# CensoredRatingEM on a coarse grid: the checks' ratings are independent columns, whose truths
# EM pins down slowly (267 iterations at the default grid)
@parametrize_with_checks([cls() for cls in ALL[:-1]] + [CensoredRatingEM(n_grid=32)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def simulate(seed, n_tasks=300, n_workers=12, p_missing=0.5, sds=None, biases=None):
    """Truths N(50, 20), workers with a bias and a noise sd, half the ratings missing."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(50, 20, n_tasks)
    sds = rng.choice([2.0, 5.0, 30.0], n_workers) if sds is None else np.asarray(sds)
    biases = rng.normal(0, 5, n_workers) if biases is None else np.asarray(biases)
    X = truth[:, None] + biases + rng.normal(size=(n_tasks, n_workers)) * sds
    X[rng.random(X.shape) < p_missing] = np.nan
    return X, truth, sds, biases


# ---------------------------------------------------------------------------
# hand-computed small cases
# ---------------------------------------------------------------------------


def test_mean_and_median_by_hand():
    X = np.array([[1.0, 2.0, 6.0], [np.nan, 4.0, np.nan], [np.nan, np.nan, np.nan]])
    mean = MeanRating().fit(X)
    assert mean.default_rating_ == pytest.approx(13 / 4)
    np.testing.assert_allclose(mean.predict(X), [3.0, 4.0, 13 / 4])
    median = MedianRating().fit(X)
    np.testing.assert_allclose(median.predict(X), [2.0, 4.0, 3.0])  # median of 1, 2, 4, 6


def test_missing_value_marker_and_dataframe():
    X = pd.DataFrame({"ann": [1.0, -1.0], "bob": [3.0, 5.0]}, index=["t1", "t2"])
    model = MeanRating(missing_value=-1).fit(X)
    pd.testing.assert_series_equal(model.predict(X), pd.Series([2.0, 5.0], index=X.index))
    assert model.feature_names_in_.tolist() == ["ann", "bob"]


@pytest.mark.parametrize("cls", ALL)
def test_a_dataframe_gives_series_indexed_like_it(cls):
    """As the class aggregators: per-task outputs of a DataFrame are Series with its index; the
    worker attributes follow the columns (``feature_names_in_``)."""
    ratings, _, _, _ = simulate(6, n_tasks=60, n_workers=5)
    X = pd.DataFrame(ratings, index=[f"task{i}" for i in range(60)],
                     columns=[f"w{j}" for j in range(5)])
    model = cls().fit(X)
    expected = cls().fit(ratings).predict(ratings)
    for out in (model.predict(X), cls().fit_predict(X)):
        assert isinstance(out, pd.Series) and out.index.equals(X.index)
        np.testing.assert_allclose(out.to_numpy(), expected)
    assert isinstance(expected, np.ndarray)
    assert model.feature_names_in_.tolist() == X.columns.tolist()
    assert model.score(X, expected) == pytest.approx(1.0)
    if cls is BiasPrecisionEM:
        mean, std = model.predict(X, return_std=True)
        assert std.index.equals(X.index) and model.score_samples(X).index.equals(X.index)


@pytest.mark.parametrize("cls", ALL)
def test_sparse_ratings_are_the_stored_entries(cls):
    """A scipy.sparse ratings matrix fits and predicts as the dense matrix with NaN where no
    entry is stored: an explicitly stored 0 is a rating of 0, a stored NaN no rating."""
    rng = np.random.default_rng(0)
    dense = np.where(rng.random((40, 6)) < 0.5, rng.normal(5.0, 1.0, (40, 6)), np.nan)
    dense[0, 0], dense[1, 2] = 0.0, np.nan
    rows, cols = np.nonzero(~np.isnan(dense))
    values = np.append(dense[rows, cols], np.nan)  # and a stored NaN at (1, 2)
    stored = sp.coo_array((values, (np.append(rows, 1), np.append(cols, 2))), shape=dense.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        expected = cls().fit(dense).predict(dense)
        for X in (stored, stored.tocsr(), sp.csc_matrix(stored)):
            np.testing.assert_array_equal(cls().fit(X).predict(X), expected)
    assert MeanRating().fit(stored).predict(stored)[0] == np.nanmean(dense[0])  # the 0 counts
    duplicate = sp.coo_array(([1.0, 2.0], ([0, 0], [1, 1])), shape=(2, 2))
    with pytest.raises(ValueError, match=r"stores two ratings at row \(task\) 0, column "
                                         r"\(worker\) 1"):
        cls().fit(duplicate)


def test_bias_precision_em_by_hand():
    # one task rated by two workers with fixed precisions 1 and 3, no biases, prior N(0, 1):
    # posterior precision 1 + 1 + 3 = 5, mean (1 * 2 + 3 * 4) / 5 = 2.8
    from skcrowd.aggregation._continuous import _task_posterior

    params = (np.zeros(2), np.ones(2), np.array([1.0, 3.0]), 0.0, 1.0)
    mean, var, log_lik = _task_posterior(np.array([0, 0]), np.array([0, 1]),
                                         np.array([2.0, 4.0]), 1, params)
    assert mean[0] == pytest.approx(2.8) and var[0] == pytest.approx(0.2)
    # the marginal of (y1, y2) is N(0, [[1 + 1, 1], [1, 1 + 1/3]])
    from scipy.stats import multivariate_normal

    cov = np.array([[2.0, 1.0], [1.0, 4 / 3]])
    assert log_lik[0] == pytest.approx(multivariate_normal(np.zeros(2), cov).logpdf([2.0, 4.0]))


def test_catd_weights_by_hand():
    # three workers on four tasks; one iteration from the medians [1, 1, 3, 2]: squared
    # residuals 2, 2 and 9 over n = 4 ratings each, pooled 13 / 12 per rating
    X = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 4.0], [4.0, 2.0, 3.0], [2.0, 2.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        published = CATD(prior_ratings=0, max_iter=1).fit(X)
        model = CATD(max_iter=1).fit(X)  # 3 pseudo-ratings: chi2.ppf(0.025, 4 + 3) for all
    expected = 1 / np.array([2.0, 2.0, 9.0])  # chi2.ppf(0.025, 4) / S_j, normalized
    np.testing.assert_allclose(published.weights_, expected / expected.sum())
    expected = 1 / (np.array([2.0, 2.0, 9.0]) + 3 * 13 / 12)
    np.testing.assert_allclose(model.weights_, expected / expected.sum())
    np.testing.assert_allclose(model.predict(X), X @ model.weights_)


def test_catd_cannot_collapse_onto_one_worker():
    # a dense crowd of 5 workers, 3 ratings per task: the published rule ends with one worker's
    # weight 1e13 times another's; with the pseudo-ratings no worker weighs more than the
    # (n_j + 3) / 3 typical workers it can, and the aggregate beats the mean
    for seed in range(3):
        rng = np.random.default_rng(seed)
        truth = rng.uniform(0, 10, 300)
        sds = np.array([0.5, 1.0, 1.0, 2.0, 5.0])
        X = np.full((300, 5), np.nan)
        for i in range(300):
            who = rng.choice(5, 3, replace=False)
            X[i, who] = truth[i] + rng.normal(size=3) * sds[who]
        model = CATD().fit(X)
        assert model.converged_ and model.weights_.sum() == pytest.approx(1.0)
        assert model.weights_.max() / np.sort(model.weights_)[-2] < 10
        assert np.argmax(model.weights_) == 0 and np.argmin(model.weights_) == 4
        single = np.mean([np.mean(np.isclose(model.predict(X), X[:, j])) for j in range(5)])
        assert single < 0.05  # no task's truth is one worker's rating
        mae = np.abs(model.predict(X) - truth).mean()
        assert mae < 0.7 * np.abs(np.nanmean(X, axis=1) - truth).mean()
        loo = CATD(leave_one_out=True).fit(X)
        assert np.abs(loo.predict(X) - truth).mean() < np.abs(np.nanmean(X, 1) - truth).mean()


# ---------------------------------------------------------------------------
# recovery of simulated truth
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_em_recovers_workers_and_beats_the_mean(seed):
    X, truth, sds, biases = simulate(seed)
    model = BiasPrecisionEM().fit(X)
    assert model.converged_
    assert np.all(np.diff(model.lower_bounds_) >= -1e-10)
    assert model.lower_bound_ == model.lower_bounds_[-1]
    # biases up to the shared shift the crowd cannot see (the careless workers' biases have a
    # standard error of about 30 / sqrt(150): compared on the others)
    careful = sds < 30
    assert np.corrcoef(model.biases_[careful], biases[careful])[0, 1] > 0.95
    assert np.corrcoef(np.log(model.precisions_), -np.log(sds))[0, 1] > 0.85
    mae = np.abs(model.predict(X) - truth).mean()
    mean = np.abs(MeanRating().fit_predict(X) - truth).mean()
    assert mae < 0.6 * mean
    for other in (CATD(), CATD(leave_one_out=True), CATD(prior_ratings=0),
                  BiasPrecisionEM(bias=False),
                  BiasPrecisionEM(scale=True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            assert np.abs(other.fit(X).predict(X) - truth).mean() < mean


@pytest.mark.parametrize("seed", range(3))
def test_scale_model_recovers_slopes(seed):
    rng = np.random.default_rng(seed)
    truth = rng.normal(0, 1, 400)
    slopes = np.array([1.0, 1.0, 0.5, 2.0, 0.05, 1.0])
    X = truth[:, None] * slopes + rng.normal(size=(400, 6)) * 0.2
    model = BiasPrecisionEM(scale=True).fit(X)
    ratio = model.slopes_ / model.slopes_[0]
    np.testing.assert_allclose(ratio, slopes, atol=0.1)
    assert np.corrcoef(model.predict(X), truth)[0, 1] > 0.99


def test_prior_pulls_sparse_workers_to_the_crowd():
    # worker 0 rates one task, in agreement: without a prior its precision is huge
    X, truth, _, _ = simulate(0, n_workers=8, p_missing=0.0, sds=[5.0] * 8, biases=[0] * 8)
    X = np.column_stack([np.full(len(X), np.nan), X])
    X[0, 0] = np.nanmean(X[0, 1:])
    auto = BiasPrecisionEM().fit(X)
    weak = BiasPrecisionEM(precision_prior=1e-3).fit(X)
    assert auto.converged_ and auto.precision_prior_strength_ > 100  # the workers are alike
    assert auto.precisions_[0] < 3 * np.median(auto.precisions_[1:])
    assert weak.precisions_[0] > 100 * np.median(weak.precisions_[1:])


def test_predict_on_new_tasks_uses_the_fitted_workers():
    X, truth, _, _ = simulate(1, n_tasks=400)
    model = BiasPrecisionEM().fit(X[:300])
    # errors up to their common shift (the crowd's mean bias, which no model can see)
    err = model.predict(X[300:]) - truth[300:]
    mean = MeanRating().fit(X[:300]).predict(X[300:]) - truth[300:]
    assert np.abs(err - err.mean()).mean() < 0.7 * np.abs(mean - mean.mean()).mean()
    empty = np.full((1, X.shape[1]), np.nan)
    prediction, std = model.predict(empty, return_std=True)
    assert prediction[0] == model.prior_mean_
    assert std[0] == pytest.approx(np.sqrt(model.prior_variance_))
    assert model.score_samples(empty)[0] == pytest.approx(0.0)


def test_convergence_warning():
    X, _, _, _ = simulate(2)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        model = BiasPrecisionEM(max_iter=1).fit(X)
    assert not model.converged_ and model.n_iter_ == 1


def test_score_is_r2_against_gold_and_grid_search():
    X, truth, _, _ = simulate(3)
    model = BiasPrecisionEM().fit(X)
    assert model.score(X, truth) > 0.9
    search = GridSearchCV(make_pipeline(BiasPrecisionEM()),
                          {"biasprecisionem__bias": [False, True]},
                          cv=KFold(3, shuffle=True, random_state=0)).fit(X, truth)
    assert search.best_params_ == {"biasprecisionem__bias": True}


@pytest.mark.parametrize("cls", ALL)
def test_deterministic_and_pickle(cls):
    X, _, _, _ = simulate(4)
    first = cls().fit(X)
    again = pickle.loads(pickle.dumps(clone(cls()).fit(X)))
    np.testing.assert_array_equal(first.predict(X), again.predict(X))
    order = np.random.default_rng(0).permutation(len(X))
    np.testing.assert_allclose(first.predict(X)[order], cls().fit(X[order]).predict(X[order]),
                               rtol=1e-7, atol=1e-7)


# ---------------------------------------------------------------------------
# affine changes of the ratings
# ---------------------------------------------------------------------------

AFFINE = [(1e-200, 0.0), (1e200, 0.0), (1e154, 0.0), (1e-300, 0.0), (1.0, 1e12), (-3.0, 7.0),
          (1e-200, 1e-190), (1e100, 1e112)]
VARIANTS = [MeanRating(), MedianRating(), BiasPrecisionEM(), BiasPrecisionEM(bias=False),
            BiasPrecisionEM(scale=True), CATD(), CATD(leave_one_out=True), CensoredRatingEM(),
            CensoredRatingEM(target="truth", n_grid=32)]


@pytest.mark.parametrize("estimator", VARIANTS, ids=repr)
def test_predictions_follow_an_affine_change_of_the_ratings(estimator):
    """``a * X + b`` in, ``a * predict(X) + b`` out, from ratings of 1e-300 to 1e200 and offsets
    of 1e12 times the ratings' spread: no warning, no overflow, the bound still non-decreasing.
    Tolerance: 1e-9 of the predictions' spread, plus 16 units in the last place of the offset
    (the ratings ``a * X + b`` themselves are rounded to about one)."""
    X, _, _, _ = simulate(5)
    reference = clone(estimator).fit(X)
    expected = reference.predict(X)
    spread = np.std(expected)
    for a, b in AFFINE:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = clone(estimator).fit(a * X + b)
            got = (model.predict(a * X + b) - b) / a
        atol = 1e-9 * spread + 16 * np.finfo(float).eps * abs(b / a)
        np.testing.assert_allclose(got, expected, rtol=0, atol=atol, err_msg=f"a={a}, b={b}")
        if hasattr(model, "lower_bounds_"):
            assert np.all(np.diff(model.lower_bounds_) >= -1e-10 * np.abs(model.lower_bounds_[1:]))
            assert model.converged_ and model.n_iter_ == reference.n_iter_
        if hasattr(model, "converged_"):
            assert model.converged_
    # the fitted workers in the ratings' units
    model = clone(estimator).fit(2 * X + 5)
    if isinstance(estimator, BiasPrecisionEM):
        np.testing.assert_allclose(model.precisions_, reference.precisions_ / 4)
        np.testing.assert_allclose(model.biases_, 2 * reference.biases_
                                   + 5 * (1 - reference.slopes_), atol=1e-9)
        np.testing.assert_allclose(model.score_samples(2 * X + 5),
                                   reference.score_samples(X) - np.log(2) * np.sum(~np.isnan(X), 1))
    if isinstance(estimator, CATD):
        np.testing.assert_allclose(model.weights_, reference.weights_)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL)
def test_bad_input_messages_name_argument_row_and_worker(cls):
    X = pd.DataFrame({"ann": [1.0, 2.0], "bob": ["3", "high"]})
    with pytest.raises(ValueError, match=r"X row 1, worker 'bob' \(column 1\): 'high' is not a "
                                         "number"):
        cls().fit(X)
    with pytest.raises(ValueError, match=r"X row 0, worker 2 \(column 2\): rating 11.0 is "
                                         r"outside rating_range \(0, 10\)"):
        cls(rating_range=(0, 10)).fit(np.array([[1.0, 2.0, 11.0]]))
    with pytest.raises(ValueError, match="X holds no rating"):
        cls().fit(np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match="not finite"):
        cls().fit(np.array([[1.0, np.inf]]))
    with pytest.raises(ValueError, match="rating_range must be a pair"):
        cls(rating_range=(3, 1)).fit(np.ones((2, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # identical ratings: no noise
        model = cls().fit(np.ones((2, 3)))
    with pytest.raises(ValueError, match="3 features"):
        model.predict(np.ones((2, 2)))


@pytest.mark.parametrize("cls", ALL)
def test_a_long_table_is_refused_with_the_pivot_that_converts_it(cls):
    long = pd.DataFrame({"task": ["a", "b", "a"], "worker": ["u", "u", "v"],
                         "rating": [0.5, 0.7, 0.4]})
    with pytest.raises(ValueError, match="long-format ratings") as info:
        cls().fit(long)
    (code,) = re.findall(r"`([^`]+)`", str(info.value))
    assert code == "X = X.pivot(index='task', columns='worker', values='rating')"
    scope = {"X": long}
    exec(code, scope)
    np.testing.assert_allclose(MeanRating().fit(scope["X"]).predict(scope["X"]), [0.45, 0.7])


def test_check_ratings_rejects_non_2d():
    with pytest.raises(ValueError, match="2-D ratings matrix"):
        check_ratings([1.0, 2.0])
    with pytest.raises(TypeError, match="row 0, worker 0"):
        check_ratings(np.array([[{"a": 1}]], dtype=object))
