"""ConsensusClassifier (classifier-aided consensus) and select_next_votes."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import spearmanr
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.dummy import DummyClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcrowd import ConsensusClassifier, DawidSkene, MajorityVote, select_next_votes
from skcrowd.consensus import (_PROBA_FLOOR, _expected_accuracy_gain, _fit_prior_weight,
                               _joint_em, _log_prior)
from skcrowd.datasets import make_crowd_classification
from skcrowd.metrics import mv_accuracy_score
from skcrowd.utils.estimator_checks import parametrize_with_checks
from skcrowd.votes import check_votes


@pytest.fixture(scope="module")
def crowd():
    """A sparse crowd (1-3 votes per task) on features that separate the classes."""
    return make_crowd_classification(600, n_features=6, n_classes=3, class_sep=1.5,
                                     n_workers=20, accuracy=(0.35, 0.9), votes_per_task=(1, 3),
                                     random_state=0)


# -- the worker model, by hand ---------------------------------------------------------------


def test_one_em_iteration_by_hand():
    """Uniform classifier: the posterior is the product of the confusion rows of the votes."""
    votes = np.array([[0, 0], [1, 0], [1, 1]])
    resp = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])  # vote frequencies
    log_proba = np.log(np.full((3, 2), 0.5))
    model = DawidSkene(smoothing=1.0, max_iter=1, tol=0.0, warm_start=True)
    out, weight, bounds, _ = _joint_em(model, votes, np.ones(3, bool), log_proba, resp, 1.0,
                                       max_iter=1, tol=0.0)
    # worker 0: class 0 row counts (1 + 1.5, 0.5 + 0.5) -> (2.5, 1)/3.5;
    #           class 1 row counts (0 + 0.5, 0.5 + 1 + 1.5) -> (0.5, 3)/3.5
    # worker 1: class 0 row (1 + 0.5 + 1.5, 0 + 0.5) -> (3, 0.5)/3.5;
    #           class 1 row (0.5 + 0.5, 1 + 1.5) -> (1, 2.5)/3.5
    w0 = np.array([[2.5, 1.0], [0.5, 3.0]]) / 3.5
    w1 = np.array([[3.0, 0.5], [1.0, 2.5]]) / 3.5
    np.testing.assert_allclose(model.confusion_matrices_, [w0, w1])
    task1 = np.array([w0[0, 1] * w1[0, 0], w0[1, 1] * w1[1, 0]])  # votes (1, 0)
    np.testing.assert_allclose(out[1], task1 / task1.sum())
    assert weight == 1.0  # a uniform classifier leaves the weight where it was
    assert np.isfinite(bounds).all() and len(bounds) == 1


def test_joint_em_objective_never_decreases(crowd):
    log_proba = np.log(np.clip(np.eye(3)[crowd.target] * 0.6 + 0.4 / 3, 1e-6, 1))
    resp = np.full((600, 3), 1 / 3)
    _, weight, bounds, converged = _joint_em(
        DawidSkene(warm_start=True), crowd.votes, np.ones(600, bool), log_proba, resp, 1.0,
        max_iter=300, tol=1e-7)
    assert converged and np.all(np.diff(bounds) >= -1e-9)
    assert weight > 1.0  # a classifier right on every task is worth more than its 0.6


def test_prior_weight_recovers_the_temperature_of_the_posteriors():
    rng = np.random.RandomState(0)
    log_proba = np.log(rng.dirichlet(np.ones(3), size=500))
    resp = np.exp(_log_prior(log_proba, 2.5))  # posteriors equal to a prior of weight 2.5
    assert _fit_prior_weight(resp, log_proba, 1.0) == pytest.approx(2.5, rel=1e-6)
    # a uniform classifier carries no information: the weight stays where it was
    assert _fit_prior_weight(resp, np.log(np.full((500, 3), 1 / 3)), 0.7) == 0.7


def test_expected_accuracy_gain_by_hand():
    pi = np.array([[[0.8, 0.2], [0.2, 0.8]]])  # one worker, accuracy 0.8
    proba = np.array([[0.5, 0.5], [0.9, 0.1], [0.7, 0.3]])
    gain = _expected_accuracy_gain(proba, pi, np.array([3.0]))
    # (0.5, 0.5): the vote decides, right with probability 0.8
    # (0.9, 0.1): no vote can overturn class 0 (0.18 > 0.08): no gain
    # (0.7, 0.3): vote 0 -> 0.56; vote 1 -> max(0.14, 0.24) = 0.24; 0.80 - 0.70
    np.testing.assert_allclose(gain, [0.3, 0.0, 0.1], atol=1e-12)
    # two workers, weighted by their numbers of votes: 3/4 of a perfect one, 1/4 of a spammer
    two = np.array([np.eye(2), np.full((2, 2), 0.5)])
    np.testing.assert_allclose(_expected_accuracy_gain(proba[:1], two, np.array([3.0, 1.0])),
                               [0.75 * 0.5])


# -- the fitted estimator ----------------------------------------------------------------------


def test_consensus_beats_the_votes_alone_and_ranks_annotators(crowd):
    X, votes, truth = crowd.data, crowd.votes, crowd.target
    clf = ConsensusClassifier(random_state=0).fit(X, votes)
    mv = np.mean(MajorityVote(random_state=0).fit(votes).predict(votes) == truth)
    ds = np.mean(DawidSkene().fit(votes).predict(votes) == truth)
    ours = np.mean(clf.consensus_labels_ == truth)
    assert ours > max(mv, ds) + 0.05, (ours, mv, ds)
    accuracy = np.einsum("jkk,k->j", crowd.confusions, np.bincount(truth) / len(truth))
    assert spearmanr(clf.annotator_quality_, accuracy)[0] > 0.8
    assert np.mean(clf.predict(X) == truth) > 0.8  # the refitted classifier
    np.testing.assert_allclose(clf.consensus_proba_.sum(axis=1), 1.0)
    np.testing.assert_allclose(clf.confusion_matrices_.sum(axis=2), 1.0)
    assert np.all(np.diff(clf.lower_bounds_) >= -1e-10)  # EM never decreases its objective
    assert clf.converged_ and clf.n_iter_ == len(clf.lower_bounds_)
    np.testing.assert_array_equal(clf.consensus_quality_, clf.consensus_proba_.max(axis=1))


def test_vote_quality_is_the_posterior_of_each_vote(crowd):
    X, votes = crowd.data, crowd.votes
    clf = ConsensusClassifier(random_state=0).fit(X, votes)
    quality = clf.vote_quality_
    assert sp.issparse(quality) and quality.shape == votes.shape
    rows, cols = np.nonzero(votes >= 0)
    assert quality.nnz == len(rows)  # every vote is stored, label 0 included
    expected = clf.consensus_proba_[rows, votes[rows, cols]]
    np.testing.assert_allclose(quality[rows, cols], expected)
    # votes that disagree with the consensus are the low-quality ones
    agree = votes[rows, cols] == clf.consensus_labels_[rows]
    assert quality[rows, cols][~agree].mean() < 0.3 < quality[rows, cols][agree].mean()


class _FoldRecorder(ClassifierMixin, BaseEstimator):
    """Fails if asked to predict a task it was trained on (the feature is the task index)."""

    def fit(self, X, y):
        self.seen_ = set(np.asarray(X)[:, 0].tolist())
        self.classes_ = np.unique(y)
        self.inner_ = LogisticRegression().fit(X, y)
        return self

    def predict_proba(self, X):
        leaked = self.seen_ & set(np.asarray(X)[:, 0].tolist())
        assert not leaked, f"predicting tasks {sorted(leaked)[:5]} it was trained on"
        return self.inner_.predict_proba(X)


def test_out_of_fold_probabilities_never_see_their_own_fold():
    rng = np.random.RandomState(0)
    votes = rng.randint(0, 2, size=(40, 3))
    X = np.arange(40.0)[:, None]
    halves = [(np.arange(20, 40), np.arange(20)), (np.arange(20), np.arange(20, 40))]
    for cv in (5, KFold(4), halves):
        clf = ConsensusClassifier(_FoldRecorder(), cv=cv, n_rounds=3, random_state=0)
        clf.fit(X, votes)  # _FoldRecorder raises on a leak
        assert clf.estimator_.seen_ == set(range(40))  # the final refit sees every voted task


def test_fit_is_deterministic_with_a_seed(crowd):
    X, votes = crowd.data, crowd.votes
    a = ConsensusClassifier(random_state=3).fit(X, votes)
    b = clone(a).fit(X, votes)
    np.testing.assert_array_equal(a.consensus_proba_, b.consensus_proba_)
    np.testing.assert_array_equal(a.next_vote_scores_, b.next_vote_scores_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(c.predict_proba(X), a.predict_proba(X))


def test_tasks_without_votes_get_the_classifiers_tempered_prior(crowd):
    X, votes = crowd.data, crowd.votes.copy()
    votes[:50] = -1
    clf = ConsensusClassifier(random_state=0).fit(X, votes)
    K = len(clf.classes_)
    prior = _log_prior(np.log((1 - _PROBA_FLOOR) * clf.oof_proba_ + _PROBA_FLOOR / K),
                       clf.prior_weight_)
    np.testing.assert_allclose(clf.consensus_proba_[:50], np.exp(prior[:50]))
    assert clf.estimator_[-1].n_features_in_ == X.shape[1]
    assert len(clf.estimator_[0].mean_) == X.shape[1]
    assert clf.estimator_[0].n_samples_seen_ == 550  # refitted on the voted tasks only


def test_bad_input_is_reported(crowd):
    X, votes = crowd.data, crowd.votes
    clf = ConsensusClassifier()
    with pytest.raises(ValueError, match="X has 599 samples but the votes y have 600 tasks"):
        clf.fit(X[:-1], votes)
    with pytest.raises(ValueError, match="y contains no observed vote"):
        clf.fit(X, np.full_like(votes, -1))
    with pytest.raises(ValueError, match="requires y to be passed"):
        clf.fit(X, None)
    bad = votes.astype(float)
    bad[4, 2] = 0.5
    with pytest.raises(ValueError, match=r"non-integer float label 0.5 at row \(task\) 4"):
        clf.fit(X, bad)
    with pytest.raises(ValueError, match="n_rounds"):
        ConsensusClassifier(n_rounds=0).fit(X, votes)


@pytest.mark.parametrize("case", ["one task", "one vote", "one class", "one worker per vote",
                                  "many votes per task"])
def test_degenerate_input_gives_finite_results(case):
    rng = np.random.RandomState(0)
    if case == "one task":
        X, votes = np.ones((1, 2)), np.array([[1, 0, -1]])
    elif case == "one vote":
        X, votes = rng.normal(size=(6, 2)), np.full((6, 2), -1)
        votes[2, 1] = 1
    elif case == "one class":
        X, votes = rng.normal(size=(12, 2)), np.zeros((12, 3), dtype=int)
    elif case == "one worker per vote":
        X, votes = rng.normal(size=(10, 2)), np.full((10, 10), -1)
        votes[np.arange(10), np.arange(10)] = rng.randint(0, 3, size=10)
    else:
        X, votes = rng.normal(size=(8, 2)), rng.randint(0, 2, size=(8, 1000))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf = ConsensusClassifier(random_state=0, n_classes=3).fit(X, votes)
    for name in ("consensus_proba_", "consensus_quality_", "annotator_quality_",
                 "confusion_matrices_", "next_vote_scores_", "oof_proba_"):
        assert np.isfinite(getattr(clf, name)).all(), name
    assert np.isfinite(clf.lower_bounds_).all() and np.isfinite(clf.prior_weight_)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_string_labels_and_missing_none():
    X = np.array([[-2.0], [-1.9], [-1.8], [1.8], [1.9], [2.0]])
    votes = np.array([["cat", "cat", None], ["cat", None, "dog"], [None, "cat", "cat"],
                      ["dog", "dog", None], ["dog", None, "dog"], [None, "cat", "dog"]],
                     dtype=object)
    clf = ConsensusClassifier(LogisticRegression(), cv=3, missing_label=None, random_state=0)
    clf.fit(X, votes)
    assert clf.classes_.tolist() == ["cat", "dog"]
    assert clf.consensus_labels_[:5].tolist() == ["cat", "cat", "cat", "dog", "dog"]
    assert clf.predict([[-2.0], [2.0]]).tolist() == ["cat", "dog"]
    assert clf.score(X, votes) == mv_accuracy_score(votes, clf.predict(X), missing_label=None)


def test_pipeline_and_grid_search(crowd):
    X, votes = crowd.data * 1000.0, crowd.votes  # features far from unit scale
    pipe = make_pipeline(StandardScaler(),
                         ConsensusClassifier(LogisticRegression(), random_state=0))
    # the score is agreement with the majority vote, which the truth itself reaches 0.69
    assert pipe.fit(X, votes).score(X, votes) > 0.6
    assert np.mean(pipe.predict(X) == crowd.target) > 0.9
    grid = GridSearchCV(ConsensusClassifier(LogisticRegression(), random_state=0),
                        {"estimator__C": [1e-6, 1.0]}, cv=KFold(3, shuffle=True, random_state=0))
    grid.fit(crowd.data, votes)
    assert grid.best_params_ == {"estimator__C": 1.0}  # C=1e-6 predicts one class
    default = ConsensusClassifier(random_state=0).fit(X, votes)  # scale-free default
    assert np.mean(default.consensus_labels_ == crowd.target) > 0.8


def test_convergence_warning(crowd):
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        ConsensusClassifier(max_iter=1, random_state=0).fit(crowd.data, crowd.votes)


def test_select_next_votes_scores_labelled_and_unlabelled_tasks_on_one_scale(crowd):
    X, truth = crowd.data, crowd.target
    votes = np.full_like(crowd.votes, -1)
    votes[:300] = crowd.votes[:300]  # half the tasks have votes
    model = ConsensusClassifier(random_state=0)
    tasks, scores = select_next_votes(X, votes, 30, consensus=model)
    fitted = clone(model).fit(X, votes)
    np.testing.assert_array_equal(scores, fitted.next_vote_scores_[tasks])
    assert np.all(np.diff(scores) <= 0) and len(set(tasks.tolist())) == 30
    assert scores[-1] >= np.sort(fitted.next_vote_scores_)[-30]  # the top 30
    chosen_unlabelled = tasks >= 300
    assert 0 < chosen_unlabelled.sum() < 30  # both kinds compete
    # the chosen tasks are less certain than the average task, beyond what 30 tasks drawn at
    # random would show (twice the standard error of their mean). The gap depends on how
    # uncertain the crowd is: chosen / all / twice the standard error on seeds 0, 1, 2, 1000,
    # 2000, 3000: .594/.960/.036, .925/.996/.013, .561/.942/.042, .688/.977/.027,
    # .959/.998/.008, .578/.947/.039 (the former fixed margin 0.1 failed on seeds 1 and 2000)
    quality = fitted.consensus_quality_
    assert quality[tasks].mean() < quality.mean() - 2 * quality.std() / np.sqrt(30)
    # a vote on the chosen tasks is worth more than on random ones: simulate it
    assert np.mean(fitted.consensus_labels_[tasks] == truth[tasks]) < np.mean(
        fitted.consensus_labels_ == truth)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        select_next_votes(X, votes, 0)
    with pytest.raises(ValueError, match="larger than the number of tasks"):
        select_next_votes(X, votes, 601, consensus=model)
    with pytest.raises(TypeError, match="must be a ConsensusClassifier"):
        select_next_votes(X, votes, 3, consensus=DawidSkene())


def test_default_estimator_handles_sparse_features(crowd):
    X = sp.csr_array(np.abs(crowd.data))
    clf = ConsensusClassifier(random_state=0).fit(X, crowd.votes)
    assert type(clf.estimator_[-1]).__name__ == "LogisticRegression"
    assert clf.predict(X).shape == (600,)


def test_a_dummy_classifier_gives_dawid_skene_without_class_priors():
    """With an uninformative classifier the consensus is the votes' worker model alone."""
    rng = np.random.RandomState(0)
    votes = rng.randint(0, 3, size=(30, 4))
    clf = ConsensusClassifier(DummyClassifier(strategy="uniform"), n_rounds=1, tol=0,
                              max_iter=500, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(np.zeros((30, 1)), votes)
    uniform = np.full((30, 3), 1 / 3)
    ds = DawidSkene(smoothing=3.0, tol=0, max_iter=500).fit(votes, task_prior=uniform)
    resp = ds.predict_proba(votes, task_prior=uniform)
    np.testing.assert_allclose(clf.consensus_proba_, resp, atol=1e-6)


# -- scikit-learn contract ----------------------------------------------------------------

# the classifier checks that fail on every feature model are listed, with their reasons, in
# skcrowd.utils.estimator_checks, whose parametrize_with_checks adds the failed-fit check
@parametrize_with_checks(
    [ConsensusClassifier(random_state=0),
     ConsensusClassifier(LogisticRegression(), n_rounds=1, random_state=0)],
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# -- property-based: generated votes (tests/votes_strategies.py) -------------------------------
# ConsensusClassifier takes features X and the votes as y, so it cannot join the aggregators'
# EXTRA_ESTIMATORS (votes as X); the same properties are checked here on its consensus.


def _property_test(function):
    hypothesis = pytest.importorskip("hypothesis")
    pytest.importorskip("pandas")
    from votes_strategies import votes_cases

    return hypothesis.given(case=votes_cases(), seed=hypothesis.strategies.integers(0, 3))(
        function)


@_property_test
def test_generated_votes_give_a_sound_consensus_or_a_clear_error(case, seed):
    X = np.random.RandomState(seed).normal(size=(case.shape[0], 2))
    model = ConsensusClassifier(n_rounds=1, random_state=0, missing_label=case.missing_label)
    if not case.mask.any():
        with pytest.raises((ValueError, TypeError), match="y"):
            model.fit(X, case.build())
        return
    classes = check_votes(case.build(), missing_label=case.missing_label).classes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, case.build())
    np.testing.assert_array_equal(model.classes_, classes)
    proba = model.consensus_proba_
    assert proba.shape == (case.shape[0], len(classes)) and np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-10)
    assert np.isin(model.consensus_labels_, classes).all()
    assert model.vote_quality_.nnz == case.mask.sum()
    for attr in ("annotator_quality_", "next_vote_scores_", "consensus_quality_"):
        value = getattr(model, attr)
        assert np.all(np.isfinite(value)) and np.all((value >= 0) & (value <= 1 + 1e-12)), attr
    # permuting the workers permutes the annotator qualities and leaves the consensus
    cols = np.random.RandomState(seed).permutation(case.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        permuted = clone(model).fit(X, case.build(np.arange(case.shape[0]), cols))
    np.testing.assert_allclose(permuted.consensus_proba_, proba, atol=1e-6)
    np.testing.assert_allclose(permuted.annotator_quality_, model.annotator_quality_[cols],
                               atol=1e-6)


def test_as_many_tasks_as_classes_gives_the_class_frequencies_as_classifier():
    """Found by the property test: the default's discriminant analysis needs more tasks than
    classes; with two tasks of two classes the classifiers are the class frequencies."""
    clf = ConsensusClassifier(random_state=0).fit(np.array([[0.0], [1.0]]), [[0], [1]])
    assert isinstance(clf.estimator_, DummyClassifier)
    np.testing.assert_allclose(clf.predict_proba([[5.0]]), [[0.5, 0.5]])
    np.testing.assert_array_equal(clf.consensus_labels_, [0, 1])
