"""Soft votes: probability vectors as votes (skcrowd.SoftVotes, soft_votes, soft_votes_from_long)
and the aggregators that take them."""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

from skcrowd import SoftVotes, check_votes, soft_votes, soft_votes_from_long
from skcrowd.aggregation import (EBCC, GLAD, MACE, AggregatorSelector, BayesianDawidSkene,
                                 DawidSkene, MajorityVote, OneCoinDawidSkene,
                                 WeightedDawidSkene, kernels)
from skcrowd.aggregation.kernels import BlockLayout, ds_block_statistics

SOFT_MODELS = [
    MajorityVote(random_state=0),
    DawidSkene(),
    DawidSkene(smoothing=1.0),
    WeightedDawidSkene(),
    OneCoinDawidSkene(),
    BayesianDawidSkene(),
    MACE(random_state=0),
    MACE(method="em", random_state=0),
]


def _hard_crowd(seed=0, n_tasks=120, n_workers=6, K=3):
    rng = np.random.RandomState(seed)
    votes = rng.randint(-1, K, size=(n_tasks, n_workers))
    votes[:, 0] = rng.randint(0, K, n_tasks)
    return votes


def _calibrated(z, K, alpha, rng):
    """Calibrated probability vectors: ``q ~ Dirichlet(alpha + e_z)``, so that
    ``P(z = k | q) = q_k`` under uniform classes."""
    a = np.full((len(z), K), alpha)
    a[np.arange(len(z)), z] += 1.0
    return np.array([rng.dirichlet(row) for row in a])


def _mixed_crowd(seed, n_tasks=400, K=3, n_humans=5, n_models=3, alpha=0.52):
    """Sparse humans (accuracy 0.65, 40 % of the tasks each) and models labelling every task
    with calibrated probabilities (alpha=0.52: argmax accuracy about 0.70 at K=3)."""
    rng = np.random.RandomState(seed)
    z = rng.randint(K, size=n_tasks)
    humans = np.full((n_tasks, n_humans), -1)
    for j in range(n_humans):
        seen = rng.rand(n_tasks) < 0.4
        wrong = (z + rng.randint(1, K, n_tasks)) % K
        humans[seen, j] = np.where(rng.rand(n_tasks) < 0.65, z, wrong)[seen]
    models = [_calibrated(z, K, alpha, rng) for _ in range(n_models)]
    return z, soft_votes(humans, models, classes=np.arange(K))


# -- one-hot soft votes are hard votes ------------------------------------------------------


@pytest.mark.parametrize("model", SOFT_MODELS, ids=lambda m: repr(m))
def test_one_hot_soft_votes_fit_as_hard_votes(model):
    votes = _hard_crowd()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning, the same on both
        hard = clone(model).fit(votes)
        soft = clone(model).fit(soft_votes(votes))
    assert_allclose(soft.predict_proba(soft_votes(votes)), hard.predict_proba(votes),
                    rtol=0, atol=1e-12)
    assert_array_equal(soft.predict(soft_votes(votes)), hard.predict(votes))
    if hasattr(hard, "confusion_matrices_"):
        assert_allclose(soft.confusion_matrices_, hard.confusion_matrices_, rtol=0, atol=1e-12)
        assert soft.n_iter_ == hard.n_iter_


def test_soft_votes_of_a_votes_matrix_are_one_hot():
    votes = np.array([["a", None], ["b", "a"]], dtype=object)
    sv = soft_votes(votes, missing_label=None)
    v = check_votes(votes, missing_label=None)
    assert_array_equal(sv.task, v.task)
    assert_array_equal(sv.worker, v.worker)
    assert_array_equal(sv.proba, np.eye(2)[v.label])
    assert sv.classes.tolist() == ["a", "b"]


# -- hand-computed cases -----------------------------------------------------------------


def test_ds_soft_vote_statistics_by_hand():
    # task 0: worker 0 says 0, worker 1 gives (0.75, 0.25); task 1: worker 1 gives (0, 1)
    sv = SoftVotes(task=np.array([0, 0, 1]), worker=np.array([0, 1, 1]),
                   proba=np.array([[1.0, 0.0], [0.75, 0.25], [0.0, 1.0]]), n_tasks=2,
                   n_workers=2, classes=np.array([0, 1]))
    conf = np.array([[0.9, 0.1], [0.2, 0.8]])  # [k, l], both workers
    log_conf_t = np.log(conf.T)[None].repeat(2, axis=0)
    stats = ds_block_statistics(BlockLayout(sv.to_votes()), log_conf_t, np.log([0.5, 0.5]),
                                resp=np.empty((2, 2)))
    # p(q | k) = sum_l q_l conf[k, l]: 0.75 * 0.9 + 0.25 * 0.1 = 0.7 and 0.75 * 0.2 + 0.25 *
    # 0.8 = 0.35; with worker 0's vote: 0.9 * 0.7 = 0.63 against 0.2 * 0.35 = 0.07
    assert_allclose(stats.resp[0], [0.9, 0.1])
    assert_allclose(stats.resp[1], [0.1 / 0.9, 0.8 / 0.9])
    assert_allclose(stats.log_likelihood, np.log(0.5 * 0.63 + 0.5 * 0.07)
                    + np.log(0.5 * 0.1 + 0.5 * 0.8))
    # worker 1's counts [l, k]: answer l's posterior given k, times P(k | votes)
    r0, r1 = stats.resp
    expected = np.array([
        [r0[0] * 0.675 / 0.7, r0[1] * 0.15 / 0.35],
        [r0[0] * 0.025 / 0.7 + r1[0], r0[1] * 0.2 / 0.35 + r1[1]],
    ])
    assert_allclose(stats.worker_counts[1], expected)
    assert_allclose(stats.worker_counts[0], [[r0[0], r0[1]], [0.0, 0.0]])


def test_majority_vote_sums_the_probabilities():
    sv = soft_votes([[0, -1], [1, 1]], [[[0.6, 0.4], [0.3, 0.7]]])
    mv = MajorityVote().fit(sv)
    assert_allclose(mv.predict_proba(sv), [[1.6 / 2, 0.4 / 2], [0.3 / 3, 2.7 / 3]])
    assert_allclose(mv.class_priors_, [1.9 / 5, 3.1 / 5])


def test_one_coin_soft_vote_likelihood_by_hand():
    # one worker, K = 3, right with (expected-log) weight A, each wrong class B:
    # p(q | k) = sum_l q_l P(l | k) = A q_k + B (1 - q_k)
    from scipy.special import digamma

    model = OneCoinDawidSkene().fit(soft_votes([[0], [1], [2], [0]]))
    alpha, beta = model.accuracy_posteriors_[0]
    A = np.exp(digamma(alpha) - digamma(alpha + beta))
    B = np.exp(digamma(beta) - digamma(alpha + beta)) / 2
    q = np.array([0.5, 0.3, 0.2])
    post = (A * q + B * (1 - q)) * model.class_priors_
    assert_allclose(model.predict_proba(soft_votes(proba=[[q]])), [post / post.sum()])


@pytest.mark.parametrize("model", SOFT_MODELS[1:5], ids=lambda m: repr(m))
def test_soft_fits_follow_tasks_and_workers(model):
    # the model does not depend on the order of the tasks or of the workers
    _, sv = _mixed_crowd(1, n_tasks=150)
    rng = np.random.RandomState(0)
    tasks, workers = rng.permutation(sv.n_tasks), rng.permutation(sv.n_workers)
    new_task, new_worker = np.argsort(tasks), np.argsort(workers)
    moved = SoftVotes(new_task[sv.task], new_worker[sv.worker], sv.proba, sv.n_tasks,
                      sv.n_workers, sv.classes)
    order = np.lexsort((moved.worker, moved.task))
    moved = SoftVotes(moved.task[order], moved.worker[order], moved.proba[order], sv.n_tasks,
                      sv.n_workers, sv.classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proba = clone(model).fit(sv).predict_proba(sv)
        moved_proba = clone(model).fit(moved).predict_proba(moved)
    assert_allclose(moved_proba[new_task], proba, atol=1e-8)


# -- recovery -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calibrated_soft_votes_beat_their_argmax(seed):
    # models' calibrated probabilities carry more than their argmax: DS on the soft votes
    # beats DS on the same votes hardened. 400 tasks: a paired difference of accuracies has a
    # sampling standard error of at most sqrt(discordant tasks) / 400, about 1.6 points here
    # (40 discordant tasks); the gap measured on these seeds is 4 to 8 points, asserted > 3
    z, sv = _mixed_crowd(seed)
    hard = sv.harden()
    for model in (DawidSkene(), OneCoinDawidSkene(), MACE(random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MACE's ConvergenceWarning on seed 1
            soft_acc = np.mean(clone(model).fit(sv).predict(sv) == z)
            hard_acc = np.mean(clone(model).fit(hard).predict(hard) == z)
        assert soft_acc > hard_acc + 0.03, (type(model).__name__, soft_acc, hard_acc)
        assert soft_acc > 0.85


@pytest.mark.parametrize("model", SOFT_MODELS[1:], ids=lambda m: repr(m))
def test_objective_never_decreases_on_soft_votes(model):
    # EM with each vote's answer latent: the M-step maximizes what the E-step's posteriors
    # (of the true class and of the answer) expect, so the objective never decreases
    _, sv = _mixed_crowd(0, n_tasks=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bounds = clone(model).fit(sv).lower_bounds_
    assert len(bounds) >= 2
    assert np.all(np.diff(bounds) >= -1e-9 * np.abs(bounds[1:]))


def test_overconfident_model_is_discounted():
    # a model that is always sure, right only 40 % of the time, among good humans: DS learns
    # its confusion and the humans decide
    rng = np.random.RandomState(0)
    n, K = 300, 3
    z = rng.randint(K, size=n)
    humans = np.where(rng.rand(n, 4) < 0.8, z[:, None], (z[:, None] + 1) % K)
    guess = np.where(rng.rand(n) < 0.4, z, rng.randint(K, size=n))
    model = np.full((n, K), 0.01)
    model[np.arange(n), guess] = 0.98
    sv = soft_votes(humans, [model])
    assert np.mean(DawidSkene().fit(sv).predict(sv) == z) >= np.mean(
        DawidSkene().fit(humans).predict(humans) == z) - 0.01


# -- inputs ---------------------------------------------------------------------------------


def test_long_layouts_give_the_same_soft_votes():
    pd = pytest.importorskip("pandas")
    rows = pd.DataFrame({"task": ["t1", "t1", "t1", "t2", "t2"],
                         "worker": ["ann", "gpt", "gpt", "gpt", "ann"],
                         "label": ["cat", "cat", "dog", "dog", "dog"],
                         "proba": [1.0, 0.25, 0.75, 1.0, 1.0]})
    a = soft_votes_from_long(rows)
    wide = pd.DataFrame({"task": ["t1", "t1", "t2", "t2"], "worker": ["gpt", "ann", "gpt", "ann"],
                         "cat": [0.25, 1.0, 0.0, 0.0], "dog": [0.75, 0.0, 1.0, 1.0]})
    b = soft_votes_from_long(wide, proba=["cat", "dog"])
    for sv in (a, b):
        assert_array_equal(sv.task, [0, 0, 1, 1])
        assert_array_equal(sv.worker, [0, 1, 0, 1])
        assert_allclose(sv.proba, [[1, 0], [0.25, 0.75], [0, 1], [0, 1]])
        assert sv.workers.tolist() == ["ann", "gpt"]
    hard = soft_votes_from_long(rows[rows.proba == 1.0], proba=None)
    assert_allclose(hard.proba.sum(axis=1), 1.0)
    # outputs keyed by task id, as for long-format votes
    out = DawidSkene(smoothing=1.0).fit(a).predict(a)
    assert out.index.tolist() == ["t1", "t2"]


def test_models_without_votes_on_a_task():
    p = np.array([[0.9, 0.1], [np.nan, np.nan]])
    sv = soft_votes([[0], [1]], [p])
    assert_array_equal(sv.worker, [0, 1, 0])


@pytest.mark.parametrize("proba, match", [
    ([[0.5, 0.4]], r"task 0, worker 1 sums to 0\.9"),
    ([[1.2, -0.2]], r"task 0, worker 1 has the negative probability -0\.2"),
    ([[np.nan, 1.0]], r"task 0, worker 1 has the probability nan"),
    ([[0.5, 0.25, 0.25]], r"shape \(1, 3\); expected \(1, 2\).*\[0, 1\]"),
])
def test_soft_vote_errors(proba, match):
    with pytest.raises(ValueError, match=match):
        soft_votes([[0]], [np.array(proba)], classes=[0, 1])


def test_sum_tolerance():
    soft_votes(proba=[[[0.5, 0.5 + 1e-7]]])  # float32 rounding passes
    with pytest.raises(ValueError, match=r"tolerance tol=1e-09"):
        soft_votes(proba=[[[0.5, 0.5 + 1e-7]]], tol=1e-9)


def test_long_errors():
    with pytest.raises(ValueError, match=r"task 't1', worker 'a', label 'cat' has more than "
                                         r"one row \(rows \[0, 1\]"):
        soft_votes_from_long(None, ["t1", "t1"], ["a", "a"], ["cat", "cat"], [0.5, 0.5])
    with pytest.raises(ValueError, match=r"label 'cow', not one of the classes \['cat', "
                                         r"'dog'\]"):
        soft_votes_from_long(None, ["t1"], ["a"], ["cow"], [1.0], classes=["cat", "dog"])
    with pytest.raises(ValueError, match=r"task 't1', worker 'a' sums to 0\.5"):
        soft_votes_from_long(None, ["t1"], ["a"], ["cat"], [0.5], classes=["cat", "dog"])
    with pytest.raises(ValueError, match=r"row 0 .* has the probability -1\.0"):
        soft_votes_from_long(None, ["t1", "t1"], ["a", "a"], ["cat", "dog"], [-1.0, 2.0])
    with pytest.raises(ValueError, match="is not one of|not one of the classes"):
        soft_votes([[5]], classes=[0, 1])


@pytest.mark.parametrize("model", [GLAD(), EBCC(), AggregatorSelector()],
                         ids=lambda m: type(m).__name__)
def test_other_aggregators_refuse_soft_votes(model):
    with pytest.raises(TypeError, match=rf"{type(model).__name__} does not accept soft votes.*"
                                        r"DawidSkene, MACE, MajorityVote, OneCoinDawidSkene"):
        model.fit(soft_votes([[0, 1]]))


def test_known_tasks_and_task_priors_with_soft_votes():
    sv = soft_votes([[0, 1], [1, 1], [0, 0]], [[[0.6, 0.4], [0.3, 0.7], [0.9, 0.1]]])
    ds = DawidSkene(smoothing=1.0)
    assert ds.fit(sv, y=[1, -1, -1]).fit_predict(sv, y=[1, -1, -1])[0] == 1
    prior = np.array([[0.0, 1.0], [0.5, 0.5], [0.5, 0.5]])
    assert_array_equal(ds.fit(sv, task_prior=prior).predict_proba(sv, task_prior=prior)[0],
                       [0.0, 1.0])


def test_hard_vote_readers_refuse_soft_votes():
    with pytest.raises(TypeError, match=r"y must be hard votes .* y is a SoftVotes.*"
                                        r"WeightedDawidSkene"):
        check_votes(soft_votes([[0, 1]]), name="y")


def test_prediction_checks_workers_and_classes():
    sv = soft_votes([[0, 1], [1, 1]])
    ds = DawidSkene(smoothing=1.0).fit(sv)
    with pytest.raises(ValueError, match="3 workers; the estimator was fitted on 2"):
        ds.predict(soft_votes([[0, 1, 1]]))
    with pytest.raises(ValueError, match=r"classes \[0, 1, 2\]"):
        ds.predict(soft_votes([[0, 1]], classes=[0, 1, 2]))
    with pytest.raises(ValueError, match="n_classes=3 but the soft votes X have 2"):
        DawidSkene(n_classes=3).fit(sv)


# -- the estimator contract -----------------------------------------------------------------


def test_contract_on_soft_votes():
    z, sv = _mixed_crowd(0, n_tasks=150)
    ds = DawidSkene().fit(sv)
    assert ds.n_features_in_ == sv.n_workers
    assert_array_equal(ds.fit_predict(sv), ds.predict(sv))
    again = pickle.loads(pickle.dumps(ds))
    assert_array_equal(again.predict_proba(sv), ds.predict_proba(sv))
    assert_array_equal(clone(ds).fit(sv).predict_proba(sv), ds.predict_proba(sv))
    assert np.isfinite(ds.score(sv))
    # weighted votes run the numpy kernels, whatever the engine switch says
    previous = kernels.ENGINE
    kernels.ENGINE = "numba" if kernels.numba is not None else "numpy"
    try:
        switched = DawidSkene().fit(sv).predict_proba(sv)
    finally:
        kernels.ENGINE = previous
    assert_array_equal(switched, ds.predict_proba(sv))
    # a hard-vote fit of the same crowd reads a votes matrix again (no soft state left)
    hard = sv.harden()
    assert ds.fit(hard).n_features_in_ == hard.n_workers
