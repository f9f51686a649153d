"""KOS kernel: one message-passing iteration by hand, the parallel driver."""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation import kernels
from skcrowd.aggregation.kernels import BlockLayout, _common, kos_iteration

from ._crowds import random_votes


def test_kos_iteration_by_hand(engine):
    # task 0: workers 0, 1 say +1, worker 2 says -1; task 1: workers 0, 2 say -1
    layout = BlockLayout(check_votes(np.array([[1, 1, 0], [0, -1, 0]])))
    sign = 2.0 * layout.label - 1
    y = np.array([1.0, 2.0, 3.0, 0.5, 1.5])  # worker-to-task messages, task order
    x = np.empty(5)
    messages, scale = kos_iteration(layout, sign, y, x)
    # x_{i->j} = sum over the task's other votes of A y
    np.testing.assert_allclose(x, [2 - 3, 1 - 3, 1 + 2, -1.5, -0.5])
    # worker sums of A x: worker 0: (-1) + (-1)(-1.5); worker 1: -2; worker 2: -3 + (-1)(-0.5)
    full = np.array([0.5, -2.0, -2.5])
    np.testing.assert_allclose(messages, full / 2.5)
    # new y_{j->i} = full message minus the vote's own term, rescaled to unit RMS
    new_y = np.array([0.5 - (-1), -2.0 - (-2), -2.5 - (-3), 0.5 - 1.5, -2.5 - 0.5])
    assert scale == pytest.approx(np.sqrt(np.mean(new_y**2)))
    np.testing.assert_allclose(y, new_y / scale)


def test_vanishing_messages_give_scale_zero(engine):
    layout = BlockLayout(check_votes(np.array([[1, -1], [-1, 0]])))  # one vote per task
    messages, scale = kos_iteration(layout, np.array([1.0, -1.0]), np.ones(2), np.empty(2))
    assert scale == 0.0
    np.testing.assert_array_equal(messages, 0.0)


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
def test_parallel_driver_agrees_with_numpy(monkeypatch):
    layout = BlockLayout(random_votes(np.random.default_rng(8), n_tasks=200, K=2))
    sign = 2.0 * layout.label - 1
    y0 = np.random.default_rng(9).normal(1, 1, layout.n_votes)
    out = {}
    for engine in ("numpy", "numba"):
        monkeypatch.setattr(kernels, "ENGINE", engine)
        monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 0)
        y, x = y0.copy(), np.empty(layout.n_votes)
        out[engine] = (*kos_iteration(layout, sign, y, x), y, x)
    for a, b in zip(out["numba"], out["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
