"""Tests of skcrowd.metrics: calibration, soft accuracy, votes-aware scores and scorers."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import top_k_accuracy_score as sklearn_top_k
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.tree import DecisionTreeClassifier

from skcrowd.datasets import make_crowd_classification
from skcrowd.metrics import (
    annotation_log_likelihood_scorer,
    expected_calibration_error,
    imbalance_ratio,
    mv_accuracy_score,
    mv_accuracy_scorer,
    soft_accuracy_score,
    top_k_accuracy_score,
)

# ---------------------------------------------------------------------------
# expected_calibration_error
# ---------------------------------------------------------------------------


def test_ece_hand_computed_with_equal_width_bins():
    # confidences 0.9 (right), 0.9 (wrong), 0.6 (right), 0.7 (right); 5 bins:
    # (0.8, 1]: |1 - 1.8| = 0.8; (0.4, 0.6]: |1 - 0.6| = 0.4; (0.6, 0.8]: |1 - 0.7| = 0.3
    y_proba = [[0.9, 0.1], [0.9, 0.1], [0.4, 0.6], [0.3, 0.7]]
    assert expected_calibration_error([0, 1, 1, 1], y_proba, n_bins=5) == pytest.approx(1.5 / 4)
    # one bin: |3 - 3.1| / 4
    assert expected_calibration_error([0, 1, 1, 1], y_proba, n_bins=1) == pytest.approx(0.1 / 4)


def test_ece_bins_are_right_closed():
    # 0.6 lies in (0.4, 0.6], 0.7 in (0.6, 0.8]: separate bins give (0.4 + 0.7) / 2.
    y_proba = [[0.6, 0.4], [0.7, 0.3]]
    assert expected_calibration_error([0, 1], y_proba, n_bins=5) == pytest.approx(0.55)


def test_ece_zero_when_accuracy_equals_confidence():
    y_proba = np.tile([0.7, 0.2, 0.1], (10, 1))
    y_true = np.array([0] * 7 + [1, 2, 2])
    assert expected_calibration_error(y_true, y_proba) == pytest.approx(0.0, abs=1e-12)


def test_ece_extremes_of_one_hot_predictions():
    one_hot = np.eye(3)[[0, 1, 2, 1]]
    assert expected_calibration_error([0, 1, 2, 1], one_hot) == 0.0
    assert expected_calibration_error([1, 2, 0, 0], one_hot) == 1.0


def test_ece_labels_map_y_true_to_columns_even_when_classes_are_absent():
    y_proba = [[0.2, 0.8, 0.0], [0.1, 0.1, 0.8]]
    by_label = expected_calibration_error(["b", "c"], y_proba, labels=["a", "b", "c"])
    assert by_label == expected_calibration_error([1, 2], y_proba)
    # columns in an unsorted label order
    assert expected_calibration_error(["b", "a"], y_proba, labels=["c", "b", "a"]) == pytest.approx(
        expected_calibration_error([1, 2], y_proba)
    )


def test_ece_binary_1d_probabilities():
    p = np.array([0.9, 0.2, 0.55, 0.4])
    y = [1, 0, 0, 1]
    assert expected_calibration_error(y, p) == expected_calibration_error(
        y, np.column_stack([1 - p, p])
    )


@pytest.mark.parametrize(
    "y_true, y_proba, kwargs, match",
    [
        ([0, 3], [[0.5, 0.5], [0.5, 0.5]], {}, "label 3 at row 1"),
        (["a", "b"], [[0.5, 0.5], [0.5, 0.5]], {}, "pass labels="),
        (["a", "z"], [[0.5, 0.5], [0.5, 0.5]], {"labels": ["a", "b"]}, "'z' at row 1"),
        ([0, 1], [[0.5, 0.5], [0.5, 0.6]], {}, "row 1 of y_proba sums to"),
        ([0, 1], [[0.5, 0.5], [1.5, -0.5]], {}, "row 1, column 0"),
        ([0, 1], [[1.0, 0.0], [0.0, 1.0]], {"labels": ["a", "b", "c"]}, "3 entries"),
    ],
)
def test_ece_bad_input_names_the_problem(y_true, y_proba, kwargs, match):
    with pytest.raises(ValueError, match=match):
        expected_calibration_error(y_true, y_proba, **kwargs)


def test_ece_rejects_bad_n_bins():
    with pytest.raises(ValueError, match="n_bins"):
        expected_calibration_error([0], [[1.0, 0.0]], n_bins=0)


# ---------------------------------------------------------------------------
# soft_accuracy_score, top_k_accuracy_score
# ---------------------------------------------------------------------------


def test_soft_accuracy_is_mean_probability_of_the_gold_class():
    y_proba = [[0.8, 0.2, 0.0], [0.3, 0.3, 0.4], [0.0, 1.0, 0.0]]
    assert soft_accuracy_score([0, 2, 0], y_proba) == pytest.approx((0.8 + 0.4 + 0.0) / 3)
    assert soft_accuracy_score(["x", "z", "x"], y_proba, labels=["x", "y", "z"]) == pytest.approx(
        0.4
    )


def test_soft_accuracy_with_soft_gold_is_agreement_probability():
    gold = [[0.5, 0.5], [1.0, 0.0]]
    pred = [[0.2, 0.8], [0.6, 0.4]]
    assert soft_accuracy_score(gold, pred) == pytest.approx((0.5 * 0.2 + 0.5 * 0.8 + 0.6) / 2)
    with pytest.raises(ValueError, match="shape"):
        soft_accuracy_score([[1.0, 0.0, 0.0]], [[1.0, 0.0]])


def test_top_k_matches_scikit_learn_and_accepts_missing_classes():
    rng = np.random.RandomState(0)
    proba = rng.dirichlet(np.ones(4), size=50)
    y = rng.randint(0, 4, size=50)
    for k in (1, 2, 3):
        assert top_k_accuracy_score(y, proba, k=k) == sklearn_top_k(y, proba, k=k)
    # class 3 never appears in y_true: scikit-learn needs labels=, skcrowd does not
    y_missing = np.where(y == 3, 0, y)
    with pytest.raises(ValueError):
        sklearn_top_k(y_missing, proba, k=2)
    assert top_k_accuracy_score(y_missing, proba, k=2) == sklearn_top_k(
        y_missing, proba, k=2, labels=[0, 1, 2, 3]
    )


def test_top_1_of_binary_probabilities_is_argmax_accuracy():
    proba = np.array([[0.7, 0.3], [0.2, 0.8], [0.4, 0.6]])
    assert top_k_accuracy_score([0, 0, 1], proba, k=1) == pytest.approx(2 / 3)


# ---------------------------------------------------------------------------
# mv_accuracy_score
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "votes, y_pred, expected",
    [
        ([[0, 0, 1]], [0], 1.0),  # clear majority, right
        ([[0, 0, 1]], [1], 0.0),  # clear majority, wrong
        ([[0, 1, -1]], [0], 0.5),  # two-way tie
        ([[0, 1, 2]], [2], 1 / 3),  # three-way tie
        ([[0, 1, 2, 2]], [0], 0.0),  # outvoted
        ([[0, -1], [-1, -1], [1, 1]], [0, 1, 0], 0.5),  # task 1 has no vote: skipped
        ([[0, 0]], [5], 0.0),  # a label nobody voted is simply wrong
    ],
)
def test_mv_accuracy_tie_aware_cases(votes, y_pred, expected):
    assert mv_accuracy_score(np.array(votes), y_pred) == pytest.approx(expected)


def test_mv_accuracy_in_label_space_with_string_votes():
    votes = np.array([["cat", None, "dog"], ["dog", "dog", None]], dtype=object)
    assert mv_accuracy_score(votes, ["dog", "dog"], missing_label=None) == pytest.approx(0.75)


def test_mv_accuracy_sparse_votes_keep_explicit_zeros():
    votes = sp.csr_array(
        (np.array([0, 0, 1]), (np.array([0, 0, 1]), np.array([0, 1, 0]))), shape=(2, 2)
    )
    assert mv_accuracy_score(votes, [0, 0]) == pytest.approx(0.5)


def test_mv_accuracy_equals_expected_accuracy_of_randomly_broken_majority():
    rng = np.random.RandomState(1)
    votes = rng.randint(-1, 3, size=(60, 4))
    votes[5] = -1
    y_pred = rng.randint(0, 3, size=60)
    credits = []
    for row, pred in zip(votes, y_pred):
        observed = row[row >= 0]
        if len(observed) == 0:
            continue
        counts = np.bincount(observed, minlength=3)
        winners = np.flatnonzero(counts == counts.max())
        credits.append(np.mean(winners == pred))  # P(random tie-break picks pred)
    assert mv_accuracy_score(votes, y_pred) == pytest.approx(np.mean(credits))


def test_mv_accuracy_bad_input():
    votes = np.array([[0, 1], [1, 1]])
    with pytest.raises(ValueError, match="2 predictions but votes has 3 tasks"):
        mv_accuracy_score(np.vstack([votes, votes[:1]]), [0, 1])
    with pytest.raises(ValueError, match="label 7 at row 1"):
        mv_accuracy_score(votes, [0, 7], classes=[0, 1])
    with pytest.raises(ValueError, match="label 4 at row"):
        mv_accuracy_score(np.array([[4, 0]]), [0], classes=[0, 1])
    with pytest.raises(TypeError, match="different type"):
        mv_accuracy_score(votes, ["a", "b"])
    with pytest.raises(ValueError, match="non-integer label 0.5 at row 1"):
        mv_accuracy_score(votes, [0.0, 0.5])
    with pytest.raises(ValueError, match="no observed vote"):
        mv_accuracy_score(np.full((2, 2), -1), [0, 1])


# ---------------------------------------------------------------------------
# Scorers
# ---------------------------------------------------------------------------


class MVTreeClassifier(ClassifierMixin, BaseEstimator):
    """Test double of a feature model: a decision tree fitted on the majority vote."""

    def __init__(self, max_depth=None, missing_label=-1):
        self.max_depth = max_depth
        self.missing_label = missing_label

    def fit(self, X, votes):
        from skcrowd import check_votes

        v = check_votes(votes, missing_label=self.missing_label)
        target = v.classes[v.counts().argmax(axis=1)]
        self.tree_ = DecisionTreeClassifier(max_depth=self.max_depth, random_state=0).fit(
            X, target
        )
        self.classes_ = self.tree_.classes_
        return self

    def predict(self, X):
        return self.tree_.predict(X)


def test_mv_accuracy_scorer_selects_the_better_model_in_grid_search():
    crowd = make_crowd_classification(
        400, n_classes=4, n_features=6, class_sep=2.0, n_workers=8, accuracy=0.8,
        votes_per_task=5, random_state=0,
    )
    cv = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        MVTreeClassifier(), {"max_depth": [1, 6]}, scoring=mv_accuracy_scorer, cv=cv
    ).fit(crowd.data, crowd.votes)
    # a depth-1 tree predicts at most 2 of the 4 classes
    assert search.best_params_ == {"max_depth": 6}
    scores = search.cv_results_["mean_test_score"]
    assert scores[0] < 0.6 < scores[1]
    # the scorer is exactly mv_accuracy_score on each held-out fold
    fold_scores = cross_val_score(
        MVTreeClassifier(max_depth=6), crowd.data, crowd.votes, scoring=mv_accuracy_scorer, cv=cv
    )
    for score, (train, test) in zip(fold_scores, cv.split(crowd.data)):
        model = MVTreeClassifier(max_depth=6).fit(crowd.data[train], crowd.votes[train])
        expected = mv_accuracy_score(crowd.votes[test], model.predict(crowd.data[test]))
        assert score == pytest.approx(expected)


def test_mv_accuracy_scorer_uses_the_estimators_missing_label():
    X = np.arange(4.0)[:, None]
    votes = np.array([["a", None], ["a", "b"], [None, "b"], ["b", None]], dtype=object)
    clf = MVTreeClassifier(missing_label=None).fit(X, votes)
    expected = mv_accuracy_score(votes, clf.predict(X), missing_label=None)
    assert mv_accuracy_scorer(clf, X, votes) == pytest.approx(expected)


def test_mv_accuracy_scorer_for_aggregators_takes_the_votes_from_x():
    class ConstantAggregator:
        def predict(self, votes):
            return np.zeros(len(votes), dtype=int)

    votes = np.array([[0, 0], [1, 1], [0, 1]])
    assert mv_accuracy_scorer(ConstantAggregator(), votes) == pytest.approx(1.5 / 3)


class NoiseModelStub(BaseEstimator):
    """Records what reaches annotation_log_likelihood; returns the mean vote."""

    def fit(self, X, votes=None):
        return self

    def annotation_log_likelihood(self, X, votes=None):
        self.seen_ = (np.asarray(X), votes)
        return -float(np.mean(X))


def test_annotation_log_likelihood_scorer_calls_the_models_method():
    X, votes = np.array([[1.0], [3.0]]), np.array([[0], [1]])
    model = NoiseModelStub()
    assert annotation_log_likelihood_scorer(model, X, votes) == -2.0
    assert model.seen_[1] is votes
    # aggregators: the votes are X and y is None
    annotation_log_likelihood_scorer(model, votes)
    assert model.seen_[1] is None


def test_annotation_log_likelihood_scorer_transforms_x_through_a_pipeline():
    pipe = make_pipeline(FunctionTransformer(lambda X: 10 * X), NoiseModelStub())
    pipe.fit(np.ones((2, 1)), None)
    assert annotation_log_likelihood_scorer(pipe, np.array([[1.0], [3.0]]), [[0], [1]]) == -20.0


def test_annotation_log_likelihood_scorer_names_an_estimator_without_the_method():
    clf = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(TypeError, match="LogisticRegression has no annotation_log_likelihood"):
        annotation_log_likelihood_scorer(clf, [[0.0]], [[0]])


# ---------------------------------------------------------------------------
# imbalance_ratio
# ---------------------------------------------------------------------------


def test_imbalance_ratio_hand_computed():
    assert imbalance_ratio(class_counts=[50, 30, 20]) == pytest.approx(0.3)
    assert imbalance_ratio(class_counts=[5, 5, 5]) == 0.0
    assert imbalance_ratio(class_counts=[10, 0]) == 1.0
    # LabelMe gold class counts
    counts = [89, 116, 131, 110, 138, 134, 128, 154]
    assert imbalance_ratio(class_counts=counts) == pytest.approx(65 / 1000)


def test_imbalance_ratio_of_votes_and_labels():
    votes = np.array([[0, 0, -1], [0, 1, 1], [2, -1, -1]])  # 3, 2, 1 votes
    assert imbalance_ratio(votes) == pytest.approx(2 / 6)
    assert imbalance_ratio(votes, n_classes=4) == pytest.approx(3 / 6)
    assert imbalance_ratio(np.array(["a", "a", "b", "a"])) == pytest.approx(0.5)
    assert imbalance_ratio(["a", "a"], classes=["a", "b"]) == 1.0


def test_imbalance_ratio_bad_input():
    with pytest.raises(ValueError, match="exactly one"):
        imbalance_ratio()
    with pytest.raises(ValueError, match="exactly one"):
        imbalance_ratio([0, 1], class_counts=[1, 1])
    with pytest.raises(ValueError, match="negative count -1.0 for class 1"):
        imbalance_ratio(class_counts=[3, -1])
    with pytest.raises(ValueError, match="sums to 0"):
        imbalance_ratio(class_counts=[0, 0])


def test_scores_stay_finite_on_extreme_votes():
    # 1000 votes on one task, one vote on another, a task without votes
    votes = np.full((3, 1000), -1)
    votes[0] = np.r_[np.zeros(600, int), np.ones(400, int)]
    votes[1, 7] = 1
    assert mv_accuracy_score(votes, [0, 1, 0]) == 1.0
    assert imbalance_ratio(votes) == pytest.approx((600 - 401) / 1001)
    proba = np.array([[1 - 1e-300, 1e-300], [0.5, 0.5], [0.0, 1.0]])
    for score in (expected_calibration_error, soft_accuracy_score):
        assert np.isfinite(score([0, 1, 1], proba))
    assert top_k_accuracy_score([0, 1, 1], proba, k=1) == pytest.approx(2 / 3)
