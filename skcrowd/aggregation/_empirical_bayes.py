"""Priors fitted to the crowd (empirical Bayes) for the variational Bayes aggregators.

A variational Bayes M-step that also maximizes the evidence lower bound over a
prior's parameters maximizes, at the best variational posteriors, the marginal
likelihood of the per-worker expected counts under that prior: a
beta-binomial for a Beta prior, a Dirichlet-multinomial for a Dirichlet. The
functions below do that maximization, from the previous M-step's value, with a
safeguarded Newton ascent on the logs of the parameters that never returns a
worse value than its start (so the objective of EM never decreases). Each
prior gets a weak hyperprior worth one pseudo-worker drawn from the uniform
distribution (the conjugate prior of the family), which keeps the parameters
finite when the counts cannot pin them down (every vote agrees; a handful of
workers).
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln

_PSEUDO_WORKERS = 1.0
_BOUNDS = (1e-3, 1e6)  # every fitted parameter stays in this range
_NEWTON_STEPS = 50


def _trigamma(x):
    """The trigamma function as a central difference of the digamma function, within 1e-8
    relative: enough for Newton's curvature (the exact gradient and the line search decide the
    result), and ten times faster than ``scipy.special.polygamma(1, x)``."""
    h = 1e-4 * x
    return (digamma(x + h) - digamma(x - h)) / (2.0 * h)


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
    >>> from skcrowd.aggregation._empirical_bayes import fit_beta_prior
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
        psi_n, tri_n = digamma(a + b + n), _trigamma(a + b + n).sum()
        psi_ab, tri_ab = digamma(a + b), _trigamma(a + b)
        ga = (digamma(a + c) - psi_n).sum() - W * (digamma(a) - psi_ab) - _PSEUDO_WORKERS
        gb = (digamma(b + d) - psi_n).sum() - W * (digamma(b) - psi_ab) - _PSEUDO_WORKERS
        haa = _trigamma(a + c).sum() - tri_n - W * (_trigamma(a) - tri_ab)
        hbb = _trigamma(b + d).sum() - tri_n - W * (_trigamma(b) - tri_ab)
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
    >>> from skcrowd.aggregation._empirical_bayes import fit_dirichlet_prior
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
        second = (W * K * K * _trigamma(K * g) - K * K * _trigamma(K * g + totals).sum()
                  + _trigamma(g + counts).sum() - W * K * _trigamma(g))
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
    low, high = np.log(_BOUNDS)
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
