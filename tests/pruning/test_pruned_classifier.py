"""PrunedClassifier: prune at fit, predict every row; Pipeline and GridSearchCV."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pruning_stubs import FixedConfusion, ProbaFeatures, ShapeRecorder, noisy_blobs
from skcrowd.pruning import PrunedClassifier, WAUMPruner
from skcrowd.utils.estimator_checks import (check_fit_error_leaves_estimator,
                                            parametrize_with_checks)


@pytest.fixture(autouse=True)
def reset_counters():
    ProbaFeatures.calls = 0
    ProbaFeatures.seen_rows = []


def test_fits_on_kept_rows_and_predicts_every_row():
    X, votes, _ = noisy_blobs(n=40, n_flipped=4)
    model = PrunedClassifier(
        ShapeRecorder(),
        pruner=WAUMPruner(0.1, aggregator=FixedConfusion(), n_epochs=10, random_state=0),
    ).fit(X, votes)
    kept = model.pruner_.support_
    assert kept.sum() == 36
    np.testing.assert_array_equal(model.estimator_.X_fit_, X[kept])
    np.testing.assert_array_equal(model.estimator_.y_fit_, votes[kept])
    assert model.predict(X).shape == (40,)
    np.testing.assert_array_equal(model.classes_, [0, 1])
    # delegation follows the estimator: ShapeRecorder has no predict_proba
    assert not hasattr(model, "predict_proba")
    assert hasattr(PrunedClassifier(LogisticRegression()), "predict_proba")


def test_unfitted_model_raises_not_fitted():
    model = PrunedClassifier(LogisticRegression())
    with pytest.raises(NotFittedError):
        model.classes_
    with pytest.raises(NotFittedError):
        model.predict(np.zeros((2, 2)))


def test_default_pruner_is_a_waum_pruner():
    X, votes, _ = noisy_blobs(n=20, n_flipped=0)
    votes[0, 0] = 1 - votes[0, 0]
    model = PrunedClassifier(ShapeRecorder())
    assert model.pruner is None
    model.fit(X, votes)
    assert isinstance(model.pruner_, WAUMPruner) and model.pruner_.alpha == 0.01
    assert model.pruner_.aggregator_.__class__.__name__ == "DawidSkene"
    assert (~model.pruner_.support_).sum() == 0  # floor(0.01 * 20)


def test_pruning_label_noise_helps_a_noise_sensitive_classifier():
    # 1-nearest-neighbour copies every wrong label; the AUM (one label per task) finds them
    X, _, truth = noisy_blobs(n=200, n_flipped=0, seed=1)
    rng = np.random.RandomState(1)
    y = truth.copy()
    flipped = rng.choice(200, 20, replace=False)
    y[flipped] = 1 - y[flipped]
    X_test, _, truth_test = noisy_blobs(n=400, n_flipped=0, seed=2)
    plain = KNeighborsClassifier(1).fit(X, y)
    pruned = PrunedClassifier(
        KNeighborsClassifier(1),
        pruner=WAUMPruner(0.1, method="aumc", n_epochs=20, random_state=0),
    ).fit(X, y)
    assert set(np.flatnonzero(~pruned.pruner_.support_)) == set(flipped)
    assert pruned.score(X_test, truth_test) == 1.0
    assert plain.score(X_test, truth_test) < 0.95


def test_works_inside_a_pipeline():
    X, votes, truth = noisy_blobs(n=60, n_flipped=6)
    pipe = make_pipeline(
        StandardScaler(),
        PrunedClassifier(
            LogisticRegression(),
            pruner=WAUMPruner(0.1, method="aumc", n_epochs=20, random_state=0),
        ),
    )
    pipe.fit(X * 100.0, votes[:, 1])  # worker 1's labels, 6 of them wrong
    assert pipe.score(X * 100.0, truth) == 1.0
    assert pipe.predict_proba(X * 100.0).shape == (60, 2)


def test_grid_over_alpha_trains_the_margin_model_once_per_fold(tmp_path):
    X, votes, _ = noisy_blobs(n=60, n_flipped=6)
    X = np.abs(X) / np.abs(X).sum(axis=1, keepdims=True)  # rows usable as probabilities
    n_epochs, n_splits = 3, 3
    model = PrunedClassifier(
        LogisticRegression(),
        pruner=WAUMPruner(
            margin_estimator=ProbaFeatures(),
            aggregator=FixedConfusion(),
            n_epochs=n_epochs,
            memory=str(tmp_path),
        ),
    )
    grid = GridSearchCV(
        model,
        {"pruner__alpha": [0.0, 0.05, 0.1]},
        cv=KFold(n_splits, shuffle=True, random_state=0),
    ).fit(X, votes[:, 1])
    # one margin training per fold and one for the refit, not one per (alpha, fold)
    assert ProbaFeatures.calls == (n_splits + 1) * n_epochs
    assert grid.best_estimator_.predict(X).shape == (60,)


@parametrize_with_checks(
    [
        PrunedClassifier(
            LogisticRegression(),
            pruner=WAUMPruner(
                0.1,
                method="aumc",
                n_epochs=2,
                margin_estimator=MLPClassifier(hidden_layer_sizes=(4,)),
                random_state=0,
            ),
        )
    ],
    # the classifier checks that fail on every feature model come, with their reasons, from
    # skcrowd.utils.estimator_checks; these fail by a ValueError of the models inside
    expected_failed_checks=lambda est: {
        "check_classifiers_classes": (ValueError, (
            "-1 marks a missing vote: the check's labels {-1, 1} leave one class, and the "
            "pruner's margins need two, which it says with a ValueError"
        )),
        "check_classifier_multioutput": (ValueError, (
            "a 2-D y is a votes matrix; the LogisticRegression inside takes one label per task "
            "and refuses it with a ValueError"
        )),
        "check_fit_error_leaves_estimator": (ValueError, (
            "the check's valid fit passes a votes matrix as y, which LogisticRegression (one "
            "label per task) rejects with a ValueError; the check passes with an estimator "
            "that takes votes inside, see test_failed_fit_leaves_the_estimator_as_it_was"
        )),
    },
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_failed_fit_leaves_the_estimator_as_it_was():
    # the domain check of the contract above, with an estimator inside that takes the votes
    model = PrunedClassifier(
        ShapeRecorder(),
        pruner=WAUMPruner(0.1, aggregator=FixedConfusion(), n_epochs=2, random_state=0),
    )
    check_fit_error_leaves_estimator("PrunedClassifier", model)
