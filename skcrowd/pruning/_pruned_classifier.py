"""PrunedClassifier: prune ambiguous tasks at fit, then fit a classifier on the rest."""

from __future__ import annotations

from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import FeatureModelMixin, _as_it_was_on_error, _estimator_has
from ._pruner import WAUMPruner

__all__ = ["PrunedClassifier"]


class PrunedClassifier(FeatureModelMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Drop the most ambiguous training tasks, then fit a classifier on the rest.

    ``fit(X, votes)`` runs ``pruner.fit_resample(X, votes)`` and fits a clone
    of ``estimator`` on the kept rows; ``predict``, ``predict_proba`` and
    ``score`` are those of the fitted estimator, on every row given (nothing is
    pruned at predict time). This is the composition for scikit-learn's
    ``Pipeline`` and ``GridSearchCV``, whose transformers cannot drop rows:
    tune both parts with ``pruner__alpha`` and ``estimator__<param>``.

    Parameters
    ----------
    estimator : estimator
        Classifier fitted on the kept tasks with the kept votes as ``y``: a
        crowd model taking votes (``CoNALClassifier``,
        ``CrowdLayerClassifier``, ``AggregatedTargetClassifier``, ...), or any
        classifier when ``y`` is one label per task.
    pruner : sampler, default=None
        Object with ``fit_resample(X, y)`` returning the kept ``(X, y)``.
        ``None``: ``WAUMPruner()``. Pass ``WAUMPruner(memory=...)`` explicitly
        to grid-search ``pruner__alpha`` without retraining its margin model
        for every ``alpha``.

    Attributes
    ----------
    pruner_ : sampler
        The fitted clone of ``pruner`` (e.g. ``pruner_.support_``,
        ``pruner_.waum_``).
    estimator_ : estimator
        The clone of ``estimator`` fitted on the kept tasks.
    classes_ : ndarray of shape (n_classes,)
        Classes known to ``estimator_`` (a class whose every vote was pruned
        is lost; :class:`WAUMPruner` warns).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    WAUMPruner : the default pruner and its scores.

    References
    ----------
    T. Lefort, B. Charlier, A. Joly and J. Salmon, "Identify ambiguous tasks
    combining crowdsourced labels by weighting Areas Under the Margin", TMLR
    2024 (the pruned dataset ``D_pruned`` of algorithm 1, then training on it).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV, KFold
    >>> from skcrowd.pruning import PrunedClassifier, WAUMPruner
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> y[:5] = 1 - y[:5]                  # five wrong labels
    >>> model = PrunedClassifier(
    ...     LogisticRegression(),
    ...     pruner=WAUMPruner(method="aumc", n_epochs=10, random_state=0))
    >>> grid = GridSearchCV(model, {"pruner__alpha": [0.0, 0.1]},
    ...                     cv=KFold(3, shuffle=True, random_state=0)).fit(X, y)
    >>> grid.best_estimator_.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "pruner": [HasMethods(["fit_resample"]), None],
    }

    def __init__(self, estimator, *, pruner=None):
        self.estimator = estimator
        self.pruner = pruner

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Prune ambiguous tasks, then fit the estimator on the kept ones.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_features)
            Features of the tasks.
        y : array-like or sparse matrix of shape (n_tasks, n_workers)
            The votes matrix (-1 for missing), or one label per task.

        Returns
        -------
        self : PrunedClassifier
            Fitted classifier.
        """
        with _as_it_was_on_error(self):
            validate_data(self, X, skip_check_array=True)
            pruner = WAUMPruner() if self.pruner is None else clone(self.pruner)
            X_kept, y_kept = pruner.fit_resample(X, y)
            self.pruner_ = pruner
            self.estimator_ = clone(self.estimator).fit(X_kept, y_kept)
            return self

    @property
    def classes_(self):
        """Classes known to the fitted estimator."""
        check_is_fitted(self)
        return self.estimator_.classes_

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict classes with the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted class of every row.
        """
        check_is_fitted(self)
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities from the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        # numpy even for a DataFrame X (unlike the aggregators): scikit-learn's scorers take
        # predict_proba(X)[:, 1] on binary problems (roc_auc, neg_log_loss), which a DataFrame
        # rejects. See "In a notebook" in doc/aggregation.rst.
        check_is_fitted(self)
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities from the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self)
        return self.estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the fitted estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The estimator's decision values.
        """
        check_is_fitted(self)
        return self.estimator_.decision_function(X)

    def score(self, X, y, sample_weight=None):
        """The fitted estimator's score on all of ``(X, y)``.

        For crowd models that is their votes-aware default (accuracy against
        the majority vote of the held-out votes); for a plain classifier on one
        label per task, accuracy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like or sparse matrix of shape (n_samples, n_workers)
            Held-out votes, or one label per task.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed on when given.

        Returns
        -------
        score : float
            The estimator's score.
        """
        check_is_fitted(self)
        if sample_weight is None:
            return self.estimator_.score(X, y)
        return self.estimator_.score(X, y, sample_weight=sample_weight)
