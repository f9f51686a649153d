"""Inter-annotator agreement of a votes matrix, chance-corrected.

:func:`krippendorff_alpha` (nominal, ordinal or interval) and
:func:`fleiss_kappa`, both on votes matrices with missing entries and with
bootstrap confidence intervals over tasks (:class:`AgreementInterval`).
"""

from __future__ import annotations

from collections import namedtuple
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ..votes import _fmt, check_votes

__all__ = ["krippendorff_alpha", "fleiss_kappa", "AgreementInterval"]

AgreementInterval = namedtuple("AgreementInterval", ["estimate", "low", "high"])
AgreementInterval.__doc__ = """An agreement coefficient and its bootstrap confidence interval.

``estimate`` is the coefficient of all the tasks; ``low`` and ``high`` bound
the percentile bootstrap interval (tasks resampled with replacement). It
unpacks as a tuple: ``alpha, low, high = krippendorff_alpha(votes,
confidence_level=0.95)``.
"""

# Bootstrap replicates x tasks entries held at once (about 32 MB of float64).
_BOOTSTRAP_BATCH_ENTRIES = 2**22

_AGREEMENT_PARAMS = {
    "votes": ["array-like", "sparse matrix"],
    "missing_label": "no_validation",
    "classes": ["array-like", None],
    "confidence_level": [Interval(Real, 0, 1, closed="neither"), None],
    "n_resamples": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}


def _agreement_counts(votes, missing_label, classes):
    """Class counts ``(n_units, n_classes)`` of the tasks with a vote, and the classes.

    With ``classes`` given, class index ``k`` is ``classes[k]`` (their order
    is kept); otherwise the classes are the sorted distinct labels.
    """
    if classes is not None:
        classes = column_or_1d(np.asarray(classes))
        if len(np.unique(classes)) != len(classes):
            raise ValueError(f"classes must be distinct, got {classes.tolist()!r}.")
    v = check_votes(votes, missing_label=missing_label, classes=classes)
    counts = v.counts()
    return counts[counts.sum(axis=1) > 0], v.classes


def _resampling_weights(n_units, n_resamples, random_state):
    """Batches of bootstrap weights: how often each task is drawn, ``(batch, n_units)``."""
    rng = check_random_state(random_state)
    batch = max(1, _BOOTSTRAP_BATCH_ENTRIES // n_units)
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        draws = rng.randint(n_units, size=(b, n_units)) + n_units * np.arange(b)[:, None]
        yield np.bincount(draws.ravel(), minlength=b * n_units).reshape(b, n_units).astype(
            np.float64
        )


def _with_interval(statistic, n_units, confidence_level, n_resamples, random_state):
    """The statistic of all the tasks, or an AgreementInterval with its bootstrap interval.

    ``statistic(weights)`` maps task weights ``(n_replicates, n_units)`` to one
    value per replicate (NaN where a replicate leaves it undefined).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = float(statistic(np.ones((1, n_units)))[0])
        if confidence_level is None:
            return estimate
        replicates = np.concatenate([
            statistic(w) for w in _resampling_weights(n_units, n_resamples, random_state)
        ])
    replicates = replicates[np.isfinite(replicates)]
    if len(replicates) == 0:
        return AgreementInterval(estimate, np.nan, np.nan)
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    return AgreementInterval(estimate, float(low), float(high))


def _interval_values(classes, level):
    """Numeric value of each class for the interval metric (centred: distances ignore shifts)."""
    if classes.dtype.kind not in "iufb":
        raise ValueError(
            f"level_of_measurement={level!r} needs numeric labels (their differences are the "
            f"distances), got labels {classes.tolist()!r}; use 'nominal', or 'ordinal' with "
            "classes= in their order."
        )
    values = classes.astype(np.float64)
    return values - values.mean()


def _alpha_statistic(counts, level, classes):
    """Krippendorff's alpha of weighted tasks: ``weights (B, n_units) -> (B,)``.

    With ``n_u`` the class counts of unit ``u``, ``m_u`` its number of values
    and ``D`` the squared distances between classes, the coincidences give
    ``sum_ck o_ck D_ck = sum_u n_u' D n_u / (m_u - 1)`` over pairable units
    (``m_u >= 2``) and ``sum_ck n_c n_k D_ck`` with the pairable values'
    class totals ``n_c``; ``alpha = 1 - (n - 1) * observed / expected``.
    """
    m = counts.sum(axis=1)
    pairable = m >= 2
    inv = np.zeros_like(m)
    inv[pairable] = 1.0 / (m[pairable] - 1.0)
    c = counts * pairable[:, None]  # values of unpairable units do not count

    if level == "nominal":
        # n_u' D n_u = m_u^2 - |n_u|^2 with D = 1 off the diagonal
        per_unit = (m**2 - (c**2).sum(axis=1)) * inv

        def disagreements(w, totals):
            n = totals.sum(axis=1)
            return w @ per_unit, n**2 - (totals**2).sum(axis=1)
    elif level == "interval":
        v = _interval_values(classes, level)
        # sum_ck a_c b_k (v_c - v_k)^2 = 2 (|a| (a . v^2) - (a . v)^2) for a = b
        per_unit = 2.0 * (m * (c @ v**2) - (c @ v) ** 2) * inv

        def disagreements(w, totals):
            n = totals.sum(axis=1)
            return w @ per_unit, 2.0 * (n * (totals @ v**2) - (totals @ v) ** 2)
    else:  # ordinal: the interval metric on mid-ranks, which depend on the totals
        scaled = c * (m * inv)[:, None]

        def disagreements(w, totals):
            n = totals.sum(axis=1)
            # sum_{g=c..k} n_g - (n_c + n_k) / 2 = M_k - M_c with M_c = N_{c-1} + n_c / 2
            ranks = np.cumsum(totals, axis=1) - totals / 2.0
            ranks -= (totals * ranks).sum(axis=1, keepdims=True) / n[:, None]
            observed = 2.0 * (((w @ scaled) * ranks**2).sum(axis=1)
                              - ((w * inv) * (c @ ranks.T).T ** 2).sum(axis=1))
            expected = 2.0 * (n * (totals * ranks**2).sum(axis=1)
                              - (totals * ranks).sum(axis=1) ** 2)
            return observed, expected

    def statistic(w):
        totals = w @ c
        observed, expected = disagreements(w, totals)
        n = totals.sum(axis=1)
        return 1.0 - (n - 1.0) * observed / expected

    return statistic, c


def _class_agreement(counts):
    """Per class: share of its pairable votes matched by another vote of the same task.

    Returns the observed share ``o_cc / n_c`` (from the coincidences of
    :func:`krippendorff_alpha`), the share expected by chance ``(n_c - 1) /
    (n - 1)`` and the pairable votes ``n_c``; NaN for a class without any.
    """
    m = counts.sum(axis=1)
    c = counts[m >= 2]
    totals = c.sum(axis=0)
    n = totals.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = ((c * (c - 1.0)) / (m[m >= 2, None] - 1.0)).sum(axis=0) / totals
        expected = np.where(totals > 0, (totals - 1.0) / (n - 1.0), np.nan)
    return observed, expected, totals


@validate_params(
    {**_AGREEMENT_PARAMS,
     "level_of_measurement": [StrOptions({"nominal", "ordinal", "interval"})]},
    prefer_skip_nested_validation=True,
)
def krippendorff_alpha(votes, *, level_of_measurement="nominal", missing_label=-1, classes=None,
                       confidence_level=None, n_resamples=1000, random_state=None):
    r"""Krippendorff's alpha: agreement between workers beyond chance, missing votes allowed.

    Tasks are Krippendorff's *units*, workers his *coders*, votes the
    *values*. Following Krippendorff's definition (2011, "Computing
    Krippendorff's alpha-reliability"), only **pairable values** count: the
    votes of tasks with at least two votes. A task with a single vote (or
    none) is dropped whole: it says nothing about agreement, and its vote is
    not counted in the expected disagreement either. From the coincidences
    :math:`o_{ck} = \sum_u \frac{\#\{\text{ordered pairs of votes } (c, k)
    \text{ in task } u\}}{m_u - 1}` of tasks with :math:`m_u \ge 2` votes,
    the class totals :math:`n_c = \sum_k o_{ck}` and :math:`n = \sum_c n_c`,

    .. math:: \alpha = 1 - \frac{D_o}{D_e}
              = 1 - (n - 1) \frac{\sum_{c,k} o_{ck}\, \delta^2_{ck}}
                                 {\sum_{c,k} n_c n_k\, \delta^2_{ck}} .

    1 is perfect agreement, 0 agreement at chance level, negative values
    systematic disagreement. Krippendorff suggests relying on data with
    :math:`\alpha \ge 0.8` and drawing tentative conclusions from
    :math:`0.667 \le \alpha < 0.8`.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_workers)
        Votes, in any format of :func:`skcrowd.check_votes` (entry ``(i, j)``
        is the label worker ``j`` gave task ``i``, or ``missing_label``).
    level_of_measurement : {"nominal", "ordinal", "interval"}, default="nominal"
        The distance :math:`\delta^2_{ck}` between classes: ``"nominal"``
        1 for different classes; ``"interval"`` :math:`(v_c - v_k)^2` for
        numeric labels :math:`v`; ``"ordinal"``
        :math:`(\sum_{g=c}^{k} n_g - \frac{n_c + n_k}{2})^2`, classes in the
        order of ``classes`` (default: sorted labels; string labels need
        ``classes``, their order is not the alphabet's).
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote, as for the aggregators.
    classes : array-like, default=None
        All the classes, in their order (used by ``"ordinal"``). A vote
        outside them raises. Default: the sorted distinct labels.
    confidence_level : float in (0, 1), default=None
        When given, also return a percentile bootstrap interval at this level.
    n_resamples : int, default=1000
        Bootstrap replicates: each draws as many tasks (with at least one
        vote) as the data have, with replacement.
    random_state : int, RandomState instance or None, default=None
        Seed of the bootstrap draws.

    Returns
    -------
    float or AgreementInterval
        Alpha; with ``confidence_level``, ``AgreementInterval(estimate, low,
        high)``. Replicates where alpha is undefined (no pairable votes, or
        one class only) are left out of the interval.

    Raises
    ------
    ValueError
        If no task has two votes, if every pairable vote has the same value
        (alpha is 0 / 0, undefined), or if the labels do not fit the level of
        measurement.

    See Also
    --------
    fleiss_kappa : The kappa of Fleiss (1971), generalized to missing votes.

    Notes
    -----
    crowd-kit's ``alpha_krippendorff`` (through NLTK's ``AnnotationTask``)
    follows the same convention for tasks with a single vote; on every
    dataset where both are defined they agree to within rounding (see
    ``benchmarks/agreement.py``). Where all the votes are of one class NLTK
    returns 1 while skcrowd raises: alpha is undefined there.

    References
    ----------
    K. Krippendorff. "Computing Krippendorff's alpha-reliability". Annenberg
    School for Communication, University of Pennsylvania, 2011.

    K. Krippendorff. *Content analysis: an introduction to its methodology*.
    Sage, 2004 (chapter 11).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.metrics import krippendorff_alpha
    >>> votes = np.array([[0, 0, -1],
    ...                   [1, 1, 1],
    ...                   [0, 1, -1],
    ...                   [1, -1, -1]])  # one vote: not pairable, left out
    >>> krippendorff_alpha(votes)  # 1 - (7 - 1) * 2 / (2 * 3 * 4)
    0.5
    >>> alpha, low, high = krippendorff_alpha(votes, confidence_level=0.9, random_state=0)
    >>> alpha, bool(low < alpha < high)
    (0.5, True)
    """
    ordered = classes is not None
    counts, classes = _agreement_counts(votes, missing_label, classes)
    if level_of_measurement == "ordinal" and not ordered and classes.dtype.kind not in "iufb":
        raise ValueError(
            f"level_of_measurement='ordinal' with labels {classes.tolist()!r}: pass classes= "
            "the labels in their order (sorting strings gives the alphabet's order)."
        )
    statistic, pairable_counts = _alpha_statistic(counts, level_of_measurement, classes)
    n_pairable = int(np.count_nonzero(pairable_counts.sum(axis=1)))
    if n_pairable == 0:
        raise ValueError(
            "no task has two votes or more: Krippendorff's alpha needs pairable values "
            "(at least one task with two votes)."
        )
    totals = pairable_counts.sum(axis=0)
    if np.count_nonzero(totals) == 1:
        raise ValueError(
            f"every pairable vote is {_fmt(classes[np.argmax(totals)])}: with a single value "
            "there is no expected disagreement and alpha is undefined (0 / 0)."
        )
    return _with_interval(statistic, len(counts), confidence_level, n_resamples, random_state)


def _kappa_statistic(counts):
    """Fleiss' kappa of weighted tasks: ``weights (B, n_units) -> (B,)``."""
    m = counts.sum(axis=1)
    pairable = (m >= 2).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = np.where(m >= 2, (counts * (counts - 1.0)).sum(axis=1) / (m * (m - 1.0)), 0.0)
    shares = counts / m[:, None]

    def statistic(w):
        observed = (w @ agreement) / (w @ pairable)
        prevalence = (w @ shares) / w.sum(axis=1)[:, None]
        chance = (prevalence**2).sum(axis=1)
        return (observed - chance) / (1.0 - chance)

    return statistic


@validate_params(_AGREEMENT_PARAMS, prefer_skip_nested_validation=True)
def fleiss_kappa(votes, *, missing_label=-1, classes=None, confidence_level=None,
                 n_resamples=1000, random_state=None):
    r"""Fleiss' kappa: agreement between workers beyond chance, missing votes allowed.

    Fleiss (1971) assumes every task has the same number of votes; skcrowd
    uses its generalization to any number of votes per task (Gwet, 2014,
    "Fleiss' generalized kappa"). With :math:`n_{ic}` the votes for class
    :math:`c` on task :math:`i` and :math:`m_i` its number of votes:

    - observed agreement :math:`P_o`: the mean, over the tasks with at least
      two votes, of the share of agreeing pairs of votes
      :math:`P_i = \sum_c \frac{n_{ic}(n_{ic} - 1)}{m_i (m_i - 1)}`;
    - chance agreement :math:`P_e = \sum_c \pi_c^2`, where the class
      prevalence :math:`\pi_c` is the mean, over the tasks with at least one
      vote, of :math:`n_{ic} / m_i`;
    - :math:`\kappa = \frac{P_o - P_e}{1 - P_e}`.

    With the same number of votes on every task this is Fleiss' kappa
    exactly. Unlike :func:`krippendorff_alpha`, a task with a single vote
    counts in the prevalences.

    Parameters
    ----------
    votes : array-like or sparse matrix of shape (n_tasks, n_workers)
        Votes, in any format of :func:`skcrowd.check_votes`.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote, as for the aggregators.
    classes : array-like, default=None
        All the classes; a vote outside them raises. Default: the distinct
        labels.
    confidence_level : float in (0, 1), default=None
        When given, also return a percentile bootstrap interval at this level.
    n_resamples : int, default=1000
        Bootstrap replicates: each draws as many tasks (with at least one
        vote) as the data have, with replacement.
    random_state : int, RandomState instance or None, default=None
        Seed of the bootstrap draws.

    Returns
    -------
    float or AgreementInterval
        Kappa; with ``confidence_level``, ``AgreementInterval(estimate, low,
        high)``, replicates where kappa is undefined left out.

    Raises
    ------
    ValueError
        If no task has two votes or every vote is of one class (kappa is
        0 / 0, undefined).

    See Also
    --------
    krippendorff_alpha : Agreement of pairable values, with distances between classes.

    References
    ----------
    J. L. Fleiss. "Measuring nominal scale agreement among many raters".
    Psychological Bulletin 76(5), 1971.

    K. L. Gwet. *Handbook of inter-rater reliability*, 4th edition. Advanced
    Analytics, 2014 (chapter 2, Fleiss' generalized kappa).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.metrics import fleiss_kappa
    >>> votes = np.array([[0, 0, -1],
    ...                   [1, 1, 1],
    ...                   [0, 1, -1],
    ...                   [1, -1, -1]])
    >>> # P_o = (1 + 1 + 0) / 3, prevalences (1 + 0 + 1/2 + 0) / 4 and (0 + 1 + 1/2 + 1) / 4
    >>> round(fleiss_kappa(votes), 4)  # (2/3 - 17/32) / (1 - 17/32)
    0.2889
    """
    counts, classes = _agreement_counts(votes, missing_label, classes)
    if not (counts.sum(axis=1) >= 2).any():
        raise ValueError(
            "no task has two votes or more: Fleiss' kappa needs tasks with several votes."
        )
    totals = counts.sum(axis=0)
    if np.count_nonzero(totals) == 1:
        raise ValueError(
            f"every vote is {_fmt(classes[np.argmax(totals)])}: with a single class the chance "
            "agreement is 1 and kappa is undefined (0 / 0)."
        )
    return _with_interval(_kappa_statistic(counts), len(counts), confidence_level, n_resamples,
                          random_state)
