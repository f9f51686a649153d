"""OrdinalDawidSkene: Dawid-Skene with a latent-score prior on the confusion rows (issue 27)."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from skcrowd.aggregation import DawidSkene, MajorityVote, OrdinalDawidSkene
from skcrowd.aggregation._ordinal import confusions


def simulate(seed, n_tasks=600, n_workers=60, K=5, per_task=5):
    """Ordinal crowd: true grades, workers with a bias and a noise on the grade scale."""
    rng = np.random.default_rng(seed)
    weights = np.linspace(3.0, 1.0, K)  # the low grades are the common ones
    truth = rng.choice(K, size=n_tasks, p=weights / weights.sum())
    bias = rng.normal(0, 0.5, n_workers)
    noise = np.exp(rng.normal(np.log(0.7), 0.5, n_workers))
    votes = np.full((n_tasks, n_workers), -1)
    for i in range(n_tasks):
        who = rng.choice(n_workers, per_task, replace=False)
        score = truth[i] + bias[who] + rng.normal(size=per_task) * noise[who]
        votes[i, who] = np.clip(np.rint(score), 0, K - 1)
    return votes, truth, bias, noise


def median_grade(votes):
    ratings = np.where(votes >= 0, votes, np.nan).astype(float)
    return np.floor(np.nanmedian(ratings, axis=1) + 0.5).astype(int)


def test_latent_score_confusions_by_hand():
    # grade k sits at k, cut points at 0.5, 1.5: a worker of bias 0.2 and noise 0.5 gives
    # grade 0 to a task of grade 1 with probability P(1 + 0.2 + 0.5 e < 0.5) = Phi(-1.4)
    conf = confusions(np.array([0.2]), np.log([0.5]), np.arange(3.0), lapse=0.0)[0]
    assert conf[1, 0] == pytest.approx(norm.cdf(-1.4))
    assert conf[1, 1] == pytest.approx(norm.cdf(0.6) - norm.cdf(-1.4))
    assert conf[0, 2] == pytest.approx(1 - norm.cdf((1.5 - 0.2) / 0.5))
    np.testing.assert_allclose(conf.sum(axis=1), 1.0)
    lapsed = confusions(np.array([0.2]), np.log([0.5]), np.arange(3.0), lapse=0.3)[0]
    np.testing.assert_allclose(lapsed, 0.7 * conf + 0.1)


@pytest.mark.parametrize("seed", range(3))
def test_recovers_simulated_grades_better_than_nominal_ds_and_the_median(seed):
    votes, truth, bias, noise = simulate(seed)
    model = OrdinalDawidSkene().fit(votes)
    assert model.converged_ and np.all(np.diff(model.lower_bounds_) >= -1e-10)
    labels = model.predict(votes)
    accuracy, mae = np.mean(labels == truth), np.mean(np.abs(labels - truth))
    for other in (DawidSkene().fit_predict(votes), median_grade(votes),
                  MajorityVote(random_state=0).fit_predict(votes)):
        assert accuracy > np.mean(other == truth) + 0.02
        assert mae < np.mean(np.abs(other - truth))
    assert np.corrcoef(model.biases_, bias)[0, 1] > 0.8
    assert np.corrcoef(np.log(model.noise_), np.log(noise))[0, 1] > 0.6


def test_latent_model_alone_and_fitted_positions():
    votes, truth, bias, _ = simulate(0)
    pure = OrdinalDawidSkene(prior_strength=np.inf).fit(votes)
    np.testing.assert_allclose(pure.confusion_matrices_, pure.latent_confusions_)
    assert np.mean(pure.predict(votes) == truth) > 0.85
    assert np.all(np.diff(pure.lower_bounds_) >= -1e-10)
    fitted = OrdinalDawidSkene(fit_positions=True).fit(votes)
    assert fitted.positions_[0] == 0 and np.all(np.diff(fitted.positions_) > 0.5)


def test_median_decision_and_new_tasks():
    votes, truth, _, _ = simulate(1, n_tasks=800)
    model = OrdinalDawidSkene(decision="median").fit(votes[:600])
    proba = model.predict_proba(votes[600:])
    cumulative = np.cumsum(proba, axis=1)
    np.testing.assert_array_equal(model.predict(votes[600:]),
                                  np.argmax(cumulative >= 0.5 - 1e-12, axis=1))
    assert np.mean(np.abs(model.predict(votes[600:]) - truth[600:])) < 0.25
    empty = np.full((1, votes.shape[1]), -1)
    np.testing.assert_allclose(model.predict_proba(empty)[0], model.class_priors_)


def test_pandas_labels_and_pickle():
    votes, _, _, _ = simulate(2, n_tasks=200, n_workers=10, K=3, per_task=4)
    grades = np.array(["low", "mid", "high"], dtype=object)
    frame = pd.DataFrame(np.where(votes >= 0, grades[np.maximum(votes, 0)], None),
                         index=[f"t{i}" for i in range(len(votes))],
                         columns=[f"w{j}" for j in range(votes.shape[1])])
    model = OrdinalDawidSkene(grades=grades, missing_label=None).fit(frame)
    assert model.classes_.tolist() == grades.tolist()
    assert model.feature_names_in_.tolist() == frame.columns.tolist()
    labels = model.predict(frame)
    assert isinstance(labels, pd.Series) and labels.index.equals(frame.index)
    again = pickle.loads(pickle.dumps(clone(model).fit(frame)))
    pd.testing.assert_series_equal(again.predict(frame), labels)


def test_convergence_warning_and_bad_input():
    votes, _, _, _ = simulate(0, n_tasks=100)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        OrdinalDawidSkene(max_iter=1, tol=0.0).fit(votes)
    with pytest.raises(ValueError, match="n_classes"):
        OrdinalDawidSkene(n_classes=3).fit(votes)  # grades 0-4 declared as 0-2
    with pytest.raises(ValueError, match="prior_strength"):
        OrdinalDawidSkene(prior_strength=0.0).fit(votes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = OrdinalDawidSkene(max_iter=2).fit(votes)
    with pytest.raises(ValueError):
        model.predict(votes[:, :5])  # other workers


NAMES = np.array(["poor", "fair", "good", "very good", "excellent"], dtype=object)


def test_grade_names_in_the_given_order_fit_as_the_integer_coding():
    votes, truth, _, _ = simulate(0)
    named = np.where(votes >= 0, NAMES[np.maximum(votes, 0)], None)
    coded = OrdinalDawidSkene().fit(votes)
    model = OrdinalDawidSkene(grades=list(NAMES), missing_label=None).fit(named)
    assert model.classes_.tolist() == NAMES.tolist()
    np.testing.assert_array_equal(model.predict(named), NAMES[coded.predict(votes)])
    np.testing.assert_allclose(model.predict_proba(named), coded.predict_proba(votes))
    np.testing.assert_allclose(model.lower_bounds_, coded.lower_bounds_)
    np.testing.assert_allclose(model.biases_, coded.biases_)
    assert model.score(named) == pytest.approx(coded.score(votes))
    # numeric grades in another order than the numeric one: the order given is the order used
    reversed_ = OrdinalDawidSkene(grades=[4, 3, 2, 1, 0]).fit(votes)
    np.testing.assert_array_equal(reversed_.predict(votes), coded.predict(votes))
    np.testing.assert_allclose(reversed_.biases_, -coded.biases_, atol=1e-6)


def test_grade_names_without_an_order_raise_and_unknown_grades_are_named():
    votes, _, _, _ = simulate(0, n_tasks=50)
    named = np.where(votes >= 0, NAMES[np.maximum(votes, 0)], None)
    with pytest.raises(ValueError, match=r"not numbers .*grades=\[\.\.\.\]"):
        OrdinalDawidSkene(missing_label=None).fit(named)
    with pytest.raises(ValueError, match="'good'.*not one of the known classes"):
        OrdinalDawidSkene(grades=["poor", "fair"], missing_label=None).fit(named)
    with pytest.raises(ValueError, match="distinct"):
        OrdinalDawidSkene(grades=["poor", "poor"], missing_label=None).fit(named)
    with pytest.raises(ValueError, match="not both"):
        OrdinalDawidSkene(grades=list(NAMES), n_classes=5, missing_label=None).fit(named)


def test_spaced_numeric_grades_are_adjacent_steps():
    # grades 0, 2, 4, 6, 8 are the five steps of 0, 1, 2, 3, 4 (documented), in numeric order
    votes, _, _, _ = simulate(1, n_tasks=200)
    spaced = np.where(votes >= 0, 2 * votes, -1)
    coded = OrdinalDawidSkene().fit(votes)
    model = OrdinalDawidSkene().fit(spaced)
    assert model.classes_.tolist() == [0, 2, 4, 6, 8]
    np.testing.assert_array_equal(model.predict(spaced), 2 * coded.predict(votes))
    np.testing.assert_allclose(model.biases_, coded.biases_)


def test_score_is_the_mean_held_out_log_likelihood():
    votes, _, _, _ = simulate(2, n_tasks=400)
    model = OrdinalDawidSkene().fit(votes[:300])
    held_out = votes[300:]
    joint = np.log(model.class_priors_) + np.array([
        [sum(np.log(model.confusion_matrices_[j, k, held_out[i, j]])
             for j in np.flatnonzero(held_out[i] >= 0)) for k in range(5)]
        for i in range(len(held_out))])
    expected = np.log(np.exp(joint).sum(axis=1))
    np.testing.assert_allclose(model.score_samples(held_out), expected)
    assert model.score(held_out) == pytest.approx(expected.mean())
    frame = pd.DataFrame(held_out, index=[f"t{i}" for i in range(100)])
    assert model.score_samples(frame).index.tolist() == frame.index.tolist()
    # the fitted model scores held-out tasks better than a model with the latent prior alone
    # fitted to fewer tasks would be a weaker claim; here: better than uniform confusions
    assert model.score(held_out) > np.mean(np.sum(held_out >= 0, axis=1) * np.log(1 / 5))
