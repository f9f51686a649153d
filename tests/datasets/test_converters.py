"""Converters of the public crowds' formats, on small files written in each published layout.

The crowds whose files the shared data keeps back (music, act_MS) are checked here only, on
synthetic files in the layouts their formats share with the served crowds (string ids, URLs as
task ids, repeated (task, worker) pairs, CR line endings, gold labels for part of the tasks); the
served crowds are also converted from their real files in test_download.py.
"""

import io
import json
import tarfile

import numpy as np
import pytest

from skcrowd.datasets._converters import (
    convert_act,
    convert_labelme,
    convert_music,
    convert_sentiment_polarity,
    convert_snow2008,
    convert_zhang2014,
    convert_zheng,
    ordered_ids,
)
from skcrowd.datasets._folder import read_crowd_folder, write_dataset


def write(path, text, newline="\n"):
    path.write_bytes(text.replace("\n", newline).encode())
    return path


def votes_of(crowd):
    """{(original task, original worker): original label} of a converted crowd."""
    return {
        (crowd.task_ids[t], crowd.worker_ids[w]): crowd.labels[k]
        for t, w, k in zip(crowd.task, crowd.worker, crowd.label)
    }


def gold_of(crowd):
    return {crowd.task_ids[t]: crowd.labels[k] for t, k in enumerate(crowd.target) if k >= 0}


# ---------------------------------------------------------------------------
# id order
# ---------------------------------------------------------------------------


def test_ids_are_ordered_numerically_when_all_are_integers_else_as_strings():
    assert ordered_ids(["10", "2", "-1", "2"]).tolist() == ["-1", "2", "10"]
    # "6_11" is not an integer (int() would read it as 611 and merge it with "61_1")
    assert ordered_ids(["6_11", "61_1", "10_2"]).tolist() == ["10_2", "61_1", "6_11"]
    assert ordered_ids(["b", "a", "10"]).tolist() == ["10", "a", "b"]


# ---------------------------------------------------------------------------
# zhang2014_* (trec: gold for part of the tasks; web: 5 classes)
# ---------------------------------------------------------------------------


def test_zhang2014_trec_layout_partial_gold_repeated_truth_and_cr_endings(tmp_path):
    crowd_txt = write(tmp_path / "trec_crowd.txt",
                      "1\t1\t2\n1\t2\t1\n3\t1\t2\n3\t1\t1\n12\t3\t2\n\n", newline="\r")
    truth_txt = write(tmp_path / "trec_truth.txt", "3 2\n3 2\n12 1\n7 1\n", newline="\r\n")
    crowd = convert_zhang2014(crowd_txt, truth_txt)
    assert crowd.task_ids.tolist() == ["1", "3", "12"]
    assert crowd.worker_ids.tolist() == ["1", "2", "3"]
    assert crowd.labels.tolist() == ["1", "2"]  # class index = label - 1
    # worker 1's second answer on task 3 is dropped
    assert votes_of(crowd) == {("1", "1"): "2", ("1", "2"): "1", ("3", "1"): "2",
                               ("12", "3"): "2"}
    assert crowd.n_duplicates == 1
    assert gold_of(crowd) == {"3": "2", "12": "1"}  # task 1 has no gold label
    assert crowd.n_gold_dropped == 1  # task 7 has a gold label but no votes


def test_zhang2014_web_layout_keeps_unvoted_classes_numbered(tmp_path):
    crowd = convert_zhang2014(write(tmp_path / "web_crowd.txt", "1 1 5\n1 2 1\n2 1 5\n"),
                              write(tmp_path / "web_truth.txt", "1 3\n2 5\n"))
    assert crowd.labels.tolist() == ["1", "2", "3", "4", "5"]
    np.testing.assert_array_equal(crowd.target, [2, 4])
    np.testing.assert_array_equal(crowd.label, [4, 0, 4])


@pytest.mark.parametrize("content, match", [
    ("1 1 2\n2 1 0\n", "web_crowd.txt line 2: expected 'task worker label' .*'2 1 0'"),
    ("1 1 2\n2 1\n", "line 2: expected 'task worker label'"),
    ("1 1 two\n", "line 1: expected"),
])
def test_zhang2014_malformed_lines(tmp_path, content, match):
    truth = write(tmp_path / "web_truth.txt", "1 2\n")
    with pytest.raises(ValueError, match=match):
        convert_zhang2014(write(tmp_path / "web_crowd.txt", content), truth)


def test_conflicting_gold_labels_name_both_lines(tmp_path):
    crowd = write(tmp_path / "dog_crowd.txt", "1 1 2\n2 1 1\n")
    truth = write(tmp_path / "dog_truth.txt", "1 2\n2 1\n1 2\n1 3\n")
    with pytest.raises(ValueError, match="dog_truth.txt lines 1 and 4: task '1' has gold "
                                         "labels '2' and '3'"):
        convert_zhang2014(crowd, truth)


# ---------------------------------------------------------------------------
# act_* (string ids, URL task ids, repeated pairs, a seconds column, partial gold)
# ---------------------------------------------------------------------------


def test_act_zencrowd_layout_with_url_task_ids_and_duplicates(tmp_path):
    rows = [
        "W2,http://dbpedia.org/resource/Paris,1,1,12",
        "W1,http://dbpedia.org/resource/Paris,0,1,30",
        "W1,http://dbpedia.org/resource/Paris,1,1,31",  # W1 again on Paris: dropped
        "W1,http://dbpedia.org/resource/Paris,_Texas,0,-1,8",  # unquoted comma in the URL
        'W3,"http://dbpedia.org/resource/Washington,_D.C.",1,0,5',  # quoted comma
        "W3,http://dbpedia.org/resource/Lyon,1,,7",  # no gold
    ]
    crowd = convert_act(write(tmp_path / "ZenCrowd_us.csv", "\n".join(rows) + "\n", "\r\n"))
    paris, texas, dc, lyon = (f"http://dbpedia.org/resource/{x}"
                              for x in ("Paris", "Paris,_Texas", "Washington,_D.C.", "Lyon"))
    assert sorted(crowd.task_ids) == sorted([paris, texas, dc, lyon])
    assert votes_of(crowd) == {(paris, "W2"): "1", (paris, "W1"): "0", (texas, "W1"): "0",
                               (dc, "W3"): "1", (lyon, "W3"): "1"}
    assert crowd.n_duplicates == 1
    assert gold_of(crowd) == {paris: "1", dc: "0"}
    assert crowd.worker_ids.tolist() == ["W1", "W2", "W3"]


def test_act_four_field_layout_with_string_labels(tmp_path):
    crowd = convert_act(write(tmp_path / "CF.csv", "A1,t9,neutral,neutral\nA2,t9,positive,"
                                                   "neutral\nA1,t10,negative,-1\n"))
    assert crowd.labels.tolist() == ["negative", "neutral", "positive"]
    assert gold_of(crowd) == {"t9": "neutral"}
    assert crowd.n_gold_dropped == 0


@pytest.mark.parametrize("content, match", [
    ("A1,t1,1\n", r"CF.csv line 1: 3 fields, expected 'WorkerID,TaskID"),
    ("A1,t1,1,1\nA1,t2,,1\n", "CF.csv line 2: expected"),
    ("A1,t1,1,1\nA2,t1,0,0\n", "CF.csv lines 1 and 2: task 't1' has gold labels '1' and '0'"),
    ("", "CF.csv holds no votes"),
])
def test_act_malformed_files(tmp_path, content, match):
    with pytest.raises(ValueError, match=match):
        convert_act(write(tmp_path / "CF.csv", content))


# ---------------------------------------------------------------------------
# zheng_* (string ids, gold for part of the tasks, repeated pairs, header variants)
# ---------------------------------------------------------------------------


def test_zheng_relevance_layout_partial_gold_and_duplicates(tmp_path):
    answers = write(tmp_path / "answer.csv", "question,worker,answer\n20932_doc7,w9,2\n"
                    "20932_doc7,w1,1\n20932_doc7,w9,0\n411_docA,w1,0\n", "\r\n")
    truth = write(tmp_path / "truth.csv", "question,truth\n20932_doc7,1\n999_docZ,0\n")
    crowd = convert_zheng(answers, truth)
    assert crowd.task_ids.tolist() == ["20932_doc7", "411_docA"]  # string order
    assert votes_of(crowd) == {("20932_doc7", "w9"): "2", ("20932_doc7", "w1"): "1",
                               ("411_docA", "w1"): "0"}
    assert crowd.n_duplicates == 1 and crowd.n_gold_dropped == 1
    assert gold_of(crowd) == {"20932_doc7": "1"}
    assert crowd.labels.tolist() == ["0", "1", "2"]


def test_zheng_reads_columns_by_position(tmp_path):
    crowd = convert_zheng(write(tmp_path / "answer.csv", "id,worker,answer\n5,A,1\n10,A,0\n"),
                          write(tmp_path / "truth.csv", "q,truth\n10,0\n5,1\n"))
    assert crowd.task_ids.tolist() == ["5", "10"]
    np.testing.assert_array_equal(crowd.target, [1, 0])


def test_zheng_malformed_rows(tmp_path):
    truth = write(tmp_path / "truth.csv", "question,truth\n1,0\n")
    with pytest.raises(ValueError, match="answer.csv line 3: expected 'question,worker,answer'"):
        convert_zheng(write(tmp_path / "answer.csv", "question,worker,answer\n1,w,0\n1,w\n"),
                      truth)
    with pytest.raises(ValueError, match="answer.csv holds no votes"):
        convert_zheng(write(tmp_path / "answer.csv", "question,worker,answer\n"), truth)


# ---------------------------------------------------------------------------
# snow2008 archive
# ---------------------------------------------------------------------------


def snow_archive(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


SNOW_HEADER = "!amt_annotation_ids\t!amt_worker_ids\torig_id\tresponse\tgold\n"


def test_snow2008_member_is_read_from_the_archive(tmp_path):
    archive = snow_archive(tmp_path / "all_collected_data.tgz", {
        "anger.standardized.tsv": SNOW_HEADER + "a1\tW1\t594\t25\t37\n",
        "wsd.standardized.tsv": SNOW_HEADER + "a1\tW1\tx@1\t1\t1\na2\tW2\tx@1\t3\t1\n"
                                              "a3\tW1\tx@2\t2\t2\n",
    })
    crowd = convert_snow2008(archive, "wsd")
    assert votes_of(crowd) == {("x@1", "W1"): "1", ("x@1", "W2"): "3", ("x@2", "W1"): "2"}
    assert gold_of(crowd) == {"x@1": "1", "x@2": "2"}
    with pytest.raises(ValueError, match="has no member temp.standardized.tsv"):
        convert_snow2008(archive, "temp")
    with pytest.raises(ValueError, match="not a readable tar archive"):
        convert_snow2008(write(tmp_path / "bad.tgz", "garbage"), "wsd")


# ---------------------------------------------------------------------------
# music (not served: synthetic files in its layout)
# ---------------------------------------------------------------------------


def music_files(tmp_path, mturk_rows=None, newline="\n"):
    features = ",".join(f"feature{i}" for i in range(3))
    gold = (f"id,{features},class\nrock.00007.mp3,2.0,-1.0,0.5,rock\n"
            "blues.00001.mp3,0.5,1.5,0.0,blues\npop.00003.mp3,0.0,0.25,1.0,pop\n")
    test = f"id,{features},class\njazz.00010.mp3,1,1,1,jazz\nmetal.00002.mp3,3,0,0,metal\n"
    mturk = mturk_rows or [
        "blues.00001.mp3,A2,0.5,1.5,0.0,blues",
        "blues.00001.mp3,A1,0.5,1.5,0.0,jazz",
        "rock.00007.mp3,A1,2.0,-1.0,0.5,rock",
        "rock.00007.mp3,A1,2.0,-1.0,0.5,metal",  # A1's second answer on this song: dropped
        "pop.00003.mp3,A3,0.0,0.25,1.0,pop",
    ]
    return {
        "music_genre_gold.csv": write(tmp_path / "music_genre_gold.csv", gold),
        "music_genre_test.csv": write(tmp_path / "music_genre_test.csv", test),
        "music_genre_mturk.csv": write(tmp_path / "music_genre_mturk.csv",
                                       f"id,annotator,{features},class\n" + "\n".join(mturk)
                                       + "\n", newline),
    }


def test_music_layout_with_cr_line_endings(tmp_path):
    crowd = convert_music(music_files(tmp_path, newline="\r"))
    assert crowd.task_ids.tolist() == ["blues.00001.mp3", "pop.00003.mp3", "rock.00007.mp3"]
    # classes: the genres that occur, alphabetically
    assert crowd.labels.tolist() == ["blues", "jazz", "metal", "pop", "rock"]
    assert votes_of(crowd) == {("blues.00001.mp3", "A2"): "blues",
                               ("blues.00001.mp3", "A1"): "jazz",
                               ("rock.00007.mp3", "A1"): "rock",
                               ("pop.00003.mp3", "A3"): "pop"}
    assert crowd.n_duplicates == 1
    assert gold_of(crowd) == {"blues.00001.mp3": "blues", "pop.00003.mp3": "pop",
                              "rock.00007.mp3": "rock"}
    # feature rows follow the task order, not the file order
    np.testing.assert_allclose(crowd.features["train"],
                               [[0.5, 1.5, 0.0], [0.0, 0.25, 1.0], [2.0, -1.0, 0.5]])
    np.testing.assert_allclose(crowd.features["test"], [[1, 1, 1], [3, 0, 0]])
    np.testing.assert_array_equal(crowd.labels[crowd.held_out["test"]], ["jazz", "metal"])


def test_music_round_trip_through_the_folder_layout(tmp_path):
    crowd = convert_music(music_files(tmp_path))
    stats = write_dataset(tmp_path / "music", crowd, name="music", sources=["u1", "u2"])
    assert stats["duplicate_task_worker_pairs_dropped"] == 1
    ds = read_crowd_folder(tmp_path / "music")
    assert ds.votes.shape == (3, 3) and (ds.votes >= 0).sum() == 4
    assert ds.class_names.tolist() == ["blues", "jazz", "metal", "pop", "rock"]
    assert ds.data.shape == (3, 3) and ds.data_test.shape == (2, 3)
    assert ds.worker_ids.tolist() == ["A1", "A2", "A3"]
    assert "Duplicate (task, worker) votes dropped: 1" in ds.DESCR
    assert "4 = rock" in ds.DESCR
    assert json.loads((tmp_path / "music" / "stats.json").read_text())["source_files"] == [
        "u1", "u2"]


def test_music_malformed_files(tmp_path):
    with pytest.raises(ValueError, match="music_genre_mturk.csv line 3: task 'nosuch.mp3' is "
                                         "not one of"):
        convert_music(music_files(tmp_path, ["blues.00001.mp3,A1,0,0,0,blues",
                                             "nosuch.mp3,A1,0,0,0,rock"]))
    with pytest.raises(ValueError, match="music_genre_mturk.csv line 2: expected 6 fields"):
        convert_music(music_files(tmp_path, ["blues.00001.mp3,A1,blues"]))
    files = music_files(tmp_path)
    write(files["music_genre_gold.csv"], "id,feature0,class\na.mp3,x,rock\n")
    with pytest.raises(ValueError, match="music_genre_gold.csv line 2: a feature is not a"):
        convert_music(files)
    write(files["music_genre_gold.csv"], "id,feature0,class\na.mp3,1,rock\na.mp3,2,pop\n")
    with pytest.raises(ValueError, match=r"lines \[2, 3\]: song 'a.mp3' is listed more than"):
        convert_music(files)


# ---------------------------------------------------------------------------
# PyLearningCrowds (labelme, sentiment_polarity): malformed files
# ---------------------------------------------------------------------------


def test_answers_matrix_errors_name_the_file_and_line(tmp_path):
    paths = {
        "answers.txt": write(tmp_path / "answers.txt", "0 -1\n-1 9\n"),
        "Sentiment_Z_train.txt": write(tmp_path / "Sentiment_Z_train.txt", "0\n1\n"),
    }
    with pytest.raises(ValueError, match="answers.txt line 2: label '9' is not one of"):
        convert_sentiment_polarity(paths)
    write(paths["answers.txt"], "0 -1\n1\n")
    with pytest.raises(ValueError, match="answers.txt line 2: rows have"):
        convert_sentiment_polarity(paths)
    write(paths["answers.txt"], "0 -1\n1 1\n0 0\n")
    with pytest.raises(ValueError, match="Sentiment_Z_train.txt has 2 labels but answers.txt 3"):
        convert_sentiment_polarity(paths)


def test_pickled_features_are_refused(tmp_path):
    paths = {"answers.txt": write(tmp_path / "answers.txt", "0 -1\n"),
             "LabelMe_Z_train.txt": write(tmp_path / "LabelMe_Z_train.txt", "0\n")}
    paths["LabelMe_VGG_avg_train.npy"] = tmp_path / "f.npy"
    np.save(paths["LabelMe_VGG_avg_train.npy"], np.array([{}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="does not unpickle downloaded data"):
        convert_labelme(paths)
