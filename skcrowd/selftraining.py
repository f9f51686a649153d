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
from .base import FeatureModelMixin, _as_it_was_on_error
from .metrics import imbalance_ratio, mv_accuracy_score
from .votes import Votes, check_votes

__all__ = ["SelfCrowdClassifier", "distribution_aware_quotas", "paper_crowd_model"]


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


class SelfCrowdClassifier(FeatureModelMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
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
    tasks, and each round's model is compared with the starting model (the
    crowd model fitted on the votes alone) on the same held-out tasks,
    paired: on each held-out task, the mean log-probability of its votes
    when the model's class probabilities go through the *start's* annotator
    confusion matrices (``annotator_confusions_``; a crowd model without
    them: its own ``predict_annotator_proba``; with
    ``check_score="agreement"``, the share of its votes that the predicted
    class matches), the round's minus the start's. A fixed annotator model
    matters: each round's own was fitted to its pseudo-annotations, and
    scored the held-out votes lower while test accuracy rose by 13 points on
    a simulated crowd. A round counts as a gain only when the one-sided
    lower confidence bound (level ``check_confidence``) of the mean paired
    difference is above zero; the loop stops after a round whose upper bound
    is below zero (surely worse than the start). The round with the highest
    bound is chosen (with the rounds before it) and the later ones are
    undone. The choice is then confirmed on fresh fits, as the start is one
    draw of the crowd model and the best of several rounds is partly luck:
    the crowd model is fitted twice more on the same tasks, with the final
    seed and the first fit's settings, on the votes alone and with the chosen
    pseudo-annotations, and the second must beat the first by the same
    paired bound, through the first's annotator model (``final_check_``).
    Without it, on LabelMe with 30 % of its votes removed, four rounds beat a
    start, and the refit on every task scored 0.738 against the crowd
    layer's 0.832. When confirmed, the crowd model is refitted on every task
    with all observed votes, the kept pseudo-annotations and the first fit's
    settings. When no round is a sure gain, or the final check fails, every
    round is undone and the result is the crowd model fitted on every task's
    votes alone, with the same ``random_state``: Self-Crowd then ends exactly
    where its crowd model does.

    Parameters
    ----------
    estimator : estimator, default=None
        The crowd model, cloned before fitting. It must follow the protocol of
        :mod:`skcrowd.selftraining`: ``fit(X, votes)``, ``predict_proba(X)``
        and ``predict_annotator_proba(X, workers=None)``. None means
        :class:`~skcrowd.neural.CrowdLayerClassifier` with its defaults (needs
        torch and skorch): learning rate and weight decay chosen by its first
        fit on its own held-out tasks, then kept for the rounds, the final
        check and, when a round is kept, the final refit; epochs chosen on
        held-out votes. The paper's setup (25 epochs of batch 512, learning
        rate 1e-3, weight decay 5e-4, no validation) is
        :func:`paper_crowd_model`: on 700 tasks it trains about 50 steps and
        scored 0.34 on a simulated crowd where the default scores 0.75. The parameters
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
    check_confidence : float in (0, 1), default=0.9
        Level of the one-sided lower confidence bound (normal approximation)
        on the paired held-out gain of a round over the start that must be
        above zero for the round to be kept.
    check_score : {"likelihood", "agreement"}, default="likelihood"
        Per held-out task score of the check: the mean log-probability of
        its votes (through the start's annotator model, see above), or the
        share of its votes that the predicted class matches. On 240 simulated
        sparse crowds the likelihood was both safer (worst draw -4.3 points
        against -7.4) and kept more gains (best case mean +6.0 against +4.8).
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
        when tasks are held out, ``held_out_score`` (the mean of the
        ``check_score`` over the held-out tasks), and from round 1
        ``held_out_gain`` (its mean paired difference from the start's),
        ``held_out_gain_bound`` and ``held_out_gain_upper`` (the lower and
        upper confidence bounds of that gain);
        ``status`` (``"initial"``, ``"kept"``, ``"undone: not surely better
        than the start"``, ``"undone: not confirmed by the final check"`` or
        ``"undone: interrupted"``, see Notes); and
        ``valid_accuracy`` when ``X_val`` and ``y_val`` are passed to ``fit``.
        Counts and ratios are those of the tasks the rounds train on.
        ``pandas.DataFrame(history_)`` gives a table.
    final_check_ : dict or None
        The confirmation of the chosen rounds on two fresh fits (see above):
        ``held_out_gain``, ``held_out_gain_bound`` and ``held_out_gain_upper``
        of the fit with the chosen pseudo-annotations over the fit on the
        votes alone, and ``status`` (``"kept"`` or ``"undone"``; only
        ``"interrupted"`` when either fit was). None when no round was chosen
        or nothing was held out.
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
    refit (during the final check: the rounds chosen, unconfirmed, without
    the final refit). An interrupt anywhere else in ``fit`` (or any other error)
    leaves the estimator as it was before the call (fitted earlier, or
    unfitted), never half-fitted.

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
    ...                           validation_fraction=None, random_state=0).fit(X, votes)
    >>> [h["n_added"] for h in clf.history_]
    [0, 20, 20]
    >>> clf.pseudo_annotations_["task"].shape
    (40,)
    >>> float(clf.score(X, votes)) > 0.9
    True

    With the default check, a round is kept only if it predicts the held-out
    tasks' votes surely better than the start (their mean log-probability,
    paired by task, with a lower confidence bound above zero); the
    agreement score sees no change here (the rounds change no held-out
    prediction), so it keeps no round:

    >>> checked = SelfCrowdClassifier(CopyCrowd(), n_iterations=2, n_pseudo=20,
    ...                               random_state=0).fit(X, votes)
    >>> [round(h["held_out_gain"], 3) for h in checked.history_[1:]], checked.n_iter_
    ([0.007, 0.017], 2)
    >>> checked.set_params(check_score="agreement").fit(X, votes).n_iter_
    0
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
        "check_confidence": [Interval(RealNotInt, 0, 1, closed="neither")],
        "check_score": [StrOptions({"likelihood", "agreement"})],
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
        check_confidence=0.9,
        check_score="likelihood",
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
        self.check_confidence = check_confidence
        self.check_score = check_score
        self.warm_start = warm_start
        self.max_candidates_in_memory = max_candidates_in_memory
        self.missing_label = missing_label
        self.verbose = verbose
        self.random_state = random_state

    _n_tasks_mismatch = "X has {n_samples} samples (tasks) but y (votes) has {n_tasks} rows."

    def _input_tags(self, tags):
        # X is validated here as a numeric array: of the crowd model's input tags, only
        # whether it takes a sparse X, or NaN, carries over (the default crowd model,
        # CrowdLayerClassifier, takes a sparse X)
        if self.estimator is None:
            return super()._input_tags(tags)
        inner = get_tags(self.estimator).input_tags
        tags.sparse, tags.allow_nan = inner.sparse, inner.allow_nan
        return tags

    def _accept_sparse(self):
        return "csr" if self.__sklearn_tags__().input_tags.sparse else False

    def _base_estimator(self):
        if self.estimator is not None:
            return self.estimator
        from .neural import CrowdLayerClassifier

        # skcrowd's crowd layer with its defaults: the paper's setup (paper_crowd_model, 25
        # epochs of batch 512) trains about 50 steps on 700 tasks and started self-training
        # from 0.34 where CrowdLayerClassifier() scores 0.75 (benchmarks/selfcrowd_sparse.py)
        return CrowdLayerClassifier()

    def _fit_crowd_model(self, model, X, votes, rng, *, warm, settings, seed=None):
        """Fit a fresh clone, or keep training ``model`` when ``warm`` and warm-starting.

        ``settings``: the clone takes the settings the first fit chose
        (``_round_settings``) instead of choosing its own.
        """
        if warm and self.warm_start:
            model.set_params(warm_start=True)
        else:
            model = clone(self._base_estimator())
            params = model.get_params(deep=False)
            # The crowd model sees class indices with -1 for missing (the protocol).
            overrides = {"missing_label": -1, "classes": np.arange(votes.n_classes)}
            if settings:
                overrides.update(self._round_settings)
            if "random_state" in params:
                overrides["random_state"] = (
                    int(rng.randint(np.iinfo(np.int32).max)) if seed is None else seed)
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
        with _as_it_was_on_error(self):  # KeyboardInterrupt included
            return self._fit(X, y, X_val, y_val)

    def _fit(self, X, y, X_val, y_val):
        if self.warm_start and self.estimator is not None and (
            "warm_start" not in self.estimator.get_params(deep=False)
        ):
            raise ValueError(
                f"warm_start=True needs a crowd model with a warm_start parameter; "
                f"{type(self.estimator).__name__} has none."
            )
        X, _, votes = self._check_features_and_votes(
            X, y, name="y (votes)", accept_sparse=self._accept_sparse(), ensure_all_finite=False)
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
        # the final crowd model's seed: an int random_state is handed on as is, so that a fit
        # that keeps no round ends with exactly the crowd model fitted on the votes alone
        if isinstance(self.random_state, numbers.Integral):
            final_seed = int(self.random_state)
        else:
            final_seed = int(rng.randint(np.iinfo(np.int32).max))
        train, valid = self._held_out_tasks(votes, rng)
        work, X_work = (votes, X) if valid is None else (votes.take_tasks(train), X[train])
        held_out = None if valid is None else (X[valid], votes.take_tasks(valid))
        pool = _CandidatePool(work)
        n_select = self._n_pseudo_per_round(pool.n_free)
        added = {"task": [], "worker": [], "label": [], "iteration": []}  # tasks of `work`
        record = partial(self._record, votes=work, added=added, classes=classes,
                         X_val=X_val, y_val=y_val, held_out=held_out)

        model = self._fit_crowd_model(None, X_work, work, rng, warm=False, settings=False,
                                      seed=final_seed if held_out is None else None)
        # the rounds keep the settings the first fit chose ("auto" learning rate...)
        self._round_settings = {
            name: getattr(model, name + "_") for name in ("lr", "weight_decay")
            if hasattr(model, name + "_") and isinstance(
                self._base_estimator().get_params(deep=False).get(name), str)
        }
        history = [record(0, model, "initial", start=None)]
        start = history[0].pop("_task_scores", None)
        interrupted = getattr(model, "interrupted_", False)
        start_model = kept_model = model
        kept_rounds, best_bound = 0, 0.0
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
            if self.warm_start and held_out is not None and kept_model is model:
                kept_model = copy.deepcopy(model)
                start_model = kept_model if start_model is model else start_model
            model = self._fit_crowd_model(model, X_work, _with_pseudo_votes(work, added), rng,
                                          warm=True, settings=True)
            interrupted = getattr(model, "interrupted_", False)
            entry = record(iteration, model, "kept", start=start)
            entry.pop("_task_scores", None)
            history.append(entry)
            if interrupted:
                entry["status"] = "undone: interrupted"
                break
            if held_out is None:
                kept_model, kept_rounds = model, iteration
                continue
            if entry["held_out_gain_bound"] > best_bound:
                kept_model, kept_rounds = model, iteration
                best_bound = entry["held_out_gain_bound"]
            if entry["held_out_gain_upper"] < 0:
                break  # surely below the start: later rounds would learn from worse labels
        final_check = None
        if held_out is not None and kept_rounds and not interrupted:
            final_check = self._final_check(X_work, work, added, kept_rounds, held_out, rng,
                                            final_seed)
            interrupted = final_check.pop("interrupted")
            if not interrupted and final_check["status"] != "kept":
                kept_model, kept_rounds = start_model, 0
        for entry in history[kept_rounds + 1:]:
            if entry["status"] == "kept":
                entry["status"] = "undone: " + (
                    "interrupted" if held_out is None else
                    "not confirmed by the final check" if final_check and not interrupted
                    else "not surely better than the start")
        keep = np.concatenate(added["iteration"]) <= kept_rounds if added["iteration"] else []
        pseudo = {key: np.concatenate(value)[keep] if value else np.zeros(0, np.int64)
                  for key, value in added.items()}
        model = kept_model
        if held_out is not None:
            pseudo["task"] = train[pseudo["task"]]
            if not interrupted:
                # the crowd model refitted on every task, with the kept pseudo-annotations and
                # the settings the final check confirmed them with; without any, exactly the
                # crowd model fitted on the votes alone
                combined = _with_pseudo_votes(votes, {k: [v] for k, v in pseudo.items()})
                model = self._fit_crowd_model(model, X, combined, rng, warm=True,
                                              settings=kept_rounds > 0, seed=final_seed)
        pseudo["label"] = classes[pseudo["label"]]
        self.classes_ = classes
        self.estimator_ = model
        self.history_ = history
        self.n_iter_ = sum(entry["status"] == "kept" for entry in history)
        self.pseudo_annotations_ = pseudo
        self.final_check_ = final_check
        return self

    def _final_check(self, X_work, work, added, kept_rounds, held_out, rng, seed):
        """Confirm the kept pseudo-annotations on two fresh fits, paired on the held-out tasks.

        The rounds are judged against one draw of the crowd model (the start),
        and the round with the highest bound is chosen among several: a start
        that happened to be a poor draw, or the luck of the chosen round,
        lets through pseudo-annotations that teach less than the votes alone.
        So the crowd model is fitted twice more on the same tasks with the
        final seed and the rounds' settings, on the votes alone and with the
        kept pseudo-annotations, and the second must be surely better than the
        first by the same paired bound, through the first's annotator model.
        """
        keep = np.concatenate(added["iteration"]) <= kept_rounds
        kept = {key: [np.concatenate(value)[keep]] for key, value in added.items()}
        alone = self._fit_crowd_model(None, X_work, work, rng, warm=False, settings=True,
                                      seed=seed)
        taught = self._fit_crowd_model(None, X_work, _with_pseudo_votes(work, kept), rng,
                                       warm=False, settings=True, seed=seed)
        if getattr(alone, "interrupted_", False) or getattr(taught, "interrupted_", False):
            return {"interrupted": True, "status": "interrupted"}
        confusions = getattr(alone, "annotator_confusions_", None)
        confusions = None if confusions is None else np.asarray(confusions)
        gain, bound, upper = self._paired_gain(
            self._held_out_scores(taught, held_out, confusions)
            - self._held_out_scores(alone, held_out, confusions))
        return {"interrupted": False, "held_out_gain": gain, "held_out_gain_bound": bound,
                "held_out_gain_upper": upper, "status": "kept" if bound > 0 else "undone"}

    def _held_out_scores(self, model, held_out, confusions):
        """Per held-out task with votes, the ``check_score`` of ``model`` (see the class)."""
        X_held_out, held_out_votes = held_out
        if self.check_score == "agreement":
            predicted = np.argmax(model.predict_proba(X_held_out), axis=1)
            return _vote_agreement(held_out_votes.counts(), predicted)
        if confusions is not None:
            return _vote_log_likelihood_through(
                model.predict_proba(X_held_out), confusions, held_out_votes)
        return _vote_log_likelihood(model, X_held_out, held_out_votes,
                                    len(held_out_votes.classes), self.max_candidates_in_memory)

    def _paired_gain(self, difference):
        """Mean of the paired differences, with its lower and upper ``check_confidence`` bounds."""
        gain = float(difference.mean())
        if len(difference) < 2:
            return gain, -np.inf, np.inf
        half = _normal_quantile(self.check_confidence) * difference.std(ddof=1) / np.sqrt(
            len(difference))
        return gain, float(gain - half), float(gain + half)

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
                held_out, start):
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
            if start is None:  # the start's annotator model scores every round's votes
                confusions = getattr(model, "annotator_confusions_", None)
                start = {"confusions": None if confusions is None else np.asarray(confusions)}
            scores = self._held_out_scores(model, held_out, start["confusions"])
            entry["held_out_score"] = float(scores.mean())
            if "scores" not in start:
                start["scores"] = scores
                entry["_task_scores"] = start
            else:
                entry["held_out_gain"], entry["held_out_gain_bound"], entry[
                    "held_out_gain_upper"] = self._paired_gain(scores - start["scores"])
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
                + (f", gain over the start={entry['held_out_gain']:+.4f} (bound "
                   f"{entry['held_out_gain_bound']:+.4f})" if "held_out_gain" in entry else "")
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


def paper_crowd_model():
    """The crowd model of Self-Crowd's paper (section 3.1, after Rodrigues & Pereira, 2018).

    A :class:`~skcrowd.neural.CrowdLayerClassifier` ("MW" crowd layer, MLP
    with 128 ReLU units and dropout 0.5) trained with Adam, learning rate
    1e-3, L2 weight decay 5e-4, batch size 512, 25 epochs, nothing held out.
    :class:`SelfCrowdClassifier`'s default is ``CrowdLayerClassifier()``
    instead: these 25 epochs of batch 512 are about 50 optimizer steps on
    700 tasks, too few for a small crowd.

    Returns
    -------
    CrowdLayerClassifier
        Unfitted.

    Examples
    --------
    >>> from skcrowd.selftraining import paper_crowd_model
    >>> net = paper_crowd_model()
    >>> net.max_epochs, net.batch_size, net.lr, net.optimizer__weight_decay
    (25, 512, 0.001, 0.0005)
    """
    from .neural import CrowdLayerClassifier

    return CrowdLayerClassifier(max_epochs=25, batch_size=512, lr=1e-3,
                                optimizer__weight_decay=5e-4, train_split=None)


def _vote_log_likelihood(model, X, votes, n_classes, budget):
    """Per task with votes: the mean log-probability of its votes under the crowd model.

    Each vote ``y_ij`` scores ``log p(y_ij | x_i)``, worker ``j``'s annotation
    distribution from the model's ``predict_annotator_proba`` (its own noise
    model); scored block by block within the memory budget.
    """
    total = np.zeros(votes.n_tasks)
    for tasks, workers in _blocks(votes.n_tasks, votes.n_workers, budget):
        inside = ((votes.task >= tasks.start) & (votes.task < tasks.stop)
                  & (votes.worker >= workers.start) & (votes.worker < workers.stop))
        if not inside.any():
            continue
        proba = _annotator_proba(model, X[tasks], workers, n_classes)
        task, worker, label = votes.task[inside], votes.worker[inside], votes.label[inside]
        p = proba[task - tasks.start, worker - workers.start, label]
        np.add.at(total, task, np.log(np.clip(p, 1e-12, None)))
    n_votes = np.bincount(votes.task, minlength=votes.n_tasks)
    voted = n_votes > 0
    return total[voted] / n_votes[voted]


def _vote_log_likelihood_through(proba, confusions, votes):
    """Per task with votes: the mean log-probability of its votes when the class
    probabilities ``proba`` go through fixed confusion matrices (rows: true class)."""
    p = np.einsum("vk,vk->v", proba[votes.task], confusions[votes.worker, :, votes.label])
    total = np.bincount(votes.task, np.log(np.clip(p, 1e-12, None)), minlength=votes.n_tasks)
    n_votes = np.bincount(votes.task, minlength=votes.n_tasks)
    voted = n_votes > 0
    return total[voted] / n_votes[voted]


def _vote_agreement(counts, predicted):
    """Per task with votes: the share of its votes that agree with the predicted class."""
    n_votes = counts.sum(axis=1)
    voted = n_votes > 0
    return counts[voted, predicted[voted]] / n_votes[voted]


def _normal_quantile(confidence):
    """The standard normal quantile of ``confidence`` (one-sided bound)."""
    from scipy.stats import norm

    return float(norm.ppf(confidence))


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
