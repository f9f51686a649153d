"""Batches of votes: ``partial_fit`` of the EM aggregators, from a window of recent votes and
accumulated statistics.

A Dawid-Skene-like model's M-step reads its E-step's statistics only through sums over the
tasks (expected confusion counts of each worker, expected class counts): statistics of
disjoint sets of tasks add up. :class:`OnlineEMMixin` keeps the votes of the latest batches
(``window`` votes per known worker; :class:`_Window`) and, for the batches that have left
them, these sums (one row per worker, no vote and no task). Each batch runs EM on the window's
votes, every M-step seeing ``carried + sum_b weight_b * statistics of batch b``: ``carried``
the sums of the batches gone, and each batch's weight (carried or in the window) its
forgetting since it arrived, ``0.5 ** (later votes / (half_life * workers))``. When the window
overflows, its oldest batches leave it: their statistics under the model at that point (one
E-step) join ``carried``, times their weight. While the window holds the whole stream this is
EM on every vote (a fit, weighted by the forgetting); the folded batches' posteriors are those
of the batch that pushed them out, as in the incremental EM of Neal & Hinton (1998) with each
task's posterior frozen once it leaves; with a ``half_life`` it forgets at a rate per vote per
worker, whatever the size of the batches (stepwise EM with constant step sizes per vote,
Cappe & Moulines 2009). A model whose statistics are not such sums joins the carried ones to
the window's its own way (``_with_carried``: GLAD moves the carried gradient of its abilities
along their curvature).

Workers are identified by name (the string column names of a DataFrame batch) and grow between
batches; batches without names are positional and keep the first batch's width.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.base import _fit_context, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, Real
from sklearn.utils.validation import _get_feature_names, validate_data

from ..backends import MemoryVotes
from ..backends._blocks import StatisticsSum
from ..backends._dispatch import is_long_format
from ..base import _as_it_was_on_error
from ..votes import check_not_long_format, check_votes, refuse_soft_votes
from ._base import _is_pandas_frame
from ._em import BaseEM, _initial_block, _merge, field_axes
from .kernels import fit_engine

#: The parameters of the models with ``partial_fit``: ``half_life``, the number of votes per
#: worker after which a batch's statistics weigh half (None: never forgotten); ``window``, the
#: votes per known worker kept and re-read at every batch (None or 0: none)
ONLINE_CONSTRAINTS = {"half_life": [Interval(Real, 0.0, None, closed="neither"), None],
                      "window": [Interval(Real, 0.0, None, closed="left"), None]}


class OnlineEMMixin:
    """``partial_fit`` of an EM aggregator whose statistics add up over tasks.

    The model's ``_Statistics`` must have per-worker and shared fields that are sums over
    tasks (per-task fields stay with their batch), or the model overrides ``_with_carried``;
    its ``_m_step`` must read the previous parameters only for their shared entries and as a
    starting point (a new worker's rows start as the mean row of the known workers). The model
    stores ``half_life`` (see :data:`HALF_LIFE_CONSTRAINT`) and has :class:`PriorFromMixin`'s
    ``prior_from`` (an earlier fit is the prior of every batch).
    """

    # whether a data-chosen prior (see BaseEM._prior_settled) is re-chosen at every batch from
    # the window's votes once batches have been folded, rather than kept (see
    # _partial_fit_source): GLAD's is (real crowds in 10 batches, window=50: mean gap to the
    # refit -0.04 point against -2.61 kept; Duck -41.7 kept, in the swapped basin);
    # DawidSkene's "auto" is not (-0.27 against -0.25 kept, and its leave-one-out evidence
    # over the window made a batch of the 1e7-vote stream 3.7 times slower)
    _prior_per_window = False

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, classes=None):
        """Update the model with a batch of votes.

        The model keeps the votes of the most recent batches, at most
        ``window`` votes per known worker on average (a batch that overflows
        the window pushes the oldest ones out), and each batch runs EM (at
        most ``max_iter`` iterations, to ``tol``) on the window's votes, the
        new batch's and the kept ones, re-read at every iteration, every
        M-step counting too the statistics of the batches that have left the
        window: their expected per-worker counts under the model of the batch
        that pushed them out, one E-step, stored as sums, one row per worker.
        Every batch's statistics, in the window or carried, weigh
        ``0.5 ** (n / (half_life * n_workers))`` after ``n`` later votes
        from ``n_workers`` known workers. The first batch is a ``fit`` (same
        parameters, same iterations); while the window holds every vote so
        far and nothing is forgotten (``half_life=None``), every batch is a
        ``fit`` of the stream's votes. ``window=None`` (or 0) keeps no votes:
        each batch runs on its own tasks, whose posteriors are frozen at the
        end of their batch. New workers, new tasks and more votes on earlier
        tasks may arrive in any batch: a task's votes in two batches count as
        two tasks. Re-read the labels of earlier tasks with :meth:`predict`
        on their votes. See :ref:`online`.

        Parameters
        ----------
        X : array-like, sparse matrix or pandas DataFrame of shape (n_tasks, n_workers)
            A batch of votes. A DataFrame with string column names (worker
            ids) may bring new workers and omit others; workers are matched
            by name, and ``feature_names_in_`` grows with the new ones (pass
            :meth:`predict` a DataFrame with these columns, ``missing_label``
            where a worker did not vote). Without names, every batch must
            have the columns of the first.
        y : array-like of shape (n_tasks,), default=None
            Known labels of control tasks of the batch, as in :meth:`fit`.
        classes : array-like of shape (n_classes,), default=None
            Every class of the stream, on the first call (later calls may
            repeat them). Without it, the first batch's labels (or
            ``range(n_classes)``) are the classes, and a later batch with
            another label raises a ValueError naming it and its row.

        Returns
        -------
        self : object
            The updated aggregator. ``lower_bound_``, ``lower_bounds_``,
            ``n_iter_`` and ``converged_`` are those of the last batch: its
            objective per task (the log-likelihood of its votes plus the
            parameters' term under the statistics of every batch so far).

        Examples
        --------
        >>> import numpy as np
        >>> from skcrowd.aggregation import DawidSkene
        >>> from skcrowd.datasets import simulate_annotators
        >>> y = np.random.default_rng(0).integers(3, size=3000)
        >>> votes = simulate_annotators(y, 30, accuracy=(0.5, 0.9), votes_per_task=3,
        ...                             random_state=0).votes
        >>> ds = DawidSkene()
        >>> for batch in np.array_split(votes, 10):  # ten batches in task order
        ...     ds = ds.partial_fit(batch)
        >>> ds.n_batches_, ds.confusion_matrices_.shape  # one row per worker, no votes
        (10, (30, 3, 3))
        >>> print(round(np.mean(ds.predict(votes) == y), 3),  # the earlier tasks re-read
        ...       round(np.mean(DawidSkene().fit_predict(votes) == y), 3))
        0.833 0.832

        A window smaller than the stream (here 60 votes per worker: two
        batches of 900 votes from 30 workers) folds the oldest batches into
        the sums:

        >>> small = DawidSkene(window=60)
        >>> for batch in np.array_split(votes, 10):
        ...     small = small.partial_fit(batch)
        >>> print(round(np.mean(small.predict(votes) == y), 3))
        0.834
        """
        with _as_it_was_on_error(self):
            first = not hasattr(self, "classes_")
            source = MemoryVotes(self._batch_votes(X, classes, first))
            source, priors = self._task_priors(source, X, y, None, reset=False)
            self._partial_fit_source(source, priors, first)
        return self

    def _batch_votes(self, X, classes, first):
        """A batch's votes with crowd-wide worker numbers; records ``classes_`` and the
        workers (``n_features_in_``, ``feature_names_in_``) at the first batch, adds the new
        named workers at later ones."""
        check_not_long_format(X, "X")
        refuse_soft_votes(X, "X", f"{type(self).__name__}.partial_fit")
        if is_long_format(X):
            raise ValueError(
                f"partial_fit takes a votes matrix (tasks x workers) per batch; X is a "
                f"{type(X).__name__} of long-format votes. Pivot each batch to a DataFrame "
                "with one column per worker, named by its id as a string.")
        names = _get_feature_names(X)
        earlier = getattr(self, "feature_names_in_", None)
        if not first and (names is None) != (earlier is None):
            raise ValueError(
                "X has no worker names (string column names of a DataFrame) but the earlier "
                "batches had; workers are matched by name, so give every batch of a stream "
                "named columns, or none." if names is None else
                "X has worker names (string column names of a DataFrame) but the earlier "
                "batches had none; give every batch of a stream named columns, or none.")
        # a named batch may have other workers than the earlier ones: checked by name below
        checked = validate_data(self, np.ma.getdata(X) if isinstance(X, np.ma.MaskedArray)
                                else X, reset=first or names is not None, dtype=None,
                                accept_sparse=True, ensure_all_finite=False)
        raw = X if isinstance(X, np.ma.MaskedArray) or _is_pandas_frame(X) else checked
        if first:
            if classes is not None:
                classes = np.unique(np.asarray(classes))
            votes = check_votes(raw, missing_label=self.missing_label, classes=classes,
                                n_classes=self.n_classes, name="X")
            self.classes_ = votes.classes
            return votes
        if classes is not None and not np.array_equal(np.unique(np.asarray(classes)),
                                                      self.classes_):
            raise ValueError(f"classes={np.asarray(classes).tolist()!r} differ from the "
                             f"classes of the first batch {self.classes_.tolist()!r}.")
        votes = check_votes(raw, missing_label=self.missing_label, classes=self.classes_,
                            name="X")
        if names is None:
            return votes
        known = {name: j for j, name in enumerate(earlier)}
        for name in names:
            known.setdefault(name, len(known))
        self.feature_names_in_ = np.asarray(list(known), dtype=object)
        self.n_features_in_ = len(known)
        column = np.fromiter((known[name] for name in names), dtype=np.int64, count=len(names))
        return type(votes)(task=votes.task, worker=column[votes.worker], label=votes.label,
                           n_tasks=votes.n_tasks, n_workers=len(known), classes=votes.classes)

    def _partial_fit_source(self, source, priors, first):
        """EM on the window (the kept batches and this one) against the carried statistics of
        the batches that left it; the oldest batches leave the window when it overflows."""
        model = clone(self)  # what the blocks need: the parameters, not the fitted attributes
        n_workers = source.n_workers
        carried = None if first else getattr(self, "_carried_statistics", None)
        decay = _decay(source.n_votes / n_workers, self.half_life)
        if carried is not None:
            carried = _scaled_rows(carried, decay, n_workers, field_axes(self._Statistics))
        # the stream's history: none at the first batch and after a fit (which keeps no votes)
        history = None if first else getattr(self, "_window", None)
        history = (history or _Window(whole=first)).add(source.block.votes, priors, decay)
        window = history.source(n_workers)
        # a model whose M-step chooses its prior from the data chooses it as a fit does while
        # the window holds the whole stream; then it keeps the prior of the last such batch
        # (or of a fit), unless it re-chooses it at every batch from the window's votes and
        # the sums (_prior_per_window). A prior re-fitted at every M-step starts each batch
        # afresh, as in a fit: started from the last batch's, a pooled prior
        # (BayesianDawidSkene's concentration at 1e5) stayed where a poor first batch put it
        # (act_CF, 10 batches: 0.78 against 0.90)
        self._carry_earlier(window)
        try:
            params = (None if history.whole or (self.window and self._prior_per_window)
                      or type(self)._prior_settled is BaseEM._prior_settled
                      else _grown_rows(self._fitted_parameters(), n_workers,
                                       field_axes(self._Parameters)))
            # the seed of a fit; each task's random numbers follow from it and the task's
            # number in the stream (see _TaskDraws), as in a fit of the stream's votes
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            # ENGINE="auto": the engine of a fit of the window's votes
            with fit_engine(window.n_votes, numpy_while_cold=self._numpy_while_cold):
                # from the window's vote shares, as a fit: a start from the model so far (an
                # E-step under the carried counts) lost 2.3 points (one-coin; 30 on Duck) and
                # 0.5 (BayesianDawidSkene) on average over the real crowds in 10 batches
                stats = window.map_reduce(_initial_block, (), (model, seed, window.priors, None),
                                          stateful=True, with_tasks=True)
                end, stats = self._iterate(window, model, stats, params, -np.inf,
                                           window.priors, carried=carried)
                params = end[1]
                history, folded = self._fold(history, window, model, stats, params)
        finally:
            self._drop_earlier()
        self.lower_bound_, _, self.n_iter_, self.lower_bounds_, self.converged_ = end
        self._warn_if_not_converged()
        if carried is not None:
            # the carried statistics are re-expressed at params (GLAD's quadratic moves to
            # the new abilities) even when no batch left the window
            carried = self._with_carried(carried, folded if folded is not None else _scaled_rows(
                carried, 0.0, n_workers, field_axes(self._Statistics)), params)
        self._set_fitted(params)
        self._carried_statistics = carried if carried is not None else folded
        self._window = history
        self.n_batches_ = getattr(self, "n_batches_", 0) + 1

    def _fold(self, history, window, model, stats, params):
        """``(history, folded)``: the history without the oldest batches that leave the window
        (so that at most ``window`` votes per worker stay), and their statistics under
        ``params``, each batch's scaled by its weight (None when none leaves). ``stats``: the
        window's last E-step, under ``params``."""
        n_leaving = history.n_leaving((self.window or 0) * window.n_workers)
        if not n_leaving:
            return history, None
        if n_leaving < len(history.batches):  # one E-step on the leaving batches' votes
            stats = self._run_e_step(window.first(n_leaving), model, params, window.priors)[0]
        return history.without(n_leaving), _merge(self, stats)

    def _with_carried(self, carried, stats, params):
        """The statistics of an M-step under ``params``: the batch's ``stats`` plus the
        ``carried`` ones of the earlier batches (field by field; per-task fields None; a field
        whose shape differs, the evidence table of DawidSkene's "auto" prior while it is
        chosen, is the batch's)."""
        return type(stats)(*(s if c is None or s is None or np.shape(c) != np.shape(s) else c + s
                             for c, s in zip(carried, stats)))

    def fit_predict(self, X, y=None, *, task_prior=None):
        labels = super().fit_predict(X, y, task_prior=task_prior)
        # a fit is a model of its own: the statistics and votes of earlier batches are dropped
        for name in ("_carried_statistics", "_window", "n_batches_"):
            self.__dict__.pop(name, None)
        return labels

    fit_predict.__doc__ = BaseEM.fit_predict.__doc__


class _Window:
    """The batches of votes kept by ``partial_fit`` (oldest first), each with its known tasks
    (``_TaskPriors`` or None), its weight (the forgetting it accumulated since it arrived) and
    the number of its first task in the stream; ``n_tasks``: the tasks of the stream so far;
    ``whole``: whether the window holds every vote of the stream (it began with
    ``partial_fit``, not ``fit``, and no batch has left). Immutable: ``add`` and ``without``
    return new windows (a failed batch leaves the estimator as it was)."""

    def __init__(self, batches=(), n_tasks=0, whole=True):
        self.batches, self.n_tasks, self.whole = tuple(batches), n_tasks, whole

    def add(self, votes, priors, decay):
        """This window with each batch's weight scaled by ``decay``, and the batch ``votes``
        (weight 1) appended."""
        kept = ((v, p, w * decay, first) for v, p, w, first in self.batches)
        return _Window((*kept, (votes, priors, 1.0, self.n_tasks)), self.n_tasks + votes.n_tasks,
                       self.whole)

    def n_leaving(self, limit):
        """How many of the oldest batches leave so that at most ``limit`` votes stay."""
        stored = np.cumsum([v.n_votes for v, *_ in self.batches[::-1]])
        return int(np.count_nonzero(stored > limit))

    def without(self, n):
        """This window without its ``n`` oldest batches."""
        return _Window(self.batches[n:], self.n_tasks, whole=False)

    @property
    def n_votes(self):
        return sum(v.n_votes for v, *_ in self.batches)

    def source(self, n_workers):
        """The batches as a :class:`_WindowVotes` over ``n_workers`` workers."""
        return _WindowVotes([(MemoryVotes(dataclasses.replace(v, n_workers=n_workers),
                                          task_ids=np.arange(first, first + v.n_tasks)), p, w)
                             for v, p, w, first in self.batches], n_workers)


class _WindowVotes:
    """A source (see :mod:`skcrowd.backends`) of several batches of votes in memory, each with
    a weight: ``map_reduce`` sums each batch's statistics times its weight.

    The batches' known tasks differ: a block function gets ``priors`` (this source's marker,
    :attr:`priors`, passed where a fit passes its ``_TaskPriors``) as the batch's own.
    """

    worker_order = None  # tables have one row per worker, in worker order

    def __init__(self, batches, n_workers):
        self.batches, self.n_workers = batches, n_workers
        self.n_votes = sum(source.n_votes for source, _, _ in batches)
        # the objective per task of a fit weighs each task as its batch
        self.n_tasks = sum(weight * source.n_tasks for source, _, weight in batches)
        self.priors = (None if all(p is None for _, p, _ in batches) else _PER_BATCH)

    def first(self, n):
        """The ``n`` oldest batches, as a source."""
        return _WindowVotes(self.batches[:n], self.n_workers)

    def map_reduce(self, fn, tables=(), args=(), *, stateful=False, with_tasks=False):
        """Sum of the batches' ``map_reduce``, each times its weight."""
        total = StatisticsSum(self.n_workers)
        for source, priors, weight in self.batches:
            mine = tuple(priors if a is _PER_BATCH else a for a in args)
            per_worker, other = source.map_reduce(fn, tables, mine, stateful=stateful)
            if weight != 1.0:
                per_worker, other = ([weight * s for s in stats] for stats in (per_worker, other))
            total.add(None, per_worker, other)
        return total.result()


_PER_BATCH = object()  # _WindowVotes.priors when batches have known tasks: each its own


def _decay(votes_per_worker, half_life):
    """The weight left to the earlier statistics after ``votes_per_worker`` new votes per
    worker."""
    return 1.0 if half_life is None else 0.5 ** (votes_per_worker / half_life)


def _scaled_rows(stats, scale, n_workers, axes):
    """``scale * stats``, with zero rows for the workers new since (per-worker fields padded
    to ``n_workers`` rows)."""
    out = []
    for s, axis in zip(stats, axes):
        if s is not None:
            s = scale * s
            if axis == "worker" and len(s) < n_workers:
                s = np.concatenate([s, np.zeros((n_workers - len(s), *s.shape[1:]))])
        out.append(s)
    return type(stats)(*out)


def _grown_rows(params, n_workers, axes):
    """``params`` with rows for the workers new since: the mean row of the known workers
    (the start of an M-step that reads earlier parameters), -1 in integer tables (DawidSkene's
    rows of the "auto" prior's evidence, chosen at the first batch)."""
    out = []
    for p, axis in zip(params, axes):
        if axis == "worker" and len(p) < n_workers:
            row = (np.full(p.shape[1:], -1, dtype=p.dtype) if p.dtype.kind in "iub"
                   else p.mean(axis=0))
            p = np.concatenate([p, np.broadcast_to(row, (n_workers - len(p), *p.shape[1:]))])
        out.append(p)
    return type(params)(*out)
