"""Per-block EM kernels: hand-computed values, engine agreement, block additivity."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation import GLAD, DawidSkene, WeightedDawidSkene, _kernels
from skcrowd.aggregation._kernels import (
    BlockLayout,
    ds_block_statistics,
    ds_e_step,
    ds_log_confusions,
    ds_vote_share_counts,
    ds_worker_counts,
    glad_block_statistics,
    glad_gradients,
    glad_task_difficulties,
    naive_soft_labels,
    row_argmax,
)

ENGINES = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(
    _kernels.numba is None, reason="numba is not installed"))]


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    monkeypatch.setattr(_kernels, "ENGINE", request.param)
    return request.param


def _random_votes(rng, n_tasks=60, n_workers=7, K=3, density=0.5):
    votes = rng.integers(K, size=(n_tasks, n_workers))
    votes[rng.random(votes.shape) > density] = -1
    votes[5] = -1  # a task without votes
    return check_votes(votes, n_classes=K)


def _random_log_confusions(rng, n_workers, K):
    conf = rng.dirichlet(np.ones(K), size=(n_workers, K))  # [j, true, observed]
    return np.ascontiguousarray(np.log(conf).transpose(0, 2, 1))


def test_layout_chunks_cut_votes_evenly_at_task_boundaries():
    votes = _random_votes(np.random.default_rng(0), n_tasks=200)
    layout = BlockLayout(votes)
    bounds = layout.chunk_bounds(8)
    assert bounds[0] == 0 and bounds[-1] == votes.n_tasks and np.all(np.diff(bounds) >= 0)
    per_chunk = np.diff(layout.task_indptr[bounds])
    assert per_chunk.sum() == votes.n_votes
    assert per_chunk.max() - per_chunk.min() <= 2 * votes.votes_per_task().max()


def test_layout_pickles_without_its_work_arrays():
    import pickle

    layout = BlockLayout(_random_votes(np.random.default_rng(0)))
    layout.scratch("buffer", (1000, 1000))
    restored = pickle.loads(pickle.dumps(layout))
    assert restored._scratch == {} and len(pickle.dumps(layout)) < 100_000
    np.testing.assert_array_equal(restored.task_indptr, layout.task_indptr)


def test_layout_worker_order_lists_each_vote_once():
    votes = _random_votes(np.random.default_rng(0))
    layout = BlockLayout(votes)
    indptr, position, task, label = layout.worker_order
    assert indptr[-1] == votes.n_votes
    # the vote at task-order index v sits at worker-order index position[v]
    np.testing.assert_array_equal(task[position], votes.task)
    np.testing.assert_array_equal(label[position], votes.label)
    worker_of_slot = np.repeat(np.arange(votes.n_workers), np.diff(indptr))
    np.testing.assert_array_equal(worker_of_slot[position], votes.worker)


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


def test_naive_soft_labels_and_row_argmax_by_hand(engine):
    task, label = np.array([2, 0, 2, 0, 0]), np.array([1, 0, 0, 1, 1])
    freq = naive_soft_labels(task, label, 3, np.array([0.25, 0.75]))
    np.testing.assert_allclose(freq, [[1 / 3, 2 / 3], [0.25, 0.75], [0.5, 0.5]])
    np.testing.assert_array_equal(row_argmax(freq), [1, 1, 0])  # a tie: the first class
    big = np.random.default_rng(0).random((60_000, 3))  # the parallel driver
    np.testing.assert_array_equal(row_argmax(big), np.argmax(big, axis=1))


def test_ds_statistics_of_blocks_add_up(engine):
    """The per-partition contract: statistics of a split block sum to the whole block's."""
    rng = np.random.default_rng(1)
    votes = _random_votes(rng)
    log_conf_t = _random_log_confusions(rng, votes.n_workers, 3)
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


@pytest.mark.skipif(_kernels.numba is None, reason="numba is not installed")
def test_engines_agree_on_every_kernel(monkeypatch):
    rng = np.random.default_rng(2)
    votes = _random_votes(rng, n_tasks=80, n_workers=9, K=4)
    layout = BlockLayout(votes)
    log_conf_t = _random_log_confusions(rng, votes.n_workers, 4)
    log_priors = np.log(rng.dirichlet(np.ones(4)))
    abilities = rng.normal(1.0, 1.0, size=votes.n_workers)
    log_betas = rng.normal(0.0, 0.5, size=votes.n_tasks)
    resp = rng.dirichlet(np.ones(4), size=votes.n_tasks)
    results = {}
    for engine in ("numba", "numpy"):
        monkeypatch.setattr(_kernels, "ENGINE", engine)
        results[engine] = [
            *ds_block_statistics(layout, log_conf_t, log_priors,
                                 resp=np.empty((votes.n_tasks, 4)))[:3],
            *glad_block_statistics(layout, abilities, log_betas, log_priors),
            *glad_task_difficulties(layout, abilities, log_priors),
            *glad_gradients(layout, resp, abilities, log_betas),
            ds_log_confusions(np.exp(log_conf_t), np.eye(4)),
            naive_soft_labels(layout.task, layout.label, votes.n_tasks, np.exp(log_priors)),
            row_argmax(np.round(resp, 1)),  # ties: the first largest entry
            *ds_vote_share_counts(layout, np.exp(log_priors)),
        ]
    for a, b in zip(results["numba"], results["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(_kernels.numba is None, reason="numba is not installed")
@pytest.mark.parametrize("path", ["one chunk", "chunks", "worker order"])
def test_numba_dawid_skene_paths_agree_with_numpy(path, monkeypatch):
    """Small blocks: one fused chunk; large ones: 4 chunks here, or worker order for huge tables."""
    rng = np.random.default_rng(6)
    votes = _random_votes(rng, n_tasks=600, n_workers=5, K=4, density=0.9)
    layout = BlockLayout(votes)
    log_conf_t = _random_log_confusions(rng, votes.n_workers, 4)
    log_priors = np.log(rng.dirichlet(np.ones(4)))
    resp = rng.dirichlet(np.ones(4), size=votes.n_tasks)
    monkeypatch.setattr(_kernels, "ENGINE", "numpy")
    expected = (*ds_block_statistics(layout, log_conf_t, log_priors,
                                     resp=np.empty((votes.n_tasks, 4))),
                ds_worker_counts(layout, resp))
    monkeypatch.setattr(_kernels, "ENGINE", "numba")
    if path != "one chunk":  # as for a large block
        monkeypatch.setattr(_kernels, "PARALLEL_MIN_VOTES", 0)
    if path == "worker order":  # as for count tables larger than the caches
        monkeypatch.setattr(_kernels, "_CHUNK_MEMORY", 1)
        monkeypatch.setattr(_kernels, "_CACHE_BYTES", 1)
    n_chunks = _kernels._ds_n_chunks(layout)
    assert n_chunks == {"one chunk": 1, "chunks": 4, "worker order": 0}[path]
    got = (*ds_block_statistics(layout, log_conf_t, log_priors, resp=np.empty((votes.n_tasks, 4))),
           ds_worker_counts(layout, resp))
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # the naive soft labels' statistics, computed on the fly, are those of the soft labels
    shares = naive_soft_labels(layout.task, layout.label, votes.n_tasks, np.exp(log_priors))
    counts, class_counts = ds_vote_share_counts(layout, np.exp(log_priors))
    np.testing.assert_allclose(counts, ds_worker_counts(layout, shares), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(class_counts, shares.sum(axis=0), rtol=1e-12)


@pytest.mark.skipif(_kernels.numba is None, reason="numba is not installed")
@pytest.mark.parametrize("model", [DawidSkene(tol=0, max_iter=15),
                                   WeightedDawidSkene(tol=0, max_iter=15),
                                   GLAD(tol=0, max_iter=15)], ids=type)
def test_engines_agree_on_whole_fits(model, monkeypatch):
    rng = np.random.default_rng(3)
    votes = rng.integers(4, size=(120, 10))
    votes[rng.random(votes.shape) < 0.6] = -1
    fitted = {}
    for engine in ("numba", "numpy"):
        monkeypatch.setattr(_kernels, "ENGINE", engine)
        with pytest.warns(Warning):  # tol=0: ConvergenceWarning
            m = model.fit(votes)
        fitted[engine] = (m.predict_proba(votes), np.array(m.lower_bounds_),
                          m.score_samples(votes))
    for a, b in zip(fitted["numba"], fitted["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_glad_e_step_by_hand(engine):
    # K=3, task votes [0, 0, 1] by workers with abilities 1, 2, 0.5; beta = e**0.3
    layout = BlockLayout(check_votes(np.array([[0, 0, 1]]), n_classes=3))
    alpha = np.array([1.0, 2.0, 0.5])
    beta = np.exp(0.3)
    st = glad_block_statistics(layout, alpha, np.array([0.3]), np.log(np.ones(3) / 3))
    right = 1 / (1 + np.exp(-alpha * beta))
    wrong = (1 - right) / 2
    labels = np.array([0, 0, 1])
    lik = np.array([np.prod(np.where(labels == k, right, wrong)) for k in range(3)]) / 3
    np.testing.assert_allclose(st.resp[0], lik / lik.sum(), rtol=1e-12)
    assert st.task_log_likelihood[0] == pytest.approx(np.log(lik.sum()), rel=1e-12)
    q = (lik / lik.sum())[labels]  # posterior that each vote is right
    np.testing.assert_allclose(st.ability_gradient, (q - right) * beta, rtol=1e-12)
    np.testing.assert_allclose(st.ability_curvature, right * (1 - right) * beta**2, rtol=1e-12)
    assert st.difficulty_gradient[0] == pytest.approx(np.sum((q - right) * alpha * beta))


def test_glad_difficulty_is_the_map(engine):
    """The Newton search lands on the maximum of the per-task objective (grid check)."""
    rng = np.random.default_rng(4)
    votes = _random_votes(rng, n_tasks=15, n_workers=8, K=3, density=0.8)
    layout = BlockLayout(votes)
    abilities = rng.normal(1.0, 1.0, size=votes.n_workers)
    log_priors = np.log(np.ones(3) / 3)
    _, log_betas, task_ll = glad_task_difficulties(layout, abilities, log_priors)
    # the objective on a grid of b, through the log-likelihoods of the E-step (one call)
    grid = np.linspace(-4, 4, 401)
    on_grid = votes.take_tasks(np.repeat(np.arange(votes.n_tasks), len(grid)))
    st = glad_block_statistics(BlockLayout(on_grid), abilities, np.tile(grid, votes.n_tasks),
                               log_priors)
    best = (st.task_log_likelihood - 0.5 * np.tile(grid, votes.n_tasks) ** 2).reshape(
        votes.n_tasks, len(grid)).max(axis=1)
    objective = task_ll - 0.5 * log_betas**2
    assert np.all(objective >= best - 1e-9)
    assert log_betas[5] == 0.0  # no votes: the prior mode, beta = 1


def test_numpy_engine_is_used_when_numba_cannot_be_imported():
    code = (
        "import sys; sys.modules['numba'] = None\n"
        "import numpy as np\n"
        "from skcrowd.aggregation import DawidSkene, GLAD, _kernels\n"
        "votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]] * 10)\n"
        "print(_kernels.ENGINE, DawidSkene().fit(votes).predict([[0, 1, 1]])[0],"
        " GLAD().fit(votes).predict([[0, 1, 1]])[0])\n"
    )
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["numpy", "0", "0"]


@pytest.mark.skipif(_kernels.numba is None, reason="numba is not installed")
def test_vectorized_exp_matches_numpy():
    """The numba softmax's exp: 1e-15 relative from 0 down to -708, exp(-708) below."""
    x = np.concatenate([-np.geomspace(1e-12, 708, 400), [0.0, -0.5 * np.log(2), -708.0]])
    got = np.array([_kernels._exp_nonpositive(v) for v in x])
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-15, atol=0)
    below = np.array([_kernels._exp_nonpositive(v) for v in (-709.0, -1e4, -np.inf)])
    np.testing.assert_array_equal(below, _kernels._exp_nonpositive(-708.0))
