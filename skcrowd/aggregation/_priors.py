"""Priors chosen from the data: empirical Bayes for the MAP and variational aggregators.

A model whose per-worker distributions (confusion rows, spamming
distributions, accuracies, ...) have a Dirichlet or Beta prior can choose the
prior from the crowd by type-II maximum likelihood (empirical Bayes): the
marginal likelihood of each worker's (expected) counts ``n`` under the prior,
with the distribution integrated out. For a Dirichlet ``Dir(alpha)`` it is the
Dirichlet-multinomial evidence

``log p(n | alpha) = log Gamma(A) - log Gamma(A + N)
+ sum_l [log Gamma(alpha_l + n_l) - log Gamma(alpha_l)]``

(``A = sum_l alpha_l``, ``N = sum_l n_l``; the multinomial coefficient does
not depend on ``alpha`` and is left out), for a Beta prior the beta-binomial.
With the expected counts of an E-step it is the part of the mean-field
evidence lower bound that depends on the prior (Minka, 2000; Bishop, 2006,
section 10.2), so the same functions serve MAP EM and variational models that
learn their prior. One module for every such fit:

- :func:`dirichlet_strength`: the strength of a Dirichlet prior of fixed
  shape (:class:`~skcrowd.aggregation.DawidSkene`'s ``smoothing="auto"``),
  with :func:`dirichlet_multinomial_log_evidence`;
- :func:`fit_beta_prior` and :func:`fit_dirichlet_prior`: a Beta prior and a
  symmetric Dirichlet prior shared by the workers, each with a weak hyperprior
  (one-coin Dawid-Skene, MACE, multi-label Dawid-Skene);
- :func:`fit_dirichlet_multinomial`: a full Dirichlet prior per column, the
  exact block maximization of the ELBO (Bayesian Dawid-Skene), on the
  log-gamma differences of :mod:`.kernels.dirichlet` (both engines);
- :func:`trigamma`: the one trigamma function of these Newton searches.

Counts are model-agnostic: ``(n_groups, n_rows, n_values)`` (for
Dawid-Skene: workers, true classes, answers) with prior pseudo-counts
broadcastable to them, or per worker for the Beta prior.

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

from .kernels.dirichlet import _PolyaData


def trigamma(x):
    """The trigamma function ``psi'(x)`` of positive ``x``, elementwise (within 2e-12 relative).

    ``scipy.special.polygamma(1, x)`` goes through the Hurwitz zeta function
    and costs about 15 digamma evaluations; this is the recurrence
    ``psi'(x) = psi'(x + 1) + 1 / x**2`` six times and the asymptotic series
    at ``x + 6`` (Abramowitz & Stegun 6.4.12), as cheap as a digamma: six
    times faster than ``polygamma``, and within 2e-12 of it from ``x = 1e-150``
    to ``1e300`` (a central difference of digamma, the other way to avoid
    ``polygamma``, is as fast and only within 1e-8).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._priors import trigamma
    >>> bool(abs(trigamma(1.0) - np.pi ** 2 / 6) < 1e-10)
    True
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    # above x = 1e154 the squares overflow to inf and their inverses are the right 0
    with np.errstate(over="ignore", under="ignore"):
        for i in range(6):  # psi'(x) = sum_{i<6} 1 / (x + i)**2 + psi'(x + 6), for every x > 0
            shifted = x + i
            out += 1.0 / (shifted * shifted)
        inv = 1.0 / (x + 6.0)
        inv2 = inv * inv
        series = inv + inv2 * (0.5 + inv * (1 / 6 + inv2 * (-1 / 30 + inv2 * (1 / 42 + inv2 * (
            -1 / 30 + inv2 * 5 / 66)))))
    return out + series


# -- the strength of a Dirichlet prior of fixed shape -----------------------------------------

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
    # the nonzero entries in C order, as np.nonzero lists them, from one contiguous copy (the
    # counts arrive transposed: the 3-D nonzero of the strided view took 0.7 of 2.5 ms per
    # search at 1e6 votes, K=10)
    flat = counts.reshape(-1)
    entries = np.flatnonzero(flat > 0)
    cell = entries % shape.size  # row * n_values + column
    cells = np.bincount(cell, minlength=shape.size)
    cell_m = shape.ravel()[cells > 0]
    cells = cells[cells > 0]
    n_weight, n_cell, n = _distinct_pairs(cell, flat[entries])
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
    (a stable sort: the same arrays on every machine).

    Integer keys with integer-valued values (hard counts, the usual case) are encoded into one
    integer code ``(key - min) * span + value - min``, which orders the pairs as ``(key,
    value)`` does and is equal exactly where both are: the pairs are then counted in bins of
    the codes when their range is small (no sort at all), or sorted by one stable argsort of
    the codes (the permutation of the two-key ``lexsort``). Either way the arrays are those of
    the ``lexsort`` of :func:`_distinct_pairs_sorted`, the fallback for other values (at the
    1e5 entries of a 1e6-vote fit with K=10: 7 ms to 0.3 ms).
    """
    codes = _pair_codes(key, value)
    if codes is None:
        return _distinct_pairs_sorted(key, value)
    codes, span, n_codes, key_min, value_min = codes
    if n_codes <= 4 * len(codes) + _BINS_ALWAYS:
        weight = np.bincount(codes, minlength=n_codes)
        present = np.flatnonzero(weight)
        # the values are integers below 2**53 without a negative zero: rebuilt exactly
        return (weight[present].astype(np.float64),
                (present // span + key_min).astype(key.dtype, copy=False),
                (present % span + value_min).astype(value.dtype, copy=False))
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    starts, weight = _runs(len(codes), codes[1:] != codes[:-1])
    return weight, key[order[starts]], value[order[starts]]


# _distinct_pairs counts the codes in bins while there are at most 4 per entry plus this many
_BINS_ALWAYS = 1 << 16
_CODE_LIMIT = 1 << 62  # the codes stay below this (int64 without overflow)
_EXACT_LIMIT = float(1 << 53)  # floats below this that are integers convert exactly


def _pair_codes(key, value):
    """``(codes, span, n_codes, key_min, value_min)`` of :func:`_distinct_pairs`'s encoding of
    the pairs into one int64 code each, or None where it does not apply exactly (no entries,
    keys not integers, values not integers below 2**53, a negative zero, codes that would
    overflow)."""
    key, value = np.asarray(key), np.asarray(value)
    if (len(key) == 0 or key.ndim != 1 or value.shape != key.shape
            or key.dtype.kind not in "iu" or value.dtype.kind not in "iuf"):
        return None
    key_min, key_max = int(key.min()), int(key.max())
    value_min, value_max = value.min(), value.max()
    if value.dtype.kind == "f":
        # NaN fails both tests; a -0.0 is the pair of 0.0 and might be the one returned
        if not (-_EXACT_LIMIT < value_min and value_max < _EXACT_LIMIT):
            return None
        if value_min <= 0 <= value_max and np.any(np.signbit(value) & (value == 0)):
            return None
        integral = value.astype(np.int64)
        if not np.array_equal(integral, value):
            return None
    else:
        integral = value
    value_min, value_max = int(value_min), int(value_max)
    span = value_max - value_min + 1
    n_codes = (key_max - key_min + 1) * span
    if n_codes >= _CODE_LIMIT or key_max >= _CODE_LIMIT or value_max >= _CODE_LIMIT:
        return None
    codes = key.astype(np.int64)
    codes -= key_min
    codes *= span
    codes += integral.astype(np.int64, copy=False)
    codes -= value_min
    return codes, span, n_codes, key_min, value_min


def _distinct_pairs_sorted(key, value):
    """:func:`_distinct_pairs` by a two-key stable sort, for any keys and values."""
    order = np.lexsort((value, key))
    key, value = key[order], value[order]
    starts, weight = _runs(len(key), (key[1:] != key[:-1]) | (value[1:] != value[:-1]))
    return weight, key[starts], value[starts]


def _runs(n, differs):
    """Starts and lengths (as floats) of the runs of equal entries of a sorted array of ``n``
    entries, ``differs[i]`` telling whether entry ``i + 1`` differs from entry ``i``."""
    first = np.ones(n, dtype=bool)
    first[1:] = differs
    starts = np.flatnonzero(first)
    return starts, np.diff(np.append(starts, n)).astype(np.float64)


# -- a Beta or symmetric Dirichlet prior shared by the workers -------------------------------
#
# A variational Bayes M-step that also maximizes the evidence lower bound over a prior's
# parameters maximizes, at the best variational posteriors, the marginal likelihood of the
# per-worker expected counts under that prior: a beta-binomial for a Beta prior, a
# Dirichlet-multinomial for a Dirichlet. The functions below do that maximization, from the
# previous M-step's value, with a safeguarded Newton ascent on the logs of the parameters that
# never returns a worse value than its start (so the objective of EM never decreases). Each
# prior gets a weak hyperprior worth one pseudo-worker drawn from the uniform distribution (the
# conjugate prior of the family), which keeps the parameters finite when the counts cannot pin
# them down (every vote agrees; a handful of workers).

_PSEUDO_WORKERS = 1.0
_FIT_BOUNDS = (1e-3, 1e6)  # every fitted parameter stays in this range
_NEWTON_STEPS = 50


def beta_log_hyperprior(a, b):
    """Log-density, up to a constant, of the hyperprior of a Beta(a, b) prior: one pseudo-worker
    whose probability is uniform on [0, 1] (``E[log p] = E[log(1 - p)] = -1``)."""
    return float(_PSEUDO_WORKERS * (-(a - 1.0) - (b - 1.0) - gammaln(a) - gammaln(b)
                                    + gammaln(a + b)))


def dirichlet_log_hyperprior(concentration, n_classes):
    """Log-density, up to a constant, of the hyperprior of a symmetric Dirichlet prior: one
    pseudo-worker whose distribution is uniform on the simplex."""
    g, K = float(concentration), int(n_classes)
    mean_log = digamma(1.0) - digamma(K)  # E[log p_k] under Dirichlet(1, ..., 1)
    return float(_PSEUDO_WORKERS * ((g - 1.0) * K * mean_log + gammaln(K * g) - K * gammaln(g)))


def fit_beta_prior(successes, trials, start):
    """Empirical-Bayes ``(a, b)`` of a Beta prior shared by the workers.

    Maximizes over ``(a, b)`` the log beta-binomial marginal likelihood of the
    workers' (expected, fractional) successes ``c_j`` out of ``n_j`` trials,
    ``sum_j log B(a + c_j, b + n_j - c_j) - log B(a, b)``, plus
    :func:`beta_log_hyperprior`. Workers without trials do not enter.

    Parameters
    ----------
    successes, trials : ndarray of shape (n_workers,)
    start : array-like of shape (2,)
        Starting ``(a, b)``; the result is never worse than it.

    Returns
    -------
    prior : ndarray of shape (2,)
        ``(a, b)``, each in ``[1e-3, 1e6]``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._priors import fit_beta_prior
    >>> rng = np.random.default_rng(0)
    >>> accuracy = rng.beta(8.0, 2.0, size=3000)  # accuracies spread as Beta(8, 2)
    >>> right = rng.binomial(20, accuracy).astype(float)
    >>> fit_beta_prior(right, np.full(3000, 20.0), [1.0, 1.0]).round(1)
    array([8.1, 2.1])
    """
    voted = trials > 0
    c = successes[voted]
    d = np.maximum(trials[voted] - c, 0.0)  # successes <= trials up to rounding
    n = c + d
    W = voted.sum() + _PSEUDO_WORKERS

    def value(x):
        a, b = np.exp(x)
        return (float((gammaln(a + c) + gammaln(b + d) - gammaln(a + b + n)).sum())
                + beta_log_hyperprior(a, b) - (W - _PSEUDO_WORKERS) * float(
                    gammaln(a) + gammaln(b) - gammaln(a + b)))

    def derivatives(x):
        a, b = np.exp(x)
        psi_n, tri_n = digamma(a + b + n), trigamma(a + b + n).sum()
        psi_ab, tri_ab = digamma(a + b), trigamma(a + b)
        ga = (digamma(a + c) - psi_n).sum() - W * (digamma(a) - psi_ab) - _PSEUDO_WORKERS
        gb = (digamma(b + d) - psi_n).sum() - W * (digamma(b) - psi_ab) - _PSEUDO_WORKERS
        haa = trigamma(a + c).sum() - tri_n - W * (trigamma(a) - tri_ab)
        hbb = trigamma(b + d).sum() - tri_n - W * (trigamma(b) - tri_ab)
        hab = W * tri_ab - tri_n
        grad = np.array([a * ga, b * gb])  # in (log a, log b)
        hess = np.array([[a * a * haa + a * ga, a * b * hab], [a * b * hab, b * b * hbb + b * gb]])
        return grad, hess

    return np.exp(_newton_ascent(value, derivatives, np.log(np.asarray(start, dtype=float))))


def fit_dirichlet_prior(counts, start):
    """Empirical-Bayes concentration ``g`` of a symmetric Dirichlet prior shared by the workers.

    Maximizes over ``g`` the log Dirichlet-multinomial marginal likelihood of
    the workers' (expected, fractional) counts ``n_jk``,
    ``sum_j log Gamma(K g) - log Gamma(K g + n_j) + sum_k log Gamma(g + n_jk)
    - log Gamma(g)``, plus :func:`dirichlet_log_hyperprior`. Workers without
    counts do not enter.

    Parameters
    ----------
    counts : ndarray of shape (n_workers, K)
    start : float
        Starting ``g``; the result is never worse than it.

    Returns
    -------
    concentration : float
        ``g``, in ``[1e-3, 1e6]``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._priors import fit_dirichlet_prior
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet([0.5, 0.5, 0.5], size=2000)  # each worker's own label distribution
    >>> counts = np.array([rng.multinomial(30, q) for q in p], dtype=float)
    >>> round(fit_dirichlet_prior(counts, 10.0), 2)
    0.5
    """
    K = counts.shape[1]
    totals = counts.sum(axis=1)
    counts, totals = counts[totals > 0], totals[totals > 0]
    W = len(totals) + _PSEUDO_WORKERS
    mean_log = digamma(1.0) - digamma(K)

    def value(x):
        g = float(np.exp(x[0]))
        return (float((gammaln(K * g) - gammaln(K * g + totals)).sum()
                      + (gammaln(g + counts) - gammaln(g)).sum())
                + dirichlet_log_hyperprior(g, K))

    def derivatives(x):
        g = float(np.exp(x[0]))
        first = (W * K * digamma(K * g) - K * digamma(K * g + totals).sum()
                 + digamma(g + counts).sum() - W * K * digamma(g) + _PSEUDO_WORKERS * K * mean_log)
        second = (W * K * K * trigamma(K * g) - K * K * trigamma(K * g + totals).sum()
                  + trigamma(g + counts).sum() - W * K * trigamma(g))
        return np.array([g * first]), np.array([[g * g * second + g * first]])

    return float(np.exp(_newton_ascent(value, derivatives, np.log([float(start)]))[0]))


def _newton_ascent(value, derivatives, x):
    """Maximize ``value`` over ``x`` (logs of the parameters) from ``x``, within the bounds.

    Newton steps where the Hessian is negative definite, curvature-scaled gradient steps
    elsewhere, each at most 1 in every coordinate and halved until ``value`` does not decrease
    (beyond rounding: ``1e-13`` relative); runs until a step moves ``x`` by less than
    ``1e-12``, so that the result is the maximum to rounding wherever the search starts (the
    summation order of the counts, which differs between backends, then changes it by rounding
    only).
    """
    low, high = np.log(_FIT_BOUNDS)
    x = np.clip(x, low, high)
    f = value(x)
    for _ in range(_NEWTON_STEPS):
        grad, hess = derivatives(x)
        if not (np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))):
            break
        if np.all(np.linalg.eigvalsh(hess) < 0):
            step = -np.linalg.solve(hess, grad)
        else:
            step = grad / max(np.abs(hess).max(), 1.0)
        step /= max(1.0, np.abs(step).max())
        if np.abs(step).max() < 1e-12:
            break
        scale = 1.0
        while scale > 1e-6:
            trial = np.clip(x + scale * step, low, high)
            f_trial = value(trial)
            if f_trial >= f - 1e-13 * abs(f):
                break
            scale *= 0.5
        else:
            break
        moved = np.abs(trial - x).max()
        x, f = trial, max(f, f_trial)
        if moved < 1e-12:
            break
    return x


# -- a Dirichlet prior per column, by the exact evidence ----------------------------------------

_PRIOR_MAX_ITER = 50
_PRIOR_TOL = 1e-8
_PRIOR_HALVINGS = 6
_PRIOR_GAIN_TOL = 1e-9
_TINY = np.finfo(np.float64).tiny  # a curvature below this (subnormal) has no finite inverse


def fit_dirichlet_multinomial(counts_t, prior_t, *, bounds=(1e-300, np.inf),
                              max_iter=_PRIOR_MAX_ITER, tol=_PRIOR_TOL, return_evidence=False):
    """Empirical-Bayes Dirichlet priors: maximize the Dirichlet-multinomial evidence of counts.

    Column ``s`` of ``prior_t`` is the Dirichlet prior ``alpha`` shared by row
    ``s`` of every worker's table, whose (expected, possibly fractional)
    counts are ``counts_t[j, :, s]``. The update maximizes, for each column,

    ``F(alpha) = sum_j [log Gamma(A) - log Gamma(A + n_j) + sum_l (log Gamma(alpha_l
    + N_jl) - log Gamma(alpha_l))]``, with ``A = sum_l alpha_l`` and ``n_j =
    sum_l N_jl``,

    the log-evidence ``sum_j log B(alpha + N_j) / B(alpha)`` of the counts
    under ``alpha`` (Minka, 2000, section 4, the Polya distribution). For a
    model whose posterior rows are ``q = Dir(alpha + N_j)`` this is the
    evidence lower bound's dependence on ``alpha`` jointly with ``q``, so the
    update is an exact block maximization of the ELBO. Rows without counts do
    not enter ``F`` (a column without any keeps its prior); an entry ``l``
    without counts in any row of the column gets the lower bound (``F``
    decreases in it). The other entries take
    safeguarded Newton steps, the Hessian being a diagonal plus a rank-one
    matrix (Minka, 2000), each entry at most doubled or halved: a full step,
    or halved ones until ``F`` increases,
    within ``bounds``, until the predicted gain is within the rounding of
    ``F`` (1e-9 per term) (entries held at a bound they are pushed against do not
    move). ``F`` never decreases.

    Parameters
    ----------
    counts_t : ndarray of shape (n_workers, D, S)
        Non-negative counts ``N[j, l, s]``.
    prior_t : ndarray of shape (D, S)
        Current priors (the starting point), positive.
    bounds : (float, float)
        Box of the entries of the prior.
    max_iter : int, default=50
        Maximum number of Newton steps.
    tol : float, default=1e-8
        Stop when no step changes an entry by more than ``tol`` relative.
    return_evidence : bool, default=False
        Also return ``F`` at the result, summed over the columns (the value the search
        computed last, not a new pass).

    Returns
    -------
    prior_t : ndarray of shape (D, S)
    evidence : float
        Only with ``return_evidence``.

    References
    ----------
    T. P. Minka. "Estimating a Dirichlet distribution". Technical report, MIT, 2000.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation._priors import fit_dirichlet_multinomial
    >>> rng = np.random.default_rng(0)
    >>> rows = rng.dirichlet([6.0, 2.0, 1.0], size=4000)  # 4000 workers, 30 answers each
    >>> counts = np.stack([rng.multinomial(30, p) for p in rows]).astype(float)[:, :, None]
    >>> fit_dirichlet_multinomial(counts, np.ones((3, 1))).ravel().round(1)
    array([6., 2., 1.])
    """
    low, high = bounds
    S = prior_t.shape[1]
    data = _PolyaData(counts_t)
    alpha = np.array(prior_t, dtype=np.float64)
    free = data.entries > 0
    # an answer nobody gives in a column with counts: F decreases in its pseudo-count
    alpha[~free & free.any(axis=0)] = low
    for _ in range(max_iter):
        value, gradient, diagonal, rank_one = data.evaluate(alpha, derivatives=True)
        # entries that move: those with counts (of a curvature that does not round to zero),
        # but not out of the box they are held at
        active = (free & (diagonal < -_TINY) & ~((alpha >= high) & (gradient > 0))
                  & ~((alpha <= low) & (gradient < 0)))
        gradient[~active] = 0.0
        inverse_d = np.where(active, 1.0 / np.where(active, diagonal, -1.0), 0.0)
        # Newton direction -H^-1 g (H = diag(d) + c 1 1^T, Sherman-Morrison) where H is
        # negative definite, else the diagonal Newton direction -g / d
        denominator = 1.0 + rank_one * inverse_d.sum(axis=0)
        definite = denominator > 0
        correction = rank_one * (gradient * inverse_d).sum(axis=0) / np.where(definite,
                                                                              denominator, 1.0)
        direction = -(gradient - np.where(definite, correction, 0.0)) * inverse_d
        # a trust region: no entry more than doubled or halved by one step
        ratio = direction / alpha
        largest = np.maximum(ratio.max(axis=0), -2.0 * ratio.min(axis=0))
        direction *= 1.0 / np.maximum(largest, 1.0)
        # columns whose predicted gain is within the rounding of F (about 1e-16 times each
        # of its log-gamma terms, up to 1e7 for pseudo-counts of 1e5) are at their optimum
        moving = (gradient * direction).sum(axis=0) > _PRIOR_GAIN_TOL * data.n_terms
        step = np.ones(S)
        new = alpha.copy()
        for _ in range(_PRIOR_HALVINGS):
            trial = np.where(free, np.clip(alpha + step * direction, low, high), alpha)
            # a step too small to change the prior ends the column's search (an optimum, or
            # a bound it is pushed against)
            moving &= np.max(np.abs(trial - alpha) / alpha, axis=0) > tol
            if not moving.any():
                break
            trial_value = data.evaluate(trial)
            accept = moving & (trial_value > value)
            new[:, accept] = trial[:, accept]
            value = np.where(accept, trial_value, value)
            moving &= ~accept
            step = np.where(moving, 0.5 * step, step)
        if np.array_equal(new, alpha):
            break
        alpha = new
    if not return_evidence:
        return alpha
    # value holds F at alpha: every accepted step updated its column's entry with it
    return alpha, float((data.evaluate(alpha) if max_iter < 1 else value).sum())
