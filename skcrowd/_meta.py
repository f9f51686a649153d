"""Helpers of skcrowd's meta-estimators (estimators that wrap an ``estimator``)."""


def _estimator_has(attr):
    """``available_if`` check: the fitted ``estimator_`` has ``attr`` (before fit, the
    ``estimator`` parameter)."""

    def check(self):
        est = self.estimator_ if hasattr(self, "estimator_") else self.estimator
        return hasattr(est, attr)

    return check


def _proba_in_classes(estimator, X, n_classes):
    """``estimator.predict_proba(X)`` with one column per class index ``0 .. n_classes - 1``.

    ``estimator`` was fitted on class indices; a class it never saw gets a zero column.
    """
    import numpy as np

    proba = estimator.predict_proba(X)
    out = np.zeros((proba.shape[0], n_classes), dtype=np.float64)
    out[:, np.asarray(estimator.classes_, dtype=np.int64)] = proba
    return out
