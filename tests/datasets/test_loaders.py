"""Tests of load_crowd_dataset on the shared real datasets and on hand-made folders."""

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from skcrowd import check_votes
from skcrowd.datasets import load_crowd_dataset
from skcrowd.metrics import mv_accuracy_score

SHARED_DATA = Path(__file__).resolve().parents[2] / "../shared/data"


def check_against_stats(ds, stats):
    """Shapes and counts of a loaded dataset against its stats.json."""
    votes = ds.votes
    assert votes.shape == (stats["n_tasks"], stats["n_workers"])
    observed = votes >= 0
    assert observed.sum() == stats["n_votes"]
    per_task = observed.sum(axis=1)
    assert (per_task.min(), per_task.max()) == (
        stats["votes_per_task_min"], stats["votes_per_task_max"],
    )
    per_worker = observed.sum(axis=0)
    assert (per_worker.min(), per_worker.max()) == (
        stats["votes_per_worker_min"], stats["votes_per_worker_max"],
    )
    assert votes.max() == stats["n_classes"] - 1
    assert ds.target_mask.sum() == stats["n_gold"]
    np.testing.assert_array_equal(
        np.bincount(ds.target[ds.target_mask], minlength=stats["n_classes"]),
        stats["gold_class_counts"],
    )
    # stats.json's majority-vote accuracy counts ties as a uniform random pick:
    # exactly the tie-aware score of the gold labels against the votes
    gold = ds.target_mask
    score = mv_accuracy_score(votes[gold], ds.target[gold])
    assert score == pytest.approx(stats["mv_accuracy_random_ties"], abs=5e-4)
    assert len(ds.class_names) == stats["n_classes"]


def test_labelme_votes_gold_and_features(shared_data):
    folder = shared_data / "labelme"
    if not folder.is_dir():
        pytest.skip("labelme is absent from the shared data")
    ds = load_crowd_dataset(folder)
    stats = json.loads((folder / "stats.json").read_text())
    check_against_stats(ds, stats)
    assert ds.class_names.tolist()[:3] == ["highway", "insidecity", "tallbuilding"]
    sizes = stats["split_sizes"]
    assert ds.data.shape == (sizes["train"], stats["feature_dim"])
    assert ds.data_valid.shape == (sizes["valid"], stats["feature_dim"])
    assert ds.data_test.shape == (sizes["test"], stats["feature_dim"])
    assert ds.target_valid.shape == (sizes["valid"],)
    assert ds.target_test.shape == (sizes["test"],)
    assert set(np.unique(ds.target_test)) <= set(range(stats["n_classes"]))
    assert "labelme" in ds.DESCR
    assert load_crowd_dataset(folder, features=None).data is None


def shared_folders():
    """Every normalized crowd folder of the shared data (those with a stats.json)."""
    found = sorted(p.name for p in SHARED_DATA.glob("*") if (p / "stats.json").is_file())
    return found or ["shared_absent"]


@pytest.mark.parametrize("name", shared_folders())
def test_shared_datasets_match_their_stats(shared_data, name):
    folder = shared_data / name
    if not folder.is_dir():
        pytest.skip(f"{name} is absent from the shared data")
    ds = load_crowd_dataset(folder)
    stats = json.loads((folder / "stats.json").read_text())
    check_against_stats(ds, stats)
    if "feature_dim" not in stats:  # features are checked in the LabelMe test
        assert ds.data is None and ds.data_test is None
    assert (ds.target_test is None) == (not (folder / "labels_test.npy").is_file())
    original = np.loadtxt(folder / "tasks.csv", delimiter=",", skiprows=1, dtype=str)
    assert str(ds.task_ids[int(original[-1, 0])]) == original[-1, 1]
    assert len(set(ds.task_ids.tolist())) == len(ds.task_ids)  # "6_11" is not 611


def test_sparse_votes_of_a_real_dataset(shared_data):
    folder = shared_data / "zheng_s4_Dog_data"
    if not folder.is_dir():
        pytest.skip("zheng_s4_Dog_data is absent from the shared data")
    dense = load_crowd_dataset(folder).votes
    sparse = load_crowd_dataset(folder, sparse=True).votes
    assert sp.issparse(sparse) and sparse.nnz == (dense >= 0).sum()
    np.testing.assert_array_equal(check_votes(sparse, n_classes=4).to_dense(), dense)


# ---------------------------------------------------------------------------
# Hand-made folders
# ---------------------------------------------------------------------------


def write(folder, files):
    folder.mkdir(exist_ok=True)
    for name, content in files.items():
        if isinstance(content, np.ndarray):
            np.save(folder / name, content)
        else:
            (folder / name).write_text(content)
    return folder


VOTES = "task,worker,label\n0,0,1\n0,1,0\n1,1,2\n2,0,2\n"


def test_small_folder_with_every_file(tmp_path):
    folder = write(tmp_path / "toy", {
        "votes.csv": VOTES,
        "truth.csv": "task,label\n2,2\n0,1\n",
        "tasks.csv": "task,original_id\n0,img_a\n1,img_b\n2,img_c\n3,img_d\n",
        "workers.csv": "worker,original_id\n0,17\n1,23\n",
        "labels.csv": "label,original_label\n0,cat\n1,dog\n2,fox\n",
        "stats.json": json.dumps({"name": "toy", "notes": "hand made"}),
        "features_raw_train.npy": np.arange(8.0).reshape(4, 2),
        "features_raw_test.npy": np.ones((2, 2)),
        "labels_test.npy": np.array([0, 2]),
    })
    ds = load_crowd_dataset(folder)
    np.testing.assert_array_equal(ds.votes, [[1, 0], [-1, 2], [2, -1], [-1, -1]])
    np.testing.assert_array_equal(ds.target, [1, -1, 2, -1])
    np.testing.assert_array_equal(ds.target_mask, [True, False, True, False])
    assert ds.task_ids.tolist() == ["img_a", "img_b", "img_c", "img_d"]
    assert ds.worker_ids.tolist() == [17, 23]
    assert ds.class_names.tolist() == ["cat", "dog", "fox"]
    assert ds.data.shape == (4, 2) and ds.data_valid is None and ds.target_valid is None
    np.testing.assert_array_equal(ds.target_test, [0, 2])
    assert ds.DESCR.startswith("toy: 4 tasks, 2 workers, 3 classes, 4 votes")
    assert "hand made" in ds.DESCR
    sparse = load_crowd_dataset(folder, sparse=True).votes
    assert sparse.nnz == 4  # the vote for label 0 is an explicit zero
    np.testing.assert_array_equal(check_votes(sparse, n_classes=3).to_dense(), ds.votes)


def test_ids_are_ints_only_when_every_one_is_written_as_an_integer(tmp_path):
    folder = write(tmp_path / "ids", {
        "votes.csv": VOTES,
        "tasks.csv": "task,original_id\n0,6_11\n1,61_1\n2,7\n",
        "workers.csv": "worker,original_id\n0,+3\n1,-12\n",
    })
    ds = load_crowd_dataset(folder)
    assert ds.task_ids.tolist() == ["6_11", "61_1", "7"]  # int() would merge the first two
    assert ds.worker_ids.tolist() == [3, -12]


def test_votes_only_folder(tmp_path):
    ds = load_crowd_dataset(write(tmp_path / "bare", {"votes.csv": VOTES}))
    assert ds.votes.shape == (3, 2)
    assert (ds.target == -1).all() and not ds.target_mask.any()
    assert ds.class_names.tolist() == ["0", "1", "2"]
    assert ds.task_ids.tolist() == [0, 1, 2] and ds.data is None


@pytest.mark.parametrize(
    "files, error, match",
    [
        ({}, FileNotFoundError, "votes.csv is missing"),
        ({"votes.csv": "task,annotator,label\n0,0,1\n"}, ValueError, "missing: worker"),
        ({"votes.csv": "task,worker,label\n"}, ValueError, "no votes"),
        ({"votes.csv": "task,worker,label\n0,0,cat\n"}, ValueError, "votes.csv: every value"),
        ({"votes.csv": "task,worker,label\n0,0,1\n1,0,0\n0,0,0\n"}, ValueError,
         r"lines \[2, 4\]: worker 0 voted more than once on task 0"),
        ({"votes.csv": VOTES, "labels.csv": "label,original_label\n0,a\n1,b\n"}, ValueError,
         "votes.csv line 4: label 2 is outside 0 .. 1"),
        ({"votes.csv": VOTES, "tasks.csv": "task,original_id\n0,a\n1,b\n"}, ValueError,
         "votes.csv line 5: task 2 is outside 0 .. 1"),
        ({"votes.csv": VOTES, "truth.csv": "task,label\n0,1\n0,2\n"}, ValueError,
         "task 0 has more than one gold label"),
        ({"votes.csv": VOTES, "tasks.csv": "task,original_id\n0,a\n2,b\n5,c\n"}, ValueError,
         "task ids of tasks.csv must be 0 .. 2"),
        ({"votes.csv": VOTES, "features_train.npy": np.ones((5, 2))}, ValueError,
         "features_train.npy has 5 rows but the train split has 3 tasks"),
        ({"votes.csv": VOTES, "features_a_train.npy": np.ones((3, 1)),
          "features_b_train.npy": np.ones((3, 1))}, ValueError, "several feature sets"),
        ({"votes.csv": VOTES, "features_x_train.npy": np.array([{}, {}, {}])}, ValueError,
         "allow_pickle"),
    ],
)
def test_bad_folders_name_the_file_and_line(tmp_path, files, error, match):
    folder = write(tmp_path / "bad", files)
    with pytest.raises(error, match=match):
        load_crowd_dataset(folder)


def test_missing_folder_and_feature_set(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_crowd_dataset(tmp_path / "nowhere")
    folder = write(tmp_path / "feat", {
        "votes.csv": VOTES,
        "features_a_train.npy": np.ones((3, 1)),
        "features_b_train.npy": np.zeros((3, 4)),
    })
    assert load_crowd_dataset(folder, features="b").data.shape == (3, 4)
    with pytest.raises(FileNotFoundError, match=r"features_c_train.npy .*\['a', 'b'\]"):
        load_crowd_dataset(folder, features="c")
