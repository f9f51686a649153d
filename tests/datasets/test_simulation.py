"""Tests of the simulated crowds: confusions, worker kinds, vote sampling, outputs."""

import numpy as np
import pytest
import scipy.sparse as sp

from skcrowd import Votes, check_votes
from skcrowd.datasets import make_confusion_matrix, make_crowd_classification, simulate_annotators


def empirical_confusions(votes, y, n_workers, n_classes):
    """Row-normalized counts of (worker, true class, vote) from dense votes."""
    rows, workers = np.nonzero(votes >= 0)
    counts = np.zeros((n_workers, n_classes, n_classes))
    np.add.at(counts, (workers, y[rows], votes[rows, workers]), 1)
    return counts / counts.sum(axis=2, keepdims=True)


# ---------------------------------------------------------------------------
# make_confusion_matrix
# ---------------------------------------------------------------------------


def test_confusion_patterns():
    uniform = make_confusion_matrix(4, noise=0.3)
    np.testing.assert_allclose(np.diag(uniform), 0.7)
    np.testing.assert_allclose(uniform[0, 1:], 0.1)

    asym = make_confusion_matrix(6, noise=0.4, pattern="asymmetric", random_state=0)
    np.testing.assert_allclose(np.diag(asym), 0.6)
    off = asym - np.diag(np.diag(asym))
    assert ((off > 0).sum(axis=1) == 1).all()  # one target class per row
    np.testing.assert_allclose(off.max(axis=1), 0.4)

    sym = make_confusion_matrix(5, noise=0.25, pattern="symmetric", random_state=1)
    np.testing.assert_array_equal(sym, sym.T)  # pairs flip into each other
    noiseless = np.isclose(np.diag(sym), 1.0)
    assert noiseless.sum() == 1  # 5 classes: two pairs and one unpaired class
    np.testing.assert_allclose(np.diag(sym)[~noiseless], 0.75)

    for conf in (uniform, asym, sym):
        np.testing.assert_allclose(conf.sum(axis=1), 1.0)


# ---------------------------------------------------------------------------
# Confusion matrices of the workers and convergence of the votes to them
# ---------------------------------------------------------------------------


def test_regular_workers_follow_accuracy_and_class_confusion():
    weights = np.array([[0, 1, 3], [1, 0, 1], [0, 2, 0]])  # mistakes on 0 go 3:1 to class 2
    sim = simulate_annotators(
        np.array([0, 1, 2]), 2, accuracy=[0.6, 0.9], class_confusion=weights, random_state=0
    )
    np.testing.assert_allclose(sim.confusions[0], [[0.6, 0.1, 0.3], [0.2, 0.6, 0.2], [0, 0.4, 0.6]])
    np.testing.assert_allclose(np.diagonal(sim.confusions[1]), 0.9)


def test_empirical_confusions_converge_to_the_true_ones():
    rng = np.random.RandomState(0)
    K, n_workers = 3, 4
    y = rng.randint(0, K, size=15000)
    common = make_confusion_matrix(K, noise=0.6, pattern="asymmetric", random_state=0)
    sim = simulate_annotators(
        y, n_workers, accuracy=(0.5, 0.95), class_confusion=[[0, 1, 4], [1, 0, 1], [2, 1, 0]],
        common_confusion=common, common_weight=[0.0, 0.3, 0.5, 1.0], random_state=1,
    )
    emp = empirical_confusions(sim.votes, y, n_workers, K)
    # about 5000 votes per row: standard error <= 0.007
    np.testing.assert_allclose(emp, sim.confusions, atol=0.03)
    # the common confusion is mixed in with each worker's weight
    np.testing.assert_allclose(sim.confusions[3], common)


def test_binary_workers_with_sensitivity_and_specificity():
    # the simulated annotators of Rodrigues & Pereira (2018)
    sens, spec = [0.6, 0.9, 0.5, 0.9, 0.9], [0.7, 0.8, 0.5, 0.2, 0.9]
    y = np.random.RandomState(0).randint(0, 2, size=12000)
    sim = simulate_annotators(y, 5, sensitivity=sens, specificity=spec, random_state=0)
    np.testing.assert_allclose(sim.confusions[:, 1, 1], sens)
    np.testing.assert_allclose(sim.confusions[:, 0, 0], spec)
    emp = empirical_confusions(sim.votes, y, 5, 2)
    np.testing.assert_allclose(emp, sim.confusions, atol=0.03)


def test_spammers_answer_uniformly_whatever_the_truth():
    y = np.repeat([0, 1, 2, 3], 2500)
    sim = simulate_annotators(y, 10, spammers=0.3, accuracy=0.9, random_state=0)
    spam = sim.worker_type == "spammer"
    assert spam.sum() == 3
    np.testing.assert_allclose(sim.confusions[spam], 0.25)
    emp = empirical_confusions(sim.votes, y, 10, 4)
    np.testing.assert_allclose(emp[spam], 0.25, atol=0.04)
    np.testing.assert_allclose(np.diagonal(emp[~spam], axis1=1, axis2=2), 0.9, atol=0.03)


def test_adversarial_and_constant_workers():
    K = 5
    y = np.tile(np.arange(K), 200)
    types = ["adversarial", "adversarial", "constant", "regular"]
    sim = simulate_annotators(y, 4, worker_types=types, accuracy=1.0, random_state=3)
    for j in (0, 1):  # a permutation without fixed point: never the true class
        answers = sim.votes[:, j]
        assert not np.any(answers == y)
        assert len(np.unique(answers)) == K
        for k in range(K):  # deterministic relabelling at accuracy 1
            assert len(np.unique(answers[y == k])) == 1
    assert len(np.unique(sim.votes[:, 2])) == 1
    np.testing.assert_array_equal(sim.votes[:, 3], y)
    assert sim.worker_type.tolist() == types

    flips = simulate_annotators([0, 1, 1], 3, adversarial=1.0, accuracy=1.0, random_state=0)
    np.testing.assert_array_equal(flips.votes, [[1, 1, 1], [0, 0, 0], [0, 0, 0]])


# ---------------------------------------------------------------------------
# Who votes on what
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_workers, per_task", [(40, 3), (10, 8), (10, 10), (7, (1, 7))])
def test_votes_per_task_are_distinct_uniform_workers(n_workers, per_task):
    n_tasks = 4000
    sim = simulate_annotators(
        np.zeros(n_tasks, dtype=int), n_workers, n_classes=2, votes_per_task=per_task,
        output="triplets", random_state=0,
    )
    v = sim.votes
    assert isinstance(v, Votes)
    assert np.all(np.diff(v.task) >= 0)  # task-sorted
    pairs = v.task * n_workers + v.worker
    assert len(np.unique(pairs)) == v.n_votes  # distinct workers on each task
    per = v.votes_per_task()
    if isinstance(per_task, tuple):
        assert per.min() == per_task[0] and per.max() == per_task[1]
        expected_mean = sum(per_task) / 2
        assert abs(per.mean() - expected_mean) < 0.1
    else:
        assert (per == per_task).all()
    # workers are equally likely: every worker's share within 5 standard errors
    share = v.votes_per_worker() / v.n_votes
    p = 1 / n_workers
    assert np.all(np.abs(share - p) < 5 * np.sqrt(p * (1 - p) / v.n_votes) + 1e-12)


def test_outputs_hold_the_same_votes_and_are_reproducible():
    y = np.random.RandomState(0).randint(0, 3, size=300)
    kwargs = dict(accuracy=(0.4, 0.9), votes_per_task=(2, 4), spammers=0.2, random_state=7)
    dense = simulate_annotators(y, 12, **kwargs)
    sparse = simulate_annotators(y, 12, output="sparse", **kwargs)
    triplets = simulate_annotators(y, 12, output="triplets", **kwargs)
    assert dense.votes.dtype == np.int64 and dense.votes.min() == -1
    assert sp.issparse(sparse.votes)
    from_sparse = check_votes(sparse.votes, n_classes=3)  # stored zeros are label 0
    np.testing.assert_array_equal(from_sparse.to_dense(), dense.votes)
    np.testing.assert_array_equal(triplets.votes.to_dense(), dense.votes)
    np.testing.assert_array_equal(dense.confusions, triplets.confusions)
    again = simulate_annotators(y, 12, **kwargs)
    np.testing.assert_array_equal(again.votes, dense.votes)
    np.testing.assert_array_equal(again.worker_type, dense.worker_type)
    other = simulate_annotators(y, 12, **{**kwargs, "random_state": 8})
    assert not np.array_equal(other.votes, dense.votes)


def test_large_sparse_crowd_without_dense_matrix():
    # 1000 workers, 3 votes on each of 1e5 tasks: a dense matrix would hold 1e8 cells
    y = np.random.RandomState(0).randint(0, 10, size=100_000)
    sim = simulate_annotators(
        y, 1000, accuracy=0.8, votes_per_task=3, output="sparse", random_state=0
    )
    assert sim.votes.nnz == 300_000
    v = check_votes(sim.votes, n_classes=10)
    mv = v.counts().argmax(axis=1)
    assert 0.85 < np.mean(mv == y) < 0.95  # P(majority right) at accuracy 0.8, 3 votes: ~0.9


# ---------------------------------------------------------------------------
# make_crowd_classification, bad input
# ---------------------------------------------------------------------------


def test_make_crowd_classification_imbalanced_classes():
    crowd = make_crowd_classification(
        2000, n_classes=3, weights=[0.7, 0.2, 0.1], n_workers=5, votes_per_task=2,
        random_state=0,
    )
    assert crowd.data.shape == (2000, 20)
    np.testing.assert_allclose(np.bincount(crowd.target) / 2000, [0.7, 0.2, 0.1], atol=0.02)
    assert ((crowd.votes >= 0).sum(axis=1) == 2).all()
    again = make_crowd_classification(
        2000, n_classes=3, weights=[0.7, 0.2, 0.1], n_workers=5, votes_per_task=2,
        random_state=0,
    )
    np.testing.assert_array_equal(again.votes, crowd.votes)


@pytest.mark.parametrize(
    "y, n_workers, kwargs, match",
    [
        ([0, 3], 2, {"n_classes": 3}, "label 3 at row 1"),
        ([0, 1], 2, {"votes_per_task": 3}, "more distinct workers"),
        ([0, 1], 2, {"votes_per_task": (2, 1)}, r"range \(low, high\)"),
        ([0, 2], 2, {"sensitivity": 0.9, "specificity": 0.8}, "n_classes=3"),
        ([0, 1], 2, {"sensitivity": 0.9}, "both sensitivity and specificity"),
        ([0, 1], 3, {"accuracy": [0.5, 0.6]}, "one value per worker"),
        ([0, 1], 2, {"accuracy": [0.5, 1.2]}, "accuracy of worker 1 is 1.2"),
        ([0, 1], 2, {"worker_types": ["regular", "expert"]}, r"worker_types\[1\] is 'expert'"),
        ([0, 1], 4, {"spammers": 0.5, "adversarial": 0.75}, "out of n_workers=4"),
        ([0, 1, 2], 2, {"class_confusion": np.eye(3)}, "no off-diagonal weight in row 0"),
        ([0, 1], 2, {"common_confusion": [[0.5, 0.4], [0, 1]]}, "row 0 of common_confusion"),
        (["a", "b"], 2, {}, "class indices"),
    ],
)
def test_bad_input_names_the_problem(y, n_workers, kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate_annotators(np.asarray(y), n_workers, **kwargs)
