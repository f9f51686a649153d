"""Tests of the dataset fetchers: no real network (the opener is monkeypatched).

Downloads are simulated with small archives in the layout of each original
release; reading an already-present copy uses the shared data folder (LabelMe)
or tiny folders in skcrowd's layout.
"""

import csv
import dataclasses
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pytest
import scipy.sparse as sp

import skcrowd
from skcrowd.datasets import _fetchers, fetch_cifar10h, fetch_labelme, fetch_music, get_data_home

SHARED_DATA = Path(__file__).resolve().parents[2] / "../shared/data"


# ---------------------------------------------------------------------------
# helpers: archives in the layout of the releases, a fake opener
# ---------------------------------------------------------------------------


def _tar_gz(members):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _zip(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def _npy(array, allow_pickle=False):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def _csv(rows):
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


# LabelMe: 4 training images, 5 workers (worker 2 never votes), 8 classes
LABELME_ANSWERS = np.array([
    [3, -1, -1, 3, 1],
    [-1, 5, -1, -1, -1],
    [0, 0, -1, 7, -1],
    [-1, -1, -1, 2, 2],
])
LABELME_TRAIN = np.arange(4 * 2 * 2 * 3, dtype=np.float32).reshape(4, 2, 2, 3)


def labelme_archive(answers=LABELME_ANSWERS, allow_pickle=False):
    prefix = "LabelMe/prepared/"
    members = {
        "LabelMe/train/highway/img_0.jpg": b"not an image",
        prefix + "answers.npy": _npy(answers, allow_pickle),
        prefix + "data_train_vgg16.npy": _npy(LABELME_TRAIN),
        prefix + "labels_train.npy": _npy(np.array([3, 5, 0, 2])),
        prefix + "data_valid_vgg16.npy": _npy(np.ones((2, 2, 2, 3), np.float32)),
        prefix + "labels_valid.npy": _npy(np.array([1, 6])),
        prefix + "data_test_vgg16.npy": _npy(np.zeros((3, 2, 2, 3), np.float32)),
        prefix + "labels_test.npy": _npy(np.array([4, 4, 7])),
    }
    return {"deep_LabelMe.tar.gz": _tar_gz(members)}


def music_archive(mturk_rows=None):
    folder = "music_genre_classification/"
    gold = [["id", "f1", "f2", "class"], ["blues.001.wav", "0.5", "1.5", "blues"],
            ["rock.007.wav", "2.0", "-1.0", "rock"], ["pop.003.wav", "0.0", "0.25", "pop"]]
    test = [["id", "f1", "f2", "class"], ["jazz.010.wav", "1.0", "1.0", "jazz"],
            ["metal.002.wav", "3.0", "0.0", "metal"]]
    mturk = mturk_rows or [
        ["id", "annotator", "class"],
        ["blues.001.wav", "A2", "blues"],
        ["blues.001.wav", "A1", "jazz"],
        ["rock.007.wav", "A1", "rock"],
        ["rock.007.wav", "A1", "metal"],  # second answer of A1 on this song: dropped
        ["pop.003.wav", "A3", "pop"],
    ]
    members = {
        "sentiment_polarity/mturk_answers.csv": b"unrelated",
        folder + "music_genre_gold.csv": _csv(gold),
        folder + "music_genre_test.csv": _csv(test),
        folder + "music_genre_mturk.csv": _csv(mturk),
    }
    return {"mturk-datasets.tar.gz": _tar_gz(members)}


CIFAR_IMAGES = np.arange(5 * 3072, dtype=np.int64).reshape(5, 3072) % 251
CIFAR_LABELS = np.array([3, 8, 8, 0, 6])


def cifar10h_archives():
    header = ["annotator_id", "trial_index", "cifar10_test_test_idx", "chosen_label",
              "is_attn_check", "true_label"]
    rows = [header,
            [0, 1, 2, 8, 0, 8],
            [0, 2, -99999, 1, 1, 1],  # attention check
            [7, 1, 2, 9, 0, 8],
            [7, 2, 4, 6, 0, 6],
            [3, 1, 0, 5, 0, 3]]
    records = np.column_stack([CIFAR_LABELS, CIFAR_IMAGES]).astype(np.uint8).tobytes()
    return {
        "cifar10h-raw.zip": _zip({"cifar10h-raw.csv": _csv(rows)}),
        "cifar-10-binary.tar.gz": _tar_gz({
            "cifar-10-batches-bin/batches.meta.txt": b"airplane\n",
            "cifar-10-batches-bin/test_batch.bin": records,
        }),
    }


class FakeOpener:
    """Stands for urllib's urlopen: serves bytes by file name, or raises."""

    def __init__(self, payloads=None, error=None):
        self.payloads, self.error, self.requests = payloads or {}, error, []

    def __call__(self, request, timeout=None):
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return io.BytesIO(self.payloads[request.full_url.rsplit("/", 1)[1]])


def _with_checksums(monkeypatch, name, payloads, wrong=False):
    """Record the sha256 of the given archives in the registry (for this test)."""
    release = _fetchers.RELEASES[name]
    files = tuple(
        remote._replace(sha256="0" * 64 if wrong else hashlib.sha256(
            payloads[remote.filename]).hexdigest())
        for remote in release.files
    )
    monkeypatch.setitem(_fetchers.RELEASES, name, dataclasses.replace(release, files=files))


def _serve(monkeypatch, payloads=None, error=None):
    opener = FakeOpener(payloads, error)
    monkeypatch.setattr(_fetchers, "urlopen", opener)
    return opener


# ---------------------------------------------------------------------------
# data home
# ---------------------------------------------------------------------------


def test_get_data_home_argument_environment_and_default(monkeypatch, tmp_path):
    assert get_data_home(tmp_path / "x") == str(tmp_path / "x")
    monkeypatch.setenv("SKCROWD_DATA", str(tmp_path / "env"))
    assert get_data_home() == str(tmp_path / "env")
    monkeypatch.delenv("SKCROWD_DATA")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert get_data_home() == str(tmp_path / "skcrowd_data")
    assert not (tmp_path / "skcrowd_data").exists()  # not created


def test_fetchers_are_public_names():
    assert skcrowd.fetch_labelme is fetch_labelme
    assert skcrowd.fetch_music is fetch_music
    assert skcrowd.fetch_cifar10h is fetch_cifar10h


# ---------------------------------------------------------------------------
# already-present copies in skcrowd's layout
# ---------------------------------------------------------------------------


def test_fetch_labelme_reads_the_shared_copy_offline(monkeypatch):
    if not (SHARED_DATA / "labelme" / "votes.csv").is_file():
        pytest.skip(f"no LabelMe folder in {SHARED_DATA}")
    opener = _serve(monkeypatch, error=AssertionError("no network access expected"))
    labelme = fetch_labelme(data_home=SHARED_DATA, download_if_missing=False)
    assert labelme.votes.shape == (1000, 59)
    assert (labelme.votes >= 0).sum() == 2547
    assert labelme.data.shape == (1000, 512)
    assert labelme.data_valid.shape == (500, 512) and labelme.target_valid.shape == (500,)
    assert labelme.data_test.shape == (1188, 512) and labelme.target_test.shape == (1188,)
    assert labelme.target.min() == 0 and labelme.target.max() == 7
    assert labelme.class_names.tolist()[:3] == ["highway", "insidecity", "tallbuilding"]
    assert "Deep learning from crowds" in labelme.DESCR
    X, votes = fetch_labelme(data_home=SHARED_DATA, sparse=True, return_X_y=True)
    assert sp.issparse(votes) and votes.nnz == 2547 and X.shape == (1000, 512)
    assert not opener.requests


def _layout_folder(folder, *, features, test=None):
    folder.mkdir(parents=True)
    (folder / "votes.csv").write_text("task,worker,label\n0,0,1\n0,1,1\n1,1,0\n2,0,2\n")
    (folder / "truth.csv").write_text("task,label\n0,1\n1,0\n2,2\n")
    np.save(folder / f"features_{features}_train.npy", np.arange(6.0).reshape(3, 2))
    if test is not None:
        np.save(folder / f"features_{features}_test.npy", np.ones((test, 2)))
        np.save(folder / "labels_test.npy", np.zeros(test, dtype=np.int64))


def test_fetch_music_and_cifar10h_read_a_folder_in_the_layout(monkeypatch, tmp_path):
    opener = _serve(monkeypatch, error=AssertionError("no network access expected"))
    _layout_folder(tmp_path / "music", features="audio", test=2)
    _layout_folder(tmp_path / "cifar10h", features="pixels")
    music = fetch_music(data_home=tmp_path)
    np.testing.assert_array_equal(music.votes, [[1, 1], [-1, 0], [2, -1]])
    np.testing.assert_array_equal(music.target, [1, 0, 2])
    assert music.data.shape == (3, 2) and music.data_test.shape == (2, 2)
    assert music.data_valid is None
    assert "Learning from multiple annotators" in " ".join(music.DESCR.split())
    monkeypatch.setenv("SKCROWD_DATA", str(tmp_path))
    cifar = fetch_cifar10h()
    assert cifar.data.shape == (3, 2) and cifar.data_test is None
    assert "Human uncertainty makes classification more robust" in " ".join(cifar.DESCR.split())
    assert not opener.requests


def test_absent_dataset_without_download_is_an_oserror(tmp_path):
    with pytest.raises(OSError, match="holds no votes.csv, and download_if_missing=False"):
        fetch_music(data_home=tmp_path, download_if_missing=False)


# ---------------------------------------------------------------------------
# downloads: checksums, offline, conversion of each release
# ---------------------------------------------------------------------------


def test_a_file_without_recorded_checksum_is_never_downloaded(monkeypatch, tmp_path):
    opener = _serve(monkeypatch, labelme_archive())
    with pytest.raises(OSError, match=r"no recorded sha256 checksum for "
                                      r"http://fprodrigues\.com/deep_LabelMe\.tar\.gz") as err:
        fetch_labelme(data_home=tmp_path)
    assert str(tmp_path / "labelme" / "raw" / "deep_LabelMe.tar.gz") in str(err.value)
    assert not opener.requests


def test_offline_download_names_the_url_and_leaves_no_partial_file(monkeypatch, tmp_path):
    payloads = music_archive()
    _with_checksums(monkeypatch, "music", payloads)
    _serve(monkeypatch, error=URLError("[Errno -3] Temporary failure in name resolution"))
    with pytest.raises(OSError, match=r"could not download "
                                      r"http://fprodrigues\.com/mturk-datasets\.tar\.gz"):
        fetch_music(data_home=tmp_path)
    assert list((tmp_path / "music" / "raw").iterdir()) == []
    assert not (tmp_path / "music" / "votes.csv").exists()


def test_checksum_mismatch_deletes_the_download(monkeypatch, tmp_path):
    payloads = music_archive()
    _with_checksums(monkeypatch, "music", payloads, wrong=True)
    _serve(monkeypatch, payloads)
    with pytest.raises(OSError, match="has sha256 .* expected 0{64}"):
        fetch_music(data_home=tmp_path)
    assert list((tmp_path / "music" / "raw").iterdir()) == []
    assert not (tmp_path / "music" / "votes.csv").exists()


def test_fetch_labelme_downloads_verifies_and_converts(monkeypatch, tmp_path):
    payloads = labelme_archive()
    _with_checksums(monkeypatch, "labelme", payloads)
    opener = _serve(monkeypatch, payloads)
    labelme = fetch_labelme(data_home=tmp_path)
    assert [r.full_url for r in opener.requests] == ["http://fprodrigues.com/deep_LabelMe.tar.gz"]
    assert "Mozilla" in opener.requests[0].get_header("User-agent")
    # worker 2 never voted: dropped, original column kept in worker_ids
    np.testing.assert_array_equal(labelme.votes, LABELME_ANSWERS[:, [0, 1, 3, 4]])
    np.testing.assert_array_equal(labelme.worker_ids, [0, 1, 3, 4])
    np.testing.assert_array_equal(labelme.target, [3, 5, 0, 2])
    np.testing.assert_array_equal(labelme.data, LABELME_TRAIN.reshape(4, 12))
    assert labelme.data_valid.shape == (2, 12) and labelme.data_test.shape == (3, 12)
    np.testing.assert_array_equal(labelme.target_test, [4, 4, 7])
    assert labelme.class_names.tolist() == list(_fetchers._LABELME_CLASSES)
    assert labelme.stats["n_votes"] == 9
    assert not (tmp_path / "labelme" / "raw" / "deep_LabelMe.tar.gz").exists()  # cleaned up
    # the converted folder is read on the next call, without network
    _serve(monkeypatch, error=AssertionError("no network access expected"))
    np.testing.assert_array_equal(fetch_labelme(data_home=tmp_path).votes, labelme.votes)


def test_fetch_music_converts_the_release(monkeypatch, tmp_path):
    payloads = music_archive()
    _with_checksums(monkeypatch, "music", payloads)
    _serve(monkeypatch, payloads)
    music = fetch_music(data_home=tmp_path)
    blues, metal, pop, rock, jazz = 0, 6, 7, 9, 5
    # workers A1, A2, A3; A1's second answer on rock.007 is dropped
    np.testing.assert_array_equal(music.votes, [[jazz, blues, -1], [rock, -1, -1], [-1, -1, pop]])
    np.testing.assert_array_equal(music.worker_ids, ["A1", "A2", "A3"])
    np.testing.assert_array_equal(music.task_ids, ["blues.001.wav", "rock.007.wav",
                                                   "pop.003.wav"])
    np.testing.assert_array_equal(music.target, [blues, rock, pop])
    np.testing.assert_allclose(music.data, [[0.5, 1.5], [2.0, -1.0], [0.0, 0.25]])
    np.testing.assert_array_equal(music.target_test, [jazz, metal])
    assert music.stats["duplicate_task_worker_pairs_dropped"] == 1
    assert music.class_names[metal] == "metal"


def test_fetch_cifar10h_converts_the_release(monkeypatch, tmp_path):
    payloads = cifar10h_archives()
    _with_checksums(monkeypatch, "cifar10h", payloads)
    opener = _serve(monkeypatch, payloads)
    cifar = fetch_cifar10h(data_home=tmp_path, sparse=True)
    assert len(opener.requests) == 2
    # workers 0, 3, 7 -> columns 0, 1, 2; the attention check is dropped; images 1 and 3
    # have no votes (stored entries of the sparse matrix are the votes, zeros included)
    dense = np.full((5, 3), -1)
    dense[[2, 2, 4, 0], [0, 2, 2, 1]] = [8, 9, 6, 5]
    stored = cifar.votes.tocoo()
    rebuilt = np.full((5, 3), -1)
    rebuilt[stored.row, stored.col] = stored.data
    np.testing.assert_array_equal(rebuilt, dense)
    np.testing.assert_array_equal(cifar.worker_ids, [0, 3, 7])
    np.testing.assert_array_equal(cifar.target, CIFAR_LABELS)
    assert cifar.data.dtype == np.uint8
    np.testing.assert_array_equal(cifar.data, CIFAR_IMAGES)
    assert cifar.class_names[8] == "ship"


def test_a_copy_saved_by_the_user_is_read_and_kept(monkeypatch, tmp_path):
    raw = tmp_path / "music" / "raw"
    raw.mkdir(parents=True)
    (raw / "mturk-datasets.tar.gz").write_bytes(music_archive()["mturk-datasets.tar.gz"])
    opener = _serve(monkeypatch, error=AssertionError("no network access expected"))
    music = fetch_music(data_home=tmp_path)  # the registry has no checksum: trusted as placed
    assert music.votes.shape == (3, 3)
    assert (raw / "mturk-datasets.tar.gz").exists()
    assert not opener.requests


def test_a_saved_copy_that_fails_its_checksum_is_downloaded_again(monkeypatch, tmp_path):
    payloads = music_archive()
    _with_checksums(monkeypatch, "music", payloads)
    raw = tmp_path / "music" / "raw"
    raw.mkdir(parents=True)
    (raw / "mturk-datasets.tar.gz").write_bytes(b"truncated")
    opener = _serve(monkeypatch, payloads)
    assert fetch_music(data_home=tmp_path).votes.shape == (3, 3)
    assert len(opener.requests) == 1


# ---------------------------------------------------------------------------
# releases that are not what they should be
# ---------------------------------------------------------------------------


def _fetch_with(monkeypatch, tmp_path, name, payloads):
    _with_checksums(monkeypatch, name, payloads)
    _serve(monkeypatch, payloads)
    return {"labelme": fetch_labelme, "music": fetch_music,
            "cifar10h": fetch_cifar10h}[name](data_home=tmp_path)


def test_pickled_arrays_are_refused(monkeypatch, tmp_path):
    answers = LABELME_ANSWERS.astype(object)
    with pytest.raises(ValueError, match="does not unpickle downloaded data"):
        _fetch_with(monkeypatch, tmp_path, "labelme", labelme_archive(answers, allow_pickle=True))
    assert not (tmp_path / "labelme" / "votes.csv").exists()


def test_malformed_releases_name_the_file_line_and_value(monkeypatch, tmp_path):
    answers = LABELME_ANSWERS.copy()
    answers[1, 4] = 8
    with pytest.raises(ValueError, match="answers.npy row 1, column 4: label 8 is not one of"):
        _fetch_with(monkeypatch, tmp_path, "labelme", labelme_archive(answers))
    rows = [["id", "annotator", "class"], ["blues.001.wav", "A1", "blues"],
            ["nosuch.wav", "A1", "rock"]]
    with pytest.raises(ValueError, match="music_genre_mturk.csv line 3: song 'nosuch.wav'"):
        _fetch_with(monkeypatch, tmp_path, "music", music_archive(rows))
    rows = [["id", "annotator", "class"], ["blues.001.wav", "A1", "polka"]]
    with pytest.raises(ValueError, match="mturk.csv line 2: class 'polka' is not one of"):
        _fetch_with(monkeypatch, tmp_path, "music", music_archive(rows))
    with pytest.raises(ValueError, match="has no member music_genre_classification/"):
        _fetch_with(monkeypatch, tmp_path, "music",
                    {"mturk-datasets.tar.gz": _tar_gz({"other.csv": b"x"})})
    with pytest.raises(ValueError, match="not a readable tar or zip archive"):
        _fetch_with(monkeypatch, tmp_path, "music", {"mturk-datasets.tar.gz": b"garbage"})
    assert not (tmp_path / "music" / "votes.csv").exists()
