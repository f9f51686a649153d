"""One-coin kernels: hand-computed posteriors and agreement, per worker and per cell."""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation.kernels import (BlockLayout, one_coin_agreement,
                                         one_coin_block_statistics, one_coin_e_step)

from ._crowds import random_votes


def _by_hand(votes, probability, log_priors):
    """Posteriors and log-likelihoods from ``probability(worker, answer, truth)``, task by task."""
    K = len(log_priors)
    resp, ll = [], []
    for row in votes:
        joint = np.exp(log_priors).copy()
        for j, a in enumerate(row):
            if a >= 0:
                joint *= [probability(j, a, t) for t in range(K)]
        resp.append(joint / joint.sum())
        ll.append(np.log(joint.sum()))
    return np.array(resp), np.array(ll)


def test_worker_slots_by_hand(engine):
    votes = np.array([[0, 0, 1], [2, -1, 2], [-1, -1, -1]])
    accuracy = np.array([0.9, 0.6, 0.75])
    K = 3
    log_priors = np.log([0.5, 0.3, 0.2])
    log_other = np.log((1 - accuracy) / (K - 1))
    layout = BlockLayout(check_votes(votes, n_classes=K))
    resp, ll = one_coin_e_step(layout, log_other, np.log(accuracy) - log_other, log_priors)
    expected, expected_ll = _by_hand(
        votes, lambda j, a, t: accuracy[j] if a == t else (1 - accuracy[j]) / (K - 1), log_priors)
    np.testing.assert_allclose(resp, expected, rtol=1e-12)
    np.testing.assert_allclose(ll, expected_ll, rtol=1e-12)
    np.testing.assert_allclose(resp[2], np.exp(log_priors))  # no votes: the priors, ll 0
    assert ll[2] == 0.0
    # agreement: each vote's posterior of its own label, summed per worker
    st = one_coin_block_statistics(layout, log_other, np.log(accuracy) - log_other, log_priors,
                                   resp=np.empty((3, K)))
    np.testing.assert_allclose(st.agreement, [expected[0, 0] + expected[1, 2], expected[0, 0],
                                              expected[0, 1] + expected[1, 2]], rtol=1e-12)
    np.testing.assert_allclose(st.class_counts, expected.sum(axis=0), rtol=1e-12)
    assert st.log_likelihood == pytest.approx(expected_ll.sum(), rel=1e-12)
    np.testing.assert_allclose(st.resp, expected, rtol=1e-12)


def test_cell_slots_by_hand(engine):
    """Per (worker, label) cell: a MACE-like answer distribution."""
    rng = np.random.default_rng(0)
    votes = np.array([[0, 1, 1, -1], [1, 1, -1, 0], [0, -1, 0, 0]])
    K, W = 2, 4
    other = rng.uniform(0.05, 0.5, size=(W, K))  # P(a | t != a)
    right = other + rng.uniform(0.1, 0.5, size=(W, K))  # P(a | t == a)
    log_priors = np.log([0.7, 0.3])
    layout = BlockLayout(check_votes(votes))
    resp, ll = one_coin_e_step(layout, np.log(other), np.log(right / other), log_priors,
                               per_cell=True)
    expected, expected_ll = _by_hand(
        votes, lambda j, a, t: right[j, a] if a == t else other[j, a], log_priors)
    np.testing.assert_allclose(resp, expected, rtol=1e-12)
    np.testing.assert_allclose(ll, expected_ll, rtol=1e-12)
    agreement = one_coin_agreement(layout, expected, per_cell=True).reshape(W, K)
    manual = np.zeros((W, K))
    for i, row in enumerate(votes):
        for j, a in enumerate(row):
            if a >= 0:
                manual[j, a] += expected[i, a]
    np.testing.assert_allclose(agreement, manual, rtol=1e-12)


def test_agreement_adds_into_running_sums(engine):
    rng = np.random.default_rng(1)
    votes = random_votes(rng, n_tasks=90, n_workers=8, K=3)
    log_other = np.log(rng.uniform(0.05, 0.3, size=votes.n_workers))
    log_ratio = rng.normal(1.0, 1.0, size=votes.n_workers)
    log_priors = np.log([0.2, 0.3, 0.5])
    whole = one_coin_block_statistics(BlockLayout(votes), log_other, log_ratio, log_priors)
    running = np.full(votes.n_workers, 3.0)
    for rows in np.array_split(np.arange(votes.n_tasks), 3):
        out = one_coin_block_statistics(BlockLayout(votes.take_tasks(rows)), log_other,
                                        log_ratio, log_priors, agreement=running)
        assert out.agreement is running
    np.testing.assert_allclose(running - 3.0, whole.agreement, atol=1e-12)


def test_extreme_tables_stay_finite(engine):
    """1000 votes per task and log-probabilities at the floor: no overflow, no NaN."""
    rng = np.random.default_rng(2)
    votes = rng.integers(2, size=(4, 1000))
    votes[0] = 0
    layout = BlockLayout(check_votes(votes))
    log_other = np.full(1000, -708.0)
    log_ratio = np.full(1000, 708.0)
    resp, ll = one_coin_e_step(layout, log_other, log_ratio, np.log([0.5, 0.5]))
    assert np.all(np.isfinite(resp)) and np.all(np.isfinite(ll))
    np.testing.assert_allclose(resp.sum(axis=1), 1.0)
    assert resp[0, 0] == 1.0


def test_table_size_is_checked():
    layout = BlockLayout(check_votes(np.array([[0, 1]])))
    with pytest.raises(ValueError, match="log_other must hold 4 values .*worker and label"):
        one_coin_e_step(layout, np.zeros(2), np.zeros(4), np.log([0.5, 0.5]), per_cell=True)


def test_parallel_chunks_match_one_chunk(monkeypatch):
    """The numba pass split in chunks (large blocks) gives the one-chunk numbers."""
    from skcrowd.aggregation import kernels
    from skcrowd.aggregation.kernels import _common, one_coin

    if kernels.numba is None:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(kernels, "ENGINE", "numba")
    rng = np.random.default_rng(3)
    votes = random_votes(rng, n_tasks=3000, n_workers=30, K=4, density=0.4)
    layout = BlockLayout(votes)
    tables = (np.log(rng.uniform(0.05, 0.3, size=(30, 4))), rng.normal(1.0, 1.0, size=(30, 4)))
    priors = np.log([0.1, 0.2, 0.3, 0.4])
    one = one_coin_block_statistics(layout, *tables, priors, per_cell=True)
    monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 1)
    assert one_coin._oc_n_chunks(BlockLayout(votes), True) > 1
    many = one_coin_block_statistics(BlockLayout(votes), *tables, priors, per_cell=True)
    np.testing.assert_allclose(many.agreement, one.agreement, rtol=1e-12)
    np.testing.assert_allclose(many.class_counts, one.class_counts, rtol=1e-12)
    assert many.log_likelihood == pytest.approx(one.log_likelihood, rel=1e-12)


# -- per-task log-priors (known tasks, a classifier's predictions) ----------------------


def _per_task_by_hand(votes, probability, task_priors):
    """``_by_hand`` with a prior row per task (zeros allowed)."""
    resp, ll = [], []
    for row, prior in zip(votes, task_priors):
        joint = np.array(prior, dtype=float)
        for j, a in enumerate(row):
            if a >= 0:
                joint *= [probability(j, a, t) for t in range(len(prior))]
        resp.append(joint / joint.sum())
        ll.append(np.log(joint.sum()))
    return np.array(resp), np.array(ll)


@pytest.mark.parametrize("per_cell", [False, True])
def test_log_task_priors_by_hand(engine, per_cell):
    """Each task's prior row replaces the class priors; -inf gives exact zeros, a known task's
    log-likelihood is log P(votes, its class)."""
    rng = np.random.default_rng(5)
    votes = np.array([[0, 2, 1], [2, -1, 2], [-1, -1, -1], [1, 1, 0]])
    K, W = 3, 3
    other = rng.uniform(0.05, 0.3, size=(W, K) if per_cell else W)
    right = other + rng.uniform(0.1, 0.5, size=other.shape)
    task_priors = np.array([[0.2, 0.5, 0.3], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.6, 0.0, 0.4]])
    with np.errstate(divide="ignore"):
        log_task_priors = np.log(task_priors)  # task 1 known (2), task 2 known without votes

    def probability(j, a, t):
        table = (right if a == t else other)[j]
        return table[a] if per_cell else table

    layout = BlockLayout(check_votes(votes, n_classes=K))
    tables = np.log(other), np.log(right / other)
    resp, ll = one_coin_e_step(layout, *tables, np.log([0.5, 0.3, 0.2]), per_cell=per_cell,
                               log_task_priors=log_task_priors)
    expected, expected_ll = _per_task_by_hand(votes, probability, task_priors)
    np.testing.assert_allclose(resp, expected, rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(resp[1:3], [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # never NaN
    assert resp[3, 1] == 0.0
    np.testing.assert_allclose(ll, expected_ll, rtol=1e-12)
    assert ll[2] == 0.0  # no votes, known class: log 1
    st = one_coin_block_statistics(layout, *tables, np.log([0.5, 0.3, 0.2]), per_cell=per_cell,
                                   resp=np.empty((4, K)), log_task_priors=log_task_priors)
    np.testing.assert_array_equal(st.resp, resp)
    np.testing.assert_allclose(st.class_counts, resp.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(st.agreement, one_coin_agreement(layout, resp, per_cell=per_cell),
                               rtol=1e-12)
    assert st.log_likelihood == pytest.approx(ll.sum(), rel=1e-12)
    with pytest.raises(ValueError, match=r"log_task_priors must have shape \(4, 3\)"):
        one_coin_e_step(layout, *tables, np.zeros(3), per_cell=per_cell,
                        log_task_priors=np.zeros((3, 3)))


def test_parallel_chunks_keep_known_tasks_exact(monkeypatch):
    """The chunked numba pass gives a known task's other classes exactly 0, as numpy does."""
    from skcrowd.aggregation import kernels
    from skcrowd.aggregation.kernels import _common, one_coin

    if kernels.numba is None:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(6)
    votes = random_votes(rng, n_tasks=600, n_workers=5, K=4, density=0.9)
    tables = (np.log(rng.uniform(0.05, 0.3, size=(5, 4))), rng.normal(1.0, 1.0, size=(5, 4)))
    log_task_priors = np.log(rng.dirichlet(np.ones(4), size=600))
    known = rng.random(600) < 0.2
    known[5] = True
    log_task_priors[known] = -np.inf
    log_task_priors[known, 2] = np.log(0.3)
    monkeypatch.setattr(kernels, "ENGINE", "numpy")
    expected = one_coin_block_statistics(BlockLayout(votes), *tables, np.zeros(4), per_cell=True,
                                         resp=np.empty((600, 4)),
                                         log_task_priors=log_task_priors)
    monkeypatch.setattr(kernels, "ENGINE", "numba")
    monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 1)
    assert one_coin._oc_n_chunks(BlockLayout(votes), True) > 1
    got = one_coin_block_statistics(BlockLayout(votes), *tables, np.zeros(4), per_cell=True,
                                    resp=np.empty((600, 4)), log_task_priors=log_task_priors)
    np.testing.assert_array_equal(got.resp[known], np.eye(4)[np.full(known.sum(), 2)])
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
