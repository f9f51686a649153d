"""Aggregators of continuous ratings: one value per task from a float votes matrix.

The votes matrix is ``X`` as for the class aggregators (tasks are rows, workers are columns),
but an entry is a number (a 0-100 emotion strength, a 0-1 movie rating), NaN or
``missing_value`` where the worker did not rate the task. The aggregators are scikit-learn
regressors: ``predict`` gives one value per task and ``score(X, y)`` is the R^2 of those values
against gold ratings ``y``; ``fit`` ignores ``y`` (the crowd is the only input).

- :class:`MeanRating`, :class:`MedianRating`: the baselines.
- :class:`BiasPrecisionEM`: each worker rates ``truth + bias_j + noise`` with precision
  ``lambda_j``, a Gaussian prior on the truths and a Gamma prior on the precisions (model PG1
  of Piech et al. 2013; the bias of Raykar et al. 2010), fitted by variational EM; the
  precisions' prior is chosen by evidence (type-II maximum likelihood), so a worker with few
  ratings is pulled towards the crowd's typical precision.
- :class:`CATD`: confidence-aware truth discovery (Li et al. 2014): worker weights from the upper
  end of a chi-squared confidence interval of their error variance.

All four work on the observed ratings only (triplets task, worker, rating, in task order) with
sequential ``np.bincount`` sums, so results do not depend on the CPU. ``BiasPrecisionEM`` and
``CATD`` fit on the ratings standardized by their median and robust scale
(``rating_location_``, ``rating_scale_``) and map the results back: their predictions follow any
affine change of the ratings (``a * X + b`` in, ``a * predict(X) + b`` out, up to rounding), and
ratings of 1e-300 or 1e200 neither underflow nor overflow.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq
from scipy.special import digamma, gammaln
from scipy.stats import chi2
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import _as_it_was_on_error
from ..votes import _check_no_duplicate_entry, _fmt, _long_format_roles
from ._base import _keyed_like

__all__ = ["MeanRating", "MedianRating", "BiasPrecisionEM", "CATD", "check_ratings"]


def _cell(row, column, names):
    worker = repr(str(names[column])) if names is not None else str(column)
    return f"row {row}, worker {worker} (column {column})"


def check_ratings(X, *, missing_value=np.nan, rating_range=None, feature_names=None,
                  name="X"):
    """Float ratings matrix of ``X``: NaN where a worker did not rate a task.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_tasks, n_workers)
        Ratings: numbers (or strings of numbers), NaN or ``missing_value`` for no rating. In a
        scipy.sparse matrix the *stored* entries are the ratings (an explicitly stored 0 is a
        rating of 0) and the implicit entries are missing, as in a sparse votes matrix.
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
        outside ``rating_range``, or is a sparse matrix that stores an entry twice: the message
        names the argument, the row and the worker.

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
    >>> import scipy.sparse as sp
    >>> check_ratings(sp.csr_array(([0.0, 0.75], ([0, 1], [1, 0])), shape=(2, 2)))
    array([[ nan, 0.  ],
           [0.75,  nan]])
    """
    if sp.issparse(X):  # the stored entries are the ratings; toarray() would make the rest 0
        coo = sp.coo_array(X)
        _check_no_duplicate_entry(coo.row, coo.col, coo.shape, name, "ratings")
        array = np.full(coo.shape, np.nan)
        array[coo.row, coo.col] = coo.data
    else:
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


def _standardization(value):
    """Robust location and scale of the ratings ``value``: the median and ``1.4826`` times the
    median absolute deviation (the standard deviation's estimate for normal ratings); where more
    than half the ratings are one value (MAD 0), the standard deviation; 1 if all are equal.
    No rating is squared, so that ratings of 1e200 do not overflow nor ratings of 1e-200
    underflow."""
    location = float(np.median(value))
    deviation = value - location
    scale = 1.4826 * float(np.median(np.abs(deviation)))
    if scale == 0:
        top = float(np.max(np.abs(deviation)))
        scale = top * float(np.std(deviation / top)) if top > 0 else 1.0
    return location, scale


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
        tags.input_tags.sparse = True  # stored entries are the ratings
        tags.target_tags.required = False
        tags.regressor_tags.poor_score = True  # the checks' y is not the truth of their X
        return tags

    def _ratings(self, X, *, reset):
        _check_not_long_ratings(X, "X")
        checked = validate_data(self, X, reset=reset, dtype=None, ensure_all_finite=False,
                                accept_sparse=True)  # keeps coo duplicates for check_ratings
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

    def _fit_standardized(self, X):
        """``_fit_ratings`` with the ratings standardized (``rating_location_``, ``rating_scale_``
        recorded): a model fitted on them is invariant to an affine change of the ratings."""
        ratings, task, worker, value = self._fit_ratings(X)
        self.rating_location_, self.rating_scale_ = _standardization(value)
        return ratings, task, worker, self._standardize(value)

    def _standardize(self, value):
        return (value - self.rating_location_) / self.rating_scale_

    def _unstandardize(self, value):
        return value * self.rating_scale_ + self.rating_location_

    def fit(self, X, y=None):
        """Fit the aggregator on the ratings ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Ratings, NaN or ``missing_value`` where a worker did not rate a task (in a sparse
            matrix, the implicit entries).
        y : None
            Ignored: the gold ratings are not used (they are for ``score``).

        Returns
        -------
        self : object
        """
        with _as_it_was_on_error(self):
            return self._fit(X)

    def fit_predict(self, X, y=None):
        """Fit on the ratings ``X`` and return the aggregated rating of each task.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Ratings.
        y : None
            Ignored.

        Returns
        -------
        ratings : ndarray of shape (n_tasks,) or pandas Series
            A Series with ``X.index`` when ``X`` is a DataFrame.
        """
        return self.fit(X).predict(X)

    def predict(self, X):
        """Aggregated rating of each task of ``X`` (from the fitted worker model).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Ratings of the fitted workers (columns); tasks may be new. A task without a
            rating gets ``default_rating_``.

        Returns
        -------
        ratings : ndarray of shape (n_tasks,) or pandas Series
            A Series with ``X.index`` when ``X`` is a DataFrame, as the class aggregators'
            per-task outputs.
        """
        check_is_fitted(self)
        return _keyed_like(self._aggregate(self._ratings(X, reset=False)), X)


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


_MIN_SHAPE, _MAX_SHAPE = 1e-6, 500.0


def _gamma_prior(mean_precision, mean_log_precision, shape=None):
    """Gamma ``(shape, rate)`` maximizing ``sum_j E log Gamma(lambda_j | shape, rate)``.

    ``mean_precision`` and ``mean_log_precision`` are the averages over workers of
    ``E lambda_j`` and ``E log lambda_j``. With ``shape`` given, only the rate is chosen.
    """
    if shape is None:
        # log a - digamma(a) = gap, decreasing in a; shape kept in [1e-6, 500] (at most 1000
        # pseudo-ratings: workers all alike would otherwise push it up forever)
        gap = np.log(mean_precision) - mean_log_precision  # >= 0 (Jensen)

        def excess(a):
            return np.log(a) - digamma(a) - gap

        if excess(_MAX_SHAPE) >= 0:
            shape = _MAX_SHAPE
        elif excess(_MIN_SHAPE) <= 0:
            shape = _MIN_SHAPE
        else:
            shape = brentq(excess, _MIN_SHAPE, _MAX_SHAPE, xtol=1e-12, rtol=1e-12)
    return float(shape), float(shape / mean_precision)


def _gamma_kl(shape_q, rate_q, shape_p, rate_p):
    """KL(Gamma(shape_q, rate_q) || Gamma(shape_p, rate_p)), elementwise."""
    return ((shape_q - shape_p) * digamma(shape_q) - gammaln(shape_q) + gammaln(shape_p)
            + shape_p * (np.log(rate_q) - np.log(rate_p))
            + shape_q * (rate_p - rate_q) / rate_q)


class BiasPrecisionEM(_BaseRatingAggregator):
    """Workers with a bias and a precision each, with Gaussian and Gamma priors: variational EM.

    The true rating of task ``i`` is ``z_i ~ N(mu, s^2)``; worker ``j`` rates it
    ``y_ij ~ N(a_j z_i + b_j, 1 / lambda_j)`` with a bias ``b_j``, a precision ``lambda_j`` and,
    with ``scale=True``, a slope ``a_j`` (else 1). The precisions have a Gamma prior,
    ``lambda_j ~ Gamma(alpha, beta)``, and are integrated out by variational EM (mean field,
    ``q(z) q(lambda)``): each iteration updates the Gaussian posterior of every truth ``z_i``
    (closed form, with the workers' expected precisions), the biases and slopes (a weighted
    least-squares fit per worker, MAP under the priors ``b_j ~ N(0, 1 / (bias_prior
    lambda_j))``, ``a_j ~ N(1, 1 / (scale_prior lambda_j))``: ``bias_prior`` pseudo-ratings of
    no bias), the Gamma posterior of every precision, ``q(lambda_j) = Gamma(alpha + n_j / 2,
    beta + E[sum_i (y_ij - a_j z_i - b_j)^2] / 2)``, and the prior ``mu, s^2`` of the truths.
    With ``precision_prior="auto"`` the Gamma prior ``(alpha, beta)`` is chosen from the data
    in the same iterations (empirical Bayes: the values that maximize the evidence lower bound
    given the workers' posteriors), so ``lower_bounds_``, the evidence lower bound per task,
    never decreases.

    The closest published model is PG1 of Piech et al. (2013): true scores, grader biases and
    grader reliabilities with Gaussian, Gaussian and Gamma priors (there the biases' prior does
    not scale with the precision, and the model is fitted by Gibbs sampling with fixed
    hyperparameters). ``bias=False`` drops the biases: not LFC-N of Zheng et al. (2017), which is
    the maximum-likelihood model without priors (flat truths, point precisions) and from which
    this model moves single tasks by up to 0.34 standard deviations of the truths, but PG1 without
    biases, its Bayesian counterpart. The ratings are standardized first (see the module): the
    predictions follow any affine change of the ratings; the attributes are in the ratings' units.

    A worker with few ratings thus gets about the crowd's typical precision (the prior is
    worth ``2 alpha`` pseudo-ratings) instead of the huge precision of a worker whose three
    ratings happen to agree with the others, and a worker who rates everything high gets a
    bias instead of a low precision. The crowd cannot see a shift (or, with ``scale``, a
    change of unit) shared by all workers: each iteration moves the truths to the scale on
    which the priors on biases and slopes are best met (the precision-weighted average worker
    has no bias and slope 1); a step that raises the objective and stops EM from crawling
    along that ridge.

    Parameters
    ----------
    bias : bool, default=True
        Fit a bias per worker; ``False``: a precision only (PG1 without biases; the Bayesian
        counterpart of LFC-N).
    bias_prior : float, default=1.0
        Strength of the zero-mean prior on biases, in pseudo-ratings (0: no prior).
    precision_prior : "auto" or float, default="auto"
        Strength of the precisions' Gamma prior in pseudo-ratings (``2 alpha``); ``"auto"``
        chooses it from the data. Its mean ``alpha / beta`` is always chosen from the data.
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
    slopes_ : ndarray of shape (n_workers,)
        ``a_j`` (ones unless ``scale=True``).
    precisions_ : ndarray of shape (n_workers,)
        ``E lambda_j``, the posterior mean of the inverse variance of each worker's noise (the
        prior mean for a worker without ratings), in the ratings' units (inf or 0 where that is
        not a float, for ratings of 1e-200 or 1e200).
    prior_mean_, prior_variance_ : float
        ``mu`` and ``s^2``: the prior of the true ratings (a task without ratings gets ``mu``).
    default_rating_ : float
        ``prior_mean_``.
    precision_prior_strength_, precision_prior_mean_ : float
        ``2 alpha`` (pseudo-ratings) and ``alpha / beta`` of the precisions' prior.
    rating_location_, rating_scale_ : float
        Median and robust scale of the fitted ratings: the model runs on
        ``(X - rating_location_) / rating_scale_``.
    lower_bound_ : float
        Evidence lower bound of the final model per task (plus the log-density of the biases'
        and slopes' priors), a density of the ratings in their own units.
    lower_bounds_ : ndarray
        The same at each iteration (never decreasing).
    n_iter_ : int
        Iterations run.
    converged_ : bool
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of str
        Worker names, when ``X`` was a DataFrame with string column names.

    References
    ----------
    V. C. Raykar, S. Yu, L. H. Zhao, G. H. Valadez, C. Florin, L. Bogoni and L. Moy. "Learning
    from crowds". JMLR 11, 2010. C. Piech, J. Huang, Z. Chen, C. Do, A. Ng and D. Koller.
    "Tuned models of peer assessment in MOOCs". Educational Data Mining, 2013. Y. Zheng, G. Li,
    Y. Li, C. Shan and R. Cheng. "Truth inference in crowdsourcing: is the problem solved?".
    PVLDB 10(5), 2017.

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
    array([-4.1,  3.8, -0.6,  0.8])
    >>> np.round(1 / np.sqrt(model.precisions_), 1)
    array([ 2. ,  1.9,  4.7, 29.6])
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

    def _workers(self, task, worker, value, n, mean, var):
        """MAP biases and slopes given q(z) (the same for any precision: one per worker)."""
        n_workers = len(n)

        def per_worker(weights):
            return np.bincount(worker, weights=weights, minlength=n_workers)

        kb, ka = self._priors()
        m, v = mean[task], var[task]
        bias, slope = np.zeros(n_workers), np.ones(n_workers)
        if self.bias and self.scale:
            # least squares of y on (E z, 1) with the priors as pseudo-ratings
            Smm, Sm = per_worker(m * m + v) + ka, per_worker(m)
            Sym, Sy = per_worker(value * m) + ka, per_worker(value)
            det = Smm * (n + kb) - Sm * Sm
            ok = (n > 0) & (det > 1e-12 * np.maximum(Smm * (n + kb), 1e-300))
            safe = np.where(ok, det, 1.0)
            slope = np.where(ok, (Sym * (n + kb) - Sm * Sy) / safe, 1.0)
            bias = np.where(ok, (Smm * Sy - Sm * Sym) / safe, 0.0)
        elif self.bias:
            bias = np.where(n > 0, per_worker(value - m) / np.maximum(n + kb, 1e-300), 0.0)
        elif self.scale:
            Smm = per_worker(m * m + v) + ka
            ok = (n > 0) & (Smm > 0)
            slope = np.where(ok, (per_worker(value * m) + ka) / np.where(ok, Smm, 1.0), 1.0)
        square = per_worker((value - bias[worker] - slope[worker] * m) ** 2
                            + slope[worker] ** 2 * v)
        return bias, slope, square

    def _precisions(self, n, square, bias, slope, prior):
        """Gamma posterior (shape, rate) of each rated worker's precision."""
        kb, ka = self._priors()
        shape = prior[0] + 0.5 * (n + float(kb > 0) + float(ka > 0))
        rate = prior[1] + 0.5 * (square + kb * bias ** 2 + ka * (slope - 1) ** 2)
        return shape, np.maximum(rate, self._floor * shape)

    def _gauge(self, bias, slope, expected_precision, prior_mean, prior_var):
        """The shift and unit of the truths that best meet the biases' and slopes' priors."""
        kb, ka = self._priors()
        lam = expected_precision
        weight = np.sum(lam * slope * slope)
        u = float(np.sum(lam * slope) / weight) if ka > 0 and np.sum(lam * slope) != 0 else 1.0
        d = float(np.sum(lam * slope * bias) / weight) if kb > 0 else 0.0
        return (slope * u, bias - slope * d, (prior_mean + d) / u,
                max(prior_var / (u * u), self._floor))

    def _objective(self, log_lik_terms, rated, shape, rate, prior, bias, slope):
        """Evidence lower bound (plus the biases' and slopes' log-prior), summed."""
        out = float(np.sum(log_lik_terms))
        out -= float(np.sum(_gamma_kl(shape[rated], rate[rated], *prior)))
        e_log = digamma(shape[rated]) - np.log(rate[rated])
        e_lam = shape[rated] / rate[rated]
        for kappa, offset in zip(self._priors(), (bias[rated], slope[rated] - 1)):
            if kappa > 0:
                out += float(np.sum(0.5 * (e_log + np.log(kappa / (2 * np.pi)))
                                    - 0.5 * kappa * e_lam * offset ** 2))
        return out

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X):
        ratings, task, worker, value = self._fit_standardized(X)
        n_tasks, n_workers = ratings.shape
        scale = float(np.var(value)) if np.var(value) > 0 else 1.0
        self._floor = 1e-10 * scale
        n = np.bincount(worker, minlength=n_workers).astype(np.float64)
        rated = n > 0
        # start: the truths are the tasks' mean ratings, known exactly
        n_task = np.bincount(task, minlength=n_tasks)
        mean = np.bincount(task, weights=value, minlength=n_tasks)
        mean = np.where(n_task > 0, mean / np.maximum(n_task, 1), np.mean(value))
        var = np.zeros(n_tasks)
        resid = float(np.sum((value - mean[task]) ** 2))
        fixed_shape = None if self.precision_prior == "auto" else 0.5 * self.precision_prior
        prior = _gamma_prior(len(value) / max(resid, self._floor * len(value)), 0.0,
                             shape=1.0 if fixed_shape is None else fixed_shape)
        lam = np.full(n_workers, prior[0] / prior[1])
        bounds, converged = [], False
        for _ in range(self.max_iter):
            bias, slope, square = self._workers(task, worker, value, n, mean, var)
            shape, rate = self._precisions(n, square, bias, slope, prior)
            if rated.any():
                prior = _gamma_prior(float(np.mean(shape[rated] / rate[rated])),
                                     float(np.mean(digamma(shape[rated])
                                                   - np.log(rate[rated]))),
                                     shape=fixed_shape)
            shape = np.where(rated, shape, prior[0])
            rate = np.where(rated, rate, prior[1])
            lam = shape / rate
            prior_mean = float(np.mean(mean))
            prior_var = max(float(np.mean((mean - prior_mean) ** 2 + var)), self._floor)
            slope, bias, prior_mean, prior_var = self._gauge(bias, slope, lam, prior_mean,
                                                             prior_var)
            params = (bias, slope, lam, prior_mean, prior_var)
            mean, var, _ = _task_posterior(task, worker, value, n_tasks, params)
            # E_q log p(y, z) + H(q(z)): per vote 0.5 E log lam - 0.5 log 2 pi - 0.5 E lam E r^2
            e_log = digamma(shape) - np.log(rate)
            r2 = (value - bias[worker] - slope[worker] * mean[task]) ** 2 \
                + slope[worker] ** 2 * var[task]
            terms = np.concatenate([
                0.5 * e_log[worker] - 0.5 * np.log(2 * np.pi) - 0.5 * lam[worker] * r2,
                -0.5 * np.log(prior_var) - 0.5 * ((mean - prior_mean) ** 2 + var) / prior_var
                + 0.5 + 0.5 * np.log(var),
            ])
            bounds.append(self._objective(terms, rated, shape, rate, prior, bias, slope)
                          / n_tasks)
            if len(bounds) > 1 and abs(bounds[-1] - bounds[-2]) < self.tol:
                converged = True
                break
        if not converged:
            warnings.warn(f"BiasPrecisionEM did not converge in max_iter={self.max_iter} "
                          "iterations; raise max_iter or tol.", ConvergenceWarning)
        del self._floor
        self._standardized_params = (bias, slope, lam, prior_mean, prior_var)
        # back to the ratings' units: y = s u + c with u = a z + b + e gives truth s z + c,
        # bias s b + c (1 - a), precision lam / s^2 (inf or 0 where that is not a float)
        c, s = self.rating_location_, self.rating_scale_
        with np.errstate(over="ignore", under="ignore"):
            self.biases_, self.slopes_ = s * bias + c * (1 - slope), slope
            self.precisions_ = lam / s / s
            self.prior_mean_ = float(self._unstandardize(prior_mean))
            self.prior_variance_ = float(prior_var * s * s)
            self.precision_prior_mean_ = float(prior[0] / prior[1] / s / s)
        self.default_rating_ = self.prior_mean_
        self.precision_prior_strength_ = 2 * prior[0]
        # the bound of the ratings themselves: the Jacobian of u = (y - c) / s per rating (and
        # per bias under its prior)
        jacobian = np.log(s) * (len(value) + (self._priors()[0] > 0) * int(rated.sum()))
        self.lower_bounds_ = np.asarray(bounds) - jacobian / n_tasks
        self.lower_bound_ = float(self.lower_bounds_[-1])
        self.n_iter_ = len(bounds)
        self.converged_ = converged
        return self

    def _posterior(self, ratings):
        """Posterior mean, variance and log-marginal likelihood of each task, standardized."""
        task, worker, value = _triplets(ratings)
        return _task_posterior(task, worker, self._standardize(value), len(ratings),
                               self._standardized_params)

    def _aggregate(self, ratings, return_std=False):
        mean, var, _ = self._posterior(ratings)
        mean = self._unstandardize(mean)
        return (mean, np.sqrt(var) * self.rating_scale_) if return_std else mean

    def predict(self, X, return_std=False):
        """Posterior mean of each task's true rating (the fitted workers' model).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Ratings of the fitted workers; tasks may be new (a task without ratings gets
            ``prior_mean_``).
        return_std : bool, default=False
            Also return the posterior standard deviation of each task's truth.

        Returns
        -------
        ratings : ndarray of shape (n_tasks,) or pandas Series
            A Series with ``X.index`` when ``X`` is a DataFrame.
        std : ndarray of shape (n_tasks,) or pandas Series
            Only with ``return_std=True``.
        """
        check_is_fitted(self)
        out = self._aggregate(self._ratings(X, reset=False), return_std=return_std)
        if return_std:
            return tuple(_keyed_like(part, X) for part in out)
        return _keyed_like(out, X)

    def score_samples(self, X):
        """Log-likelihood of each task's ratings under the fitted model.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Ratings of the fitted workers.

        Returns
        -------
        log_likelihood : ndarray of shape (n_tasks,) or pandas Series
            A density of the ratings in their own units; a Series with ``X.index`` when ``X``
            is a DataFrame.
        """
        check_is_fitted(self)
        ratings = self._ratings(X, reset=False)
        n_rated = np.sum(~np.isnan(ratings), axis=1)
        return _keyed_like(self._posterior(ratings)[2] - n_rated * np.log(self.rating_scale_), X)


class CATD(_BaseRatingAggregator):
    """Confidence-aware truth discovery (Li et al. 2014): chi-squared weighted means.

    Alternates the truths, ``z_i = sum_j w_j y_ij / sum_j w_j``, and the worker weights,
    ``w_j = chi2.ppf(alpha / 2, n_j) / sum_i (y_ij - z_i)^2``: the inverse of the upper end of
    a ``1 - alpha`` confidence interval of the worker's error variance, small for a worker with
    few ratings however well they agree. Starts from the medians.

    **Pseudo-ratings.** The published rule measures a worker's residuals against truths their
    own ratings are part of, which feeds back: a worker of large weight makes the truths their
    ratings, which makes their residuals small and their weight larger, until every truth is
    that worker's rating (on a simulated crowd of 5 workers, 3 ratings per task, a weight ratio
    of 1.8e13; on MovieReviews an R^2 of .803 where the mean has .830). Each worker's residuals
    are therefore counted with ``prior_ratings`` pseudo-ratings whose squared residual is the
    crowd's pooled one, ``s0^2 = sum_j S_j / sum_j n_j``: ``w_j = chi2.ppf(alpha / 2, n_j + k) /
    (S_j + k s0^2)``. No weight can then grow without bound (``S_j + k s0^2 >= k s0^2``): a
    worker whose ratings are the truths weighs at most about ``(n_j + k) / k`` typical workers,
    and a worker with few ratings is pulled towards the crowd's typical weight. ``k = 3``
    minimized the sum of the mean MAE ratios to the mean rating over the seven Snow et al.
    crowds and eight simulated crowds; on MovieReviews, left out, it has 0.81 times the mean's
    MAE (the published rule 1.15, ``leave_one_out`` 0.98). ``prior_ratings=0`` is the published
    rule.

    The ratings are standardized first (``rating_location_``, ``rating_scale_``): the
    predictions follow any affine change of the ratings (``a * X + b`` gives ``a * predict(X)
    + b``), from ratings of 1e-200 to 1e200.

    Parameters
    ----------
    alpha : float, default=0.05
        Significance level of the confidence interval.
    prior_ratings : float, default=3.0
        Pseudo-ratings ``k`` of the pooled squared residual added to every rated worker's
        (see above); 0 for the published rule, which can collapse onto one worker.
    leave_one_out : bool, default=False
        Measure a worker's residuals against the weighted mean of the task's *other* workers
        (tasks they rated alone do not count; a worker who rated only such tasks gets weight 0,
        and a task rated only by such workers their plain mean). It removes a worker's own
        feedback, not a pair's (two workers who agree exactly still drive each other's weight
        up without ``prior_ratings``), and it inflates every residual by the others' error,
        which evens out the weights: 0.98 times the mean's MAE on MovieReviews.
    max_iter : int, default=100
        Most iterations.
    tol : float, default=1e-6
        Stop when no truth moves by more than ``tol`` times the standardized ratings' standard
        deviation.
    missing_value : float or None, default=np.nan
        Marker of a missing rating besides NaN.
    rating_range : tuple (low, high) or None, default=None
        Declared range of the ratings; a rating outside raises a ValueError.

    Attributes
    ----------
    weights_ : ndarray of shape (n_workers,)
        Worker weights, normalized to sum to one (only their ratios matter; 0 for a worker
        without ratings).
    default_rating_ : float
        Mean of the fitted truths of the rated tasks (not weighted): the prediction for a task
        without ratings.
    rating_location_, rating_scale_ : float
        Median and robust scale of the fitted ratings: the model runs on
        ``(X - rating_location_) / rating_scale_``.
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
    >>> model = CATD().fit(X)  # the true precisions' ratios are 1, 1, 0.25, 0.25, 0.01
    >>> np.round(model.weights_ / model.weights_.max(), 2)
    array([1.  , 0.72, 0.39, 0.36, 0.02])
    >>> bool(np.abs(model.predict(X) - truth).mean() < np.abs(np.nanmean(X, 1) - truth).mean())
    True
    >>> published = CATD(prior_ratings=0).fit(X)  # worker 0's weight fed back on itself
    >>> np.round(published.weights_ / published.weights_.max(), 2)
    array([1., 0., 0., 0., 0.])
    """

    _parameter_constraints: dict = {
        **_BaseRatingAggregator._parameter_constraints,
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "prior_ratings": [Interval(numbers.Real, 0, None, closed="left")],
        "leave_one_out": ["boolean"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, *, alpha=0.05, prior_ratings=3.0, leave_one_out=False, max_iter=100,
                 tol=1e-6, missing_value=np.nan, rating_range=None):
        self.alpha = alpha
        self.prior_ratings = prior_ratings
        self.leave_one_out = leave_one_out
        self.max_iter = max_iter
        self.tol = tol
        self.missing_value = missing_value
        self.rating_range = rating_range

    @staticmethod
    def _weighted(task, worker, value, n_tasks, weights, default):
        """Weighted mean of each task's ratings: their plain mean where all its raters weigh 0,
        ``default`` for a task without ratings."""
        w = weights[worker]
        total = np.bincount(task, weights=w, minlength=n_tasks)
        num = np.bincount(task, weights=w * value, minlength=n_tasks)
        n = np.bincount(task, minlength=n_tasks)
        plain = np.bincount(task, weights=value, minlength=n_tasks)
        return np.where(total > 0, num / np.where(total > 0, total, 1.0),
                        np.where(n > 0, plain / np.maximum(n, 1), default))

    def _residual_sums(self, task, worker, value, truth, weights, n_tasks, n_workers):
        """Per worker: the number of residuals and their sum of squares."""
        if not self.leave_one_out:
            return (np.bincount(worker, minlength=n_workers),
                    np.bincount(worker, weights=(value - truth[task]) ** 2, minlength=n_workers))
        # residual against the weighted mean of the task's other workers
        w = weights[worker]
        num = np.bincount(task, weights=w * value, minlength=n_tasks)[task] - w * value
        den = np.bincount(task, weights=w, minlength=n_tasks)[task] - w
        others = den > 1e-12 * w
        resid = np.where(others, value - num / np.where(others, den, 1.0), 0.0)
        return (np.bincount(worker, weights=others, minlength=n_workers),
                np.bincount(worker, weights=resid ** 2, minlength=n_workers))

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X):
        ratings, task, worker, value = self._fit_standardized(X)
        n_tasks, n_workers = ratings.shape
        spread = float(np.std(value)) or 1.0
        truth = _medians(self._standardize(ratings), float(np.median(value)))
        floor = 1e-12 * spread ** 2
        converged = False
        weights = np.ones(n_workers)
        for n_iter in range(1, self.max_iter + 1):
            n, S = self._residual_sums(task, worker, value, truth, weights, n_tasks, n_workers)
            if self.prior_ratings > 0:
                pooled = float(np.sum(S)) / max(float(np.sum(n)), 1.0)
                n, S = np.where(n > 0, n + self.prior_ratings, 0.0), S + self.prior_ratings * pooled
            quantile = np.where(n > 0, chi2.ppf(self.alpha / 2, np.maximum(n, 1)), 0.0)
            weights = quantile / np.maximum(S, floor)
            weights = weights / (np.sum(weights) or 1.0)
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
        rated = np.bincount(task, minlength=n_tasks) > 0
        self.default_rating_ = float(self._unstandardize(np.mean(truth[rated])))
        self.n_iter_, self.converged_ = n_iter, converged
        return self

    def _aggregate(self, ratings):
        task, worker, value = _triplets(ratings)
        default = self._standardize(self.default_rating_)
        return self._unstandardize(self._weighted(task, worker, self._standardize(value),
                                                  len(ratings), self.weights_, default))
