"""Priors from an earlier fit: ``prior_from``, an earlier project's worker models as the prior.

A model with a conjugate prior on each worker's parameters (Dirichlet confusion rows for
:class:`DawidSkene` and :class:`BayesianDawidSkene`, a Beta accuracy for
:class:`OneCoinDawidSkene`, MACE's competence and spam distributions, a Gaussian ability for
:class:`GLAD`) takes a fitted model of the same kind as ``prior_from``: each worker matched by id
gets the earlier model's pseudo-counts (for GLAD, a Gaussian factor widened by the drift between
projects, ``prior_drift``) added to its statistics at every M-step (and their log-density to the
objective), a new worker the population prior alone.
:class:`PriorFromMixin` holds what every such model shares: checking the earlier fit, matching
workers, the pseudo-count table in the order of the votes' workers, the class priors'
pseudo-tasks (:func:`share_pseudo_tasks`) and ``clone`` keeping the fitted ``prior_from``; the
model gives its own table (``_earlier_table``) and uses ``self._earlier_counts`` in its M-step
and ``_parameter_term``.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted


class PriorFromMixin:
    """``prior_from`` and ``prior_strength`` of an EM model (see the module docstring).

    The model defines ``_earlier_table(earlier)``: ``(table, votes)``, the pseudo-counts of
    every worker of the fitted ``earlier`` (one row per earlier worker, in the layout of the
    model's per-worker statistics) under ``self.prior_strength``, and each earlier worker's
    number of votes (a worker without votes is treated as new). A model whose M-step reads
    ``self._share_pseudo_tasks`` (the class priors' pseudo-tasks of :func:`share_pseudo_tasks`,
    None without earlier models) sets ``_shares_class_priors``.
    """

    _shares_class_priors = False

    def __sklearn_clone__(self):
        # the fitted prior_from is data of the model, kept as it is (as FrozenEstimator is):
        # scikit-learn's clone would give an unfitted copy of it
        copy = super().__sklearn_clone__()
        if self.prior_from is not None:
            copy.prior_from = self.prior_from
        return copy

    def _fit_source(self, source, warm, priors=None):
        self._carry_earlier(source)
        try:
            return super()._fit_source(source, warm, priors)
        finally:
            self._drop_earlier()

    def _carry_earlier(self, source):
        """Sets, for a fit (or a batch) of ``source``, the earlier fit's pseudo-counts of each
        worker in the source's order of the workers (as the M-step's statistics) and the class
        priors' pseudo-tasks (None: the model's own), read by _m_step and _parameter_term."""
        self._earlier_counts = self._earlier_pseudo_counts(source)
        carried = self._earlier_counts is not None and self._earlier_counts.any()
        self._share_pseudo_tasks = (share_pseudo_tasks(source, len(self.classes_))
                                    if carried and self._shares_class_priors else None)

    def _drop_earlier(self):
        del self._earlier_counts, self._share_pseudo_tasks

    def _earlier_pseudo_counts(self, source):
        """The pseudo-counts that ``prior_from`` adds to each worker's statistics (zero for a
        worker without an earlier model), in the order of the workers of ``source``; None
        without ``prior_from``. Sets ``prior_workers_``."""
        self.__dict__.pop("prior_workers_", None)
        earlier = self.prior_from
        if earlier is None:
            return None
        if getattr(earlier, "_Parameters", None) is not self._Parameters:
            raise TypeError(
                f"prior_from of {type(self).__name__} must be a fitted "
                f"{self._prior_from_models} (its worker models become the prior); got "
                f"{type(earlier).__name__}."
            )
        check_is_fitted(earlier, msg=f"prior_from: this {type(earlier).__name__} is not fitted "
                                     "yet; fit it on the earlier votes first.")
        if not np.array_equal(earlier.classes_, self.classes_):
            raise ValueError(
                f"prior_from was fitted on the classes {earlier.classes_.tolist()!r}, X has "
                f"{self.classes_.tolist()!r}; pass n_classes to both fits where a class is "
                "missing from the votes of one."
            )
        rows = _match_workers(_worker_ids(earlier), _worker_ids(self), earlier.n_features_in_,
                              self.n_features_in_)
        table, votes = self._earlier_table(earlier)
        known = np.maximum(rows, 0)
        matched = (rows >= 0) & (votes[known] > 0)
        self.prior_workers_ = matched
        counts = table[known] * matched.reshape(-1, *(1,) * (table.ndim - 1))
        return counts if source.worker_order is None else counts[source.worker_order]


def _worker_ids(model):
    """The worker ids of a fitted model (DataFrame column names or long-format ids), or
    None."""
    for name in ("feature_names_in_", "worker_ids_"):
        if hasattr(model, name):
            return getattr(model, name)
    return None


def _match_workers(earlier_ids, ids, n_earlier, n_workers):
    """The row of each worker of this fit in the earlier fit (-1: a new worker): by id, or by
    position when neither fit has ids."""
    if earlier_ids is None and ids is None:
        if n_earlier != n_workers:
            raise ValueError(
                f"prior_from was fitted on {n_earlier} workers and X has {n_workers}; without "
                "worker ids (DataFrame column names or long-format votes) workers are matched "
                "by position, which needs the same number of workers."
            )
        return np.arange(n_workers)
    if earlier_ids is None or ids is None:
        has, lacks = ("prior_from", "X") if ids is None else ("X", "prior_from")
        raise ValueError(
            f"{has} has worker ids and {lacks} has none (a matrix without column names): "
            "workers are matched by id, so fit both on DataFrames with worker names as "
            "columns or on long-format votes, or both on plain matrices (matched by position)."
        )
    position = {worker: j for j, worker in enumerate(earlier_ids)}
    return np.array([position.get(worker, -1) for worker in ids], dtype=np.intp)


# The class priors of a fit whose workers carry an earlier model get SHARE_WEIGHT pseudo-tasks per
# task at the answer shares of its votes (see share_pseudo_tasks).
SHARE_WEIGHT = 2.0


def share_pseudo_tasks(source, n_classes):
    """The Dirichlet pseudo-counts of the class priors of a fit with an earlier model:
    ``SHARE_WEIGHT * n_tasks`` pseudo-tasks spread as the answers of the votes of ``source``
    (each class one answer more, so that a class nobody gave keeps a positive share).

    The carried worker models explain the new votes as they explained the earlier ones, and EM's
    class priors follow them: with one or two votes per task the new votes cannot correct
    them, and where the earlier fit's prevalence was off (act_ZenCrowd: the majority class at
    0.58-0.65 where the gold has 0.77-0.80) or drifts (act_CF with one vote per task: one class
    took two thirds of the tasks) the new project inherits it. The answer shares of the new
    project anchor its prevalence to its own votes; EM's expected counts still move it (a third
    of the weight). See :ref:`prior_from` for the figures and the study that chose the weight.
    """
    _, (answers,) = source.map_reduce(_answer_counts, args=(n_classes,))
    answers = np.asarray(answers, dtype=np.float64) + 1.0
    return SHARE_WEIGHT * source.n_tasks * answers / answers.sum()


def _answer_counts(block, tables, n_classes, state):
    """The number of votes of each answer in a block (module level: runs on Dask workers)."""
    return (), (np.bincount(block.votes.label, minlength=n_classes),), None
