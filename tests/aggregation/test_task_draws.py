"""The random starts of the EM driver: draws that depend on the seed and each task's id only."""

import numpy as np
import pytest

from skcrowd.aggregation._task_draws import _id_keys, _TaskDraws


def test_a_task_draws_the_same_numbers_in_any_block():
    ids = np.array([3, 17, 42, 5, 8])
    whole = _TaskDraws(11, ids, len(ids)).flat_dirichlet(0, 2, 4)
    for rows in ([0, 1], [2, 3, 4], [4, 0]):  # blocks of tasks, in any order
        block = ids[rows]
        np.testing.assert_array_equal(
            _TaskDraws(11, block, len(block)).flat_dirichlet(0, 2, 4), whole[rows])


def test_positions_are_the_integer_ids():
    np.testing.assert_array_equal(_TaskDraws(3, None, 4).uniform(0, 5),
                                  _TaskDraws(3, np.arange(4), 4).uniform(0, 5))


def test_text_ids_hash_the_same_whatever_the_longest_id_of_the_block():
    # a block's text ids share one width: the padding of a short id must not change its key
    alone = _id_keys(np.array(["a"]), 1)
    with_long = _id_keys(np.array(["a", "a much longer id"]), 2)
    as_objects = _id_keys(np.array(["a", 7], dtype=object), 2)
    assert alone[0] == with_long[0] == as_objects[0]
    assert len(set(_id_keys(np.array(["a", "b", "ab", "ba", "a b"]), 5).tolist())) == 5


def test_seeds_streams_and_tasks_draw_different_numbers():
    a = _TaskDraws(1, None, 3)
    u = a.uniform(0, 4)
    assert not np.array_equal(u, _TaskDraws(2, None, 3).uniform(0, 4))
    assert not np.array_equal(u, a.uniform(1, 4))
    assert len(np.unique(u)) == u.size


def test_uniforms_and_flat_dirichlet_rows_have_their_distribution():
    draws = _TaskDraws(0, None, 20_000)
    u = draws.uniform(0, 3)
    assert 0.0 < u.min() and u.max() < 1.0
    np.testing.assert_allclose(u.mean(axis=0), 0.5, atol=0.01)
    np.testing.assert_allclose(np.corrcoef(u.T)[np.triu_indices(3, 1)], 0.0, atol=0.03)
    rows = draws.flat_dirichlet(2, 3, 4)
    assert rows.shape == (20_000, 3, 4)
    np.testing.assert_allclose(rows.sum(axis=2), 1.0)
    # Dir(1, 1, 1, 1): each entry has mean 1/4 and variance (1/4)(3/4)/5
    np.testing.assert_allclose(rows.mean(axis=0), 0.25, atol=0.01)
    np.testing.assert_allclose(rows.var(axis=0), 3 / 80, rtol=0.1)


@pytest.mark.parametrize("n", [1, 2])
def test_flat_dirichlet_of_one_or_two_entries(n):
    rows = _TaskDraws(5, None, 6).flat_dirichlet(0, 1, n)
    np.testing.assert_allclose(rows.sum(axis=2), 1.0)
    if n == 1:
        np.testing.assert_array_equal(rows, 1.0)
