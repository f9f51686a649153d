"""WAUMPruner: rank crowdsourced tasks by (W)AUM and drop the most ambiguous ones."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.neural_network import MLPClassifier
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_memory

from ..base import FeatureModelMixin, _as_it_was_on_error
from ..votes import Votes
from ._aum import MARGIN_KINDS, _check_margin_kind, _fill_unscored, _trust_at, weighted_aum
from ._margin_training import check_margin_estimator, record_margins

__all__ = ["WAUMPruner"]

# fitted attributes set by one method only
_METHOD_ATTRIBUTES = (
    "aumc_", "waum_", "aum_", "trust_scores_", "vote_tasks_", "vote_workers_", "aggregator_",
)


def _take_rows(data, rows):
    """Rows of ``data`` in its own container (array, list, DataFrame, sparse)."""
    if sp.issparse(data):
        return data[rows] if data.format in ("csr", "csc") else data.tocsr()[rows]
    if not (hasattr(data, "iloc") or isinstance(data, (np.ndarray, list))):
        data = np.asarray(data)
    return _safe_indexing(data, rows)


def default_margin_estimator(random_state=None):
    """The margin model used when none is given: the (30, 20, 20) MLP of the paper's simulations.

    Adam's step is raised to 0.01: with one ``partial_fit`` pass per epoch and
    scikit-learn's batches of up to 200 rows, the default 0.001 leaves the
    margins of a small dataset near zero for all ``n_epochs``.
    """
    return MLPClassifier(
        hidden_layer_sizes=(30, 20, 20), learning_rate_init=0.01, random_state=random_state
    )


def keep_all_but_lowest(scores, has_votes, alpha):
    """Support mask that drops exactly ``floor(alpha * n)`` lowest-ranked tasks.

    Tasks are ranked by ``(has_votes, score, index)``: tasks without votes
    first, then by increasing score, ties by task index (a stable sort). A
    rule ``score < quantile`` would drop every tied task at once.

    Returns the mask and the threshold: the score of the lowest-ranked kept task.
    """
    n = len(scores)
    n_prune = math.floor(round(alpha * n, 9))
    order = np.lexsort((scores, has_votes))
    support = np.ones(n, dtype=bool)
    support[order[:n_prune]] = False
    return support, float(scores[order[n_prune]])


class WAUMPruner(FeatureModelMixin, BaseEstimator):
    """Find the most ambiguous crowdsourced tasks and prune them (a sampler).

    Trains a classifier (the *margin model*) for ``n_epochs`` epochs on one
    row per observed vote, ``(x_task, label)``, records after every epoch the
    margin of each vote's label, and averages it into each vote's area under
    the margin (AUM). The WAUM of a task (eq. 4 of Lefort et al., 2024) weighs
    the AUMs of its votes by trust scores ``<diag(pi_j), sigma^(T)(x_i)>``
    (eq. 5), from each worker's confusion matrix ``pi_j`` (estimated by
    ``aggregator``) and the margin model's last-epoch probabilities. The
    ``floor(alpha * n_tasks)`` tasks with the lowest score are pruned.

    **A sampler, not a transformer.** Dropping training rows changes ``X`` and
    ``y`` together, which a scikit-learn transformer cannot do (and a no-op
    ``transform`` at predict time would be a lie), so ``WAUMPruner`` has
    ``fit`` and ``fit_resample`` and no ``transform``. It is a valid step of
    imbalanced-learn's ``Pipeline``; with scikit-learn's ``Pipeline`` and
    ``GridSearchCV`` wrap the model in :class:`PrunedClassifier` instead.

    Parameters
    ----------
    alpha : float in [0, 1), default=0.01
        Fraction of tasks pruned: exactly ``floor(alpha * n_tasks)`` tasks,
        those with the lowest score (ties broken by task index).
    margin_estimator : estimator, default=None
        The margin model, stepped one epoch at a time: an estimator with
        ``partial_fit`` and ``predict_proba`` (one ``partial_fit`` call is one
        epoch), or a skorch ``NeuralNetClassifier`` (fitted with
        ``train_split=None`` and a callback recording each epoch). It is
        trained on class indices ``0 .. n_classes - 1``. ``None``: an
        ``MLPClassifier(hidden_layer_sizes=(30, 20, 20), learning_rate_init=0.01)``,
        the network of the paper's simulations.
    aggregator : estimator, default=None
        Fitted on the votes (as its ``X``) to estimate each worker's
        ``confusion_matrices_`` (n_workers, n_classes, n_classes), rows = true
        class. ``None``: :class:`skcrowd.DawidSkene`. Unused with
        ``method="aumc"``.
    n_epochs : int, default=50
        Number of epochs ``T`` the margins are averaged over. Keep it below
        the point where the margin model memorizes its training labels.
    method : {"waum", "aumc", "worker-wise"}, default="waum"
        ``"waum"``: one margin model on all votes (algorithm 1). ``"aumc"``:
        the AUM of the majority-vote label (eq. 3; ties go to the smaller class
        index), the model being trained on one majority-vote row per task.
        ``"worker-wise"``: one fresh margin model per worker, trained on that
        worker's votes only (algorithm 4; ``n_workers`` times the cost).
    margin : {"top-k", "pleiss"}, default="top-k"
        Margin of a label: ``sigma_y - sigma_[top_k + 1]`` (eq. 2, Yang &
        Koyejo) or ``sigma_y - (top_k-th largest other sigma)`` (Pleiss et al.),
        see :func:`margins`.
    top_k : int, default=1
        ``k`` of the margin; must be below the number of classes.
    logits : bool, default=False
        Margins on logits instead of softmax probabilities: the model's
        ``decision_function`` when it has one, else its log-probabilities
        (the logits up to a per-row shift, which margins ignore).
    memory : str, joblib.Memory or None, default=None
        Caches the margin training (the expensive part) like ``Pipeline``'s
        ``memory``: refitting with another ``alpha`` on the same data reuses
        it, so a grid over ``alpha`` trains the margin model once per fold.
    random_state : int, RandomState instance or None, default=None
        Seeds the margin model (its ``random_state`` parameter, or torch's
        generator for a skorch net) and the aggregator.
    verbose : int, default=0
        Progress of the margin model's training: when positive, one line per
        epoch with the mean margin of the labels at that epoch.
        ``method="worker-wise"`` prints one line per worker's model, and its
        epochs from ``verbose=2``. A cached training (``memory``) prints
        nothing. The aggregator has its own ``verbose``.

    Attributes
    ----------
    waum_ : ndarray of shape (n_tasks,)
        WAUM of each task (methods ``"waum"`` and ``"worker-wise"``). A task
        without votes gets a score below every other, see :func:`weighted_aum`.
    aumc_ : ndarray of shape (n_tasks,)
        AUM of each task's majority-vote label (method ``"aumc"``).
    aum_ : ndarray of shape (n_votes,)
        AUM of each observed vote (waum methods); the vote of worker
        ``vote_workers_[v]`` on task ``vote_tasks_[v]``.
    trust_scores_ : ndarray of shape (n_votes,)
        Trust score (eq. 5) of each observed vote (waum methods).
    vote_tasks_, vote_workers_ : ndarray of shape (n_votes,)
        Task and worker of each entry of ``aum_`` and ``trust_scores_``.
    aggregator_ : estimator
        The fitted aggregator (waum methods).
    threshold_ : float
        Score of the lowest-ranked kept task: pruned tasks score at most
        ``threshold_``, kept tasks at least ``threshold_``.
    support_ : ndarray of shape (n_tasks,), dtype bool
        True for kept tasks.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    PrunedClassifier : prune, then fit a classifier on the kept tasks.
    weighted_aum, trust_scores, margins : the scores as functions.

    References
    ----------
    T. Lefort, B. Charlier, A. Joly and J. Salmon, "Identify ambiguous tasks
    combining crowdsourced labels by weighting Areas Under the Margin", TMLR
    2024. G. Pleiss, T. Zhang, E. Elenberg and K. Q. Weinberger, "Identifying
    mislabeled data using the area under the margin ranking", NeurIPS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.pruning import WAUMPruner
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(40, 2))
    >>> truth = (X[:, 0] > 0).astype(int)
    >>> votes = np.column_stack([truth, truth, truth])
    >>> votes[:4, 1:] = 1 - truth[:4, None]        # tasks 0-3: two of three disagree
    >>> pruner = WAUMPruner(alpha=0.1, method="aumc", n_epochs=20, random_state=0)
    >>> X_kept, votes_kept = pruner.fit_resample(X, votes)
    >>> X_kept.shape, int((~pruner.support_).sum())
    ((36, 2), 4)
    >>> sorted(np.flatnonzero(~pruner.support_).tolist())
    [0, 1, 2, 3]
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, 1, closed="left")],
        "margin_estimator": [HasMethods(["fit", "predict_proba"]), None],
        "aggregator": [HasMethods(["fit"]), None],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions({"waum", "aumc", "worker-wise"})],
        "margin": [StrOptions(set(MARGIN_KINDS))],
        "top_k": [Interval(Integral, 1, None, closed="left")],
        "logits": ["boolean"],
        "memory": [None, str, HasMethods(["cache"])],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        alpha=0.01,
        *,
        margin_estimator=None,
        aggregator=None,
        n_epochs=50,
        method="waum",
        margin="top-k",
        top_k=1,
        logits=False,
        memory=None,
        random_state=None,
        verbose=0,
    ):
        self.alpha = alpha
        self.margin_estimator = margin_estimator
        self.aggregator = aggregator
        self.n_epochs = n_epochs
        self.method = method
        self.margin = margin
        self.top_k = top_k
        self.logits = logits
        self.memory = memory
        self.random_state = random_state
        self.verbose = verbose

    _n_tasks_mismatch = (
        "X has {n_samples} rows (tasks) but y (votes) has {n_tasks}; give one row of votes per "
        "task."
    )

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Score every task and choose the tasks to keep.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_features)
            Features of the tasks.
        y : array-like or sparse matrix of shape (n_tasks, n_workers)
            The votes matrix (-1 for missing, see :func:`skcrowd.check_votes`);
            a 1-D ``y`` is one vote per task.

        Returns
        -------
        self : WAUMPruner
            Fitted pruner.
        """
        with _as_it_was_on_error(self):
            X, _, votes = self._check_features_and_votes(X, y, accept_sparse=("csr", "csc"))
            if votes.n_classes < 2:
                raise ValueError(
                    f"y (votes) has one class only, {votes.classes.tolist()!r}; margins need at "
                    "least two classes."
                )
            _check_margin_kind(self.margin, self.top_k, votes.n_classes)
            rng = check_random_state(self.random_state)
            seed = None if self.random_state is None else int(rng.randint(np.iinfo(np.int32).max))
            # verbose changes only the printing: a cached training serves every verbose level
            record = check_memory(self.memory).cache(record_margins, ignore=["verbose"])
            options = dict(
                n_epochs=self.n_epochs, kind=self.margin, top_k=self.top_k, logits=self.logits,
                seed=seed, verbose=self.verbose,
            )
            model = self._margin_model(seed)
            has_votes = votes.votes_per_task() > 0
            for name in _METHOD_ATTRIBUTES:  # forget what a fit with another method left
                self.__dict__.pop(name, None)
            if self.method == "aumc":
                voted = np.flatnonzero(has_votes)
                majority = Votes(
                    task=np.arange(len(voted), dtype=np.int64),
                    worker=np.zeros(len(voted), dtype=np.int64),
                    label=votes.counts()[voted].argmax(axis=1),
                    n_tasks=len(voted),
                    n_workers=1,
                    classes=votes.classes,
                )
                aum, _ = record(model, _safe_indexing(X, voted), majority, **options)
                aumc = np.zeros(votes.n_tasks)
                aumc[voted] = aum
                self.aumc_ = scores = _fill_unscored(aumc, has_votes)
            else:
                diagonals = self._worker_reliability(votes, seed)
                aum, final_proba = record(
                    model, X, votes, per_worker=self.method == "worker-wise", **options
                )
                self.aum_ = aum
                self.trust_scores_ = _trust_at(final_proba, votes.worker, diagonals)
                self.vote_tasks_, self.vote_workers_ = votes.task, votes.worker
                self.waum_ = scores = weighted_aum(aum, self.trust_scores_, votes)
            self.support_, self.threshold_ = keep_all_but_lowest(scores, has_votes, self.alpha)
            self._warn_lost_classes(votes)
            return self

    def fit_resample(self, X, y):
        """Fit, then return the kept tasks' rows of ``X`` and ``y``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_features)
            Features of the tasks.
        y : array-like or sparse matrix of shape (n_tasks, n_workers)
            The votes matrix.

        Returns
        -------
        X_kept : array-like or sparse matrix of shape (n_kept, n_features)
            Rows of ``X`` (same type) for the kept tasks, in their order.
        y_kept : array-like or sparse matrix of shape (n_kept, n_workers)
            Rows of ``y`` (same type) for the kept tasks.
        """
        self.fit(X, y)
        kept = np.flatnonzero(self.support_)
        return _take_rows(X, kept), _take_rows(y, kept)

    def _margin_model(self, seed):
        if self.margin_estimator is None:
            return default_margin_estimator(seed)
        check_margin_estimator(self.margin_estimator)
        model = clone(self.margin_estimator)
        if seed is not None and "random_state" in model.get_params(deep=False):
            model.set_params(random_state=seed)
        return model

    def _worker_reliability(self, votes, seed):
        """Fit the aggregator; return the diagonals of its confusion matrices."""
        if self.aggregator is None:
            from ..aggregation import DawidSkene

            aggregator = DawidSkene()
        else:
            aggregator = clone(self.aggregator)
        if seed is not None and "random_state" in aggregator.get_params(deep=False):
            aggregator.set_params(random_state=seed)
        # class indices 0..K-1 as labels: the aggregator's classes match the margins'
        aggregator.fit(votes.to_sparse())
        pi = getattr(aggregator, "confusion_matrices_", None)
        if pi is None:
            raise TypeError(
                f"aggregator {aggregator!r} has no confusion_matrices_ after fit; the WAUM's trust "
                "scores need per-worker confusion matrices (e.g. DawidSkene)."
            )
        pi = np.asarray(pi, dtype=np.float64)
        expected = (votes.n_workers, votes.n_classes, votes.n_classes)
        if pi.shape != expected:
            raise ValueError(
                f"aggregator.confusion_matrices_ has shape {pi.shape}; expected {expected} "
                "(n_workers, n_classes, n_classes) for these votes."
            )
        self.aggregator_ = aggregator
        return np.diagonal(pi, axis1=1, axis2=2)

    def _warn_lost_classes(self, votes):
        kept_votes = self.support_[votes.task]
        left = np.bincount(votes.label[kept_votes], minlength=votes.n_classes)
        lost = votes.classes[left == 0]
        if len(lost):
            warnings.warn(
                f"pruning removes every vote for class(es) {lost.tolist()!r}; a model fitted on "
                "the kept tasks will not know them. Lower alpha.",
                UserWarning,
                stacklevel=3,
            )
