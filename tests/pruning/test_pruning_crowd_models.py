"""PrunedClassifier around crowd models in GridSearchCV, fitted on (X, votes) only.

The model selection uses no gold label: every candidate is scored by its
estimator's ``score`` on the held-out fold's votes. The fast tests use 2 x 2
grids and 3 folds; the issue's 3 x 3 grid with 5 shuffled folds runs in the
slow test (``--runslow``) and in ``examples/plot_waum_pruning.py``.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from pruning_stubs import FixedConfusion, ProbaFeatures, noisy_blobs
from skcrowd.pruning import PrunedClassifier, WAUMPruner

pytestmark = pytest.mark.deep


@pytest.fixture(autouse=True)
def reset_counters():
    ProbaFeatures.calls = 0
    ProbaFeatures.seen_rows = []


@pytest.fixture(scope="module")
def crowd():
    """Two blobs, three workers, majority wrong on 8 of 80 tasks."""
    X, votes, truth = noisy_blobs(n=80, n_flipped=8)
    X_test, _, truth_test = noisy_blobs(n=100, n_flipped=0, seed=5)
    return X.astype(np.float32), votes, X_test.astype(np.float32), truth_test


def neural():
    pytest.importorskip("torch")
    pytest.importorskip("skorch")
    return pytest.importorskip("skcrowd.neural")


def counting_pruner(cache, n_epochs=2):
    """A pruner whose margin model counts its epochs (ProbaFeatures on softmax features)."""
    return WAUMPruner(
        margin_estimator=ProbaFeatures(),
        aggregator=FixedConfusion(),
        n_epochs=n_epochs,
        memory=str(cache),
    )


def softmax_features(X):
    """Class-probability-like features ``(1 - p, p)`` with ``p = sigmoid(x1 + x2)``: still
    separating the blobs, and usable by ProbaFeatures."""
    p = 1 / (1 + np.exp(-(X[:, 0] + X[:, 1])))
    return np.column_stack([1 - p, p]).astype(np.float32)


def check_grid(grid, X, X_test, truth_test, n_splits, n_epochs, alphas):
    n = len(X)
    # the margin model trained once per fold and once for the refit, whatever the grid size
    assert ProbaFeatures.calls == (n_splits + 1) * n_epochs
    scores = grid.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all() and ((0 <= scores) & (scores <= 1)).all()
    best = grid.best_estimator_
    alpha = grid.best_params_["pruner__alpha"]
    assert alpha in alphas
    assert best.pruner_.support_.sum() == n - int(np.floor(alpha * n + 1e-9))
    pred = best.predict(X_test)
    assert pred.shape == (len(X_test),)  # every test row, nothing pruned at predict time
    return (pred == truth_test).mean()


def test_grid_search_conal(crowd, tmp_path):
    nn = neural()
    X, votes, X_test, truth_test = crowd
    X, X_test = softmax_features(X), softmax_features(X_test)
    grid = GridSearchCV(
        PrunedClassifier(
            nn.CoNALClassifier(max_epochs=6, lr=0.1, random_state=0),
            pruner=counting_pruner(tmp_path),
        ),
        {"pruner__alpha": [0.01, 0.1], "estimator__reg_lambda": [0, 1e-4]},
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X, votes)
    accuracy = check_grid(grid, X, X_test, truth_test, 3, 2, [0.01, 0.1])
    assert accuracy > 0.9


def test_grid_search_crowdlayer(crowd, tmp_path):
    nn = neural()
    X, votes, X_test, truth_test = crowd
    X, X_test = softmax_features(X), softmax_features(X_test)
    grid = GridSearchCV(
        PrunedClassifier(
            nn.CrowdLayerClassifier(max_epochs=6, lr=0.1, random_state=0),
            pruner=counting_pruner(tmp_path),
        ),
        {"pruner__alpha": [0.01, 0.1], "estimator__lr": [0.1, 0.02]},
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X, votes)
    accuracy = check_grid(grid, X, X_test, truth_test, 3, 2, [0.01, 0.1])
    assert accuracy > 0.9


def test_grid_search_aggregated_targets(crowd, tmp_path):
    module = pytest.importorskip("skcrowd.aggregated_target")
    from sklearn.linear_model import LogisticRegression

    X, votes, X_test, truth_test = crowd
    X, X_test = softmax_features(X), softmax_features(X_test)
    grid = GridSearchCV(
        PrunedClassifier(
            module.AggregatedTargetClassifier(LogisticRegression()),
            pruner=counting_pruner(tmp_path),
        ),
        {"pruner__alpha": [0.01, 0.1], "estimator__estimator__C": [0.1, 10.0]},
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(X, votes)
    accuracy = check_grid(grid, X, X_test, truth_test, 3, 2, [0.01, 0.1])
    assert accuracy > 0.9


@pytest.mark.slow
def test_grid_search_conal_full_grid_with_default_pruner(crowd, tmp_path):
    """The grid of the issue, 3 x 3 candidates, 5 shuffled folds, the default margin model."""
    nn = neural()
    X, votes, X_test, truth_test = crowd
    grid = GridSearchCV(
        PrunedClassifier(
            nn.CoNALClassifier(max_epochs=10, lr=0.05, random_state=0),
            pruner=WAUMPruner(n_epochs=10, memory=str(tmp_path), random_state=0),
        ),
        {"pruner__alpha": [0.01, 0.05, 0.1], "estimator__reg_lambda": [0, 1e-5, 1e-4]},
        cv=KFold(5, shuffle=True, random_state=0),
    ).fit(X, votes)
    assert (grid.best_estimator_.predict(X_test) == truth_test).mean() > 0.9
    refit = clone(grid.best_estimator_).fit(X, votes)
    assert refit.pruner_.support_.sum() == grid.best_estimator_.pruner_.support_.sum()
