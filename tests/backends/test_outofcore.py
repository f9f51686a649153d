"""Out-of-core votes: parquet streamed in task-sorted blocks, unsorted files bucketed, errors."""

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ds = pytest.importorskip("pyarrow.dataset")

from skcrowd.backends import OutOfCoreVotes  # noqa: E402


def random_long_votes(n_tasks=300, n_workers=40, n_classes=4, per_task=5, seed=0):
    """Long-format votes (task, worker, label) with distinct workers per task, task-sorted."""
    rng = np.random.default_rng(seed)
    activity = 1.0 / np.arange(1, n_workers + 1)
    tasks, workers, labels = [], [], []
    for t in range(n_tasks):
        k = rng.integers(1, per_task + 1)
        ws = rng.choice(n_workers, size=k, replace=False, p=activity / activity.sum())
        tasks += [t] * k
        workers += ws.tolist()
        labels += rng.integers(0, n_classes, size=k).tolist()
    return {"task": np.array(tasks), "worker": np.array(workers), "label": np.array(labels)}


def write(tmp_path, columns, name="votes.parquet", row_group_size=None):
    path = tmp_path / name
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


def as_triples(votes):
    """Set of (task id, worker id, label) decoded from every block."""
    out = set()
    for block in votes:
        v = block.votes
        w = votes.worker_ids[block.workers[v.worker]]
        t = np.asarray(block.tasks)[v.task]
        out |= set(zip(t.tolist(), w.tolist(), votes.classes[v.label].tolist()))
    return out


def shuffled(columns, seed=1):
    order = np.random.default_rng(seed).permutation(len(columns["task"]))
    return {k: v[order] for k, v in columns.items()}


def test_sorted_file_streams_every_vote_once(tmp_path):
    cols = random_long_votes()
    with OutOfCoreVotes(write(tmp_path, cols, row_group_size=97), block_votes=200) as votes:
        assert votes.was_sorted
        assert votes.n_votes == len(cols["task"])
        assert votes.n_tasks == 300
        assert votes.worker_ids.tolist() == sorted(set(cols["worker"].tolist()))
        assert votes.classes.tolist() == [0, 1, 2, 3]
        np.testing.assert_array_equal(
            votes.votes_per_worker, np.bincount(cols["worker"], minlength=40)[votes.worker_ids])
        assert as_triples(votes) == set(zip(*(cols[c].tolist() for c in cols)))
        assert votes.n_blocks == len(list(votes.blocks())) > 1


def test_blocks_hold_whole_tasks_with_workers_numbered_by_activity(tmp_path):
    cols = random_long_votes()
    with OutOfCoreVotes(write(tmp_path, cols, row_group_size=50), block_votes=150) as votes:
        seen, sizes = [], []
        for block in votes:
            v = block.votes
            sizes.append(v.n_votes)
            assert np.all(np.diff(v.task) >= 0) and v.task[0] == 0
            assert len(block.tasks) == v.n_tasks == v.task[-1] + 1
            assert v.n_workers == votes.n_workers == len(block.workers) == 40
            # crowd-wide numbers in activity order: busiest worker first
            assert np.all(np.diff(votes.votes_per_worker[block.workers]) <= 0)
            seen += np.asarray(block.tasks).tolist()
        assert seen == list(range(300))  # every task once, in file order
        # at least block_votes votes per block (the last excepted), cut at the next task start
        assert all(150 <= n < 150 + 5 for n in sizes[:-1]) and sum(sizes) == votes.n_votes


def test_unsorted_file_is_bucketed_by_task(tmp_path):
    cols = random_long_votes(n_tasks=500)
    with OutOfCoreVotes(write(tmp_path, shuffled(cols), row_group_size=300),
                        block_votes=100) as votes:
        assert not votes.was_sorted
        assert votes.n_tasks == 500 and votes.n_votes == len(cols["task"])
        tasks = np.concatenate([np.asarray(b.tasks) for b in votes])
        np.testing.assert_array_equal(tasks, np.arange(500))  # sorted, each task in one block
        assert as_triples(votes) == set(zip(*(cols[c].tolist() for c in cols)))
        leftovers = list(votes._dir.glob("bucket-*"))
        assert leftovers == []


def test_string_ids_and_labels(tmp_path):
    cols = random_long_votes(n_tasks=60, n_workers=7, n_classes=3)
    text = {
        "task": np.array([f"t{t:03d}" for t in cols["task"]]),
        "worker": np.array([f"w{w}" for w in cols["worker"]]),
        "label": np.array(["cat", "dog", "emu"])[cols["label"]],
    }
    with OutOfCoreVotes(write(tmp_path, shuffled(text)), block_votes=40) as votes:
        assert votes.classes.tolist() == ["cat", "dog", "emu"]
        assert votes.worker_ids.tolist() == sorted(set(text["worker"].tolist()))
        assert as_triples(votes) == set(zip(*(text[c].tolist() for c in text)))
        tasks = np.concatenate([np.asarray(b.tasks) for b in votes]).tolist()
        assert tasks == sorted(set(text["task"].tolist()))


def test_dataset_of_several_files_and_integral_float_labels(tmp_path):
    cols = random_long_votes(n_tasks=100)
    cols["label"] = cols["label"].astype(float) * 10.0
    folder = tmp_path / "parts"
    folder.mkdir()
    half = np.searchsorted(cols["task"], 50)
    write(folder, {k: v[:half] for k, v in cols.items()}, "part-0.parquet")
    write(folder, {k: v[half:] for k, v in cols.items()}, "part-1.parquet")
    with OutOfCoreVotes(ds.dataset(folder, format="parquet")) as votes:
        assert votes.was_sorted and votes.n_tasks == 100
        assert votes.classes.tolist() == [0, 10, 20, 30]
        assert votes.classes.dtype.kind == "i"


def test_known_classes_and_workers_keep_their_numbering(tmp_path):
    path = write(tmp_path, {"task": [0, 0, 1], "worker": [5, 9, 9], "label": [2, 0, 2]})
    with OutOfCoreVotes(path, classes=[0, 1, 2], worker_ids=[1, 5, 9]) as votes:
        (block,) = list(votes)
        assert votes.n_workers == 3
        assert votes.votes_per_worker.tolist() == [0, 1, 2]
        v = block.votes
        assert block.workers[v.worker].tolist() == [1, 2, 2]
        assert v.label.tolist() == [2, 0, 2]


def test_cache_is_deleted_on_close(tmp_path):
    path = write(tmp_path, {"task": [0, 1], "worker": [0, 0], "label": [1, 0]})
    votes = OutOfCoreVotes(path, tmp_dir=tmp_path)
    cache = votes._dir
    assert cache.parent == tmp_path and any(cache.iterdir())
    votes.close()
    assert not cache.exists()
    with pytest.raises(ValueError, match="closed"):
        next(votes.blocks())


@pytest.mark.parametrize(
    "columns, kwargs, error, match",
    [
        ({"task": [0], "who": [0], "label": [0]}, {}, ValueError, "no column 'worker'"),
        ({"task": [0, 1], "worker": [0, 0], "label": [0.0, 0.5]}, {}, ValueError,
         "row 1 has label 0.5"),
        ({"task": [0, 1], "worker": [0, None], "label": [0, 1]}, {}, ValueError,
         "row 1 has a missing worker"),
        ({"task": [0, 0, 1], "worker": [3, 3, 4], "label": [0, 1, 1]}, {}, ValueError,
         "worker 3 voted more than once on task 0"),
        ({"task": [0, 1], "worker": [0, 1], "label": [0, 7]}, {"classes": [0, 1]}, ValueError,
         "row 1 has label 7, which is not one of the known classes"),
        ({"task": [0, 1], "worker": [0, 1], "label": [0, 3]}, {"n_classes": 3}, ValueError,
         r"row 1 has label 3, outside range\(n_classes\)"),
        ({"task": [0, 1], "worker": [0, 8], "label": [0, 1]}, {"worker_ids": [0, 1]}, ValueError,
         "row 1 has worker 8, which is not one of the known workers"),
        ({"task": [0, 1], "worker": [0, 1], "label": ["a", "b"]}, {"classes": [0, 1]}, TypeError,
         "label column of type string does not match"),
        ({"task": [0.5], "worker": [0], "label": [0]}, {}, TypeError, "column 'task' has type"),
    ],
)
def test_bad_input_names_the_column_row_and_value(tmp_path, columns, kwargs, error, match):
    path = write(tmp_path, columns)
    with pytest.raises(error, match=match):
        OutOfCoreVotes(path, **kwargs)


def test_bad_source_and_parameters(tmp_path):
    with pytest.raises(FileNotFoundError, match="no parquet file"):
        OutOfCoreVotes(tmp_path / "absent.parquet")
    with pytest.raises(TypeError, match="path of parquet votes or a pyarrow.dataset"):
        OutOfCoreVotes(np.zeros((2, 2)))
    path = write(tmp_path, {"task": [0], "worker": [0], "label": [0]})
    with pytest.raises(ValueError, match="block_votes must be a positive integer"):
        OutOfCoreVotes(path, block_votes=0)


def test_duplicate_vote_is_found_after_bucketing(tmp_path):
    cols = random_long_votes(n_tasks=200)
    cols = {k: np.append(v, v[10]) for k, v in cols.items()}  # repeat one vote at the end
    t, w = cols["task"][10], cols["worker"][10]
    with pytest.raises(ValueError, match=f"worker {w} voted more than once on task {t}"):
        OutOfCoreVotes(write(tmp_path, cols), block_votes=50)
