"""Pairwise comparisons: which of two items a worker prefers.

A comparison is a row ``worker, left, right, label`` of a pandas DataFrame
(crowd-kit's layout): a worker saw the items ``left`` and ``right`` and
answered ``label``, the item they preferred (or, for
:class:`BradleyTerry` with ``tie_label``, that marker for a tie). Items and
workers are ids of any hashable type; the ``worker`` column is optional (its
absence makes every row the answer of one anonymous worker).

Every model gives each item a log-score ``s`` (``scores_``, a Series indexed
by item, higher = preferred), with ``P(left preferred) = sigmoid(s_left -
s_right)``, and differs in how workers answer:

- :class:`BradleyTerry`: every worker answers by that probability (with ties:
  Davidson's model);
- :class:`NoisyBradleyTerry`: crowd-kit's noisy model, a worker answers by it
  with probability ``skill`` and else picks ``left`` with probability
  ``bias``;
- :class:`CrowdBT`: a worker tells the truth with probability ``eta`` and
  answers the opposite otherwise (Chen et al. 2013), so that an adversary
  (``eta < 0.5``) counts reversed and a random worker (``eta = 0.5``) not at
  all.

Each is a maximum a posteriori fit by L-BFGS on the log-likelihood written in
log space (log-sigmoids and ``logaddexp``, which never overflow), with a
Gaussian prior on the log-scores, so that an undefeated item or one outside
the largest connected group of items keeps a finite score. They share
``predict`` (the preferred item of each row), ``predict_proba`` (the
probability that ``left`` is preferred), ``score`` (mean log-likelihood of
held-out comparisons, for :class:`~sklearn.model_selection.GridSearchCV`),
:meth:`~BradleyTerry.score_intervals` (Laplace or bootstrap intervals) and
:meth:`~BradleyTerry.next_pairs` (the pairs to compare next);
:func:`select_next_pairs` fits a model and returns them.

A worker who compares the same pair twice gives two comparisons: repeated
rows are kept as repeated evidence.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import minimize
from scipy.special import expit, log_expit, logsumexp
from scipy.stats import norm
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

__all__ = ["BradleyTerry", "NoisyBradleyTerry", "CrowdBT", "select_next_pairs"]

#: Outcome codes of a comparison: the left item preferred, the right one, a tie.
_LEFT, _RIGHT, _TIE = 1, -1, 0
#: Worker id of the rows of a table without a ``worker`` column.
ANONYMOUS = "anonymous"


def _pandas():
    import pandas as pd

    return pd


def _factorize(values):
    """Codes of ``values`` and their sorted unique ids (ids of mixed types that do not compare
    sorted by type name, then repr), so that the fitted parameters do not depend on the order
    of the rows."""
    pd = _pandas()
    try:
        return pd.factorize(values, sort=True)
    except TypeError:
        codes, uniques = pd.factorize(values)
        order = np.argsort(np.array([f"{type(u).__name__}:{u!r}" for u in uniques]),
                           kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        return rank[codes], uniques[order]


def _id(value):
    """An id for a message: a numpy scalar as its Python value (``30``, not ``np.int64(30)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _columns(X, need_label):
    """The ``left``, ``right`` (and ``label``) columns of ``X`` as object arrays, checked."""
    pd = _pandas()
    if not isinstance(X, pd.DataFrame):
        raise TypeError(
            "Comparisons must be a pandas DataFrame with columns worker (optional), left, right "
            f"and label, got {type(X).__name__}.")
    names = ["left", "right"] + (["label"] if need_label else [])
    missing = [name for name in names if name not in X.columns]
    if missing:
        raise ValueError(f"Comparisons lack the column(s) {missing}; expected worker "
                         f"(optional), left, right and label, got {list(X.columns)}.")
    if len(X) == 0:
        raise ValueError("Comparisons hold no row: at least one comparison is required.")
    columns = {name: X[name].to_numpy() for name in names}
    for name, values in columns.items():
        bad = pd.isna(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"Comparisons row {row} (index {_id(X.index[row])!r}): {name} is "
                             f"missing ({_id(values[row])!r}).")
    same = columns["left"] == columns["right"]
    if same.any():
        row = int(np.flatnonzero(same)[0])
        raise ValueError(f"Comparisons row {row} (index {_id(X.index[row])!r}) compares item "
                         f"{_id(columns['left'][row])!r} with itself ({int(same.sum())} such "
                         "rows).")
    return columns


def _outcomes(X, left, right, label, tie_label):
    """Outcome code of each row (_LEFT, _RIGHT, _TIE), with an error naming a bad label."""
    outcome = np.where(label == left, _LEFT, np.where(label == right, _RIGHT, _TIE))
    bad = outcome == _TIE
    if tie_label is not None:
        bad &= label != tie_label
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        allowed = "left, right" + ("" if tie_label is None else f" or tie_label={tie_label!r}")
        raise ValueError(
            f"Comparisons row {row} (index {_id(X.index[row])!r}): label {_id(label[row])!r} is "
            f"neither of the items compared ({_id(left[row])!r}, {_id(right[row])!r}); a label "
            f"must be {allowed}.")
    return outcome.astype(np.int8)


def _worker_ids(X):
    """The ``worker`` column of ``X``, or the anonymous worker of every row."""
    if "worker" in X.columns:
        return X["worker"].to_numpy()
    return np.full(len(X), ANONYMOUS, dtype=object)


class _Comparisons:
    """Validated comparisons, items and workers as integer codes."""

    def __init__(self, X, tie_label=None):
        cols = _columns(X, need_label=True)
        self.outcome = _outcomes(X, cols["left"], cols["right"], cols["label"], tie_label)
        n = len(X)
        codes, self.items = _factorize(np.concatenate([cols["left"], cols["right"]]))
        self.left, self.right = codes[:n], codes[n:]
        self.worker, self.workers = _factorize(_worker_ids(X))


class _PairwiseModel(BaseEstimator):
    """What the pairwise models share: the MAP fit, predictions, intervals, next pairs.

    A model defines ``_N_WORKER`` parameters per worker (and ``_n_global()`` shared ones), the
    log-likelihood of a row ``_row_loglik`` as a function of ``d = s_left - s_right`` and of its
    worker's parameters, their prior ``_log_prior`` and starting values ``_start``.
    """

    _N_WORKER = 0

    _parameter_constraints: dict = {
        "prior_strength": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __sklearn_tags__(self):
        # comparisons are rows of ids (a DataFrame: worker, left, right, label), not a 2-D
        # numeric array: scikit-learn then runs only its checks that need no data, and the
        # contracts of the others are tested on comparisons (tests/test_pairwise.py and the
        # pairwise domain checks of skcrowd.utils.estimator_checks)
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        return tags

    def _n_global(self):
        return 0

    # -- the objective ----------------------------------------------------------------------

    def _split(self, theta, n_items, n_workers):
        s = theta[:n_items]
        end = n_items + self._N_WORKER * n_workers
        return s, theta[n_items:end].reshape(n_workers, self._N_WORKER), theta[end:]

    def _objective(self, theta, data):
        """Negative log-posterior per comparison and its gradient."""
        n_items, n_workers = len(data.items), len(data.workers)
        s, w, g = self._split(theta, n_items, n_workers)
        d = s[data.left] - s[data.right]
        ll, d_d, d_w, d_g = self._row_loglik(d, data.outcome, w[data.worker], g)
        prior, p_s, p_w, p_g = self._log_prior(s, w, g)
        grad_s = (np.bincount(data.left, d_d, minlength=n_items)
                  - np.bincount(data.right, d_d, minlength=n_items) + p_s)
        grad_w = p_w.copy()
        for k in range(self._N_WORKER):
            grad_w[:, k] += np.bincount(data.worker, d_w[:, k], minlength=n_workers)
        grad_g = d_g.sum(axis=0) + p_g
        n = len(d)
        value = -(ll.sum() + prior) / n
        return value, -np.concatenate([grad_s, grad_w.ravel(), grad_g]) / n

    def _log_prior(self, s, w, g):
        """Gaussian prior N(0, 1 / prior_strength) on the log-scores; worker priors added by
        the models that have workers' parameters."""
        lam = self.prior_strength
        return (-0.5 * lam * float(s @ s), -lam * s, np.zeros_like(w), np.zeros_like(g))

    def fit(self, X, y=None):
        """Fit the items' log-scores (and the workers' parameters) to comparisons.

        Parameters
        ----------
        X : pandas DataFrame
            Comparisons, one per row: columns ``worker`` (optional), ``left``, ``right`` and
            ``label`` (the preferred item, or ``tie_label`` for a tie where the model takes
            ties). Repeated rows are repeated evidence.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted model.

        Raises
        ------
        ValueError
            If a row compares an item with itself, has a label that is neither of its items
            (nor the tie marker), or a missing id (the message names the row).
        """
        self._validate_params()
        data = _Comparisons(X, getattr(self, "tie_label", None))
        theta0 = self._start(data)
        # L-BFGS-B's BLAS calls are on short vectors: threads only cost (10x slower on a busy
        # 2-core machine) and could change the last digits
        with threadpool_limits(limits=1, user_api="blas"):
            result = minimize(self._objective, theta0, args=(data,), jac=True,
                              method="L-BFGS-B",
                              options={"maxiter": self.max_iter, "ftol": self.tol, "gtol": 1e-9})
        if result.status == 1:  # the iteration limit
            warnings.warn(f"{type(self).__name__} did not converge in {self.max_iter} "
                          f"iterations (tol={self.tol}); raise max_iter.", ConvergenceWarning,
                          stacklevel=2)
        pd = _pandas()
        s, w, g = self._split(result.x, len(data.items), len(data.workers))
        fitted = {"scores_": pd.Series(s, index=pd.Index(data.items, name="item"), name="score"),
                  "n_iter_": int(result.nit),
                  "log_posterior_": float(-result.fun * len(data.outcome)),
                  "_workers": pd.Index(data.workers, name="worker"),
                  "_worker_params": w, "_global_params": g}
        fitted.update(self._worker_attributes(w, g, fitted["_workers"]))
        # the Fisher information of each comparison about d = s_left - s_right (for intervals)
        d = s[data.left] - s[data.right]
        fitted["_fisher"] = (data.left, data.right, self._information(d, w[data.worker], g))
        self.__dict__.update(fitted)  # nothing is written before the fit has succeeded
        return self

    def _worker_attributes(self, w, g, workers):
        return {}

    def _information(self, d, w, g):
        """Expected Fisher information of a comparison about ``d``: the sum over outcomes of
        ``p(o) (d log p(o) / d d)^2``."""
        outcomes = (_LEFT, _RIGHT, _TIE) if self._n_global() else (_LEFT, _RIGHT)
        info = np.zeros_like(d)
        for o in outcomes:
            ll, d_d, _, _ = self._row_loglik(d, np.full(d.shape, o, dtype=np.int8), w, g)
            info += np.exp(ll) * d_d ** 2
        return info

    # -- predictions ----------------------------------------------------------------------

    def _item_scores(self, values):
        """Fitted log-scores of item ids; an item not seen in fit gets the prior mean, 0."""
        codes = self.scores_.index.get_indexer(values)
        return np.where(codes >= 0, self.scores_.to_numpy()[codes], 0.0)

    def _pair_d(self, X, need_label=False):
        check_is_fitted(self)
        cols = _columns(X, need_label)
        return cols, self._item_scores(cols["left"]) - self._item_scores(cols["right"])

    def predict_proba(self, X):
        """Probability that the ``left`` item of each row is preferred, ``sigmoid(s_left -
        s_right)``.

        With ties (:class:`BradleyTerry` with ``tie_label``) it is the probability that
        ``left`` is preferred given that the answer is not a tie. Items not seen in ``fit``
        have the log-score 0 (the prior mean).

        Parameters
        ----------
        X : pandas DataFrame
            Rows with columns ``left`` and ``right`` (others are ignored).

        Returns
        -------
        proba : ndarray of shape (n_rows,)
            Probability that ``left`` is preferred.
        """
        return expit(self._pair_d(X)[1])

    def predict(self, X):
        """The preferred item of each row's pair: ``left`` where ``predict_proba`` is at least
        0.5, else ``right`` (or ``tie_label`` where a tie is the likeliest answer).

        Parameters
        ----------
        X : pandas DataFrame
            Rows with columns ``left`` and ``right`` (others are ignored).

        Returns
        -------
        items : ndarray of shape (n_rows,)
            The preferred item of each row (of the dtype of the ``left`` and ``right``
            columns).
        """
        cols, d = self._pair_d(X)
        return np.where(d >= 0, cols["left"], cols["right"])

    def _worker_rows(self, X):
        """Each row's worker parameters: the fitted ones, the mean worker's for a worker not
        seen in fit (or a table without a ``worker`` column and workers fitted)."""
        params = self._worker_params
        codes = self._workers.get_indexer(_worker_ids(X))
        return np.where((codes >= 0)[:, None], params[np.maximum(codes, 0)], params.mean(axis=0))

    def score(self, X, y=None):
        """Mean log-likelihood of the answers of comparisons under the model.

        Each row's answer is scored through the model's own model of its worker (a worker not
        seen in ``fit`` answers as the mean fitted worker), so that held-out comparisons rank
        models and parameters in :class:`~sklearn.model_selection.GridSearchCV`. Higher is
        better; 0 is a perfect model.

        Parameters
        ----------
        X : pandas DataFrame
            Comparisons with columns ``worker`` (optional), ``left``, ``right`` and ``label``.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Mean log-probability of each row's label.
        """
        cols, d = self._pair_d(X, need_label=True)
        outcome = _outcomes(X, cols["left"], cols["right"], cols["label"],
                            getattr(self, "tie_label", None))
        ll = self._row_loglik(d, outcome, self._worker_rows(X), self._global_params)[0]
        return float(ll.mean())

    # -- uncertainty ----------------------------------------------------------------------

    def _covariance(self):
        """Laplace covariance of the log-scores about their mean: the inverse of the prior's
        precision plus the Fisher information of the comparisons (worker parameters held at
        their fitted values), projected off the common shift of all scores. The likelihood
        does not see that shift and the fitted scores always sum to zero (the prior's
        gradient balances the likelihood's, whose components sum to zero), so its prior
        variance is no uncertainty of the scores. Dense, O(n_items^3)."""
        left, right, info = self._fisher
        n = len(self.scores_)
        precision = np.zeros((n, n))
        np.add.at(precision, (left, right), -info)
        precision += precision.T
        precision[np.diag_indices(n)] = self.prior_strength - precision.sum(axis=1)
        with threadpool_limits(limits=1, user_api="blas"):  # the same digits on every machine
            cov = cho_solve(cho_factor(precision), np.eye(n))
        centred = cov - cov.mean(axis=0)
        return centred - centred.mean(axis=1, keepdims=True)

    def score_intervals(self, alpha=0.05, *, method="laplace", X=None, n_bootstrap=200,
                        random_state=None):
        """Confidence intervals of the log-scores, as arena leaderboards show them.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the coverage: 0.05 gives 95 % intervals.
        method : {"laplace", "bootstrap"}, default="laplace"
            ``"laplace"``: ``score +- z sqrt(var)``, with the variances of the Laplace
            (Gaussian) approximation of the posterior of the log-scores at the fitted values
            (the workers' parameters held fixed), about their mean (the scores are known up
            to a common shift, and the fitted ones sum to zero); no refit, O(n_items^3) time.
            ``"bootstrap"``: percentile intervals of the log-scores of ``n_bootstrap`` clones
            fitted on comparisons ``X`` resampled with replacement (the rows of ``X`` are
            the unit; pass the comparisons ``fit`` saw).
        X : pandas DataFrame, default=None
            The comparisons to resample, for ``method="bootstrap"``.
        n_bootstrap : int, default=200
            Number of bootstrap fits.
        random_state : int, RandomState instance or None, default=None
            Seeds the resampling.

        Returns
        -------
        intervals : pandas DataFrame
            Indexed by item, columns ``score``, ``lower`` and ``upper``, sorted by score
            (best first, ties by item order).
        """
        check_is_fitted(self)
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
        pd = _pandas()
        scores = self.scores_.to_numpy()
        if method == "laplace":
            half = norm.ppf(1 - alpha / 2) * np.sqrt(np.diag(self._covariance()))
            lower, upper = scores - half, scores + half
        elif method == "bootstrap":
            if X is None:
                raise ValueError("method='bootstrap' resamples comparisons: pass X.")
            rng = check_random_state(random_state)
            draws = np.empty((n_bootstrap, len(scores)))
            for b in range(n_bootstrap):
                rows = rng.randint(len(X), size=len(X))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    fitted = clone(self).fit(X.iloc[rows])
                draws[b] = fitted._item_scores(self.scores_.index)
            lower, upper = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
        else:
            raise ValueError(f"method must be 'laplace' or 'bootstrap', got {method!r}.")
        frame = pd.DataFrame({"score": scores, "lower": lower, "upper": upper},
                             index=self.scores_.index)
        return frame.iloc[np.argsort(-scores, kind="stable")]

    def next_pairs(self, k=1):
        """The ``k`` pairs of items whose comparison is expected to teach the model most.

        Under the Laplace approximation (see :meth:`score_intervals`) the difference of two
        log-scores is Gaussian with variance ``V``; one more comparison by a reliable worker
        brings the Fisher information ``p (1 - p)`` about it, with ``p`` the probability that
        the first is preferred, and its expected information gain is about ``0.5 log(1 + p (1
        - p) V)``: high for close items (``p`` near 0.5) whose order is uncertain (``V``
        large), low for a pair already compared often or of very different items. All
        ``n_items (n_items - 1) / 2`` pairs are scored.

        Parameters
        ----------
        k : int, default=1
            Number of pairs to return.

        Returns
        -------
        pairs : pandas DataFrame
            ``k`` rows, best first (ties by item order), columns ``left``, ``right`` (items)
            and ``gain`` (expected information gain, in nats).
        """
        check_is_fitted(self)
        cov = self._covariance()
        i, j = np.triu_indices(len(cov), 1)
        variance = cov[i, i] + cov[j, j] - 2 * cov[i, j]
        s = self.scores_.to_numpy()
        p = expit(s[i] - s[j])
        gain = 0.5 * np.log1p(p * (1 - p) * variance)
        best = np.argsort(-gain, kind="stable")[:k]
        items = self.scores_.index
        return _pandas().DataFrame({"left": items[i[best]], "right": items[j[best]],
                                    "gain": gain[best]})


_PRIOR_DOC = """prior_strength : float, default=1.0
        Precision of the Gaussian prior ``N(0, 1 / prior_strength)`` on the log-scores: the
        MAP estimate keeps every score finite (an undefeated item, an item outside the largest
        connected group); smaller is closer to the maximum likelihood. The default was the
        best of 0.01-1 on simulated crowds (``benchmarks/pairwise.py``)."""
_FIT_DOC = """max_iter : int, default=500
        Maximum number of L-BFGS iterations.
    tol : float, default=1e-10
        Stop when the negative log-posterior per comparison changes by less (relatively)."""


class BradleyTerry(_PairwiseModel):
    """Bradley-Terry model of pairwise comparisons, with ties by Davidson's model.

    Item ``i`` has a log-score ``s_i`` and is preferred to ``j`` with probability
    ``exp(s_i) / (exp(s_i) + exp(s_j)) = sigmoid(s_i - s_j)`` (Bradley and Terry 1952), the
    same for every worker. With ``tie_label``, rows labelled so are ties, by Davidson's (1970)
    model: ``P(i > j), P(i = j), P(j > i)`` are proportional to ``exp(s_i)``, ``nu exp((s_i +
    s_j) / 2)`` and ``exp(s_j)``, with ``nu`` fitted (``tie_strength_``).

    The log-scores are the maximum a posteriori estimate under a Gaussian prior (L-BFGS on
    the log-likelihood in log space): the maximum likelihood of Hunter's (2004) MM algorithm
    (crowd-kit's ``BradleyTerry``) diverges for an undefeated item and needs a strongly
    connected comparison graph; the prior keeps every score finite.

    Parameters
    ----------
    {prior}
    tie_label : hashable, default=None
        The label of a tie; None: no ties (every label is one of the two items).
    {fit}

    Attributes
    ----------
    scores_ : pandas Series
        Log-score of each item (indexed by item id, sorted), higher = preferred.
    tie_strength_ : float
        Davidson's ``nu`` (only with ``tie_label``).
    n_iter_ : int
        Number of L-BFGS iterations.
    log_posterior_ : float
        Log-likelihood plus log-prior (up to a constant) at the fitted scores.

    See Also
    --------
    NoisyBradleyTerry : With a skill and a bias per worker.
    CrowdBT : With a reliability per worker.

    References
    ----------
    R. A. Bradley and M. E. Terry. "Rank analysis of incomplete block designs. I. The method of
    paired comparisons". Biometrika 39 (1952): 324-345.

    R. R. Davidson. "On extending the Bradley-Terry model to accommodate ties in paired
    comparison experiments". JASA 65 (1970): 317-328.

    D. R. Hunter. "MM algorithms for generalized Bradley-Terry models". Annals of Statistics
    32 (2004): 384-406.

    Examples
    --------
    >>> import pandas as pd
    >>> from skcrowd.pairwise import BradleyTerry
    >>> X = pd.DataFrame({{"left": ["a", "a", "b", "a"], "right": ["b", "c", "c", "b"],
    ...                   "label": ["a", "a", "b", "a"]}})
    >>> bt = BradleyTerry().fit(X)
    >>> bt.scores_.round(2).to_dict()
    {{'a': 0.77, 'b': -0.17, 'c': -0.6}}
    >>> bt.predict(pd.DataFrame({{"left": ["c"], "right": ["a"]}}))
    array(['a'], dtype=object)
    >>> bt.predict_proba(pd.DataFrame({{"left": ["c"], "right": ["a"]}})).round(3)
    array([0.203])
    >>> bt.score_intervals(alpha=0.05).round(2)  # doctest: +NORMALIZE_WHITESPACE
          score  lower  upper
    item
    a      0.77  -0.42   1.95
    b     -0.17  -1.31   0.98
    c     -0.60  -1.86   0.67
    """

    _parameter_constraints: dict = {**_PairwiseModel._parameter_constraints,
                                    "tie_label": "no_validation"}

    def __init__(self, *, prior_strength=1.0, tie_label=None, max_iter=500, tol=1e-10):
        self.prior_strength = prior_strength
        self.tie_label = tie_label
        self.max_iter = max_iter
        self.tol = tol

    def _n_global(self):
        return 0 if self.tie_label is None else 1

    def _start(self, data):
        return np.zeros(len(data.items) + self._n_global())

    def _row_loglik(self, d, outcome, w, g):
        e = np.where(outcome == _RIGHT, -d, d)
        if not len(g):  # plain Bradley-Terry: log sigmoid(e)
            no_params = np.zeros((len(d), 0))
            return log_expit(e), np.where(outcome == _RIGHT, -1, 1) * expit(-e), w, no_params
        # Davidson: terms (win, tie, loss) = (e/2, log nu, -e/2) for the row's answer side
        log_nu = g[0]
        terms = np.stack([e / 2, np.full_like(e, log_nu), -e / 2])
        norm_ = logsumexp(terms, axis=0)
        soft = np.exp(terms - norm_)
        tie = outcome == _TIE
        ll = np.where(tie, log_nu, e / 2) - norm_
        # d ll / d e: win 1/2 - (soft0 - soft2)/2; tie (on d): -(soft0 - soft2)/2
        slope = np.where(tie, 0.0, 0.5) - 0.5 * (soft[0] - soft[2])
        d_d = np.where(outcome == _RIGHT, -slope, slope)
        d_g = (tie.astype(float) - soft[1])[:, None]
        return ll, d_d, w, d_g

    def _worker_attributes(self, w, g, workers):
        return {"tie_strength_": float(np.exp(g[0]))} if len(g) else {}

    def predict(self, X):
        items = super().predict(X)
        if self.tie_label is None:
            return items
        cols, d = self._pair_d(X)
        log_nu = self._global_params[0]
        # a tie is likeliest where log nu > |d| / 2
        return np.where(log_nu > np.abs(d) / 2, self.tie_label, items).astype(object)

    predict.__doc__ = _PairwiseModel.predict.__doc__


BradleyTerry.__doc__ = BradleyTerry.__doc__.format(prior=_PRIOR_DOC, fit=_FIT_DOC)


def _mixture(log_a, log_b):
    """``log(exp(log_a) + exp(log_b))`` and the share of the first term."""
    return np.logaddexp(log_a, log_b), expit(log_a - log_b)


class NoisyBradleyTerry(_PairwiseModel):
    """Bradley-Terry model with a skill and a bias per worker (crowd-kit's noisy model).

    Worker ``k`` answers by the Bradley-Terry model with probability ``skill_k = sigmoid(g_k)``
    and otherwise picks ``left`` with probability ``bias_k = sigmoid(q_k)``, whatever the
    items::

        P(left | k) = skill_k sigmoid(s_left - s_right) + (1 - skill_k) bias_k.

    This is the model of crowd-kit's ``NoisyBradleyTerry``, fitted here by L-BFGS on a
    log-likelihood written with log-sigmoids and ``logaddexp`` (crowd-kit multiplies
    probabilities, which overflows and underflows for large log-scores), with Gaussian priors
    (on the log-scores, and ``N(0, 1 / worker_prior_strength)`` on ``g_k`` and ``q_k``) in
    place of crowd-kit's pseudo-item, and a deterministic start (crowd-kit's is random).

    Parameters
    ----------
    {prior}
    worker_prior_strength : float, default=0.1
        Precision of the Gaussian priors on the logits of each worker's skill and bias (0.1
        did better than 1 on simulated crowds with spammers and adversaries).
    {fit}

    Attributes
    ----------
    scores_ : pandas Series
        Log-score of each item (indexed by item id, sorted), higher = preferred.
    skills_ : pandas Series
        Probability that each worker answers by the scores (indexed by worker).
    biases_ : pandas Series
        Probability that each worker, answering at random, picks ``left``.
    n_iter_ : int
        Number of L-BFGS iterations.
    log_posterior_ : float
        Log-likelihood plus log-prior (up to a constant) at the fitted values.

    See Also
    --------
    BradleyTerry : Every worker answers by the scores.
    CrowdBT : A worker may answer the opposite of the scores.

    References
    ----------
    D. Ustalov, N. Pavlichenko and B. Tseitlin. "Learning from crowds with Crowd-Kit".
    Journal of Open Source Software 9 (2024): 6227.

    Examples
    --------
    >>> import pandas as pd
    >>> from skcrowd.pairwise import NoisyBradleyTerry
    >>> pairs = [("a", "b"), ("c", "b"), ("b", "c"), ("c", "a")] * 2
    >>> rank = {{"a": 2, "b": 1, "c": 0}}
    >>> rows = [(w, l, r, l if w == "lefty" or rank[l] > rank[r] else r)
    ...         for w in ("u", "v", "lefty") for l, r in pairs]  # lefty always picks left
    >>> X = pd.DataFrame(rows, columns=["worker", "left", "right", "label"])
    >>> model = NoisyBradleyTerry().fit(X)
    >>> model.scores_.round(2).to_dict()
    {{'a': 1.24, 'b': 0.21, 'c': -1.45}}
    >>> model.biases_.round(2).to_dict()
    {{'lefty': 0.96, 'u': 0.53, 'v': 0.53}}
    >>> model.skills_.round(2).to_dict()
    {{'lefty': 0.06, 'u': 0.92, 'v': 0.92}}
    """

    _N_WORKER = 2
    _parameter_constraints: dict = {
        **_PairwiseModel._parameter_constraints,
        "worker_prior_strength": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, *, prior_strength=1.0, worker_prior_strength=0.1, max_iter=500,
                 tol=1e-10):
        self.prior_strength = prior_strength
        self.worker_prior_strength = worker_prior_strength
        self.max_iter = max_iter
        self.tol = tol

    def _start(self, data):
        return np.zeros(len(data.items) + 2 * len(data.workers))

    def _row_loglik(self, d, outcome, w, g):
        sign = np.where(outcome == _RIGHT, -1.0, 1.0)
        e, skill, side = sign * d, w[:, 0], sign * w[:, 1]
        ll, truthful = _mixture(log_expit(skill) + log_expit(e),
                                log_expit(-skill) + log_expit(side))
        d_w = np.stack([truthful - expit(skill), (1 - truthful) * expit(-side) * sign], axis=1)
        return ll, truthful * expit(-e) * sign, d_w, np.zeros((len(d), 0))

    def _log_prior(self, s, w, g):
        value, p_s, _, p_g = super()._log_prior(s, w, g)
        lam = self.worker_prior_strength
        return value - 0.5 * lam * float(np.sum(w * w)), p_s, -lam * w, p_g

    def _worker_attributes(self, w, g, workers):
        pd = _pandas()
        return {"skills_": pd.Series(expit(w[:, 0]), index=workers, name="skill"),
                "biases_": pd.Series(expit(w[:, 1]), index=workers, name="bias")}


class CrowdBT(_PairwiseModel):
    """Crowd-BT: Bradley-Terry with a reliability per worker (Chen et al. 2013).

    Worker ``k`` tells the truth with probability ``eta_k`` and answers the opposite
    otherwise::

        P(left | k) = eta_k sigmoid(s_left - s_right) + (1 - eta_k) sigmoid(s_right - s_left).

    A reliable worker (``eta`` near 1) counts as in :class:`BradleyTerry`, a random one
    (``eta = 0.5``) not at all, an adversary (``eta < 0.5``) reversed. The log-scores and the
    reliabilities are fitted jointly (maximum a posteriori by L-BFGS, in log space), with a
    Gaussian prior on the log-scores and ``reliability_prior = (a, b)`` pseudo-answers per
    worker, ``a`` truthful and ``b`` not (``a log eta + b log(1 - eta)``): the prior breaks the
    symmetry of the model (reversing every score and every reliability gives the same
    likelihood) towards workers that mostly tell the truth. Chen et al. update the same model
    online, one comparison at a time; here it is fitted to all comparisons at once.

    Parameters
    ----------
    {prior}
    reliability_prior : tuple of two floats, default=(4.0, 1.0)
        Pseudo-counts ``(a, b)`` of truthful and false answers of every worker.
    {fit}

    Attributes
    ----------
    scores_ : pandas Series
        Log-score of each item (indexed by item id, sorted), higher = preferred.
    reliabilities_ : pandas Series
        Probability ``eta`` that each worker tells the truth (indexed by worker).
    n_iter_ : int
        Number of L-BFGS iterations.
    log_posterior_ : float
        Log-likelihood plus log-prior (up to a constant) at the fitted values.

    See Also
    --------
    BradleyTerry : Every worker answers by the scores.
    NoisyBradleyTerry : A worker may answer at random, with a bias towards one side.

    References
    ----------
    X. Chen, P. N. Bennett, K. Collins-Thompson and E. Horvitz. "Pairwise ranking aggregation
    in a crowdsourced setting". WSDM 2013: 193-202.

    Examples
    --------
    >>> import pandas as pd
    >>> from skcrowd.pairwise import CrowdBT
    >>> pairs = [("a", "b"), ("b", "c"), ("a", "c")] * 3
    >>> rows = [(w, l, r, l if w != "adversary" else r) for w in ("u", "v", "adversary")
    ...         for l, r in pairs]
    >>> X = pd.DataFrame(rows, columns=["worker", "left", "right", "label"])
    >>> model = CrowdBT().fit(X)
    >>> list(model.scores_.sort_values(ascending=False).index)
    ['a', 'b', 'c']
    >>> bool(model.reliabilities_["adversary"] < 0.5 < model.reliabilities_["u"])
    True
    """

    _N_WORKER = 1
    _parameter_constraints: dict = {**_PairwiseModel._parameter_constraints,
                                    "reliability_prior": [tuple]}

    def __init__(self, *, prior_strength=1.0, reliability_prior=(4.0, 1.0), max_iter=500,
                 tol=1e-10):
        self.prior_strength = prior_strength
        self.reliability_prior = reliability_prior
        self.max_iter = max_iter
        self.tol = tol

    def _start(self, data):
        a, b = self._pseudo_counts()
        start = np.zeros(len(data.items) + len(data.workers))
        start[len(data.items):] = np.log(a / b)  # the prior's mode
        return start

    def _pseudo_counts(self):
        prior = self.reliability_prior
        if len(prior) != 2 or not all(isinstance(c, numbers.Real) and c > 0 for c in prior):
            raise ValueError("reliability_prior must be two positive pseudo-counts (a, b), got "
                             f"{prior!r}.")
        return float(prior[0]), float(prior[1])

    def _row_loglik(self, d, outcome, w, g):
        sign = np.where(outcome == _RIGHT, -1.0, 1.0)
        e, eta = sign * d, w[:, 0]
        ll, truthful = _mixture(log_expit(eta) + log_expit(e), log_expit(-eta) + log_expit(-e))
        d_e = truthful * expit(-e) - (1 - truthful) * expit(e)
        return ll, d_e * sign, (truthful - expit(eta))[:, None], np.zeros((len(d), 0))

    def _log_prior(self, s, w, g):
        value, p_s, _, p_g = super()._log_prior(s, w, g)
        a, b = self._pseudo_counts()
        value += float(np.sum(a * log_expit(w) + b * log_expit(-w)))
        return value, p_s, a * expit(-w) - b * expit(w), p_g

    def _worker_attributes(self, w, g, workers):
        return {"reliabilities_": _pandas().Series(expit(w[:, 0]), index=workers,
                                                   name="reliability")}


NoisyBradleyTerry.__doc__ = NoisyBradleyTerry.__doc__.format(prior=_PRIOR_DOC, fit=_FIT_DOC)
CrowdBT.__doc__ = CrowdBT.__doc__.format(prior=_PRIOR_DOC, fit=_FIT_DOC)


def select_next_pairs(X, k=1, *, model=None):
    """The ``k`` pairs of items to compare next, with their expected information gains.

    Fits ``model`` on the comparisons so far and returns its
    :meth:`~BradleyTerry.next_pairs`: the pairs whose comparison by a reliable worker is
    expected to teach the model most (close items whose order is uncertain), as
    :func:`~skcrowd.consensus.select_next_votes` does for votes.

    Parameters
    ----------
    X : pandas DataFrame
        The comparisons so far (columns ``worker`` (optional), ``left``, ``right``,
        ``label``). Only items seen in them are candidates.
    k : int, default=1
        Number of pairs to return.
    model : BradleyTerry, NoisyBradleyTerry or CrowdBT, default=None
        The model to fit (cloned). None: ``BradleyTerry()``.

    Returns
    -------
    pairs : pandas DataFrame
        ``k`` rows, best first, columns ``left``, ``right`` and ``gain``.

    Examples
    --------
    >>> import pandas as pd
    >>> from skcrowd.pairwise import select_next_pairs
    >>> X = pd.DataFrame({"left": ["a", "a", "a", "b"], "right": ["b", "b", "c", "d"],
    ...                   "label": ["a", "a", "a", "d"]})
    >>> select_next_pairs(X, 2)[["left", "right"]].to_numpy().tolist()
    [['c', 'd'], ['a', 'd']]
    """
    model = BradleyTerry() if model is None else clone(model)
    if not isinstance(model, _PairwiseModel):
        raise TypeError(f"model must be a pairwise model (BradleyTerry, NoisyBradleyTerry, "
                        f"CrowdBT), got {type(model).__name__}.")
    return model.fit(X).next_pairs(k)
