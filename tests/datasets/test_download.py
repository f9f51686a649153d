"""End-to-end fetching over real HTTP, and the faults a download can meet.

A local ``http.server`` on 127.0.0.1 serves the shared data's ``sources/`` folder (the pinned
files laid out as ``{repository}/{commit}/{path}``, as on the default host), and
``SKCROWD_DATASETS_URL`` points at it. Each crowd whose files are there is fetched, converted and
compared with the shared folder of the same crowd where one exists. The fault tests serve
copies, corrupted or cut short, from a temporary folder.
"""

import collections
import csv
import json
import os
import shutil
import socket
import threading
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from skcrowd.datasets import _download, _folder, _registry, fetch_crowd_dataset, fetch_music
from skcrowd.datasets._fetchers import CROWD_DATASETS

pytest.importorskip("pooch")

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SOURCES = SHARED_DATA / "sources"

#: pinned sources whose files the shared sources/ folder keeps back (its README: music and act_MS
#: are kept for checking the defaults on a crowd nobody tuned on)
KEPT_BACK = {"music", "act_MS"}
#: convertible classification crowds (written as folders) whose pinned files the shared sources/
#: folder serves; the regression and sequence crowds are tested in test_structured.py
SERVED = [
    name for name, dataset in CROWD_DATASETS.items()
    if dataset.convertible and dataset.kind == "classification" and SOURCES.is_dir()
    and all((SOURCES / f.key).is_file() for f in dataset.remote_files())
]
#: shared folders named otherwise than the crowd they hold
_FOLDER_NAMES = {"sentiment_polarity": "sentiment_polarity_rodrigues"}
#: crowd -> shared folder holding the same crowd, normalized (where the shared data has one)
SHARED_FOLDERS = {
    name: _FOLDER_NAMES.get(name, name) for name in CROWD_DATASETS
    if (SHARED_DATA / _FOLDER_NAMES.get(name, name) / "votes.csv").is_file()
}
#: normalized shared folders of no pinned crowd (CIFAR-10N has no pinned source: not fetched)
UNPINNED_FOLDERS = {"cifar10n"}


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(directory, handler=QuietHandler):
    """An HTTP server on a free port of 127.0.0.1 serving ``directory``; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def closed_port_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture(scope="module")
def sources(shared_data):
    if not (shared_data / "sources").is_dir():
        pytest.skip(f"no pinned source files in {shared_data}")
    return shared_data / "sources"


@pytest.fixture(scope="module")
def fetched(sources, tmp_path_factory):
    """Every served crowd fetched over HTTP into a data home whose path has a space."""
    home = tmp_path_factory.mktemp("data home")
    with serve(sources) as url, pytest.MonkeyPatch.context() as mp:
        mp.setenv("SKCROWD_DATASETS_URL", url)
        mp.setenv("NO_PROXY", "127.0.0.1")
        datasets = {name: fetch_crowd_dataset(name, data_home=home) for name in SERVED}
    return home, datasets


def test_sources_holds_every_pinned_file_but_those_kept_back(sources):
    pinned = {
        remote.key: (source, remote)
        for source, (repository, folder, files) in _registry._SOURCES.items()
        for remote in [_download.RemoteFile(repository, _registry._COMMITS[repository],
                                            folder + name, size, sha256)
                       for name, size, sha256 in files]
    }
    served = {p.relative_to(sources).as_posix() for p in sources.rglob("*") if p.is_file()}
    assert served == {key for key, (source, _) in pinned.items() if source not in KEPT_BACK}
    for key in served:  # byte for byte the pinned files
        remote = pinned[key][1]
        assert (sources / key).stat().st_size == remote.size, key
        assert _download.sha256_of(sources / key) == remote.sha256, key


def test_the_served_crowds_are_the_convertible_ones(sources):
    assert SERVED == [name for name, dataset in CROWD_DATASETS.items()
                      if dataset.convertible and dataset.kind == "classification"
                      and dataset.source not in KEPT_BACK]
    # every pinned dataset has a converter (issue 27 converted the ordinal crowd)
    assert {name for name, dataset in CROWD_DATASETS.items() if not dataset.convertible} == set()
    # every normalized shared folder is compared with its crowd, converted from the pinned files
    normalized = {p.name for p in SHARED_DATA.iterdir() if (p / "votes.csv").is_file()}
    assert normalized - set(SHARED_FOLDERS.values()) == UNPINNED_FOLDERS & normalized
    assert set(SHARED_FOLDERS) <= set(SERVED)


@pytest.mark.parametrize("name", sorted(SHARED_FOLDERS) or ["none_shared"])
def test_recorded_counts_are_those_of_the_shared_folder(name):
    if name not in SHARED_FOLDERS:
        pytest.skip(f"no normalized shared folder in {SHARED_DATA}")
    stats = json.loads((SHARED_DATA / SHARED_FOLDERS[name] / "stats.json").read_text())
    assert _registry.COUNTS[name] == (
        stats["n_tasks"], stats["n_workers"], stats["n_classes"], stats["n_votes"],
        stats["n_gold"], stats["duplicate_task_worker_pairs_dropped"],
        stats["mv_accuracy_random_ties"],
    )


# ---------------------------------------------------------------------------
# every served crowd, over HTTP
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", SERVED or ["none_served"])
def test_fetched_crowd_has_the_recorded_counts(fetched, name):
    home, datasets = fetched
    ds = datasets[name]
    counts = _registry.COUNTS[name]
    observed = ds.votes >= 0
    assert ds.votes.shape == (counts.tasks, counts.workers)
    assert observed.sum() == counts.votes
    assert ds.target_mask.sum() == counts.gold
    assert len(ds.class_names) == counts.classes
    assert ds.stats["duplicate_task_worker_pairs_dropped"] == counts.duplicates
    assert ds.stats["mv_accuracy_random_ties"] == counts.mv_accuracy
    assert " ".join(ds.DESCR.split()).startswith(CROWD_DATASETS[name].title)
    assert f"Duplicate (task, worker) votes dropped: {counts.duplicates}" in ds.DESCR
    assert (home / name / "votes.csv").is_file()
    for remote in CROWD_DATASETS[name].remote_files():  # the verified source files are kept
        assert _download.sha256_of(remote.local_path(home)) == remote.sha256


def original_triplets(folder):
    """Votes and gold labels of a folder in skcrowd's layout, through its original ids."""
    def ids(name):
        with open(folder / f"{name}.csv", newline="") as f:
            return {int(i): original for i, original in list(csv.reader(f))[1:]}

    tasks, workers, labels = ids("tasks"), ids("workers"), ids("labels")
    votes = np.loadtxt(folder / "votes.csv", delimiter=",", skiprows=1, dtype=int, ndmin=2)
    truth = np.loadtxt(folder / "truth.csv", delimiter=",", skiprows=1, dtype=int, ndmin=2)
    return (
        collections.Counter((tasks[t], workers[w], labels[k]) for t, w, k in votes),
        collections.Counter((tasks[t], labels[k]) for t, k in truth),
        len(tasks), len(workers), len(labels),
    )


@pytest.mark.parametrize("name", sorted(set(SHARED_FOLDERS) & set(SERVED)) or ["none_served"])
def test_conversion_equals_the_shared_folder(fetched, name):
    home, datasets = fetched
    shared = SHARED_DATA / SHARED_FOLDERS.get(name, name)
    if not (shared / "votes.csv").is_file():
        pytest.skip(f"no shared folder {shared}")
    mine, theirs = original_triplets(home / name), original_triplets(shared)
    assert mine == theirs  # same votes, gold labels and numbers of tasks, workers, classes
    ds = datasets[name]
    names = json.loads((shared / "stats.json").read_text()).get("class_names")
    if names:  # {"0": ["highway"], ...}
        assert ds.class_names.tolist() == [names[str(k)][0] for k in range(len(names))]
    if name == "labelme":
        for split in ("train", "valid", "test"):
            np.testing.assert_array_equal(
                getattr(ds, "data" if split == "train" else f"data_{split}"),
                np.load(shared / f"features_vgg16avg_{split}.npy"))
        np.testing.assert_array_equal(ds.target_valid, np.load(shared / "labels_valid.npy"))
        np.testing.assert_array_equal(ds.target_test, np.load(shared / "labels_test.npy"))
    if name == "sentiment_polarity":
        np.testing.assert_array_equal(ds.target_test, np.load(shared / "labels_test.npy"))
        for split, X in (("train", ds.data), ("test", ds.data_test)):
            text = (shared / f"Sentiment_text_{split}.txt").read_text().split("\n")
            assert X.tolist() == text


def _signature(ds):
    """What ids cannot hide: each task's gold label and sorted votes, each worker's vote count."""
    votes = ds.votes
    tasks = collections.Counter(
        (int(ds.target[i]), tuple(sorted(votes[i][votes[i] >= 0].tolist())))
        for i in range(votes.shape[0])
    )
    return tasks, sorted((votes >= 0).sum(axis=0).tolist())


@pytest.mark.parametrize("name", [n for n in SERVED if CROWD_DATASETS[n].same_as] or ["none"])
def test_crowds_published_twice_are_the_same_crowd(fetched, name):
    _, datasets = fetched
    other = CROWD_DATASETS[name].same_as
    assert _signature(datasets[name]) == _signature(datasets[other])


def test_a_second_call_reads_the_cache_without_network(fetched, monkeypatch):
    home, datasets = fetched
    monkeypatch.setenv("SKCROWD_DATASETS_URL", closed_port_url())
    for name, ds in datasets.items():
        again = fetch_crowd_dataset(name, data_home=home)
        np.testing.assert_array_equal(again.votes, ds.votes)
    # a converted folder is read even when its sources are gone
    shutil.rmtree(home / "sources" / "zhangyuc")
    X, votes = fetch_crowd_dataset("zhang2014_dog", data_home=home, download_if_missing=False,
                                   sparse=True, return_X_y=True)
    assert X is None and votes.nnz == 8070


def test_a_file_url_host_is_read_by_copy(sources, tmp_path, monkeypatch):
    monkeypatch.setenv("SKCROWD_DATASETS_URL", sources.as_uri())
    ds = fetch_crowd_dataset("zheng_s4_Face_Sentiment_Identification", data_home=tmp_path)
    assert ds.votes.shape == (584, 27)


def test_downloads_of_small_files_are_quiet(mirror, tmp_path, monkeypatch, capfd):
    # pooch logged one "Downloading file '...' from '...' to '...'" line per file (at INFO, on
    # its own logger, outside the logging hierarchy: a handler of the test listens to it);
    # files under 1 MB print nothing
    import logging

    import pooch

    logger = pooch.get_logger()
    level = logger.level
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger.addHandler(handler)
    try:
        with serve(mirror) as url:
            monkeypatch.setenv("SKCROWD_DATASETS_URL", url)
            ds = fetch_crowd_dataset("zhang2014_bluebird", data_home=tmp_path / "http")
        monkeypatch.setenv("SKCROWD_DATASETS_URL", mirror.as_uri())
        fetch_crowd_dataset("zhang2014_bluebird", data_home=tmp_path / "file")
    finally:
        logger.removeHandler(handler)
    assert ds.votes.shape == (108, 39)
    assert [r.getMessage() for r in records] == []
    assert capfd.readouterr() == ("", "")
    assert logger.level == level  # left as it was


# ---------------------------------------------------------------------------
# faults: corrupted, unreachable, interrupted
# ---------------------------------------------------------------------------


@pytest.fixture
def mirror(sources, tmp_path):
    """A copy of zhang2014_bluebird's source files, to corrupt or cut."""
    root = tmp_path / "mirror"
    for remote in CROWD_DATASETS["zhang2014_bluebird"].remote_files():
        (root / remote.key).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sources / remote.key, root / remote.key)
    return root


def _bluebird_crowd_file():
    return next(f for f in CROWD_DATASETS["zhang2014_bluebird"].remote_files()
                if f.path.endswith("crowd.txt"))


def _leftovers(home):
    """Every file under ``home`` (temporary files of interrupted downloads included)."""
    return sorted(str(p.relative_to(home)) for p in Path(home).rglob("*") if p.is_file())


def test_a_corrupted_file_is_rejected_and_removed(mirror, tmp_path, monkeypatch):
    monkeypatch.setattr(_download, "_RETRIES", 0)
    remote = _bluebird_crowd_file()
    data = bytearray((mirror / remote.key).read_bytes())
    data[10] ^= 1
    (mirror / remote.key).write_bytes(bytes(data))
    found = _download.hashlib.sha256(bytes(data)).hexdigest()
    home = tmp_path / "home"
    with serve(mirror) as url:
        monkeypatch.setenv("SKCROWD_DATASETS_URL", url)
        with pytest.raises(OSError) as err:
            fetch_crowd_dataset("zhang2014_bluebird", data_home=home)
    message = str(err.value)
    assert remote.url(url) in message
    assert f"sha256 {found}, expected {remote.sha256}" in message
    assert not remote.local_path(home).exists()
    assert not any("crowd" in p for p in _leftovers(home)) and not (home / "zhang2014_bluebird"
                                                                    / "votes.csv").exists()


def test_an_unreachable_host_names_the_url_and_the_offline_alternatives(tmp_path, monkeypatch):
    monkeypatch.setattr(_download, "_RETRIES", 0)
    url = closed_port_url()
    monkeypatch.setenv("SKCROWD_DATASETS_URL", url)
    remote = CROWD_DATASETS["zhang2014_web"].remote_files()[0]
    with pytest.raises(OSError) as err:
        fetch_crowd_dataset("zhang2014_web", data_home=tmp_path)
    message = str(err.value)
    assert f"could not download {remote.url(url)} (needed by zhang2014_web)" in message
    assert str(remote.local_path(tmp_path)) in message
    assert "SKCROWD_DATASETS_URL" in message and "data_home" in message
    assert _leftovers(tmp_path) == []


def test_download_if_missing_false_never_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("SKCROWD_DATASETS_URL", closed_port_url())
    with pytest.raises(OSError, match="zhang2014_dog not found: .* holds no votes.csv, "
                                      "download_if_missing=False, and these source files are "
                                      "missing"):
        fetch_crowd_dataset("zhang2014_dog", data_home=tmp_path, download_if_missing=False)


class CutShortHandler(QuietHandler):
    """Announces the whole file, sends half of it and closes, the first ``cuts`` times."""

    cuts = 1
    served = []

    def copyfile(self, source, outputfile):
        type(self).served.append(self.path)
        if type(self).cuts > 0:
            type(self).cuts -= 1
            data = source.read()
            outputfile.write(data[:len(data) // 2])
            outputfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        super().copyfile(source, outputfile)


def _cut_short(cuts):
    return type("Cut", (CutShortHandler,), {"cuts": cuts, "served": []})


def test_a_connection_closed_mid_file_leaves_nothing_trusted(mirror, tmp_path, monkeypatch):
    monkeypatch.setattr(_download, "_RETRIES", 0)
    home = tmp_path / "home"
    handler = _cut_short(1)
    with serve(mirror, handler) as url:
        monkeypatch.setenv("SKCROWD_DATASETS_URL", url)
        with pytest.raises(OSError, match="could not download .*bluebird_crowd.txt"):
            fetch_crowd_dataset("zhang2014_bluebird", data_home=home)
        assert _leftovers(home) == []  # the partial download was deleted
        ds = fetch_crowd_dataset("zhang2014_bluebird", data_home=home)  # downloaded again
    assert (ds.votes >= 0).sum() == 4212
    assert [p.rsplit("/", 1)[-1] for p in handler.served] == [
        "bluebird_crowd.txt", "bluebird_crowd.txt", "bluebird_truth.txt"]


def test_a_download_cut_short_is_retried(mirror, tmp_path, monkeypatch):
    monkeypatch.setattr(_download, "_RETRIES", 1)  # pooch waits 1 s before the retry
    handler = _cut_short(1)
    with serve(mirror, handler) as url:
        monkeypatch.setenv("SKCROWD_DATASETS_URL", url)
        ds = fetch_crowd_dataset("zhang2014_bluebird", data_home=tmp_path)
    assert ds.votes.shape == (108, 39) and len(handler.served) == 3


def _interrupt(*args):
    raise KeyboardInterrupt


def _fetch_interrupted(mirror, home, monkeypatch, target, attribute):
    """Fetch zhang2014_bluebird with ``target.attribute`` raising KeyboardInterrupt."""
    with serve(mirror) as url, monkeypatch.context() as m:
        m.setenv("SKCROWD_DATASETS_URL", url)
        m.setattr(target, attribute, _interrupt)
        with pytest.raises(KeyboardInterrupt):
            fetch_crowd_dataset("zhang2014_bluebird", data_home=home)


def test_an_interrupt_from_the_progress_callback_leaves_nothing_trusted(mirror, tmp_path,
                                                                        monkeypatch):
    home = tmp_path / "home"
    _fetch_interrupted(mirror, home, monkeypatch, _download._Progress, "update")
    assert _leftovers(home) == []
    with serve(mirror) as url:
        monkeypatch.setenv("SKCROWD_DATASETS_URL", url)
        ds = fetch_crowd_dataset("zhang2014_bluebird", data_home=home)
    assert (ds.votes >= 0).sum() == 4212


def test_a_truncated_copy_in_the_cache_is_downloaded_again(mirror, tmp_path, monkeypatch):
    remote = _bluebird_crowd_file()
    local = remote.local_path(tmp_path)
    local.parent.mkdir(parents=True)
    local.write_bytes((mirror / remote.key).read_bytes()[:1000])  # e.g. from a killed process
    (local.parent / "tmpk3j9x_q1").write_bytes(b"half a download")  # pooch's temporary name
    handler = _cut_short(0)
    with serve(mirror, handler) as url:
        monkeypatch.setenv("SKCROWD_DATASETS_URL", url)
        ds = fetch_crowd_dataset("zhang2014_bluebird", data_home=tmp_path)
    assert (ds.votes >= 0).sum() == 4212
    assert _download.sha256_of(local) == remote.sha256
    assert any(p.endswith("bluebird_crowd.txt") for p in handler.served)


def test_an_interrupted_conversion_is_converted_again(mirror, tmp_path, monkeypatch):
    # os.replace renames votes.csv into place (pooch moves downloads with os.rename)
    _fetch_interrupted(mirror, tmp_path, monkeypatch, _folder.os, "replace")
    folder = tmp_path / "zhang2014_bluebird"
    assert (folder / "tasks.csv").is_file() and not (folder / "votes.csv").exists()
    assert not [p for p in os.listdir(folder) if p.endswith(".part")]
    monkeypatch.setenv("SKCROWD_DATASETS_URL", closed_port_url())  # sources are cached
    assert (fetch_crowd_dataset("zhang2014_bluebird", data_home=tmp_path).votes >= 0).sum() \
        == 4212


# ---------------------------------------------------------------------------
# crowds not served here: the whole path on synthetic files in their layout
# ---------------------------------------------------------------------------


def _pin(monkeypatch, root, source, files):
    """Write ``files`` ({name: bytes}) under ``root`` where ``source`` is pinned; record them."""
    repository, folder, pinned = _registry._SOURCES[source]
    commit = _registry._COMMITS[repository]
    entries = []
    for name, _, _ in pinned:
        data = files.get(name, b"not read")
        path = root / repository / commit / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        entries.append((name, len(data), _download.hashlib.sha256(data).hexdigest()))
    monkeypatch.setitem(_registry._SOURCES, source, (repository, folder, tuple(entries)))


def test_an_unseen_act_crowd_end_to_end(tmp_path, monkeypatch):
    rows = ("W1,http://dbpedia.org/resource/A,1,1\nW2,http://dbpedia.org/resource/A,0,1\n"
            "W1,http://dbpedia.org/resource/A,0,1\nW2,http://dbpedia.org/resource/B,0,-1\n")
    _pin(monkeypatch, tmp_path / "mirror", "act_ZenCrowd_in", {"ZenCrowd_in.csv": rows.encode()})
    with serve(tmp_path / "mirror") as url:
        monkeypatch.setenv("SKCROWD_DATASETS_URL", url)
        ds = fetch_crowd_dataset("act_ZenCrowd_in", data_home=tmp_path / "home")
    np.testing.assert_array_equal(ds.votes, [[1, 0], [-1, 0]])
    np.testing.assert_array_equal(ds.target, [1, -1])
    assert ds.task_ids.tolist() == ["http://dbpedia.org/resource/A",
                                    "http://dbpedia.org/resource/B"]
    assert ds.stats["duplicate_task_worker_pairs_dropped"] == 1
    assert "Duplicate (task, worker) votes dropped: 1" in ds.DESCR


def test_fetch_music_end_to_end_on_synthetic_files(tmp_path, monkeypatch):
    header = "id,feature0,feature1,class\n"
    files = {
        "music_genre_gold.csv": header + "rock.00001.mp3,1,2,rock\njazz.00004.mp3,3,4,jazz\n",
        "music_genre_test.csv": header + "pop.00009.mp3,5,6,pop\n",
        "music_genre_mturk.csv": "id,annotator,feature0,feature1,class\r"
                                 "rock.00001.mp3,A7,1,2,rock\rjazz.00004.mp3,A7,3,4,pop\r"
                                 "jazz.00004.mp3,A2,3,4,jazz\r",
    }
    _pin(monkeypatch, tmp_path / "mirror", "music", {k: v.encode() for k, v in files.items()})
    with serve(tmp_path / "mirror") as url:
        monkeypatch.setenv("SKCROWD_DATASETS_URL", url)
        music = fetch_music(data_home=tmp_path / "home")
    assert music.class_names.tolist() == ["jazz", "pop", "rock"]
    assert music.task_ids.tolist() == ["jazz.00004.mp3", "rock.00001.mp3"]
    np.testing.assert_array_equal(music.votes, [[0, 1], [-1, 2]])  # workers A2, A7
    np.testing.assert_array_equal(music.data, [[3, 4], [1, 2]])
    np.testing.assert_array_equal(music.target_test, [1])
    # mturk_answers.csv is pinned but not read, hence not downloaded
    assert not list((tmp_path / "home").rglob("mturk_answers.csv"))


# ---------------------------------------------------------------------------
# python -m skcrowd fetch: folders for scripts that take --data DIR
# ---------------------------------------------------------------------------


def test_cli_fetch_prints_folders_in_the_layout(sources, tmp_path, monkeypatch, capsys):
    from skcrowd._cli import main
    from skcrowd.datasets import load_crowd_dataset

    monkeypatch.setenv("SKCROWD_DATASETS_URL", sources.as_uri())
    assert main(["fetch", "act_SP_amt", "snow2008_wsd", "--data-home", str(tmp_path)]) == 0
    folders = capsys.readouterr().out.splitlines()
    assert folders == [str(tmp_path / "act_SP_amt"), str(tmp_path / "snow2008_wsd")]
    wsd = load_crowd_dataset(folders[1])  # the folder alone, as a --data DIR script reads it
    assert wsd.votes.shape == (177, 34) and wsd.target_mask.all()
    assert main(["fetch", "--list"]) == 0
    assert "zhang2014_bluebird" in capsys.readouterr().out
    assert main(["fetch", "snow2008"]) == 1
    assert "snow2008_rte, snow2008_temp and snow2008_wsd" in capsys.readouterr().err
