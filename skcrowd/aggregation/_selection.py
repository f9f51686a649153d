"""Choosing an aggregator without gold labels: the likelihood of held-out votes."""

from __future__ import annotations

import numbers
import time
import warnings
from contextlib import contextmanager

import numpy as np
from sklearn.base import _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Integral, Interval, Real
from sklearn.utils.validation import check_is_fitted

from .._holdout import _subset, held_out_votes
from ..base import _as_it_was_on_error
from ._base import BaseAggregator
from ._bayesian_dawid_skene import BayesianDawidSkene
from ._dawid_skene import DawidSkene
from ._ebcc import EBCC
from ._em import BaseEM
from ._glad import GLAD
from ._mace import MACE
from ._majority import MajorityVote
from ._one_coin import OneCoinDawidSkene


class AggregatorSelector(BaseAggregator):
    """The aggregator that best predicts held-out votes, chosen without gold labels.

    Each of ``n_splits`` times, a share ``test_size`` of each task's votes is
    held out (at random; a task keeps at least one vote), every candidate is
    fitted on the other votes and scored by the mean log-probability of the
    held-out votes given the other votes of their tasks, through the
    candidate's own worker model::

        log sum_k p(k | the task's other votes) p(held-out vote | k, worker)

    (for majority vote: the vote frequencies and one accuracy for every
    worker, see :class:`MajorityVote`). The candidate with the best mean score
    is refitted on all the votes (``best_estimator_``), and ``predict``,
    ``predict_proba`` and ``transform`` are its own.

    A plain log-loss of the predicted soft labels against the held-out votes
    would reward under-confident models (noisy votes look like uncertainty);
    scoring each vote through the model's noise model does not (see
    :ref:`choosing-without-gold`). To tune one model's parameters with
    :class:`~sklearn.model_selection.GridSearchCV`, use
    :func:`skcrowd.metrics.held_out_vote_scorer`.

    Parameters
    ----------
    candidates : list of aggregators, default=None
        Unfitted aggregators to choose from; each must be able to score
        held-out votes (MajorityVote, DawidSkene, WeightedDawidSkene, GLAD,
        OneCoinDawidSkene, MACE, BayesianDawidSkene, EBCC; otherwise a
        TypeError names it). Default: one model per regime, with its default
        parameters: MajorityVote, DawidSkene, GLAD, OneCoinDawidSkene, MACE,
        BayesianDawidSkene and EBCC, every aggregator that can but
        WeightedDawidSkene (its soft labels are not the posteriors of its
        worker model, and hedged soft labels score well whatever their
        accuracy). The list is fixed: a model added to skcrowd later does not
        change what the default selector chooses. Ties keep the first.
    test_size : float, default=0.2
        Expected share of each task's votes held out (each task's number is
        rounded up or down at random so that the share is right on average).
    n_splits : int, default=3
        Number of random hold-outs; the scores are averaged.
    random_state : int, RandomState instance or None, default=None
        Seed of the hold-outs, and of the candidates whose own
        ``random_state`` is None (one seed each, for their fits on the
        hold-outs and their refit): with an int, two fits give the same
        choice and labels.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``X``; the refitted candidate gets it too.
    n_classes : int, default=None
        Number of classes when some never appear in the votes (labels are
        then integers in ``range(n_classes)``).
    verbose : int, default=0
        1: print each candidate's score.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    best_estimator_ : aggregator
        The chosen candidate, refitted on all the votes.
    best_index_ : int
        Its index in the candidates.
    best_score_ : float
        Its mean held-out score (mean log-probability per held-out vote).
    cv_results_ : dict of ndarrays
        As :class:`~sklearn.model_selection.GridSearchCV`'s: ``"estimator"``
        (the candidates), ``"split<i>_test_score"``, ``"mean_test_score"``,
        ``"std_test_score"``, ``"rank_test_score"``, ``"mean_fit_time"``.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of shape (n_workers,)
        Worker names, when ``X`` is a DataFrame with string column names.

    See Also
    --------
    skcrowd.metrics.held_out_vote_scorer : The same score for GridSearchCV.

    Notes
    -----
    A candidate is fitted ``n_splits`` times on about ``1 - test_size`` of the
    votes and once more on all of them: the cost is about ``n_splits + 1``
    fits of every candidate. With the default candidates, on the 19 real
    crowds with gold of ``benchmarks/realdata.py`` (1,700 to 150,000
    votes), a fit took 2.0 to 5.6 times (median 3.3) the time of one fit of
    each of the seven candidates, and 68 to 640 times (median 166) one
    :class:`DawidSkene` fit: EBCC's five starts dominate. Held-out votes are
    scored on tasks that keep other votes, so tasks with a single vote never
    contribute one.

    The warnings of the candidates' fits (e.g. a ``ConvergenceWarning``) are
    re-issued once per candidate and message, with their category, naming
    the candidate and the fits the selector made of it (hold-out splits,
    refit): change its parameters in ``candidates``. The warning filters in
    force apply to the original warning: one ignored is not re-issued.

    On those 19 crowds its mean gold accuracy (0.839) was above every
    single model's (at most 0.832); it fell below majority vote on two,
    by 0.2 and 1.0 point (the second where it picks EBCC). The held-out
    likelihood ranks models by how well they predict *votes*, not labels,
    and fails where a model predicts
    the votes well with classes that do not match the gold: a group of
    workers that copies one wrong answer (the models that believe it win),
    or an EBCC fit whose subtypes absorb a class (simulated in
    ``benchmarks/selection_correlated.py``: 14 points below majority vote on
    two seeds of three). Check ``best_estimator_.class_priors_`` on a crowd
    with more than two classes.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import AggregatorSelector, DawidSkene, MajorityVote
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(2, size=200)
    >>> right = rng.random((200, 5)) < [0.9, 0.9, 0.55, 0.55, 0.55]  # two good workers
    >>> votes = np.where(right, truth[:, None], 1 - truth[:, None])
    >>> selector = AggregatorSelector([MajorityVote(), DawidSkene()], random_state=0)
    >>> type(selector.fit(votes).best_estimator_).__name__
    'DawidSkene'
    >>> selector.cv_results_["mean_test_score"].round(3)
    array([-0.685, -0.614])
    >>> float(np.mean(selector.predict(votes) == truth))
    0.905
    """

    _parameter_constraints: dict = {
        "candidates": [list, None],
        "test_size": [Interval(Real, 0.0, 1.0, closed="neither")],
        "n_splits": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "missing_label": [numbers.Real, str, None],
        "n_classes": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    def __init__(self, candidates=None, *, test_size=0.2, n_splits=3, random_state=None,
                 missing_label=-1, n_classes=None, verbose=0):
        self.candidates = candidates
        self.test_size = test_size
        self.n_splits = n_splits
        self.random_state = random_state
        self.missing_label = missing_label
        self.n_classes = n_classes
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Score every candidate on held-out votes and refit the best on all the votes.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes: entry ``(i, j)`` is the label worker ``j`` gave task ``i``,
            or ``missing_label``. Sparse input: stored entries are votes.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted selector.
        """
        with _as_it_was_on_error(self):
            candidates = _default_candidates() if self.candidates is None else self.candidates
            if not candidates:
                raise ValueError("candidates is empty: give at least one aggregator.")
            for candidate in candidates:
                if not _scores_held_out_votes(candidate):
                    raise TypeError(
                        f"candidate {candidate!r} cannot score held-out votes (its class does not "
                        "implement _vote_log_likelihood, or _vote_log_proba for an EM model; see "
                        "'Adding a model' in skcrowd's contributor guide): remove it from "
                        "candidates, or leave candidates=None for the default ones: "
                        + ", ".join(type(c).__name__ for c in _default_candidates()) + "."
                    )
            votes = self._validate_votes(X, reset=True)
            random_state = check_random_state(self.random_state)
            given = candidates
            # a candidate with random starts and random_state=None gets one seed from the
            # selector's random_state, the same for its fits on the splits and its refit
            candidates = [_seeded(c, random_state) for c in candidates]
            caught = {}  # warnings of the candidates' fits, re-issued naming the candidate
            scores = np.full((len(candidates), self.n_splits), np.nan)
            fit_time = np.zeros(len(candidates))
            per_task = votes.votes_per_task()
            if not np.any(per_task > 1):
                warnings.warn(
                    "No task has two votes: no vote can be held out, so the candidates cannot be "
                    f"compared; keeping the first, {candidates[0]!r}.", UserWarning, stacklevel=2)
            for split in range(self.n_splits if np.any(per_task > 1) else 0):
                _, log_proba = self._held_out_log_proba(votes, candidates, random_state, fit_time,
                                                        caught, split)
                scores[:, split] = [np.mean(row) for row in log_proba]
            mean = scores.mean(axis=1)  # NaN when no vote could be held out
            finite = np.where(np.isfinite(mean), mean, -np.inf)
            self.best_index_ = int(np.argmax(finite))
            self.best_score_ = float(mean[self.best_index_])
            rank = np.empty(len(candidates), dtype=np.int32)
            rank[np.argsort(-finite, kind="stable")] = np.arange(1, len(candidates) + 1)
            self.cv_results_ = {
                "estimator": np.array(list(candidates), dtype=object),
                **{f"split{i}_test_score": scores[:, i] for i in range(self.n_splits)},
                "mean_test_score": mean,
                "std_test_score": scores.std(axis=1),
                "rank_test_score": rank,
                "mean_fit_time": fit_time / self.n_splits,
            }
            if self.verbose:
                for candidate, score in zip(candidates, mean):
                    print(f"{candidate!r}: mean held-out log-probability per vote {score:.6g}")
            best = _with_params(candidates[self.best_index_], missing_label=self.missing_label,
                                n_classes=self.n_classes)
            with _recording(caught, self.best_index_, None):
                self.best_estimator_ = best.fit(X)
            _reissue(caught, given, self.n_splits)
            return self

    def _held_out_log_proba(self, votes, candidates, random_state, fit_time, caught=None,
                            split=0):
        """One hold-out: the task of each held-out vote, and the log-probability each candidate
        gives each held-out vote (array of shape ``(n_candidates, n_held_out)``), the candidates
        fitted on the other votes; adds their fit times to ``fit_time``. With ``caught`` (a
        dict), the candidates' warnings are recorded there for :func:`_reissue`, as of hold-out
        ``split``."""
        per_task = votes.votes_per_task()
        held = held_out_votes(votes, self.test_size, random_state)
        if not held.any():  # a small crowd: hold out a vote of the first task with two
            held[np.flatnonzero(np.repeat(per_task > 1, per_task))[0]] = True
        context, held_out = _subset(votes, ~held), _subset(votes, held)
        log_proba = np.empty((len(candidates), held_out.n_votes))
        for c, candidate in enumerate(candidates):
            with _recording(caught, c, split):
                start = time.perf_counter()
                model = _with_params(candidate, n_classes=votes.n_classes)
                model.fit(context.to_sparse())
                fit_time[c] += time.perf_counter() - start
                log_proba[c] = model._vote_log_likelihood(context, held_out.task,
                                                          held_out.worker, held_out.label)
        return held_out.task, log_proba

    def predict_proba(self, X):
        """Soft labels of the chosen aggregator (``best_estimator_.predict_proba``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes, with the fitted workers as columns.

        Returns
        -------
        proba : ndarray of shape (n_tasks, n_classes) or pandas DataFrame
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    def predict(self, X):
        """Labels of the chosen aggregator (``best_estimator_.predict``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes, with the fitted workers as columns.

        Returns
        -------
        labels : ndarray of shape (n_tasks,) or pandas Series
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)


@contextmanager
def _recording(caught, index, split):
    """Record the warnings of candidate ``index``'s fit on hold-out ``split`` (None: the refit
    on all the votes) into ``caught``, keyed by candidate, category and message (nothing to
    do when ``caught`` is None). The filters in force apply: an ignored warning is not
    recorded, one turned into an error raises."""
    if caught is None:
        yield
        return
    with warnings.catch_warnings(record=True) as records:
        yield
    for record in records:
        caught.setdefault((index, record.category, str(record.message)), []).append(split)


def _reissue(caught, candidates, n_splits):
    """Re-issue the recorded warnings of the candidates, once per candidate and message, with
    the same category, saying which candidate warned and that the selector fitted it."""
    for (index, category, message), splits in caught.items():
        candidate = candidates[index]
        held = [str(s + 1) for s in sorted({s for s in splits if s is not None})]
        fits = []
        if held:
            listed = held[0] if len(held) == 1 else f"{', '.join(held[:-1])} and {held[-1]}"
            fits.append(f"fitted on hold-out split{'s' if len(held) > 1 else ''} {listed} of "
                        f"{n_splits}")
        if None in splits:
            fits.append("refitted on all the votes as best_estimator_")
        change = ("max_iter=..." if issubclass(category, ConvergenceWarning)
                  and "max_iter" in candidate.get_params() else "...")
        warnings.warn(
            f"AggregatorSelector: candidate {candidate!r} (candidates[{index}]), which the "
            f"selector {' and '.join(fits)}: {message} To change its parameters, pass it with "
            f"them in candidates=, e.g. {type(candidate).__name__}({change}).",
            category, stacklevel=4)  # the caller of fit (through _fit_context)


def _seeded(estimator, random_state):
    """``estimator``, or a clone of it with a seed drawn from ``random_state`` when it has a
    ``random_state`` parameter left at None."""
    if estimator.get_params().get("random_state", 0) is not None:
        return estimator
    return clone(estimator).set_params(random_state=random_state.randint(np.iinfo(np.int32).max))


def _with_params(estimator, **params):
    """An unfitted clone of ``estimator`` with those of ``params`` it takes."""
    model = clone(estimator)
    return model.set_params(**{k: v for k, v in params.items() if k in model.get_params()})


def _scores_held_out_votes(estimator):
    """Whether ``estimator`` implements the held-out vote hook (see ``BaseEM``'s Notes)."""
    cls = type(estimator)
    if not isinstance(estimator, BaseAggregator):
        return False
    if isinstance(estimator, BaseEM) and cls._vote_log_likelihood is BaseEM._vote_log_likelihood:
        return cls._vote_log_proba is not BaseEM._vote_log_proba
    return cls._vote_log_likelihood is not BaseAggregator._vote_log_likelihood


def _default_candidates():
    """The default candidates, with their defaults: one model per regime (majority vote,
    confusion matrices, worker abilities and task difficulties, one accuracy per worker,
    spammers, a learned prior, correlated workers). Every aggregator that scores held-out
    votes is one (``tests/aggregation/test_selection.py`` checks the list against
    :func:`skcrowd.utils.discovery.all_estimators`), but WeightedDawidSkene: its soft labels
    are not the posteriors of its worker model (Dawid-Skene's), and hedged soft labels score
    well on held-out votes whatever the labels' accuracy (on
    zheng_s4_Face_Sentiment_Identification it would win with labels two points worse than
    Dawid-Skene's). A new model joins by hand: adding a model to the package never changes
    what a default selector chooses on the same votes."""
    return [MajorityVote(), DawidSkene(), GLAD(), OneCoinDawidSkene(), MACE(),
            BayesianDawidSkene(), EBCC()]
