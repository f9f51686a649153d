"""Quality control of a crowd: worker reports, spammer scores, task uncertainty.

The reports read a **fitted aggregator** and the votes it aggregated (and,
optionally, the known labels of control tasks) and give back pandas
DataFrames a person can act on:

- :func:`worker_report`: one row per worker: votes given, estimated accuracy
  with an interval, accuracy against the known tasks, agreement with the
  aggregate, confusion matrix, spammer score (Raykar & Yu, 2012) and a rank
  in the list of workers to review;
- :func:`task_report`: one row per task: aggregated label, its probability,
  the entropy of the posterior and the agreement of the votes;
- :func:`spammer_score`: the distance of confusion matrices from the closest
  "spammer" (rank-one) matrix.

**The report interface.** Any aggregator works that has ``classes_`` and
``predict_proba(votes)``: the posterior of each task's true class, columns in
``classes_``. The posteriors give the tasks' labels and uncertainty, each
worker's estimated accuracy (the expected share of their votes that are
right) and agreement with the aggregate. The worker's *confusion matrix*,
from which the spammer score is computed, is read from the first of these
fitted attributes the aggregator has:

1. ``confusion_matrices_``, shape ``(n_workers, n_classes, n_classes)``:
   entry ``[j, k, l]`` is the probability that worker ``j`` answers
   ``classes_[l]`` on a task of true class ``classes_[k]`` (rows sum to one);
2. ``worker_accuracies_``, shape ``(n_workers,)``: the probability that
   worker ``j``'s answer is the true class, for a "one-coin" model whose
   errors spread uniformly over the other classes: the matrix is
   ``a_j`` on the diagonal and ``(1 - a_j) / (n_classes - 1)`` elsewhere;
3. neither: the *posterior confusion*, each worker's votes counted against
   the posteriors of their tasks (row ``k``: the distribution of their
   answers on the posterior mass of class ``k``; NaN where the aggregate
   labels none of their tasks ``k``: a soft posterior puts a trace of every
   class on every task, and rows read from traces would make a worker seen
   on one class only look like a spammer, whose rows are all the same).

The missing-vote marker is the aggregator's ``missing_label`` parameter; the
worker ids are the columns of a DataFrame of votes or the ``workers`` of the
:class:`~skcrowd.LongVotes` that :func:`~skcrowd.votes_from_long` returns
(given as ``votes``), else the aggregator's ``feature_names_in_`` or
``worker_ids_``, else ``0 .. n_workers - 1``; the task ids likewise, from the
DataFrame's index or the ``tasks`` of the LongVotes.
"""

from __future__ import annotations

import os
from numbers import Real

import numpy as np
from scipy.special import entr
from scipy.stats import beta as beta_distribution
from scipy.stats import binom
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, validate_params
from sklearn.utils.validation import check_is_fitted

from ._optional import import_optional
from .metrics._gold import _check_proba
from .votes import LongVotes, check_known_labels, check_votes

__all__ = ["worker_report", "task_report", "spammer_score"]

# Rows of a confusion matrix must sum to one within this tolerance.
_ROW_SUM_ATOL = 1e-6


def _pandas():
    return import_optional("pandas", "a quality report (a pandas DataFrame)")


# ---------------------------------------------------------------------------
# spammer score
# ---------------------------------------------------------------------------


def _check_confusions(confusions, name):
    """Float array ``(n, K, K)`` of row-stochastic matrices (NaN rows allowed)."""
    arr = np.asarray(confusions, dtype=np.float64)
    if arr.ndim not in (2, 3) or arr.shape[-1] != arr.shape[-2] or arr.shape[-1] < 1:
        raise ValueError(
            f"{name} must have shape (n_classes, n_classes) or (n_workers, n_classes, "
            f"n_classes), got {arr.shape}."
        )
    stack = arr.reshape(-1, arr.shape[-1], arr.shape[-1])
    rows = stack.reshape(-1, stack.shape[-1])
    known = ~np.isnan(rows).any(axis=1)
    bad = np.isinf(rows).any(axis=1) | (known & (
        (rows < 0).any(axis=1) | (rows > 1).any(axis=1)
        | (np.abs(rows.sum(axis=1) - 1.0) > _ROW_SUM_ATOL)
    ))
    if bad.any():
        r = int(np.argmax(bad))
        worker, row = divmod(r, stack.shape[-1])
        where = f"row {row}" if arr.ndim == 2 else f"worker {worker}, row {row}"
        raise ValueError(
            f"{name} has {where} = {np.round(rows[r], 6).tolist()}: each row must be a "
            "probability distribution (entries in [0, 1] summing to 1), or all NaN for a "
            "class the worker was never seen on."
        )
    return arr, stack


@validate_params({"confusions": ["array-like"]}, prefer_skip_nested_validation=True)
def spammer_score(confusions):
    r"""Spammer score of Raykar & Yu (2012): how far a worker is from answering at random.

    A *spammer* answers without looking at the task: his answer does not
    depend on the true class, so all the rows of his confusion matrix
    :math:`A` are the same distribution :math:`v` and :math:`A = e v^\top`
    has rank one. The score is the squared Frobenius distance of :math:`A`
    from the closest such matrix, normalized to :math:`[0, 1]`:

    .. math:: S = \frac{1}{K(K-1)} \sum_{c < c'} \sum_{k}
              (A_{ck} - A_{c'k})^2
              = \frac{1}{K - 1} \min_{v} \| A - e v^\top \|_F^2 .

    0 for a spammer (any answer distribution: uniform, always the same
    class, ...), 1 for a worker whose rows are one-hot and distinct: a
    perfect worker, or one who systematically gives another class (whom a
    confusion-matrix model corrects). For two classes it is
    :math:`(\text{sensitivity} + \text{specificity} - 1)^2`.

    Rows of NaN (classes the worker was never seen on) are left out: the
    score is then half the mean squared distance between the known rows
    (the same formula on a full matrix), NaN with fewer than two (a single
    class included: there is nothing to tell apart).

    Parameters
    ----------
    confusions : array-like of shape (n_classes, n_classes) or (n_workers, n_classes, n_classes)
        Confusion matrices, rows the true class: row ``k`` is the
        distribution of the worker's answer on a task of class ``k`` (e.g.
        ``DawidSkene().fit(votes).confusion_matrices_``).

    Returns
    -------
    float or ndarray of shape (n_workers,)
        The score of each matrix.

    References
    ----------
    V. C. Raykar and S. Yu. "Eliminating spammers and ranking annotators
    for crowdsourced labeling tasks". Journal of Machine Learning Research
    13, 2012 (section 3, categorical annotators).

    Examples
    --------
    >>> from skcrowd.quality import spammer_score
    >>> spammer_score([[0.9, 0.1], [0.2, 0.8]])  # (0.8 + 0.9 - 1) ** 2
    0.49
    >>> spammer_score([[[0.7, 0.3], [0.7, 0.3]],     # answers 0 70 % of the time
    ...                [[0.0, 1.0], [1.0, 0.0]]])    # always the other class
    array([0., 1.])
    """
    arr, stack = _check_confusions(confusions, "confusions")
    known = ~np.isnan(stack).any(axis=2)  # (n, K)
    filled = np.where(known[:, :, None], stack, 0.0)
    n_known = known.sum(axis=1)
    # sum over pairs of known rows of |a_c - a_c'|^2 = m sum_c |a_c|^2 - |sum_c a_c|^2
    pair_sum = n_known * (filled**2).sum(axis=(1, 2)) - (filled.sum(axis=1) ** 2).sum(axis=1)
    n_pairs = n_known * (n_known - 1) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(n_known >= 2, pair_sum / np.maximum(n_pairs, 1) / 2.0, np.nan)
    score = np.clip(score, 0.0, 1.0)  # rounding of the difference of squares
    return float(score[0]) if arr.ndim == 2 else score


# ---------------------------------------------------------------------------
# reading a fitted aggregator
# ---------------------------------------------------------------------------


def _check_aggregator(aggregator, caller):
    if not hasattr(aggregator, "predict_proba"):
        raise TypeError(
            f"{caller} needs a fitted aggregator with predict_proba (e.g. DawidSkene); got "
            f"{type(aggregator).__name__}."
        )
    check_is_fitted(aggregator)
    if not hasattr(aggregator, "classes_"):
        raise NotFittedError(f"{type(aggregator).__name__} has no classes_: fit it first.")


def _read_votes(aggregator, votes, known, caller):
    """Encoded votes, posteriors ``(n_tasks, K)`` and known class indices (-1: unknown)."""
    if isinstance(votes, (str, os.PathLike)) or hasattr(votes, "dask"):
        raise TypeError(
            f"{caller} takes a votes matrix in memory (array, sparse matrix or DataFrame), "
            f"got {type(votes).__name__}; read long-format votes with skcrowd.votes_from_long."
        )
    if isinstance(votes, LongVotes):
        votes = votes.votes
    params = aggregator.get_params() if hasattr(aggregator, "get_params") else {}
    missing_label = params.get("missing_label", -1)
    classes = np.asarray(aggregator.classes_)
    v = check_votes(votes, missing_label=missing_label, classes=classes,
                    n_workers=getattr(aggregator, "n_features_in_", None))
    proba = aggregator.predict_proba(votes)
    proba = proba.to_numpy() if hasattr(proba, "to_numpy") else np.asarray(proba)
    name = f"{type(aggregator).__name__}.predict_proba(votes)"
    proba = _check_proba(proba, name=name)
    if proba.shape != (v.n_tasks, len(classes)):
        raise ValueError(
            f"{name} has shape {proba.shape}; expected (n_tasks, n_classes) = "
            f"({v.n_tasks}, {len(classes)})."
        )
    known_class = np.full(v.n_tasks, -1, dtype=np.int64)
    if known is not None:
        known_class, _ = check_known_labels(known, v.n_tasks, missing_label=missing_label,
                                            classes=classes, name="known")
    return v, proba, known_class


def _ids(votes, aggregator, axis):
    """Task (axis 0) or worker (axis 1) ids of a votes matrix."""
    if isinstance(votes, LongVotes):
        return votes.tasks if axis == 0 else votes.workers
    if hasattr(votes, "columns") and hasattr(votes, "index"):
        return np.asarray(votes.index if axis == 0 else votes.columns)
    if axis == 1:
        for name in ("feature_names_in_", "worker_ids_"):
            ids = getattr(aggregator, name, None)
            if ids is not None:
                return np.asarray(ids)
    return None


def _worker_model(aggregator, soft_counts, seen):
    """Confusion matrices ``(n_workers, K, K)`` and the attribute they were read from.

    ``seen[j, k]``: whether a task of worker ``j`` is aggregated to class ``k`` (the known rows
    of a posterior confusion).
    """
    n_workers, K, _ = soft_counts.shape
    fitted = _fitted_worker_model(aggregator, n_workers, K)
    if fitted is not None:
        return fitted
    mass = soft_counts.sum(axis=2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(seen[:, :, None], soft_counts / mass, np.nan), "posterior"


def _fitted_worker_model(aggregator, n_workers, K):
    """The aggregator's own confusion matrices and their attribute, checked (None without)."""
    name = type(aggregator).__name__
    if hasattr(aggregator, "confusion_matrices_"):
        attr = f"{name}.confusion_matrices_"
        confusions, _ = _check_confusions(aggregator.confusion_matrices_, attr)
        if confusions.shape != (n_workers, K, K):
            raise ValueError(
                f"{attr} has shape {confusions.shape}; expected (n_workers, n_classes, "
                f"n_classes) = ({n_workers}, {K}, {K})."
            )
        return confusions, "confusion_matrices_"
    if hasattr(aggregator, "worker_accuracies_"):
        accuracies = np.asarray(aggregator.worker_accuracies_, dtype=np.float64)
        if accuracies.shape != (n_workers,) or not np.all((accuracies >= 0) & (accuracies <= 1)):
            raise ValueError(
                f"{name}.worker_accuracies_ must hold one probability per worker, shape "
                f"({n_workers},); got shape {accuracies.shape}."
            )
        off = ((1.0 - accuracies) / max(K - 1, 1))[:, None, None]
        eye = np.eye(K)[None]
        return accuracies[:, None, None] * eye + off * (1.0 - eye), "worker_accuracies_"
    return None


def _soft_confusion_counts(v, proba):
    """``[j, k, l]``: posterior mass of class ``k`` on the tasks where ``j`` answered ``l``."""
    K = proba.shape[1]
    flat = v.worker * K + v.label
    counts = np.empty((v.n_workers, K, K))
    for k in range(K):
        counts[:, k, :] = np.bincount(flat, weights=proba[v.task, k],
                                      minlength=v.n_workers * K).reshape(v.n_workers, K)
    return counts


def _accuracy_interval(right, right_variance, n, confidence_level):
    """Interval of a worker's accuracy from ``right`` (expected) right votes out of ``n``.

    The Jeffreys posterior of a proportion, ``Beta(right + 1/2, n - right + 1/2)``
    (Brown, Cai & DasGupta, 2001), widened by the posterior variance of the
    number of right votes, ``right_variance``: the Beta distribution with the
    Jeffreys mean and the sum of the two variances. Without that uncertainty
    (known labels) it is the Jeffreys interval.
    """
    tail = (1.0 - confidence_level) / 2.0
    mean = (right + 0.5) / (n + 1.0)
    spread = mean * (1.0 - mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = spread / (n + 2.0) + np.where(n > 0, right_variance / n**2, 0.0)
        size = np.maximum(spread / variance - 1.0, 1.0)
    a, b = mean * size, (1.0 - mean) * size
    low, high = beta_distribution.ppf(tail, a, b), beta_distribution.ppf(1.0 - tail, a, b)
    return np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)


def _per_worker(v, values, n_classes):
    """``[j, k]``: the votes of worker ``j`` whose ``values`` (one per vote) are ``k``."""
    return np.bincount(v.worker * n_classes + values,
                       minlength=v.n_workers * n_classes).reshape(v.n_workers, n_classes)


def _chance_test(agrees, task_classes, answers):
    """Chance agreement and p-value of each worker agreeing less with the aggregate.

    ``agrees[j]``: votes of ``j`` equal to their task's aggregated label;
    ``task_classes[j, k]``, ``answers[j, k]``: their tasks aggregated to ``k``, their answers
    ``k``. ``chance[j] = sum_k q_jk r_jk`` (the shares), the agreement expected if ``j``'s
    answers were dealt at random to their tasks; ``pvalue[j] = P(B <= agrees[j])`` for
    ``B ~ Binomial(n_j, chance[j])``. NaN without votes.
    """
    n_votes = answers.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        chance = (task_classes * answers).sum(axis=1) / n_votes.astype(np.float64) ** 2
    chance = np.where(n_votes > 0, np.clip(chance, 0.0, 1.0), np.nan)
    pvalue = np.where(n_votes > 0, binom.cdf(agrees, n_votes, np.nan_to_num(chance)), np.nan)
    return chance, pvalue


# ---------------------------------------------------------------------------
# worker report
# ---------------------------------------------------------------------------


@validate_params(
    {
        "aggregator": "no_validation",
        "votes": "no_validation",  # check_votes names what is wrong
        "known": ["array-like", None],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def worker_report(aggregator, votes, *, known=None, confidence_level=0.95):
    r"""Per-worker quality report of a fitted aggregator: accuracy, agreement, spammer score.

    Parameters
    ----------
    aggregator : fitted aggregator
        Any estimator with ``classes_`` and ``predict_proba`` fitted on (or
        able to predict) ``votes``; its worker model is read as described in
        :mod:`skcrowd.quality` (``confusion_matrices_``, else
        ``worker_accuracies_``, else the posterior confusion).
    votes : array-like, sparse matrix or LongVotes of shape (n_tasks, n_workers)
        The votes, with the aggregator's ``missing_label`` and workers; the
        result of :func:`~skcrowd.votes_from_long` (the aggregator fitted on its
        ``votes``) keys the report by its task and worker ids.
    known : array-like of shape (n_tasks,), default=None
        Known label of each task (control tasks), the aggregator's
        ``missing_label`` (or None / NaN) where unknown. The aggregator does
        not have to have used them.
    confidence_level : float in (0, 1), default=0.95
        Level of the accuracy intervals.

    Returns
    -------
    pandas.DataFrame
        Indexed by worker, with columns

        - ``n_votes``: votes the worker gave;
        - ``accuracy``: estimated share of the worker's votes that are
          right, :math:`\frac{1}{n_j} \sum_{i} P(z_i = y_{ij} \mid
          \text{votes})`, the posterior (``predict_proba``) probability of
          each of their answers averaged (NaN without votes). For a model of
          the workers (Dawid-Skene, GLAD, ...) it follows their estimated
          quality; for :class:`~skcrowd.aggregation.MajorityVote`, whose
          posteriors are vote shares that include the worker's own vote, it
          is a soft agreement with the other votes and overrates weak
          workers;
        - ``accuracy_low``, ``accuracy_high``: its interval at
          ``confidence_level``: the Jeffreys interval of a proportion, widened
          by the posterior variance :math:`\sum_i p_{ij}(1 - p_{ij})` of the
          number of right votes (a Beta distribution with the Jeffreys mean and
          the sum of the two variances). On the simulated crowds of
          ``benchmarks/quality.py`` (Dawid-Skene, 95 %) it covered the true
          accuracy of 85 to 96 % of the workers;
        - with ``known``: ``n_known`` (votes on known tasks), ``known_accuracy``
          (the share of them that are right; NaN without any),
          ``known_accuracy_low``, ``known_accuracy_high`` (its Jeffreys
          interval);
        - ``agreement``: share of the worker's votes equal to the aggregated
          label (the most probable class, the first on ties);
        - ``spammer_score``: :func:`spammer_score` of the worker's confusion
          matrix (0: answers at random; 1: fully informative);
        - ``chance_agreement``: the ``agreement`` expected by chance, if the
          worker's answers were dealt at random to their tasks:
          :math:`c_j = \sum_k q_{jk} r_{jk}`, with :math:`q_{jk}` the share of
          their tasks aggregated to class ``k`` and :math:`r_{jk}` the share of
          their answers that are ``k``;
        - ``below_chance_pvalue``: the p-value of the one-sided binomial test
          of "the worker agrees with the aggregate no less than by chance":
          :math:`P(B \le a_j)` for :math:`B \sim \text{Binomial}(n_j, c_j)`
          and :math:`a_j` the votes equal to the aggregated label (1 where the
          worker agrees at least as often as chance predicts, NaN without
          votes). For a worker answering at random (votes independent of the
          task) the number of agreements is a sum of independent Bernoulli
          variables of mean :math:`n_j c_j`, whose lower tail below
          :math:`n_j c_j - 1` is at most the binomial's (Hoeffding, 1956):
          the test is conservative;
        - ``below_chance``: whether ``below_chance_pvalue < 1 -
          confidence_level``: the worker agrees with the aggregate less than
          by chance, with evidence: an adversarial worker (or, with
          probability ``1 - confidence_level``, a spammer). A worker whose
          every vote agrees with the aggregate (e.g. one who answers a single
          class and is always right) has p-value 1 and is never flagged, and
          flagging needs votes: more than :math:`\log(1 -
          \text{confidence\_level}) / \log(1 - c_j)` of them, all disagreeing
          (5 at :math:`c_j = 1/2` and the 95 % level);
        - ``review_rank``: 1 for the first worker to review. Workers below
          chance come first (highest spammer score first: the most
          systematic adversaries), then the others by increasing spammer
          score (the spammers first); NaN scores last;
        - ``confusion_matrix``: the worker's ``(n_classes, n_classes)``
          matrix, rows the true class (for a posterior confusion, NaN rows:
          classes the aggregate gave none of their tasks).

        ``report.attrs`` holds ``"worker_model"`` (``"confusion_matrices_"``,
        ``"worker_accuracies_"`` or ``"posterior"``), ``"classes"`` and
        ``"confidence_level"``.

    See Also
    --------
    task_report : The per-task report.
    spammer_score : The score of a confusion matrix.

    References
    ----------
    V. C. Raykar and S. Yu. "Eliminating spammers and ranking annotators
    for crowdsourced labeling tasks". JMLR 13, 2012.

    W. Hoeffding. "On the distribution of the number of successes in
    independent trials". Annals of Mathematical Statistics 27(3), 1956.

    L. D. Brown, T. T. Cai and A. DasGupta. "Interval estimation for a
    binomial proportion". Statistical Science 16(2), 2001 (Jeffreys interval).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import DawidSkene, simulate_annotators, worker_report
    >>> y = np.random.RandomState(0).randint(3, size=300)
    >>> crowd = simulate_annotators(y, 8, accuracy=0.8, votes_per_task=4,
    ...                             worker_types=["regular"] * 6 + ["spammer"] * 2,
    ...                             random_state=0)
    >>> report = worker_report(DawidSkene().fit(crowd.votes), crowd.votes, known=y)
    >>> sorted(report.nsmallest(2, "review_rank").index)  # the spammers
    [6, 7]
    >>> report.loc[[0, 7], "n_votes"].tolist()
    [151, 141]
    >>> columns = ["accuracy", "known_accuracy", "spammer_score"]
    >>> report.loc[[0, 7], columns].to_numpy().round(2).tolist()  # a regular worker, a spammer
    [[0.76, 0.77, 0.37], [0.3, 0.29, 0.01]]
    """
    pd = _pandas()
    _check_aggregator(aggregator, "worker_report")
    if hasattr(aggregator, "n_features_in_"):  # a damaged worker model is named before
        # predict_proba reads it
        _fitted_worker_model(aggregator, aggregator.n_features_in_, len(aggregator.classes_))
    v, proba, known_class = _read_votes(aggregator, votes, known, "worker_report")
    K = proba.shape[1]
    label = np.argmax(proba, axis=1)
    task_classes = _per_worker(v, label[v.task], K)
    soft = _soft_confusion_counts(v, proba)
    confusions, source = _worker_model(aggregator, soft, task_classes > 0)
    n_votes = v.votes_per_worker()

    # accuracy: expected share of right votes under the posteriors, and its variance
    right_proba = proba[v.task, v.label]
    right = np.bincount(v.worker, weights=right_proba, minlength=v.n_workers)
    right_variance = np.bincount(v.worker, weights=right_proba * (1.0 - right_proba),
                                 minlength=v.n_workers)
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = np.where(n_votes > 0, right / n_votes, np.nan)
    low, high = _accuracy_interval(right, right_variance, n_votes, confidence_level)
    agrees = np.bincount(v.worker[v.label == label[v.task]], minlength=v.n_workers)
    chance, pvalue = _chance_test(agrees, task_classes, _per_worker(v, v.label, K))
    below_chance = pvalue < 1.0 - confidence_level

    score = spammer_score(confusions)
    signed = np.where(below_chance, -score, score)
    order = np.argsort(np.where(np.isnan(signed), np.inf, signed), kind="stable")
    review_rank = np.empty(v.n_workers, dtype=np.int64)
    review_rank[order] = np.arange(1, v.n_workers + 1)

    columns = {"n_votes": n_votes, "accuracy": accuracy, "accuracy_low": low,
               "accuracy_high": high}
    if known is not None:
        on_known = known_class[v.task] >= 0
        n_known = np.bincount(v.worker[on_known], minlength=v.n_workers)
        known_right = np.bincount(v.worker[on_known],
                                  weights=v.label[on_known] == known_class[v.task[on_known]],
                                  minlength=v.n_workers)
        with np.errstate(divide="ignore", invalid="ignore"):
            known_accuracy = np.where(n_known > 0, known_right / n_known, np.nan)
        k_low, k_high = _accuracy_interval(known_right, 0.0, n_known, confidence_level)
        columns.update(n_known=n_known, known_accuracy=known_accuracy,
                       known_accuracy_low=k_low, known_accuracy_high=k_high)
    with np.errstate(divide="ignore", invalid="ignore"):
        columns["agreement"] = np.where(n_votes > 0, agrees / n_votes, np.nan)
    columns.update(chance_agreement=chance, below_chance_pvalue=pvalue, spammer_score=score,
                   below_chance=below_chance, review_rank=review_rank)
    ids = _ids(votes, aggregator, axis=1)
    index = pd.Index(np.arange(v.n_workers) if ids is None else ids, name="worker")
    report = pd.DataFrame(columns, index=index)
    report["confusion_matrix"] = pd.Series(list(confusions), index=index, dtype=object)
    report.attrs.update(worker_model=source, classes=np.asarray(aggregator.classes_).tolist(),
                        confidence_level=confidence_level)
    return report


# ---------------------------------------------------------------------------
# task report
# ---------------------------------------------------------------------------


@validate_params(
    {"aggregator": "no_validation", "votes": "no_validation",
     "known": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def task_report(aggregator, votes, *, known=None):
    """Per-task uncertainty report of a fitted aggregator.

    Parameters
    ----------
    aggregator : fitted aggregator
        Any estimator with ``classes_`` and ``predict_proba``.
    votes : array-like, sparse matrix or LongVotes of shape (n_tasks, n_workers)
        The votes, with the aggregator's ``missing_label`` and workers; the
        result of :func:`~skcrowd.votes_from_long` (the aggregator fitted on its
        ``votes``) keys the report by its task and worker ids.
    known : array-like of shape (n_tasks,), default=None
        Known label of each task, the aggregator's ``missing_label`` (or
        None / NaN) where unknown.

    Returns
    -------
    pandas.DataFrame
        Indexed by task (the index of a DataFrame of votes, the ``tasks`` of
        a LongVotes, else ``0 .. n_tasks - 1``), with columns

        - ``n_votes``: number of votes;
        - ``label``: the aggregated label (most probable class, the first on
          ties), ``confidence`` its posterior probability;
        - ``entropy``: entropy of the posterior, in nats (0: certain;
          ``log(n_classes)``: uniform);
        - ``vote_agreement``: share of the pairs of votes that agree
          (the :math:`P_i` of Fleiss' kappa; NaN with fewer than two votes);
        - ``majority_share``: share of the votes for the most voted class
          (NaN without votes);
        - with ``known``: ``known`` (the known label, missing where unknown)
          and ``correct`` (whether ``label`` equals it; pandas' ``<NA>``
          where unknown).

    See Also
    --------
    worker_report : The per-worker report.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import MajorityVote, task_report
    >>> votes = np.array([[0, 0, 0], [0, 1, -1], [1, 1, 0]])
    >>> report = task_report(MajorityVote().fit(votes), votes)
    >>> report["n_votes"].tolist(), report["label"].tolist()
    ([3, 2, 3], [0, 0, 1])
    >>> columns = ["confidence", "entropy", "vote_agreement", "majority_share"]
    >>> report[columns].to_numpy().round(3).tolist()
    [[1.0, 0.0, 1.0, 1.0], [0.5, 0.693, 0.0, 0.5], [0.667, 0.637, 0.333, 0.667]]
    """
    pd = _pandas()
    _check_aggregator(aggregator, "task_report")
    v, proba, known_class = _read_votes(aggregator, votes, known, "task_report")
    classes = np.asarray(aggregator.classes_)
    counts = v.counts()
    n_votes = counts.sum(axis=1)
    best = np.argmax(proba, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pair_agreement = np.where(
            n_votes >= 2, (counts * (counts - 1)).sum(axis=1) / (n_votes * (n_votes - 1)), np.nan
        )
        majority = np.where(n_votes > 0, counts.max(axis=1) / n_votes, np.nan)
    ids = _ids(votes, aggregator, axis=0)
    index = pd.Index(np.arange(v.n_tasks) if ids is None else ids, name="task")
    report = pd.DataFrame({
        "n_votes": n_votes.astype(np.int64),
        "label": classes[best],
        "confidence": proba[np.arange(v.n_tasks), best],
        "entropy": entr(proba).sum(axis=1),
        "vote_agreement": pair_agreement,
        "majority_share": majority,
    }, index=index)
    if known is not None:
        is_known = known_class >= 0
        known_labels = pd.Series(classes[np.maximum(known_class, 0)], index=index)
        if classes.dtype.kind in "iub":  # integer labels stay integers, <NA> where unknown
            known_labels = known_labels.astype("Int64")
        report["known"] = known_labels.where(is_known)
        report["correct"] = pd.array(
            np.where(is_known, best == known_class, False), dtype="boolean"
        )
        report.loc[~is_known, "correct"] = pd.NA
    return report
