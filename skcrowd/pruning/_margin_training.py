"""Training a margin model epoch by epoch and recording the margins of given labels.

The area under the margin (AUM) of a (task, label) pair is the mean, over the
``T`` training epochs of a classifier, of the margin of that label in the
classifier's scores for the task (algorithm 5 of Lefort et al., TMLR 2024).
The classifier (the *margin model*) is trained on one row per observed vote,
``(x_task, label)``, and after each epoch its scores on the tasks are recorded.

Two kinds of margin models are stepped one epoch at a time:

- any estimator with ``partial_fit`` and ``predict_proba`` (scikit-learn's
  ``MLPClassifier``, ``SGDClassifier(loss="log_loss")``, ...): one
  ``partial_fit`` call is one epoch;
- a skorch net (``NeuralNetClassifier``): fitted once for ``n_epochs`` epochs
  with a callback that records the scores at the end of each epoch. torch and
  skorch are imported only on this path.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples

from ._aum import _margins_at


def is_skorch_net(estimator):
    """Whether ``estimator`` is a skorch net (without importing skorch)."""
    return any(cls.__module__.split(".")[0] == "skorch" for cls in type(estimator).__mro__)


def check_margin_estimator(estimator):
    """Raise a TypeError unless ``estimator`` can be stepped one epoch at a time."""
    if is_skorch_net(estimator):
        return
    missing = [m for m in ("partial_fit", "predict_proba") if not hasattr(estimator, m)]
    if missing:
        raise TypeError(
            f"margin_estimator {estimator!r} lacks {' and '.join(missing)}: use an estimator with "
            "partial_fit and predict_proba (e.g. MLPClassifier, SGDClassifier(loss='log_loss')) "
            "or a skorch NeuralNetClassifier."
        )


class _EpochMargins:
    """Accumulates, epoch after epoch, the margin of each label on its task.

    With ``progress`` (a line prefix), prints after each epoch the mean
    margin of the labels at that epoch.
    """

    def __init__(self, X_eval, rows, labels, n_classes, kind, top_k, logits, n_epochs_total,
                 progress=None):
        self.X_eval = X_eval
        self.rows = rows
        self.labels = labels
        self.n_classes = n_classes
        self.kind = kind
        self.top_k = top_k
        self.logits = logits
        self.n_epochs_total = n_epochs_total
        self.progress = progress
        self.total = np.zeros(len(labels))
        self.proba = None
        self.n_epochs = 0

    def __call__(self, model):
        self.n_epochs += 1
        proba = np.asarray(model.predict_proba(self.X_eval), dtype=np.float64)
        n_eval = _num_samples(self.X_eval)
        if proba.shape != (n_eval, self.n_classes):
            raise ValueError(
                f"margin_estimator.predict_proba returned shape {proba.shape} for {n_eval} "
                f"tasks; expected ({n_eval}, {self.n_classes}), one column per class of the votes."
            )
        scores = self._scores(model, proba)
        if not np.isfinite(scores).all():
            raise ValueError(
                f"margin_estimator produced non-finite scores at epoch {self.n_epochs} (diverged "
                "training?): lower its learning rate or scale the features."
            )
        epoch_margins = _margins_at(scores, self.labels, self.rows, self.kind, self.top_k)
        self.total += epoch_margins
        self.proba = proba
        if self.progress is not None:
            print(f"{self.progress}epoch {self.n_epochs}/{self.n_epochs_total}: mean margin "
                  f"{epoch_margins.mean():.4f}", flush=True)

    def _scores(self, model, proba):
        if not self.logits:
            return proba
        if hasattr(model, "decision_function"):
            dec = np.asarray(model.decision_function(self.X_eval), dtype=np.float64)
            # binary: one column, the score of class 1 against class 0
            return np.column_stack([np.zeros_like(dec), dec]) if dec.ndim == 1 else dec
        # log-probabilities are the logits shifted per row, which margins ignore
        return np.log(np.maximum(proba, np.finfo(np.float64).tiny))


def _train_partial_fit(model, X_train, y_train, n_classes, n_epochs, on_epoch):
    classes = np.arange(n_classes)
    for _ in range(n_epochs):
        model.partial_fit(X_train, y_train, classes=classes)
        on_epoch(model)


def _record_group(estimator, X, task, label, n_classes, n_epochs, kind, top_k, logits, seed,
                  progress=None):
    """AUM and last-epoch probabilities of the votes ``(task, label)`` of one fresh model.

    ``progress``: prefix of the per-epoch lines to print, None for silence.
    """
    eval_tasks, rows = np.unique(task, return_inverse=True)
    recorder = _EpochMargins(
        _safe_indexing(X, eval_tasks), rows.ravel(), label, n_classes, kind, top_k, logits,
        n_epochs, progress,
    )
    model = clone(estimator)
    batch_size = model.get_params(deep=False).get("batch_size")
    if isinstance(batch_size, Integral) and batch_size > len(task):
        # what scikit-learn's MLP would clip it to, without its warning on small groups
        model.set_params(batch_size=len(task))
    X_train = _safe_indexing(X, task)
    if is_skorch_net(model):
        from ._skorch_epochs import train_skorch_net

        train_skorch_net(model, X_train, label, n_classes, n_epochs, recorder, seed)
    else:
        _train_partial_fit(model, X_train, label, n_classes, n_epochs, recorder)
    if recorder.n_epochs != n_epochs:
        raise RuntimeError(
            f"margin_estimator ran {recorder.n_epochs} epochs instead of n_epochs={n_epochs} "
            "(an early-stopping callback?); margins need every epoch."
        )
    return recorder.total / n_epochs, recorder.proba[rows.ravel()]


def record_margins(
    estimator, X, votes, *, n_epochs, kind="top-k", top_k=1, logits=False, per_worker=False,
    seed=None, verbose=0,
):
    """Area under the margin of every observed vote, recorded along training.

    Parameters
    ----------
    estimator : estimator
        Unfitted margin model (cloned here): ``partial_fit`` +
        ``predict_proba``, or a skorch net.
    X : array-like or sparse matrix of shape (n_tasks, n_features)
        Features of the tasks.
    votes : Votes
        Observed votes; one training row ``(X[task], label)`` per vote.
    n_epochs : int
        Number of training epochs ``T``.
    kind, top_k : see :func:`skcrowd.pruning.margins`.
    logits : bool
        Margins on logits (``decision_function`` where the model has one, else
        log-probabilities) instead of softmax probabilities.
    per_worker : bool
        Worker-wise WAUM (algorithm 4): a fresh model per worker, trained on
        that worker's votes only.
    seed : int or None
        Seed of torch's generator for a skorch net (sklearn models carry their
        own ``random_state``).
    verbose : int, default=0
        Progress lines, prefixed ``[WAUMPruner]``: one per epoch (the mean
        margin of the labels at that epoch) when positive; with
        ``per_worker``, one per worker's model instead, and the epoch lines
        from 2 on.

    Returns
    -------
    aum : ndarray of shape (n_votes,)
        Mean margin of each vote's label over the ``n_epochs`` epochs.
    final_proba : ndarray of shape (n_votes, n_classes)
        Probabilities, at the last epoch, of the model that scored each vote
        for that vote's task.
    """
    k = votes.n_classes
    if not per_worker:
        return _record_group(
            estimator, X, votes.task, votes.label, k, n_epochs, kind, top_k, logits, seed,
            progress="[WAUMPruner] " if verbose else None,
        )
    aum = np.empty(votes.n_votes)
    final_proba = np.empty((votes.n_votes, k))
    by_worker = np.argsort(votes.worker, kind="stable")
    ends = np.cumsum(votes.votes_per_worker())
    for worker, rows in enumerate(np.split(by_worker, ends[:-1])):
        if len(rows):
            prefix = f"[WAUMPruner] worker {worker + 1}/{votes.n_workers}"
            aum[rows], final_proba[rows] = _record_group(
                estimator, X, votes.task[rows], votes.label[rows], k, n_epochs, kind, top_k,
                logits, seed, progress=f"{prefix}, " if verbose >= 2 else None,
            )
            if verbose:
                print(f"{prefix}: {len(rows)} votes, {n_epochs} epochs, mean AUM "
                      f"{aum[rows].mean():.4f}", flush=True)
    return aum, final_proba
