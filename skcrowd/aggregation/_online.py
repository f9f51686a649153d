"""Batches of votes: ``partial_fit`` of the EM aggregators, from accumulated statistics.

A Dawid-Skene-like model's M-step reads its E-step's statistics only through sums over the
tasks (expected confusion counts of each worker, expected class counts): statistics of
disjoint sets of tasks add up. :class:`OnlineEMMixin` keeps these sums over the batches seen
(one row per worker, no vote and no task of the history) and runs EM on each new batch against
them: every M-step sees ``decay * carried + batch statistics``, where ``carried`` is the sum
left by the earlier batches and ``decay = 0.5 ** (batch votes / (half_life * workers))``; after
the batch, ``carried`` becomes that sum with the batch's last statistics. This is the
incremental EM of Neal & Hinton (1998) with each batch's posteriors frozen once the batch is
done, and, with a ``half_life``, exponential forgetting of the older votes at a rate per vote
per worker, whatever the size of the batches (stepwise EM with constant step sizes per vote,
Cappe & Moulines 2009). A model whose
statistics are not such sums joins the carried ones to a batch's its own way
(``_with_carried``: GLAD moves the carried gradient of its abilities along their curvature).

Workers are identified by name (the string column names of a DataFrame batch) and grow between
batches; batches without names are positional and keep the first batch's width.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import _fit_context, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, Real
from sklearn.utils.validation import _get_feature_names, validate_data

from ..backends import MemoryVotes
from ..backends._dispatch import is_long_format
from ..base import _as_it_was_on_error
from ..votes import check_not_long_format, check_votes, refuse_soft_votes
from ._base import _is_pandas_frame
from ._em import BaseEM, _initial_block, _merge, field_axes
from .kernels import fit_engine

#: ``half_life`` of the models with ``partial_fit``: the number of votes per worker after
#: which a batch's statistics weigh half (None: never forgotten)
HALF_LIFE_CONSTRAINT = {"half_life": [Interval(Real, 0.0, None, closed="neither"), None]}


class OnlineEMMixin:
    """``partial_fit`` of an EM aggregator whose statistics add up over tasks.

    The model's ``_Statistics`` must have per-worker and shared fields that are sums over
    tasks (per-task fields stay with their batch), or the model overrides ``_with_carried``;
    its ``_m_step`` must read the previous parameters only for their shared entries and as a
    starting point (a new worker's rows start as the mean row of the known workers). The model
    stores ``half_life`` (see :data:`HALF_LIFE_CONSTRAINT`) and has :class:`PriorFromMixin`'s
    ``prior_from`` (an earlier fit is the prior of every batch).
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, classes=None):
        """Update the model with a batch of votes.

        Each batch runs EM (at most ``max_iter`` iterations, to ``tol``) on its
        own tasks, every M-step counting the statistics of the earlier batches
        too (their expected per-worker counts, scaled by
        ``0.5 ** (n_votes / (half_life * n_workers))`` at each new batch of
        ``n_votes`` votes from ``n_workers`` known workers); the model
        stores these sums, one row per worker, and neither votes nor tasks.
        The first batch is a ``fit`` (same parameters, same iterations);
        later batches keep the posteriors of earlier tasks as they were at
        the end of their batch.
        New workers, new tasks and more votes on earlier tasks may arrive in
        any batch: a task's votes in two batches count as two tasks. Re-read
        the labels of earlier tasks with :meth:`predict` on their votes.

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
        0.834 0.832
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
        """EM on one batch against the carried statistics; stores the new sums."""
        model = clone(self)  # what the blocks need: the parameters, not the fitted attributes
        carried = None if first else getattr(self, "_carried_statistics", None)
        if carried is not None:
            decay = _decay(source.n_votes / source.n_workers, self.half_life)
            carried = _scaled_rows(carried, decay, source.n_workers, field_axes(self._Statistics))
        # a prior chosen once (DawidSkene's "auto") is kept; a prior re-fitted at every M-step
        # starts each batch afresh, as in a fit: started from the last batch's, a pooled prior
        # (BayesianDawidSkene's concentration at 1e5) stayed where a poor first batch put it
        # (act_CF, 10 batches: 0.78 against 0.90 refitted)
        self._carry_earlier(source)
        try:
            params = (None if first or type(self)._prior_settled is BaseEM._prior_settled
                      else _grown_rows(self._fitted_parameters(), source.n_workers,
                                       field_axes(self._Parameters)))
            # the seed of a fit at the first batch; then one per batch
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            if not first:
                seed = int(np.random.SeedSequence([seed, getattr(self, "n_batches_", 0)])
                           .generate_state(1)[0] % np.iinfo(np.int32).max)
            # ENGINE="auto": the engine of a fit of the batch's votes
            with fit_engine(source.n_votes, numpy_while_cold=self._numpy_while_cold):
                # from the batch's vote shares, as a fit: a start from the model so far (an
                # E-step under the carried counts) lost 2.3 points (one-coin; 30 on Duck) and
                # 0.5 (BayesianDawidSkene) on average over the real crowds in 10 batches
                stats = source.map_reduce(_initial_block, (), (model, seed, priors, None),
                                          stateful=True, with_tasks=True)
                end, stats = self._iterate(source, model, stats, params, -np.inf, priors,
                                           carried=carried)
        finally:
            self._drop_earlier()
        self.lower_bound_, params, self.n_iter_, self.lower_bounds_, self.converged_ = end
        self._warn_if_not_converged()
        merged = _merge(self, stats)  # the last E-step's, under params
        carried = merged if carried is None else self._with_carried(carried, merged, params)
        self._set_fitted(params)
        self._carried_statistics = carried
        self.n_batches_ = getattr(self, "n_batches_", 0) + 1

    def _with_carried(self, carried, stats, params):
        """The statistics of an M-step under ``params``: the batch's ``stats`` plus the
        ``carried`` ones of the earlier batches (field by field; per-task fields None; a field
        whose shape differs, the evidence table of DawidSkene's "auto" prior while it is
        chosen, is the batch's)."""
        return type(stats)(*(s if c is None or s is None or np.shape(c) != np.shape(s) else c + s
                             for c, s in zip(carried, stats)))

    def fit_predict(self, X, y=None, *, task_prior=None):
        labels = super().fit_predict(X, y, task_prior=task_prior)
        # a fit is a model of its own: the statistics of earlier batches are dropped
        for name in ("_carried_statistics", "n_batches_"):
            self.__dict__.pop(name, None)
        return labels

    fit_predict.__doc__ = BaseEM.fit_predict.__doc__


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
