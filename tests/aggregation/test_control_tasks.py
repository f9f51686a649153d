"""Control tasks (``fit(X, y=known)``) and per-task priors (``task_prior``) in the EM driver."""

import numpy as np
import pytest
from scipy.optimize import brentq
from sklearn.base import clone

from skcrowd.aggregation import (EBCC, GLAD, MACE, BayesianDawidSkene, DawidSkene,
                                 OneCoinDawidSkene, WeightedDawidSkene, kernels)
from skcrowd.datasets import simulate_annotators
from skcrowd.utils.discovery import all_estimators

# Every aggregator that takes known tasks and task_prior, found by all_estimators (a new one is
# tested without editing this list); seeded, for EBCC's random starts.
EM = [cls(random_state=0) for _, cls in all_estimators(type_filter="aggregator")
      if getattr(cls, "_supports_task_priors", False)]


def ids(model):
    return type(model).__name__


@pytest.fixture(params=["numba", "numpy"])
def engine(request, monkeypatch):
    if request.param == "numba" and kernels.numba is None:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(kernels, "ENGINE", request.param)
    return request.param


def label_switched_crowd(seed, n_classes, n_tasks=1000, share_known=0.0):
    """60 % of 30 workers adversarial (each relabels the classes by its own permutation without
    fixed point), 5 votes per task: majority vote and unsupervised EM follow them."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(n_classes, size=n_tasks)
    sim = simulate_annotators(truth, 30, adversarial=0.6, accuracy=(0.7, 0.9),
                              votes_per_task=5, random_state=seed)
    known = np.zeros(n_tasks, dtype=bool)
    known[rng.choice(n_tasks, int(share_known * n_tasks), replace=False)] = True
    return sim.votes, truth, known


# -- the hand-computed case ------------------------------------------------------------


def test_a_known_task_fixes_the_confusion_estimate_by_hand(engine):
    """Two tasks, both voted 0 by worker 0 and 1 by worker 1; task 0 is known to be 0.

    Without it the crowd is symmetric (posteriors 0.5). With it, EM (smoothing s = 1: pseudo
    counts 1.5 on the diagonal, 0.5 off it, 0.5 per class prior) converges to the fixed point
    r = P(task 1 is 0): the M-step gives rho_0 = (1.5 + r) / 3, worker 0's rows
    [(2.5 + r), 0.5] / (3 + r) (true 0) and [1.5 - r, 1.5] / (3 - r) (true 1), worker 1's
    [1.5, 1.5 + r] / (3 + r) and [0.5, 2.5 - r] / (3 - r); task 1's posterior is then
    g(r) / (g(r) + g(-r)) with g(r) = (1.5 + r)**2 (2.5 + r) / (3 + r)**2.
    """
    X = np.array([[0, 1], [0, 1]])
    unsupervised = DawidSkene(smoothing=1.0).fit(X)
    np.testing.assert_allclose(unsupervised.predict_proba(X), 0.5)

    def g(r):
        return (1.5 + r) ** 2 * (2.5 + r) / (3 + r) ** 2

    r = brentq(lambda r: g(r) / (g(r) + g(-r)) - r, 0.0, 1.0, xtol=1e-15)
    ds = DawidSkene(smoothing=1.0, tol=0, max_iter=200)  # to the fixed point
    with pytest.warns(Warning):  # tol=0: ConvergenceWarning
        np.testing.assert_array_equal(ds.fit_predict(X, [0, -1]), [0, 0])
    # predict_proba is the model's posterior given the votes alone: both tasks alike
    np.testing.assert_allclose(ds.predict_proba(X), [[r, 1 - r]] * 2, rtol=1e-9)
    np.testing.assert_allclose(ds.class_priors_, [(1.5 + r) / 3, (1.5 - r) / 3], rtol=1e-9)
    np.testing.assert_allclose(ds.confusion_matrices_, [
        [[(2.5 + r) / (3 + r), 0.5 / (3 + r)], [(1.5 - r) / (3 - r), 1.5 / (3 - r)]],
        [[1.5 / (3 + r), (1.5 + r) / (3 + r)], [0.5 / (3 - r), (2.5 - r) / (3 - r)]],
    ], rtol=1e-9)
    assert r == pytest.approx(0.91129, abs=1e-5)


# -- anchoring label-switched crowds ---------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("model", [DawidSkene(), GLAD(), OneCoinDawidSkene(),
                                   BayesianDawidSkene(), EBCC(random_state=0)], ids=ids)
def test_two_percent_known_tasks_undo_label_switching(model, n_classes):
    """2 % known tasks anchor EM on a crowd with an adversarial majority (accuracy on the other
    tasks, mean of 3 crowds, > 0.8). EBCC on 3 classes needs 5 %: with 2 %, its subtypes take
    the few known tasks of a class into a subtype of their own on most crowds (0.32 to 0.96).

    With two classes the only derangement is the swap, so the adversaries agree and unsupervised
    EM follows them on every crowd (0.04 to 0.10 accuracy on 9 crowds, seeds 0-2, 1000-1002 and
    2000-2002, every model). With three classes each adversary picks one of the two cyclic shifts,
    the classes are exchangeable, and which labelling unsupervised EM lands on is a coin flip per
    crowd (means of 3 crowds 0.31 to 0.96 on those seeds): there the premise is asserted only on
    the crowds where EM did switch; on the others the anchors change near ties only (within 1 %).
    Measured anchored means on those seeds: DS 0.96-0.97, GLAD and OneCoin 0.87-0.90, BDS
    0.87-0.97 (one crowd anchored at 0.71 only), EBCC (5 %) 0.96-0.97; two classes 0.93-0.94 for
    every model. A crowd's accuracy varies by about 0.02 between draws, a mean of 3 by about
    0.012: the bound 0.8 sits three of those below the lowest mean (GLAD, 0.87), far above the
    switched 0.02-0.10.
    """
    share = 0.05 if isinstance(model, EBCC) and n_classes == 3 else 0.02
    _assert_anchoring_undoes_switching(_anchored_accuracy(model, n_classes, share, per_crowd=True),
                                       share, n_classes, mean_floor=0.8, cost=0.01)


@pytest.mark.parametrize("n_classes, share", [(2, 0.1), (3, 0.02)])
def test_known_tasks_undo_label_switching_in_mace(n_classes, share):
    """MACE gives no vote a negative weight (an adversary is at best a spammer), so known tasks
    anchor it through the start of EM only: 2 % of them suffice with K=3, K=2 needs more (5 %
    anchors 2 of 5 crowds, 10 % all five).

    Measured on seeds 0-2, 1000-1002, 2000-2002, 3000-3002: K=2 unanchored 0.11-0.14 on every
    crowd (the swap is the only derangement), anchored 0.80-0.85; K=3 unanchored is a coin flip
    per crowd (0.07-0.09 where EM followed the adversaries, 0.77-0.84 where it did not),
    anchored 0.77-0.84 (means of 3 crowds 0.786-0.825; a mean of 3 varies by about 0.012, so the
    bound 0.75 is three of those below the lowest mean)."""
    # where EM was right, the anchored start may end at a nearby optimum: -0.012 to +0.006
    _assert_anchoring_undoes_switching(_anchored_accuracy(MACE(), n_classes, share, per_crowd=True),
                                       share, n_classes, mean_floor=0.75, cost=0.02)


def _assert_anchoring_undoes_switching(accuracy, share, n_classes, *, mean_floor, cost):
    """``accuracy[share]``: per-crowd accuracy with that share of known tasks (0.0: none).
    Unanchored EM follows the adversaries on every binary crowd; the anchored mean is above
    ``mean_floor``; where EM followed the adversaries the known tasks take it back, and where it
    did not they cost at most ``cost``."""
    if n_classes == 2:
        assert np.all(accuracy[0.0] < 0.2)
    assert np.mean(accuracy[share]) > mean_floor
    switched = accuracy[0.0] < 0.5
    assert np.all(accuracy[share][switched] > accuracy[0.0][switched] + 0.5)
    assert np.all(accuracy[share][~switched] >= accuracy[0.0][~switched] - cost)


def _anchored_accuracy(model, n_classes, share, per_crowd=False):
    """Accuracy on the tasks not known, mean of 3 label-switched crowds (or the 3 accuracies,
    ``per_crowd``), without known tasks and with ``share`` of them."""
    accuracy = {}
    for s in (0.0, share):
        scores = []
        for seed in range(3):
            votes, truth, known = label_switched_crowd(seed, n_classes, share_known=s)
            labels = clone(model).fit_predict(votes, np.where(known, truth, -1))
            scores.append(np.mean(labels[~known] == truth[~known]))
        accuracy[s] = np.array(scores) if per_crowd else np.mean(scores)
    return accuracy


@pytest.mark.parametrize("seed", range(3))
def test_known_tasks_do_not_hurt_where_em_is_right(seed):
    """K=4: the adversaries' derangements disagree, so EM is right (0.959 to 0.977 on seeds 0-5,
    1000-1002, 2000-2002). 5 % known tasks change the labels of 0 to 3 of the 950 other tasks,
    tasks at a near tie, in either direction (net -1 to +1 task on those 12 crowds): they must
    not cost more than 0.5 % (about 5 tasks), far from the loss of a wrong anchor."""
    votes, truth, known = label_switched_crowd(seed, 4, share_known=0.05)
    plain = DawidSkene().fit_predict(votes)
    anchored = DawidSkene().fit_predict(votes, np.where(known, truth, -1))
    assert np.mean(plain == truth) > 0.95
    other = ~known
    assert (np.mean(anchored[other] == truth[other])
            >= np.mean(plain[other] == truth[other]) - 0.005)


def imbalanced_crowd(seed, n_tasks=10000):
    """92 % of the tasks in one class, 57 workers (accuracy 0.55-0.9, the rare classes mistaken
    mostly for the common one), 2-4 votes per task; a gold subset of 576 tasks, 92 % common."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, size=n_tasks, p=[0.92, 0.05, 0.03])
    sim = simulate_annotators(truth, 57, accuracy=(0.55, 0.9), votes_per_task=(2, 4),
                              class_confusion=[[0, 1, 1], [5, 0, 1], [5, 1, 0]],
                              output="sparse", random_state=seed)
    common, rare = np.flatnonzero(truth == 0), np.flatnonzero(truth > 0)
    gold = np.concatenate([rng.choice(common, 530, replace=False),
                           rng.choice(rare, 46, replace=False)])
    return sim.votes, truth, gold, rng


def _known_gold_draws(votes, truth, gold, rng, n_draws=3, n_known=29):
    """DawidSkene's labels without known tasks and with each of ``n_draws`` draws of
    ``n_known`` known gold tasks: ``(plain, anchored, known, other)`` per draw, ``other`` the
    mask of the tasks not known."""
    plain = DawidSkene().fit_predict(votes)
    for _ in range(n_draws):
        known = rng.choice(gold, n_known, replace=False)
        y = np.full(len(truth), -1)
        y[known] = truth[known]
        other = np.ones(len(truth), dtype=bool)
        other[known] = False
        yield plain, DawidSkene().fit_predict(votes, y), known, other


@pytest.mark.parametrize("seed", range(3))
def test_a_few_known_tasks_do_not_hurt_an_imbalanced_crowd(seed):
    """Issue 23, section 4: on an unseen crowd of 42,624 tasks (57 workers, 3 classes, gold 92 %
    one class), 5 % of the gold as known tasks cost DawidSkene 2.0-2.6 points on the other gold
    tasks. A crowd built like it (10,000 tasks, 29 known tasks drawn from the imbalanced gold)
    does not reproduce the loss: measured on seeds 0-5, 3 draws each, the known tasks change the
    other tasks by -3 to +27 tasks of about 9,970 and the other gold tasks by -3 to +2 of 547
    (the reported loss is 11 to 14 of them). This guards the guarantee where the issue saw it
    broken: at most 0.2 % of the other tasks (20) and 1 % of the other gold tasks (5), far
    inside the reported loss."""
    votes, truth, gold, rng = imbalanced_crowd(seed)
    for plain, anchored, known, other in _known_gold_draws(votes, truth, gold, rng):
        other_gold = np.setdiff1d(gold, known)
        for scored, bound in ((other, 0.002), (other_gold, 0.01)):
            assert (np.mean(anchored[scored] == truth[scored])
                    >= np.mean(plain[scored] == truth[scored]) - bound)


def hard_imbalanced_crowd(seed=145, n_tasks=15000, n_workers=57):
    """A random crowd configuration, the one of 383 searched (seeds 0-382; 15,000 tasks, 57
    workers, 3 classes) where 29 known tasks cost the most: 80 % of the tasks in one class,
    accuracy 0.51-0.61, 10 spammers and 4 constant workers, 1-3 votes per task from workers of
    Pareto-distributed activity; a random gold subset of 576 tasks."""
    rng = np.random.default_rng(seed)
    p0 = rng.choice([0.92, 0.8, 0.6])
    rare = rng.dirichlet([1, 1]) * (1 - p0)
    truth = rng.choice(3, size=n_tasks, p=(p0, rare[0], rare[1]))
    low = rng.uniform(0.3, 0.7)
    accuracy = (low, rng.uniform(low + 0.05, 0.98))
    types = np.array(["regular"] * n_workers, dtype=object)
    types[rng.random(n_workers) < rng.uniform(0, 0.3)] = "spammer"
    types[rng.random(n_workers) < rng.uniform(0, 0.1)] = "constant"
    confusion = [None, [[0, 1, 1], [5, 0, 1], [5, 1, 0]],
                 [[0, 3, 1], [1, 0, 5], [1, 5, 0]]][rng.integers(3)]
    votes = simulate_annotators(truth, n_workers, accuracy=accuracy, worker_types=types,
                                class_confusion=confusion, random_state=seed).votes.copy()
    activity = rng.pareto(rng.uniform(0.5, 2.0), n_workers) + 0.05
    activity /= activity.sum()
    fewest, most = [(1, 2), (1, 3), (2, 4), (3, 5)][rng.integers(4)]
    keep = np.zeros(votes.shape, dtype=bool)
    for i, k in enumerate(rng.integers(fewest, most + 1, n_tasks)):
        keep[i, rng.choice(n_workers, k, replace=False, p=activity)] = True
    votes[~keep] = -1
    return votes, truth, rng.choice(n_tasks, 576, replace=False), rng


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_few_known_tasks_do_not_hurt_a_hard_crowd():
    """Issue 23, section 4, reproduced: 29 known tasks cost DawidSkene 4.5 and 1.3 points on the
    other 14,971 tasks of this crowd on two of three draws when EM started from the known-task
    model only: from it, EM reached optima of lower objective (-1.1830 and -1.1789 per task
    against -1.1753 from the usual start). A fit with known tasks now runs both starts and keeps
    the better end (BaseEM._better_end). Measured: 0.7929 without known tasks; 0.7931, 0.7944
    and 0.7943 with each draw (before: 0.7474, 0.7796, 0.7975)."""
    votes, truth, gold, rng = hard_imbalanced_crowd()
    for plain, anchored, _, other in _known_gold_draws(votes, truth, gold, rng):
        assert (np.mean(anchored[other] == truth[other])
                >= np.mean(plain[other] == truth[other]) - 0.005)


# -- what known tasks change, and what they do not -------------------------------------


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # GLAD: y vs votes
@pytest.mark.parametrize("model", EM, ids=ids)
def test_known_tasks_keep_their_label(model, engine, make_votes):
    votes = make_votes(1, 80, 6, accuracy=0.7, empty_task=3)
    rng = np.random.default_rng(0)
    y = np.full(80, -1)
    known = rng.choice(80, 12, replace=False)
    y[known] = rng.integers(3, size=12)  # some disagree with the votes
    y[3] = 2  # the task without votes
    fitted = clone(model).fit(votes, y)
    labels = clone(model).fit_predict(votes, y)
    is_known = y >= 0
    np.testing.assert_array_equal(labels[is_known], y[is_known])
    # the other tasks: fit(X, y).predict(X); predict_proba is the posterior from the votes
    np.testing.assert_array_equal(labels[~is_known], fitted.predict(votes)[~is_known])
    proba = fitted.predict_proba(votes)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.any(proba[is_known].argmax(axis=1) != y[is_known])
    if isinstance(model, GLAD):
        assert np.all(np.isfinite(fitted.difficulties_))


# DawidSkene with a fixed prior: smoothing="auto" moves the objective while it settles
@pytest.mark.parametrize("model", [DawidSkene(smoothing=3.0), OneCoinDawidSkene(), MACE(),
                                   MACE(method="em"), BayesianDawidSkene(), EBCC()], ids=repr)
def test_objective_never_decreases_with_known_tasks(model):
    """log p(votes, known labels) for EM; the ELBO, known labels observed, for VB."""
    votes, truth, known = label_switched_crowd(1, 3, n_tasks=400, share_known=0.05)
    for init in ("majority", "random"):
        fitted = clone(model).set_params(init=init, random_state=0, tol=0, max_iter=40)
        with pytest.warns(Warning):  # tol=0: ConvergenceWarning
            fitted.fit(votes, np.where(known, truth, -1))
        assert np.all(np.diff(fitted.lower_bounds_) >= -1e-12 * np.abs(fitted.lower_bounds_[1:]))


def test_lower_bound_counts_the_known_labels_log_prior():
    """The objective is log p(votes, known labels): a known task adds log rho_y + log p(votes |
    y), so the fitted objective equals a recomputation from the fitted parameters."""
    X = np.array([[0, 1, 1], [1, 1, 0], [0, -1, 0], [1, 0, 1]])
    y = np.array([0, -1, 1, -1])
    ds = DawidSkene(smoothing=3.0, tol=1e-12, max_iter=500).fit(X, y)  # a fixed prior
    conf, rho = ds.confusion_matrices_, ds.class_priors_
    log_lik = 0.0
    for i, row in enumerate(X):
        joint = np.array([rho[k] * np.prod([conf[j, k, v] for j, v in enumerate(row) if v >= 0])
                          for k in range(2)])
        log_lik += np.log(joint[y[i]] if y[i] >= 0 else joint.sum())
    s, K = ds.smoothing, 2
    log_prior = (np.einsum("jkl,kl->", np.log(conf), s * (np.eye(K) + 1 / K))
                 + np.sum(s / K * np.log(rho)))
    assert ds.lower_bound_ == pytest.approx((log_lik + log_prior) / 4, rel=1e-9)


def test_all_missing_y_is_a_plain_fit():
    votes = np.array([[0, 1, 1], [1, 1, 0], [0, -1, 0], [1, 0, 1]] * 5)
    plain = DawidSkene().fit(votes)
    for y in (np.full(20, -1), [None] * 20, np.full(20, np.nan)):
        same = DawidSkene().fit(votes, y)
        np.testing.assert_array_equal(same.lower_bounds_, plain.lower_bounds_)
        np.testing.assert_array_equal(same.predict_proba(votes), plain.predict_proba(votes))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # max_iter=5
@pytest.mark.parametrize("model", EM, ids=ids)
def test_warm_start_and_random_init_keep_known_tasks(model, make_votes):
    votes = make_votes(2, 60, 6, accuracy=0.7, empty_task=0)
    y = np.where(np.arange(60) % 6 == 0, (np.arange(60) // 6) % 3, -1)
    warm = clone(model).set_params(warm_start=True, max_iter=5)
    warm.fit(votes, y)
    labels = warm.fit_predict(votes, y)
    np.testing.assert_array_equal(labels[y >= 0], y[y >= 0])
    random = clone(model).set_params(init="random", n_init=2, random_state=0)
    np.testing.assert_array_equal(random.fit_predict(votes, y)[y >= 0], y[y >= 0])


# -- formats of y, classes -------------------------------------------------------------


def test_y_formats_give_the_same_fit():
    pd = pytest.importorskip("pandas")
    votes = np.array([[0, 1, 1], [1, 1, 0], [0, -1, 0], [1, 0, 1], [1, 1, -1]] * 4)
    y = np.where(np.arange(20) % 4 == 0, np.arange(20) % 2, -1)
    expected = DawidSkene().fit(votes, y).predict_proba(votes)
    as_float = np.where(y >= 0, y, np.nan)
    frame = pd.DataFrame(votes, index=[f"t{i}" for i in range(20)])
    ordered = pd.Series(y, index=frame.index)
    for X, known in [(votes, list(y)), (votes, as_float), (votes, y.astype(object)),
                     (votes, np.where(y >= 0, y, None)), (votes, pd.Series(as_float)),
                     (frame, ordered), (frame, ordered.iloc[::-1]),  # by index
                     (frame, ordered[ordered >= 0])]:  # tasks absent from the index: unknown
        got = DawidSkene().fit(X, known).predict_proba(X)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)


def test_string_labels_and_a_custom_marker():
    names = np.array(["ant", "bee"])
    votes = np.array([[0, 1, 1], [1, 1, 0], [0, -1, 0], [1, 0, 1]] * 3)
    as_strings = np.where(votes >= 0, names[np.maximum(votes, 0)], "?")
    y = np.where(np.arange(12) % 3 == 0, np.arange(12) % 2, -1)
    y_strings = np.where(y >= 0, names[np.maximum(y, 0)], "?")
    ds = DawidSkene(missing_label="?")
    labels = ds.fit_predict(as_strings, y_strings)
    np.testing.assert_array_equal(labels, names[DawidSkene().fit_predict(votes, y)])
    assert ds.classes_.tolist() == ["ant", "bee"]


def test_a_known_label_no_worker_gave_joins_the_classes():
    votes = np.array([[0, 2, 2], [2, 2, 0], [0, -1, 0], [2, 0, 2]] * 3)
    y = np.full(12, -1)
    y[[0, 5]] = 1  # class 1: known, never voted
    ds = DawidSkene()
    labels = ds.fit_predict(votes, y)
    assert ds.classes_.tolist() == [0, 1, 2]
    assert ds.confusion_matrices_.shape == (3, 3, 3)
    np.testing.assert_array_equal(labels[[0, 5]], [1, 1])
    # the votes keep their labels: the same model as with class 1 declared beforehand
    declared = DawidSkene(n_classes=3).fit(votes, y)
    np.testing.assert_allclose(ds.predict_proba(votes), declared.predict_proba(votes))
    np.testing.assert_array_equal(ds.predict(votes), declared.predict(votes))


def test_long_format_votes_in_memory_take_y_by_task_id(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    votes = np.array([[0, 1, 1], [1, 1, 0], [0, -1, 0], [1, 0, 1]] * 3)
    tasks, workers = np.nonzero(votes >= 0)
    long = pd.DataFrame({"task": tasks + 100, "worker": workers, "label": votes[tasks, workers]})
    long.to_parquet(tmp_path / "votes.parquet")
    y = np.full(12, -1)
    y[[0, 7]] = [1, 0]
    gold = pd.Series([1, 0], index=[100, 107])
    ds = DawidSkene(backend="memory")
    labels = ds.fit_predict(tmp_path / "votes.parquet", gold)
    np.testing.assert_array_equal(labels.loc[[100, 107]], [1, 0])
    np.testing.assert_allclose(ds.predict_proba(tmp_path / "votes.parquet").to_numpy(),
                               DawidSkene().fit(votes, y).predict_proba(votes), rtol=1e-12)
    with pytest.raises(ValueError, match="need the votes in memory; backend='auto'"):
        DawidSkene().fit(tmp_path / "votes.parquet", gold)


# -- bad input -------------------------------------------------------------------------


def test_bad_y_gets_a_clear_error():
    pd = pytest.importorskip("pandas")
    votes = np.array([[0, 1], [1, 1], [0, 0]])
    ds = DawidSkene()
    with pytest.raises(ValueError, match=r"expected shape \(3,\) for the 3 tasks .* got 2 labels"):
        ds.fit(votes, [0, 1])
    with pytest.raises(ValueError, match=r"1 label per task|got a 2-D array of shape \(3, 1\)"):
        ds.fit(votes, [[0], [1], [0]])
    with pytest.raises(ValueError, match="y has label 'cat' at task 1, of another type"):
        ds.fit(votes, np.array([-1, "cat", -1], dtype=object))
    with pytest.raises(ValueError, match="non-integer float label 0.5 at task 0"):
        ds.fit(votes, [0.5, np.nan, 1])
    with pytest.raises(ValueError, match="y has label 7 at task 1, outside range"):
        DawidSkene(n_classes=2).fit(votes, [0, 7, -1])
    frame = pd.DataFrame(votes, index=["a", "b", "c"])
    with pytest.raises(ValueError, match="its index holds 'z', which is not one of the tasks"):
        ds.fit(frame, pd.Series([0, 1], index=["a", "z"]))
    with pytest.raises(ValueError, match="X's index repeats task 'a'"):
        ds.fit(frame.set_axis(["a", "a", "c"]), pd.Series([0], index=["a"]))
    fitted = DawidSkene(warm_start=True).fit(votes)
    with pytest.raises(ValueError, match="label 2 at task 0, which is not one of the known"):
        fitted.fit(votes, [2, -1, -1])


def test_models_without_task_priors_say_so():
    class Plain(DawidSkene):
        _supports_task_priors = False

    with pytest.raises(ValueError, match="Plain does not support known tasks .*; "
                                         "BayesianDawidSkene, DawidSkene, EBCC, GLAD, "
                                         "GroupedDawidSkene, MACE, "
                                         "OneCoinDawidSkene and WeightedDawidSkene do"):
        Plain().fit(np.array([[0, 1], [1, 1]]), [0, -1])


# -- per-task priors -------------------------------------------------------------------


@pytest.mark.parametrize("model", EM, ids=ids)
def test_task_prior_replaces_the_class_priors(model, engine, make_votes):
    votes = make_votes(3, 50, 5, accuracy=0.7, empty_task=4)
    prior = np.random.default_rng(1).dirichlet(np.ones(3), size=50)
    prior[10] = [0.0, 1.0, 0.0]
    prior[4] = [0.2, 0.0, 0.8]  # no votes: gets its prior
    fitted = clone(model).fit(votes, task_prior=prior)
    labels = clone(model).fit_predict(votes, task_prior=prior)
    np.testing.assert_array_equal(labels, fitted.predict(votes, task_prior=prior))
    proba = fitted.predict_proba(votes, task_prior=prior)
    np.testing.assert_allclose(proba[4], prior[4], rtol=1e-12)
    np.testing.assert_array_equal(proba[10], [0.0, 1.0, 0.0])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    if isinstance(model, DawidSkene) and not isinstance(model, WeightedDawidSkene):
        # the posterior is the prior times the votes' likelihood under the fitted workers
        plain = fitted.predict_proba(votes) / fitted.class_priors_
        expected = prior * plain / (prior * plain).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(proba, expected, rtol=1e-10, atol=1e-14)


def test_task_prior_with_known_tasks_and_as_a_frame():
    pd = pytest.importorskip("pandas")
    votes = np.array([[0, 1, 1], [1, 1, 0], [0, -1, 0], [1, 0, 1]] * 3)
    prior = np.tile([0.3, 0.7], (12, 1))
    y = np.where(np.arange(12) % 4 == 0, 0, -1)
    expected = DawidSkene().fit(votes, y, task_prior=prior)
    assert np.all(expected.fit_predict(votes, y, task_prior=prior)[y == 0] == 0)
    frame = pd.DataFrame(votes, index=[f"t{i}" for i in range(12)])
    as_frame = pd.DataFrame(prior[:, ::-1], index=frame.index, columns=[1, 0]).iloc[::-1]
    got = DawidSkene().fit(frame, pd.Series(y, index=frame.index), task_prior=as_frame)
    np.testing.assert_allclose(got.predict_proba(frame).to_numpy(),
                               expected.predict_proba(votes), rtol=1e-12)


def test_task_prior_passes_through_a_pipeline():
    from sklearn.pipeline import make_pipeline

    votes = np.array([[0, 1, 1], [1, 1, 0], [0, -1, 0], [1, 0, 1]] * 3)
    prior = np.random.default_rng(0).dirichlet(np.ones(2), size=12)
    pipe = make_pipeline(DawidSkene()).fit(votes, dawidskene__task_prior=prior)
    direct = DawidSkene().fit(votes, task_prior=prior)
    np.testing.assert_array_equal(pipe[0].confusion_matrices_, direct.confusion_matrices_)


def test_bad_task_prior_gets_a_clear_error():
    pd = pytest.importorskip("pandas")
    votes = np.array([[0, 1], [1, 1], [0, 0]])
    ds = DawidSkene()
    with pytest.raises(ValueError, match=r"= \(3, 2\) for the 3 tasks .* got \(3, 3\)"):
        ds.fit(votes, task_prior=np.full((3, 3), 1 / 3))
    with pytest.raises(ValueError, match="got -0.5 at task 1, class 0"):
        ds.fit(votes, task_prior=[[0.5, 0.5], [-0.5, 1.5], [1, 0]])
    with pytest.raises(ValueError, match="got nan at task 0, class 1"):
        ds.fit(votes, task_prior=[[0.5, np.nan], [0.5, 0.5], [1, 0]])
    with pytest.raises(ValueError, match="the row of task 2 sums to 0.9"):
        ds.fit(votes, task_prior=[[0.5, 0.5], [0.5, 0.5], [0.6, 0.3]])
    with pytest.raises(ValueError, match="probability 0 to the known label 1 of task 0"):
        ds.fit(votes, [1, -1, -1], task_prior=[[1.0, 0.0], [0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match=r"columns \['a', 'b'\] must be the classes \[0, 1\]"):
        ds.fit(votes, task_prior=pd.DataFrame(np.full((3, 2), 0.5), columns=["a", "b"]))
    frame = pd.DataFrame(votes, index=["a", "b", "c"])
    with pytest.raises(ValueError, match="no row for task 'c'"):
        ds.fit(frame, task_prior=pd.DataFrame(np.full((2, 2), 0.5), index=["a", "b"]))
    with pytest.raises(ValueError, match="task_prior must hold probabilities"):
        ds.fit(votes, task_prior=[["x", "y"]] * 3)
    fitted = DawidSkene().fit(votes)
    with pytest.raises(ValueError, match=r"\(2, 2\) for the 2 tasks"):
        fitted.predict_proba(votes[:2], task_prior=np.full((3, 2), 0.5))
