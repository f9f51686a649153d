"""The shortcut of the numba Dawid-Skene pass's leave-one-out counts.

A vote whose task's best class wins by more than the bound on every other class's
leave-one-out gap goes to that class without the class-by-class comparison; the other votes
(close tasks, exact ties) take the comparison. Both must give the counts of the definition.
"""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation import kernels
from skcrowd.aggregation.kernels import BlockLayout, ds_block_statistics, ds_e_step, safe_log
from skcrowd.aggregation.kernels import _common

pytestmark = pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")


def _crowd(rng, K=3, n_tasks=400, n_workers=8):
    """Sharp tasks (reliable workers agreeing) and exact ties (a worker and its mirror image,
    alone on a task), with the log-confusions of both kinds of worker."""
    truth = rng.integers(K, size=n_tasks)
    votes = np.full((n_tasks, n_workers), -1)
    sharp = np.arange(n_tasks) % 4 != 0
    votes[sharp, :5] = truth[sharp, None]
    flip = rng.random((n_tasks, 5)) < 0.1  # some disagreement among the reliable workers
    votes[:, :5][sharp[:, None] & flip] = ((truth[:, None] + 1) % K).repeat(5, 1)[
        sharp[:, None] & flip]
    tied = ~sharp
    votes[tied, 5] = 0  # workers 5 and 6 are the same uniform guesser: each vote's
    votes[tied, 6] = 1  # leave-one-out posterior is the other's, a tie between classes
    votes[rng.random(n_tasks) < 0.3, 7] = 2  # a worker with votes on a few tasks
    conf = np.full((n_workers, K, K), 0.05 / (K - 1))
    conf[:, np.arange(K), np.arange(K)] = 0.95
    conf[5:7] = 1.0 / K
    log_conf_t = np.ascontiguousarray(np.log(conf).transpose(0, 2, 1))
    return check_votes(votes, n_classes=K), log_conf_t


def _reference(layout, log_conf_t, resp, rows, n_rows, tie=1e-9):
    """The definition, vote by vote: the classes within ``tie`` of the best of ``log
    resp[task] - log P(vote | class)`` share the vote."""
    K = layout.n_classes
    out = np.zeros((n_rows, K, K))
    log_resp = safe_log(resp)
    for task, worker, label in zip(layout.task, layout.worker, layout.label):
        if rows[worker] < 0:
            continue
        gap = log_resp[task] - log_conf_t[worker, label]
        tied = gap >= gap.max() - tie
        out[rows[worker], label, tied] += 1.0 / tied.sum()
    return out


@pytest.mark.parametrize("chunks", ["one chunk", "chunks"])
def test_leave_one_out_counts_shortcut_and_ties(chunks, monkeypatch):
    rng = np.random.default_rng(0)
    votes, log_conf_t = _crowd(rng)
    layout = BlockLayout(votes)
    log_priors = np.log(np.full(3, 1.0 / 3))
    monkeypatch.setattr(kernels, "ENGINE", "numba")
    if chunks == "chunks":
        monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 0)
    resp = ds_e_step(layout, log_conf_t, log_priors)[0]
    workers = np.arange(votes.n_workers)
    for rows, n_rows in [(workers, votes.n_workers),
                         (np.where(workers % 2 == 0, workers // 2, -1), 4)]:
        got = ds_block_statistics(layout, log_conf_t, log_priors, cavity=True,
                                  cavity_rows=rows, n_cavity_rows=n_rows).cavity_counts
        expected = _reference(layout, log_conf_t, resp, rows, n_rows)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
        # every counted vote is counted once, and the tied votes were split
        assert got.sum() == pytest.approx(np.isin(layout.worker, workers[rows >= 0]).sum())
        assert np.any((got % 1.0) != 0.0)
