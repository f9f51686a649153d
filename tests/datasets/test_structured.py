"""The crowds that are not class votes: ratings, NER tags, ordinal grades, comparisons, texts.

Their real files are read from the shared data's ``sources/`` folder when it is there (the
values checked were read off the files by hand); the formats and their errors are checked on
small files written in each published layout.
"""

import zipfile

import numpy as np
import pytest

from skcrowd.datasets import _download, dataset_folder, fetch_crowd_dataset, load_crowd_dataset
from skcrowd.datasets._fetchers import CROWD_DATASETS
from skcrowd.datasets._registry import COUNTS
from skcrowd.datasets._structured import convert_conll2003_ner, convert_movie_reviews


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No test here may reach a network: the download host is a closed port."""
    monkeypatch.setenv("SKCROWD_DATASETS_URL", "http://127.0.0.1:9")
    monkeypatch.setattr(_download, "_RETRIES", 0)


def _real(shared_data, name):
    """The crowd fetched from the shared data's pinned files (skips when they are absent)."""
    dataset = CROWD_DATASETS[name]
    if not all(remote.local_path(shared_data).is_file() for remote in dataset.remote_files()):
        pytest.skip(f"the pinned files of {name} are not in {shared_data / 'sources'}")
    return fetch_crowd_dataset(name, data_home=shared_data, download_if_missing=False)


@pytest.fixture(scope="module")
def movie_reviews(shared_data):
    return _real(shared_data, "movie_reviews_rodrigues")


@pytest.fixture(scope="module")
def conll(shared_data):
    return _real(shared_data, "conll2003_ner_mturk")


# ---------------------------------------------------------------------------
# the real files
# ---------------------------------------------------------------------------


def test_movie_reviews_shapes_and_values_read_off_the_files(movie_reviews):
    ds = movie_reviews
    assert ds.votes.shape == (1500, 135) and ds.votes.dtype == np.float64
    answered = ~np.isnan(ds.votes)
    assert answered.sum() == 7440 and set(answered.sum(axis=1)) == {4, 5}
    # answers.txt line 1: "0.6 999999999 999999999 999999999 0.5 ... 0.3 ... 0.5 ... 0.6"
    assert np.flatnonzero(answered[0]).tolist() == [0, 4, 10, 12, 17]
    np.testing.assert_array_equal(ds.votes[0, [0, 4, 10, 12, 17]], [0.6, 0.5, 0.3, 0.5, 0.6])
    assert ds.votes[answered].min() == pytest.approx(-0.1)  # kept as published
    assert ds.votes[answered].max() == pytest.approx(1.1)
    np.testing.assert_array_equal(ds.target[:3], [0.6, 0.4, 0.7])
    assert ds.target.shape == (1500,) and ds.target_test.shape == (3506,)
    np.testing.assert_array_equal(ds.target_test[-3:], [0.9, 0.9, 0.9])
    # data_train_amt.txt line 1: "104 1:1 2:1 14:1 62:3 72:1 73:2 ..."
    assert ds.data.shape == (1500, 26735) and ds.data_test.shape == (3506, 26735)
    assert ds.data[0].nnz == 104 and (ds.data[0, 62], ds.data[0, 73], ds.data[0, 2]) == (3, 2, 1)
    assert ds.data.format == "csr" and ds.data_test[-1].nnz == 144
    assert (ds.data.sum(), ds.data_test.sum()) == (243623, 554410)
    counts = COUNTS["movie_reviews_rodrigues"]
    assert (counts.tasks, counts.workers, counts.votes, counts.gold) == (
        *ds.votes.shape, answered.sum(), len(ds.target))
    assert ds.stats["kind"] == "regression" and ds.stats["answers_outside_0_1"] == 5
    assert " ".join(ds.DESCR.split()).startswith(CROWD_DATASETS["movie_reviews_rodrigues"].title)


def test_conll_shapes_and_values_read_off_the_files(conll):
    ds = conll
    assert ds.votes.shape == (2997, 60, 47) and ds.votes_test.shape == (3256, 60, 47)
    assert ds.votes.dtype == np.int8 and len(ds.worker_ids) == 47
    assert ds.class_names.tolist() == ["B-LOC", "B-MISC", "B-ORG", "B-PER", "I-LOC", "I-MISC",
                                       "I-ORG", "I-PER", "O"]
    assert ds.data.shape == ds.target.shape == (2997, 60)
    assert ds.data_test.shape == ds.target_test.shape == (3256, 60)
    # task1/val/ground_truth/207PSI2KYEPLB94X0QD61J3PRJSSMB.txt, the first document
    assert ds.task_ids[0] == "207PSI2KYEPLB94X0QD61J3PRJSSMB:0"
    assert ds.data[0, :8].tolist() == ["TENNIS", "-", "RESULTS", "AT", "CANADIAN", "OPEN", ".", ""]
    assert ds.class_names[ds.target[0, :7]].tolist() == ["O"] * 4 + ["B-MISC", "I-MISC", "O"]
    assert ds.target[0, 7:].tolist() == [-1] * 53
    workers = ds.worker_ids.tolist()
    # A29X1A8AF3TUQP: "CANADIAN B-MISC", "OPEN O"; next sentence "TORONTO O", "1996-08-23 O"
    j = workers.index("A29X1A8AF3TUQP")
    assert ds.class_names[ds.votes[0, :7, j]].tolist() == ["O"] * 4 + ["B-MISC", "O", "O"]
    assert ds.votes[1, :3, j].tolist() == [8, 8, -1]
    # A1CZIM8L5T2KYP wrote "TORONTO/LOC O": that sentence is dropped, the first one kept
    j = workers.index("A1CZIM8L5T2KYP")
    assert ds.votes[0, :8, j].tolist() == [8] * 7 + [-1] and ds.votes[1, :, j].max() == -1
    assert ds.data_test[0, :3].tolist() == ["South", "Africa", "yet"]
    assert ds.class_names[ds.target_test[0, :3]].tolist() == ["B-LOC", "I-LOC", "O"]
    # no vote on padding; tokens where the gold has a tag
    for votes, target, data in ((ds.votes, ds.target, ds.data),
                                (ds.votes_test, ds.target_test, ds.data_test)):
        assert not ((votes >= 0) & (target[..., None] < 0)).any()
        np.testing.assert_array_equal(data != "", target >= 0)
    tagged = (ds.votes >= 0).any(axis=1)  # (sentence, worker)
    assert tagged.sum() == ds.stats["tagged_sentences"] == 11545
    assert (ds.votes_test >= 0).any(axis=1).sum() == ds.stats["tagged_sentences_test"] == 13785
    assert ds.stats["tagged_sentences_dropped"] + ds.stats["tagged_sentences_dropped_test"] == 4374
    assert ((ds.target >= 0).sum(), (ds.target_test >= 0).sum()) == (40360, 42598)
    counts = COUNTS["conll2003_ner_mturk"]
    assert counts == (len(ds.data), 47, 9, tagged.sum(), len(ds.data), 0, None)
    # the tags that were kept mostly agree with the gold (the crowd is 0.91 token-accurate)
    observed = ds.votes >= 0
    assert (ds.votes == ds.target[..., None])[observed].mean() == pytest.approx(0.912, abs=1e-3)


def test_the_real_crowds_load_by_name_and_as_x_y(shared_data, movie_reviews, conll):
    X, votes = fetch_crowd_dataset("conll2003_ner_mturk", data_home=shared_data,
                                   download_if_missing=False, return_X_y=True)
    np.testing.assert_array_equal(votes, conll.votes)
    assert X.shape == (2997, 60)
    ds = load_crowd_dataset("movie_reviews_rodrigues", data_home=shared_data,
                            download_if_missing=False)
    np.testing.assert_array_equal(ds.votes, movie_reviews.votes)


# ---------------------------------------------------------------------------
# errors of the fetcher
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["movie_reviews_rodrigues", "conll2003_ner_mturk",
                                  "readinglevel_chen2013", "crowdspeech_dev-clean"])
def test_no_folder_no_sparse_and_absent_sources(name, tmp_path, capsys):
    kind = CROWD_DATASETS[name].kind
    with pytest.raises(ValueError, match=f"{name} is a {kind} crowd, which skcrowd's folder "
                                         r"layout .* cannot hold: load it with "
                                         rf"fetch_crowd_dataset\('{name}'\)"):
        dataset_folder(name, data_home=tmp_path)
    from skcrowd._cli import main

    assert main(["fetch", name, "--data-home", str(tmp_path)]) == 1
    assert f"{name} is a {kind} crowd" in capsys.readouterr().err
    with pytest.raises(ValueError, match=f"sparse=True .* {name} is a {kind} crowd"):
        fetch_crowd_dataset(name, data_home=tmp_path, sparse=True)
    with pytest.raises(OSError, match=f"{name} not found: it is converted from its pinned "
                                      "source files at each load, download_if_missing=False, "
                                      "and these source files are missing"):
        fetch_crowd_dataset(name, data_home=tmp_path, download_if_missing=False)
    with pytest.raises(OSError, match=f"could not download .* \\(needed by {name}\\)"):
        fetch_crowd_dataset(name, data_home=tmp_path)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


# ---------------------------------------------------------------------------
# MovieReviews layout, on small files
# ---------------------------------------------------------------------------


def movie_files(folder, **replace):
    files = {
        "answers.txt": "0.6 999999999 0.5\n999999999 0 1.1\n",
        "labels_train_amt.txt": "0.55\n0.05\n",
        "labels_test.txt": "1.0\n",
        "data_train_amt.txt": "2 0:1 3:2\n0\n",
        "data_test.txt": "1 5:4\n",
        **replace,
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    return {name: folder / name for name in files}


def test_movie_reviews_layout(tmp_path):
    ds = convert_movie_reviews(movie_files(tmp_path))
    np.testing.assert_array_equal(ds.votes, [[0.6, np.nan, 0.5], [np.nan, 0.0, 1.1]])
    np.testing.assert_array_equal(ds.target, [0.55, 0.05])
    # six word ids (0-5), the largest in the test file; a review with no word is an empty row
    np.testing.assert_array_equal(ds.data.toarray(), [[1, 0, 0, 2, 0, 0], [0] * 6])
    np.testing.assert_array_equal(ds.data_test.toarray(), [[0, 0, 0, 0, 0, 4]])
    np.testing.assert_array_equal(ds.target_test, [1.0])
    assert ds.stats["n_answers"] == 4 and ds.stats["answers_outside_0_1"] == 1


@pytest.mark.parametrize("replace, match", [
    ({"answers.txt": "0.6 0.5\n0.1\n"}, "answers.txt line 2: 1 columns, expected 2"),
    ({"answers.txt": "0.6 x 0.5\n1 1 1\n"}, "answers.txt line 1 column 2: 'x' is not a finite"),
    ({"answers.txt": "0.6 nan 0.5\n1 1 1\n"}, "answers.txt line 1 column 2: 'nan' is not a"),
    ({"answers.txt": ""}, "answers.txt holds no answers"),
    ({"labels_train_amt.txt": "0.5\n"}, "labels_train_amt.txt has 1 ratings but answers.txt "
                                        "has 2 rows"),
    ({"labels_test.txt": "1\n2\n"}, "labels_test.txt has 2 ratings but data_test.txt has 1"),
    ({"data_train_amt.txt": "2 0:1 3:2\n"}, "data_train_amt.txt has 1 reviews but answers.txt "
                                            "has 2 rows"),
    ({"data_train_amt.txt": "2 0:1 3-2\n0\n"}, "data_train_amt.txt line 1: expected 'n "
                                               "id:count"),
    ({"data_train_amt.txt": "2 0:1\n0\n"}, "data_train_amt.txt line 1: expected 2 distinct word "
                                           "ids .* got 1 pairs"),
    ({"data_train_amt.txt": "2 0:1 0:2\n0\n"}, "line 1: expected 2 distinct word ids"),
    ({"data_test.txt": "1 5:0\n"}, "data_test.txt line 1: expected 1 distinct word ids "
                                   r"\(>= 0\) with positive counts"),
    ({"data_train_amt.txt": "2 0:1 3:2\n\n0\n"}, "data_train_amt.txt line 2: expected 'n "
                                                 "id:count"),
])
def test_movie_reviews_malformed_files(tmp_path, replace, match):
    with pytest.raises(ValueError, match=match):
        convert_movie_reviews(movie_files(tmp_path, **replace))


# ---------------------------------------------------------------------------
# CoNLL layout (task1.zip), on a small archive
# ---------------------------------------------------------------------------

GOLD_A = "\nPeter B-PER\nruns O\n\nIn O\nParis B-LOC\n. O\n"
GOLD_B = "Rome B-LOC\n"


def conll_zip(path, **members):
    files = {
        "task1/val/ground_truth/a.txt": GOLD_A,
        "task1/test/ground_truth/b.txt": GOLD_B,
        # w1 tags both sentences; w2's second sentence has "Paris/LOC": dropped
        "task1/val/mturk_train_data/w1/a.txt": "Peter B-PER\nruns O\n\nIn O\nParis O\n. O\n",
        "task1/val/mturk_train_data/w2/a.txt": "Peter O\nruns O\n\nIn O\nParis/LOC O\n. O\n",
        "task1/test/mturk_train_data/w3/b.txt": "Rome B-LOC\n",
        **members,
    }
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            if text is not None:
                archive.writestr(name, text)
    return {"task1.zip": path}


def test_conll_layout(tmp_path):
    ds = convert_conll2003_ner(conll_zip(tmp_path / "task1.zip"))
    assert ds.class_names.tolist() == ["B-LOC", "B-PER", "O"]
    assert ds.worker_ids.tolist() == ["w1", "w2", "w3"]  # workers of both splits
    assert ds.data.tolist() == [["Peter", "runs", ""], ["In", "Paris", "."]]
    assert ds.target.tolist() == [[1, 2, -1], [2, 0, 2]]
    assert ds.votes.shape == (2, 3, 3) and ds.votes.dtype == np.int8
    assert ds.votes[..., 0].tolist() == [[1, 2, -1], [2, 2, 2]]
    assert ds.votes[..., 1].tolist() == [[2, 2, -1], [-1, -1, -1]]  # its second one dropped
    assert (ds.votes[..., 2] == -1).all()
    assert ds.data_test.tolist() == [["Rome", "", ""]] and ds.target_test.tolist() == [[0, -1, -1]]
    assert ds.votes_test[0, :, 2].tolist() == [0, -1, -1]
    assert ds.task_ids.tolist() == ["a:0", "a:1"] and ds.task_ids_test.tolist() == ["b:0"]
    assert (ds.stats["tagged_sentences"], ds.stats["tagged_sentences_dropped"]) == (3, 1)
    assert "1 tagged sentences of workers were dropped" in ds.DESCR


@pytest.mark.parametrize("line, why", [
    ("Paris\n", "a tag alone on a line"), ("Paris B-LOC x\n", "three fields"),
    ("Paris B-XYZ\n", "a tag the gold does not use"), ("Pariss B-LOC\n", "another token"),
])
def test_conll_worker_sentences_that_do_not_fit_the_tokens_are_dropped(tmp_path, line, why):
    worker = "In O\n" + line + ". O\n"
    ds = convert_conll2003_ner(conll_zip(
        tmp_path / "task1.zip", **{"task1/val/mturk_train_data/w1/a.txt": "Peter O\nruns O\n\n"
                                   + worker}))
    assert (ds.votes[1, :, 0] == -1).all(), why
    assert ds.stats["tagged_sentences_dropped"] == 2


@pytest.mark.parametrize("members, match", [
    ({"task1/val/ground_truth/a.txt": "Peter B-PER extra\n"},
     "task1/val/ground_truth/a.txt line 1: expected 'token TAG', got 'Peter B-PER extra'"),
    ({"task1/val/ground_truth/a.txt": None, "task1/val/mturk_train_data/w1/a.txt": None,
      "task1/val/mturk_train_data/w2/a.txt": None},
     "task1.zip has no task1/val/ground_truth/<document>.txt"),
    ({"task1/val/mturk_train_data/w1/c.txt": "x O\n"},
     "task1/val/mturk_train_data/w1/c.txt tags document c.txt, which has no ground truth"),
    ({"task1/val/mturk_train_data/w1/a.txt": "Peter O\nruns O\n"},
     "task1/val/mturk_train_data/w1/a.txt has 1 sentences but the document's ground truth "
     "has 2"),
    ({"task1/test/ground_truth/b.txt": b"Rom\xe9 B-LOC\n"},
     "task1/test/ground_truth/b.txt is not UTF-8 text"),
])
def test_conll_malformed_archives(tmp_path, members, match):
    with pytest.raises(ValueError, match=match):
        convert_conll2003_ner(conll_zip(tmp_path / "task1.zip", **members))


def test_conll_not_a_zip(tmp_path):
    (tmp_path / "task1.zip").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="task1.zip is not a readable zip archive"):
        convert_conll2003_ner({"task1.zip": tmp_path / "task1.zip"})


# ---------------------------------------------------------------------------
# snow2008 affect ratings (issue 27)
# ---------------------------------------------------------------------------


def test_snow2008_affect_values_read_off_the_files(shared_data):
    from skcrowd.datasets._structured import SNOW2008_AFFECTS

    for emotion in SNOW2008_AFFECTS:
        ds = _real(shared_data, f"snow2008_{emotion}")
        assert ds.votes.shape == (100, 38) and ds.target.shape == (100,)
        assert (~np.isnan(ds.votes)).sum(axis=1).tolist() == [10] * 100
        counts = COUNTS[f"snow2008_{emotion}"]
        assert (counts.tasks, counts.workers, counts.votes) == (100, 38, 1000)
        assert ds.stats["kind"] == "regression" and ds.data is None
    # anger.standardized.tsv line 2: "... A1AVJRFM6L0RN8  594  25  37"
    anger = _real(shared_data, "snow2008_anger")
    i, j = list(anger.task_ids).index(594), list(anger.worker_ids).index("A1AVJRFM6L0RN8")
    assert anger.votes[i, j] == 25 and anger.target[i] == 37
    valence = _real(shared_data, "snow2008_valence")
    assert valence.target[list(valence.task_ids).index(594)] == -66
    assert np.nanmin(valence.votes) == -100 and np.nanmax(valence.votes) == 100


def _affect_archive(tmp_path, text, member="anger.standardized.tsv"):
    import io
    import tarfile

    path = tmp_path / "all_collected_data.tgz"
    with tarfile.open(path, "w:gz") as tar:
        data = text.encode("utf-8")
        info = tarfile.TarInfo(f"all_collected_data/{member}")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


_AFFECT_HEADER = "!amt_annotation_ids\t!amt_worker_ids\torig_id\tresponse\tgold\n"


def test_snow2008_affect_small_file_and_its_errors(tmp_path):
    from skcrowd.datasets._structured import convert_snow2008_affect

    good = _AFFECT_HEADER + "a1\tw2\t7\t10\t12\na2\tw1\t7\t20\t12\na3\tw1\t3\t0\t5\n"
    ds = convert_snow2008_affect(_affect_archive(tmp_path, good), "anger")
    np.testing.assert_array_equal(ds.task_ids, [3, 7])
    assert ds.worker_ids.tolist() == ["w1", "w2"]
    np.testing.assert_array_equal(ds.votes, [[0.0, np.nan], [20.0, 10.0]])
    np.testing.assert_array_equal(ds.target, [5.0, 12.0])
    bad = {
        "line 3 response: 'x' is not a finite number": good.replace("\t20\t", "\tx\t"),
        "line 3 response: '2.5' is not an integer rating": good.replace("\t20\t", "\t2.5\t"),
        "line 3: headline 7 has gold 13 here and 12": good.replace("\t20\t12", "\t20\t13"),
        "line 3: worker w2 rates headline 7 a second time": good.replace("\tw1\t7", "\tw2\t7"),
    }
    for i, (message, text) in enumerate(bad.items()):
        folder = tmp_path / str(i)
        folder.mkdir()
        with pytest.raises(ValueError, match=message):
            convert_snow2008_affect(_affect_archive(folder, text), "anger")


# ---------------------------------------------------------------------------
# metaphor_novelty_parde: ordinal grades 0-3 (issue 27)
# ---------------------------------------------------------------------------


def test_metaphor_novelty_values_read_off_the_files(shared_data):
    ds = _real(shared_data, "metaphor_novelty_parde")
    assert ds.votes.shape == (1938, 231) and ds.class_names.tolist() == [0, 1, 2, 3]
    assert (ds.votes >= 0).sum() == 11598 and ds.target_mask.all()
    assert np.bincount(ds.target).tolist() == [1049, 741, 96, 52]
    # anonymized_combined_hits_1-100.csv line 2: worker 1, "3413__evidence_4__balance_2 2";
    # the expert's file scores that item 1
    i = list(ds.task_ids).index("3413__evidence_4__balance_2")
    assert ds.votes[i, list(ds.worker_ids).index("1")] == 2 and ds.target[i] == 1
    counts = COUNTS["metaphor_novelty_parde"]
    assert (counts.tasks, counts.workers, counts.classes, counts.votes) == (1938, 231, 4, 11598)
    assert ds.stats["kind"] == "ordinal"


_MTURK_HEADER = '"HITId","AssignmentId","WorkerId","Answer.0metaphorNovelty0","Answer.example1"\n'


def test_metaphor_novelty_small_files_and_their_errors(tmp_path):
    from skcrowd.datasets._structured import convert_metaphor_novelty

    crowd = _MTURK_HEADER + 'h1,a1,7,"x__a 2",3\nh1,a2,5,"x__a 0",\nh2,a3,5,"y__b 3",\n'
    expert = _MTURK_HEADER + 'h1,a1,E,"x__a 1",0\n' + _MTURK_HEADER + 'h2,a2,E,"y__b 3",\n'

    def convert(crowd_text, expert_text=expert):
        (tmp_path / "anonymized_combined_hits_1-100.csv").write_text(crowd_text)
        (tmp_path / "expert_combined_hits_1-100.csv").write_text(expert_text)
        return convert_metaphor_novelty({name: tmp_path / name for name in (
            "anonymized_combined_hits_1-100.csv", "expert_combined_hits_1-100.csv")})

    ds = convert(crowd)
    assert ds.task_ids.tolist() == ["x__a", "y__b"] and ds.worker_ids.tolist() == ["5", "7"]
    np.testing.assert_array_equal(ds.votes, [[0, 2], [3, -1]])  # Answer.example1 is not a vote
    np.testing.assert_array_equal(ds.target, [1, 3])
    with pytest.raises(ValueError, match=r"line 2 column Answer.0metaphorNovelty0: expected "
                                         r"'<item> <score>' with a score in 0-3, got 'x__a 4'"):
        convert(crowd.replace('"x__a 2"', '"x__a 4"'))
    with pytest.raises(ValueError, match="line 3: worker 7 scores item x__a a second time"):
        convert(crowd.replace("h1,a2,5", "h1,a2,7"))
    with pytest.raises(ValueError, match="item x__a has expert score 2 here and 1"):
        convert(crowd, expert + 'h3,a3,E,"x__a 2",\n')


# ---------------------------------------------------------------------------
# readinglevel_chen2013: pairwise comparisons (issue 38)
# ---------------------------------------------------------------------------


def test_reading_level_values_read_off_the_files(shared_data):
    ds = _real(shared_data, "readinglevel_chen2013")
    rows = ds.comparisons
    assert list(rows.columns) == ["worker", "left", "right", "label"]
    assert len(rows) == 12726 and rows["worker"].nunique() == 624 and len(ds.item_ids) == 490
    # all_pair.txt lines 1-2: worker 1 judged passage 1 harder than 2, worker 2 passage 2
    assert rows.iloc[:2].values.tolist() == [[1, 1, 2, 1], [2, 1, 2, 2]]
    assert (rows["left"] < rows["right"]).all()
    assert ((rows["label"] == rows["left"]) | (rows["label"] == rows["right"])).all()
    # the last line, '113 51 80': the pair in id order, the winner as label
    assert rows.iloc[-1].tolist() == [113, 51, 80, 51]
    assert ds.target.loc[[1, 3, 5]].tolist() == [1, 2, 4] and len(ds.target) == 490
    assert ds.stats["self_comparisons_dropped"] == 2 and ds.stats["repeated_rows"] == 25
    counts = COUNTS["readinglevel_chen2013"]
    assert (counts.tasks, counts.workers, counts.votes, counts.duplicates) == (490, 624, 12726, 2)


def test_reading_level_small_files_and_their_errors(tmp_path):
    from skcrowd.datasets._structured import convert_reading_level

    def convert(pairs, levels="1 3\n2 5\n7 1\n"):
        (tmp_path / "all_pair.txt").write_text(pairs)
        (tmp_path / "doc_info.txt").write_text(levels)
        return convert_reading_level({n: tmp_path / n for n in ("all_pair.txt", "doc_info.txt")})

    ds = convert("4 2 1\n9 7 7\n4 1 7\n\n4 2 1\n")
    assert ds.comparisons.values.tolist() == [[4, 1, 2, 2], [4, 1, 7, 1], [4, 1, 2, 2]]
    assert ds.stats["self_comparisons_dropped"] == 1 and ds.stats["repeated_rows"] == 1
    assert ds.item_ids.tolist() == [1, 2, 7] and ds.target.to_dict() == {1: 3, 2: 5, 7: 1}
    with pytest.raises(ValueError, match="all_pair.txt line 2: expected 'worker winner loser', "
                                         "got '4 2'"):
        convert("4 2 1\n4 2\n")
    with pytest.raises(ValueError, match=r"all_pair.txt line 1: expected a non-negative integer "
                                         r"id, got 'x'"):
        convert("x 2 1\n")
    with pytest.raises(ValueError, match=r"doc_info.txt has no level for the compared passages "
                                         r"\[8\]"):
        convert("4 2 8\n")
    with pytest.raises(ValueError, match="doc_info.txt line 2: passage 1 has a level already"):
        convert("4 2 1\n", "1 3\n1 4\n2 5\n")


# ---------------------------------------------------------------------------
# crowdspeech_*: transcriptions (issue 38)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("split, shape", [("dev-clean", (2703, 748)), ("test-other", (2939, 1441))])
def test_crowdspeech_values_read_off_the_files(shared_data, split, shape):
    ds = _real(shared_data, f"crowdspeech_{split}")
    assert ds.votes.shape == shape and ds.votes.index.equals(ds.target.index)
    assert (ds.votes.notna().sum(axis=1) == 7).all()
    assert ds.stats["n_votes"] == COUNTS[f"crowdspeech_{split}"].votes
    if split == "dev-clean":
        # crowd file line 2: recording 76 transcribed by worker 1612; gt line 1: recording 0
        assert ds.votes.loc["76", "1612"] == ("If carried any distance it should be stored away "
                                              "in airtight vessels.")
        assert ds.target.loc["0"].startswith("shortly after passing one of these chapels")
        assert ds.audio.loc["76"].endswith("/dev-clean/76.mp3")
        # a transcription that holds a newline inside quotes is one vote
        assert ds.votes.stack().str.contains("\n").any()


_SPEECH_HEADER = "INPUT:audio\tOUTPUT:transcription\tASSIGNMENT:worker_id\n"


def test_crowdspeech_small_files_and_their_errors(tmp_path):
    from skcrowd.datasets._structured import convert_crowdspeech

    url = "https://host/librispeech/dev-clean/{}.mp3"

    def convert(crowd, gt=f"{url.format(10)}\tten\n{url.format(2)}\ttwo\n"):
        names = ("crowdspeech-dev-clean-crowd.tsv", "crowdspeech-dev-clean-gt.txt")
        for name, text in zip(names, (crowd, gt)):
            (tmp_path / name).write_text(text)
        return convert_crowdspeech({n: tmp_path / n for n in names}, "dev-clean")

    crowd = (_SPEECH_HEADER + f"{url.format(10)}\tTen.\t7\n{url.format(2)}\t\"two,\nlines\"\t7\n"
             f"{url.format(10)}\tten\t11\n")
    ds = convert(crowd)
    assert ds.votes.index.tolist() == ["2", "10"] and ds.votes.columns.tolist() == ["7", "11"]
    assert ds.votes.values.tolist() == [["two,\nlines", None], ["Ten.", "ten"]]
    assert ds.target.tolist() == ["two", "ten"]
    with pytest.raises(ValueError, match="crowd.tsv line 6: worker 7 transcribes recording 10 a "
                                         "second time"):
        convert(crowd + f"{url.format(10)}\tten again\t7\n")
    with pytest.raises(ValueError, match="crowd.tsv line 2: expected an audio URL, a "
                                         "transcription and a worker id"):
        convert(_SPEECH_HEADER + f"{url.format(10)}\t\t7\n")
    with pytest.raises(ValueError, match=r"gt.txt has no reference for the recordings \['2'\]"):
        convert(crowd, f"{url.format(10)}\tten\n")
    with pytest.raises(ValueError, match="expected the URL of an .mp3 recording, got 'x.wav'"):
        convert(_SPEECH_HEADER + "x.wav\tten\t7\n")
