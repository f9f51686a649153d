"""AggregatedTargetClassifier: aggregate the votes, then train any classifier on the result.

The two-stage baselines of the deep-learning-from-crowds papers ("DL-MV",
"DL-DS"): an aggregator turns the votes into labels (hard) or class
probabilities (soft), and a classifier is trained on the features and those
targets. The hard path needs only scikit-learn (torch is imported only for
``targets="soft"``).
"""

import sys

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .base import FeatureModelMixin, _as_it_was_on_error, _estimator_has, _proba_in_classes

__all__ = ["AggregatedTargetClassifier"]


def _is_skorch_classifier(estimator):
    skorch = sys.modules.get("skorch")  # a skorch net exists only if skorch was imported
    return skorch is not None and isinstance(estimator, skorch.NeuralNetClassifier)


def _soft_target_settings(net):
    """Criterion, split and validation score of a skorch net trained on probabilities."""
    import torch
    from skorch.callbacks import EpochScoring

    from .neural import SoftNLLLoss

    criterion = net.criterion
    if isinstance(criterion, type) and issubclass(criterion, torch.nn.CrossEntropyLoss):
        soft_criterion = criterion  # takes probability targets as they are
    elif isinstance(criterion, type) and issubclass(criterion, torch.nn.NLLLoss):
        soft_criterion = SoftNLLLoss
    else:
        raise TypeError(
            "targets='soft' needs the net's criterion to be torch.nn.NLLLoss (module outputs "
            f"probabilities) or torch.nn.CrossEntropyLoss (logits); got {criterion!r}."
        )
    settings = {"criterion": soft_criterion}
    if net.train_split is not None:
        settings["train_split"] = _StratifyOnArgmax(net.train_split)
    if "valid_acc" in dict(net.get_default_callbacks()):
        settings["callbacks__valid_acc"] = EpochScoring(
            _soft_target_accuracy, name="valid_acc", lower_is_better=False
        )
    return settings


class _StratifyOnArgmax:
    """Train/valid split of a skorch net fitted on soft targets: stratify on their argmax."""

    def __init__(self, split):
        self.split = split

    def __call__(self, dataset, y=None, **kwargs):
        return self.split(dataset, None if y is None else np.asarray(y).argmax(axis=1), **kwargs)


def _soft_target_accuracy(net, X, y):
    """``valid_acc`` of a net fitted on soft targets: accuracy against their argmax."""
    return float(np.mean(net.predict_proba(X).argmax(axis=1) == np.asarray(y).argmax(axis=1)))


class AggregatedTargetClassifier(FeatureModelMixin, MetaEstimatorMixin, ClassifierMixin,
                                 BaseEstimator):
    """Train a classifier on votes aggregated into targets ("DL-MV", "DL-DS" baselines).

    ``fit(X, votes)`` fits ``aggregator`` on the votes, then ``estimator`` on
    the features of the tasks that have at least one vote and their
    aggregated targets: the aggregator's labels (``targets="hard"``, any
    scikit-learn classifier) or its class probabilities (``targets="soft"``,
    a skorch ``NeuralNetClassifier`` trained with a soft cross-entropy).

    Parameters
    ----------
    estimator : classifier
        Trained on the features of the voted tasks and the class *indices*
        of their aggregated labels (``classes_[i]`` is the label of index
        ``i``), so it also works with string labels. A skorch
        ``NeuralNetClassifier`` gets ``classes=range(n_classes)``: one output
        per class, even for a class the aggregator never predicts. For
        ``targets="soft"`` it must be such a net, with criterion
        ``torch.nn.NLLLoss`` (its module outputs probabilities, skorch's
        default) or ``torch.nn.CrossEntropyLoss`` (logits); it is trained with
        the soft counterpart (:class:`skcrowd.neural.SoftNLLLoss`, or
        ``CrossEntropyLoss`` with probability targets), its train/valid split
        stratified on the most probable class and its ``valid_acc`` measured
        against it.
    aggregator : aggregator, default=None
        Anything with ``fit(votes)``, ``predict``, ``predict_proba`` and
        ``classes_`` (an aggregator of :mod:`skcrowd.aggregation`). ``None``:
        :class:`skcrowd.DawidSkene` with its defaults (the default is built at
        ``fit``, since an estimator instance as a default value would be
        shared between instances).
    targets : {"hard", "soft"}, default="hard"
        Train on the aggregated labels or on the aggregated probabilities.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote; also set on the aggregator when it has a
        ``missing_label`` parameter.

    Attributes
    ----------
    aggregator_ : aggregator
        The fitted aggregator.
    estimator_ : classifier
        The fitted classifier.
    classes_ : ndarray of shape (n_classes,)
        Class labels (those of the aggregator).
    n_features_in_ : int
        Number of features, when ``X`` is an array.

    See Also
    --------
    skcrowd.neural.CrowdLayerClassifier : learn from the votes end to end.

    References
    ----------
    Rodrigues, F. and Pereira, F. C. (2018). Deep learning from crowds. AAAI
    (the DL-MV and DL-DS baselines).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcrowd import AggregatedTargetClassifier, MajorityVote
    >>> X = np.array([[0.0], [0.2], [0.9], [1.0], [0.5]])
    >>> votes = np.array([[0, 0, 1], [0, -1, 0], [1, 1, 1], [1, 0, 1], [-1, -1, -1]])
    >>> clf = AggregatedTargetClassifier(LogisticRegression(), aggregator=MajorityVote())
    >>> clf.fit(X, votes).predict([[0.1], [0.95]]).tolist()
    [0, 1]
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "aggregator": [None, HasMethods(["fit", "predict", "predict_proba"])],
        "targets": [StrOptions({"hard", "soft"})],
        "missing_label": "no_validation",  # any marker; check_votes validates it
    }

    def __init__(self, estimator, *, aggregator=None, targets="hard", missing_label=-1):
        self.estimator = estimator
        self.aggregator = aggregator
        self.targets = targets
        self.missing_label = missing_label

    def _make_aggregator(self):
        if self.aggregator is None:
            from .aggregation import DawidSkene

            aggregator = DawidSkene()
        else:
            aggregator = clone(self.aggregator)
        if "missing_label" in aggregator.get_params():
            aggregator.set_params(missing_label=self.missing_label)
        return aggregator

    def _make_estimator(self, n_classes):
        """Clone of ``estimator``; a skorch net gets ``classes=range(n_classes)``, soft setup."""
        estimator = clone(self.estimator)
        if self.targets == "hard" and not _is_skorch_classifier(estimator):
            return estimator
        if not _is_skorch_classifier(estimator):
            raise TypeError(
                "targets='soft' trains a skorch NeuralNetClassifier on class probabilities; got "
                f"{type(self.estimator).__name__}. Use targets='hard' for other classifiers."
            )
        # one output column per class index, even for classes never aggregated
        params = {"classes": list(range(n_classes))}
        if self.targets == "soft":
            params.update(_soft_target_settings(estimator))
        return estimator.set_params(**params)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Aggregate the votes ``y``, then fit the classifier on ``X`` and the targets.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_features) or any input of ``estimator``
            Features of the tasks.
        y : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes: ``y[i, j]`` is worker ``j``'s label for task ``i``, or
            ``missing_label``.
        **fit_params
            Passed to ``estimator.fit``.

        Returns
        -------
        self
        """
        with _as_it_was_on_error(self):
            X, y, votes = self._check_features_and_votes(X, y)
            self.aggregator_ = self._make_aggregator().fit(y)
            self.classes_ = np.asarray(self.aggregator_.classes_)
            voted = np.flatnonzero(votes.votes_per_task() > 0)
            if self.targets == "hard":
                labels = np.asarray(self.aggregator_.predict(y))[voted]
                target = np.searchsorted(self.classes_, labels)  # class indices
            else:
                target = np.asarray(self.aggregator_.predict_proba(y), dtype=np.float32)[voted]
            self.estimator_ = self._make_estimator(len(self.classes_))
            self.estimator_.fit(_safe_indexing(X, voted), target, **fit_params)
            return self

    def _estimator_proba(self, X):
        check_is_fitted(self)
        # numpy even for a DataFrame X (unlike the aggregators): scikit-learn's scorers take
        # predict_proba(X)[:, 1] on binary problems (roc_auc, neg_log_loss), which a DataFrame
        # rejects. See "In a notebook" in doc/aggregation.rst.
        # columns: the class indices the estimator saw (a skorch net: all of them)
        return _proba_in_classes(self.estimator_, X, len(self.classes_))

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the classifier, columns in the order of ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return self._estimator_proba(X)

    def predict(self, X):
        """Predicted labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        if self.targets == "soft":
            return self.classes_[self._estimator_proba(X).argmax(axis=1)]
        return self.classes_[np.asarray(self.estimator_.predict(X), dtype=np.int64)]
