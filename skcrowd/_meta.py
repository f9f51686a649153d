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


class _VotesScoreMixin:
    """``score(X, votes)``: tie-aware accuracy of ``predict(X)`` against the majority vote of
    the votes, for feature models fitted on a votes matrix with ``missing_label``."""

    def score(self, X, y, sample_weight=None):
        """Tie-aware accuracy of the predictions against the majority vote of ``y``.

        Tasks without votes are skipped (see
        :func:`skcrowd.metrics.mv_accuracy_score`).

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_features)
            Features.
        y : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes.
        sample_weight : None
            Not supported; must be None.

        Returns
        -------
        float
        """
        from .metrics import mv_accuracy_score

        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__}.score does not support sample_weight.")
        return mv_accuracy_score(y, self.predict(X), missing_label=self.missing_label,
                                 classes=self.classes_)
