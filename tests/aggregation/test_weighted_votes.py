"""Wawa, ZeroBasedSkill and MMSR: hand-computed cases, recovery of simulated truth.

The behaviour they share with every aggregator (formats, bad input, pickling, extreme data) is
tested in test_aggregators.py, their kernels in kernels/, the engines' agreement in
kernels/test_engine.py; KOS (binary only) in test_kos.py.
"""

import numpy as np
import pytest
from sklearn.base import clone

from skcrowd.aggregation import KOS, MMSR, MajorityVote, Wawa, ZeroBasedSkill, _mmsr
from skcrowd.datasets import simulate_annotators

# task 0 is a tie; worker 2 disagrees with the majority on task 1
TIED = np.array([[0, 1, -1], [0, 0, 1], [1, 1, 1]])


# -- hand-computed cases -----------------------------------------------------------------


def test_wawa_by_hand():
    wawa = Wawa().fit(TIED)
    # majority: task 0 tied (credit 1/2 to each vote), task 1 -> 0, task 2 -> 1
    np.testing.assert_allclose(wawa.skills_, [5 / 6, 5 / 6, 1 / 2])
    np.testing.assert_allclose(wawa.class_priors_, [3 / 8, 5 / 8])
    # worker 0 says 0 (5/6), workers 1 and 2 say 1 (5/6 + 1/2)
    np.testing.assert_allclose(wawa.predict_proba([[0, 1, 1]]), [[5 / 13, 8 / 13]])
    np.testing.assert_array_equal(wawa.predict(TIED), [0, 0, 1])  # the tie: first class
    np.testing.assert_allclose(wawa.predict_proba([[-1, -1, -1]]), [wawa.class_priors_])


def test_zero_based_skill_by_hand():
    zbs = ZeroBasedSkill(lr_init=0.5, lr_steps_to_reduce=2, lr_reduce_factor=0.5, max_iter=3,
                         tol=0).fit(TIED)
    # agreement with the weighted vote is (5/6, 5/6, 1/2) at every iteration (the tie of task 0
    # stays a tie: workers 0 and 1 keep equal skills); skills start at 1/K = 1/2
    s = np.full(3, 0.5)
    agreement = np.array([5 / 6, 5 / 6, 1 / 2])
    for lr in (0.5, 0.25, 0.25):  # reduced at iteration 2
        s = s + lr * (agreement - s)
    np.testing.assert_allclose(zbs.skills_, s)
    assert zbs.n_iter_ == 3
    np.testing.assert_allclose(zbs.skills_[:2], 71 / 96)


def test_zero_based_skill_first_step_is_wawa_and_stops_when_labels_settle(make_votes):
    votes = make_votes(1, 80, 10, accuracy=0.7, empty_task=3)
    one = ZeroBasedSkill(max_iter=1).fit(votes)
    np.testing.assert_allclose(one.skills_, Wawa().fit(votes).skills_)
    full = ZeroBasedSkill().fit(votes)
    assert full.n_iter_ < full.max_iter  # the weighted votes stopped changing
    again = clone(full).set_params(max_iter=full.n_iter_ + 5).fit(votes)
    np.testing.assert_array_equal(again.skills_, full.skills_)


def test_zero_based_skill_verbose(capsys):
    ZeroBasedSkill(verbose=2).fit(TIED)
    out = capsys.readouterr().out
    assert "Iteration 1: largest skill change" in out and "ZeroBasedSkill: 2 iterations" in out


def _rank_one(s):
    W = len(s)
    rows, cols = np.nonzero(~np.eye(W, dtype=bool))
    indptr = np.arange(0, W * (W - 1) + 1, W - 1)
    return indptr, cols, s[rows] * s[cols]


def test_m_msr_recovers_a_rank_one_matrix_and_resists_a_corrupted_worker():
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.75, 0.85])
    indptr, neighbour, C = _rank_one(s)
    model = MMSR(random_state=0)
    np.testing.assert_allclose(model._m_msr(indptr, neighbour, np.abs(C), np.zeros(8), 1e-3), s,
                               rtol=1e-6)
    corrupted = C.copy()
    rows = np.repeat(np.arange(8), 7)
    corrupted[(rows == 0) | (neighbour == 0)] = 1.0  # worker 0 agrees with everyone
    corrupted[(rows == 1) | (neighbour == 1)] = 0.0  # worker 1 with nobody beyond chance
    trimmed = np.maximum(np.diff(indptr) // 2 - 1, 0)  # n_trimmed="auto": 2 of 7 on each side
    robust = model._m_msr(indptr, neighbour, np.abs(corrupted), trimmed, 1e-3)
    plain = model._m_msr(indptr, neighbour, np.abs(corrupted), np.zeros(8), 1e-3)
    assert np.abs(robust[2:] - s[2:]).max() < 1e-6
    assert np.abs(plain[2:] - s[2:]).max() > 0.05


def test_m_msr_reads_each_reliability_off_the_diagonal_of_u_v():
    """Two groups of workers who share no task: each group's products u_i v_j are fitted, but
    the split of u v^T between u and v may differ between the groups. |s| = sqrt(u_j v_j), the
    diagonal of the completed matrix, is each group's s whatever the split and the seed (u
    alone, rescaled once for all workers, was off by a factor of 0.3 to 3.9 for one group)."""
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.75, 0.85])
    (ptr_a, nb_a, C_a), (ptr_b, nb_b, C_b) = _rank_one(s[:4]), _rank_one(s[4:])
    indptr = np.concatenate([ptr_a, ptr_b[1:] + ptr_a[-1]])
    neighbour, C = np.concatenate([nb_a, nb_b + 4]), np.concatenate([C_a, C_b])
    for seed in range(3):
        model = MMSR(random_state=seed)
        np.testing.assert_allclose(model._m_msr(indptr, neighbour, C, np.zeros(8), 1e-3), s,
                                   rtol=1e-6)
        assert model.converged_


@pytest.mark.parametrize("seed", range(3))
def test_mmsr_stops_within_tol_of_its_limit(seed):
    """The default tol stops where the reliabilities move by less than 1e-6 an iteration: the
    accuracies are then within 1e-4 of the fixed point that a tol of 1e-13 reaches (in two to
    three times the iterations), and the labels are the same but at exact ties."""
    rng = np.random.default_rng(seed)
    y = rng.integers(3, size=300)
    votes = simulate_annotators(y, 40, n_classes=3, accuracy=(0.4, 0.9), votes_per_task=3,
                                random_state=seed).votes
    votes = np.hstack([votes, np.full((300, 2), -1)])  # two workers without votes
    fitted = MMSR(random_state=seed).fit(votes)
    limit = MMSR(random_state=seed, tol=1e-13, max_iter=100_000).fit(votes)
    assert fitted.converged_ and limit.converged_
    assert fitted.n_iter_ < limit.n_iter_
    assert np.abs(fitted.accuracies_ - limit.accuracies_).max() < 1e-4
    proba = limit.predict_proba(votes)
    top_two = np.sort(proba, axis=1)[:, -2:]
    untied = top_two[:, 1] - top_two[:, 0] > 1e-9
    np.testing.assert_array_equal(fitted.predict(votes)[untied], limit.predict(votes)[untied])
    np.testing.assert_allclose(fitted.predict_proba(votes), proba, atol=1e-3)


def test_signs_follow_the_sign_pattern():
    s = np.array([0.9, -0.5, 0.7, 0.6, -0.3, 0.8])
    indptr, neighbour, C = _rank_one(s)
    np.testing.assert_array_equal(_mmsr._signs(indptr, neighbour, C, np.abs(s)), np.sign(s))


def test_mmsr_weights_are_one_coin_log_odds_and_score_is_its_likelihood():
    rng = np.random.default_rng(0)
    y = rng.integers(3, size=300)
    votes = simulate_annotators(y, 12, accuracy=(0.5, 0.9), votes_per_task=6,
                                random_state=0).votes
    mmsr = MMSR(random_state=0).fit(votes)
    p = mmsr.accuracies_
    np.testing.assert_allclose(mmsr.weights_, np.log(2 * p / (1 - p)))
    np.testing.assert_allclose(mmsr.class_priors_, 1 / 3)
    # one-coin likelihood of task 0's votes, computed directly
    row = votes[0]
    lik = sum(np.prod([p[j] if row[j] == k else (1 - p[j]) / 2 for j in np.flatnonzero(row >= 0)])
              for k in range(3)) / 3
    assert mmsr.score_samples(votes)[0] == pytest.approx(np.log(lik))
    assert mmsr.score(votes) == pytest.approx(np.mean(mmsr.score_samples(votes)))
    # the posterior is the normalized one-coin likelihood of each class
    post = [np.prod([p[j] if row[j] == k else (1 - p[j]) / 2 for j in np.flatnonzero(row >= 0)])
            for k in range(3)]
    np.testing.assert_allclose(mmsr.predict_proba(votes[:1])[0], np.array(post) / sum(post))


def test_mmsr_isolated_worker_gets_the_mean_accuracy():
    votes = np.array([[0, 0, -1], [1, 1, -1], [0, 1, -1], [-1, -1, 1]] * 5)
    mmsr = MMSR(random_state=0).fit(votes)
    assert mmsr.accuracies_[2] == pytest.approx(mmsr.accuracies_[:2].mean())


def test_mmsr_without_shared_tasks_is_a_majority_vote_and_one_class_is_certain():
    # found by the property tests: no two workers share a task (nobody assessable), one class
    single = MMSR(n_classes=3, random_state=0).fit(np.array([[1, -1], [-1, 2]]))
    np.testing.assert_allclose(single.accuracies_, [2 / 3, 2 / 3])
    np.testing.assert_allclose(single.predict_proba(np.array([[1, -1]])), [[1 / 6, 2 / 3, 1 / 6]])
    np.testing.assert_allclose(single.score_samples(np.array([[1, -1]])), [np.log(1 / 3)])
    one = MMSR(random_state=0).fit(np.array([[0, 0], [0, -1]]))
    np.testing.assert_array_equal(one.score_samples(np.array([[0, 0]])), [0.0])


def test_mmsr_warns_when_not_converged(make_votes):
    votes = make_votes(2, 60, 8, accuracy=0.7, empty_task=0)
    with pytest.warns(Warning, match="MMSR did not converge in max_iter=1"):
        fitted = MMSR(max_iter=1, random_state=0).fit(votes)
    assert fitted.n_iter_ == 1 and not fitted.converged_


# -- recovery of simulated truth ------------------------------------------------------------


def test_recovery_with_adversarial_workers():
    """Binary, 40 % adversarial workers (flipped labels), 10 votes per task: majority vote
    fails, the agreement-weighted votes help, the reliability models recover the truth."""
    rng = np.random.default_rng(0)
    y = rng.integers(2, size=1000)
    votes = simulate_annotators(y, 50, accuracy=(0.6, 0.9), votes_per_task=10, adversarial=0.4,
                                random_state=0).votes
    accuracy = {type(m).__name__: np.mean(m.fit_predict(votes) == y)
                for m in (MajorityVote(random_state=0), Wawa(), ZeroBasedSkill(),
                          MMSR(random_state=0), KOS(random_state=0))}
    assert accuracy["MajorityVote"] < 0.7
    assert accuracy["Wawa"] > accuracy["MajorityVote"] + 0.05
    assert accuracy["ZeroBasedSkill"] >= accuracy["Wawa"]
    assert accuracy["MMSR"] > 0.95 and accuracy["KOS"] > 0.95


def test_mmsr_estimates_the_workers_accuracies():
    rng = np.random.default_rng(1)
    y = rng.integers(4, size=2000)
    sim = simulate_annotators(y, 30, n_classes=4, accuracy=(0.35, 0.95), votes_per_task=8,
                              random_state=1)
    votes = sim.votes
    voted = votes >= 0
    true = ((votes == y[:, None]) & voted).sum(axis=0) / voted.sum(axis=0)  # as they voted
    mmsr = MMSR(random_state=0).fit(votes)
    assert np.abs(mmsr.accuracies_ - true).max() < 0.05
    assert np.mean(mmsr.predict(votes) == y) > np.mean(
        MajorityVote(random_state=0).fit_predict(votes) == y)
