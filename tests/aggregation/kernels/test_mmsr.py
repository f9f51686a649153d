"""M-MSR kernels: the workers' agreement counts and the trimmed means, by hand."""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation import kernels
from skcrowd.aggregation.kernels import BlockLayout, _common, msr_rows, msr_step, worker_agreement

from ._crowds import random_votes


def test_worker_agreement_by_hand(engine):
    layout = BlockLayout(check_votes(np.array([[0, 0, 1], [1, 0, -1], [1, 1, 1]])))
    indptr, neighbour, common, agree = worker_agreement(layout)
    np.testing.assert_array_equal(indptr, [0, 2, 4, 6])
    np.testing.assert_array_equal(neighbour, [1, 2, 0, 2, 0, 1])
    np.testing.assert_array_equal(common, [3, 2, 3, 2, 2, 2])
    np.testing.assert_array_equal(agree, [2, 1, 2, 1, 1, 1])


def test_worker_agreement_counts_every_pair_of_a_random_crowd(engine):
    votes = random_votes(np.random.default_rng(3), n_tasks=50, n_workers=6, K=3)
    indptr, neighbour, common, agree = worker_agreement(BlockLayout(votes))
    dense = votes.to_dense()
    for j in range(6):
        for p in range(indptr[j], indptr[j + 1]):
            i = neighbour[p]
            both = (dense[:, i] >= 0) & (dense[:, j] >= 0)
            assert common[p] == both.sum() > 0 and i != j
            assert agree[p] == (dense[both, i] == dense[both, j]).sum()
        n_pairs = sum(((dense[:, i] >= 0) & (dense[:, j] >= 0)).any() for i in range(6) if i != j)
        assert indptr[j + 1] - indptr[j] == n_pairs


def test_msr_step_by_hand(engine):
    # around the current value 1.0: one value off each side
    values = np.array([0.2, 0.9, 1.0, 1.1, 5.0])
    out = msr_step(np.array([0, 5]), np.arange(5), values, np.ones(5), np.array([1.0]),
                   np.array([1]))
    assert out[0] == pytest.approx((0.9 + 1.0 + 1.1) / 3)
    # values divided by the other side's factors
    out = msr_step(np.array([0, 5]), np.arange(5), values, np.full(5, 2.0), np.array([1.0]),
                   np.array([0]))
    assert out[0] == pytest.approx(values.mean() / 2)
    # two values below, none above: one trimmed below, the rest kept
    out = msr_step(np.array([0, 3]), np.arange(3), np.array([0.2, 0.5, 1.0]), np.ones(3),
                   np.array([2.0]), np.array([1]))
    assert out[0] == pytest.approx(0.75)
    # everything trimmed, or an empty row: the current value stays
    out = msr_step(np.array([0, 1, 1]), np.arange(1), np.array([0.2]), np.ones(1),
                   np.array([2.0, 0.3]), np.array([1, 1]))
    np.testing.assert_array_equal(out, [2.0, 0.3])


def test_msr_step_equals_a_sorted_trimmed_mean_per_row(engine):
    """Rows of many lengths (empty ones, powers of two and between), ties, any trimming: each
    row's output is the mean of its sorted values between the trimmed ranks, exactly (summed
    in sorted order), with the layout of the rows given once (msr_rows) or not."""
    rng = np.random.default_rng(7)
    degree = np.array([0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 0, 33])
    indptr = np.concatenate([[0], np.cumsum(degree)])
    W = len(degree)
    neighbour = rng.integers(W, size=indptr[-1])
    X = rng.integers(1, 6, size=indptr[-1]) / 4.0  # ties
    other, own = rng.uniform(0.5, 2, W), rng.uniform(0.5, 2, W)
    trimmed = rng.integers(0, 6, size=W)
    expected = own.copy()
    for j in range(W):
        values = np.sort(X[indptr[j]:indptr[j + 1]] / other[neighbour[indptr[j]:indptr[j + 1]]])
        low = min(trimmed[j], int(np.sum(values < own[j])))
        high = len(values) - min(trimmed[j], int(np.sum(values > own[j])))
        if high > low:
            total = 0.0
            for v in values[low:high]:
                total += v
            expected[j] = total / (high - low)
    np.testing.assert_array_equal(msr_step(indptr, neighbour, X, other, own, trimmed), expected)
    np.testing.assert_array_equal(
        msr_step(indptr, neighbour, X, other, own, trimmed, rows=msr_rows(indptr)), expected)


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
def test_parallel_driver_agrees_with_numpy(monkeypatch):
    rng = np.random.default_rng(5)
    indptr = np.array([0, 7, 7, 19, 30])
    neighbour = rng.integers(4, size=30)
    X, other, own = rng.random(30), rng.uniform(0.5, 1, 4), rng.random(4)
    trimmed = np.array([2, 0, 3, 1])
    monkeypatch.setattr(kernels, "ENGINE", "numpy")
    expected = msr_step(indptr, neighbour, X, other, own, trimmed)
    monkeypatch.setattr(kernels, "ENGINE", "numba")
    monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 0)
    np.testing.assert_allclose(msr_step(indptr, neighbour, X, other, own, trimmed), expected,
                               rtol=1e-14)
