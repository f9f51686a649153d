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


def _check_features_and_votes(estimator, X, y, *, n_classes=None):
    """``(X, y, votes)`` for ``fit(X, y)`` of a feature model trained on a votes matrix ``y``.

    ``X`` is left to the wrapped estimator to validate (``n_features_in_`` is recorded), made
    row-indexable; ``y`` becomes 2-D (a 1-D ``y`` is one vote per task) and ``votes`` its
    :func:`~skcrowd.votes.check_votes` encoding (``missing_label`` of ``estimator``). A missing
    ``y`` or a number of tasks other than ``X``'s is an error that says so.
    """
    import numpy as np
    import scipy.sparse as sp
    from sklearn.utils.validation import _num_samples, validate_data

    from .votes import check_not_long_format, check_votes

    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None: "
            "pass the votes matrix (n_tasks, n_workers)."
        )
    check_not_long_format(y, "y")  # np.asanyarray would hide a mapping of long columns
    validate_data(estimator, X, skip_check_array=True)  # X is the estimator's to validate
    if sp.issparse(X):
        X = X.tocsr()  # row indexing
    elif not hasattr(X, "__getitem__"):
        X = np.asarray(X)  # an array-like that only converts
    if not sp.issparse(y) and not hasattr(y, "columns"):
        y = np.asanyarray(y)  # keeps a masked array's mask
        if y.ndim == 1:
            y = y.reshape(-1, 1)  # one vote per task; aggregators take 2-D votes
    votes = check_votes(y, missing_label=estimator.missing_label, n_classes=n_classes,
                        name="y")
    n_samples = _num_samples(X)
    if n_samples != votes.n_tasks:
        raise ValueError(
            f"X has {n_samples} samples but the votes y have {votes.n_tasks} tasks (rows)."
        )
    return X, y, votes


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
        from .votes import check_not_long_format

        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__}.score does not support sample_weight.")
        check_not_long_format(y, "y")
        return mv_accuracy_score(y, self.predict(X), missing_label=self.missing_label,
                                 classes=self.classes_)
