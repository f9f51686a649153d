"""Stand-ins with known outputs for the pruning tests (module level: picklable, cacheable)."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from skcrowd import check_votes


class ProbaFeatures(ClassifierMixin, BaseEstimator):
    """Margin model whose probabilities are its input features.

    ``predict_proba(X)`` returns ``X`` on odd epochs and the uniform
    distribution on even epochs when ``alternate`` (so the AUM over two
    epochs is half the margin of ``X``). Every ``partial_fit`` call is counted
    in the class attribute ``calls``; ``seen_rows`` collects the sizes of the
    training sets it was given.
    """

    calls = 0
    seen_rows = []

    def __init__(self, alternate=False, random_state=None):
        self.alternate = alternate
        self.random_state = random_state

    def partial_fit(self, X, y, classes=None):
        type(self).calls += 1
        type(self).seen_rows.append(len(y))
        self.classes_ = np.asarray(classes)
        self.epoch_ = getattr(self, "epoch_", 0) + 1
        return self

    def fit(self, X, y):
        return self.partial_fit(X, y, classes=np.unique(y))

    def predict_proba(self, X):
        X = np.asarray(X, dtype=np.float64)
        if self.alternate and self.epoch_ % 2 == 0:
            return np.full_like(X, 1.0 / X.shape[1])
        return X

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


class FixedConfusion(BaseEstimator):
    """Aggregator stand-in: every worker gets the confusion matrix with ``diagonals[j]``.

    Off-diagonal mass is spread evenly; ``diagonals=None`` gives 0.8 to all.
    """

    def __init__(self, diagonals=None):
        self.diagonals = diagonals

    def fit(self, X):
        v = check_votes(X)
        k = v.n_classes
        diag = (
            np.full((v.n_workers, k), 0.8)
            if self.diagonals is None
            else np.asarray(self.diagonals, dtype=float)
        )
        pi = ((1 - diag) / (k - 1))[:, :, None] * np.ones((1, 1, k))
        idx = np.arange(k)
        pi[:, idx, idx] = diag
        self.confusion_matrices_ = pi
        return self


class NoConfusion(BaseEstimator):
    """Aggregator without confusion matrices (e.g. majority vote)."""

    def fit(self, X):
        self.classes_ = np.unique(check_votes(X).classes)
        return self


class ShapeRecorder(ClassifierMixin, BaseEstimator):
    """Classifier stand-in that remembers the (X, y) it was fitted on and predicts 0."""

    def fit(self, X, y):
        self.X_fit_, self.y_fit_ = X, y
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


def noisy_blobs(n=60, n_flipped=6, seed=0):
    """Two well-separated blobs, three workers; on the first ``n_flipped`` tasks two
    of the three workers give the wrong class (the majority is wrong there)."""
    rng = np.random.RandomState(seed)
    truth = np.arange(n) % 2
    X = rng.normal(scale=0.5, size=(n, 2)) + 3.0 * truth[:, None] - 1.5
    votes = np.column_stack([truth, truth, truth])
    votes[:n_flipped, 1:] = 1 - truth[:n_flipped, None]
    return X, votes, truth


class DecisionFeatures(ProbaFeatures):
    """ProbaFeatures with a decision function: ``X[:, 1] - X[:, 0]`` for two
    classes (one column, like scikit-learn's binary classifiers), else ``10 X``."""

    def decision_function(self, X):
        X = np.asarray(X, dtype=np.float64)
        return X[:, 1] - X[:, 0] if X.shape[1] == 2 else 10 * X


class Diverging(ProbaFeatures):
    """Predicts NaN probabilities, like a net whose training diverged."""

    def predict_proba(self, X):
        return np.full(np.shape(X), np.nan)
