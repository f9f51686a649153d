"""Dawid-Skene kernels: hand-computed values, block additivity, the numba passes."""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation import kernels
from skcrowd.aggregation.kernels import (
    BlockLayout,
    _common,
    dawid_skene,
    ds_block_statistics,
    ds_cavity_counts,
    ds_e_step,
    ds_log_confusions,
    ds_vote_share_counts,
    ds_worker_counts,
    naive_soft_labels,
)

from ._crowds import random_log_confusions, random_votes


def test_ds_e_step_by_hand(engine):
    # one task, worker 0 says 0, worker 1 says 1
    layout = BlockLayout(check_votes(np.array([[0, 1], [-1, -1]]), n_classes=2))
    conf = np.array([[[0.8, 0.2], [0.3, 0.7]],    # worker 0, rows = true class
                     [[0.6, 0.4], [0.1, 0.9]]])   # worker 1
    priors = np.array([0.4, 0.6])
    resp, ll = ds_e_step(layout, np.log(conf).transpose(0, 2, 1).copy(), np.log(priors))
    joint = np.array([0.4 * 0.8 * 0.4, 0.6 * 0.3 * 0.9])  # p(class) p(0 | class) p(1 | class)
    np.testing.assert_allclose(resp[0], joint / joint.sum(), rtol=1e-12)
    np.testing.assert_allclose(ll[0], np.log(joint.sum()), rtol=1e-12)
    np.testing.assert_allclose(resp[1], priors, rtol=1e-12)  # no votes: the priors
    assert ll[1] == pytest.approx(0.0, abs=1e-12)


def test_ds_worker_counts_by_hand(engine):
    layout = BlockLayout(check_votes(np.array([[0, 1], [1, -1], [1, 1]]), n_classes=2))
    resp = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
    counts = ds_worker_counts(layout, resp)  # [worker, observed, true]
    np.testing.assert_allclose(counts[0], [[0.9, 0.1], [0.7, 1.3]])
    np.testing.assert_allclose(counts[1], [[0.0, 0.0], [1.4, 0.6]])


@pytest.mark.parametrize("n_workers", [2, 2000])  # one thread, and the parallel driver
def test_ds_log_confusions_by_hand(engine, n_workers):
    counts = np.zeros((n_workers, 3, 3))  # [worker, observed, true]
    counts[:, :, 0] = [3.0, 1.0, 0.0]  # 4 tasks of class 0, 3 labelled right
    counts[:, 1, 1] = 2.0  # 2 tasks of class 1, labelled right; none of class 2
    pseudo = np.eye(3)  # pseudo-count [true, observed]: one right vote per class
    out = ds_log_confusions(counts.copy(), pseudo)
    np.testing.assert_allclose(np.exp(out[-1]), [[4 / 5, 0, 0], [1 / 5, 1, 0], [0, 0, 1]],
                               atol=1e-300)  # zeros floored at the smallest float
    no_prior = ds_log_confusions(counts.copy(), np.zeros((3, 3)))[0]
    np.testing.assert_allclose(np.exp(no_prior[:, 2]), 1 / 3)  # a class without mass: uniform
    assert no_prior[2, 1] == np.log(np.finfo(np.float64).tiny)  # floored: finite


def test_ds_statistics_of_blocks_add_up(engine):
    """The per-partition contract: statistics of a split block sum to the whole block's."""
    rng = np.random.default_rng(1)
    votes = random_votes(rng)
    log_conf_t = random_log_confusions(rng, votes.n_workers, 3)
    log_priors = np.log(rng.dirichlet(np.ones(3)))

    def statistics(block):
        return ds_block_statistics(BlockLayout(block), log_conf_t, log_priors,
                                   resp=np.empty((block.n_tasks, 3)))

    whole = statistics(votes)
    parts = [statistics(votes.take_tasks(rows))
             for rows in (np.arange(0, 25), np.arange(25, votes.n_tasks))]
    np.testing.assert_allclose(np.vstack([p.resp for p in parts]), whole.resp, rtol=1e-12)
    np.testing.assert_allclose(sum(p.worker_counts for p in parts), whole.worker_counts,
                               rtol=1e-12)
    np.testing.assert_allclose(sum(p.class_counts for p in parts), whole.class_counts)
    assert sum(p.log_likelihood for p in parts) == pytest.approx(whole.log_likelihood, rel=1e-12)
    np.testing.assert_allclose(whole.class_counts, whole.resp.sum(axis=0))


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
@pytest.mark.parametrize("path", ["one chunk", "chunks", "worker order"])
def test_numba_dawid_skene_paths_agree_with_numpy(path, monkeypatch):
    """Small blocks: one fused chunk; large ones: 4 chunks here, or worker order for huge tables."""
    rng = np.random.default_rng(6)
    votes = random_votes(rng, n_tasks=600, n_workers=5, K=4, density=0.9)
    layout = BlockLayout(votes)
    log_conf_t = random_log_confusions(rng, votes.n_workers, 4)
    log_priors = np.log(rng.dirichlet(np.ones(4)))
    resp = rng.dirichlet(np.ones(4), size=votes.n_tasks)
    monkeypatch.setattr(kernels, "ENGINE", "numpy")
    expected = (*ds_block_statistics(layout, log_conf_t, log_priors,
                                     resp=np.empty((votes.n_tasks, 4)))[:4],
                ds_worker_counts(layout, resp),
                *ds_block_statistics(layout, log_conf_t, log_priors, cavity=True)[1:])
    monkeypatch.setattr(kernels, "ENGINE", "numba")
    if path != "one chunk":  # as for a large block
        monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 0)
    if path == "worker order":  # as for count tables larger than the caches
        monkeypatch.setattr(_common, "_CHUNK_MEMORY", 1)
        monkeypatch.setattr(_common, "_CACHE_BYTES", 1)
    n_chunks = dawid_skene._ds_n_chunks(layout)
    assert n_chunks == {"one chunk": 1, "chunks": 4, "worker order": 0}[path]
    got = (*ds_block_statistics(layout, log_conf_t, log_priors,
                                resp=np.empty((votes.n_tasks, 4)))[:4],
           ds_worker_counts(layout, resp),
           # the leave-one-out counts in the same pass (ds_cavity_counts of its posteriors)
           *ds_block_statistics(layout, log_conf_t, log_priors, cavity=True)[1:])
    assert len(got) == len(expected) == 9 and expected[-1].sum() == votes.n_votes
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # the naive soft labels' statistics, computed on the fly, are those of the soft labels
    shares = naive_soft_labels(layout.task, layout.label, votes.n_tasks, np.exp(log_priors))
    counts, class_counts = ds_vote_share_counts(layout, np.exp(log_priors))
    np.testing.assert_allclose(counts, ds_worker_counts(layout, shares), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(class_counts, shares.sum(axis=0), rtol=1e-12)


# -- per-task log-priors (known tasks, a classifier's predictions) ----------------------


def test_ds_e_step_with_log_task_priors_by_hand(engine):
    """Each task's prior row replaces the class priors; -inf gives exact zeros."""
    layout = BlockLayout(check_votes(np.array([[0, 1], [0, 1], [-1, -1]]), n_classes=2))
    conf = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.6, 0.4], [0.1, 0.9]]])
    log_conf_t = np.log(conf).transpose(0, 2, 1).copy()
    task_priors = np.array([[0.9, 0.1], [0.0, 1.0], [1.0, 0.0]])  # task 1 is known: class 1
    with np.errstate(divide="ignore"):
        log_task_priors = np.log(task_priors)
    resp, ll = ds_e_step(layout, log_conf_t, np.log([0.5, 0.5]), log_task_priors=log_task_priors)
    joint = np.array([0.9 * 0.8 * 0.4, 0.1 * 0.3 * 0.9])
    np.testing.assert_allclose(resp[0], joint / joint.sum(), rtol=1e-12)
    assert ll[0] == pytest.approx(np.log(joint.sum()), rel=1e-12)
    np.testing.assert_array_equal(resp[1:], [[0.0, 1.0], [1.0, 0.0]])  # exactly, never NaN
    assert ll[1] == pytest.approx(np.log(0.3 * 0.9), rel=1e-12)  # log P(votes, class 1)
    assert ll[2] == 0.0  # no votes, known class: log 1
    stats = ds_block_statistics(layout, log_conf_t, np.log([0.5, 0.5]), resp=np.empty((3, 2)),
                                log_task_priors=log_task_priors)
    np.testing.assert_array_equal(stats.resp, resp)
    np.testing.assert_allclose(stats.class_counts, resp.sum(axis=0), rtol=1e-12)
    # worker 0 said 0 on tasks 0 and 1: [j, l, k] counts the posteriors of their classes
    np.testing.assert_allclose(stats.worker_counts[0, 0], resp[0] + resp[1], rtol=1e-12)
    assert stats.log_likelihood == pytest.approx(ll.sum(), rel=1e-12)


def test_ds_rows_equal_to_the_class_priors_change_nothing(engine):
    rng = np.random.default_rng(8)
    votes = random_votes(rng, n_tasks=50, n_workers=6, K=3)
    layout = BlockLayout(votes)
    log_conf_t = random_log_confusions(rng, votes.n_workers, 3)
    log_priors = np.log(rng.dirichlet(np.ones(3)))
    plain = ds_block_statistics(layout, log_conf_t, log_priors, resp=np.empty((50, 3)))
    rows = ds_block_statistics(layout, log_conf_t, log_priors, resp=np.empty((50, 3)),
                               log_task_priors=np.tile(log_priors, (50, 1)))
    for a, b in zip(plain, rows):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"log_task_priors must have shape \(50, 3\)"):
        ds_e_step(layout, log_conf_t, log_priors, log_task_priors=np.zeros((49, 3)))


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
@pytest.mark.parametrize("path", ["one chunk", "chunks", "worker order"])
def test_numba_paths_keep_known_tasks_exact(path, monkeypatch):
    """Every numba pass gives a known task's other classes exactly 0, as numpy does."""
    rng = np.random.default_rng(7)
    votes = random_votes(rng, n_tasks=600, n_workers=5, K=4, density=0.9)
    layout = BlockLayout(votes)
    log_conf_t = random_log_confusions(rng, votes.n_workers, 4)
    log_task_priors = np.log(rng.dirichlet(np.ones(4), size=votes.n_tasks))
    known = rng.random(votes.n_tasks) < 0.2
    known[5] = True  # the task without votes
    log_task_priors[known] = -np.inf
    log_task_priors[known, 2] = np.log(0.3)
    monkeypatch.setattr(kernels, "ENGINE", "numpy")
    expected = ds_block_statistics(layout, log_conf_t, np.zeros(4), resp=np.empty((600, 4)),
                                   log_task_priors=log_task_priors, cavity=True)
    monkeypatch.setattr(kernels, "ENGINE", "numba")
    if path != "one chunk":
        monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 0)
    if path == "worker order":
        monkeypatch.setattr(_common, "_CHUNK_MEMORY", 1)
        monkeypatch.setattr(_common, "_CACHE_BYTES", 1)
    got = ds_block_statistics(layout, log_conf_t, np.zeros(4), resp=np.empty((600, 4)),
                              log_task_priors=log_task_priors, cavity=True)
    np.testing.assert_array_equal(got.resp[known], np.eye(4)[np.full(known.sum(), 2)])
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    resp, ll = ds_e_step(layout, log_conf_t, np.zeros(4), log_task_priors=log_task_priors)
    np.testing.assert_array_equal(resp, got.resp)


@pytest.mark.parametrize("path", ["one chunk", "chunks", "worker order"])
def test_leave_one_out_counts_of_a_subset_of_the_workers(engine, path, monkeypatch):
    """A table of every other worker's leave-one-out counts (rows -1 for the others) holds
    exactly those workers' rows of the full table, in the fused pass and on its own."""
    rng = np.random.default_rng(11)
    votes = random_votes(rng, n_tasks=600, n_workers=7, K=3, density=0.8)
    layout = BlockLayout(votes)
    log_conf_t = random_log_confusions(rng, votes.n_workers, 3)
    log_priors = np.log(rng.dirichlet(np.ones(3)))
    if engine == "numba" and path != "one chunk":
        monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 0)
    if engine == "numba" and path == "worker order":
        monkeypatch.setattr(_common, "_CHUNK_MEMORY", 1)
        monkeypatch.setattr(_common, "_CACHE_BYTES", 1)
    workers = np.arange(votes.n_workers)
    rows = np.where(workers % 2 == 0, workers // 2, -1)
    full = ds_block_statistics(layout, log_conf_t, log_priors, cavity=True)
    part = ds_block_statistics(layout, log_conf_t, log_priors, cavity=True, cavity_rows=rows,
                               n_cavity_rows=4)
    assert part.cavity_counts.shape == (4, 3, 3)
    np.testing.assert_allclose(part.cavity_counts, full.cavity_counts[::2], rtol=1e-12)
    np.testing.assert_allclose(part.worker_counts, full.worker_counts, rtol=1e-12)
    resp = ds_e_step(layout, log_conf_t, log_priors)[0]
    alone = ds_cavity_counts(layout, log_conf_t, resp, rows=rows, n_rows=4)
    np.testing.assert_allclose(alone, full.cavity_counts[::2], rtol=1e-12)
    into = np.ones((4, 3, 3))
    assert ds_cavity_counts(layout, log_conf_t, resp, out=into, rows=rows, n_rows=4) is into
    np.testing.assert_allclose(into, alone + 1.0, rtol=1e-12)
