"""Shared kernel numerics: block layout, vote frequencies, argmax, the vectorized exp."""

import numpy as np
import pytest

from skcrowd.aggregation import kernels
from skcrowd.aggregation.kernels import BlockLayout, _common, naive_soft_labels, row_argmax

from ._crowds import random_votes


def test_layout_chunks_cut_votes_evenly_at_task_boundaries():
    votes = random_votes(np.random.default_rng(0), n_tasks=200)
    layout = BlockLayout(votes)
    bounds = layout.chunk_bounds(8)
    assert bounds[0] == 0 and bounds[-1] == votes.n_tasks and np.all(np.diff(bounds) >= 0)
    per_chunk = np.diff(layout.task_indptr[bounds])
    assert per_chunk.sum() == votes.n_votes
    assert per_chunk.max() - per_chunk.min() <= 2 * votes.votes_per_task().max()


def test_layout_pickles_without_its_work_arrays():
    import pickle

    layout = BlockLayout(random_votes(np.random.default_rng(0)))
    layout.scratch("buffer", (1000, 1000))
    restored = pickle.loads(pickle.dumps(layout))
    assert restored._scratch == {} and len(pickle.dumps(layout)) < 100_000
    np.testing.assert_array_equal(restored.task_indptr, layout.task_indptr)


def test_layout_worker_order_lists_each_vote_once():
    votes = random_votes(np.random.default_rng(0))
    layout = BlockLayout(votes)
    indptr, position, task, label = layout.worker_order
    assert indptr[-1] == votes.n_votes
    # the vote at task-order index v sits at worker-order index position[v]
    np.testing.assert_array_equal(task[position], votes.task)
    np.testing.assert_array_equal(label[position], votes.label)
    worker_of_slot = np.repeat(np.arange(votes.n_workers), np.diff(indptr))
    np.testing.assert_array_equal(worker_of_slot[position], votes.worker)


def test_naive_soft_labels_and_row_argmax_by_hand(engine):
    task, label = np.array([2, 0, 2, 0, 0]), np.array([1, 0, 0, 1, 1])
    freq = naive_soft_labels(task, label, 3, np.array([0.25, 0.75]))
    np.testing.assert_allclose(freq, [[1 / 3, 2 / 3], [0.25, 0.75], [0.5, 0.5]])
    np.testing.assert_array_equal(row_argmax(freq), [1, 1, 0])  # a tie: the first class
    big = np.random.default_rng(0).random((60_000, 3))  # the parallel driver
    np.testing.assert_array_equal(row_argmax(big), np.argmax(big, axis=1))


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
def test_vectorized_exp_matches_numpy():
    """The numba softmax's exp: 1e-15 relative from 0 down to -708, exp(-708) below, and
    exactly 0 at -inf (a class a per-task log-prior rules out)."""
    x = np.concatenate([-np.geomspace(1e-12, 708, 400), [0.0, -0.5 * np.log(2), -708.0]])
    got = np.array([_common._exp_nonpositive(v) for v in x])
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-15, atol=0)
    below = np.array([_common._exp_nonpositive(v) for v in (-709.0, -1e4, -1e308)])
    np.testing.assert_array_equal(below, _common._exp_nonpositive(-708.0))
    assert _common._exp_nonpositive(-np.inf) == 0.0


@pytest.mark.parametrize("width", [1, 2, 3, 7, 8, 9, 20, 32, 33])
def test_row_reduce_gives_numpys_maxima_and_sums_bitwise(width):
    rng = np.random.default_rng(width)
    a = np.exp(5 * rng.normal(size=(1000, width)))
    a[0] = np.inf
    np.testing.assert_array_equal(_common._row_reduce(np.maximum, a), a.max(axis=1))
    np.testing.assert_array_equal(_common._row_reduce(np.add, a), a.sum(axis=1))
