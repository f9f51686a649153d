"""Ordinal votes: a Dawid-Skene whose confusion rows come from a latent score per worker."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from scipy.special import logsumexp, ndtr
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import _as_it_was_on_error
from ..votes import check_votes
from ._base import BaseAggregator, _is_pandas_frame, _keyed_like
from ._em import _MAX_PRIOR_ITER  # iterations in which the latent-score prior may settle

__all__ = ["OrdinalDawidSkene"]

_SQRT_2PI = np.sqrt(2 * np.pi)


def _fsum(values):
    """Exactly rounded sum: the same for any order of the values (permuted workers or tasks)."""
    return math.fsum(np.ravel(values).tolist())


def _column_sums(values):
    return np.array([_fsum(values[:, k]) for k in range(values.shape[1])])


def _boundaries(K):
    """Cut points between grades: -inf, 0.5, 1.5, ..., K - 1.5, +inf (grade k sits at k)."""
    return np.concatenate([[-np.inf], np.arange(K - 1) + 0.5, [np.inf]])


def _cells(bias, log_noise, positions):
    """Standardized cut points ``u[w, k, l] = (c_l - mu_k - b_w) / sigma_w``, (W, K, K+1)."""
    sigma = np.exp(log_noise)[:, None, None]
    return (_boundaries(len(positions))[None, None, :] - positions[None, :, None]
            - bias[:, None, None]) / sigma


def _pdf(u):
    out = np.exp(-0.5 * np.where(np.isfinite(u), u, 0.0) ** 2) / _SQRT_2PI
    return np.where(np.isfinite(u), out, 0.0)


def confusions(bias, log_noise, positions, lapse):
    """Confusion matrices ``(W, K, K)``: row k, the grades a worker gives a task of grade k.

    The worker's score of a task of grade ``k`` is ``positions[k] + bias + noise`` (noise
    normal, standard deviation ``exp(log_noise)``); the grade given is the one whose interval
    ``(l - 0.5, l + 0.5)`` holds the score (the first and last are open-ended). A lapse rate
    mixes in a uniform grade, so that no vote has probability 0.
    """
    u = _cells(bias, log_noise, positions)
    p = ndtr(u[..., 1:]) - ndtr(u[..., :-1])
    return (1 - lapse) * np.clip(p, 0.0, 1.0) + lapse / len(positions)


def _cell_terms(counts, bias, log_noise, positions, lapse):
    """``N_kl log p_kl`` and its derivatives by the bias (= minus by the row's position) and by
    the log noise, cell by cell, (W, K, K) each."""
    u = _cells(bias, log_noise, positions)
    p = (1 - lapse) * np.clip(ndtr(u[..., 1:]) - ndtr(u[..., :-1]), 0.0, 1.0)
    p = p + lapse / len(positions)
    dens = _pdf(u)
    ud = np.where(np.isfinite(u), u, 0.0) * dens
    sigma = np.exp(log_noise)[:, None, None]
    # d u / d b = d u / d mu_k = -1 / sigma, d u / d log sigma = -u
    d_bias = (1 - lapse) * (-(dens[..., 1:] - dens[..., :-1]) / sigma) / p
    d_noise = (1 - lapse) * (-(ud[..., 1:] - ud[..., :-1])) / p
    return counts * np.log(p), counts * d_bias, counts * d_noise


def _objective_and_gradient(counts, bias, log_noise, positions, lapse, bias_sd, noise_sd,
                            noise_mean):
    """Each worker's ``sum_kl N_kl log p_kl`` plus the log-prior, and its gradient."""
    f, d_bias, d_noise = _cell_terms(counts, bias, log_noise, positions, lapse)
    f = np.sum(f, axis=(1, 2))
    g_bias = np.sum(d_bias, axis=(1, 2))
    g_noise = np.sum(d_noise, axis=(1, 2))
    f = f - 0.5 * (bias / bias_sd) ** 2 - 0.5 * ((log_noise - noise_mean) / noise_sd) ** 2
    g_bias = g_bias - bias / bias_sd ** 2
    g_noise = g_noise - (log_noise - noise_mean) / noise_sd ** 2
    return f, np.stack([g_bias, g_noise], axis=1)


def _positions_objective(counts, bias, log_noise, positions, lapse):
    """Each row's (true grade's) ``sum_w sum_l N_wkl log p_wkl`` and its derivative by
    ``mu_k``."""
    f, d_bias, _ = _cell_terms(counts, bias, log_noise, positions, lapse)
    return np.sum(f, axis=(0, 2)), np.sum(d_bias, axis=(0, 2))


class OrdinalDawidSkene(BaseAggregator):
    """Dawid-Skene for ordinal grades, its confusion rows drawn towards a latent-score model.

    The classes are grades, in the order ``grades`` gives (``poor, fair, good``), or in numeric
    order for numeric grades; grades that are not numbers need ``grades`` (their sorted order is
    alphabetical, not the grades'). Consecutive grades are one step apart on the latent scale
    whatever their values: grades 0, 2, 4, 6, 8 are five adjacent steps, as 0, 1, 2, 3, 4 are
    (``fit_positions=True`` learns unequal steps from the votes). Each task has a true grade
    ``k`` (prior ``pi``). The latent-score model of worker ``j``: they score a task of grade
    ``k`` as ``mu_k + b_j + e`` with Gaussian noise ``e`` of standard deviation ``sigma_j``
    (``mu_k = k`` unless
    ``fit_positions``), and give the grade whose interval ``(l - 1/2, l + 1/2)`` holds the
    score; a small lapse rate (a uniform grade, ``lapse``) keeps every vote possible. That is a
    confusion matrix of two parameters instead of ``K (K - 1)``, which knows that a worker who
    is wrong is more often wrong by one grade than by three, and that a worker who grades
    everything one step high has a bias, not a bad row.

    Each worker's confusion matrix is then a Dawid-Skene matrix with a Dirichlet prior whose
    mean is that worker's latent-score matrix, worth ``prior_strength`` votes per row: a worker
    with few votes gets the ordinal structure, a worker with many votes the rows the data say
    (``prior_strength=np.inf``: the latent-score model itself; small: nearly Dawid-Skene). The
    latent-score models (biases, noises, and the crowd's typical noise ``m``, with priors
    ``b_j ~ N(0, bias_sd^2)``, ``log sigma_j ~ N(m, noise_sd^2)``) are fitted to the expected
    confusion counts by damped Newton steps in up to 50 preliminary iterations, until they
    settle (the prior is chosen by the data, as the class aggregators' priors are); MAP EM in
    log space then runs with that prior fixed, so ``lower_bounds_`` is one objective, which
    never decreases.

    Parameters
    ----------
    n_classes : int, default=None
        Number of grades when some never appear in the votes: labels must be integers in
        ``range(n_classes)``. Default: the distinct labels seen.
    grades : array-like or None, default=None
        The grade labels from lowest to highest, e.g. ``["poor", "fair", "good", "very good",
        "excellent"]``; every vote must be one of them (grades nobody gave may be listed).
        Default: the distinct grades seen in numeric order; two or more grades that are not
        numbers raise a ValueError without ``grades``.
    prior_strength : float, default=20.0
        Votes per confusion row that the latent-score prior is worth (``np.inf``: the
        latent-score model alone). 20 was chosen on the metaphor-novelty crowd and simulated
        crowds (see the benchmarks page).
    fit_positions : bool, default=False
        Fit the latent position ``mu_k`` of each grade (the first stays at 0) instead of
        ``mu_k = k``.
    bias_sd : float, default=0.5
        Prior standard deviation of the biases, in grades.
    noise_sd : float, default=1.0
        Prior standard deviation of ``log sigma_j`` around the crowd's typical value.
    lapse : float, default=0.01
        Probability of a uniform grade (mixed into every confusion row).
    decision : {"mode", "median"}, default="mode"
        ``predict`` gives the most probable grade (best accuracy) or the posterior median
        grade (best expected absolute error in grades).
    max_iter : int, default=100
        Most EM iterations.
    tol : float, default=1e-6
        Stop when the objective per task changes by less than ``tol``.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``X``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The grades, from lowest to highest (``grades`` when given).
    biases_ : ndarray of shape (n_workers,)
    noise_ : ndarray of shape (n_workers,)
        ``sigma_j``, in grades.
    confusion_matrices_ : ndarray of shape (n_workers, n_classes, n_classes)
        ``confusion_matrices_[j, k, l]``: probability that worker ``j`` gives grade ``l`` to a
        task of grade ``k``.
    latent_confusions_ : ndarray of shape (n_workers, n_classes, n_classes)
        The latent-score model's matrices (the prior's mean).
    positions_ : ndarray of shape (n_classes,)
        ``mu_k``.
    class_priors_ : ndarray of shape (n_classes,)
    typical_noise_ : float
        ``exp(m)``: the prior's centre of the noise.
    lower_bound_ : float
        Objective of the final model per task: ``(sum_i log p(votes of i) + log prior) /
        n_tasks`` (the log prior of the confusion rows and of the class priors, Dirichlet(2)).
    lower_bounds_ : ndarray
        The same at each iteration (never decreasing).
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    See Also
    --------
    DawidSkene : A free confusion matrix per worker (grades as nominal classes).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import OrdinalDawidSkene
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(0, 5, size=300)
    >>> bias, noise = np.array([0.0, 0.0, 1.0, 0.0]), np.array([0.3, 0.6, 0.4, 1.5])
    >>> scores = truth[:, None] + bias + rng.normal(size=(300, 4)) * noise
    >>> votes = np.clip(np.rint(scores), 0, 4).astype(int)
    >>> model = OrdinalDawidSkene().fit(votes)
    >>> np.round(model.biases_, 1), np.round(model.noise_, 1)
    (array([ 0.1,  0.1,  1.1, -0.1]), array([0.2, 0.6, 0.4, 1.4]))
    >>> round(float(np.mean(model.predict(votes) == truth)), 3)
    0.933
    >>> from skcrowd.aggregation import DawidSkene
    >>> round(float(np.mean(DawidSkene().fit(votes).predict(votes) == truth)), 3)
    0.927
    """

    _parameter_constraints: dict = {
        "missing_label": [numbers.Real, str, None],
        "n_classes": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "grades": ["array-like", None],
        "prior_strength": [Interval(numbers.Real, 0, np.inf, closed="right")],
        "fit_positions": ["boolean"],
        "bias_sd": [Interval(numbers.Real, 0, None, closed="neither")],
        "noise_sd": [Interval(numbers.Real, 0, None, closed="neither")],
        "lapse": [Interval(numbers.Real, 0, 1, closed="neither")],
        "decision": [StrOptions({"mode", "median"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, n_classes=None, *, grades=None, prior_strength=20.0, fit_positions=False,
                 bias_sd=0.5, noise_sd=1.0, lapse=0.01, decision="mode", max_iter=100, tol=1e-6,
                 missing_label=-1):
        self.n_classes = n_classes
        self.grades = grades
        self.prior_strength = prior_strength
        self.fit_positions = fit_positions
        self.bias_sd = bias_sd
        self.noise_sd = noise_sd
        self.lapse = lapse
        self.decision = decision
        self.max_iter = max_iter
        self.tol = tol
        self.missing_label = missing_label

    def _validate_votes(self, X, *, reset, allow_no_votes=False):
        """The votes as grade indices: in the order of ``grades``, or numeric (see the class)."""
        if not reset or self.grades is None:
            votes = super()._validate_votes(X, reset=reset, allow_no_votes=allow_no_votes)
            if reset and self.classes_.dtype.kind not in "iufb" and len(self.classes_) > 1:
                shown = ", ".join(repr(c) for c in self.classes_.tolist()[:5])
                more = ", ..." if len(self.classes_) > 5 else ""
                raise ValueError(
                    f"X has grades that are not numbers ({shown}{more}): their order"
                    " cannot be guessed (sorted, they are alphabetical). Pass the "
                    "grades from lowest to highest: OrdinalDawidSkene(grades=[...]).")
            return votes
        grades = np.asarray(np.asarray(self.grades).tolist())  # object strings: str dtype
        if grades.ndim != 1 or len(grades) < 1 or len(set(grades.tolist())) != len(grades):
            raise ValueError("grades must list distinct grade labels, lowest first, got "
                             f"{self.grades!r}.")
        if self.n_classes is not None:
            raise ValueError("Give grades or n_classes, not both: grades lists every grade.")
        super()._validate_votes(X, reset=True, allow_no_votes=True)  # shapes and worker names
        votes = check_votes(X, missing_label=self.missing_label, classes=grades, name="X")
        self.classes_ = votes.classes
        return votes

    # -- EM pieces ------------------------------------------------------------------------
    def _log_posterior(self, votes, log_conf, log_prior):
        """Per-task log joint ``log pi_k + sum_votes log P[w, k, l]`` (n_tasks, K)."""
        K = len(log_prior)
        joint = np.tile(log_prior, (votes.n_tasks, 1))
        terms = log_conf[votes.worker, :, votes.label]  # (n_votes, K)
        for k in range(K):
            joint[:, k] += np.bincount(votes.task, weights=terms[:, k], minlength=votes.n_tasks)
        return joint

    def _counts(self, votes, resp, K):
        """Expected confusion counts ``N[w, k, l]`` (W, K, K)."""
        index = votes.worker * K + votes.label
        counts = np.empty((votes.n_workers, K, K))
        for k in range(K):
            counts[:, k, :] = np.bincount(index, weights=resp[votes.task, k],
                                          minlength=votes.n_workers * K).reshape(-1, K)
        return counts

    def _m_step_positions(self, counts, bias, log_noise, positions, n_newton=4):
        """Damped Newton steps on each true grade's position (the first stays at 0); a step is
        kept only if it raises that grade's part of the objective."""
        args = (self.lapse,)
        f, g = _positions_objective(counts, bias, log_noise, positions, *args)
        h = 1e-5
        free = np.arange(len(positions)) > 0
        for _ in range(n_newton):
            _, g_h = _positions_objective(counts, bias, log_noise, positions + h, *args)
            hess = (g_h - g) / h
            direction = np.where(hess < 0, -g / np.where(hess < 0, hess, -1.0),
                                 g / np.maximum(np.abs(hess), 1.0))
            direction = np.where(free, np.clip(direction, -1.0, 1.0), 0.0)
            alpha = np.ones(len(positions))
            accepted = ~free
            for _ in range(12):
                trial = positions + alpha * ~accepted * direction
                f_trial, g_trial = _positions_objective(counts, bias, log_noise, trial, *args)
                better = (f_trial >= f) & ~accepted
                positions = np.where(better, trial, positions)
                f, g = np.where(better, f_trial, f), np.where(better, g_trial, g)
                accepted |= better
                alpha = np.where(accepted, alpha, alpha / 2)
                if accepted.all():
                    break
        return positions

    def _update_workers(self, counts, bias, log_noise, noise_mean, positions, has_votes):
        """One M-step of the worker model: ``(bias, log_noise, noise_mean, positions)``.

        Newton steps on the workers' (bias, log noise), then on the grade positions (when
        fitted); a worker without votes keeps bias 0 and the mean log noise of the others,
        which becomes the new ``noise_mean``.
        """
        bias, log_noise = self._m_step_workers(counts, bias, log_noise, noise_mean, positions)
        if self.fit_positions:
            positions = self._m_step_positions(counts, bias, log_noise, positions)
        bias = np.where(has_votes, bias, 0.0)
        if has_votes.any():
            noise_mean = _fsum(log_noise[has_votes]) / int(has_votes.sum())
        return bias, np.where(has_votes, log_noise, noise_mean), noise_mean, positions

    def _m_step_workers(self, counts, bias, log_noise, noise_mean, positions, n_newton=4):
        """Damped Newton steps per worker on (bias, log noise); a step is kept only if it
        raises that worker's objective (so the EM objective never decreases)."""
        args = (positions, self.lapse, self.bias_sd, self.noise_sd, noise_mean)
        theta = np.stack([bias, log_noise], axis=1)
        f, g = _objective_and_gradient(counts, theta[:, 0], theta[:, 1], *args)
        h = 1e-5
        for _ in range(n_newton):
            hess = np.empty((len(theta), 2, 2))
            for i in range(2):
                step = np.zeros(2)
                step[i] = h
                _, g_h = _objective_and_gradient(counts, theta[:, 0] + step[0],
                                                 theta[:, 1] + step[1], *args)
                hess[:, :, i] = (g_h - g) / h
            hess = 0.5 * (hess + np.swapaxes(hess, 1, 2))
            # Newton direction where the Hessian is negative definite, else a scaled gradient
            det = hess[:, 0, 0] * hess[:, 1, 1] - hess[:, 0, 1] ** 2
            concave = (hess[:, 0, 0] < 0) & (det > 0)
            safe = np.where(concave, det, 1.0)
            newton = np.stack([
                -(hess[:, 1, 1] * g[:, 0] - hess[:, 0, 1] * g[:, 1]) / safe,
                -(-hess[:, 0, 1] * g[:, 0] + hess[:, 0, 0] * g[:, 1]) / safe,
            ], axis=1)
            scale = np.maximum(np.abs(hess[:, [0, 1], [0, 1]]), 1.0)
            direction = np.where(concave[:, None], newton, g / scale)
            direction = np.clip(direction, -1.0, 1.0)  # at most one grade / a factor e a step
            alpha = np.ones(len(theta))
            accepted = np.zeros(len(theta), dtype=bool)
            for _ in range(12):
                trial = theta + (alpha * ~accepted)[:, None] * direction
                f_trial, g_trial = _objective_and_gradient(counts, trial[:, 0], trial[:, 1],
                                                           *args)
                better = (f_trial >= f) & ~accepted
                theta[better], f[better], g[better] = trial[better], f_trial[better], \
                    g_trial[better]
                accepted |= better
                alpha = np.where(accepted, alpha, alpha / 2)
                if accepted.all():
                    break
        return theta[:, 0], theta[:, 1]

    def _log_prior_terms(self, bias, log_noise, noise_mean, class_priors):
        out = -0.5 * _fsum((bias / self.bias_sd) ** 2)
        out -= 0.5 * _fsum(((log_noise - noise_mean) / self.noise_sd) ** 2)
        return float(out + np.sum(np.log(class_priors)))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the worker models on the votes ``X`` (grades; EM).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes (grades), ``missing_label`` where a worker did not vote.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        with _as_it_was_on_error(self):
            votes = self._validate_votes(X, reset=True)  # in memory (no out-of-core backend)
            K, W = len(self.classes_), votes.n_workers
            has_votes = np.bincount(votes.worker, minlength=W) > 0
            # start from the vote frequencies of each task
            resp = np.zeros((votes.n_tasks, K))
            np.add.at(resp, (votes.task, votes.label), 1.0)
            resp += 1e-2
            resp /= resp.sum(axis=1, keepdims=True)
            bias, log_noise, noise_mean = np.zeros(W), np.zeros(W), 0.0
            positions = np.arange(K, dtype=np.float64)
            strength = self.prior_strength

            def e_step(conf, class_priors):
                joint = self._log_posterior(votes, np.log(conf), np.log(class_priors))
                norm = logsumexp(joint, axis=1, keepdims=True)
                return np.exp(joint - norm), norm

            def m_step(resp, prior_rows):
                counts = self._counts(votes, resp, K)
                class_priors = (_column_sums(resp) + 1.0) / (votes.n_tasks + K)
                conf = (counts + strength * prior_rows) / (counts.sum(axis=2, keepdims=True)
                                                           + strength)
                return counts, conf, class_priors

            # 1. the latent-score model of each worker, fitted to the expected confusion counts,
            # settles (its rows are the centre of the Dirichlet prior: not one objective, so these
            # iterations are not recorded)
            prior_rows = confusions(bias, log_noise, positions, self.lapse)
            for _ in range(_MAX_PRIOR_ITER if np.isfinite(strength) else 0):
                counts, conf, class_priors = m_step(resp, prior_rows)
                new_bias, new_noise, noise_mean, positions = self._update_workers(
                    counts, bias, log_noise, noise_mean, positions, has_votes)
                moved = max(float(np.max(np.abs(new_bias - bias), initial=0.0)),
                            float(np.max(np.abs(new_noise - log_noise), initial=0.0)))
                bias, log_noise = new_bias, new_noise
                prior_rows = confusions(bias, log_noise, positions, self.lapse)
                counts, conf, class_priors = m_step(resp, prior_rows)
                resp, _ = e_step(conf, class_priors)
                if moved < 1e-4:
                    break
            # 2. MAP EM of Dawid-Skene under the fixed prior Dirichlet(1 + strength * rows)
            bounds, converged = [], False
            for _ in range(self.max_iter):
                if np.isfinite(strength):
                    counts, conf, class_priors = m_step(resp, prior_rows)
                    log_prior = _fsum(np.sum(strength * prior_rows * np.log(conf), axis=(1, 2)))
                else:
                    counts = self._counts(votes, resp, K)
                    class_priors = (_column_sums(resp) + 1.0) / (votes.n_tasks + K)
                    bias, log_noise, noise_mean, positions = self._update_workers(
                        counts, bias, log_noise, noise_mean, positions, has_votes)
                    conf = prior_rows = confusions(bias, log_noise, positions, self.lapse)
                    log_prior = self._log_prior_terms(bias[has_votes], log_noise[has_votes],
                                                      noise_mean, np.ones(1))
                resp, norm = e_step(conf, class_priors)
                bounds.append((_fsum(norm) + log_prior + float(np.sum(np.log(class_priors))))
                              / max(votes.n_tasks, 1))
                if len(bounds) > 1 and abs(bounds[-1] - bounds[-2]) < self.tol:
                    converged = True
                    break
            if not converged:
                warnings.warn(f"OrdinalDawidSkene did not converge in max_iter={self.max_iter} "
                              "iterations; raise max_iter or tol.", ConvergenceWarning)
            self.biases_, self.noise_ = bias, np.exp(log_noise)
            self.typical_noise_ = float(np.exp(noise_mean))
            self.positions_ = positions
            self.latent_confusions_ = prior_rows
            self.confusion_matrices_ = conf
            self.class_priors_ = class_priors
            self.lower_bounds_ = np.asarray(bounds)
            self.lower_bound_ = bounds[-1]
            self.n_iter_ = len(bounds)
            self.converged_ = converged
            return self

    def predict_proba(self, X):
        """Posterior probability of each grade for each task (the fitted worker models).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes of the fitted workers; tasks may be new.

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_classes) or pandas DataFrame
            A DataFrame with ``X.index`` when ``X`` is a DataFrame.
        """
        joint = self._joint(X)
        proba = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
        if _is_pandas_frame(X):
            import pandas as pd

            return pd.DataFrame(proba, index=X.index, columns=self.classes_)
        return proba

    def _joint(self, X):
        """``log p(grade k, votes of task i)`` under the fitted model, (n_tasks, n_classes)."""
        check_is_fitted(self)
        votes = self._validate_votes(X, reset=False, allow_no_votes=True)
        return self._log_posterior(votes, np.log(self.confusion_matrices_),
                                   np.log(self.class_priors_))

    def score_samples(self, X):
        """Log-likelihood of the votes of each task under the fitted model.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes of the fitted workers; tasks may be new.

        Returns
        -------
        log_likelihood : ndarray of shape (n_tasks,) or pandas Series
            ``log p(votes of task i)``; 0 for a task without votes. A Series with ``X.index``
            when ``X`` is a DataFrame.
        """
        return _keyed_like(logsumexp(self._joint(X), axis=1), X)

    def score(self, X, y=None):
        """Mean per-task log-likelihood of the votes (higher is better), as the class
        aggregators': on held-out tasks, a gold-free score for model choice.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes of the fitted workers, for instance held-out tasks.
        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        return float(np.mean(self.score_samples(X)))

    def predict(self, X):
        """The grade of each task: most probable (``decision="mode"``) or posterior median.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes of the fitted workers.

        Returns
        -------
        labels : ndarray of shape (n_tasks,) or pandas Series
        """
        proba = self.predict_proba(X)
        if self.decision == "mode":
            return self._labels(proba)
        values = np.asarray(proba)
        index = np.argmax(np.cumsum(values, axis=1) >= 0.5 - 1e-12, axis=1)
        return _keyed_like(self.classes_[index], X)
