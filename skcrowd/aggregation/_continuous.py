"""Aggregators of continuous ratings: one value per task from a float votes matrix.

The votes matrix is ``X`` as for the class aggregators (tasks are rows, workers are columns),
but an entry is a number (a 0-100 emotion strength, a 0-1 movie rating), NaN or
``missing_value`` where the worker did not rate the task. The aggregators are scikit-learn
regressors: ``predict`` gives one value per task and ``score(X, y)`` is the R^2 of those values
against gold ratings ``y``; ``fit`` ignores ``y`` (the crowd is the only input).

- :class:`MeanRating`, :class:`MedianRating`: the baselines.
- :class:`BiasPrecisionEM`: each worker rates ``truth + bias_j + noise`` with precision
  ``lambda_j`` (Raykar et al. 2010, LFC-N of Zheng et al. 2017 when ``bias=False``), fitted by
  MAP EM; the precisions' Gamma prior is chosen by evidence (type-II maximum likelihood), so a
  worker with few ratings is pulled towards the crowd's typical precision.
- :class:`CATD`: confidence-aware truth discovery (Li et al. 2014): worker weights from the upper
  end of a chi-squared confidence interval of their error variance.

All four work on the observed ratings only (triplets task, worker, rating, in task order) with
sequential ``np.bincount`` sums, so results do not depend on the CPU.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.optimize import minimize
from scipy.special import gammaln
from scipy.stats import chi2
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..votes import _fmt, _long_format_roles

__all__ = ["MeanRating", "MedianRating", "BiasPrecisionEM", "CATD", "check_ratings"]


def _cell(row, column, names):
    worker = repr(str(names[column])) if names is not None else str(column)
    return f"row {row}, worker {worker} (column {column})"


def check_ratings(X, *, missing_value=np.nan, rating_range=None, feature_names=None,
                  name="X"):
    """Float ratings matrix of ``X``: NaN where a worker did not rate a task.

    Parameters
    ----------
    X : array-like of shape (n_tasks, n_workers)
        Ratings: numbers (or strings of numbers), NaN or ``missing_value`` for no rating.
    missing_value : float or None, default=np.nan
        Marker of a missing rating besides NaN (NaN and None always mean missing).
    rating_range : tuple (low, high) or None, default=None
        Declared range of the ratings; a rating outside it raises.
    feature_names : array-like of str or None, default=None
        Worker names for the messages.
    name : str, default="X"
        Argument name for the messages.

    Returns
    -------
    ratings : ndarray of shape (n_tasks, n_workers), float64

    Raises
    ------
    TypeError
        If an entry is neither a number nor a string (the message names the row and worker).
    ValueError
        If ``X`` is not 2-D, holds a string that is not a number, an infinite value, or a rating
        outside ``rating_range``: the message names the argument, the row and the worker.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import check_ratings
    >>> check_ratings([[0.5, -1], ["0.25", 1]], missing_value=-1)
    array([[0.5 ,  nan],
           [0.25, 1.  ]])
    >>> try:
    ...     check_ratings([[0.5, 7]], rating_range=(0, 1))
    ... except ValueError as exc:
    ...     print(exc)
    X row 0, worker 1 (column 1): rating 7.0 is outside rating_range (0, 1).
    """
    array = np.asarray(X)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D ratings matrix (tasks x workers), got an array "
                         f"of shape {array.shape}.")
    if array.dtype.kind in "fiub":
        ratings = array.astype(np.float64)
    else:
        ratings = np.empty(array.shape, dtype=np.float64)
        for (i, j), value in np.ndenumerate(array):
            if value is None:
                ratings[i, j] = np.nan
                continue
            try:
                ratings[i, j] = float(value)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"{name} {_cell(i, j, feature_names)}: {value!r} is not a "
                                f"number ({exc}); ratings must be numeric (NaN or "
                                "missing_value for no rating).") from None
    if missing_value is not None and not np.isnan(missing_value):
        ratings[ratings == missing_value] = np.nan
    bad = np.isinf(ratings)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name} {_cell(i, j, feature_names)}: rating {ratings[i, j]} is not "
                         "finite.")
    if rating_range is not None:
        low, high = rating_range
        outside = (ratings < low) | (ratings > high)
        if outside.any():
            i, j = np.argwhere(outside)[0]
            raise ValueError(f"{name} {_cell(i, j, feature_names)}: rating {ratings[i, j]} is "
                             f"outside rating_range {tuple(rating_range)}.")
    return ratings


def _check_not_long_ratings(X, name="X"):
    """Raise a ValueError if ``X`` is a long table (one row per rating), showing the pivot."""
    found = _long_format_roles(X)
    if found is None:
        return
    task, worker, label, others, in_index = found
    expr = name + (".reset_index()" if in_index else "")
    value = _fmt(label) if label is not None else "<the rating column>"
    raise ValueError(
        f"{name} looks like long-format ratings (one row per rating, columns {_fmt(task)}, "
        f"{_fmt(worker)}, {value}), not a ratings matrix (tasks x workers). Pivot it first: "
        f"`{name} = {expr}.pivot(index={_fmt(task)}, columns={_fmt(worker)}, values={value})`; "
        "its rows are then the task ids, sorted."
    )


def _triplets(ratings):
    """Observed ratings as (task, worker, value) arrays, in task order (row-major)."""
    task, worker = np.nonzero(~np.isnan(ratings))
    return task, worker, ratings[task, worker]


class _BaseRatingAggregator(RegressorMixin, BaseEstimator):
    """Common validation of the rating aggregators (votes matrix ``X``, ``y`` ignored in fit)."""

    _parameter_constraints: dict = {
        "missing_value": [numbers.Real, None],
        "rating_range": [tuple, list, None],
    }

    def __init__(self, *, missing_value=np.nan, rating_range=None):
        self.missing_value = missing_value
        self.rating_range = rating_range

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.required = False
        tags.regressor_tags.poor_score = True  # the checks' y is not the truth of their X
        return tags

    def _ratings(self, X, *, reset):
        _check_not_long_ratings(X, "X")
        checked = validate_data(self, X, reset=reset, dtype=None, ensure_all_finite=False,
                                accept_sparse=False)
        if self.rating_range is not None:
            if len(self.rating_range) != 2 or not self.rating_range[0] <= self.rating_range[1]:
                raise ValueError("rating_range must be a pair (low, high) with low <= high, got "
                                 f"{self.rating_range!r}.")
        return check_ratings(checked, missing_value=self.missing_value,
                             rating_range=self.rating_range,
                             feature_names=getattr(self, "feature_names_in_", None))

    def _fit_ratings(self, X):
        ratings = self._ratings(X, reset=True)
        task, worker, value = _triplets(ratings)
        if len(value) == 0:
            raise ValueError("X holds no rating: every entry is NaN or missing_value.")
        return ratings, task, worker, value

    def fit(self, X, y=None):
        """Fit the aggregator on the ratings ``X``.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_workers)
            Ratings, NaN or ``missing_value`` where a worker did not rate a task.
        y : None
            Ignored: the gold ratings are not used (they are for ``score``).

        Returns
        -------
        self : object
        """
        return self._fit(X)

    def fit_predict(self, X, y=None):
        """Fit on the ratings ``X`` and return the aggregated rating of each task.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_workers)
            Ratings.
        y : None
            Ignored.

        Returns
        -------
        ratings : ndarray of shape (n_tasks,)
        """
        return self.fit(X).predict(X)

    def predict(self, X):
        """Aggregated rating of each task of ``X`` (from the fitted worker model).

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_workers)
            Ratings of the fitted workers (columns); tasks may be new. A task without a
            rating gets ``default_rating_``.

        Returns
        -------
        ratings : ndarray of shape (n_tasks,)
        """
        check_is_fitted(self)
        ratings = self._ratings(X, reset=False)
        return self._aggregate(ratings)


class MeanRating(_BaseRatingAggregator):
    """Mean of each task's ratings (the baseline).

    Parameters
    ----------
    missing_value : float or None, default=np.nan
        Marker of a missing rating besides NaN.
    rating_range : tuple (low, high) or None, default=None
        Declared range of the ratings; a rating outside raises a ValueError.

    Attributes
    ----------
    default_rating_ : float
        Mean of all fitted ratings: the prediction for a task without any rating.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of str
        Worker names, when ``X`` was a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import MeanRating
    >>> X = np.array([[1.0, 2.0, np.nan], [4.0, np.nan, 5.0]])
    >>> MeanRating().fit_predict(X)
    array([1.5, 4.5])
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X):
        _, _, _, value = self._fit_ratings(X)
        self.default_rating_ = float(np.mean(value))
        return self

    def _aggregate(self, ratings):
        task, _, value = _triplets(ratings)
        n = np.bincount(task, minlength=len(ratings))
        total = np.bincount(task, weights=value, minlength=len(ratings))
        return np.where(n > 0, total / np.maximum(n, 1), self.default_rating_)


class MedianRating(_BaseRatingAggregator):
    """Median of each task's ratings (robust to a few wild ratings).

    Parameters
    ----------
    missing_value : float or None, default=np.nan
        Marker of a missing rating besides NaN.
    rating_range : tuple (low, high) or None, default=None
        Declared range of the ratings; a rating outside raises a ValueError.

    Attributes
    ----------
    default_rating_ : float
        Median of all fitted ratings: the prediction for a task without any rating.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of str
        Worker names, when ``X`` was a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import MedianRating
    >>> X = np.array([[1.0, 2.0, 9.0], [4.0, np.nan, 5.0]])
    >>> MedianRating().fit_predict(X)
    array([2. , 4.5])
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X):
        _, _, _, value = self._fit_ratings(X)
        self.default_rating_ = float(np.median(value))
        return self

    def _aggregate(self, ratings):
        return _medians(ratings, self.default_rating_)


def _medians(ratings, default):
    out = np.full(len(ratings), default)
    rated = ~np.isnan(ratings).all(axis=1)
    if rated.any():
        out[rated] = np.nanmedian(ratings[rated], axis=1)
    return out


def _task_posterior(task, worker, value, n_tasks, params):
    """Gaussian posterior of each task's truth and its log-marginal likelihood.

    ``params = (bias, slope, precision, prior_mean, prior_var)``: worker ``j`` rates task ``i``
    ``y_ij ~ N(slope_j z_i + bias_j, 1 / precision_j)``, ``z_i ~ N(prior_mean, prior_var)``.
    """
    bias, slope, precision, prior_mean, prior_var = params
    lam, a = precision[worker], slope[worker]
    resid = value - bias[worker]
    post_prec = 1.0 / prior_var + np.bincount(task, weights=lam * a * a, minlength=n_tasks)
    mean = (prior_mean / prior_var
            + np.bincount(task, weights=lam * a * resid, minlength=n_tasks)) / post_prec
    # log p(ratings of task i) = sum_j 0.5 log(lam_j / 2 pi) - 0.5 log(prior_var * post_prec)
    #   - 0.5 (sum_j lam_j (r_ij - a_j m_i)^2 + (m_i - prior_mean)^2 / prior_var)
    square = np.bincount(task, weights=lam * (resid - a * mean[task]) ** 2, minlength=n_tasks)
    log_lik = (np.bincount(task, weights=0.5 * np.log(lam / (2 * np.pi)), minlength=n_tasks)
               - 0.5 * np.log(prior_var * post_prec)
               - 0.5 * (square + (mean - prior_mean) ** 2 / prior_var))
    return mean, 1.0 / post_prec, log_lik


def _gamma_evidence(n, S, log_strength, log_mode):
    """Negative log-evidence of residual sums of squares under the precisions' Gamma prior.

    A worker with ``n`` residuals of sum of squares ``S`` and precision
    ``lambda ~ Gamma(1 + nu / 2, rate nu / (2 mode))``: integrating ``lambda`` out gives
    ``a log b - lgamma(a) + lgamma(a + n / 2) - (a + n / 2) log(b + S / 2)`` (up to constants).
    """
    nu, mode = np.exp(log_strength), np.exp(log_mode)
    a, b = 1.0 + nu / 2, nu / (2 * mode)
    terms = a * np.log(b) - gammaln(a) + gammaln(a + n / 2) - (a + n / 2) * np.log(b + S / 2)
    return -float(np.sum(terms))


class BiasPrecisionEM(_BaseRatingAggregator):
    """Workers with a bias and a precision each, fitted by MAP EM (Raykar et al. 2010; LFC-N).

    The true rating of task ``i`` is ``z_i ~ N(mu, s^2)``; worker ``j`` rates it
    ``y_ij ~ N(z_i + b_j, 1 / lambda_j)``. EM alternates the Gaussian posterior of each ``z_i``
    (E-step, closed form) and the MAP workers (M-step, closed form):
    ``b_j = sum_i (y_ij - E z_i) / (n_j + bias_prior)`` and
    ``lambda_j = (n_j + nu [+ 1]) / (sum_i E (y_ij - b_j - z_i)^2 + nu / lambda_0
    [+ bias_prior b_j^2])``, the prior mean and variance ``mu, s^2`` of the truths by maximum
    likelihood. The priors: ``b_j | lambda_j ~ N(0, 1 / (bias_prior lambda_j))`` (``bias_prior``
    pseudo-ratings of zero bias) and ``lambda_j ~ Gamma(1 + nu / 2, rate nu / (2 lambda_0))``
    (mode ``lambda_0``, ``nu`` pseudo-ratings). With ``precision_prior="auto"``, ``nu`` and
    ``lambda_0`` are chosen by evidence: they maximize the marginal likelihood of the workers'
    residuals with the precisions integrated out, re-chosen at each of up to 50 preliminary
    iterations until they settle; EM proper then runs with that prior fixed, so that
    ``lower_bounds_`` is the objective of one model and never decreases.

    A worker with few ratings thus gets about the crowd's typical precision instead of the
    infinite precision of a worker whose one rating agrees with the others, and a worker who
    rates everything high gets a bias instead of a low precision.

    Parameters
    ----------
    bias : bool, default=True
        Fit a bias per worker; ``False`` gives LFC-N (precision only).
    bias_prior : float, default=1.0
        Strength of the zero-mean prior on biases, in pseudo-ratings (0: no prior).
    precision_prior : "auto" or float, default="auto"
        Strength ``nu`` of the precisions' Gamma prior in pseudo-ratings; ``"auto"`` chooses it
        (and its mode) by evidence; with a number the mode ``lambda_0`` is the pooled precision
        of the initial residuals.
    max_iter : int, default=100
        Most EM iterations.
    tol : float, default=1e-6
        Stop when the objective (per task) changes by less than ``tol``.
    missing_value : float or None, default=np.nan
        Marker of a missing rating besides NaN.
    rating_range : tuple (low, high) or None, default=None
        Declared range of the ratings; a rating outside raises a ValueError.

    Attributes
    ----------
    biases_ : ndarray of shape (n_workers,)
    precisions_ : ndarray of shape (n_workers,)
        ``lambda_j``, the inverse variance of each worker's noise.
    prior_mean_, prior_variance_ : float
        ``mu`` and ``s^2``: the prior of the true ratings (a task without ratings gets ``mu``).
    default_rating_ : float
        ``prior_mean_``.
    precision_prior_strength_, precision_prior_mode_ : float
        ``nu`` and ``lambda_0`` used.
    lower_bound_ : float
        Objective of the final model: ``(sum_i log p(ratings of i) + log prior) / n_tasks``.
    lower_bounds_ : ndarray
        Objective at each EM iteration (never decreasing).
    n_iter_ : int
        EM iterations run (after the prior settled).
    converged_ : bool
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of str
        Worker names, when ``X`` was a DataFrame with string column names.

    References
    ----------
    V. C. Raykar, S. Yu, L. H. Zhao, G. H. Valadez, C. Florin, L. Bogoni and L. Moy. "Learning
    from crowds". JMLR 11, 2010. Y. Zheng, G. Li, Y. Li, C. Shan and R. Cheng. "Truth inference
    in crowdsourcing: is the problem solved?". PVLDB 10(5), 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import BiasPrecisionEM
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(50, 20, size=200)
    >>> noise = np.array([2.0, 2.0, 5.0, 30.0])  # the last worker is careless
    >>> X = truth[:, None] + np.array([-4.0, 4.0, 0.0, 0.0]) + rng.normal(size=(200, 4)) * noise
    >>> model = BiasPrecisionEM().fit(X)
    >>> np.round(model.biases_, 1)
    array([-4. ,  3.8, -0.6,  0.8])
    >>> np.round(1 / np.sqrt(model.precisions_), 1)
    array([ 2. ,  2. ,  4.7, 29.7])
    >>> err_em = np.abs(model.predict(X) - truth).mean()
    >>> err_mean = np.abs(X.mean(axis=1) - truth).mean()
    >>> bool(err_em < err_mean / 3)
    True
    """

    _parameter_constraints: dict = {
        **_BaseRatingAggregator._parameter_constraints,
        "bias": ["boolean"],
        "scale": ["boolean"],
        "bias_prior": [Interval(numbers.Real, 0, None, closed="left")],
        "scale_prior": [Interval(numbers.Real, 0, None, closed="left")],
        "precision_prior": [StrOptions({"auto"}), Interval(numbers.Real, 0, None,
                                                           closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, *, bias=True, scale=False, bias_prior=1.0, scale_prior=1.0,
                 precision_prior="auto", max_iter=100, tol=1e-6, missing_value=np.nan,
                 rating_range=None):
        self.bias = bias
        self.scale = scale
        self.bias_prior = bias_prior
        self.scale_prior = scale_prior
        self.precision_prior = precision_prior
        self.max_iter = max_iter
        self.tol = tol
        self.missing_value = missing_value
        self.rating_range = rating_range

    # -- the model -----------------------------------------------------------------------
    def _priors(self):
        """Strengths of the bias and slope priors actually used (0: none or not fitted)."""
        return (self.bias_prior if self.bias else 0.0, self.scale_prior if self.scale else 0.0)

    def _m_step(self, task, worker, value, n_workers, mean, var, strength, mode):
        def per_worker(weights):
            return np.bincount(worker, weights=weights, minlength=n_workers)

        n = np.bincount(worker, minlength=n_workers).astype(np.float64)
        kb, ka = self._priors()
        m, v = mean[task], var[task]
        bias, slope = np.zeros(n_workers), np.ones(n_workers)
        if self.bias and self.scale:
            # weighted least squares of y on (E z, 1) with the priors as pseudo-ratings
            Smm, Sm = per_worker(m * m + v) + ka, per_worker(m)
            Sym, Sy = per_worker(value * m) + ka, per_worker(value)
            det = Smm * (n + kb) - Sm * Sm
            ok = det > 1e-12 * np.maximum(Smm * (n + kb), 1e-300)
            safe = np.where(ok, det, 1.0)
            slope = np.where(ok, (Sym * (n + kb) - Sm * Sy) / safe, 1.0)
            bias = np.where(ok, (Smm * Sy - Sm * Sym) / safe, 0.0)
        elif self.bias:
            bias = per_worker(value - m) / np.maximum(n + kb, 1e-300)
        elif self.scale:
            Smm = per_worker(m * m + v) + ka
            slope = np.where(Smm > 0, (per_worker(value * m) + ka) / np.where(Smm > 0, Smm, 1),
                             1.0)
        S = per_worker((value - bias[worker] - slope[worker] * m) ** 2 + slope[worker] ** 2 * v)
        S = np.maximum(S, self._floor * n)
        extra = float(kb > 0) + float(ka > 0)
        precision = (n + strength + extra) / (S + strength / mode + kb * bias ** 2
                                              + ka * (slope - 1) ** 2 + self._floor * (n == 0))
        prior_mean = float(np.mean(mean))
        prior_var = max(float(np.mean((mean - prior_mean) ** 2 + var)), self._floor)
        # The likelihood is the same for (alpha z + c, slope / alpha, bias - slope c / alpha)
        # with the truths' prior moved alike: take the (alpha, c) that maximizes the priors'
        # terms (a step that only raises the objective; without it EM crawls along that ridge)
        weight = precision * slope * slope
        if ka > 0 and np.sum(precision * slope) != 0:
            u = float(np.sum(precision * slope) / np.sum(weight))
        else:
            u = 1.0
        d = float(np.sum(precision * slope * bias) / np.sum(weight)) if kb > 0 else 0.0
        slope, bias = slope * u, bias - slope * d
        prior_mean, prior_var = (prior_mean + d) / u, max(prior_var / (u * u), self._floor)
        return (bias, slope, precision, prior_mean, prior_var), n, S

    def _log_prior(self, params, strength, mode):
        bias, slope, precision = params[:3]
        a, rate = 1.0 + strength / 2, strength / (2 * mode)
        out = np.sum(a * np.log(rate) - gammaln(a) + (a - 1) * np.log(precision)
                     - rate * precision)
        for kappa, offset in zip(self._priors(), (bias, slope - 1)):
            if kappa > 0:
                out += np.sum(0.5 * np.log(kappa * precision / (2 * np.pi))
                              - 0.5 * kappa * precision * offset ** 2)
        return float(out)

    def _choose_prior(self, n, S, strength, mode):
        rated = n > 0
        start = np.log([strength, mode])
        result = minimize(lambda p: _gamma_evidence(n[rated], S[rated], p[0], p[1]), start,
                          method="L-BFGS-B",
                          bounds=[(np.log(1e-2), np.log(1e4)), (start[1] - 20, start[1] + 20)])
        return float(np.exp(result.x[0])), float(np.exp(result.x[1]))

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X):
        ratings, task, worker, value = self._fit_ratings(X)
        n_tasks, n_workers = ratings.shape
        scale = float(np.var(value)) if np.var(value) > 0 else 1.0
        self._floor = 1e-10 * scale
        # initial truths: the tasks' mean ratings, no posterior variance
        n_task = np.bincount(task, minlength=n_tasks)
        mean = np.bincount(task, weights=value, minlength=n_tasks)
        mean = np.where(n_task > 0, mean / np.maximum(n_task, 1), np.mean(value))
        var = np.zeros(n_tasks)
        resid = (value - mean[task]) ** 2
        pooled = len(value) / max(float(np.sum(resid)), self._floor * len(value))
        auto = self.precision_prior == "auto"
        strength, mode = (2.0 if auto else float(self.precision_prior)), pooled
        if auto:  # let the prior settle (not one objective: not recorded)
            for _ in range(50):
                params, n, S = self._m_step(task, worker, value, n_workers, mean, var,
                                            strength, mode)
                new_strength, new_mode = self._choose_prior(n, S, strength, mode)
                mean, var, _ = _task_posterior(task, worker, value, n_tasks, params)
                moved = max(abs(np.log(new_strength / strength)), abs(np.log(new_mode / mode)))
                strength, mode = new_strength, new_mode
                if moved < 1e-4:
                    break
        bounds, converged = [], False
        for _ in range(self.max_iter):
            params, _, _ = self._m_step(task, worker, value, n_workers, mean, var, strength,
                                        mode)
            mean, var, log_lik = _task_posterior(task, worker, value, n_tasks, params)
            bounds.append((float(np.sum(log_lik)) + self._log_prior(params, strength, mode))
                          / n_tasks)
            if len(bounds) > 1 and abs(bounds[-1] - bounds[-2]) < self.tol:
                converged = True
                break
        if not converged:
            warnings.warn(f"BiasPrecisionEM did not converge in max_iter={self.max_iter} "
                          "iterations; raise max_iter or tol.", ConvergenceWarning)
        del self._floor
        self.biases_, self.slopes_, self.precisions_ = params[:3]
        self.prior_mean_, self.prior_variance_ = params[3:]
        self.default_rating_ = self.prior_mean_
        self.precision_prior_strength_, self.precision_prior_mode_ = strength, mode
        self.lower_bounds_ = np.asarray(bounds)
        self.lower_bound_ = bounds[-1]
        self.n_iter_ = len(bounds)
        self.converged_ = converged
        return self

    def _params(self):
        return (self.biases_, self.slopes_, self.precisions_, self.prior_mean_,
                self.prior_variance_)

    def _aggregate(self, ratings, return_std=False):
        task, worker, value = _triplets(ratings)
        mean, var, _ = _task_posterior(task, worker, value, len(ratings), self._params())
        return (mean, np.sqrt(var)) if return_std else mean

    def predict(self, X, return_std=False):
        """Posterior mean of each task's true rating (the fitted workers' model).

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_workers)
            Ratings of the fitted workers; tasks may be new (a task without ratings gets
            ``prior_mean_``).
        return_std : bool, default=False
            Also return the posterior standard deviation of each task's truth.

        Returns
        -------
        ratings : ndarray of shape (n_tasks,)
        std : ndarray of shape (n_tasks,)
            Only with ``return_std=True``.
        """
        check_is_fitted(self)
        return self._aggregate(self._ratings(X, reset=False), return_std=return_std)

    def score_samples(self, X):
        """Log-likelihood of each task's ratings under the fitted model.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_workers)
            Ratings of the fitted workers.

        Returns
        -------
        log_likelihood : ndarray of shape (n_tasks,)
        """
        check_is_fitted(self)
        ratings = self._ratings(X, reset=False)
        task, worker, value = _triplets(ratings)
        return _task_posterior(task, worker, value, len(ratings), self._params())[2]


class CATD(_BaseRatingAggregator):
    """Confidence-aware truth discovery (Li et al. 2014): chi-squared weighted means.

    Alternates the truths, ``z_i = sum_j w_j y_ij / sum_j w_j``, and the worker weights,
    ``w_j = chi2.ppf(alpha / 2, n_j) / sum_i (y_ij - z_i)^2``: the inverse of the upper end of
    a ``1 - alpha`` confidence interval of the worker's error variance, small for a worker with
    few ratings however well they agree. Starts from the medians.

    Parameters
    ----------
    alpha : float, default=0.05
        Significance level of the confidence interval.
    leave_one_out : bool, default=False
        Measure a worker's residuals against the weighted mean of the task's *other* workers
        (tasks they rated alone do not count). The published method (False) measures them
        against truths the worker's own rating is part of, which can feed back: one worker's
        weight grows until the truths are that worker's ratings (seen with 3-5 ratings per
        task).
    max_iter : int, default=100
        Most iterations.
    tol : float, default=1e-6
        Stop when no truth moves by more than ``tol`` times the ratings' standard deviation.
    missing_value : float or None, default=np.nan
        Marker of a missing rating besides NaN.
    rating_range : tuple (low, high) or None, default=None
        Declared range of the ratings; a rating outside raises a ValueError.

    Attributes
    ----------
    weights_ : ndarray of shape (n_workers,)
        Worker weights (0 for a worker without ratings).
    default_rating_ : float
        Weighted mean of the fitted truths: the prediction for a task without ratings.
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    References
    ----------
    Q. Li, Y. Li, J. Gao, L. Su, B. Zhao, M. Demirbas, W. Fan and J. Han. "A confidence-aware
    approach for truth discovery on long-tail data". PVLDB 8(4), 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import CATD
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.uniform(0, 10, size=100)
    >>> X = truth[:, None] + rng.normal(size=(100, 5)) * np.array([0.5, 0.5, 1.0, 1.0, 5.0])
    >>> X[rng.random((100, 5)) < 0.3] = np.nan  # 30 % of the ratings missing
    >>> weights = CATD().fit(X).weights_  # worker 0's weight fed back on itself
    >>> np.round(weights / weights.max(), 2)
    array([1., 0., 0., 0., 0.])
    >>> model = CATD(leave_one_out=True).fit(X)
    >>> np.round(model.weights_ / model.weights_.max(), 2)
    array([0.82, 0.69, 0.67, 1.  , 0.06])
    >>> bool(np.abs(model.predict(X) - truth).mean() < np.abs(np.nanmean(X, 1) - truth).mean())
    True
    """

    _parameter_constraints: dict = {
        **_BaseRatingAggregator._parameter_constraints,
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "leave_one_out": ["boolean"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, *, alpha=0.05, leave_one_out=False, max_iter=100, tol=1e-6,
                 missing_value=np.nan, rating_range=None):
        self.alpha = alpha
        self.leave_one_out = leave_one_out
        self.max_iter = max_iter
        self.tol = tol
        self.missing_value = missing_value
        self.rating_range = rating_range

    @staticmethod
    def _weighted(task, worker, value, n_tasks, weights, default):
        w = weights[worker]
        total = np.bincount(task, weights=w, minlength=n_tasks)
        num = np.bincount(task, weights=w * value, minlength=n_tasks)
        return np.where(total > 0, num / np.where(total > 0, total, 1.0), default)

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X):
        ratings, task, worker, value = self._fit_ratings(X)
        n_tasks, n_workers = ratings.shape
        spread = float(np.std(value)) or 1.0
        truth = _medians(ratings, float(np.median(value)))
        n = np.bincount(worker, minlength=n_workers)
        quantile = np.where(n > 0, chi2.ppf(self.alpha / 2, np.maximum(n, 1)), 0.0)
        floor = 1e-12 * spread ** 2
        converged = False
        weights = np.ones(n_workers)
        for n_iter in range(1, self.max_iter + 1):
            if self.leave_one_out:
                # residual against the weighted mean of the task's other workers
                w = weights[worker]
                num = np.bincount(task, weights=w * value, minlength=n_tasks)[task] - w * value
                den = np.bincount(task, weights=w, minlength=n_tasks)[task] - w
                others = den > 1e-12 * w
                resid = np.where(others, value - num / np.where(others, den, 1.0), 0.0)
                n = np.bincount(worker, weights=others, minlength=n_workers)
                quantile = np.where(n > 0, chi2.ppf(self.alpha / 2, np.maximum(n, 1)), 0.0)
                S = np.bincount(worker, weights=resid ** 2, minlength=n_workers)
            else:
                S = np.bincount(worker, weights=(value - truth[task]) ** 2,
                                minlength=n_workers)
            weights = quantile / np.maximum(S, floor)
            new = self._weighted(task, worker, value, n_tasks, weights, float(np.mean(value)))
            moved = float(np.max(np.abs(new - truth)))
            truth = new
            if moved <= self.tol * spread:
                converged = True
                break
        if not converged:
            warnings.warn(f"CATD did not converge in max_iter={self.max_iter} iterations.",
                          ConvergenceWarning)
        self.weights_ = weights
        self.default_rating_ = float(np.mean(truth[np.bincount(task, minlength=n_tasks) > 0]))
        self.n_iter_, self.converged_ = n_iter, converged
        return self

    def _aggregate(self, ratings):
        task, worker, value = _triplets(ratings)
        return self._weighted(task, worker, value, len(ratings), self.weights_,
                              self.default_rating_)
