"""Dirichlet posteriors of the variational models: expected logs and KL divergences.

The variational (mean-field) models keep a Dirichlet posterior ``q`` for every
row of every worker's confusion matrix. Their tables use the layout of the
Dawid-Skene kernels (:mod:`.dawid_skene`): ``[j, l, s]`` with ``l`` the answer
and ``s`` the latent state (the true class, or a (class, subtype) pair), so
each Dirichlet runs over the middle axis. From these posteriors the models
need, at each iteration,

- the expected log-probabilities ``E_q[log pi[j, s, l]] = digamma(a[j, l, s])
  - digamma(sum_l a[j, l, s])``, which the E-step uses in place of
  log-probabilities;
- the sum over rows of ``KL(q || prior)``, the parameters' term of the ELBO;

both from one pass (:func:`dirichlet_expectations`): numba (parallel over
workers, with its own ``digamma``, accurate to about 1e-15) or numpy
(``scipy.special``). :func:`dirichlet_kl` is the same divergence for small
arrays. :class:`_PolyaData` holds the log-gamma differences of the
Dirichlet-multinomial evidence, on both engines: the KL of
:func:`dirichlet_posterior_kl`, and the empirical-Bayes fit of a prior shared
by many rows (``fit_dirichlet_multinomial`` in ``skcrowd.aggregation._priors``,
with the other fits of priors to the data).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import digamma, gammaln, zeta

from ._common import _MAX_CHUNKS, _engine, _jit, _parallel, numba

_DIGAMMA_SHIFT = 10.0  # digamma: recurrence up to here, then the asymptotic series
_TAYLOR_SHIFT = 1e-8  # shifts below this times their base: Taylor expansion


def dirichlet_expectations(posterior_t, prior_t, *, out=None):
    """Expected logs of Dirichlet rows and their summed KL divergence to a shared prior.

    Parameters
    ----------
    posterior_t : ndarray of shape (n_workers, K, S)
        Dirichlet parameters ``a[j, :, s]`` of the posterior of row ``s`` of
        worker ``j`` (over the ``K`` answers, the middle axis), all positive.
    prior_t : ndarray of shape (K, S)
        Dirichlet parameters ``b[:, s]`` of the prior of row ``s`` (every worker's).
    out : ndarray of shape (n_workers, K, S), default=None
        C-contiguous float64 buffer for the expected logs (allocated when None).

    Returns
    -------
    expected_log_t : ndarray of shape (n_workers, K, S)
        ``E_q[log pi[j, s, l]] = digamma(a[j, l, s]) - digamma(sum_l a[j, l, s])``.
    kl : float
        ``sum_{j, s} KL(Dir(a[j, :, s]) || Dir(b[:, s]))``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation.kernels import dirichlet_expectations
    >>> posterior = np.array([[[2.0], [1.0]]])  # one worker, one row: Dir(2, 1)
    >>> expected_log, kl = dirichlet_expectations(posterior, np.ones((2, 1)))
    >>> expected_log.ravel()  # digamma(2) - digamma(3), digamma(1) - digamma(3)
    array([-0.5, -1.5])
    >>> round(kl, 6)  # KL(Dir(2, 1) || Dir(1, 1)) = log 2 - 1/2
    0.193147
    """
    posterior_t = np.ascontiguousarray(posterior_t, dtype=np.float64)
    prior_t = np.ascontiguousarray(prior_t, dtype=np.float64)
    if out is None:
        out = np.empty_like(posterior_t)
    if _engine() == "numba":
        row_kl = np.empty(posterior_t.shape[0])
        kernel = (_expectations_parallel if _parallel(posterior_t.size)
                  else _expectations_serial)
        kernel(posterior_t, prior_t, np.stack([gammaln(prior_t), digamma(prior_t)]),
               gammaln(prior_t.sum(axis=0)), out, row_kl)
        return out, float(row_kl.sum())
    totals = posterior_t.sum(axis=1)
    digamma(posterior_t, out=out)
    out -= digamma(totals)[:, None, :]
    prior_totals = prior_t.sum(axis=0)
    row_kl = (gammaln(totals) - gammaln(prior_totals)
              - (gammaln(posterior_t) - gammaln(prior_t)).sum(axis=1)
              + ((posterior_t - prior_t) * out).sum(axis=1))
    return out, float(row_kl.sum(axis=1).sum())


def dirichlet_posterior_kl(counts_t, prior_t, expected_log_t, *, evidence=None):
    """``sum_{j, s} KL(Dir(b[:, s] + N[j, :, s]) || Dir(b[:, s]))``, without cancellation.

    The divergence of :func:`dirichlet_expectations` for posteriors that are the prior
    plus counts, written as ``sum_l N_l E[log pi_l]`` minus the log-evidence of the counts
    (the ``F`` of ``fit_dirichlet_multinomial``), whose log-gamma differences are computed
    directly. With pseudo-counts of 1e5 the divergence as a difference of log-gamma values
    (about 1e6 each) keeps only about 1e-9 of absolute precision, the level at which an
    ELBO then seems to decrease.

    Parameters
    ----------
    counts_t : ndarray of shape (n_workers, K, S)
        Non-negative counts ``N[j, l, s]``.
    prior_t : ndarray of shape (K, S)
        Prior ``b``, positive.
    expected_log_t : ndarray of shape (n_workers, K, S)
        ``E_q[log pi]`` of the posteriors ``b + N`` (:func:`dirichlet_expectations`).
    evidence : float, default=None
        The log-evidence ``F`` of the counts under ``b``, when known (the second value of
        ``fit_dirichlet_multinomial(..., return_evidence=True)``); computed otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation.kernels import dirichlet_expectations, dirichlet_posterior_kl
    >>> counts, prior = np.array([[[1.0], [0.0]]]), np.ones((2, 1))
    >>> expected_log, kl = dirichlet_expectations(counts + prior, prior)
    >>> round(dirichlet_posterior_kl(counts, prior, expected_log), 6), round(kl, 6)
    (0.193147, 0.193147)
    """
    counts_t = np.asarray(counts_t, dtype=np.float64)
    if evidence is None:
        evidence = _PolyaData(counts_t).evaluate(np.asarray(prior_t, dtype=np.float64)).sum()
    return float((counts_t * expected_log_t).sum() - evidence)


def dirichlet_kl(posterior, prior):
    """``KL(Dir(posterior) || Dir(prior))`` over the last axis (summed over the others).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation.kernels import dirichlet_kl
    >>> round(dirichlet_kl(np.array([2.0, 1.0]), np.ones(2)), 6)
    0.193147
    """
    posterior = np.asarray(posterior, dtype=np.float64)
    prior = np.broadcast_to(np.asarray(prior, dtype=np.float64), posterior.shape)
    total = posterior.sum(axis=-1, keepdims=True)
    expected_log = digamma(posterior) - digamma(total)
    kl = (gammaln(total[..., 0]) - gammaln(prior.sum(axis=-1))
          - (gammaln(posterior) - gammaln(prior)).sum(axis=-1)
          + ((posterior - prior) * expected_log).sum(axis=-1))
    return float(np.sum(kl))


def dirichlet_expected_log(posterior):
    """``E[log p]`` under ``Dir(posterior)`` over the last axis: ``digamma(a) - digamma(sum a)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation.kernels import dirichlet_expected_log
    >>> dirichlet_expected_log(np.array([2.0, 1.0]))
    array([-0.5, -1.5])
    """
    posterior = np.asarray(posterior, dtype=np.float64)
    return digamma(posterior) - digamma(posterior.sum(axis=-1, keepdims=True))


class _PolyaData:
    """Non-zero counts, and the pieces of their Dirichlet-multinomial log-evidence ``F``.

    Every piece is a sum of differences ``f(base + shift) - f(base)`` over the non-zero
    counts (``base`` a prior entry, ``shift`` the count) or over the rows with counts
    (``base`` a column's total, ``shift`` the row's count), with ``f`` the log-gamma function
    or its derivatives (:func:`_difference_sums`). The differences are computed directly, to
    full relative precision, not as differences of large values: at the optimum the rows'
    and the counts' parts of the gradient cancel, and with pseudo-counts in the thousands a
    difference of ``digamma`` values would leave only rounding.
    """

    def __init__(self, counts_t):
        counts_t = np.asarray(counts_t, dtype=np.float64)
        _, D, S = counts_t.shape
        self.shape = (D, S)
        totals = counts_t.sum(axis=1)
        row_column = np.nonzero(totals > 0)[1].astype(np.int64)  # column of each row
        _, answer, column = np.nonzero(counts_t > 0)
        cell = (answer * S + column).astype(np.int64)  # (answer, column) of each count
        self.entries = np.bincount(cell, minlength=D * S).reshape(D, S)
        self.n_terms = self.entries.sum(axis=0) + np.bincount(row_column, minlength=S)
        # the rows' and the counts' differences in one pass (one set of array operations: a
        # small fit's M-step is bound by their number): bases 0 .. S - 1 are the columns'
        # totals, then the D * S prior entries
        self.index = np.concatenate([row_column, S + cell])
        self.shift = np.concatenate([totals[totals > 0], counts_t[counts_t > 0]])

    def evaluate(self, alpha, derivatives=False):
        """``F`` of every column; with ``derivatives``, also the gradient ``(D, S)`` and the
        Hessian ``diag(d) + c 1 1^T``: ``d`` ``(D, S)``, ``c`` ``(S,)``."""
        S = self.shape[1]
        sums = _difference_sums(self.index, self.shift,
                                np.concatenate([alpha.sum(axis=0), alpha.ravel()]), derivatives)
        rows = [s[:S] for s in sums]
        cells = [s[S:].reshape(self.shape) for s in sums]
        value = cells[0].sum(axis=0) - rows[0]
        if not derivatives:
            return value
        return value, cells[1] - rows[1], cells[2], -rows[2]


_POLYGAMMA_FACTOR = {m: (-1.0) ** (m + 1) * math.gamma(m + 1.0) for m in (1, 2, 3)}


def _difference_sums(index, shift, base, derivatives=False):
    """Per entry ``b`` of ``base``, sums over ``e`` with ``index[e] = b`` of ``f(base[b] +
    shift[e]) - f(base[b])`` for ``f = log Gamma``, and with ``derivatives`` also for ``f =
    digamma`` and ``f = trigamma``: a tuple of one or three arrays.

    A shift below ``_TAYLOR_SHIFT`` times its base (the expected count of a class a vote
    almost surely is not) takes the second-order Taylor expansion at the base, whose
    remainder is below 1e-16 relative there, from the derivatives of ``log Gamma`` at each
    base (computed once, by scipy, for both engines); the others
    :func:`_gamma_differences`. The numba engine sums chunks of the entries in parallel
    (a fixed number of chunks, added in order: the same sums on any number of threads)."""
    n, n_sums = len(base), 3 if derivatives else 1
    # polygamma(m, x) = (-1)^(m + 1) m! zeta(m + 1, x), the product scipy's polygamma computes
    # (its wrapper also computes a digamma it discards: a third of a small fit's M-step)
    taylor = np.stack([digamma(base), *(_POLYGAMMA_FACTOR[m] * zeta(m + 1, base)
                                        for m in (1, 2, 3))])
    if _engine() == "numba":
        n_chunks = _MAX_CHUNKS if _parallel(len(index)) else 1
        out = np.zeros((n_chunks, n_sums, n))
        bounds = np.linspace(0, len(index), n_chunks + 1).astype(np.int64)
        kernel = _difference_sums_parallel if n_chunks > 1 else _difference_sums_serial
        kernel(index, shift, base, taylor, bounds, out)
        return tuple(out.sum(axis=0))
    x, h = base[index], shift
    near = h <= _TAYLOR_SHIFT * x
    sums = []
    for k, full in enumerate(_gamma_differences(x[~near], h[~near], derivatives)):
        # f(x + h) - f(x) = h f'(x) + h^2 / 2 f''(x): f' and f'' are rows k and k + 1
        first, second = taylor[k][index[near]], taylor[k + 1][index[near]]
        values = np.empty_like(h)
        values[near] = h[near] * (first + 0.5 * h[near] * second)
        values[~near] = full
        sums.append(np.bincount(index, values, minlength=n))
    return tuple(sums)


# Asymptotic series at y >= _DIGAMMA_SHIFT (remainders below 1e-16 relative), in powers of
# 1 / y (Bernoulli numbers): log Gamma(y) = (y - 1/2) log y - y + log(2 pi) / 2 + sum_p
# _LGAMMA[p] y^-p; digamma(y) = log y + sum_p _DIGAMMA[p] y^-p; trigamma(y) = sum_p
# _TRIGAMMA[p] y^-p (entry p of each; 15 powers).
_LGAMMA = np.array([0, 1 / 12, 0, -1 / 360, 0, 1 / 1260, 0, -1 / 1680, 0, 1 / 1188, 0,
                    -691 / 360360, 0, 1 / 156, 0, 0])
_DIGAMMA = np.array([0, -1 / 2, -1 / 12, 0, 1 / 120, 0, -1 / 252, 0, 1 / 240, 0, -1 / 132, 0,
                     691 / 32760, 0, -1 / 12, 0])
_TRIGAMMA = np.array([0, 1, 1 / 2, 1 / 6, 0, -1 / 30, 0, 1 / 42, 0, -1 / 30, 0, 5 / 66, 0,
                      -691 / 2730, 0, 7 / 6])
_POWERS = 15


def _gamma_differences(x, h, derivatives=False):
    """numpy: ``f(x + h) - f(x)`` elementwise (``x > 0``, ``h >= 0``), for ``f = log Gamma``
    (and, with ``derivatives``, ``digamma`` and ``trigamma``), without cancellation: the
    recurrences ``f(x) = f(x + 1) - ...`` up to ``x >= 10``, whose terms differ in closed
    form (for log Gamma, ``log prod (1 + h / (x + i))`` through the product minus one), then
    the difference of the asymptotic series, each of its powers as ``(x + h)^-p - x^-p =
    x^-p (q^p - 1)`` with ``q = x / (x + h)`` and ``q^p - 1 = (q - 1) sum_{i<p} q^i``. The
    numba engine computes the same, in the same operations (``_gamma_difference``)."""
    x = np.array(x, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64)
    product, psi, trigamma = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    small = np.flatnonzero(x < _DIGAMMA_SHIFT)
    while small.size:
        xs, hs = x[small], h[small]
        u = hs / xs  # log Gamma(x) = log Gamma(x + 1) - log x: product <- prod(1 + u) - 1
        product[small] += u + product[small] * u
        if derivatives:  # digamma(x) = digamma(x + 1) - 1 / x; trigamma: + 1 / x^2
            t = 1.0 / (xs * (xs + hs))
            psi[small] += hs * t
            trigamma[small] -= hs * (2.0 * xs + hs) * t * t
        x[small] += 1.0
        small = small[x[small] < _DIGAMMA_SHIFT]
    log_ratio = np.log1p(h / x)
    lgamma = (x - 0.5) * log_ratio + h * (np.log(x + h) - 1.0) - np.log1p(product)
    psi += log_ratio
    inverse, step, ratio = 1.0 / x, -h / (x + h), x / (x + h)
    inverse_power, ratio_power, geometric = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    difference, term = np.empty_like(x), np.empty_like(x)
    series = [(lgamma, _LGAMMA), *([(psi, _DIGAMMA), (trigamma, _TRIGAMMA)] if derivatives
                                   else [])]
    for p in range(1, _POWERS + 1):  # in place, and no term of a zero coefficient (adding
        geometric += ratio_power      # 0 * difference changes nothing): the same numbers
        ratio_power *= ratio
        inverse_power *= inverse
        np.multiply(inverse_power, step, out=difference)
        difference *= geometric  # (x + h)^-p - x^-p
        for total, coefficients in series:
            if coefficients[p] != 0.0:
                np.multiply(coefficients[p], difference, out=term)
                total += term
    return (lgamma, psi, trigamma) if derivatives else (lgamma,)


# ---------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------


if numba is not None:
    from ._common import prange

    @_jit(parallel=False, inline="always", fastmath={"contract"})
    def _digamma(x):
        """``digamma(x)`` for ``x > 0``: the recurrence ``digamma(x) = digamma(x + 1) - 1 / x``
        up to ``x >= 10``, then the asymptotic series to ``x**-14`` (remainder below 1e-16)."""
        shift = 0.0
        while x < _DIGAMMA_SHIFT:
            shift += 1.0 / x
            x += 1.0
        f = 1.0 / (x * x)
        series = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (
            1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))))
        return math.log(x) - 0.5 / x + series - shift

    @_jit(parallel=False, inline="always")
    def _gamma_difference(x, h, derivatives, out, b):
        """``out[:, b] +=`` the differences of :func:`_gamma_differences` at one ``(x, h)``,
        in the same operations."""
        product, psi, trigamma = 0.0, 0.0, 0.0
        while x < _DIGAMMA_SHIFT:
            u = h / x
            product += u + product * u
            if derivatives:
                t = 1.0 / (x * (x + h))
                psi += h * t
                trigamma -= h * (2.0 * x + h) * t * t
            x += 1.0
        log_ratio = math.log1p(h / x)
        lgamma = (x - 0.5) * log_ratio + h * (math.log(x + h) - 1.0) - math.log1p(product)
        psi += log_ratio
        inverse, step, ratio = 1.0 / x, -h / (x + h), x / (x + h)
        inverse_power, ratio_power, geometric = 1.0, 1.0, 0.0
        for p in range(1, _POWERS + 1):
            geometric += ratio_power
            ratio_power *= ratio
            inverse_power *= inverse
            difference = inverse_power * step * geometric
            lgamma += _LGAMMA[p] * difference
            if derivatives:
                psi += _DIGAMMA[p] * difference
                trigamma += _TRIGAMMA[p] * difference
        out[0, b] += lgamma
        if derivatives:
            out[1, b] += psi
            out[2, b] += trigamma

    @_jit(parallel=False)
    def _difference_chunk(index, shift, base, taylor, start, stop, out):
        derivatives = out.shape[0] == 3
        for e in range(start, stop):
            b = index[e]
            h = shift[e]
            if h <= _TAYLOR_SHIFT * base[b]:
                out[0, b] += h * (taylor[0, b] + 0.5 * h * taylor[1, b])
                if derivatives:
                    out[1, b] += h * (taylor[1, b] + 0.5 * h * taylor[2, b])
                    out[2, b] += h * (taylor[2, b] + 0.5 * h * taylor[3, b])
            else:
                _gamma_difference(base[b], h, derivatives, out, b)

    @_jit(parallel=False)
    def _difference_sums_serial(index, shift, base, taylor, bounds, out):
        for c in range(bounds.shape[0] - 1):
            _difference_chunk(index, shift, base, taylor, bounds[c], bounds[c + 1], out[c])

    @_jit
    def _difference_sums_parallel(index, shift, base, taylor, bounds, out):
        for c in prange(bounds.shape[0] - 1):
            _difference_chunk(index, shift, base, taylor, bounds[c], bounds[c + 1], out[c])

    @_jit(parallel=False)
    def _expectations_worker(posterior, prior, prior_special, prior_total_lgamma, out, row_kl,
                             j):
        """Worker ``j``'s expected logs into ``out[j]``, its rows' summed KL into
        ``row_kl[j]``; entries equal to the prior's (no counts) add nothing to the KL and
        take ``digamma`` of the prior from ``prior_special`` (its ``log Gamma`` and
        ``digamma``)."""
        K, S = posterior.shape[1], posterior.shape[2]
        kl = 0.0
        for s in range(S):
            total = 0.0
            for a in range(K):
                total += posterior[j, a, s]
            psi_total = _digamma(total)
            kl += math.lgamma(total) - prior_total_lgamma[s]
            for a in range(K):
                p = posterior[j, a, s]
                if p == prior[a, s]:
                    out[j, a, s] = prior_special[1, a, s] - psi_total
                else:
                    e = _digamma(p) - psi_total
                    out[j, a, s] = e
                    kl += (p - prior[a, s]) * e - math.lgamma(p) + prior_special[0, a, s]
        row_kl[j] = kl

    @_jit(parallel=False)
    def _expectations_serial(posterior, prior, prior_special, prior_total_lgamma, out, row_kl):
        for j in range(posterior.shape[0]):
            _expectations_worker(posterior, prior, prior_special, prior_total_lgamma, out,
                                 row_kl, j)

    @_jit
    def _expectations_parallel(posterior, prior, prior_special, prior_total_lgamma, out,
                               row_kl):
        for j in prange(posterior.shape[0]):
            _expectations_worker(posterior, prior, prior_special, prior_total_lgamma, out,
                                 row_kl, j)
