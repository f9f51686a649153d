"""Scorers for model selection without gold labels, with scikit-learn's signature.

``scorer(estimator, X, y)``, usable as ``GridSearchCV(scoring=...)``: for
feature models (``X`` features, ``y`` the votes) :func:`mv_accuracy_scorer`
and :func:`annotation_log_likelihood_scorer`; for aggregators (the votes
matrix is ``X``) :func:`held_out_vote_scorer`.
"""

from __future__ import annotations

from sklearn.utils import check_random_state

from .._holdout import _subset, held_out_score, held_out_votes
from ._votes import mv_accuracy_score

__all__ = ["mv_accuracy_scorer", "annotation_log_likelihood_scorer", "held_out_vote_scorer"]


def mv_accuracy_scorer(estimator, X, votes=None):
    """Scorer: :func:`mv_accuracy_score` of ``estimator.predict(X)`` against ``votes``.

    Has the scikit-learn scorer signature, so it can be passed as
    ``scoring=`` to :class:`~sklearn.model_selection.GridSearchCV` or
    :func:`~sklearn.model_selection.cross_val_score` for feature models (``X``
    features, ``y`` the votes). The missing-vote marker is the estimator's
    ``missing_label`` parameter when it has one, else -1. For aggregators,
    whose ``X`` is the votes matrix and ``y`` None, the votes are ``X``.

    Parameters
    ----------
    estimator : fitted estimator
        Any classifier with ``predict``.
    X : array-like
        Input of ``estimator.predict``.
    votes : array-like or sparse matrix of shape (n_tasks, n_workers), default=None
        Held-out votes on the tasks of ``X``.

    Returns
    -------
    float
        Tie-aware accuracy against the majority vote; higher is better.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> from skcrowd.metrics import mv_accuracy_scorer
    >>> votes = np.array([[1, 1, -1], [1, 0, 1], [0, -1, -1]])
    >>> clf = DummyClassifier(strategy="constant", constant=1).fit([[0]] * 3, [1, 1, 0])
    >>> round(mv_accuracy_scorer(clf, [[0]] * 3, votes), 4)
    0.6667
    """
    if votes is None:  # an aggregator: the votes are X
        votes = X
    params = estimator.get_params() if hasattr(estimator, "get_params") else {}
    missing_label = params.get("missing_label", -1)
    return mv_accuracy_score(votes, estimator.predict(X), missing_label=missing_label)


def annotation_log_likelihood_scorer(estimator, X, votes=None):
    """Scorer: mean log-probability of held-out votes under the model's noise model.

    Returns ``estimator.annotation_log_likelihood(X, votes)``: the mean, over
    observed votes, of ``log p(vote | x)`` where the model predicts each
    worker's vote through its own annotator-noise model (confusion matrices,
    crowd layer, ...). Higher is better. Plain log-loss of the class
    probabilities against individual votes is not used because it rewards
    under-confident models (noisy votes look like uncertainty).

    For an ``sklearn.pipeline.Pipeline``, ``X`` goes through all steps but the
    last, whose method is called. For aggregators (``X`` is the votes matrix,
    ``votes`` None) ``estimator.annotation_log_likelihood(X)`` is called.

    Parameters
    ----------
    estimator : fitted estimator
        A model with an ``annotation_log_likelihood(X, votes)`` method (the
        deep crowd models, DawidSkene).
    X : array-like
        Features (or votes, for aggregators).
    votes : array-like or sparse matrix of shape (n_tasks, n_workers), default=None
        Held-out votes on the tasks of ``X``.

    Returns
    -------
    float
        Mean per-vote log-likelihood (at most 0).

    Raises
    ------
    TypeError
        If the estimator has no ``annotation_log_likelihood`` method.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.metrics import annotation_log_likelihood_scorer
    >>> class Fair:  # every worker votes uniformly among 2 classes
    ...     def annotation_log_likelihood(self, X, votes=None):
    ...         return float(np.log(0.5))
    >>> round(annotation_log_likelihood_scorer(Fair(), [[0], [1]], [[0], [1]]), 4)
    -0.6931
    """
    from sklearn.pipeline import Pipeline

    model = estimator
    if isinstance(estimator, Pipeline):
        model = estimator.steps[-1][1]
        X = estimator[:-1].transform(X) if len(estimator.steps) > 1 else X
    method = getattr(model, "annotation_log_likelihood", None)
    if method is None:
        raise TypeError(
            f"{type(model).__name__} has no annotation_log_likelihood method: this scorer "
            "needs a model of the annotators' noise (e.g. DawidSkene, CrowdLayerClassifier). "
            "Use skcrowd.metrics.mv_accuracy_scorer for other estimators."
        )
    score = method(X) if votes is None else method(X, votes)
    return float(score)


def held_out_vote_scorer(estimator, X, y=None, *, test_size=0.2, random_state=0):
    """Scorer of a fitted aggregator: log-probability of held-out votes of the tasks of ``X``.

    A share ``test_size`` of each task's votes in ``X`` is held out (at random
    with ``random_state``; every task keeps a vote), and each held-out vote is
    scored through the aggregator's own worker model given the other votes of
    its task: ``log sum_k p(k | other votes) p(vote | k, worker)``. Returns
    the mean over the held-out votes (higher is better).

    With the votes matrix as ``X`` and a splitter over its rows (tasks), for
    instance ``KFold(5, shuffle=True)``,
    ``GridSearchCV(aggregator, grid, cv=..., scoring=held_out_vote_scorer)``
    fits on the tasks of the training folds and scores, on the tasks of the
    test fold, how well the fitted worker models predict some of their votes
    from the others. To choose among different aggregators in one step, use
    :class:`skcrowd.aggregation.AggregatorSelector`, which holds out votes of
    every task instead.

    Parameters
    ----------
    estimator : fitted aggregator
        MajorityVote, DawidSkene, WeightedDawidSkene or GLAD (an aggregator
        that implements the held-out vote hook).
    X : array-like or sparse matrix of shape (n_tasks, n_workers)
        Votes on (new) tasks by the fitted workers, labels in
        ``estimator.classes_``.
    y : None
        Ignored.
    test_size : float, default=0.2
        Expected share of each task's votes held out.
    random_state : int, default=0
        Seed of the hold-out: the same for every estimator scored.

    Returns
    -------
    float
        Mean log-probability per held-out vote (at most 0).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV, KFold
    >>> from skcrowd.aggregation import DawidSkene
    >>> from skcrowd.metrics import held_out_vote_scorer
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(2, size=300)
    >>> right = rng.random((300, 6)) < [0.95, 0.9, 0.8, 0.6, 0.6, 0.55]
    >>> votes = np.where(right, truth[:, None], 1 - truth[:, None])
    >>> search = GridSearchCV(DawidSkene(), {"smoothing": [0.0, 3.0, "auto"]},
    ...                       cv=KFold(5, shuffle=True, random_state=0),
    ...                       scoring=held_out_vote_scorer).fit(votes)
    >>> search.cv_results_["mean_test_score"].round(3)
    array([-0.504, -0.506, -0.507])
    """
    votes = estimator._validate_votes(X, reset=False, allow_no_votes=True)
    held = held_out_votes(votes, test_size, check_random_state(random_state))
    return held_out_score(estimator, _subset(votes, ~held), _subset(votes, held))
