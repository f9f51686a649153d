"""Dask backend: encoding, task partitioning, client discovery, errors (one shared LocalCluster)."""

import subprocess
import sys

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

from skcrowd.backends import DaskVotes, get_client  # noqa: E402

pytestmark = pytest.mark.dask


@pytest.fixture
def client(dask_client):
    return dask_client


def long_votes(n_tasks=200, n_workers=30, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tasks):
        for w in rng.choice(n_workers, size=rng.integers(1, 6), replace=False):
            rows.append((t, int(w), int(rng.integers(n_classes))))
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def triples(votes):
    out = set()
    for block in votes.blocks():
        v = block.votes
        out |= set(zip(np.asarray(block.tasks)[v.task].tolist(),
                       votes.worker_ids[block.workers[v.worker]].tolist(),
                       votes.classes[v.label].tolist()))
    return out


def test_user_client_is_used_and_blocks_hold_whole_tasks(client):
    frame = long_votes()
    votes = DaskVotes(dd.from_pandas(frame, npartitions=3))
    assert votes.client is client
    assert votes.n_votes == len(frame) and votes.n_tasks == 200
    assert votes.n_blocks == 2  # one per thread of the cluster (2 workers x 1 thread)
    assert votes.worker_ids.tolist() == sorted(frame.worker.unique().tolist())
    np.testing.assert_array_equal(
        votes.votes_per_worker, frame.worker.value_counts().sort_index().to_numpy())
    assert triples(votes) == set(map(tuple, frame.to_numpy().tolist()))
    tasks = [np.asarray(b.tasks) for b in votes.blocks()]
    all_tasks = np.concatenate(tasks)
    assert len(all_tasks) == len(set(all_tasks.tolist())) == 200  # each task in one block
    for block in votes.blocks():
        assert np.all(np.diff(votes.votes_per_worker[block.workers]) <= 0)


def votes_per_worker_and_class(block, tables, n_classes, state):
    """Statistics of a block: votes of each (local) worker, votes per class, block count."""
    v = block.votes
    per_worker = np.bincount(v.worker, minlength=v.n_workers)
    return (per_worker,), (np.bincount(v.label, minlength=n_classes), 1), state


def test_map_reduce_adds_worker_statistics_at_the_blocks_workers(client):
    frame = long_votes()
    votes = DaskVotes(dd.from_pandas(frame, npartitions=2), npartitions=4)
    assert votes.n_blocks == 4
    (per_worker,), (per_class, n_blocks) = votes.map_reduce(votes_per_worker_and_class, args=(3,))
    np.testing.assert_array_equal(per_worker, votes.votes_per_worker)
    np.testing.assert_array_equal(per_class, frame.label.value_counts().sort_index())
    assert n_blocks == 4.0


def count_calls(block, tables, state):
    """Stateful block function: the state counts the calls; the table rows are the workers'."""
    (rows,) = tables
    np.testing.assert_array_equal(rows, block.workers * 10.0)
    state = 1 if state is None else state + 1
    return (np.zeros(block.votes.n_workers),), (state,), state


def test_state_stays_with_its_block_and_tables_arrive_as_local_rows(client):
    votes = DaskVotes(dd.from_pandas(long_votes(), npartitions=3), npartitions=3)
    table = np.arange(votes.n_workers) * 10.0
    for call in (1, 2, 3):
        _, (total,) = votes.map_reduce(count_calls, (table,), stateful=True)
        assert total == votes.n_blocks * call
    _, (total,) = votes.map_reduce(count_calls, (table,))  # stateless: fresh state
    assert total == votes.n_blocks


def label_of_each_task(block, tables, state):
    v = block.votes
    first = np.searchsorted(v.task, np.arange(v.n_tasks))
    return np.stack([v.label[first], np.bincount(v.task, minlength=v.n_tasks)], axis=1)


def test_map_tasks_gives_a_lazy_frame_indexed_by_task(client):
    frame = long_votes()
    votes = DaskVotes(dd.from_pandas(frame, npartitions=2))
    out = votes.map_tasks(label_of_each_task, columns=["first", "n"])
    assert isinstance(out, dd.DataFrame)
    result = out.compute().sort_index()
    np.testing.assert_array_equal(result.index, np.arange(200))
    np.testing.assert_array_equal(result["n"], frame.groupby("task").size().sort_index())


def test_string_ids_labels_and_known_classes(client):
    frame = long_votes(n_tasks=40)
    frame = pd.DataFrame({"task": "t" + frame.task.astype(str),
                          "worker": "w" + frame.worker.astype(str),
                          "label": np.array(["a", "b", "c"])[frame.label]})
    votes = DaskVotes(dd.from_pandas(frame, npartitions=2), classes=["a", "b", "c", "d"])
    assert votes.classes.tolist() == ["a", "b", "c", "d"]
    assert triples(votes) == set(map(tuple, frame.to_numpy().tolist()))


@pytest.mark.parametrize(
    "frame, kwargs, match",
    [
        (pd.DataFrame({"task": [0], "annotator": [0], "label": [0]}), {}, "no column 'worker'"),
        (pd.DataFrame({"task": [0, 1], "worker": [0, 1], "label": [0.0, np.nan]}), {},
         "row 1 has a missing label"),
        (pd.DataFrame({"task": [0, 1], "worker": [0, 1], "label": [0.0, 2.5]}), {},
         "label 2.5 at row 1"),
        (pd.DataFrame({"task": [0, 1], "worker": [0, 1], "label": [0.0, 2.0**63]}), {},
         r"label 9.223372036854776e\+18 at row 1"),  # overflowed int64 silently
        (pd.DataFrame({"task": [0, 1], "worker": [0, 1], "label": [0, 4]}), {"classes": [0, 1]},
         "label 4 at row 1, which is not one of the known classes"),
        (pd.DataFrame({"task": [0, 1], "worker": [0, 7], "label": [0, 1]}),
         {"worker_ids": [0, 1]}, "row 1 has worker 7, which is not one of the known workers"),
        (pd.DataFrame({"task": [4, 5, 4], "worker": [0, 7, 0], "label": [0, 1, 1]}), {},
         "worker 0 voted more than once on task 4"),
    ],
)
def test_bad_input_names_the_row_and_value(client, frame, kwargs, match):
    with pytest.raises(ValueError, match=match):
        DaskVotes(dd.from_pandas(frame, npartitions=1), **kwargs)


def test_not_a_dask_frame():
    with pytest.raises(TypeError, match="must be a dask.dataframe.DataFrame, got DataFrame"):
        DaskVotes(pd.DataFrame({"task": [0], "worker": [0], "label": [0]}))


def test_embedded_local_cluster_when_no_client_is_active():
    code = (
        "import distributed\n"
        "from skcrowd.backends import get_client, close_embedded_cluster\n"
        "c = get_client()\n"
        "assert isinstance(c.cluster, distributed.LocalCluster), c\n"
        "assert get_client() is c\n"
        "close_embedded_cluster()\n"
        "assert c.status == 'closed'\n"
        "print('ok closed')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok closed"


def test_explicit_client_wins(client):
    assert get_client(client) is client
    assert get_client() is client


def test_a_closed_client_is_an_error_that_says_so():
    from skcrowd.backends import DaskClusterError

    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster:
        closed = distributed.Client(cluster, set_as_default=False)
        closed.close()
        with pytest.raises(DaskClusterError, match=r"cluster that holds these votes is gone "
                                                   r"\(client closed"):
            DaskVotes(dd.from_pandas(long_votes(n_tasks=5), npartitions=1), client=closed)
