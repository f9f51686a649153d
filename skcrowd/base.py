"""Base classes and policies shared by skcrowd's estimators.

- A fit that fails leaves the estimator as it was before the call
  (:func:`_as_it_was_on_error`), for the aggregators and the feature models alike.
- :class:`FeatureModelMixin` is the base of the *feature models*, the estimators
  that take features ``X`` and the votes matrix as ``y`` (the crowd nets of
  :mod:`skcrowd.neural`, :class:`~skcrowd.SelfCrowdClassifier`,
  :class:`~skcrowd.AggregatedTargetClassifier`,
  :class:`~skcrowd.ConsensusClassifier`, :class:`~skcrowd.pruning.WAUMPruner`
  and :class:`~skcrowd.pruning.PrunedClassifier`): their scikit-learn tags, the
  validation of ``(X, y)`` at fit and the default ``score``, written once.
- Helpers of the meta-estimators (those that wrap an ``estimator``):
  :func:`_estimator_has` and :func:`_proba_in_classes`.
"""

import contextlib

import numpy as np
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if

__all__ = ["FeatureModelMixin"]


@contextlib.contextmanager
def _as_it_was_on_error(estimator):
    """Restore ``estimator``'s attributes if the block raises: a fit that fails (bad input, a
    lost Dask cluster, an interrupt) leaves no half-written fitted attribute."""
    before = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(before)
        raise


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
    proba = estimator.predict_proba(X)
    out = np.zeros((proba.shape[0], n_classes), dtype=np.float64)
    out[:, np.asarray(estimator.classes_, dtype=np.int64)] = proba
    return out


def _has_predict_proba(estimator):
    """``available_if`` check of the default ``predict``: the model has class probabilities."""
    return hasattr(estimator, "predict_proba")


def _can_predict(estimator):
    """``available_if`` check of the default ``score``: the model predicts (a sampler does not)."""
    return hasattr(estimator, "predict")


class FeatureModelMixin:
    """Mixin of the feature models: estimators fitted on features ``X`` and votes ``y``.

    ``fit(X, y)`` takes the votes matrix as ``y`` (``y[i, j]`` is worker
    ``j``'s label for task ``i``, or ``missing_label``; a 1-D ``y`` is one
    vote per task). Put it first among the bases, before scikit-learn's (or
    skorch's) classes. It provides:

    - the scikit-learn tags: ``y`` is required, and it is a votes matrix, one
      column per worker (``target_tags.multi_output`` and ``single_output``,
      so that scikit-learn's checks feed valid votes); the input tags of ``X``
      are those of the wrapped ``estimator`` for a meta-estimator, otherwise a
      dense or sparse array (``_input_tags``, overridden by a model that
      takes other inputs);
    - ``_check_features_and_votes``, the validation of ``(X, y)`` at fit;
    - ``predict(X)``: the most probable class of ``predict_proba(X)``, in
      ``classes_``, for the models with class probabilities;
    - ``score(X, y)``: tie-aware accuracy against the majority vote of the
      votes ``y``, for the models that predict labels;
    - the failed-fit policy of every skcrowd estimator: a ``fit`` that raises
      leaves the estimator as it was before the call. Each ``fit`` runs its
      work inside ``with _as_it_was_on_error(self):``.

    ``classes_`` are read only once the model is fitted (after
    ``check_is_fitted``, or after ``predict_proba``, which checks), so that an
    unfitted model raises ``NotFittedError``, not ``AttributeError``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcrowd import AggregatedTargetClassifier
    >>> from skcrowd.base import FeatureModelMixin
    >>> issubclass(AggregatedTargetClassifier, FeatureModelMixin)
    True
    >>> X = np.array([[0.0], [0.2], [0.9], [1.0]])
    >>> votes = np.array([[0, 0, -1], [0, 1, 0], [1, 1, -1], [1, -1, 1]])
    >>> clf = AggregatedTargetClassifier(LogisticRegression()).fit(X, votes)
    >>> clf.score(X, votes)  # accuracy against the majority vote of each task
    1.0
    """

    #: the error of a ``y`` whose number of tasks is not ``X``'s number of rows (the wording
    #: each model's users and tests know)
    _n_tasks_mismatch = (
        "X has {n_samples} samples but the votes y have {n_tasks} tasks (rows)."
    )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        # y is a votes matrix: one column per worker (DESIGN.md, "Estimator contract").
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        tags.input_tags = self._input_tags(tags.input_tags)
        return tags

    def _input_tags(self, tags):
        """The input tags of ``X``, given ``tags``, those of the other bases.

        A meta-estimator (an ``estimator`` parameter) passes ``X`` on: the tags
        of its ``estimator``; its default (``estimator=None``) and every other
        feature model take a dense or sparse array of features.
        """
        estimator = vars(self).get("estimator")
        if estimator is not None:
            return get_tags(estimator).input_tags
        tags.sparse = True
        return tags

    def _check_features_and_votes(self, X, y, *, n_classes=None, name="y", **check_X_params):
        """``(X, y, votes)`` for ``fit(X, y)``: the features, the votes matrix and its encoding.

        Parameters
        ----------
        X : array-like, sparse matrix or any input of the wrapped estimator
            Features. With ``check_X_params``, validated by scikit-learn's
            ``validate_data`` with those options; without, left to the wrapped
            estimator to validate (``n_features_in_`` is recorded) and made
            row-indexable.
        y : array-like, sparse matrix or DataFrame of shape (n_tasks, n_workers) or (n_tasks,)
            Votes, ``missing_label`` of the estimator marking a missing one
            (``-1`` for an estimator without that parameter). A 1-D ``y`` is
            one vote per task.
        n_classes : int, default=None
            Passed to :func:`~skcrowd.votes.check_votes`.
        name : str, default="y"
            The name of ``y`` in the errors of :func:`~skcrowd.votes.check_votes`.
        **check_X_params
            Options of ``validate_data`` for ``X``.

        Returns
        -------
        X : the features
        y : the votes, 2-D (a dense ``y`` as an array)
        votes : Votes
            The :func:`~skcrowd.votes.check_votes` encoding of ``y``.

        Raises
        ------
        ValueError
            If ``y`` is missing, is long-format votes, or has a number of
            tasks other than ``X``'s rows (``_n_tasks_mismatch``).
        """
        import scipy.sparse as sp
        from sklearn.utils.validation import _num_samples, validate_data

        from .votes import _as_array, check_not_long_format, check_votes

        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "pass the votes matrix (n_tasks, n_workers)."
            )
        check_not_long_format(y, "y")  # np.asanyarray would hide a mapping of long columns
        if check_X_params:
            X = validate_data(self, X, **check_X_params)
        else:
            validate_data(self, X, skip_check_array=True)  # X is the estimator's to validate
            if sp.issparse(X):
                X = X.tocsr()  # row indexing
            elif not hasattr(X, "__getitem__"):
                X = np.asarray(X)  # an array-like that only converts
        if not sp.issparse(y) and not hasattr(y, "columns"):
            # keeps a masked array's mask, and a list mixing strings with NaN or numbers
            y = _as_array(y) if isinstance(y, (list, tuple)) else np.asanyarray(y)
            if y.ndim == 1:
                y = y.reshape(-1, 1)  # one vote per task; aggregators take 2-D votes
        votes = check_votes(y, missing_label=getattr(self, "missing_label", -1),
                            n_classes=n_classes, name=name)
        n_samples = _num_samples(X)
        if n_samples != votes.n_tasks:
            raise ValueError(
                self._n_tasks_mismatch.format(n_samples=n_samples, n_tasks=votes.n_tasks))
        return X, y, votes

    @available_if(_has_predict_proba)
    def predict(self, X):
        """Most probable class of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_`` (for sequences, one per token: shape
            ``(n_sequences, seq_len)``).
        """
        proba = self.predict_proba(X)  # checks that it is fitted before classes_ is read
        return self.classes_[proba.argmax(axis=-1)]

    def _scored_votes(self, X, y):
        """``(votes, y_pred, missing_label, classes)`` that :meth:`score` compares.

        The votes ``y`` as given and ``predict(X)``, in the labels of ``classes_``.
        """
        from .votes import check_not_long_format

        check_not_long_format(y, "y")
        return y, self.predict(X), self.missing_label, self.classes_

    @available_if(_can_predict)
    def score(self, X, y, sample_weight=None):
        """Tie-aware accuracy of the predictions against the majority vote of ``y``.

        Tasks without votes are skipped; no gold labels are needed, so this
        works for model selection on held-out votes (see
        :func:`skcrowd.metrics.mv_accuracy_score`). In cross-validation, pass
        ``cv=KFold(n_splits, shuffle=True)``: scikit-learn's default for a
        2-D ``y`` is an unshuffled ``KFold``.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_features)
            Features.
        y : array-like or sparse matrix of shape (n_tasks, n_workers) or (n_tasks,)
            Votes on those tasks (a 1-D ``y``: one vote, or a gold label, per
            task).
        sample_weight : None
            Not supported; must be None.

        Returns
        -------
        float
        """
        from .metrics import mv_accuracy_score

        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__}.score does not support sample_weight.")
        votes, y_pred, missing_label, classes = self._scored_votes(X, y)
        return mv_accuracy_score(votes, y_pred, missing_label=missing_label, classes=classes)
