"""Simulated crowds: workers with known confusion matrices voting on known truth.

Every simulated worker ``j`` has a confusion matrix ``confusions[j]`` whose row
``k`` is the distribution of the vote given the true class ``k``. Votes are
drawn for observed ``(task, worker)`` pairs only, as triplets, so crowds of
1e7 votes are simulated in seconds without a dense tasks x workers x classes
tensor.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.utils import Bunch, check_random_state, column_or_1d
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ..votes import Votes, _fmt

__all__ = ["make_confusion_matrix", "simulate_annotators", "make_crowd_classification"]

WORKER_TYPES = ("regular", "spammer", "adversarial", "constant")

# Votes whose label is drawn in one vectorized step (bounds the n_votes x K
# cumulative-probability gather to about 32 MB).
_LABEL_CHUNK_ENTRIES = 2**22


@validate_params(
    {
        "n_classes": [Interval(Integral, 2, None, closed="left")],
        "noise": [Interval(Real, 0, 1, closed="both")],
        "pattern": [StrOptions({"uniform", "asymmetric", "symmetric"})],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_confusion_matrix(n_classes, *, noise=0.3, pattern="uniform", random_state=None):
    """A confusion matrix with a given noise strength and confusion pattern.

    Row ``k`` is the distribution of a vote on a task of true class ``k``; the
    diagonal is ``1 - noise`` and the off-diagonal mass ``noise`` of each row
    goes to the classes chosen by ``pattern`` (the noise patterns of Chu et
    al., 2021, section "Synthesizing annotations"):

    - ``"uniform"``: spread evenly over the other classes;
    - ``"asymmetric"``: every class is mapped to one other class, chosen
      uniformly at random;
    - ``"symmetric"``: classes are paired at random and each pair is flipped
      into each other (with an odd number of classes one class is left
      unpaired and noise-free).

    Use it for the ``class_confusion`` and ``common_confusion`` arguments of
    :func:`simulate_annotators`.

    Parameters
    ----------
    n_classes : int
        Number of classes ``K >= 2``.
    noise : float, default=0.3
        Off-diagonal mass of each row (noise strength).
    pattern : {"uniform", "asymmetric", "symmetric"}, default="uniform"
        Which classes receive the noise.
    random_state : int, RandomState instance or None, default=None
        Draws the targets of the asymmetric and symmetric patterns.

    Returns
    -------
    ndarray of shape (n_classes, n_classes)
        Row-stochastic confusion matrix.

    References
    ----------
    Z. Chu, J. Ma, H. Wang. "Learning from crowds by modeling common
    confusions", AAAI 2021.

    Examples
    --------
    >>> from skcrowd.datasets import make_confusion_matrix
    >>> make_confusion_matrix(3, noise=0.3)
    array([[0.7 , 0.15, 0.15],
           [0.15, 0.7 , 0.15],
           [0.15, 0.15, 0.7 ]])
    >>> make_confusion_matrix(2, noise=0.2, pattern="symmetric", random_state=0)
    array([[0.8, 0.2],
           [0.2, 0.8]])
    """
    K = n_classes
    if pattern == "uniform":
        conf = np.full((K, K), noise / (K - 1))
        np.fill_diagonal(conf, 1.0 - noise)
        return conf
    rng = check_random_state(random_state)
    conf = np.eye(K)
    if pattern == "asymmetric":
        # a uniform class among the K - 1 others: shift by 1 .. K-1
        target = (np.arange(K) + rng.randint(1, K, size=K)) % K
        rows = np.arange(K)
    else:
        order = rng.permutation(K)
        a, b = order[0 : K - K % 2 : 2], order[1 : K - K % 2 : 2]
        rows, target = np.r_[a, b], np.r_[b, a]
    conf[rows, rows] = 1.0 - noise
    conf[rows, target] = noise
    return conf


def _per_worker(value, n_workers, rng, name, low=0.0, high=1.0):
    """A per-worker parameter from a scalar, a ``(low, high)`` tuple or an array."""
    if isinstance(value, tuple):
        if len(value) != 2 or not value[0] <= value[1]:
            raise ValueError(f"{name} as a tuple must be a range (low, high), got {value!r}.")
        out = rng.uniform(value[0], value[1], size=n_workers)
    else:
        out = np.asarray(value, dtype=np.float64)
        if out.ndim == 0:
            out = np.full(n_workers, float(out))
        elif out.shape != (n_workers,):
            raise ValueError(
                f"{name} must be a scalar, a (low, high) tuple or an array of one value per "
                f"worker (n_workers={n_workers}), got shape {out.shape}."
            )
    bad = ~np.isfinite(out) | (out < low) | (out > high)
    if bad.any():
        j = int(np.argmax(bad))
        raise ValueError(f"{name} of worker {j} is {_fmt(out[j])}; it must lie in [{low}, {high}].")
    return out


def _check_confusion(matrix, n_classes, name, row_stochastic):
    """A ``(K, K)`` non-negative matrix; rows summing to one if ``row_stochastic``."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.shape != (n_classes, n_classes):
        raise ValueError(
            f"{name} must have shape (n_classes, n_classes) = ({n_classes}, {n_classes}), "
            f"got {m.shape}."
        )
    bad = ~np.isfinite(m) | (m < 0)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(f"{name} has entry {_fmt(m[r, c])} at row {r}, column {c}; must be >= 0.")
    if row_stochastic:
        off = np.abs(m.sum(axis=1) - 1) > 1e-8
        if off.any():
            r = int(np.argmax(off))
            raise ValueError(f"row {r} of {name} sums to {_fmt(m[r].sum())}, not 1.")
    return m


def _worker_types(worker_types, spammers, adversarial, n_workers, rng):
    if worker_types is not None:
        types = np.asarray(worker_types, dtype=object)
        if types.shape != (n_workers,):
            raise ValueError(
                f"worker_types must hold one type per worker (n_workers={n_workers}), "
                f"got shape {types.shape}."
            )
        bad = ~np.isin(types, WORKER_TYPES)
        if bad.any():
            j = int(np.argmax(bad))
            raise ValueError(
                f"worker_types[{j}] is {_fmt(types[j])}; expected one of {list(WORKER_TYPES)}."
            )
        return types.astype(str)
    n_spam, n_adv = round(spammers * n_workers), round(adversarial * n_workers)
    if n_spam + n_adv > n_workers:
        raise ValueError(
            f"spammers={spammers} and adversarial={adversarial} ask for {n_spam} + {n_adv} "
            f"workers out of n_workers={n_workers}."
        )
    types = np.full(n_workers, "regular", dtype="<U11")
    chosen = rng.permutation(n_workers)
    types[chosen[:n_spam]] = "spammer"
    types[chosen[n_spam : n_spam + n_adv]] = "adversarial"
    return types


def _individual_confusions(
    types, n_classes, accuracy, class_confusion, sensitivity, specificity, rng
):
    """Confusion matrices of each worker before the common confusion is mixed in."""
    n_workers, K = len(types), n_classes
    if sensitivity is not None or specificity is not None:
        if sensitivity is None or specificity is None:
            raise ValueError("give both sensitivity and specificity (binary workers), or neither.")
        if K != 2:
            raise ValueError(f"sensitivity/specificity describe binary workers, got n_classes={K}.")
        sens = _per_worker(sensitivity, n_workers, rng, "sensitivity")
        spec = _per_worker(specificity, n_workers, rng, "specificity")
        conf = np.empty((n_workers, 2, 2))
        conf[:, 0, 0], conf[:, 0, 1] = spec, 1.0 - spec
        conf[:, 1, 0], conf[:, 1, 1] = 1.0 - sens, sens
    else:
        acc = _per_worker(accuracy, n_workers, rng, "accuracy")
        if class_confusion is None:
            weights = np.ones((K, K))
        else:
            weights = _check_confusion(class_confusion, K, "class_confusion", False).copy()
        np.fill_diagonal(weights, 0.0)
        row_sums = weights.sum(axis=1, keepdims=True)
        if (row_sums == 0).any():
            k = int(np.argmax(row_sums.ravel() == 0))
            raise ValueError(
                f"class_confusion has no off-diagonal weight in row {k}: class {k} could "
                "never be mistaken for another class."
            )
        mistakes = weights / row_sums
        conf = acc[:, None, None] * np.eye(K) + (1.0 - acc)[:, None, None] * mistakes

    spam = types == "spammer"
    conf[spam] = 1.0 / K

    adv = np.flatnonzero(types == "adversarial")
    if len(adv):
        # random derangement per worker: sigma^-1((sigma(k) + shift) mod K), shift in 1..K-1
        sigma = np.argsort(rng.random_sample((len(adv), K)), axis=1)
        sigma_inv = np.argsort(sigma, axis=1)
        shift = rng.randint(1, K, size=(len(adv), 1))
        perm = np.take_along_axis(sigma_inv, (sigma + shift) % K, axis=1)
        out = np.zeros_like(conf[adv])
        rows = np.arange(len(adv))[:, None, None]
        out[rows, np.arange(K)[None, :, None], perm[:, None, :]] = conf[adv]
        conf[adv] = out  # the worker answers perm[l] where a regular worker answers l

    const = np.flatnonzero(types == "constant")
    if len(const):
        conf[const] = 0.0
        conf[const, :, rng.randint(0, K, size=len(const))] = 1.0
    return conf


def _block_positions(starts, lengths):
    """Concatenated ``arange(starts[i], starts[i] + lengths[i])``."""
    offsets = np.repeat(starts - np.cumsum(np.r_[0, lengths[:-1]]), lengths)
    return offsets + np.arange(int(lengths.sum()))


def _distinct_workers_by_rejection(k, n_workers, rng):
    """``k[i]`` distinct uniform workers for task ``i`` (``2 * k[i] <= n_workers``).

    Draw with replacement, then redraw duplicates until none is left,
    re-checking only the tasks that had one.
    """
    indptr = np.r_[0, np.cumsum(k)]
    task = np.repeat(np.arange(len(k)), k)
    worker = rng.randint(0, n_workers, size=len(task))
    check = np.arange(len(task))
    while len(check):
        key = task[check] * n_workers + worker[check]
        order = np.argsort(key, kind="stable")  # ties: the first draw stays, the later redraw
        sorted_key = key[order]
        dup = check[order[1:][sorted_key[1:] == sorted_key[:-1]]]
        if not len(dup):
            break
        worker[dup] = rng.randint(0, n_workers, size=len(dup))
        bad = np.unique(task[dup])
        check = _block_positions(indptr[bad], k[bad])
    return task, worker


def _sample_pairs(n_per_task, n_workers, rng):
    """Task-sorted (task, worker) pairs, ``n_per_task[i]`` distinct workers per task.

    Tasks asking for more than half of the workers draw the workers who do
    *not* vote instead, so rejection sampling stays fast; their voters come
    from a boolean mask whose size is at most twice their number of votes.
    """
    complement = 2 * n_per_task > n_workers
    k = np.where(complement, n_workers - n_per_task, n_per_task)
    task, worker = _distinct_workers_by_rejection(k, n_workers, rng)
    if not complement.any():
        return task, worker
    dropped = complement[task]
    comp_tasks = np.flatnonzero(complement)
    mask = np.ones((len(comp_tasks), n_workers), dtype=bool)
    mask[np.searchsorted(comp_tasks, task[dropped]), worker[dropped]] = False
    rows, comp_worker = np.nonzero(mask)
    task = np.concatenate([task[~dropped], comp_tasks[rows]])
    worker = np.concatenate([worker[~dropped], comp_worker])
    order = np.argsort(task, kind="stable")  # two sorted runs: a linear merge
    return task[order], worker[order]


def _sample_labels(confusions, worker, true_class, rng):
    """Draw each vote from row ``true_class`` of its worker's confusion matrix."""
    n_workers, K, _ = confusions.shape
    cum = np.cumsum(confusions, axis=2).reshape(n_workers * K, K)
    cum /= cum[:, -1:]  # last entry exactly 1.0, so a uniform draw in [0, 1) always lands
    row = worker * K + true_class
    label = np.empty(len(row), dtype=np.int64)
    chunk = max(1, _LABEL_CHUNK_ENTRIES // K)
    for start in range(0, len(row), chunk):
        stop = min(start + chunk, len(row))
        u = rng.random_sample(stop - start)
        # first class whose cumulative probability exceeds u (skips empty classes)
        label[start:stop] = (cum[row[start:stop]] <= u[:, None]).sum(axis=1)
    return label


@validate_params(
    {
        "y_true": ["array-like"],
        "n_workers": [Interval(Integral, 1, None, closed="left")],
        "n_classes": [Interval(Integral, 2, None, closed="left"), None],
        "accuracy": [Interval(Real, 0, 1, closed="both"), tuple, "array-like"],
        "votes_per_task": [Interval(Integral, 1, None, closed="left"), tuple, None],
        "spammers": [Interval(Real, 0, 1, closed="both")],
        "adversarial": [Interval(Real, 0, 1, closed="both")],
        "worker_types": ["array-like", None],
        "class_confusion": ["array-like", None],
        "sensitivity": [Interval(Real, 0, 1, closed="both"), tuple, "array-like", None],
        "specificity": [Interval(Real, 0, 1, closed="both"), tuple, "array-like", None],
        "common_confusion": ["array-like", None],
        "common_weight": [Interval(Real, 0, 1, closed="both"), tuple, "array-like"],
        "output": [StrOptions({"dense", "sparse", "triplets"})],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def simulate_annotators(
    y_true,
    n_workers,
    *,
    n_classes=None,
    accuracy=0.7,
    votes_per_task=None,
    spammers=0.0,
    adversarial=0.0,
    worker_types=None,
    class_confusion=None,
    sensitivity=None,
    specificity=None,
    common_confusion=None,
    common_weight=0.5,
    output="dense",
    random_state=None,
):
    """Simulate a crowd of workers with known confusion matrices labelling tasks.

    Each worker ``j`` gets a confusion matrix ``C_j`` (row ``k``: distribution
    of the vote on a task of true class ``k``); each task is labelled by
    ``votes_per_task`` distinct workers chosen uniformly at random, and each
    vote is drawn from ``C_j[y_true[i]]``. Worker kinds:

    - ``"regular"``: accuracy ``a_j`` on every class; the mistakes
      ``1 - a_j`` go to the other classes in proportion to ``class_confusion``
      (uniformly by default). With ``sensitivity`` and ``specificity`` (binary
      tasks) the matrix is ``[[spec, 1 - spec], [1 - sens, sens]]`` instead,
      as for the simulated annotators of Rodrigues & Pereira (2018).
    - ``"spammer"``: uniform random answers.
    - ``"adversarial"``: a regular worker whose answers are relabelled by a
      random permutation without fixed point (it systematically gives
      another class; with two classes it flips the labels).
    - ``"constant"``: always gives the same, randomly chosen class.

    With ``common_confusion`` every worker's matrix becomes
    ``w_j * common_confusion + (1 - w_j) * C_j``: each vote comes from the
    shared common confusion with probability ``w_j = common_weight``, as in
    the simulation of Chu et al. (2021). The returned ``confusions`` include
    this mixture: they are the exact distributions the votes were drawn from.

    Class imbalance comes from the ``y_true`` you pass (see
    :func:`make_crowd_classification`).

    Parameters
    ----------
    y_true : array-like of shape (n_tasks,)
        True class index of each task, in ``0 .. n_classes - 1``.
    n_workers : int
        Number of workers.
    n_classes : int, default=None
        Number of classes; default ``max(y_true) + 1`` (at least 2).
    accuracy : float, (low, high) tuple or array-like of shape (n_workers,), default=0.7
        Accuracy of the regular and adversarial workers: one value for all, a
        range to draw each worker's uniformly from, or one value per worker.
    votes_per_task : int, (low, high) tuple or None, default=None
        Number of distinct workers voting on each task: a constant, an
        inclusive range to draw each task's uniformly from, or None for
        every worker on every task.
    spammers : float, default=0.0
        Fraction of workers who are spammers (rounded to a number of workers).
    adversarial : float, default=0.0
        Fraction of workers who are adversarial.
    worker_types : array-like of shape (n_workers,), default=None
        Kind of each worker (``"regular"``, ``"spammer"``, ``"adversarial"``,
        ``"constant"``); overrides ``spammers`` and ``adversarial``.
    class_confusion : array-like of shape (n_classes, n_classes), default=None
        Non-negative weights of which classes get confused: the mistakes on
        class ``k`` go to class ``l`` in proportion to ``class_confusion[k, l]``
        (the diagonal is ignored; each row needs an off-diagonal weight). A
        matrix from :func:`make_confusion_matrix` works.
    sensitivity, specificity : float, tuple or array-like of shape (n_workers,), default=None
        Binary workers (``n_classes=2``): probability of voting 1 on a task of
        class 1, and 0 on a task of class 0. Replace ``accuracy`` and
        ``class_confusion`` for the regular and adversarial workers.
    common_confusion : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic confusion matrix shared by all workers.
    common_weight : float, tuple or array-like of shape (n_workers,), default=0.5
        Probability that a worker's vote comes from ``common_confusion``;
        unused without it.
    output : {"dense", "sparse", "triplets"}, default="dense"
        Format of ``votes``: a dense ``(n_tasks, n_workers)`` int64 array with
        -1 for missing votes; a ``scipy.sparse.csr_array`` whose stored entries
        (explicit zeros included) are the votes; or a :class:`skcrowd.Votes`
        of task-sorted triplets. Use one of the last two for large crowds.
    random_state : int, RandomState instance or None, default=None
        Seed of every random draw.

    Returns
    -------
    sklearn.utils.Bunch
        With attributes

        votes : ndarray, csr_array or Votes
            The simulated votes (class indices), see ``output``.
        confusions : ndarray of shape (n_workers, n_classes, n_classes)
            True confusion matrix of each worker (rows sum to one).
        worker_type : ndarray of shape (n_workers,) of str
            Kind of each worker.

    References
    ----------
    F. Rodrigues, F. Pereira. "Deep learning from crowds", AAAI 2018
    (simulated annotators with sensitivities and specificities).

    Z. Chu, J. Ma, H. Wang. "Learning from crowds by modeling common
    confusions", AAAI 2021 (common confusion).

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.datasets import simulate_annotators
    >>> y = np.array([0, 1, 1, 0, 1])
    >>> sim = simulate_annotators(y, 5, sensitivity=[0.6, 0.9, 0.5, 0.9, 0.9],
    ...                           specificity=[0.7, 0.8, 0.5, 0.2, 0.9],
    ...                           votes_per_task=3, random_state=0)
    >>> sim.votes.shape, (sim.votes >= 0).sum(axis=1).tolist()
    ((5, 5), [3, 3, 3, 3, 3])
    >>> sim.confusions[1]
    array([[0.8, 0.2],
           [0.1, 0.9]])
    """
    y = column_or_1d(np.asarray(y_true), warn=True)
    if y.dtype.kind == "f" and np.all(y == np.round(y)):
        y = y.astype(np.int64)
    if y.dtype.kind not in "iu" or len(y) == 0:
        raise ValueError(
            f"y_true must be a non-empty array of class indices 0 .. n_classes - 1, got "
            f"dtype {y.dtype} and {len(y)} entries."
        )
    K = max(2, int(y.max()) + 1) if n_classes is None else n_classes
    bad = (y < 0) | (y >= K)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"y_true has label {int(y[i])} at row {i}, outside 0 .. n_classes - 1 = {K - 1}."
        )
    rng = check_random_state(random_state)
    n_tasks = len(y)

    types = _worker_types(worker_types, spammers, adversarial, n_workers, rng)
    conf = _individual_confusions(
        types, K, accuracy, class_confusion, sensitivity, specificity, rng
    )
    if common_confusion is not None:
        common = _check_confusion(common_confusion, K, "common_confusion", True)
        w = _per_worker(common_weight, n_workers, rng, "common_weight")[:, None, None]
        conf = w * common + (1.0 - w) * conf

    if votes_per_task is None:
        n_per_task = np.full(n_tasks, n_workers)
    elif isinstance(votes_per_task, tuple):
        if len(votes_per_task) != 2 or not 1 <= votes_per_task[0] <= votes_per_task[1]:
            raise ValueError(
                f"votes_per_task as a tuple must be a range (low, high) with "
                f"1 <= low <= high, got {votes_per_task!r}."
            )
        low, high = votes_per_task
        n_per_task = rng.randint(low, high + 1, size=n_tasks)
    else:
        n_per_task = np.full(n_tasks, votes_per_task)
    if n_per_task.max() > n_workers:
        raise ValueError(
            f"votes_per_task={votes_per_task!r} asks for more distinct workers per task than "
            f"n_workers={n_workers}."
        )
    task, worker = _sample_pairs(n_per_task.astype(np.int64), n_workers, rng)
    label = _sample_labels(conf, worker, y[task], rng)

    if output == "dense":
        votes = np.full((n_tasks, n_workers), -1, dtype=np.int64)
        votes[task, worker] = label
    elif output == "sparse":
        indptr = np.r_[0, np.cumsum(np.bincount(task, minlength=n_tasks))]
        votes = sp.csr_array((label, worker, indptr), shape=(n_tasks, n_workers))
    else:
        votes = Votes(
            task=task, worker=worker, label=label, n_tasks=n_tasks, n_workers=n_workers,
            classes=np.arange(K),
        )
    return Bunch(votes=votes, confusions=conf, worker_type=types)


def make_crowd_classification(
    n_samples=500,
    *,
    n_features=20,
    n_classes=3,
    weights=None,
    class_sep=1.0,
    n_workers=10,
    random_state=None,
    **annotator_params,
):
    """A classification problem with features, true labels and simulated crowd votes.

    :func:`sklearn.datasets.make_classification` draws the features and the
    true classes (``weights`` sets the class proportions, for imbalanced
    problems); :func:`simulate_annotators` draws the votes.

    Parameters
    ----------
    n_samples : int, default=500
        Number of tasks.
    n_features : int, default=20
        Number of features; half of them (at least enough to separate the
        classes) are informative, the others noise.
    n_classes : int, default=3
        Number of classes.
    weights : array-like of shape (n_classes,), default=None
        Proportion of each class (balanced when None).
    class_sep : float, default=1.0
        Separation of the classes in feature space (larger is easier).
    n_workers : int, default=10
        Number of simulated workers.
    random_state : int, RandomState instance or None, default=None
        Seed of the features, the truth and the votes.
    **annotator_params
        Keyword arguments of :func:`simulate_annotators` (``accuracy``,
        ``votes_per_task``, ``spammers``, ...).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (n_samples, n_features), ``target`` (true classes), and the
        ``votes``, ``confusions`` and ``worker_type`` of
        :func:`simulate_annotators`.

    Examples
    --------
    >>> from skcrowd.datasets import make_crowd_classification
    >>> crowd = make_crowd_classification(200, n_classes=2, weights=[0.8, 0.2],
    ...                                   n_workers=6, votes_per_task=3,
    ...                                   random_state=0)
    >>> crowd.data.shape, crowd.votes.shape
    ((200, 20), (200, 6))
    >>> bool((crowd.target == 0).mean() > 0.7)
    True
    """
    rng = check_random_state(random_state)
    n_informative = min(n_features, max(n_features // 2, int(np.ceil(np.log2(n_classes))) + 1))
    X, y = make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=n_informative,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        weights=weights,
        class_sep=class_sep,
        random_state=rng,
    )
    crowd = simulate_annotators(
        y, n_workers, n_classes=n_classes, random_state=rng, **annotator_params
    )
    return Bunch(data=X, target=y, **crowd)
