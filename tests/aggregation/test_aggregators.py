"""Behaviour shared by the aggregators: inputs, outputs, bad input, persistence."""

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from skcrowd.aggregation import GLAD, DawidSkene, MajorityVote, WeightedDawidSkene
from skcrowd.aggregation import MACE, OneCoinDawidSkene
from skcrowd.aggregation import MMSR, Wawa, ZeroBasedSkill
from skcrowd.aggregation import EBCC, BayesianDawidSkene

ALL = [MajorityVote(random_state=0), DawidSkene(), WeightedDawidSkene(), GLAD()]
ALL += [OneCoinDawidSkene(), MACE()]
ALL += [Wawa(), ZeroBasedSkill(), MMSR(random_state=0)]  # weighted votes (KOS: binary only)
EM = [DawidSkene(), WeightedDawidSkene(), GLAD(), OneCoinDawidSkene(), MACE()]
VB = [BayesianDawidSkene(), EBCC(random_state=0)]  # variational Bayes on the same driver
ALL += VB
EM += VB
ids = type


@pytest.fixture
def votes(make_votes):
    return make_votes(0, 60, 8, accuracy=0.75, empty_task=7)


# -- outputs ----------------------------------------------------------------------


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_outputs_are_consistent(model, votes):
    model = clone(model).fit(votes)
    proba = model.predict_proba(votes)
    assert proba.shape == (60, 3)
    assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.transform(votes), proba)
    np.testing.assert_array_equal(clone(model).fit_predict(votes), model.predict(votes))
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    assert model.n_features_in_ == 8
    # a task without votes gets the class priors (EBCC: exp(E[log tau]) summed over the
    # subtypes, the variational posterior, within 1e-3 of the posterior mean class_priors_)
    np.testing.assert_allclose(proba[7], model.class_priors_,
                               **({"atol": 1e-3} if isinstance(model, EBCC) else {}))
    names = model.get_feature_names_out()
    assert names.tolist() == [f"{type(model).__name__.lower()}_{k}" for k in range(3)]


@pytest.mark.parametrize("model", EM, ids=ids)
def test_score_is_the_mean_per_task_log_likelihood(model, votes):
    model = clone(model).fit(votes)
    per_task = model.score_samples(votes)
    assert per_task.shape == (60,) and np.all(per_task <= 1e-12)
    assert per_task[7] == pytest.approx(0.0, abs=1e-12)  # no votes: log p = log 1
    assert model.score(votes) == pytest.approx(per_task.mean())


def test_majority_vote_has_no_likelihood(votes):
    assert not hasattr(MajorityVote(), "score")
    assert not hasattr(MajorityVote(), "score_samples")


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_predicts_new_tasks_with_the_fitted_workers(model, votes):
    model = clone(model).fit(votes[:40])
    new = votes[40:]
    proba = model.predict_proba(new)
    assert proba.shape == (20, 3)
    # each task is predicted on its own: a subset gives the same rows
    # (MajorityVote's random ties aside: compare soft labels)
    np.testing.assert_allclose(model.predict_proba(new[5:9]), proba[5:9], rtol=1e-12)


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_soft_labels_feed_a_pipeline_and_pandas_output(model, votes):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    frame = clone(model).set_output(transform="pandas").fit_transform(votes)
    assert list(frame.columns) == [f"{type(model).__name__.lower()}_{k}" for k in range(3)]
    np.testing.assert_allclose(frame.to_numpy(), clone(model).fit(votes).predict_proba(votes))
    # soft labels as features of a downstream model; its target reaches the aggregator too,
    # as known labels (fit's y): here the majority vote
    target = MajorityVote(random_state=0).fit_predict(votes)
    pipe = make_pipeline(clone(model), LogisticRegression()).fit(votes, target)
    assert pipe.predict(votes).shape == (60,)


# -- label encodings and input formats ---------------------------------------------


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_string_labels_and_sparse_integers_give_the_same_model(model, votes):
    names = np.array(["ant", "bee", "cat"], dtype=object)
    as_strings = np.where(votes >= 0, names[np.maximum(votes, 0)], None)
    labels_s = clone(model).set_params(missing_label=None).fit_predict(as_strings)
    labels_i = clone(model).fit_predict(votes)
    np.testing.assert_array_equal(labels_s, names[labels_i])


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_large_integer_labels_are_three_classes(model):
    votes = np.array([[0, 7, 10**9], [7, 7, -1], [10**9, 10**9, 0]])
    fitted = clone(model).fit(votes)
    np.testing.assert_array_equal(fitted.classes_, [0, 7, 10**9])
    assert fitted.predict_proba(votes).shape == (3, 3)
    assert fitted.predict(votes)[1] == 7
    if hasattr(fitted, "confusion_matrices_"):
        assert fitted.confusion_matrices_.shape == (3, 3, 3)


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_input_formats_agree(model, votes):
    reference = clone(model).fit(votes).predict_proba(votes)
    observed = votes >= 0
    rows, cols = np.nonzero(observed)
    # sparse: stored entries are votes, explicit zeros included (label 0); coo kept as coo
    coo = sp.coo_array((votes[rows, cols], (rows, cols)), shape=votes.shape)
    assert (coo.data == 0).any()
    masked = np.ma.masked_array(np.where(observed, votes, 0), mask=~observed)
    nan = np.where(observed, votes, np.nan)
    frame = pd.DataFrame(votes, columns=[f"w{j}" for j in range(8)])
    for X, params in [(coo, {}), (coo.tocsr(), {}), (masked, {}), (frame, {}),
                      (nan, {"missing_label": np.nan})]:
        fitted = clone(model).set_params(**params).fit(X)
        np.testing.assert_allclose(fitted.predict_proba(X), reference, rtol=1e-10,
                                   err_msg=type(X).__name__)
    assert list(clone(model).fit(frame).feature_names_in_) == [f"w{j}" for j in range(8)]


def test_n_classes_adds_classes_nobody_voted(votes):
    for model in ALL:
        fitted = clone(model).set_params(n_classes=5).fit(votes)
        proba = fitted.predict_proba(votes)
        assert proba.shape == (60, 5) and np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert fitted.class_priors_.shape == (5,)


# -- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_bad_input_raises_naming_argument_position_and_label(model, votes):
    fitted = clone(model).fit(votes)
    bad = votes.copy()
    bad[3, 2] = 5
    with pytest.raises(ValueError, match=r"X has label 5 at row \(task\) 3, column \(worker\) 2"):
        fitted.predict(bad)
    with pytest.raises(ValueError, match=r"label 9 .*row \(task\) 0.*n_classes=3"):
        clone(model).set_params(n_classes=3).fit(np.array([[9, 0], [1, 2]]))
    with pytest.raises(ValueError, match=r"NaN at row \(task\) 1, column \(worker\) 0"):
        clone(model).fit(np.array([[0.0, 1.0], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match=r"non-integer float label 1.5 at row \(task\) 0"):
        clone(model).fit(np.array([[1.5, 1.0], [0.0, 1.0]]))
    with pytest.raises(TypeError, match=r"mixes label types: 'a' \(str\).*row \(task\) 0"):
        clone(model).fit(np.array([["a", 1], [1, "a"]], dtype=object))
    with pytest.raises(ValueError, match="Expected 2D array, got 1D"):
        clone(model).fit(np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="Found array with dim 3"):
        clone(model).fit(np.zeros((2, 2, 2), dtype=int))
    with pytest.raises(ValueError, match="0 sample"):
        clone(model).fit(np.empty((0, 3), dtype=int))
    with pytest.raises(ValueError, match="X contains no observed vote"):
        clone(model).fit(np.full((3, 2), -1))
    if "warm_start" in model.get_params():
        warm = clone(model).set_params(warm_start=True).fit(votes)
        with pytest.raises(ValueError, match="X contains no observed vote"):
            warm.fit(np.full((3, 8), -1))
    with pytest.raises(ValueError, match="X has 7 features, but .* is expecting 8 features"):
        fitted.predict_proba(votes[:, :7])
    with pytest.raises(ValueError, match="stores two votes at row \\(task\\) 0"):
        clone(model).fit(sp.coo_array(([0, 1], ([0, 0], [1, 1])), shape=(2, 2)))
    with pytest.raises(NotFittedError):
        clone(model).predict(votes)


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_invalid_parameters_are_rejected_at_fit(model, votes):
    with pytest.raises(ValueError, match=re.escape("'n_classes' parameter")):
        clone(model).set_params(n_classes=0).fit(votes)
    if "max_iter" in model.get_params():
        with pytest.raises(ValueError, match="'max_iter' parameter"):
            clone(model).set_params(max_iter=0).fit(votes)
    if "init" in model.get_params():
        with pytest.raises(ValueError, match="'init' parameter"):
            clone(model).set_params(init="kmeans").fit(votes)


def test_worker_without_votes_at_fit_gets_the_prior_model(votes):
    votes = votes.copy()
    votes[:, 3] = -1
    ds = DawidSkene(smoothing=2.0).fit(votes)
    K = 3
    prior = 2.0 * (np.eye(K) + 1 / K)  # pseudo-counts; MAP of an empty row = its mode
    np.testing.assert_allclose(ds.confusion_matrices_[3], prior / prior.sum(axis=1, keepdims=True))
    glad = GLAD().fit(votes)
    # the prior mean (to within the 1 % of a scale at which a data-chosen prior settles)
    assert glad.abilities_[3] == pytest.approx(glad.ability_prior_[0],
                                               abs=0.01 * glad.ability_prior_[1])
    # its later votes then count as those of a better-than-random worker
    new = np.full((1, 8), -1)
    new[0, 3] = 2
    for model in (ds, glad):
        assert model.predict(new)[0] == 2


# -- extreme data --------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # GLAD: slow here
@pytest.mark.parametrize("model", ALL, ids=ids)
def test_no_nan_on_extreme_data(model):
    rng = np.random.default_rng(5)
    n_workers = 1100
    votes = np.full((6, n_workers), -1)
    votes[:3, :1000] = rng.integers(2, size=(3, 1000))  # 1000 votes per task, split ones
    votes[0, :1000] = 0  # and a unanimous one
    votes[3, 1000:1010] = 1  # workers with one vote each
    votes[4, 1010] = 3  # a class voted once
    # task 5 has no votes; class 2 nobody votes (n_classes=4)
    fitted = clone(model).set_params(n_classes=4).fit(votes)
    proba = fitted.predict_proba(votes)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert fitted.predict(votes)[0] == 0
    for name in ("lower_bounds_", "confusion_matrices_", "abilities_", "difficulties_",
                 "skills_", "reliabilities_", "accuracies_", "weights_"):
        if hasattr(fitted, name):
            assert np.all(np.isfinite(getattr(fitted, name))), name
    if hasattr(fitted, "score_samples"):
        assert np.all(np.isfinite(fitted.score_samples(votes)))


# -- persistence and randomness ---------------------------------------------------------


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_pickle_round_trip(model, votes):
    fitted = clone(model).fit(votes)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict_proba(votes), fitted.predict_proba(votes))
    np.testing.assert_array_equal(restored.predict(votes), fitted.predict(votes))


@pytest.mark.parametrize("model", ALL, ids=ids)
def test_predicts_with_read_only_fitted_attributes(model, votes):
    from sklearn.utils._testing import create_memmap_backed_data

    fitted = clone(model).fit(votes)
    restored = create_memmap_backed_data(fitted)  # arrays become read-only memmaps
    np.testing.assert_allclose(restored.predict_proba(votes), fitted.predict_proba(votes),
                               rtol=1e-12)
    if "warm_start" in model.get_params():
        restored.set_params(warm_start=True)
        assert restored.fit(votes).n_iter_ <= 2  # resumes at the fitted optimum


@pytest.mark.parametrize("model", [DawidSkene(init="random", n_init=2, max_iter=10),
                                   GLAD(init="random", n_init=2, max_iter=10),
                                   BayesianDawidSkene(init="random", n_init=2, max_iter=10),
                                   EBCC(n_init=2, max_iter=10)], ids=ids)
def test_random_state_makes_random_init_deterministic(model, votes):
    with warnings.catch_warnings():  # max_iter=10 may stop before convergence
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = clone(model).set_params(random_state=3).fit(votes)
        b = clone(model).set_params(random_state=3).fit(votes)
        c = clone(model).set_params(random_state=4).fit(votes)
    np.testing.assert_array_equal(a.lower_bounds_, b.lower_bounds_)
    assert a.lower_bounds_ != c.lower_bounds_


def test_majority_vote_ties_by_hand():
    votes = np.array([[0, 1, -1],   # tie 0/1
                      [2, 2, 1],    # clear 2
                      [0, 1, 2]])   # three-way tie
    mv = MajorityVote().fit(votes)
    np.testing.assert_allclose(mv.predict_proba(votes),
                               [[0.5, 0.5, 0], [0, 1 / 3, 2 / 3], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(mv.class_priors_, [2 / 8, 3 / 8, 3 / 8])
    picks = np.array([MajorityVote(random_state=s).fit(votes).predict(votes) for s in range(200)])
    assert set(picks[:, 0]) == {0, 1}  # only tied classes, both reachable
    assert set(picks[:, 1]) == {2}
    assert set(picks[:, 2]) == {0, 1, 2}
    assert 0.35 < np.mean(picks[:, 0] == 0) < 0.65  # a fair coin
    # an int seed gives the same labels on every call
    mv = MajorityVote(random_state=7).fit(votes)
    np.testing.assert_array_equal(mv.predict(votes), mv.predict(votes))
    # no votes: the most frequent class of the fit, ties (1 and 2) at random
    assert MajorityVote(random_state=0).fit(votes).predict(np.full((1, 3), -1))[0] in (1, 2)


def test_nullable_integer_labels_above_two_to_the_53_are_read_exactly():
    # scikit-learn's validate_data turns a DataFrame of nullable integers with a missing entry
    # into floats; the votes are encoded from the DataFrame itself (found by the property tests)
    big = 2**63 - 512  # an int64 that float64 rounds to 2**63
    X = pd.DataFrame({"a": [big, 0, big], "b": [big, pd.NA, 0]}, dtype="Int64")
    model = MajorityVote(missing_label=None).fit(X)
    np.testing.assert_array_equal(model.classes_, [0, big])
    assert model.predict(X)[0] == big  # both votes of task 0
