"""MACE kernels: vote tables and expected knowing / spamming counts by hand."""

import numpy as np

from skcrowd import check_votes
from skcrowd.aggregation.kernels import (BlockLayout, mace_expected_counts, mace_vote_tables,
                                         one_coin_block_statistics)


def test_vote_tables_are_the_mace_answer_probabilities():
    theta = np.array([0.7, 0.01, 1e-300])  # a worker, a spammer, an underflowing competence
    xi = np.array([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05], [1 / 3, 1 / 3, 1 / 3]])
    log_other, log_ratio = mace_vote_tables(np.log(theta), np.log1p(-theta), np.log(xi))
    np.testing.assert_allclose(np.exp(log_other), (1 - theta)[:, None] * xi, rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_other + log_ratio),
                               theta[:, None] + (1 - theta)[:, None] * xi, rtol=1e-12)
    # a huge competence-to-spam ratio does not overflow
    _, ratio = mace_vote_tables(np.log([0.999]), np.log([1e-300]), np.log([[0.5, 0.5]]))
    assert np.all(np.isfinite(ratio)) and ratio[0, 0] > 600


def test_expected_counts_by_hand():
    """Known votes: P(truth = vote) times P(known | truth = vote); the rest is spam."""
    votes = np.array([[0, 1], [1, 1], [0, -1]])
    K = 2
    theta = np.array([0.8, 0.4])
    xi = np.array([[0.5, 0.5], [0.1, 0.9]])
    log_other, log_ratio = mace_vote_tables(np.log(theta), np.log1p(-theta), np.log(xi))
    layout = BlockLayout(check_votes(votes))
    st = one_coin_block_statistics(layout, log_other, log_ratio, np.log([0.5, 0.5]),
                                   resp=np.empty((3, K)), per_cell=True)
    knowing, spam = mace_expected_counts(st.agreement, layout.cell_counts, log_ratio)
    r = st.resp
    q = theta[:, None] / (theta[:, None] + (1 - theta)[:, None] * xi)  # P(known | truth = a)
    known = np.zeros((2, K))
    total = np.zeros((2, K))
    for i, row in enumerate(votes):
        for j, a in enumerate(row):
            if a >= 0:
                known[j, a] += r[i, a] * q[j, a]
                total[j, a] += 1
    np.testing.assert_allclose(knowing, known.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(spam, total - known, rtol=1e-12)
    np.testing.assert_allclose(knowing + spam.sum(axis=1), [3, 2])  # every vote counted once
