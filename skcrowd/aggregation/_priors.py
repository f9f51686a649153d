"""Dirichlet priors chosen from the data: the evidence of Dirichlet-multinomial counts.

A model whose per-worker distributions (confusion rows, spamming
distributions, ...) have a Dirichlet prior ``Dir(alpha)`` can choose the
prior from the crowd by type-II maximum likelihood (empirical Bayes): the
marginal likelihood of each worker's (expected) counts ``n`` under the prior,
with the distribution integrated out, is the Dirichlet-multinomial evidence

``log p(n | alpha) = log Gamma(A) - log Gamma(A + N)
+ sum_l [log Gamma(alpha_l + n_l) - log Gamma(alpha_l)]``

(``A = sum_l alpha_l``, ``N = sum_l n_l``; the multinomial coefficient does
not depend on ``alpha`` and is left out). With the expected counts of an
E-step it is the part of the mean-field evidence lower bound that depends on
the prior (Minka, 2000; Bishop, 2006, section 10.2), so the same functions
serve MAP EM (:class:`~skcrowd.aggregation.DawidSkene`'s
``smoothing="auto"``) and variational models that learn their prior.

Functions here are model-agnostic: counts of shape ``(n_groups, n_rows, n_values)``
(for Dawid-Skene: workers, true classes, answers) and prior pseudo-counts
broadcastable to it.

References
----------
T. Minka. "Estimating a Dirichlet distribution". Technical report, 2000
(fixed-point and Newton updates of the precision with a fixed mean).

C. M. Bishop. *Pattern Recognition and Machine Learning*. Springer, 2006
(sections 3.5 and 10.2: evidence approximation, variational mixture).
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln

# Bounds of the strength searched by dirichlet_strength (pseudo-observations per row).
STRENGTH_BOUNDS = (1e-3, 1e4)
_MAX_NEWTON = 60
_LOG_STEP_TOL = 1e-3  # last Newton step on log(strength); the error after it is ~1e-6
_MAX_LOG_STEP = 2.0


def dirichlet_multinomial_log_evidence(counts, alpha):
    """Log-evidence of (expected) counts under a Dirichlet prior, summed over groups and rows.

    Parameters
    ----------
    counts : ndarray of shape (..., n_values)
        Non-negative (possibly fractional) counts; each row along the last
        axis is one multinomial sample, drawn from its own distribution.
    alpha : ndarray broadcastable to ``counts``
        Positive Dirichlet pseudo-counts of each row.

    Returns
    -------
    float
        ``sum over rows of log Gamma(A) - log Gamma(A + N) + sum_l (log Gamma(alpha_l + n_l)
        - log Gamma(alpha_l))``: the log-probability of the counts with the
        row's distribution integrated out, up to the multinomial coefficients.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._priors import dirichlet_multinomial_log_evidence
    >>> evidence = dirichlet_multinomial_log_evidence
    >>> # one vote: its probability is the prior mean, whatever the strength
    >>> [round(float(np.exp(evidence(np.array([1.0, 0.0]), [s * 0.8, s * 0.2]))), 3)
    ...  for s in (1.0, 100.0)]
    [0.8, 0.8]
    >>> # two equal votes: more likely under a weak (over-dispersed) prior
    >>> [round(float(np.exp(evidence(np.array([2.0, 0.0]), [s * 0.8, s * 0.2]))), 3)
    ...  for s in (1.0, 100.0)]
    [0.72, 0.642]
    """
    counts = np.asarray(counts, dtype=np.float64)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), counts.shape)
    A = alpha.sum(axis=-1)
    N = counts.sum(axis=-1)
    return float(np.sum(gammaln(A) - gammaln(A + N))
                 + np.sum(gammaln(alpha + counts) - gammaln(alpha)))


def dirichlet_strength(counts, shape, *, init=None, bounds=STRENGTH_BOUNDS, max_steps=None):
    """Strength ``s`` maximizing the evidence of ``counts`` under the prior ``Dir(s * shape)``.

    Type-II maximum likelihood of the Dirichlet's precision with its shape
    (mean, up to scale) held fixed: safeguarded Newton steps on ``log s``
    with the exact first and second derivatives (digamma and trigamma;
    Minka, 2000), kept in a bracket that shrinks at every step, from ``init``
    (the previous value, when re-estimated at every EM iteration, usually
    converges in one to three steps). Only the nonzero counts and non-empty
    rows enter the derivatives, so the cost is one pass over them per step.

    When the evidence still increases at the upper bound (the counts do not
    tell the groups apart: every group has at most one observation per row,
    or the groups are as alike as draws from one distribution), the upper
    bound is returned: the groups are pooled. The lower bound is returned
    when the evidence still increases towards it (each group is its own
    distribution).

    Parameters
    ----------
    counts : ndarray of shape (n_groups, n_rows, n_values)
        Non-negative (possibly fractional) counts of each group and row.
    shape : ndarray of shape (n_rows, n_values)
        Positive prior shape, the same for every group: the pseudo-counts of
        row ``r`` are ``s * shape[r]``.
    init : float, default=None
        Starting strength (default 1, clipped into ``bounds``).
    bounds : (float, float), default=(1e-3, 1e4)
        Range of the strength.
    max_steps : int, default=None
        At most this many Newton steps (default: until the last step on
        ``log s`` is below 1e-3). An EM that re-estimates the strength at
        every iteration can take one step per iteration from the previous
        value, its outer iterations converging it together with the counts.

    Returns
    -------
    float
        The strength, within ``bounds``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._priors import dirichlet_strength
    >>> shape = np.array([[0.5, 0.5]])
    >>> alike = np.array([[[5.0, 5.0]], [[4.0, 6.0]], [[6.0, 4.0]]])  # groups alike
    >>> dirichlet_strength(alike, shape)
    10000.0
    >>> apart = np.array([[[9.0, 1.0]], [[1.0, 9.0]], [[8.0, 2.0]]])  # groups differ
    >>> round(dirichlet_strength(apart, shape), 3)
    1.684
    """
    counts = np.asarray(counts, dtype=np.float64)
    shape = np.asarray(shape, dtype=np.float64)
    lo, hi = np.log(bounds[0]), np.log(bounds[1])
    # A row holding one whole observation has the same evidence at every strength (a single
    # draw has probability m / M): its terms cancel exactly, and computed they only add
    # rounding noise, which on a crowd of such rows decided the sign of the derivative (the
    # strength then landed anywhere in the flat evidence, and on another order of the votes
    # somewhere else). They are left out, as empty rows are.
    totals = counts.sum(axis=-1)
    single = (totals == 1.0) & (counts.max(axis=-1) == 1.0)
    if single.any():
        counts = np.where(single[..., None], 0.0, counts)
        totals = np.where(single, 0.0, totals)
    # The entries that depend on s: nonzero counts n (prior m) and the totals N of non-empty
    # rows (prior total M). The terms psi(s m) and psi(s M) take one value per cell of
    # ``shape``: they are computed once per cell, weighted by the cell's number of entries.
    # Equal entries (the same cell of ``shape`` and the same count: hard counts repeat a
    # few small integers) share their digamma and trigamma terms: each distinct pair is
    # evaluated once, weighted by its multiplicity (at 1e6 votes of 1000 workers, 5 to 10
    # times fewer evaluations per Newton step).
    nonzero = counts > 0
    _, row, col = np.nonzero(nonzero)
    cell = row * shape.shape[1] + col
    cells = np.bincount(cell, minlength=shape.size)
    cell_m = shape.ravel()[cells > 0]
    cells = cells[cells > 0]
    n_weight, n_cell, n = _distinct_pairs(cell, counts[nonzero])
    m = shape.ravel()[n_cell]
    nonempty = totals > 0
    M_rows = shape.sum(axis=-1)
    N_weight, N_row, N = _distinct_pairs(np.nonzero(nonempty)[1], totals[nonempty])
    M = M_rows[N_row]
    rows = nonempty.sum(axis=0)
    if n.size == 0:
        return float(bounds[1])
    wm, wM = n_weight * m, N_weight * M

    def derivatives(t):
        """First and second derivatives of the evidence in t = log s."""
        s = np.exp(t)
        g = (wm @ digamma(s * m + n) - (cells * cell_m) @ digamma(s * cell_m)
             - wM @ digamma(s * M + N) + (rows * M_rows) @ digamma(s * M_rows))
        dg = ((wm * m) @ trigamma(s * m + n) - (cells * cell_m**2) @ trigamma(s * cell_m)
              - (wM * M) @ trigamma(s * M + N) + (rows * M_rows**2) @ trigamma(s * M_rows))
        return s * g, s * g + s * s * dg

    flat = 1e-12 * N.sum()  # derivatives this small: no information at this strength
    t = 0.0 if init is None else float(np.log(init))
    t = min(max(t, lo), hi)
    below, above = lo, hi  # the maximum lies in [below, above]; the bounds are probed once
    probed_lo = probed_hi = False
    for _ in range(_MAX_NEWTON if max_steps is None else max_steps):
        grad, hess = derivatives(t)
        if abs(grad) <= flat and abs(hess) <= flat:
            grad, hess = 1.0, 0.0  # flat evidence: towards pooling
        if grad > 0:
            if t >= hi:
                return float(bounds[1])
            below = t
        else:
            if t <= lo:
                return float(bounds[0])
            above = t
        step = -grad / hess if hess < 0 else np.sign(grad) * _MAX_LOG_STEP
        new = t + float(np.clip(step, -_MAX_LOG_STEP, _MAX_LOG_STEP))
        if new >= above or new <= below:  # outside the bracket: probe a bound once, or bisect
            if new >= above and above == hi and not probed_hi:
                new, probed_hi = hi, True
            elif new <= below and below == lo and not probed_lo:
                new, probed_lo = lo, True
            else:
                new = 0.5 * (below + above)
        t, step = new, new - t
        if abs(step) < _LOG_STEP_TOL:
            break
    return float(np.exp(t))


def _distinct_pairs(key, value):
    """The distinct ``(key, value)`` pairs, in increasing order: ``(multiplicity, key, value)``
    (a stable sort: the same arrays on every machine)."""
    order = np.lexsort((value, key))
    key, value = key[order], value[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = (key[1:] != key[:-1]) | (value[1:] != value[:-1])
    starts = np.flatnonzero(first)
    weight = np.diff(np.append(starts, len(key))).astype(np.float64)
    return weight, key[starts], value[starts]


def trigamma(x):
    """The trigamma function ``psi'(x)`` of positive ``x``, elementwise (about 1e-10 relative).

    ``scipy.special.polygamma(1, x)`` goes through the Hurwitz zeta function
    and costs about 15 digamma evaluations; this is the recurrence
    ``psi'(x) = psi'(x + 1) + 1 / x**2`` six times and the asymptotic series
    at ``x + 6`` (Abramowitz & Stegun 6.4.12), as cheap as a digamma.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._priors import trigamma
    >>> bool(abs(trigamma(1.0) - np.pi ** 2 / 6) < 1e-10)
    True
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in range(6):  # psi'(x) = sum_{i<6} 1 / (x + i)**2 + psi'(x + 6), for every x > 0
        shifted = x + i
        out += 1.0 / (shifted * shifted)
    inv = 1.0 / (x + 6.0)
    inv2 = inv * inv
    series = inv + inv2 * (0.5 + inv * (1 / 6 + inv2 * (-1 / 30 + inv2 * (1 / 42 + inv2 * (
        -1 / 30 + inv2 * 5 / 66)))))
    return out + series
