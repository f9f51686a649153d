"""The public face of the fetchers: names, the datasets table, folders read offline, errors.

Downloads over HTTP are tested in test_download.py, the formats in test_converters.py.
"""

import io
from pathlib import Path

import numpy as np
import pytest

import skcrowd
from skcrowd.datasets import (
    _download,
    _registry,
    fetch_crowd_dataset,
    fetch_labelme,
    fetch_music,
    get_data_home,
    list_crowd_datasets,
    load_crowd_dataset,
)
from skcrowd.datasets._fetchers import CROWD_DATASETS

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SOURCES_TSV = SHARED_DATA / "SOURCES.tsv"


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No test here may reach a network: the download host is a closed port."""
    monkeypatch.setenv("SKCROWD_DATASETS_URL", "http://127.0.0.1:9")
    monkeypatch.setattr(_download, "_RETRIES", 0)


def test_get_data_home_argument_environment_and_default(monkeypatch, tmp_path):
    assert get_data_home(tmp_path / "x") == str(tmp_path / "x")
    monkeypatch.setenv("SKCROWD_DATA", str(tmp_path / "env"))
    assert get_data_home() == str(tmp_path / "env")
    monkeypatch.delenv("SKCROWD_DATA")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert get_data_home() == str(tmp_path / "skcrowd_data")
    assert not (tmp_path / "skcrowd_data").exists()  # not created


def test_datasets_url_from_the_environment(monkeypatch):
    monkeypatch.setenv("SKCROWD_DATASETS_URL", "https://mirror.example.org/crowds/")
    remote = CROWD_DATASETS["zheng_s4_Dog_data"].remote_files()[0]
    assert remote.url() == (
        "https://mirror.example.org/crowds/zhydhkcws/crowd_truth_infer/"
        f"{remote.commit}/datasets/s4_Dog%20data/answer.csv"
    )
    monkeypatch.delenv("SKCROWD_DATASETS_URL")
    assert remote.url().startswith("https://raw.githubusercontent.com/zhydhkcws/")


def test_public_names():
    for name in ("fetch_crowd_dataset", "list_crowd_datasets", "fetch_labelme", "fetch_music",
                 "load_crowd_dataset"):
        assert getattr(skcrowd, name) is getattr(skcrowd.datasets, name)
    assert not hasattr(skcrowd.datasets, "fetch_cifar10h")


# ---------------------------------------------------------------------------
# the registry and the table
# ---------------------------------------------------------------------------


def test_every_pinned_file_of_sources_tsv_is_in_the_registry():
    if not SOURCES_TSV.is_file():
        pytest.skip(f"{SOURCES_TSV} is absent")
    rows = [line.split("\t") for line in SOURCES_TSV.read_text().splitlines()[1:] if line]
    pinned = {(r[0], r[1], r[2], r[3], int(r[4]), r[5]) for r in rows}
    registry = {
        (source, repository, _registry._COMMITS[repository], folder + name, size, sha256)
        for source, (repository, folder, files) in _registry._SOURCES.items()
        for name, size, sha256 in files
    }
    assert registry == pinned
    # every crowd of the table has a fetcher (snow2008: three)
    assert {d.source for d in CROWD_DATASETS.values()} == {r[0] for r in rows}


#: datasets of SOURCES.tsv pinned before their converters (none since issue 27 converts the
#: ordinal crowd; the tests of that path pin a crowd without its converter: ``unconverted``)
NOT_CONVERTIBLE = []
#: crowds whose answers are not one class per task and worker: loaded in memory, no folder
NOT_CLASSIFICATION = {"movie_reviews_rodrigues": "regression", "conll2003_ner_mturk": "sequence"}
AFFECTS = [f"snow2008_{e}" for e in ("anger", "disgust", "fear", "joy", "sadness", "surprise",
                                     "valence")]
NOT_CLASSIFICATION.update(dict.fromkeys(AFFECTS, "regression"))  # issue 27
NOT_CLASSIFICATION["metaphor_novelty_parde"] = "ordinal"  # issue 27: classes and counts
CROWDSPEECH = [f"crowdspeech_{s}" for s in ("dev-clean", "dev-other", "test-clean", "test-other")]
NOT_CLASSIFICATION["readinglevel_chen2013"] = "pairwise"  # issue 38
NOT_CLASSIFICATION.update(dict.fromkeys(CROWDSPEECH, "text"))  # issue 38
COUNT_COLUMNS = ["tasks", "workers", "classes", "votes", "gold", "duplicates", "mv_accuracy"]


def test_list_crowd_datasets():
    table = list_crowd_datasets()
    assert list(table.columns) == [
        "name", "kind", "convertible", "tasks", "workers", "classes", "votes", "gold", "duplicates",
        "mv_accuracy", "features", "same_crowd_as", "download_mb", "source", "reference",
        "licence"]
    assert table["name"].tolist() == list(CROWD_DATASETS)
    assert table["name"].is_unique
    row = table.set_index("name").loc["labelme"]
    assert (row.tasks, row.workers, row.classes, row.votes, row.gold) == (1000, 59, 8, 2547, 1000)
    assert row.source == "fmenat/PyLearningCrowds@0edf617" and row.download_mb == 5.69
    assert set(table["same_crowd_as"]) - {""} <= set(table["name"])
    assert (table["download_mb"] > 0).all()
    # pinned datasets without a converter: listed with their files' size and source, no counts
    assert table["convertible"].dtype == bool
    assert table.loc[~table["convertible"], "name"].tolist() == NOT_CONVERTIBLE
    row = table.set_index("name").loc["metaphor_novelty_parde"]
    assert (row.tasks, row.workers, row.classes, row.votes, row.gold) == (1938, 231, 4, 11598,
                                                                          1938)
    assert row.source == "natalieparde/label-aggregation@148871c" and row.download_mb == 0.57
    assert table.set_index("name")["kind"].to_dict() == {
        name: NOT_CLASSIFICATION.get(name, "classification") for name in CROWD_DATASETS}
    # counts are missing only for those and for the crowds whose files are not served here
    without_counts = table.loc[table[COUNT_COLUMNS].isna().all(axis=1), "name"].tolist()
    assert without_counts == ["music", "act_MS", *NOT_CONVERTIBLE]
    # a regression crowd has no classes, and neither has majority-vote accuracy
    rows = table.set_index("name").loc[list(NOT_CLASSIFICATION), COUNT_COLUMNS]
    assert rows.isna().to_dict("index") == {
        "movie_reviews_rodrigues": {c: c in ("classes", "mv_accuracy") for c in COUNT_COLUMNS},
        "conll2003_ner_mturk": {c: c == "mv_accuracy" for c in COUNT_COLUMNS},
        **{name: {c: c in ("classes", "mv_accuracy") for c in COUNT_COLUMNS}
           for name in [*AFFECTS, "readinglevel_chen2013", *CROWDSPEECH]},
        "metaphor_novelty_parde": dict.fromkeys(COUNT_COLUMNS, False)}
    incomplete = [n for n, kind in NOT_CLASSIFICATION.items() if kind != "ordinal"]
    complete = len(table) - len(without_counts) - len(incomplete)
    assert table[COUNT_COLUMNS].notna().all(axis=1).sum() == complete


@pytest.mark.parametrize("name", list(CROWD_DATASETS))
def test_every_dataset_describes_its_files_and_reference(name):
    dataset = CROWD_DATASETS[name]
    text = " ".join(dataset.describe().split())
    for remote in dataset.remote_files():
        assert remote.path.rsplit("/", 1)[-1] in text
    assert dataset.commit in text and "Reference:" in text and "Licence:" in text
    assert ("its converter is not written yet" in text) == (name in NOT_CONVERTIBLE)


@pytest.fixture
def unconverted(monkeypatch):
    """metaphor_novelty_parde as it was pinned before its converter (convert=None)."""
    import dataclasses

    name = "metaphor_novelty_parde"
    monkeypatch.setitem(CROWD_DATASETS, name,
                        dataclasses.replace(CROWD_DATASETS[name], convert=None))
    return name


def test_a_pinned_dataset_without_converter_says_so_and_downloads_nothing(unconverted,
                                                                          tmp_path):
    name = unconverted
    dataset = CROWD_DATASETS[name]
    calls = {
        "fetch": lambda: fetch_crowd_dataset(name, data_home=tmp_path),
        "offline": lambda: fetch_crowd_dataset(name, data_home=tmp_path,
                                               download_if_missing=False),
        "load by name": lambda: load_crowd_dataset(name, data_home=tmp_path),
    }
    for call in calls.values():
        # a ValueError, not the OSError of a download from the closed port: nothing was tried
        with pytest.raises(ValueError) as err:
            call()
        message = " ".join(str(err.value).split())
        assert message.startswith(f"{name} cannot be loaded yet: its converter is not written "
                                  f"yet. {name} is: {dataset.title}")
        assert f"github.com/{dataset.repository} at commit {dataset.commit[:7]}" in message
        assert all(f.path.rsplit("/", 1)[-1] in message for f in dataset.remote_files())
        assert "convertible=False" in message
    assert not list(tmp_path.iterdir())


def test_the_command_line_says_a_dataset_cannot_be_converted_yet(unconverted, tmp_path, capsys):
    from skcrowd._cli import main

    assert main(["fetch", "metaphor_novelty_parde", "--data-home", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "metaphor_novelty_parde cannot be loaded yet: its converter is not written yet" \
        in captured.err and captured.out == ""
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------------------
# folders already in the layout (no network)
# ---------------------------------------------------------------------------


def _layout_folder(folder, *, features=None, test=None):
    folder.mkdir(parents=True)
    (folder / "votes.csv").write_text("task,worker,label\n0,0,1\n0,1,1\n1,1,0\n2,0,2\n")
    (folder / "truth.csv").write_text("task,label\n0,1\n1,0\n2,2\n")
    if features:
        np.save(folder / f"features_{features}_train.npy", np.arange(6.0).reshape(3, 2))
    if test is not None:
        np.save(folder / f"features_{features}_test.npy", np.ones((test, 2)))
        np.save(folder / "labels_test.npy", np.zeros(test, dtype=np.int64))


def test_fetchers_read_a_folder_in_the_layout(monkeypatch, tmp_path):
    _layout_folder(tmp_path / "music", features="audio", test=2)
    _layout_folder(tmp_path / "act_CF")
    music = fetch_music(data_home=tmp_path)
    np.testing.assert_array_equal(music.votes, [[1, 1], [-1, 0], [2, -1]])
    np.testing.assert_array_equal(music.target, [1, 0, 2])
    assert music.data.shape == (3, 2) and music.data_test.shape == (2, 2)
    assert "Learning from multiple annotators" in " ".join(music.DESCR.split())
    monkeypatch.setenv("SKCROWD_DATA", str(tmp_path))
    X, votes = fetch_crowd_dataset("act_CF", sparse=True, return_X_y=True)
    assert X is None and votes.nnz == 4
    ds = load_crowd_dataset("act_CF")  # a name, read from SKCROWD_DATA
    assert ds.votes.shape == (3, 2) and "ActiveCrowdToolkit" in " ".join(ds.DESCR.split())


def test_fetch_labelme_reads_the_shared_copy_offline(shared_data):
    if not (shared_data / "labelme" / "votes.csv").is_file():
        pytest.skip("no LabelMe folder in the shared data")
    labelme = fetch_labelme(data_home=shared_data, download_if_missing=False)
    assert labelme.votes.shape == (1000, 59) and labelme.data.shape == (1000, 512)
    assert labelme.data_test.shape == (1188, 512) and labelme.target_valid.shape == (500,)
    assert labelme.class_names.tolist()[:3] == ["highway", "insidecity", "tallbuilding"]
    assert "Deep learning from crowds" in " ".join(labelme.DESCR.split())


def test_an_existing_folder_wins_over_a_name(tmp_path, monkeypatch):
    _layout_folder(tmp_path / "zhang2014_dog")
    monkeypatch.chdir(tmp_path)
    ds = load_crowd_dataset("zhang2014_dog", data_home=tmp_path / "elsewhere")
    assert ds.votes.shape == (3, 2) and "Spectral methods" not in ds.DESCR


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_unknown_names(tmp_path):
    with pytest.raises(ValueError, match="unknown crowd dataset 'dogs'; the names are: labelme"):
        fetch_crowd_dataset("dogs", data_home=tmp_path)
    with pytest.raises(ValueError, match="snow2008_rte, snow2008_temp and snow2008_wsd"):
        fetch_crowd_dataset("snow2008", data_home=tmp_path)
    with pytest.raises(ValueError, match="CIFAR-10H was dropped"):
        fetch_crowd_dataset("cifar10h", data_home=tmp_path)
    with pytest.raises(TypeError, match="a dataset name must be a str"):
        fetch_crowd_dataset(Path("labelme"), data_home=tmp_path)
    with pytest.raises(FileNotFoundError, match="'dogs' is not a dataset name"):
        load_crowd_dataset("dogs")
    with pytest.raises(FileNotFoundError, match="does not exist.$"):
        load_crowd_dataset(tmp_path / "nowhere")


def test_absent_dataset_without_download_is_an_oserror(tmp_path):
    with pytest.raises(OSError, match="music not found: .*holds no votes.csv, "
                                      "download_if_missing=False"):
        fetch_music(data_home=tmp_path, download_if_missing=False)
    assert not list(tmp_path.iterdir())


def test_progress_is_printed_for_large_downloads_only():
    stream = io.StringIO()
    progress = _download._Progress("big.npy", stream)
    progress.total = 3_000_000
    progress.update(1_000_000)
    progress.reset()
    progress.update(3_000_000)
    progress.close()
    assert "downloading big.npy: 1.0 of 3.0 MB (33 %)" in stream.getvalue()
    assert stream.getvalue().endswith("3.0 of 3.0 MB (100 %)\n")
    small = _download._Progress("small.txt", stream := io.StringIO())
    small.total = 1000
    small.update(1000)
    small.close()
    assert stream.getvalue() == ""
