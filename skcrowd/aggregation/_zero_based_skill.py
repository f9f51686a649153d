"""Zero-Based Skill: worker skills re-estimated against the weighted vote with a learning rate."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import Integral, Interval, Real

from ._weighted_vote import BaseWeightedVote, fill_unassessed
from .kernels import agreement_credit


class ZeroBasedSkill(BaseWeightedVote):
    """Zero-Based Skill: weighted majority vote whose worker skills follow the weighted vote.

    As crowd-kit documents its ``ZeroBasedSkill`` (Ustalov et al., 2021): every worker starts
    with the same skill (``1 / K``, a random guesser's accuracy); each iteration takes the
    majority vote of every task weighted by the current skills, and moves each skill toward the
    worker's agreement with it by a gradient step on the squared error,
    ``skill <- skill + lr * (agreement - skill)``. The learning rate starts at ``lr_init`` and
    is multiplied by ``lr_reduce_factor`` at every ``lr_steps_to_reduce``-th iteration. A tie
    of the weighted vote gives every tied class credit ``1/t`` (the expected agreement with a
    uniform pick among the ``t`` tied classes). The soft labels are the shares of each class
    in a task's votes weighted by the fitted skills.

    With ``lr_init=1`` the first iteration gives exactly :class:`Wawa`'s skills. Iterations
    stop after ``max_iter`` or as soon as every skill moves by less than ``tol`` (the weighted
    votes no longer change). ``predict`` and ``predict_proba`` label new tasks of the fitted
    workers with the fitted skills; a worker without votes at fit counts as an average worker
    (the mean skill). The model has no likelihood, hence no ``score``.

    Parameters
    ----------
    n_classes : int, default=None
        Number of classes when some never appear in the votes: labels must be integers in
        ``range(n_classes)``. Default: the distinct labels seen.
    max_iter : int, default=100
        Maximum number of iterations (crowd-kit's ``n_iter``).
    lr_init : float, default=1.0
        Initial learning rate.
    lr_steps_to_reduce : int, default=20
        The learning rate is reduced at every iteration whose number (from 1) is a multiple of
        it.
    lr_reduce_factor : float, default=0.5
        Factor of each reduction of the learning rate.
    tol : float, default=1e-6
        Stop when every skill changes by less than ``tol`` in an iteration; ``tol=0`` runs
        ``max_iter`` iterations.
    verbose : int, default=0
        1: print the number of iterations run; 2: also the largest skill change of each.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``X`` (``np.nan`` or ``None`` for NaN / None entries).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    skills_ : ndarray of shape (n_workers,)
        Fitted skill of each worker, in ``[0, 1]``: the weight of its votes.
    class_priors_ : ndarray of shape (n_classes,)
        Frequency of each class among the votes seen at fit: the soft label of a task without
        votes or whose votes all weigh 0.
    n_iter_ : int
        Iterations run.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of shape (n_workers,)
        Worker names, when ``X`` is a DataFrame with string column names.
    worker_ids_ : ndarray of shape (n_workers,)
        Original id of each worker, when fitted on long-format votes.

    See Also
    --------
    Wawa : One step: skills are the agreement with the plain majority vote.

    References
    ----------
    D. Ustalov, N. Pavlichenko and B. Tseitlin. "Learning from crowds with Crowd-Kit". arXiv
    2109.08584, 2021 (crowd-kit's ``ZeroBasedSkill``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import ZeroBasedSkill
    >>> votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 0], [1, 0, 1]])
    >>> zbs = ZeroBasedSkill().fit(votes)
    >>> zbs.skills_, zbs.n_iter_
    (array([1.  , 0.75, 0.5 ]), 2)
    >>> zbs.predict(votes)
    array([0, 1, 0, 1])
    """

    _parameter_constraints: dict = {
        **BaseWeightedVote._parameter_constraints,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "lr_init": [Interval(Real, 0.0, None, closed="neither")],
        "lr_steps_to_reduce": [Interval(Integral, 1, None, closed="left")],
        "lr_reduce_factor": [Interval(Real, 0.0, 1.0, closed="right")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_classes=None,
        *,
        max_iter=100,
        lr_init=1.0,
        lr_steps_to_reduce=20,
        lr_reduce_factor=0.5,
        tol=1e-6,
        verbose=0,
        missing_label=-1,
    ):
        self.n_classes = n_classes
        self.max_iter = max_iter
        self.lr_init = lr_init
        self.lr_steps_to_reduce = lr_steps_to_reduce
        self.lr_reduce_factor = lr_reduce_factor
        self.tol = tol
        self.verbose = verbose
        self.missing_label = missing_label

    def _fit_layout(self, layout):
        n_votes = np.bincount(layout.worker, minlength=layout.n_workers)
        voted = n_votes > 0
        skills = np.full(layout.n_workers, 1.0 / layout.n_classes)
        learning_rate = self.lr_init
        for n_iter in range(1, self.max_iter + 1):
            if n_iter % self.lr_steps_to_reduce == 0:
                learning_rate *= self.lr_reduce_factor
            credit = agreement_credit(layout, skills)
            agreement = np.divide(credit, n_votes, out=skills.copy(), where=voted)
            step = learning_rate * (agreement - skills)
            skills = skills + step
            change = np.max(np.abs(step))
            if self.verbose >= 2:
                print(f"  Iteration {n_iter}: largest skill change {change:.3g}")
            if change < self.tol:
                break
        if self.verbose:
            print(f"ZeroBasedSkill: {n_iter} iterations, last skill change {change:.3g}")
        self.n_iter_ = n_iter
        self.skills_ = fill_unassessed(skills, voted)
        self.class_priors_ = self._vote_frequencies(layout)

    def _worker_weights(self):
        return self.skills_
