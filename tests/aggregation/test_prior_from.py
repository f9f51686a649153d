"""DawidSkene(prior_from=earlier fit): an earlier project's worker models as the prior."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import (check_get_params_invariance,
                                            check_no_attributes_set_in_init, check_set_params)

from skcrowd.aggregation import (GLAD, MACE, BayesianDawidSkene, DawidSkene, MajorityVote,
                                 OneCoinDawidSkene, WeightedDawidSkene)

# project A: workers a, b, c on 6 tasks, every task known (posteriors fixed to the labels, so
# that the counts of each M-step are the hand counts below)
VOTES_A = np.array([[0, 0, 1], [0, 0, 1], [0, 1, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0]])
TRUTH_A = np.array([0, 0, 0, 1, 1, 1])
# project B: workers c, a and a new worker d, in that order, on 4 known tasks
VOTES_B = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 0, 0]])
TRUTH_B = np.array([0, 1, 0, 1])


def _frame(votes, columns):
    return pd.DataFrame(votes, columns=columns)


def _hand_confusions(votes, truth, pseudo):
    """``[j, k, l]``: (hard counts of worker j's answer l on tasks of class k + pseudo[j, k, l])
    normalized over l."""
    counts = np.zeros((votes.shape[1], 2, 2))
    for i, j in np.ndindex(votes.shape):
        counts[j, truth[i], votes[i, j]] += 1
    counts += pseudo
    return counts / counts.sum(axis=2, keepdims=True)


@pytest.fixture(scope="module")
def earlier():
    return DawidSkene(smoothing=1.0).fit(_frame(VOTES_A, ["a", "b", "c"]), TRUTH_A)


def test_earlier_fit_by_hand(earlier):
    population = 1.0 * (np.eye(2) + 0.5)
    expected = _hand_confusions(VOTES_A, TRUTH_A, population)
    np.testing.assert_allclose(earlier.confusion_matrices_, expected)
    # every worker voted on 3 tasks of each class
    np.testing.assert_allclose(earlier.worker_class_votes_, np.full((3, 2), 3.0))


@pytest.mark.parametrize("strength", ["auto", 4.0])
def test_pseudo_counts_enter_the_m_step_as_stated(earlier, strength):
    """B's confusion rows: B's counts + the population prior + strength * A's row, for the
    matched workers c and a (by id, in B's column order); the new worker d: the population
    prior alone."""
    ds = DawidSkene(smoothing=1.0, prior_from=earlier, prior_strength=strength)
    ds.fit(_frame(VOTES_B, ["c", "a", "d"]), TRUTH_B)
    population = 1.0 * (np.eye(2) + 0.5)
    rows = [2, 0]  # c and a in A
    weight = 3.0 if strength == "auto" else strength  # 3 votes per class row in A
    pseudo = np.broadcast_to(population, (3, 2, 2)).copy()
    pseudo[:2] += weight * earlier.confusion_matrices_[rows]
    np.testing.assert_allclose(ds.confusion_matrices_,
                               _hand_confusions(VOTES_B, TRUTH_B, pseudo))
    np.testing.assert_array_equal(ds.prior_workers_, [True, True, False])
    # the evidence behind each row, for the next project: 2 votes per class in B, plus the
    # earlier pseudo-votes (sequential Bayes over a chain of projects)
    np.testing.assert_allclose(ds.worker_class_votes_, [[2 + weight] * 2] * 2 + [[2, 2]])
    # the new worker is modelled as by a fresh fit
    fresh = DawidSkene(smoothing=1.0).fit(_frame(VOTES_B, ["c", "a", "d"]), TRUTH_B)
    np.testing.assert_allclose(ds.confusion_matrices_[2], fresh.confusion_matrices_[2])
    # the objective includes the new prior: EM never decreases it
    assert np.all(np.diff(ds.lower_bounds_) >= -1e-10)


def test_matched_by_id_whatever_the_column_order(earlier):
    votes = _frame(VOTES_B, ["c", "a", "d"])
    ds = DawidSkene(prior_from=earlier).fit(votes)
    shuffled = DawidSkene(prior_from=earlier).fit(votes[["d", "c", "a"]])
    np.testing.assert_allclose(shuffled.confusion_matrices_, ds.confusion_matrices_[[2, 0, 1]])
    np.testing.assert_allclose(shuffled.predict_proba(votes[["d", "c", "a"]]),
                               ds.predict_proba(votes))
    np.testing.assert_array_equal(shuffled.prior_workers_, [False, True, True])


def test_positional_without_ids():
    earlier = DawidSkene().fit(VOTES_A)
    ds = DawidSkene(prior_from=earlier).fit(VOTES_B)
    np.testing.assert_array_equal(ds.prior_workers_, [True, True, True])
    with pytest.raises(ValueError, match="fitted on 3 workers and X has 2"):
        DawidSkene(prior_from=earlier).fit(VOTES_B[:, :2])


def test_worker_without_earlier_votes_gets_the_population_prior():
    votes_a = np.array([[0, 0, -1], [1, 1, -1], [0, 0, -1]])
    earlier = DawidSkene(smoothing=1.0).fit(votes_a)
    ds = DawidSkene(smoothing=1.0, prior_from=earlier, prior_strength=50.0)
    ds.fit(VOTES_B, TRUTH_B)
    np.testing.assert_array_equal(ds.prior_workers_, [True, True, False])
    fresh = DawidSkene(smoothing=1.0).fit(VOTES_B, TRUTH_B)
    np.testing.assert_allclose(ds.confusion_matrices_[2], fresh.confusion_matrices_[2])


def test_not_clamped_the_data_override_the_earlier_model(earlier):
    """Worker a was right on every task of A; in B it is wrong on 200 tasks that four good
    workers label: its new confusion follows B, the earlier model is one prior among the
    counts (it is not forced at every iteration)."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, 200)
    good = np.where(rng.random((200, 4)) < 0.9, truth[:, None], 1 - truth[:, None])
    votes = _frame(np.column_stack([1 - truth, good]), ["a", "e", "f", "g", "h"])
    ds = DawidSkene(prior_from=earlier, prior_strength=20.0).fit(votes)
    assert earlier.confusion_matrices_[0, [0, 1], [0, 1]].min() > 0.6
    # about 20 pseudo-votes for the right class against some 100 wrong votes per class
    assert ds.confusion_matrices_[0, [0, 1], [0, 1]].max() < 0.2
    assert np.mean(ds.predict(votes) == truth) > 0.95


def _project(rng, confusions, n_tasks, votes_per_task):
    """Votes of the workers of ``confusions`` ([j, k, l]) on ``n_tasks`` new tasks."""
    n_workers, K, _ = confusions.shape
    truth = rng.integers(0, K, n_tasks)
    votes = np.full((n_tasks, n_workers), -1)
    for i in range(n_tasks):
        for j in rng.choice(n_workers, votes_per_task, replace=False):
            votes[i, j] = rng.choice(K, p=confusions[j, truth[i]])
    return votes, truth


@pytest.mark.parametrize("seed", range(4))
def test_recovery_on_a_two_project_crowd(seed):
    """Project A: 20 workers (half good, half poor or class-swapping), 600 tasks, 5 votes each;
    project B: the same workers, 300 tasks, 2 votes each. The prior from A recovers B's truth
    better than a fresh fit of B (by 3 to 7 points on these seeds), close to a fit that knows
    the true worker models."""
    rng = np.random.default_rng(seed)
    K, n_workers = 3, 20
    confusions = np.empty((n_workers, K, K))
    for j in range(n_workers):
        accuracy = rng.uniform(0.75, 0.95) if j % 2 else rng.uniform(0.35, 0.5)
        confusions[j] = np.full((K, K), (1 - accuracy) / (K - 1))
        np.fill_diagonal(confusions[j], accuracy)
        if j % 4 == 0:  # a worker that swaps two classes
            confusions[j] = confusions[j][:, [1, 0, 2]]
    votes_a, _ = _project(rng, confusions, 600, 5)
    votes_b, truth_b = _project(rng, confusions, 300, 2)
    earlier = DawidSkene().fit(votes_a)
    fresh = np.mean(DawidSkene().fit(votes_b).predict(votes_b) == truth_b)
    prior = np.mean(DawidSkene(prior_from=earlier).fit(votes_b).predict(votes_b) == truth_b)
    assert prior > fresh + 0.025
    # the true worker models label B at about this accuracy
    log_post = np.zeros((300, K))
    for i, j in zip(*np.nonzero(votes_b >= 0)):
        log_post[i] += np.log(confusions[j, :, votes_b[i, j]])
    oracle = np.mean(log_post.argmax(axis=1) == truth_b)
    assert prior > oracle - 0.04


def test_weighted_dawid_skene_takes_the_prior(earlier):
    votes = _frame(VOTES_B, ["c", "a", "d"])
    wds = WeightedDawidSkene(smoothing=1.0, prior_from=earlier).fit(votes, TRUTH_B)
    ds = DawidSkene(smoothing=1.0, prior_from=earlier).fit(votes, TRUTH_B)
    np.testing.assert_allclose(wds.confusion_matrices_, ds.confusion_matrices_)


def test_errors(earlier):
    votes = _frame(VOTES_B, ["c", "a", "d"])
    with pytest.raises(NotFittedError, match="prior_from: this DawidSkene is not fitted"):
        DawidSkene(prior_from=DawidSkene()).fit(votes)
    with pytest.raises(ValueError, match=r"classes \[0, 1\], X has \[0, 1, 2\]"):
        DawidSkene(prior_from=earlier).fit(votes.replace({0: 2}).where(votes != 1, 0)
                                           .assign(c=[2, 1, 1, 0]))
    for other in (MajorityVote().fit(VOTES_A), BayesianDawidSkene().fit(VOTES_A)):
        with pytest.raises(TypeError, match=f"got {type(other).__name__}"):
            DawidSkene(prior_from=other).fit(VOTES_B)
    with pytest.raises(ValueError, match="X has worker ids and prior_from has none"):
        DawidSkene(prior_from=DawidSkene().fit(VOTES_A)).fit(votes)
    with pytest.raises(ValueError, match="prior_from has worker ids and X has none"):
        DawidSkene(prior_from=earlier).fit(VOTES_B)
    with pytest.raises(ValueError, match="prior_strength"):
        DawidSkene(prior_from=earlier, prior_strength=-1.0).fit(votes)
    with pytest.raises(ValueError, match="prior_from"):
        DawidSkene(prior_from="earlier").fit(votes)


def test_estimator_contract(earlier):
    ds = DawidSkene(prior_from=earlier, prior_strength=5.0)
    copy = clone(ds)
    assert copy.prior_from is earlier  # still fitted
    assert copy.get_params()["prior_strength"] == 5.0
    for check in (check_get_params_invariance, check_set_params,
                  check_no_attributes_set_in_init):
        check("DawidSkene", ds)
    votes = _frame(VOTES_B, ["c", "a", "d"])
    fitted = clone(ds).fit(votes)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_allclose(restored.predict_proba(votes), fitted.predict_proba(votes))
    assert not hasattr(fitted, "_earlier_counts")  # a fit-time table, not kept
    # the fitted model can in turn be the prior of a third project
    assert DawidSkene(prior_from=fitted).fit(votes).prior_workers_.all()
    assert not hasattr(DawidSkene().fit(votes), "prior_workers_")


@pytest.mark.parametrize("backend", ["memory", "outofcore"])
def test_long_format_votes_matched_by_worker_id(earlier, tmp_path, backend):
    """Long-format votes (worker ids) match the DataFrame columns of the earlier fit; out of
    core, the per-worker tables follow the source's order of the workers."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    frame = _frame(VOTES_B, ["c", "a", "d"])
    task, worker = np.nonzero(VOTES_B >= 0)
    path = tmp_path / "votes.parquet"
    pq.write_table(pa.table({"task": task, "worker": np.array(["c", "a", "d"])[worker],
                             "label": VOTES_B[task, worker]}), path)
    ds = DawidSkene(prior_from=earlier, prior_strength=3.0, backend=backend).fit(path)
    reference = DawidSkene(prior_from=earlier, prior_strength=3.0).fit(frame)
    order = pd.Index(ds.worker_ids_).get_indexer(["c", "a", "d"])
    np.testing.assert_allclose(ds.confusion_matrices_[order], reference.confusion_matrices_)
    np.testing.assert_array_equal(ds.prior_workers_[order], [True, True, False])


def _right_wrong(votes, truth):
    """``[j] = (right, wrong)`` hard counts of each worker's votes."""
    voted = votes >= 0
    right = ((votes == truth[:, None]) & voted).sum(axis=0)
    return np.column_stack([right, voted.sum(axis=0) - right]).astype(float)


@pytest.mark.parametrize("strength", ["auto", 4.0])
def test_one_coin_pseudo_votes_by_hand(strength):
    """OneCoinDawidSkene: a matched worker's Beta posterior is the population prior + its
    right and wrong votes in B + the earlier pseudo-votes (its earlier right and wrong votes,
    or strength * (p, 1 - p)); the new worker's, the prior + its votes in B."""
    earlier = OneCoinDawidSkene(accuracy_prior=(2.0, 2.0)).fit(
        _frame(VOTES_A, ["a", "b", "c"]), TRUTH_A)
    earlier_counts = _right_wrong(VOTES_A, TRUTH_A)
    np.testing.assert_allclose(earlier.accuracy_posteriors_, 2.0 + earlier_counts)
    oc = OneCoinDawidSkene(accuracy_prior=(2.0, 2.0), prior_from=earlier,
                           prior_strength=strength)
    oc.fit(_frame(VOTES_B, ["c", "a", "d"]), TRUTH_B)
    rows = [2, 0]
    if strength == "auto":
        pseudo = earlier_counts[rows]
    else:
        accuracy = earlier.worker_accuracies_[rows]
        pseudo = strength * np.column_stack([accuracy, 1 - accuracy])
    expected = 2.0 + _right_wrong(VOTES_B, TRUTH_B)
    expected[:2] += pseudo
    np.testing.assert_allclose(oc.accuracy_posteriors_, expected)
    np.testing.assert_array_equal(oc.prior_workers_, [True, True, False])
    assert np.all(np.diff(oc.lower_bounds_) >= -1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_one_coin_recovery_on_a_two_project_crowd(seed):
    """One-coin workers of accuracies 0.35-0.95, K=3: project A dense, B with 2 votes per
    task; the prior from A labels B better than a fresh fit (by 1.3 to 2 points on these
    seeds), within 1.5 points of the true worker models."""
    rng = np.random.default_rng(seed)
    K, n_workers = 3, 20
    accuracy = np.where(np.arange(n_workers) % 2, rng.uniform(0.75, 0.95, n_workers),
                        rng.uniform(0.35, 0.5, n_workers))
    confusions = np.repeat(((1 - accuracy) / (K - 1))[:, None, None], K, axis=1)
    confusions = np.repeat(confusions, K, axis=2)
    confusions[:, np.arange(K), np.arange(K)] = accuracy[:, None]
    votes_a, _ = _project(rng, confusions, 600, 5)
    votes_b, truth_b = _project(rng, confusions, 300, 2)
    earlier = OneCoinDawidSkene().fit(votes_a)
    fresh = np.mean(OneCoinDawidSkene().fit(votes_b).predict(votes_b) == truth_b)
    prior = np.mean(OneCoinDawidSkene(prior_from=earlier).fit(votes_b).predict(votes_b)
                    == truth_b)
    assert prior > fresh + 0.01
    log_post = np.zeros((300, K))
    for i, j in zip(*np.nonzero(votes_b >= 0)):
        log_post[i] += np.log(confusions[j, :, votes_b[i, j]])
    assert prior > np.mean(log_post.argmax(axis=1) == truth_b) - 0.015


def test_one_coin_errors_and_clone():
    earlier = OneCoinDawidSkene().fit(VOTES_A)
    with pytest.raises(TypeError, match="must be a fitted OneCoinDawidSkene.*got DawidSkene"):
        OneCoinDawidSkene(prior_from=DawidSkene().fit(VOTES_A)).fit(VOTES_B)
    with pytest.raises(TypeError, match="got OneCoinDawidSkene"):
        DawidSkene(prior_from=earlier).fit(VOTES_B)
    assert clone(OneCoinDawidSkene(prior_from=earlier)).prior_from is earlier


@pytest.mark.parametrize("method", ["vb", "em"])
def test_mace_prior(method):
    """MACE: no pseudo-votes (strength 0) is the fresh fit; the prior's pseudo-votes enter the
    objective (it never decreases); a new worker is not matched."""
    earlier = MACE(method=method).fit(_frame(VOTES_A, ["a", "b", "c"]))
    votes = _frame(VOTES_B, ["c", "a", "d"])
    fresh = MACE(method=method).fit(votes)
    none = MACE(method=method, prior_from=earlier, prior_strength=0.0).fit(votes)
    np.testing.assert_allclose(none.confusion_matrices_, fresh.confusion_matrices_)
    strength = "auto" if method == "vb" else 5.0
    prior = MACE(method=method, prior_from=earlier, prior_strength=strength).fit(votes)
    np.testing.assert_array_equal(prior.prior_workers_, [True, True, False])
    assert np.all(np.diff(prior.lower_bounds_) >= -1e-10)
    assert not np.allclose(prior.competences_[:2], fresh.competences_[:2])
    if method == "em":
        with pytest.raises(ValueError, match="method='vb'; prior_from was fitted with"):
            MACE(prior_from=earlier).fit(votes)


@pytest.mark.parametrize("seed", range(3))
def test_mace_recovery_on_a_two_project_crowd(seed):
    """Half the workers spam (uniformly), half know the answer with probability 0.8-0.95; B
    has 2 votes per task: with the spammers known from A, B is labelled at least as well as
    by a fresh fit (0 to 2 points better on these seeds), within 2 points of the true worker
    models (1.7 on seed 1)."""
    rng = np.random.default_rng(seed)
    K, n_workers = 3, 20
    theta = np.where(np.arange(n_workers) % 2, rng.uniform(0.8, 0.95, n_workers), 0.0)
    confusions = (theta[:, None, None] * np.eye(K)
                  + (1 - theta)[:, None, None] * np.full((K, K), 1 / K))
    votes_a, _ = _project(rng, confusions, 600, 5)
    votes_b, truth_b = _project(rng, confusions, 300, 2)
    earlier = MACE().fit(votes_a)
    fresh = np.mean(MACE().fit(votes_b).predict(votes_b) == truth_b)
    prior = np.mean(MACE(prior_from=earlier).fit(votes_b).predict(votes_b) == truth_b)
    assert prior >= fresh
    log_post = np.zeros((300, K))
    for i, j in zip(*np.nonzero(votes_b >= 0)):
        log_post[i] += np.log(confusions[j, :, votes_b[i, j]])
    assert prior > np.mean(log_post.argmax(axis=1) == truth_b) - 0.02


def _confusions_of_accuracies(accuracy, K):
    """``[j, k, l]``: one-coin workers of the given accuracies, errors spread uniformly."""
    confusions = np.repeat(((1 - accuracy) / (K - 1))[:, None, None], K, axis=1)
    confusions = np.repeat(confusions, K, axis=2)
    confusions[:, np.arange(K), np.arange(K)] = accuracy[:, None]
    return confusions


def _oracle_accuracy(confusions, votes, truth):
    """Accuracy of the true worker models (uniform classes) on ``votes``."""
    log_post = np.zeros((len(votes), confusions.shape[1]))
    for i, j in zip(*np.nonzero(votes >= 0)):
        log_post[i] += np.log(confusions[j, :, votes[i, j]])
    return np.mean(log_post.argmax(axis=1) == truth)


def _hard_counts(votes, truth, K=2):
    """``[j, k, l]``: hard counts of worker j's answers l on tasks of class k."""
    counts = np.zeros((votes.shape[1], K, K))
    for i, j in zip(*np.nonzero(votes >= 0)):
        counts[j, truth[i], votes[i, j]] += 1
    return counts


@pytest.mark.parametrize("strength", ["auto", 4.0])
def test_bayesian_dawid_skene_pseudo_counts_by_hand(strength):
    """BayesianDawidSkene: a matched worker's posterior counts are the learned prior + its
    counts in B + the earlier pseudo-votes (its expected counts in A, or strength times its
    posterior mean rows there); the new worker's, the prior + its counts in B."""
    earlier = BayesianDawidSkene().fit(_frame(VOTES_A, ["a", "b", "c"]), TRUTH_A)
    earlier_prior = earlier.prior_confusion_ * earlier.prior_concentration_[:, None]
    np.testing.assert_allclose(earlier.confusion_counts_ - earlier_prior,
                               _hard_counts(VOTES_A, TRUTH_A))
    bds = BayesianDawidSkene(prior_from=earlier, prior_strength=strength)
    bds.fit(_frame(VOTES_B, ["c", "a", "d"]), TRUTH_B)
    rows = [2, 0]  # c and a in A
    expected = _hard_counts(VOTES_B, TRUTH_B)
    expected[:2] += (_hard_counts(VOTES_A, TRUTH_A)[rows] if strength == "auto"
                     else strength * earlier.confusion_matrices_[rows])
    prior = bds.prior_confusion_ * bds.prior_concentration_[:, None]
    np.testing.assert_allclose(bds.confusion_counts_ - prior, expected, atol=1e-9)
    np.testing.assert_array_equal(bds.prior_workers_, [True, True, False])
    assert np.all(np.diff(bds.lower_bounds_) >= -1e-10)
    # a third project reads the counts of both (sequential Bayes): "auto" gives c and a the
    # 3 votes per class of A and the 2 of B
    third = BayesianDawidSkene(prior_from=bds).fit(_frame(VOTES_B, ["c", "a", "d"]), TRUTH_B)
    third_prior = third.prior_confusion_ * third.prior_concentration_[:, None]
    if strength == "auto":
        np.testing.assert_allclose((third.confusion_counts_ - third_prior).sum(axis=2),
                                   [[7, 7], [7, 7], [4, 4]], atol=1e-9)


def _glad_objective(votes, abilities, difficulties, lam=None, centre=None):
    """GLAD's MAP objective per task, computed by hand: uniform classes, fixed priors
    ``alpha ~ N(1, 1)`` and ``log beta ~ N(0, 1)`` (constants left out), plus the earlier
    abilities' factors ``-lam (alpha - centre)**2 / 2``."""
    K = 2
    log_beta = -np.log(difficulties)
    total = 0.0
    for i in range(len(votes)):
        per_class = np.full(K, -np.log(K))
        for j in np.flatnonzero(votes[i] >= 0):
            right = 1.0 / (1.0 + np.exp(-abilities[j] * np.exp(log_beta[i])))
            per_class += np.where(np.arange(K) == votes[i, j], np.log(right),
                                  np.log((1 - right) / (K - 1)))
        total += np.logaddexp.reduce(per_class)
    total += -0.5 * np.sum((abilities - 1.0) ** 2) - 0.5 * np.sum(log_beta**2)
    if lam is not None:
        total -= 0.5 * np.sum(lam * (abilities - centre) ** 2)
    return total / len(votes)


@pytest.mark.parametrize("drift", [0.0, "auto"])
@pytest.mark.parametrize("strength", ["auto", 2.0])
def test_glad_prior_term_in_the_objective(strength, drift):
    """GLAD: the earlier ability of a matched worker is a Gaussian factor of precision lam
    (strength, or the earlier ability_precisions_, widened by the drift tau to ``1 / (1 / lam +
    tau**2)``) in the objective, which lower_bound_ reports (computed here by hand) and EM
    never decreases; a new worker has none."""
    fixed = dict(ability_prior=(1.0, 1.0), difficulty_prior=1.0, tol=1e-12, max_iter=1000)
    earlier = GLAD(**fixed).fit(_frame(VOTES_A, ["a", "b", "c"]))
    assert np.all(earlier.ability_precisions_ > 0)
    glad = GLAD(prior_from=earlier, prior_strength=strength, prior_drift=drift, **fixed)
    glad.fit(_frame(VOTES_B, ["c", "a", "d"]))
    np.testing.assert_array_equal(glad.prior_workers_, [True, True, False])
    assert np.all(np.diff(glad.lower_bounds_) >= -1e-12)
    assert glad.prior_drift_ >= 0.0 if drift == "auto" else glad.prior_drift_ == drift
    rows = [2, 0]
    lam = np.zeros(3)
    lam[:2] = earlier.ability_precisions_[rows] if strength == "auto" else strength
    lam = lam / (1.0 + lam * glad.prior_drift_**2)  # 1 / (1 / lam + tau**2)
    centre = np.r_[earlier.abilities_[rows], 0.0]
    by_hand = _glad_objective(VOTES_B, glad.abilities_, glad.difficulties_, lam, centre)
    np.testing.assert_allclose(glad.lower_bound_, by_hand, rtol=1e-7)
    without = _glad_objective(VOTES_B, glad.abilities_, glad.difficulties_)
    assert without - glad.lower_bound_ > 1e-3  # the factor is in it, and it costs
    # strength 0: the fresh fit; a huge strength without drift: the earlier abilities, held
    fresh = GLAD(**fixed).fit(_frame(VOTES_B, ["c", "a", "d"]))
    none = GLAD(prior_from=earlier, prior_strength=0.0, prior_drift=drift, **fixed)
    np.testing.assert_allclose(none.fit(_frame(VOTES_B, ["c", "a", "d"])).abilities_,
                               fresh.abilities_)
    held = GLAD(prior_from=earlier, prior_strength=1e8, prior_drift=0.0, **fixed)
    np.testing.assert_allclose(held.fit(_frame(VOTES_B, ["c", "a", "d"])).abilities_[:2],
                               earlier.abilities_[rows], atol=1e-6)


def test_glad_drift_estimate_by_hand():
    """The drift tau**2 = t is the root t >= 0 of sum_j (d_j**2 - v_j - t) / (v_j + t)**2: with
    equal v, mean(d**2) - v; with v = (0.5, 1.5) and d**2 = (1.5, 0), (1 - t) / (0.5 + t)**2 =
    (1.5 + t) / (1.5 + t)**2 at t = 0.5; 0 where the abilities moved less than their variances
    allow."""
    from skcrowd.aggregation._glad import _drift_scale

    assert _drift_scale(np.array([0.5, 1.5, 1.0]), np.full(3, 0.25)) == pytest.approx(
        np.sqrt(0.75))
    assert _drift_scale(np.array([1.5, 0.0]), np.array([0.5, 1.5])) == pytest.approx(
        np.sqrt(0.5))
    assert _drift_scale(np.array([0.1, 0.2]), np.array([0.5, 0.3])) == 0.0
    assert _drift_scale(np.array([]), np.array([])) == 0.0


def _drifting_projects(seed, flip):
    """One-coin workers (20, K=2) on project A (400 tasks, 5 votes each) and B (200 tasks, 3
    votes each); with ``flip``, the better half of the workers are the worse half in B
    (abilities moved between the projects)."""
    rng = np.random.default_rng(seed)
    n_workers = 20
    accuracy = np.where(np.arange(n_workers) % 2, rng.uniform(0.8, 0.95, n_workers),
                        rng.uniform(0.55, 0.65, n_workers))
    votes_a, _ = _project(rng, _confusions_of_accuracies(accuracy, 2), 400, 5)
    accuracy_b = np.roll(accuracy, 1) if flip else accuracy
    votes_b, truth_b = _project(rng, _confusions_of_accuracies(accuracy_b, 2), 200, 3)
    return votes_a, votes_b, truth_b


@pytest.mark.parametrize("seed", range(2))
def test_glad_drift_follows_the_change_of_the_workers(seed):
    """The drift chosen from the data is 0 where the workers kept their abilities (the prior then
    is the drift-free one) and large where they swapped them (0.67 and 0.95 on these seeds: the
    prior then fades, labelling B 2 and 10 points better than the drift-free prior); a huge
    fixed drift gives the fresh fit."""
    votes_a, votes_b, truth_b = _drifting_projects(seed, flip=False)
    earlier = GLAD().fit(votes_a)
    kept = GLAD(prior_from=earlier).fit(votes_b)
    votes_a, moved_b, truth_moved = _drifting_projects(seed, flip=True)
    moved = GLAD(prior_from=GLAD().fit(votes_a)).fit(moved_b)
    assert kept.prior_drift_ == 0.0 and moved.prior_drift_ > 0.5
    same = GLAD(prior_from=earlier, prior_drift=0.0).fit(votes_b)
    np.testing.assert_allclose(kept.abilities_, same.abilities_, atol=1e-4)
    fresh = GLAD().fit(moved_b)
    stiff = GLAD(prior_from=moved.prior_from, prior_drift=0.0).fit(moved_b)
    assert np.mean(moved.predict(moved_b) == truth_moved) > np.mean(
        stiff.predict(moved_b) == truth_moved) + 0.015
    huge = GLAD(prior_from=moved.prior_from, prior_drift=1e4).fit(moved_b)
    np.testing.assert_allclose(huge.abilities_, fresh.abilities_, atol=1e-5)
    np.testing.assert_allclose(huge.predict_proba(moved_b), fresh.predict_proba(moved_b),
                               atol=1e-6)
    assert np.all(np.diff(moved.lower_bounds_) >= -1e-12)


@pytest.mark.parametrize("Model", [BayesianDawidSkene, GLAD])
def test_bds_and_glad_match_workers_by_id(Model):
    earlier = Model().fit(_frame(VOTES_A, ["a", "b", "c"]))
    votes = _frame(VOTES_B, ["c", "a", "d"])
    model = Model(prior_from=earlier).fit(votes)
    shuffled = Model(prior_from=earlier).fit(votes[["d", "c", "a"]])
    np.testing.assert_array_equal(shuffled.prior_workers_, [False, True, True])
    np.testing.assert_allclose(shuffled.predict_proba(votes[["d", "c", "a"]]),
                               model.predict_proba(votes))
    attribute = "abilities_" if Model is GLAD else "confusion_matrices_"
    np.testing.assert_allclose(getattr(shuffled, attribute),
                               getattr(model, attribute)[[2, 0, 1]])


@pytest.mark.parametrize("Model", [BayesianDawidSkene, GLAD])
def test_bds_and_glad_errors_and_clone(Model):
    earlier = Model().fit(VOTES_A)
    other = DawidSkene().fit(VOTES_A)
    with pytest.raises(TypeError, match=f"must be a fitted {Model.__name__}.*got DawidSkene"):
        Model(prior_from=other).fit(VOTES_B)
    with pytest.raises(TypeError, match=f"got {Model.__name__}"):
        DawidSkene(prior_from=earlier).fit(VOTES_B)
    with pytest.raises(ValueError, match=r"classes \[0, 1\], X has \[0, 1, 2\]"):
        Model(prior_from=earlier).fit(VOTES_B + np.eye(4, 3, dtype=int))
    with pytest.raises(NotFittedError, match=f"this {Model.__name__} is not fitted"):
        Model(prior_from=Model()).fit(VOTES_B)
    with pytest.raises(ValueError, match="prior_strength"):
        Model(prior_from=earlier, prior_strength=-1.0).fit(VOTES_B)
    model = Model(prior_from=earlier, prior_strength=3.0)
    assert clone(model).prior_from is earlier
    for check in (check_get_params_invariance, check_set_params,
                  check_no_attributes_set_in_init):
        check(Model.__name__, model)
    fitted = model.fit(VOTES_B)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_allclose(restored.predict_proba(VOTES_B), fitted.predict_proba(VOTES_B))
    assert not hasattr(fitted, "_earlier_counts")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("Model", [BayesianDawidSkene, GLAD])
def test_bds_and_glad_recovery_on_a_two_project_crowd(Model, seed):
    """One-coin workers of accuracies 0.35-0.95, K=3: project A dense (600 tasks, 5 votes
    each), B with 2 votes per task: the prior from A labels B better than a fresh fit (by 5 to
    13 points on these seeds for BayesianDawidSkene, 2 to 4 for GLAD), within 3 points of the
    true worker models."""
    rng = np.random.default_rng(seed)
    K, n_workers = 3, 20
    accuracy = np.where(np.arange(n_workers) % 2, rng.uniform(0.75, 0.95, n_workers),
                        rng.uniform(0.35, 0.5, n_workers))
    confusions = _confusions_of_accuracies(accuracy, K)
    votes_a, _ = _project(rng, confusions, 600, 5)
    votes_b, truth_b = _project(rng, confusions, 300, 2)
    earlier = Model().fit(votes_a)
    fresh = np.mean(Model().fit(votes_b).predict(votes_b) == truth_b)
    prior = np.mean(Model(prior_from=earlier).fit(votes_b).predict(votes_b) == truth_b)
    assert prior > fresh + 0.015
    assert prior > _oracle_accuracy(confusions, votes_b, truth_b) - 0.03


@pytest.mark.parametrize("Model", [DawidSkene, BayesianDawidSkene])
def test_class_priors_of_a_prior_fit_by_hand(Model):
    """A fit whose workers carry an earlier model gives its class priors 2 pseudo-tasks per task
    at the answer shares (each answer counted once more): 4 known tasks of classes (3, 1), 8
    votes 0 and 4 votes 1, so (3 + 8 * 9/14, 1 + 8 * 5/14) / 12; without pseudo-votes
    (strength 0), the model's own class priors."""
    kwargs = {"smoothing": 1.0} if Model is DawidSkene else {}
    earlier = Model(**kwargs).fit(_frame(VOTES_A, ["a", "b", "c"]), TRUTH_A)
    votes = _frame(np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0], [1, 1, 1]]), ["c", "a", "d"])
    truth = np.array([0, 0, 0, 1])
    model = Model(prior_from=earlier, **kwargs).fit(votes, truth)
    np.testing.assert_allclose(model.class_priors_, np.array([3 + 8 * 9 / 14, 1 + 8 * 5 / 14]) / 12)
    assert np.all(np.diff(model.lower_bounds_) >= -1e-10)
    none = Model(prior_from=earlier, prior_strength=0.0, **kwargs).fit(votes, truth)
    fresh = Model(**kwargs).fit(votes, truth)
    np.testing.assert_allclose(none.class_priors_, fresh.class_priors_)
    np.testing.assert_allclose(fresh.class_priors_, [0.7, 0.3] if Model is DawidSkene
                               else [0.75, 0.25])


@pytest.mark.parametrize("Model", [BayesianDawidSkene, GLAD])
def test_bds_and_glad_out_of_core_match_by_worker_id(Model, tmp_path):
    """Out of core, the earlier workers' table follows the source's order of the workers."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    earlier = Model().fit(_frame(VOTES_A, ["a", "b", "c"]))
    task, worker = np.nonzero(VOTES_B >= 0)
    path = tmp_path / "votes.parquet"
    pq.write_table(pa.table({"task": task, "worker": np.array(["c", "a", "d"])[worker],
                             "label": VOTES_B[task, worker]}), path)
    model = Model(prior_from=earlier, backend="outofcore").fit(path)
    reference = Model(prior_from=earlier).fit(_frame(VOTES_B, ["c", "a", "d"]))
    order = pd.Index(model.worker_ids_).get_indexer(["c", "a", "d"])
    attribute = "abilities_" if Model is GLAD else "confusion_matrices_"
    np.testing.assert_allclose(getattr(model, attribute)[order], getattr(reference, attribute),
                               rtol=1e-6)
    np.testing.assert_array_equal(model.prior_workers_[order], [True, True, False])
