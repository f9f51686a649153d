"""Self-Crowd: self-training with distribution-aware pseudo-annotations.

Implements Algorithm 1 of Shi, Li & Huang, "Learning from crowds with sparse
and imbalanced annotations". A crowd model (by default
:class:`skcrowd.neural.CrowdLayerClassifier`) is trained on the observed
votes; it then predicts, for every (task, worker) pair the worker did not
annotate, the worker's annotation distribution (eq. 1). The most
confident predictions (lowest entropy, eq. 3) become pseudo-annotations, with
per-class quotas that undersample the classes the model predicts most often
(eq. 4-5); the crowd model is retrained on observed + pseudo-annotations and
the loop repeats.

The crowd-model protocol
------------------------
Any estimator with these three methods can be the crowd model:

``fit(X, votes)``
    ``votes`` of shape ``(n_tasks, n_workers)`` holds class indices
    ``0 .. n_classes - 1`` and ``-1`` for missing entries (a dense array, or a
    ``scipy.sparse`` CSR array whose stored entries are the votes when the
    dense matrix would exceed the memory budget).
``predict_proba(X)``
    ``(n_samples, n_classes)`` class probabilities.
``predict_annotator_proba(X, workers=None)``
    ``(n_samples, len(workers), n_classes)``: the distribution of the label
    each worker in ``workers`` (all workers when None) would give each sample.
"""

from __future__ import annotations

import copy
import numbers
from functools import partial

import numpy as np
from scipy.special import entr
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, RealNotInt, StrOptions
from sklearn.utils.random import sample_without_replacement
from sklearn.utils.validation import check_is_fitted, validate_data

from ._holdout import holdout_tasks
from .metrics import imbalance_ratio, mv_accuracy_score
from .votes import Votes, check_not_long_format, check_votes

__all__ = ["SelfCrowdClassifier", "distribution_aware_quotas"]


def distribution_aware_quotas(n_predicted_per_class, n_select):
    """Per-class numbers of pseudo-annotations to select (eq. 4-5 of Self-Crowd).

    Class ``c`` receives ``M_c = t_c * M`` of the ``M = n_select``
    pseudo-annotations, with ``t_c`` proportional to ``1 / N'_c`` where
    ``N'_c`` is the number of candidate pseudo-annotations predicted as class
    ``c`` (Shi, Li & Huang, eq. 4-5). Three details the paper leaves open are
    fixed here:

    - a class with ``N'_c = 0`` has nothing to select and gets ``t_c = 0``
      (no division by zero);
    - ``M_c`` never exceeds ``N'_c``; what a full class cannot take is shared
      among the other classes with the same ``1 / N'_c`` weights, so that
      ``min(M, sum_c N'_c)`` pseudo-annotations are selected in total;
    - fractional shares are rounded by the largest-remainder method (ties to
      the lower class index), so the quotas sum exactly to that total.

    Parameters
    ----------
    n_predicted_per_class : array-like of int, shape (n_classes,)
        ``N'_c``: how many candidate pseudo-annotations have class ``c`` as
        their most probable label.
    n_select : int
        ``M``: how many pseudo-annotations to select in total.

    Returns
    -------
    quotas : ndarray of int64, shape (n_classes,)
        ``M_c`` for each class.

    Examples
    --------
    >>> from skcrowd.selftraining import distribution_aware_quotas
    >>> distribution_aware_quotas([0, 40, 120], 40).tolist()
    [0, 30, 10]
    >>> distribution_aware_quotas([2, 100], 10).tolist()  # class 0 is full at 2
    [2, 8]
    """
    available = np.asarray(n_predicted_per_class, dtype=np.int64)
    if available.ndim != 1 or (available < 0).any():
        raise ValueError(
            "n_predicted_per_class must be a 1-D array of non-negative counts, got "
            f"{available.tolist()!r}."
        )
    quotas = np.zeros_like(available)
    remaining = int(min(n_select, available.sum()))
    open_ = available > 0
    while remaining > 0:
        inverse = np.zeros(len(available))
        inverse[open_] = 1.0 / available[open_]
        share = inverse / inverse.sum() * remaining
        capacity = available - quotas
        full = open_ & (share >= capacity)
        if full.any():
            # Fill these classes, then share the rest among the others.
            quotas[full] = available[full]
            remaining -= int(capacity[full].sum())
            open_ &= ~full
            continue
        base = np.floor(share).astype(np.int64)
        leftover = remaining - int(base.sum())
        by_remainder = np.lexsort((np.arange(len(share)), -(share - base)))
        base[by_remainder[:leftover]] += 1
        quotas += base
        break
    return quotas


class _CandidatePool:
    """The (task, worker) pairs without a vote, as flat indices ``task * n_workers + worker``.

    Stores only the sorted flat indices of the annotated pairs (observed votes
    and pseudo-annotations added so far), never the candidates themselves.
    """

    def __init__(self, votes: Votes):
        self.n_workers = votes.n_workers
        self.n_pairs = votes.n_tasks * votes.n_workers
        self.annotated = np.sort(votes.task * votes.n_workers + votes.worker)

    @property
    def n_free(self) -> int:
        return self.n_pairs - len(self.annotated)

    def is_free(self, flat):
        pos = np.searchsorted(self.annotated, flat)
        hit = pos < len(self.annotated)
        hit[hit] = self.annotated[pos[hit]] == flat[hit]
        return ~hit

    def free_rank_to_flat(self, ranks):
        """Flat index of the ``r``-th free pair (0-based, in flat order) for each ``r``."""
        free_before = self.annotated - np.arange(len(self.annotated))
        return ranks + np.searchsorted(free_before, ranks, side="right")

    def add(self, flat):
        self.annotated = np.sort(np.concatenate([self.annotated, flat]))


def _blocks(n_tasks, n_workers, budget):
    """Rectangles ``(task slice, worker slice)`` of at most ``budget`` pairs covering all pairs."""
    block_workers = min(n_workers, budget)
    block_tasks = max(1, budget // block_workers)
    for t0 in range(0, n_tasks, block_tasks):
        for w0 in range(0, n_workers, block_workers):
            yield slice(t0, min(t0 + block_tasks, n_tasks)), slice(
                w0, min(w0 + block_workers, n_workers)
            )


def _annotator_proba(model, X_rows, workers, n_classes):
    workers = np.arange(workers.start, workers.stop)
    proba = np.asarray(model.predict_annotator_proba(X_rows, workers=workers))
    expected = (X_rows.shape[0], len(workers), n_classes)
    if proba.shape != expected:
        raise ValueError(
            f"{type(model).__name__}.predict_annotator_proba returned shape {proba.shape}; "
            f"the crowd-model protocol expects (n_samples, len(workers), n_classes) = {expected}."
        )
    if not (np.isfinite(proba).all() and (proba >= 0).all()):
        raise ValueError(
            f"{type(model).__name__}.predict_annotator_proba returned a negative or "
            "non-finite probability; the crowd-model protocol expects distributions."
        )
    return proba


def _best_per_group(entropy, flat, group, k):
    """Indices of the ``k[g]`` lowest-entropy entries of each group ``g``.

    Ties in entropy go to the lower flat index, so the result does not depend
    on the order in which candidates were scored.
    """
    order = np.lexsort((flat, entropy, group))
    group_sorted = group[order]
    rank = np.arange(len(order)) - np.searchsorted(group_sorted, group_sorted, side="left")
    return order[rank < k[group_sorted]]


def _select_by_entropy(model, X, pool, n_select, n_classes, budget, per_class):
    """Score every candidate pair block by block; keep only the best ones.

    Memory: one block of ``budget`` pairs times ``n_classes`` probabilities,
    plus at most ``n_select`` kept candidates per class.
    """
    n_tasks = X.shape[0]
    n_groups = n_classes if per_class else 1
    cap = np.full(n_groups, n_select)
    kept_entropy, kept_flat, kept_label = np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
    n_predicted = np.zeros(n_classes, dtype=np.int64)
    for tasks, workers in _blocks(n_tasks, pool.n_workers, budget):
        proba = _annotator_proba(model, X[tasks], workers, n_classes)
        flat = (
            np.arange(tasks.start, tasks.stop)[:, None] * pool.n_workers
            + np.arange(workers.start, workers.stop)[None, :]
        ).ravel()
        proba = proba.reshape(len(flat), n_classes)
        free = pool.is_free(flat)
        proba, flat = proba[free], flat[free]
        label = np.argmax(proba, axis=1)
        entropy = entr(proba.astype(np.float64, copy=False)).sum(axis=1)
        n_predicted += np.bincount(label, minlength=n_classes)
        kept_entropy = np.concatenate([kept_entropy, entropy])
        kept_flat = np.concatenate([kept_flat, flat])
        kept_label = np.concatenate([kept_label, label])
        group = kept_label if per_class else np.zeros(len(kept_label), np.int64)
        keep = _best_per_group(kept_entropy, kept_flat, group, cap)
        kept_entropy, kept_flat, kept_label = kept_entropy[keep], kept_flat[keep], kept_label[keep]
    if per_class:
        quota = distribution_aware_quotas(n_predicted, n_select)
        chosen = _best_per_group(kept_entropy, kept_flat, kept_label, quota)
    else:
        chosen = np.arange(len(kept_flat))  # already the n_select best
    order = np.argsort(kept_flat[chosen])
    return kept_flat[chosen][order], kept_label[chosen][order]


def _select_at_random(model, X, pool, n_select, n_classes, budget, rng):
    """Uniformly random candidate pairs, labelled with their most probable annotation."""
    ranks = sample_without_replacement(pool.n_free, min(n_select, pool.n_free), random_state=rng)
    flat = pool.free_rank_to_flat(np.sort(ranks.astype(np.int64)))
    task, worker = np.divmod(flat, pool.n_workers)
    label = np.empty(len(flat), dtype=np.int64)
    for tasks, workers in _blocks(X.shape[0], pool.n_workers, budget):
        inside = (
            (task >= tasks.start) & (task < tasks.stop)
            & (worker >= workers.start) & (worker < workers.stop)
        )
        if not inside.any():
            continue
        rows, row_of = np.unique(task[inside], return_inverse=True)
        proba = _annotator_proba(model, X[rows], workers, n_classes)
        label[inside] = np.argmax(proba[row_of, worker[inside] - workers.start], axis=1)
    return flat, label


class SelfCrowdClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Self-Crowd: self-training a crowd model with distribution-aware pseudo-annotations.

    Algorithm 1 of Shi, Li & Huang (Self-Crowd): train the crowd model on the
    observed votes; predict each worker's annotation distribution (eq. 1)
    for the (task, worker) pairs that worker did not annotate; score each
    prediction by its entropy (eq. 3); add ``M`` of them, as hard labels, to
    the votes (without replacement across iterations) and retrain; repeat
    ``n_iterations`` times. With ``selection="distribution"`` (Self-Crowd) the
    ``M`` are split into per-class quotas ``M_c = t_c M``, ``t_c`` proportional
    to ``1 / N'_c``, the number of candidates predicted as class ``c``
    (eq. 4-5, see :func:`distribution_aware_quotas`), and the ``M_c``
    lowest-entropy candidates of each class are taken; ``"confidence"``
    (Self-Crowd_c) takes the ``M`` lowest-entropy candidates overall;
    ``"random"`` (Self-Crowd_r) takes ``M`` uniformly random candidates.

    Self-training can also hurt: its pseudo-annotations are the model's own
    guesses, and a round that adds wrong ones teaches the next model its
    mistakes (on a music-genre crowd with half of its votes removed, the
    unchecked loop fell from the crowd layer's 0.618 test accuracy to
    0.392). So by default a share ``validation_fraction`` of the tasks is
    held out, stratified on the majority vote: the rounds train on the other
    tasks, and each round's model is scored on the held-out votes
    (tie-aware accuracy against their majority vote,
    :func:`skcrowd.metrics.mv_accuracy_score`). A round that lowers that
    score is undone and the loop stops. The crowd model of the last kept
    round is then refitted on every task, with all observed votes and the
    kept pseudo-annotations; when no round was kept this is the crowd model
    fitted on the votes alone, the model self-training started from.

    Parameters
    ----------
    estimator : estimator, default=None
        The crowd model, cloned before fitting. It must follow the protocol of
        :mod:`skcrowd.selftraining`: ``fit(X, votes)``, ``predict_proba(X)``
        and ``predict_annotator_proba(X, workers=None)``. None means
        :class:`~skcrowd.neural.CrowdLayerClassifier` with the paper's setup
        (needs torch and skorch): MLP with 128 ReLU units and dropout 0.5,
        "MW" crowd layer, Adam with learning rate 1e-3 and L2 weight decay
        5e-4, batch size 512, 25 epochs, no validation split. The parameters
        the protocol fixes are overridden on the clone: ``missing_label=-1``
        and ``classes=arange(n_classes)`` when the crowd model has them, and
        ``random_state``, when it has one, is drawn from ``random_state`` for
        each fit, as :class:`~sklearn.ensemble.BaggingClassifier` does.
    n_iterations : int, default=5
        Self-training rounds after the initial fit (the paper runs 5 for its
        sparsity study and 14 for its fig. 3). Fewer run when no candidate
        pair is left.
    n_pseudo : int or float, default=0.1
        ``M``, the pseudo-annotations added per round. A float in (0, 1] is a
        fraction of the initial candidate pairs of the tasks the rounds train
        on (``n_tasks * n_workers - n_votes`` without validation), at least 1.
        The paper adds 10,000 per round on LabelMe, about 0.18 of its 56,453
        candidates.
    selection : {"distribution", "confidence", "random"}, default="distribution"
        Selection rule: Self-Crowd, Self-Crowd_c or Self-Crowd_r.
    validation_fraction : float or None, default=0.2
        Share of the tasks (in (0, 1)) held out to check each round, see
        above. None runs every round unchecked on every task (the paper's
        algorithm 1). Without a held-out vote to score on (too few tasks, or
        held-out tasks without votes) the rounds run unchecked too.
    warm_start : bool, default=False
        When True, each retraining continues from the previous crowd model
        (by setting the crowd model's own ``warm_start=True``, as skorch nets
        and many scikit-learn estimators understand) instead of fitting a fresh
        clone. The crowd model must have a ``warm_start`` parameter.
    max_candidates_in_memory : int, default=2**20
        Memory budget: candidate pairs are scored in blocks of at most this
        many (task, worker) pairs, so at most ``max_candidates_in_memory *
        n_classes`` probabilities exist at once. The votes handed to the crowd
        model are a sparse CSR array instead of a dense matrix when
        ``n_tasks * n_workers`` exceeds it. The selection does not depend on it.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in dense ``y`` and ``y_val`` (see
        :func:`skcrowd.check_votes`; ``None`` or ``np.nan`` for object or
        float votes).
    verbose : int, default=0
        Print one line per self-training round when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds the ``"random"`` rule and the crowd model's ``random_state``.

    Attributes
    ----------
    estimator_ : estimator
        The final crowd model: the last kept round's, refitted on every task
        when tasks were held out; ``predict_proba`` is its ``predict_proba``
        (the bottleneck for a crowd layer).
    classes_ : ndarray of shape (n_classes,)
        Labels seen in the votes.
    n_features_in_ : int
        Number of features of ``X``.
    n_iter_ : int
        Self-training rounds kept.
    history_ : list of dict
        ``history_[t]`` describes the model after ``t`` rounds (``history_[0]``
        is the initial fit on the observed votes), so it has ``n_iter_ + 1``
        entries, plus a last one for the round that was undone, if any. Keys:
        ``iteration``; ``n_added`` and ``n_added_per_class``
        (pseudo-annotations added in that round, in total and per class of
        ``classes_``); ``imbalance_ratio_selected`` (R of eq. 6 for all
        pseudo-annotations selected so far, None before any is selected);
        ``imbalance_ratio_combined`` (R of observed + selected);
        ``held_out_score`` (the check on the held-out votes, when tasks are
        held out); ``status`` (``"initial"``, ``"kept"``, ``"undone: held-out
        score fell"`` or ``"undone: interrupted"``, see Notes); and
        ``valid_accuracy`` when ``X_val`` and ``y_val`` are passed to ``fit``.
        Counts and ratios are those of the tasks the rounds train on.
        ``pandas.DataFrame(history_)`` gives a table.
    pseudo_annotations_ : dict of ndarray
        The pseudo-annotations of the kept rounds: ``task``, ``worker``,
        ``label`` (in ``classes_``) and ``iteration`` (the round that added
        it).

    See Also
    --------
    skcrowd.neural.CrowdLayerClassifier : the default crowd model.
    skcrowd.metrics.imbalance_ratio : R of eq. 6.

    Notes
    -----
    Interrupting a fit (``KeyboardInterrupt``, Ctrl-C in a notebook): skorch
    nets catch it, stop training and stay usable (see
    :ref:`learning`); when the crowd model reports it (its
    ``interrupted_`` attribute) during a round, the round is undone and
    self-training stops with the rounds kept so far, without the final
    refit. An interrupt anywhere else in ``fit`` leaves the estimator
    unfitted (its fitted attributes removed), never half-fitted.

    Validation data are fit parameters, ``fit(X, y, X_val=..., y_val=...)``,
    as in :class:`~sklearn.ensemble.HistGradientBoostingClassifier`; they only
    fill ``history_`` and never change the fitted model. Do not pass them
    through :class:`~sklearn.model_selection.GridSearchCV`, which slices fit
    parameters that have as many rows as ``X``; let its folds score the
    models instead (with ``cv=KFold(shuffle=True)``, as votes are 2-D).

    The default :meth:`score` is the tie-aware accuracy against the majority
    vote of the given votes (:func:`skcrowd.metrics.mv_accuracy_score`).

    References
    ----------
    Y. Shi, S.-Y. Li and S.-J. Huang. "Learning from crowds with sparse and
    imbalanced annotations" (Self-Crowd): Algorithm 1, eq. 1-6.

    Examples
    --------
    A crowd model that follows the protocol: a logistic regression on the
    majority vote, and each worker copying the predicted class with a
    worker-specific accuracy.

    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skcrowd import SelfCrowdClassifier, check_votes
    >>> class CopyCrowd(LogisticRegression):
    ...     def fit(self, X, votes):
    ...         v = check_votes(votes)
    ...         has = v.votes_per_task() > 0
    ...         super().fit(X[has], v.counts()[has].argmax(1))
    ...         hit = super().predict(X)[v.task] == v.classes[v.label]
    ...         self.accuracy_ = (np.bincount(v.worker, hit, v.n_workers) + 1) / (
    ...             v.votes_per_worker() + 2)
    ...         return self
    ...     def predict_annotator_proba(self, X, workers=None):
    ...         acc = self.accuracy_ if workers is None else self.accuracy_[workers]
    ...         p, k = self.predict_proba(X)[:, None, :], len(self.classes_)
    ...         return acc[:, None] * p + (1 - acc[:, None]) * (1 - p) / (k - 1)
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(60, 2))
    >>> truth = (X[:, 0] > 0).astype(int)
    >>> votes = np.where(rng.rand(60, 4) < 0.4, truth[:, None], -1)
    >>> clf = SelfCrowdClassifier(CopyCrowd(), n_iterations=2, n_pseudo=20,
    ...                           random_state=0).fit(X, votes)
    >>> [h["n_added"] for h in clf.history_]
    [0, 20, 20]
    >>> clf.pseudo_annotations_["task"].shape
    (40,)
    >>> float(clf.score(X, votes)) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba", "predict_annotator_proba"]), None],
        "n_iterations": [Interval(numbers.Integral, 0, None, closed="left")],
        "validation_fraction": [Interval(RealNotInt, 0, 1, closed="neither"), None],
        "n_pseudo": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
        ],
        "selection": [StrOptions({"distribution", "confidence", "random"})],
        "warm_start": ["boolean"],
        "max_candidates_in_memory": [Interval(numbers.Integral, 1, None, closed="left")],
        "missing_label": [numbers.Real, str, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_iterations=5,
        n_pseudo=0.1,
        selection="distribution",
        validation_fraction=0.2,
        warm_start=False,
        max_candidates_in_memory=2**20,
        missing_label=-1,
        verbose=0,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_iterations = n_iterations
        self.n_pseudo = n_pseudo
        self.selection = selection
        self.validation_fraction = validation_fraction
        self.warm_start = warm_start
        self.max_candidates_in_memory = max_candidates_in_memory
        self.missing_label = missing_label
        self.verbose = verbose
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        if self.estimator is not None:
            inner = get_tags(self.estimator)
            tags.input_tags.sparse = inner.input_tags.sparse
            tags.input_tags.allow_nan = inner.input_tags.allow_nan
        return tags

    def _accept_sparse(self):
        return "csr" if self.__sklearn_tags__().input_tags.sparse else False

    def _base_estimator(self):
        if self.estimator is not None:
            return self.estimator
        from .neural import CrowdLayerClassifier

        # Shi, Li & Huang, section 3.1, after Rodrigues & Pereira (2018).
        return CrowdLayerClassifier(
            max_epochs=25, batch_size=512, lr=1e-3, optimizer__weight_decay=5e-4,
            train_split=None,
        )

    def _fit_crowd_model(self, model, X, votes, rng, *, refit):
        """Fit a fresh clone, or keep training ``model`` when warm-starting a refit."""
        if refit and self.warm_start:
            model.set_params(warm_start=True)
        else:
            model = clone(self._base_estimator())
            params = model.get_params(deep=False)
            # The crowd model sees class indices with -1 for missing (the protocol).
            overrides = {"missing_label": -1, "classes": np.arange(votes.n_classes)}
            if "random_state" in params:
                overrides["random_state"] = int(rng.randint(np.iinfo(np.int32).max))
            model.set_params(**{k: v for k, v in overrides.items() if k in params})
        dense = votes.n_tasks * votes.n_workers <= self.max_candidates_in_memory
        model.fit(X, votes.to_dense() if dense else votes.to_sparse())
        return model

    def _n_pseudo_per_round(self, n_candidates):
        if isinstance(self.n_pseudo, numbers.Integral):
            return int(self.n_pseudo)
        return max(1, int(self.n_pseudo * n_candidates))

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, X_val=None, y_val=None):
        """Fit the crowd model, then self-train it for ``n_iterations`` rounds.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_features)
            Features of the tasks.
        y : array-like or sparse matrix of shape (n_tasks, n_workers) or (n_tasks,)
            Votes (see :func:`skcrowd.check_votes`), ``-1`` for missing; 1-D is
            one vote per task.
        X_val : array-like of shape (n_valid, n_features), default=None
            Validation features, only to record ``valid_accuracy`` in
            ``history_`` (see Notes of the class).
        y_val : array-like of shape (n_valid,) or (n_valid, n_workers), default=None
            Gold labels of ``X_val`` (accuracy), or votes (tie-aware accuracy
            against their majority vote). A label that no vote in ``y`` has
            counts as a miss.

        Returns
        -------
        self : SelfCrowdClassifier
            The fitted estimator.
        """
        try:
            return self._fit(X, y, X_val, y_val)
        except BaseException:
            # KeyboardInterrupt included: no half-fitted estimator (n_features_in_ of this
            # call with estimator_ of an earlier one)
            for name in [name for name in vars(self) if name.endswith("_")]:
                delattr(self, name)
            raise

    def _fit(self, X, y, X_val, y_val):
        if self.warm_start and self.estimator is not None and (
            "warm_start" not in self.estimator.get_params(deep=False)
        ):
            raise ValueError(
                f"warm_start=True needs a crowd model with a warm_start parameter; "
                f"{type(self.estimator).__name__} has none."
            )
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None; "
                "pass the votes matrix as y."
            )
        X = validate_data(self, X, accept_sparse=self._accept_sparse(), ensure_all_finite=False)
        votes = check_votes(y, missing_label=self.missing_label, name="y (votes)")
        if votes.n_tasks != X.shape[0]:
            raise ValueError(
                f"X has {X.shape[0]} samples (tasks) but y (votes) has {votes.n_tasks} rows."
            )
        if (X_val is None) != (y_val is None):
            raise ValueError("Pass both X_val and y_val, or neither.")
        if X_val is not None:
            X_val = validate_data(
                self, X_val, accept_sparse=self._accept_sparse(), ensure_all_finite=False,
                reset=False,
            )
            val = check_votes(y_val, missing_label=self.missing_label, name="y_val")
            if val.n_tasks != X_val.shape[0]:
                raise ValueError(
                    f"X_val has {X_val.shape[0]} samples but y_val has {val.n_tasks} rows."
                )
            if (val.classes.dtype.kind in "USO") != (votes.classes.dtype.kind in "USO"):
                raise ValueError(
                    f"y_val has label {val.classes[0].item()!r}, of a different type than the "
                    f"labels of y (votes) {votes.classes.tolist()[:10]!r}."
                )
        classes = votes.classes
        n_classes = len(classes)
        rng = check_random_state(self.random_state)
        train, valid = self._held_out_tasks(votes, rng)
        work, X_work = (votes, X) if valid is None else (votes.take_tasks(train), X[train])
        held_out = None if valid is None else (X[valid], votes.take_tasks(valid).to_sparse())
        pool = _CandidatePool(work)
        n_select = self._n_pseudo_per_round(pool.n_free)
        added = {"task": [], "worker": [], "label": [], "iteration": []}  # tasks of `work`
        record = partial(self._record, votes=work, added=added, classes=classes,
                         X_val=X_val, y_val=y_val, held_out=held_out)

        model = self._fit_crowd_model(None, X_work, work, rng, refit=False)
        history = [record(0, model, "initial")]
        interrupted = getattr(model, "interrupted_", False)
        best = history[0].get("held_out_score")
        for iteration in range(1, self.n_iterations + 1):
            if pool.n_free == 0 or interrupted:
                break
            if self.selection == "random":
                flat, label = _select_at_random(
                    model, X_work, pool, n_select, n_classes, self.max_candidates_in_memory, rng
                )
            else:
                flat, label = _select_by_entropy(
                    model, X_work, pool, n_select, n_classes, self.max_candidates_in_memory,
                    per_class=self.selection == "distribution",
                )
            pool.add(flat)
            task, worker = np.divmod(flat, votes.n_workers)
            for key, value in zip(added, (task, worker, label, np.full(len(flat), iteration))):
                added[key].append(value)
            # a warm refit changes the model in place: keep a copy to undo the round
            previous = copy.deepcopy(model) if self.warm_start and held_out else model
            model = self._fit_crowd_model(model, X_work, _with_pseudo_votes(work, added), rng,
                                          refit=True)
            interrupted = getattr(model, "interrupted_", False)
            entry = record(iteration, model, "kept")
            fell = best is not None and entry["held_out_score"] < best
            if interrupted or fell:
                entry["status"] = "undone: " + (
                    "interrupted" if interrupted else "held-out score fell")
                history.append(entry)
                for value in added.values():
                    value.pop()
                model = previous
                break
            best = entry.get("held_out_score")
            history.append(entry)

        pseudo = {key: np.concatenate(value) if value else np.zeros(0, np.int64)
                  for key, value in added.items()}
        if held_out is not None:
            pseudo["task"] = train[pseudo["task"]]
            if not interrupted:
                # the crowd model of the last kept round, refitted on every task
                combined = _with_pseudo_votes(votes, {k: [v] for k, v in pseudo.items()})
                model = self._fit_crowd_model(model, X, combined, rng, refit=True)
        pseudo["label"] = classes[pseudo["label"]]
        # fitted attributes only now: an interrupt above leaves the estimator unfitted
        self.classes_ = classes
        self.estimator_ = model
        self.history_ = history
        self.n_iter_ = sum(entry["status"] == "kept" for entry in history)
        self.pseudo_annotations_ = pseudo
        return self

    def _held_out_tasks(self, votes, rng):
        """``(train, valid)`` tasks, stratified on the majority vote; valid None if unused."""
        if self.validation_fraction is None:
            return np.arange(votes.n_tasks), None
        counts = votes.counts()
        strata = np.where(counts.any(axis=1), counts.argmax(axis=1), -1)
        train, valid = holdout_tasks(votes.n_tasks, self.validation_fraction, strata, rng)
        if valid is None or np.isin(votes.task, valid).sum() == 0:
            return np.arange(votes.n_tasks), None  # nothing to score on
        return np.sort(train), np.sort(valid)

    def _record(self, iteration, model, status, *, votes, added, classes, X_val, y_val,
                held_out):
        """One ``history_`` entry, after ``iteration`` rounds."""
        n_classes = len(classes)
        labels = np.concatenate(added["label"]) if added["label"] else np.zeros(0, np.int64)
        this_round = added["label"][-1] if iteration else np.zeros(0, np.int64)
        selected = np.bincount(labels, minlength=n_classes)
        entry = {
            "iteration": iteration,
            "n_added": len(this_round),
            "n_added_per_class": np.bincount(this_round, minlength=n_classes),
            "imbalance_ratio_selected": (
                imbalance_ratio(class_counts=selected) if len(labels) else None
            ),
            "imbalance_ratio_combined": imbalance_ratio(
                class_counts=np.bincount(votes.label, minlength=n_classes) + selected
            ),
        }
        if held_out is not None:
            X_held_out, held_out_votes = held_out
            entry["held_out_score"] = mv_accuracy_score(
                held_out_votes, np.argmax(model.predict_proba(X_held_out), axis=1),
                classes=np.arange(n_classes),
            )
        entry["status"] = status
        if X_val is not None:
            predicted = classes[np.argmax(model.predict_proba(X_val), axis=1)]
            entry["valid_accuracy"] = mv_accuracy_score(
                y_val, predicted, missing_label=self.missing_label
            )
        if self.verbose:
            print(
                f"[SelfCrowd] iteration {iteration}: {entry['n_added']} pseudo-annotations "
                f"added, R selected={entry['imbalance_ratio_selected']}, "
                f"R combined={entry['imbalance_ratio_combined']:.4f}"
                + (f", held-out score={entry['held_out_score']:.4f}" if held_out else "")
                + (f", valid accuracy={entry['valid_accuracy']:.4f}" if X_val is not None else "")
                + f" ({status})"
            )
        return entry

    def predict_proba(self, X):
        """Class probabilities from the final crowd model (the crowd layer's bottleneck).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, accept_sparse=self._accept_sparse(), ensure_all_finite=False, reset=False
        )
        # numpy even for a DataFrame X (unlike the aggregators): scikit-learn's scorers take
        # predict_proba(X)[:, 1] on binary problems (roc_auc, neg_log_loss), which a DataFrame
        # rejects. See "In a notebook" in doc/aggregation.rst.
        return np.asarray(self.estimator_.predict_proba(X))

    def predict(self, X):
        """Most probable class of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def score(self, X, y):
        """Tie-aware accuracy of ``predict(X)`` against the majority vote of ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples, n_workers) or (n_samples,)
            Votes (``-1`` missing) or gold labels; tasks without votes are skipped.

        Returns
        -------
        score : float
            See :func:`skcrowd.metrics.mv_accuracy_score`.
        """
        check_not_long_format(y, "y")
        return mv_accuracy_score(
            y, self.predict(X), missing_label=self.missing_label, classes=self.classes_
        )


def _with_pseudo_votes(votes, added):
    """Observed votes plus all pseudo-annotations so far, as task-sorted :class:`Votes`."""
    task = np.concatenate([votes.task, *added["task"]])
    order = np.argsort(task, kind="stable")
    return Votes(
        task=task[order],
        worker=np.concatenate([votes.worker, *added["worker"]])[order],
        label=np.concatenate([votes.label, *added["label"]])[order],
        n_tasks=votes.n_tasks,
        n_workers=votes.n_workers,
        classes=votes.classes,
    )
