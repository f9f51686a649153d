"""KOS: Karger, Oh and Shah's message passing for binary crowdsourced labels."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Integral, Interval, Real

from ._weighted_vote import BaseWeightedVote, fill_unassessed
from .kernels import kos_iteration


class KOS(BaseWeightedVote):
    """KOS: iterative message passing on the task-worker graph, for binary labels.

    Karger, Oh and Shah (2011) write the votes as ``A_ij = +1`` or ``-1`` (here: the second
    class of ``classes_`` is ``+1``) and pass real-valued messages along the votes: a task
    tells each of its workers what its *other* workers say, weighted by their reliability,
    ``x_{i->j} = sum_{j' in d(i) \\ j} A_ij' y_{j'->i}``, and a worker tells each of its tasks
    how reliable it is on its *other* tasks, ``y_{j->i} = sum_{i' in d(j) \\ i} A_i'j
    x_{i'->j}``. The worker messages start at independent ``N(1, 1)`` draws
    (``random_state``). A task's label is the sign of the reliability-weighted sum of its
    votes.

    The messages grow geometrically: they are rescaled to unit root mean square after every
    iteration, which changes no sign (crowd-kit stops early instead when they pass 1e300).
    Flipping every message and every label gives the same iteration: as the paper's positive
    initial messages assume, most votes come from better-than-random workers, so when the
    vote-weighted mean reliability ends negative (messages that did not settle, on a crowd
    with little structure), all reliabilities are flipped.
    The fitted model of worker ``j`` is its full message ``y_j = sum_{i in d(j)} A_ij
    x_{i->j}``, which is also the message it sends to a task it has not voted on: so
    ``predict`` and ``predict_proba`` label new tasks of the fitted workers exactly as the
    message passing would, and label the fitted tasks (``fit_predict``) by the sum of the KOS
    decisions of the last two iterations (identical signs once the messages' directions have
    converged). Iterations stop after ``max_iter`` or when every normalized reliability moves
    by less than ``tol``.

    The soft labels are the shares of the absolute reliability: a vote of a worker with
    ``y_j >= 0`` gives ``|y_j|`` to its class, one of a worker with ``y_j < 0`` (worse than
    random) gives it to the other class. A task without votes, or whose votes all weigh 0,
    gets ``class_priors_``. KOS has no likelihood, hence no ``score``. More than two classes
    raise a ValueError.

    Parameters
    ----------
    n_classes : int, default=None
        Number of classes when one never appears in the votes (at most 2): labels must be
        integers in ``range(n_classes)``. Default: the distinct labels seen.
    max_iter : int, default=100
        Maximum number of message-passing iterations (crowd-kit's ``n_iter``).
    tol : float, default=1e-6
        Stop when every reliability (divided by the largest absolute one) changes by less
        than ``tol``; ``tol=0`` runs ``max_iter`` iterations.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial worker messages.
    verbose : int, default=0
        1: print the number of iterations; 2: also the largest change of each.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote in ``X`` (``np.nan`` or ``None`` for NaN / None entries).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (``classes_[1]`` is the ``+1`` of the paper).
    reliabilities_ : ndarray of shape (n_workers,)
        Each worker's message ``y_j``, divided by the largest absolute one: larger is more
        reliable, negative is worse than random. It sums over the worker's tasks, so prolific
        reliable workers weigh more. A worker without votes at fit gets the mean. All ones when
        no task has two votes (the messages vanish): the majority vote.
    class_priors_ : ndarray of shape (n_classes,)
        Frequency of each class among the votes seen at fit.
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the reliabilities converged before ``max_iter``.
    n_features_in_ : int
        Number of workers.
    feature_names_in_ : ndarray of shape (n_workers,)
        Worker names, when ``X`` is a DataFrame with string column names.
    worker_ids_ : ndarray of shape (n_workers,)
        Original id of each worker, when fitted on long-format votes.

    See Also
    --------
    MMSR : Worker reliabilities from the workers' agreement matrix, any number of classes.

    References
    ----------
    D. R. Karger, S. Oh and D. Shah. "Iterative learning for reliable crowdsourcing systems".
    NeurIPS, 2011 (algorithm 1).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.aggregation import KOS
    >>> votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]] * 10)
    >>> kos = KOS(random_state=0).fit(votes)
    >>> kos.reliabilities_.round(2)  # worker 2 mostly disagrees with the others
    array([ 1.  ,  0.81, -1.  ])
    >>> kos.predict(votes[:5])
    array([0, 1, 0, 1, 0])
    >>> kos.predict_proba([[-1, 1, 1]]).round(3)  # worker 2's vote for 1 is evidence for 0
    array([[0.553, 0.447]])
    """

    _parameter_constraints: dict = {
        **BaseWeightedVote._parameter_constraints,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_classes=None, *, max_iter=100, tol=1e-6, random_state=None, verbose=0,
                 missing_label=-1):
        self.n_classes = n_classes
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.missing_label = missing_label

    def _fit_layout(self, layout):
        K = layout.n_classes
        if K > 2:
            raise ValueError(
                f"KOS is a binary method, but X has {K} classes ({self.classes_.tolist()}); "
                "use MMSR, Wawa, ZeroBasedSkill or DawidSkene for more than two classes."
            )
        sign = 2.0 * layout.label - 1.0  # class index 1 -> +1, 0 -> -1
        y = check_random_state(self.random_state).normal(1.0, 1.0, size=layout.n_votes)
        x = np.empty(layout.n_votes)
        previous, converged, change = None, False, np.inf
        for n_iter in range(1, self.max_iter + 1):
            reliabilities, scale = kos_iteration(layout, sign, y, x)
            if scale == 0:  # no task has two votes: nothing flows
                reliabilities, converged = np.ones(layout.n_workers), True
                break
            if previous is not None:
                change = np.max(np.abs(reliabilities - previous))
                if self.verbose >= 2:
                    print(f"  Iteration {n_iter}: largest reliability change {change:.3g}")
                if change < self.tol:
                    converged = True
                    break
            previous = reliabilities
        if self.verbose:
            print(f"KOS: {n_iter} iterations, last change {change:.3g}")
        if not converged and self.tol > 0:
            warnings.warn(
                f"KOS did not converge in max_iter={self.max_iter} iterations (last largest "
                f"reliability change {change:.3g} > tol={self.tol}). Increase max_iter or tol.",
                ConvergenceWarning,
            )
        n_votes = np.bincount(layout.worker, minlength=layout.n_workers)
        if np.dot(n_votes, reliabilities) < 0:  # the mirror solution: most votes adversarial
            reliabilities = -reliabilities
        self.reliabilities_ = fill_unassessed(reliabilities, n_votes > 0)
        self.n_iter_, self.converged_ = n_iter, converged
        self.class_priors_ = self._vote_frequencies(layout)

    def _worker_weights(self):
        return self.reliabilities_
