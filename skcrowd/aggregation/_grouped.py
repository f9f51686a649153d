"""Dawid-Skene with groups of correlated workers (model annotators, prompts of one model).

:class:`GroupedDawidSkene` is :class:`DawidSkene` where some columns form groups whose members
are not independent given the true class: several prompts of one LLM, classifiers trained on
the same data. Each group reads each task once (a latent "reading", drawn from the group's
confusion given the true class); its members copy that reading or answer on their own
(``group_model="copy"``), or answer from the reading with their own noise
(``"reading"``); or each member's vote counts ``1 / group size`` (``"tempered"``). A worker
alone in its group is an ordinary Dawid-Skene worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
from scipy.special import logit, logsumexp
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ..votes import _fmt
from ._dawid_skene import DawidSkene, DawidSkeneStatistics
from ._em import PerWorker, Shared
from ._priors import dirichlet_strength
from .kernels import ds_block_statistics, ds_e_step, ds_log_confusions, safe_log


class GroupedParameters(NamedTuple):
    """The parameters of :class:`GroupedDawidSkene` in EM: those of :class:`DawidSkene`
    (``DawidSkeneParameters``, whose members' rows are confusions given the group's reading
    with ``group_model="reading"``) and the groups'."""

    log_confusions_t: PerWorker
    log_class_priors: Shared
    confusion_prior: Shared
    prior_settled: Shared
    evidence_rows: PerWorker
    n_evidence_rows: Shared
    class_votes: PerWorker
    worker_group: PerWorker
    """The group of each worker (-1: an independent worker)."""
    worker_weight: PerWorker
    """The weight of each worker's votes: ``1 / group size`` for a member with
    ``group_model="tempered"``, else 1."""
    log_group_confusions_t: Shared
    """``[g, r, k] = log P(group g reads r | true class k)`` (``group_model="reading"`` or
    ``"copy"``; shape ``(0, K, K)`` otherwise)."""
    copy_rates: PerWorker
    """The probability that each member copies its group's reading (``"copy"``; 0 else)."""
    copy_prior: PerWorker
    """``[j] = (a, b)``: member ``j``'s copy rate has the prior Beta(1 + a, 1 + b)."""
    copy_prior_settled: Shared
    """Whether ``copy_prior`` is final (``copy_rate="auto"`` chooses it in the first
    iterations)."""


class GroupedStatistics(NamedTuple):
    """The statistics of :class:`GroupedDawidSkene`'s M-step, summed over the blocks."""

    worker_counts: PerWorker
    """``[j, l, k]`` as in :class:`DawidSkene`; for a member with ``group_model="reading"``,
    ``k`` is the group's reading; ``"tempered"``: weighted by ``worker_weight``."""
    class_counts: Shared
    evidence_counts: Shared
    group_counts: Shared
    """``[g, r, k]``: the expected number of tasks of class ``k`` that group ``g`` read as
    ``r`` (among the tasks the group voted on)."""
    copy_counts: PerWorker
    """``[j, 0]``: the expected number of votes of member ``j`` that copy the reading,
    ``[j, 1]``: its number of votes (``"copy"``; zeros else)."""


class GroupedDawidSkene(DawidSkene):
    """Dawid-Skene with groups of correlated workers, counted as the evidence they are.

    Dawid-Skene takes every vote as independent evidence given the true
    class. Model annotators break this: five prompts of one LLM, or
    classifiers trained on the same data, label every task and err together
    on the same tasks, so Dawid-Skene counts one reading five times and lets
    the group outvote the humans where it is wrong. ``worker_groups`` says
    which columns belong together. Each group reads each task once: a latent
    class ``r`` drawn from the group's confusion ``C[g, k, r]`` given the true
    class ``k``. Its members then answer as ``group_model`` says:

    - ``"copy"`` (default): member ``j`` copies the reading with probability
      ``rho[j]``, else answers on its own from its confusion ``A[j, k, l]``
      given the true class: ``P(l | k, r) = rho[j] 1{l = r} + (1 - rho[j])
      A[j, k, l]``. Members that agree beyond what the truth explains get a
      high ``rho``, and the group is worth about one reading of accuracy
      ``C`` plus the members' own answers; ``rho = 0`` is Dawid-Skene.
    - ``"reading"``: member ``j`` answers from the reading with its own
      noise, ``P(l | k, r) = M[j, r, l]``: given the reading, the members
      say nothing more about the true class.
    - ``"tempered"``: no reading; members keep their Dawid-Skene confusions
      and each member's log-likelihood is multiplied by ``1 / group size``
      (a power likelihood: a group counts as one worker of the members'
      geometric mean), in the M-step's counts too.

    ``"copy"`` and ``"reading"`` are fitted by MAP EM with the posterior of
    ``(k, r)`` of each task and group (and of each vote's copying); EM
    starts from ``C`` near the identity, each member copying half the time
    (``"copy"``). Their rows (``C``, ``A``, ``M``) have a prior of their own,
    one pseudo-vote on the diagonal and one spread uniformly (the humans'
    population prior, ``smoothing="auto"``, chosen from alike humans, drew
    members that copy 96 % of the time to 80 %); ``rho`` a Beta(2, 2) prior.

    A worker alone in its group (``worker_groups=None``: every worker) is a
    Dawid-Skene worker: without groups the model is :class:`DawidSkene`, with
    the same results (but for ``prior_from``, which this model does not
    take). Humans may share errors too (hard tasks that mislead
    most of them): a group of all the humans lets the data say how much
    (with ``copy_rate="group"``, one ``rho`` for them all), best added by
    a warm start to the fit of the models' groups; :meth:`bic` compares the
    two fits (see :ref:`model_annotators`).
    Votes are aggregated in memory.

    Parameters
    ----------
    n_classes : int, default=None
        See :class:`DawidSkene`.
    worker_groups : dict or array-like of shape (n_workers,), default=None
        The group of each worker: an array aligned with the columns of ``X``,
        or a mapping from worker id (a column name of a DataFrame ``X``, a
        worker id of long-format votes, else the column index) to group
        label. Workers that share a label form a group; ``None`` (or NaN) as
        label, a label given to one worker only, and a worker absent from the
        mapping make independent workers. None: every worker is independent.
    group_model : {"copy", "reading", "tempered"}, default="copy"
        How a group's votes enter the model (see above).
    copy_rate : {"worker", "group", "auto"}, default="worker"
        With ``group_model="copy"``: one copy rate ``rho`` a member, from its
        own votes under a Beta(2, 2) prior (``"worker"``); one a group, shared
        by its members and learned from all their votes (``"group"``); or one
        a member under a prior chosen for each group from its members'
        counts (``"auto"``: a Beta prior whose mean is the group's rate and
        whose strength has the largest evidence, as ``smoothing="auto"``
        chooses the confusions' prior), so that members that copy alike are
        pooled and members that differ keep their own rates. For a group of
        sparse members (all the humans of a crowd, a few votes each) avoid
        ``"worker"``: a member's rate from a few votes is mostly its prior
        (mode 0.5), so every human would copy about half the time whatever
        the data say.
    smoothing : "auto" or float, default="auto"
        See :class:`DawidSkene`: the Dirichlet prior of every confusion row,
        members' and groups' included. ``"auto"`` chooses it from the
        counts of every worker, members included (counted against their
        tasks' posteriors, their own group included).
    init : {"majority", "random"}, default="majority"
    max_iter : int, default=100
    tol : float, default=1e-6
    n_init : int, default=1
    random_state : int, RandomState instance or None, default=None
    warm_start : bool, default=False
    verbose : int, default=0
    missing_label : int, float, str or None, default=-1
        All as in :class:`DawidSkene`; with ``warm_start=True``,
        ``worker_groups`` may change between fits (see Notes). Long-format votes (a parquet path, a
        pyarrow dataset, a dask DataFrame) are read into memory: the groups'
        statistics are computed there.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    confusion_matrices_ : ndarray of shape (n_workers, n_classes, n_classes)
        ``[j, k, l]``: ``P(worker j answers l | true class k)`` for an
        independent worker (and a member with ``"tempered"``); for a member,
        with ``"copy"``, its own answers' ``A[j, k, l]`` (when it does not
        copy), with ``"reading"``, ``P(answer l | the group's reading k)``.
    group_confusions_ : ndarray of shape (n_groups, n_classes, n_classes)
        ``[g, k, r] = P(group g reads r | true class k)`` (no rows with
        ``"tempered"``).
    copy_rates_ : ndarray of shape (n_workers,)
        ``rho[j]``, the probability that member ``j`` copies its group's
        reading (``"copy"``; 0 for independent workers and other models).
    copy_prior_ : ndarray of shape (n_workers, 2)
        ``(a, b)``: member ``j``'s copy rate has the prior Beta(1 + a, 1 + b)
        (one pseudo-vote each way: ``(1, 1)`` but with ``copy_rate="auto"``;
        with ``"group"``, the prior of the group's rate).
    groups_ : ndarray of shape (n_groups,)
        The label of each group (groups of two workers or more, in the order
        of their first member).
    worker_group_ : ndarray of shape (n_workers,)
        The index in ``groups_`` of each worker's group, -1 for an
        independent worker.
    class_priors_, smoothing_, confusion_prior_, worker_class_votes_ : ndarray or float
    converged_, n_iter_, lower_bound_, lower_bounds_ : bool, int, float, list
    n_features_in_, feature_names_in_, worker_ids_ : int, ndarray, ndarray
        As in :class:`DawidSkene`; ``lower_bound_`` is the MAP objective of
        this model (with ``"tempered"``, of its power likelihood).

    See Also
    --------
    DawidSkene : Every worker independent given the true class.
    EBCC : Correlations through subtypes of the classes, learned from all
        workers without saying who is correlated with whom.

    Notes
    -----
    ``"copy"`` and ``"reading"`` are two-level latent class models (the true
    class, then one latent reading per group and task).

    A warm start (``warm_start=True``) under changed ``worker_groups`` keeps
    every worker's confusion rows, the class prior, and the confusion of
    each group whose label and members are unchanged; a new group starts
    near the identity, as in a cold fit, and a worker that joins a group
    starts copying half the time. Groups can so be added one at a time:
    a group of all the humans added to the fit of the models' group starts
    from that fit's posteriors, where a cold start can lead EM to an optimum
    where the humans' group reads wrong (see :ref:`model_annotators`).

    :meth:`bic` and :meth:`aic` compare fits of different groupings on the
    same votes (lower is better), with the log-likelihood of the votes at
    the MAP estimate and ``p`` free parameters: ``K - 1`` class
    proportions, ``K (K - 1)`` for each worker's and each group's
    confusion, and one a copy rate (a member's, also with ``"auto"``, or a
    group's with ``copy_rate="group"``). Held-out votes
    (:class:`AggregatorSelector`) are scored with a member's probability
    given the true class and its group's other votes on the task. On
    simulated crowds of humans and correlated models, and on real crowds with
    simulated model annotators added, see :ref:`model_annotators`.

    Examples
    --------
    Three humans right 80 % of the time, and four prompts of one model that
    copy its reading of the task (right 75 % of the time) 95 % of the time:
    as independent workers the prompts outvote the humans.

    >>> import numpy as np
    >>> from skcrowd.aggregation import DawidSkene, GroupedDawidSkene
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(2, size=300)
    >>> humans = np.where(rng.random((300, 3)) < 0.8, truth[:, None], 1 - truth[:, None])
    >>> reading = np.where(rng.random(300) < 0.75, truth, 1 - truth)
    >>> models = np.where(rng.random((300, 4)) < 0.95, reading[:, None], 1 - reading[:, None])
    >>> votes = np.hstack([humans, models])
    >>> float((DawidSkene().fit_predict(votes) == truth).mean())
    0.76
    >>> grouped = GroupedDawidSkene(worker_groups=[None] * 3 + ["llm"] * 4)
    >>> float((grouped.fit_predict(votes) == truth).mean())
    0.91
    >>> grouped.groups_, grouped.worker_group_
    (array(['llm'], dtype=object), array([-1, -1, -1,  0,  0,  0,  0]))
    >>> grouped.group_confusions_[0].round(2)  # the model's reading given the truth
    array([[0.74, 0.26],
           [0.26, 0.74]])
    >>> grouped.copy_rates_.round(2)  # how often each prompt copies the reading
    array([0.  , 0.  , 0.  , 0.88, 0.87, 0.83, 0.86])
    """

    _parameter_constraints: dict = {
        **{name: constraint for name, constraint in DawidSkene._parameter_constraints.items()
           if name not in ("prior_from", "prior_strength", "backend", "half_life", "window")},
        "worker_groups": [None, Mapping, "array-like"],
        "group_model": [StrOptions({"reading", "copy", "tempered"})],
        "copy_rate": [StrOptions({"worker", "group", "auto"})],
    }

    # not parameters: long-format votes are read into memory (the groups' statistics are
    # computed there), and DawidSkene's prior from an earlier fit is not available
    backend = "memory"
    prior_from = None
    prior_strength = "auto"
    # a group's reading of a task is one hard label that its members copy: soft votes are
    # refused (see _base.BaseAggregator), and so is DawidSkene's partial_fit (below)
    _accepts_soft_votes = False

    @property
    def partial_fit(self):
        """Not available: DawidSkene.partial_fit takes streams of batches."""
        raise AttributeError(
            "GroupedDawidSkene has no partial_fit: its groups' readings and copy rates are "
            "not kept as sums that later batches can add to. Fit it on all the votes, or "
            "stream them into DawidSkene.partial_fit.")

    def __init__(
        self,
        n_classes=None,
        *,
        worker_groups=None,
        group_model="copy",
        copy_rate="worker",
        smoothing="auto",
        init="majority",
        max_iter=100,
        tol=1e-6,
        n_init=1,
        random_state=None,
        warm_start=False,
        verbose=0,
        missing_label=-1,
    ):
        self.n_classes = n_classes
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.missing_label = missing_label
        self.smoothing = smoothing
        self.worker_groups = worker_groups
        self.group_model = group_model
        self.copy_rate = copy_rate

    _Parameters = GroupedParameters
    _Statistics = GroupedStatistics

    # -- groups ---------------------------------------------------------------

    def _fit_source(self, source, warm, priors=None):
        groups, worker_group = self._resolve_groups()
        if warm:
            self._regroup(groups, worker_group)
        self.groups_, self.worker_group_ = groups, worker_group
        return super()._fit_source(source, warm, priors)

    def _regroup(self, groups, worker_group):
        """A warm start under ``worker_groups`` changed since the last fit: a group with the
        same label and members keeps its confusion, a new group starts as a cold fit does
        (reading its tasks' classes, near the identity); a worker that joins a group starts
        copying half the time (``"copy"``), one that leaves it copies no more. Every worker
        keeps its confusion rows and the class prior is kept."""
        K = len(self.classes_)
        old = {label: (g, set(np.flatnonzero(self.worker_group_ == g)))
               for g, label in enumerate(self.groups_.tolist())}
        votes = self.worker_class_votes_.sum(axis=1)
        confusions = np.empty((self._n_groups(worker_group), K, K))
        for g, label in enumerate(groups[:len(confusions)].tolist()):
            members = np.flatnonzero(worker_group == g)
            kept = old.get(label)
            if kept is not None and kept[1] == set(members) and kept[0] < len(
                    self.group_confusions_):  # (none kept from a "tempered" fit)
                confusions[g] = self.group_confusions_[kept[0]]
            else:  # the cold start of _m_step: the members' mean number of votes, diagonal
                counts = votes[members].mean() * np.eye(K) + _group_prior(K)
                confusions[g] = counts / counts.sum(axis=1, keepdims=True)
        moved = _worker_labels(groups, worker_group) != _worker_labels(self.groups_,
                                                                       self.worker_group_)
        start = 0.5 if self.group_model == "copy" else 0.0
        self.copy_rates_ = np.where(worker_group < 0, 0.0,
                                    np.where(moved, start, self.copy_rates_))
        self.copy_prior_ = np.where(moved[:, None], _START_COPY_PRIOR, self.copy_prior_)
        self._copy_prior_settled_ = self._copy_prior_settled_ and not (
            self.copy_rate == "auto" and moved.any())
        self.group_confusions_ = confusions

    def _resolve_groups(self):
        """``(groups_, worker_group_)`` of ``worker_groups`` for the fitted workers."""
        n_workers = self.n_features_in_
        groups = self.worker_groups
        if groups is None:
            labels = [None] * n_workers
        elif isinstance(groups, Mapping):
            ids = getattr(self, "feature_names_in_", getattr(self, "worker_ids_", None))
            ids = range(n_workers) if ids is None else ids.tolist()
            position = {worker: j for j, worker in enumerate(ids)}
            unknown = [worker for worker in groups if worker not in position]
            if unknown:
                shown = ", ".join(_fmt(worker) for worker in unknown[:5])
                raise ValueError(
                    f"worker_groups names {len(unknown)} worker(s) that X does not have: "
                    f"{shown}{', ...' if len(unknown) > 5 else ''} (X's workers: "
                    f"{_worker_names(ids)})."
                )
            labels = [None] * n_workers
            for worker, label in groups.items():
                labels[position[worker]] = label
        else:
            labels = np.asarray(groups, dtype=object)
            if labels.ndim != 1 or len(labels) != n_workers:
                raise ValueError(
                    f"worker_groups must give one group per worker (column) of X: X has "
                    f"{n_workers} workers, worker_groups has shape {labels.shape}."
                )
            labels = labels.tolist()
        members = {}
        for j, label in enumerate(labels):
            if label is not None and not (isinstance(label, float) and np.isnan(label)):
                members.setdefault(label, []).append(j)
        worker_group = np.full(n_workers, -1, dtype=np.int64)
        names = []
        for label, workers in members.items():
            if len(workers) > 1:
                worker_group[workers] = len(names)
                names.append(label)
        group_labels = np.empty(len(names), dtype=object)
        group_labels[:] = names
        return group_labels, worker_group

    def _worker_weight(self, worker_group):
        """``1 / group size`` for the members of a group with ``"tempered"``, else 1."""
        if self.group_model != "tempered":
            return np.ones(len(worker_group))
        sizes = np.maximum(np.bincount(worker_group[worker_group >= 0], minlength=1), 1)
        return np.where(worker_group >= 0, 1.0 / sizes[np.maximum(worker_group, 0)], 1.0)

    # -- EM ---------------------------------------------------------------------

    def _n_groups(self, worker_group):
        """The number of groups with a reading (none with ``"tempered"``)."""
        return int(worker_group.max()) + 1 if (
            self.group_model != "tempered" and len(worker_group)) else 0

    def _statistics(self, layout, resp):
        # Dawid-Skene's: members start with their confusions against the initial classes (as
        # if each group read every task right); the first M-step makes the groups' counts
        return self._with_group_statistics(super()._statistics(layout, resp), layout)

    def _initial_statistics(self, layout, draws):
        stats = super()._initial_statistics(layout, draws)
        return (stats if isinstance(stats, GroupedStatistics)
                else self._with_group_statistics(stats, layout))

    def _with_group_statistics(self, stats, layout):
        K = layout.n_classes
        return GroupedStatistics(*stats, np.zeros((0, K, K)), np.zeros((layout.n_workers, 2)))

    def _m_step(self, stats, params):
        worker_counts, class_counts, evidence_counts, group_counts, copy_counts = stats
        K = len(class_counts)
        if params is None:
            worker_group = self.worker_group_
            n_groups = self._n_groups(worker_group)
            # the groups start near the identity: each reads its tasks' initial classes
            group_counts = np.zeros((n_groups, K, K))
            member = worker_group >= 0
            if n_groups:
                tasks = np.zeros((n_groups, K))
                np.add.at(tasks, worker_group[member], worker_counts[member].sum(axis=1))
                tasks /= np.bincount(worker_group[member], minlength=n_groups)[:, None]
                group_counts[:, np.arange(K), np.arange(K)] = tasks
            weight = self._worker_weight(worker_group)
            worker_counts *= weight[:, None, None]
            # "copy": members start copying half the time, under a Beta(2, 2) prior
            copy_rates = np.where(member, 0.5, 0.0) if self.group_model == "copy" else (
                np.zeros(len(worker_group)))
            copy_prior = np.tile(_START_COPY_PRIOR, (len(worker_group), 1))
            copy_prior_settled = self.copy_rate != "auto"
        else:
            worker_group, weight = params.worker_group, params.worker_weight
            copy_prior, copy_prior_settled = params.copy_prior, bool(params.copy_prior_settled)
            if self.group_model == "copy" and not copy_prior_settled:
                copy_prior, copy_prior_settled = _chosen_copy_prior(copy_counts, worker_group,
                                                                    copy_prior)
            copy_rates = self._copy_rates(copy_counts, worker_group, copy_prior) if (
                self.group_model == "copy") else params.copy_rates
        member = worker_group >= 0
        member_counts = worker_counts[member]
        ds = super()._m_step(DawidSkeneStatistics(worker_counts, class_counts, evidence_counts),
                             params)
        # members and groups: a prior of their own (not the humans' population prior)
        group_prior = _group_prior(K)
        if member.any():
            ds.log_confusions_t[member] = ds_log_confusions(member_counts, group_prior)
        log_groups_t = (ds_log_confusions(np.array(group_counts, dtype=np.float64), group_prior)
                        if len(group_counts) else np.zeros((0, K, K)))
        return GroupedParameters(*ds, worker_group, weight, log_groups_t, copy_rates,
                                 copy_prior, np.array(copy_prior_settled))

    def _parameter_term(self, params):
        K = len(params.log_class_priors)
        group_prior = _group_prior(K)
        member = params.worker_group >= 0
        term = super()._parameter_term(params) + float(
            np.einsum("jlk,kl->", params.log_confusions_t[member],
                      group_prior - params.confusion_prior)
            + np.einsum("grk,kr->", params.log_group_confusions_t, group_prior))
        if self.group_model == "copy":  # a Beta(1 + a, 1 + b) prior on each copy rate
            rates, prior = params.copy_rates[member], params.copy_prior[member]
            if self.copy_rate == "group":  # one rate per group, shared by its members
                first = np.unique(params.worker_group[member], return_index=True)[1]
                rates, prior = rates[first], prior[first]
            term += float(np.sum(prior[:, 0] * safe_log(rates)
                                 + prior[:, 1] * safe_log(1.0 - rates)))
        return term

    def _prior_settled(self, params):
        return super()._prior_settled(params) and bool(params.copy_prior_settled)

    def _settle_prior(self, params):
        return super()._settle_prior(params)._replace(copy_prior_settled=np.array(True))

    def _copy_rates(self, copy_counts, worker_group, copy_prior):
        """The copy rates' posterior mode under the Beta(1 + a, 1 + b) priors of
        _parameter_term: each member's from its own counts (``"worker"``, ``"auto"``), or its
        group's from the summed counts of the members (``"group"``). ``copy_counts[j]``:
        (votes copied, votes)."""
        member = worker_group >= 0
        if self.copy_rate == "group":
            copy_counts = np.where(member[:, None], _group_sums(copy_counts, worker_group), 0.0)
        return np.where(member, (copy_counts[:, 0] + copy_prior[:, 0])
                        / (copy_counts[:, 1] + copy_prior.sum(axis=1)), 0.0)

    def _member_log_proba(self, params, worker, label):
        """``[v, k, r] = log P(answer label[v] | true class k, reading r)`` of member votes:
        ``M[j, r, l]`` ("reading"), ``rho 1{l == r} + (1 - rho) A[j, k, l]`` ("copy")."""
        log_own = params.log_confusions_t[worker, label]  # [v, k] or, "reading", [v, r]
        if self.group_model == "reading":
            K = log_own.shape[1]
            return np.broadcast_to(log_own[:, None, :], (len(worker), K, K))
        rate = params.copy_rates[worker][:, None]
        log_other = safe_log(1.0 - rate) + log_own  # r != l
        log_same = np.logaddexp(safe_log(rate), log_other)  # r == l
        out = np.repeat(log_other[:, :, None], log_own.shape[1], axis=2)
        out[np.arange(len(worker)), :, label] = log_same
        return out

    def _group_terms(self, layout, params, log_task_priors):
        """The E-step's inputs: the workers' log-confusion table (members' rows at 0 with
        "reading" and "copy", times their weight with "tempered"), the per-task log-priors with
        each group's ``log P(its votes | k)`` added, and the groups' joint log-terms
        ``[i, g, k, r] = log P(r | k, the group's votes on task i)`` with the mask of the
        (task, group) pairs with votes (None without groups)."""
        log_conf_t, worker_group = params.log_confusions_t, params.worker_group
        if self.group_model == "tempered":
            return log_conf_t * params.worker_weight[:, None, None], log_task_priors, None
        n_groups = len(params.log_group_confusions_t)
        if n_groups == 0:
            return log_conf_t, log_task_priors, None
        table = log_conf_t.copy()
        table[worker_group >= 0] = 0.0
        K, n_tasks = layout.n_classes, layout.n_tasks
        votes = np.flatnonzero(worker_group[layout.worker] >= 0)
        worker = layout.worker[votes]
        rows = layout.task[votes].astype(np.int64) * n_groups + worker_group[worker]
        terms = self._member_log_proba(params, worker, layout.label[votes]).reshape(-1, K * K)
        joint = np.stack([np.bincount(rows, weights=terms[:, c], minlength=n_tasks * n_groups)
                          for c in range(K * K)], axis=1).reshape(n_tasks, n_groups, K, K)
        voted = np.bincount(rows, minlength=n_tasks * n_groups).reshape(n_tasks, n_groups) > 0
        joint += params.log_group_confusions_t.transpose(0, 2, 1)[None]
        group_ll = logsumexp(joint, axis=-1)  # [i, g, k]
        group_ll[~voted] = 0.0
        joint -= group_ll[..., None]
        if log_task_priors is None:
            log_task_priors = params.log_class_priors
        return table, log_task_priors + group_ll.sum(axis=1), (joint, voted)

    def _e_step(self, layout, params, out=None, *, log_task_priors=None):
        table, log_priors, groups = self._group_terms(layout, params, log_task_priors)
        adapting = self._adapting(params)
        resp = None if groups is None else np.empty((layout.n_tasks, layout.n_classes))
        stats = ds_block_statistics(layout, table, params.log_class_priors, resp=resp,
                                    log_task_priors=log_priors, cavity=adapting,
                                    cavity_rows=params.evidence_rows,
                                    n_cavity_rows=int(params.n_evidence_rows))
        worker_counts = stats.worker_counts
        K = layout.n_classes
        group_counts = np.zeros((len(params.log_group_confusions_t), K, K))
        copy_counts = np.zeros((layout.n_workers, 2))
        if self.group_model == "tempered":
            worker_counts *= params.worker_weight[:, None, None]
        elif groups is not None:
            joint, voted = groups
            # P(k, r | votes) of each (task, group) with votes; [i, g, k, r]
            post = np.exp(joint) * stats.resp[:, None, :, None]
            post[~voted] = 0.0
            group_counts = post.sum(axis=0).transpose(0, 2, 1)
            member = params.worker_group >= 0
            votes = np.flatnonzero(member[layout.worker])
            worker, label = layout.worker[votes], layout.label[votes]
            task, group = layout.task[votes], params.worker_group[worker]
            if self.group_model == "reading":
                weights = post[task, group].sum(axis=1)  # [v, r]
            else:  # the vote's mass at class k, less its share copied from the reading
                rate = params.copy_rates[worker][:, None]
                log_own = params.log_confusions_t[worker, label]  # [v, k]
                copied = post[task, group, :, label] * np.exp(
                    safe_log(rate) - np.logaddexp(safe_log(rate), safe_log(1 - rate) + log_own))
                weights = stats.resp[task] - copied
                copy_counts[:, 0] = np.bincount(worker, weights=copied.sum(axis=1),
                                                minlength=layout.n_workers)
                copy_counts[:, 1] = np.bincount(worker, minlength=layout.n_workers)
            cell = layout.cell[votes].astype(np.int64)
            counts = np.stack([np.bincount(cell, weights=weights[:, c],
                                           minlength=layout.n_workers * K) for c in range(K)],
                              axis=1).reshape(layout.n_workers, K, K)
            worker_counts[member] = counts[member]
        evidence = stats.cavity_counts if adapting else np.zeros((0, 0, 0))
        return (GroupedStatistics(worker_counts, stats.class_counts, evidence, group_counts,
                                  copy_counts), stats.log_likelihood)

    def _posterior(self, layout, params, resp=None, *, log_task_priors=None):
        table, log_priors, _ = self._group_terms(layout, params, log_task_priors)
        return ds_e_step(layout, table, params.log_class_priors, resp=resp,
                         log_task_priors=log_priors)

    def _vote_log_proba(self, layout, params, task, worker, label):
        log_proba = params.log_confusions_t[worker, label]  # [v, k]
        group = params.worker_group[worker]
        member = np.flatnonzero(group >= 0)
        if self.group_model == "tempered" or len(member) == 0:
            return log_proba
        # a member's vote given the class and its group's other votes on the task:
        # log sum_r P(r | k, the group's other votes) P(vote | k, r)
        joint, _ = self._group_terms(layout, params, None)[2]
        log_proba = log_proba.copy()
        log_proba[member] = logsumexp(
            joint[task[member], group[member]]
            + self._member_log_proba(params, worker[member], label[member]), axis=-1)
        return log_proba

    # -- model choice -----------------------------------------------------------------

    def _n_parameters(self):
        """The number of free parameters: the class prior, every worker's confusion rows,
        each group's reading confusion ("copy", "reading") and the copy rates ("copy": one a
        member, or one a group with ``copy_rate="group"``)."""
        check_is_fitted(self)
        K = len(self.classes_)
        n_groups = len(self.group_confusions_)
        n_rates = 0
        if self.group_model == "copy":
            n_rates = n_groups if self.copy_rate == "group" else int(
                np.sum(self.worker_group_ >= 0))
        return (K - 1) + (self.n_features_in_ + n_groups) * K * (K - 1) + n_rates

    def bic(self, X):
        """Bayesian information criterion of the fitted model on the votes ``X`` (lower is
        better): ``-2 log p(X) + p log(n_tasks)``, with ``p`` free parameters (see Notes).

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or DataFrame
            Votes, usually those of the fit.

        Returns
        -------
        bic : float
        """
        log_likelihood, n_tasks = self._total_log_likelihood(X)
        return float(-2.0 * log_likelihood + self._n_parameters() * np.log(n_tasks))

    def aic(self, X):
        """Akaike information criterion of the fitted model on the votes ``X`` (lower is
        better): ``-2 log p(X) + 2 p``, with ``p`` free parameters (see :meth:`bic`).

        Parameters
        ----------
        X : array-like, sparse matrix, path, pyarrow Dataset or DataFrame
            Votes, usually those of the fit.

        Returns
        -------
        aic : float
        """
        log_likelihood, _ = self._total_log_likelihood(X)
        return -2.0 * log_likelihood + 2.0 * self._n_parameters()

    def _total_log_likelihood(self, X):
        """``(log p(X), number of tasks of X)`` under the fitted model."""
        per_task = np.asarray(self.score_samples(X), dtype=np.float64)
        return float(per_task.sum()), len(per_task)

    # -- fitted attributes --------------------------------------------------------

    def _set_fitted(self, params):
        super()._set_fitted(params)
        self.group_confusions_ = np.exp(params.log_group_confusions_t.transpose(0, 2, 1))
        self.copy_rates_ = params.copy_rates
        self.copy_prior_ = params.copy_prior
        self._copy_prior_settled_ = bool(params.copy_prior_settled)

    def _fitted_parameters(self):
        log_groups_t = np.log(np.maximum(self.group_confusions_, np.finfo(float).tiny))
        return GroupedParameters(*super()._fitted_parameters(), self.worker_group_,
                                 self._worker_weight(self.worker_group_),
                                 np.ascontiguousarray(log_groups_t.transpose(0, 2, 1)),
                                 self.copy_rates_, self.copy_prior_,
                                 np.array(self._copy_prior_settled_))


def _group_prior(K):
    """Dirichlet pseudo-counts ``[k, l]`` of the members' and the groups' confusion rows: one
    pseudo-vote for the diagonal and one spread over the classes (``smoothing=1`` of
    :class:`DawidSkene`). The population prior of the humans (``smoothing="auto"``) does not
    fit them: chosen from alike humans it drew members that copy their group's reading 96 %
    of the time to 80 % (400 tasks, 3 classes)."""
    return np.eye(K) + 1.0 / K


# the prior Beta(1 + a, 1 + b) of a copy rate, (a, b): Beta(2, 2) (one pseudo-vote copied, one
# not), the prior of copy_rate="worker" and "group" and the start of "auto"
_START_COPY_PRIOR = np.array([1.0, 1.0])
# "auto" settles once the log of its strength and the logit of its mean move by less than this
_COPY_PRIOR_SETTLED = 1e-2


def _group_sums(values, worker_group):
    """``[j]``: the sum of ``values`` (shape ``(n_workers, c)``) over the members of worker
    ``j``'s group (zeros for an independent worker)."""
    member = worker_group >= 0
    n_groups = int(worker_group.max()) + 1 if member.any() else 0
    sums = np.stack([np.bincount(worker_group[member], weights=values[member, c],
                                 minlength=n_groups) for c in range(values.shape[1])], axis=1)
    out = np.zeros_like(values, dtype=np.float64)
    out[member] = sums[worker_group[member]]
    return out


def _chosen_copy_prior(copy_counts, worker_group, previous):
    """``copy_rate="auto"``: each group's copy-rate prior ``(a, b) = s (m, 1 - m)`` and whether
    it settled. ``m`` is the group's pooled rate (its members' copied votes over their votes,
    with one pseudo-vote each way), ``s`` the strength of maximum evidence of the members'
    counts (copied, not copied) under Beta(s m, s (1 - m)) (type-II maximum likelihood, from
    the previous strength): large where the members copy alike (their rates are pooled),
    small where they differ (each has its own)."""
    prior = previous.copy()
    settled = True
    counts = np.stack([copy_counts[:, 0], copy_counts[:, 1] - copy_counts[:, 0]], axis=1)
    summed = _group_sums(counts, worker_group)
    for g in np.unique(worker_group[worker_group >= 0]):
        members = np.flatnonzero(worker_group == g)
        mean = (summed[members[0], 0] + 1.0) / (summed[members[0]].sum() + 2.0)
        shape = np.array([[mean, 1.0 - mean]])
        old = previous[members[0]]
        strength = dirichlet_strength(np.maximum(counts[members], 0.0)[:, None, :], shape,
                                      init=old.sum())
        prior[members] = strength * shape[0]
        settled &= bool(abs(np.log(strength / old.sum())) < _COPY_PRIOR_SETTLED
                        and abs(logit(mean) - logit(old[0] / old.sum())) < _COPY_PRIOR_SETTLED)
    return prior, settled


def _worker_labels(groups, worker_group):
    """The group label of each worker (None: independent), as an object array."""
    labels = np.empty(len(worker_group), dtype=object)
    labels[worker_group >= 0] = groups[worker_group[worker_group >= 0]]
    return labels


def _worker_names(ids):
    """How the error of an unknown worker id names the workers of ``X``."""
    if isinstance(ids, range):
        return f"the column indices 0 to {len(ids) - 1}"
    shown = ", ".join(_fmt(worker) for worker in ids[:5])
    return f"{shown}{', ...' if len(ids) > 5 else ''}"
