"""Wawa: worker agreement with the majority vote as the weight of its votes."""

from __future__ import annotations

import numpy as np

from ._weighted_vote import BaseWeightedVote, fill_unassessed
from .kernels import agreement_credit


class Wawa(BaseWeightedVote):
    """Worker Agreement With Aggregate: majority vote weighted by each worker's agreement with it.

    Three steps, as crowd-kit documents its ``Wawa`` (Toloka's crowd-kit, "Worker Agreement
    with Aggregate"; Ustalov et al., 2021): (1) the majority vote of every task; (2) each
    worker's skill, the fraction of its votes equal to the majority vote; (3) the majority
    vote again, each vote weighted by its worker's skill. A tied majority vote in step 2 gives
    every tied class credit ``1/t`` (the expected agreement with a uniform pick among the ``t``
    tied classes) instead of crediting the first label only. The soft labels are the shares
    of each class in a task's weighted votes.

    ``predict`` and ``predict_proba`` label new tasks of the fitted workers with the fitted
    skills; a worker without votes at fit counts as an average worker (the mean skill).
    Wawa has no likelihood, hence no ``score``.

    Parameters
    ----------
    n_classes : int, default=None
        Number of classes when some never appear in the votes: labels must be integers in
        ``range(n_classes)``. Default: the distinct labels seen.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``X`` (``np.nan`` or ``None`` for NaN / None entries).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    skills_ : ndarray of shape (n_workers,)
        Agreement of each worker's votes with the majority vote, in ``[0, 1]``; the weight of
        its votes.
    class_priors_ : ndarray of shape (n_classes,)
        Frequency of each class among the votes seen at fit: the soft label of a task without
        votes or whose votes all weigh 0.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of shape (n_workers,)
        Worker names, when ``X`` is a DataFrame with string column names.
    worker_ids_ : ndarray of shape (n_workers,)
        Original id of each worker, when fitted on long-format votes.

    See Also
    --------
    ZeroBasedSkill : Skills re-estimated iteratively against the weighted vote.
    MajorityVote : Unweighted votes.

    References
    ----------
    D. Ustalov, N. Pavlichenko and B. Tseitlin. "Learning from crowds with Crowd-Kit". arXiv
    2109.08584, 2021 (crowd-kit's ``Wawa``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import Wawa
    >>> votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 0], [1, 0, 1]])
    >>> wawa = Wawa().fit(votes)
    >>> wawa.skills_
    array([1.  , 0.75, 0.5 ])
    >>> wawa.predict(votes)
    array([0, 1, 0, 1])
    >>> wawa.predict_proba([[0, 1, -1]]).round(3)
    array([[0.571, 0.429]])
    """

    def __init__(self, n_classes=None, *, missing_label=-1):
        self.n_classes = n_classes
        self.missing_label = missing_label

    def _fit_layout(self, layout):
        n_votes = np.bincount(layout.worker, minlength=layout.n_workers)
        credit = agreement_credit(layout, np.ones(layout.n_workers))
        voted = n_votes > 0
        self.skills_ = fill_unassessed(
            np.divide(credit, n_votes, out=np.zeros(layout.n_workers), where=voted), voted)
        self.class_priors_ = self._vote_frequencies(layout)

    def _worker_weights(self):
        return self.skills_
