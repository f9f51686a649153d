"""Tests of the votes model: check_votes, Votes, and the long format."""

import pickle
import re

import numpy as np
import pytest
import scipy.sparse as sp

from skcrowd import (MajorityVote, Votes, aggregate_long, check_votes, votes_from_long,
                     votes_to_long)


def triplets(v):
    return v.task.tolist(), v.worker.tolist(), v.label.tolist()


def test_dense_int_votes_become_task_sorted_triplets():
    votes = np.array([[0, -1, 2], [-1, -1, -1], [2, 2, 0]])
    v = check_votes(votes)
    assert isinstance(v, Votes)
    assert (v.n_tasks, v.n_workers, v.n_classes, v.n_votes) == (3, 3, 2, 5)
    assert v.classes.tolist() == [0, 2]
    assert triplets(v) == ([0, 0, 2, 2, 2], [0, 2, 0, 1, 2], [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(v.counts(), [[1, 1], [0, 0], [1, 2]])
    np.testing.assert_array_equal(v.task_indptr(), [0, 2, 2, 5])
    np.testing.assert_array_equal(v.votes_per_worker(), [2, 1, 2])
    np.testing.assert_array_equal(v.to_dense(), [[0, -1, 1], [-1, -1, -1], [1, 1, 0]])


def test_far_apart_integer_labels_are_three_classes():
    v = check_votes(np.array([[0, 7], [10**9, -1]]))
    assert v.classes.tolist() == [0, 7, 10**9]
    assert v.label.tolist() == [0, 1, 2]


def test_n_classes_adds_classes_that_never_appear():
    v = check_votes(np.array([[0, 1]]), n_classes=4)
    assert v.classes.tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(v.counts(), [[1, 1, 0, 0]])


def test_known_classes_map_labels_to_their_index():
    v = check_votes(np.array([["b", "c"]], dtype=object), classes=["a", "b", "c"])
    assert v.label.tolist() == [1, 2]


def test_string_votes_with_none_missing():
    votes = np.array([["cat", None], [None, "dog"], ["dog", "cat"]], dtype=object)
    v = check_votes(votes, missing_label=None)
    assert v.classes.tolist() == ["cat", "dog"]
    assert triplets(v) == ([0, 1, 2, 2], [0, 1, 0, 1], [0, 1, 1, 0])


def test_string_missing_marker():
    v = check_votes(np.array([["x", ""], ["", "y"]]), missing_label="")
    assert v.classes.tolist() == ["x", "y"]
    assert v.n_votes == 2


BLANK_FIX = "Mark missing votes with missing_label=''"


def _pd():
    return pytest.importorskip("pandas")


@pytest.mark.parametrize("blank", ["", "  ", "\t"])
@pytest.mark.parametrize("make, missing_label", [
    (lambda b: np.array([["cat", b], ["dog", "cat"]]), -1),                    # str array
    (lambda b: np.array([["cat", b], ["dog", None]], dtype=object), None),     # object array
    (lambda b: [["cat", b], ["dog", "cat"]], -1),                              # nested lists
    (lambda b: np.ma.masked_array(np.array([["cat", b], ["dog", "x"]]),
                                  mask=[[False, False], [False, True]]), -1),  # masked array
    (lambda b: _pd().DataFrame({"w1": ["cat", "dog"], "w2": [b, None]}), None),  # pandas
    (lambda b: _pd().DataFrame({"w1": ["cat", "dog"], "w2": [b, None]}, dtype="string"), None),
], ids=["str", "object", "list", "masked", "pandas", "pandas-string"])
def test_blank_string_votes_are_an_error_or_missing_never_a_class(make, missing_label, blank):
    with pytest.raises(ValueError, match=re.escape(
            f"votes has the label {blank!r} at row (task) 0, column (worker) 1: an empty or "
            f"whitespace-only string is not a label. {BLANK_FIX}")):
        check_votes(make(blank), missing_label=missing_label)
    with pytest.raises(ValueError, match=BLANK_FIX):  # an estimator's fit says the same
        MajorityVote(missing_label=missing_label).fit(make(blank))
    if missing_label is None:  # None marks the other missing votes: '' cannot mark them too
        return
    v = check_votes(make(blank), missing_label="")  # empty and whitespace-only: missing
    assert v.classes.tolist() == ["cat", "dog"]
    expected = ([0, 1, 1], [0, 0, 1], [0, 1, 0])  # the masked entry (1, 1) is missing too
    assert triplets(v) == (tuple(e[:2] for e in expected) if np.ma.isMaskedArray(make(blank))
                           else expected)


def test_blank_string_in_long_format_is_an_error():
    frame = _pd().DataFrame({"task": ["t1", "t1", "t2"], "worker": ["a", "b", "a"],
                             "label": ["cat", " ", "dog"]})
    match = ("long-format label column has the label ' ' at row 1 of the long data: an empty or "
             "whitespace-only string is not a label. Drop the rows without a vote")
    with pytest.raises(ValueError, match=match):
        votes_from_long(frame)
    with pytest.raises(ValueError, match=match):
        aggregate_long(MajorityVote(), frame)
    with pytest.raises(ValueError, match="label column has the label ''"):
        votes_from_long(None, task=[0, 1], worker=[0, 0], label=np.array(["", "cat"]))
    # a blank task or worker id is an id like any other
    assert votes_from_long(frame.assign(label="cat", worker=["", "b", ""])).workers.tolist() == [
        "", "b"]


def test_float_votes_with_nan_missing_become_integer_labels():
    v = check_votes(np.array([[1.0, np.nan], [np.nan, 3.0]]), missing_label=np.nan)
    assert v.classes.dtype.kind == "i"
    assert v.classes.tolist() == [1, 3]


def test_sparse_explicit_zero_is_a_vote_and_implicit_is_missing():
    m = sp.csr_matrix((np.array([0, 1, 0]), (np.array([0, 0, 2]), np.array([0, 1, 1]))),
                      shape=(3, 2))
    assert m.nnz == 3
    v = check_votes(m)
    assert triplets(v) == ([0, 0, 2], [0, 1, 1], [0, 1, 0])
    assert v.n_tasks == 3
    assert m.nnz == 3  # input untouched


def test_sparse_duplicate_entries_are_rejected_not_summed():
    m = sp.coo_matrix((np.array([1, 1]), (np.array([0, 0]), np.array([1, 1]))), shape=(2, 2))
    with pytest.raises(ValueError, match=r"two votes at row \(task\) 0, column \(worker\) 1"):
        check_votes(m)


def test_masked_array_masked_entries_are_missing():
    votes = np.ma.masked_array([[0, 1], [1, 0]], mask=[[True, False], [False, False]])
    v = check_votes(votes)
    assert triplets(v) == ([0, 1, 1], [1, 0, 1], [1, 1, 0])


def test_pandas_frame_with_nullable_ints_and_strings():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"w1": pd.array([1, None, 2], dtype="Int64"), "w2": [2, 2, 1]})
    v = check_votes(df, missing_label=None)
    assert triplets(v) == ([0, 0, 1, 2, 2], [0, 1, 1, 0, 1], [0, 1, 1, 1, 0])
    df = pd.DataFrame({"w1": ["a", None], "w2": ["b", "a"]})
    assert check_votes(df, missing_label=None).classes.tolist() == ["a", "b"]


def test_one_dimensional_votes_are_one_vote_per_task():
    v = check_votes(np.array([2, 0, -1]))
    assert (v.n_tasks, v.n_workers) == (3, 1)
    assert v.label.tolist() == [1, 0]


def test_take_tasks_renumbers_rows():
    v = check_votes(np.array([[0, 1], [-1, -1], [1, 1]]))
    sub = v.take_tasks([2, 1, 0])
    assert triplets(sub) == ([0, 0, 2, 2], [0, 1, 0, 1], [1, 1, 0, 1])
    assert sub.n_tasks == 3


def test_votes_pickle_round_trip():
    v = check_votes(np.array([[0, 1]]))
    w = pickle.loads(pickle.dumps(v))
    assert triplets(w) == triplets(v)


@pytest.mark.parametrize(
    "votes, kwargs, error, match",
    [
        (np.array([[0.5, 1.0]]), {}, ValueError, r"non-integer float label 0.5 at row \(task\) 0"),
        (np.array([[np.nan, 1.0]]), {}, ValueError, r"NaN at row \(task\) 0.*missing_label=np.nan"),
        (np.array([[0.0, np.inf]]), {"missing_label": np.nan}, ValueError, r"label inf.*finite"),
        (np.array([["a", 1]], dtype=object), {}, TypeError, "mixes label types"),
        (np.array([[None, 1]], dtype=object), {}, ValueError, "None/NA.*missing_label=None"),
        (np.zeros((0, 3)), {}, ValueError, r"empty: shape \(0, 3\)"),
        (np.zeros((3, 0)), {}, ValueError, r"empty: shape \(3, 0\)"),
        (np.zeros((2, 2, 2)), {}, ValueError, "must be 2-D"),
        (np.full((2, 2), -1), {}, ValueError, "no observed vote"),
        (np.array([[0, 5]]), {"n_classes": 3}, ValueError, r"label 5 at .*worker\) 1.*n_classes=3"),
        (np.array([[0, 5]]), {"classes": [0, 1]}, ValueError, r"label 5 .*not one of the known"),
        (np.array([[0, 1]]), {"n_workers": 3}, ValueError, "has 2 workers .* fitted with 3"),
        (np.array([["a", "b"]]), {"n_classes": 2}, ValueError, "requires integer labels"),
        (np.array([[0, 1]]), {"n_classes": 0}, ValueError, "n_classes must be a positive"),
        (np.array([[0, 1]]), {"missing_label": [1]}, TypeError, "missing_label must be"),
        (np.array([[1 + 2j]]), {}, ValueError, "Complex data not supported: votes has dtype"),
    ],
)
def test_bad_votes_raise_clear_errors(votes, kwargs, error, match):
    with pytest.raises(error, match=match):
        check_votes(votes, **kwargs)


def test_all_missing_allowed_when_asked():
    v = check_votes(np.full((2, 3), -1), allow_no_votes=True)
    assert v.n_votes == 0 and v.n_tasks == 2
    np.testing.assert_array_equal(v.counts(), np.zeros((2, 0)))


def test_error_names_the_argument():
    with pytest.raises(ValueError, match="^y has non-integer"):
        check_votes(np.array([[0.5]]), name="y")


# --------------------------------------------------------------------------- long format


def test_votes_from_long_with_string_ids_round_trips():
    task = ["t2", "t1", "t1", "t3"]
    worker = ["bob", "alice", "bob", "alice"]
    label = ["dog", "cat", "dog", "cat"]
    lv = votes_from_long(None, task=task, worker=worker, label=label)
    votes, tasks, workers, classes = lv
    assert tasks.tolist() == ["t1", "t2", "t3"]
    assert workers.tolist() == ["alice", "bob"]
    assert classes.tolist() == ["cat", "dog"]
    np.testing.assert_array_equal(votes, [[0, 1], [-1, 1], [0, -1]])
    back = votes_to_long(votes, tasks=tasks, workers=workers, classes=classes)
    got = sorted(zip(back["task"], back["worker"], back["label"]))
    assert got == sorted(zip(task, worker, label))


def test_votes_from_long_dataframe_and_sparse():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"item": [5, 5, 9], "annotator": [1, 2, 2], "answer": [0, 0, 1]})
    lv = votes_from_long(df, task="item", worker="annotator", label="answer", sparse=True)
    assert sp.issparse(lv.votes) and lv.votes.nnz == 3  # label 0 stored explicitly
    v = check_votes(lv.votes)
    assert triplets(v) == ([0, 0, 1], [0, 1, 1], [0, 0, 1])
    frame = votes_to_long(lv.votes, tasks=lv.tasks, workers=lv.workers, classes=lv.classes,
                          as_frame=True)
    assert list(frame.columns) == ["task", "worker", "label"]
    assert frame["task"].tolist() == [5, 5, 9]


def test_votes_from_long_rejects_duplicates_and_missing_columns():
    with pytest.raises(ValueError, match="worker 'w' voted more than once on task 't'"):
        votes_from_long(None, task=["t", "t"], worker=["w", "w"], label=[0, 1])
    with pytest.raises(KeyError, match="no worker column 'annotator'"):
        votes_from_long({"task": [1], "label": [0]}, worker="annotator")
    with pytest.raises(ValueError, match="differ in length"):
        votes_from_long(None, task=[1, 2], worker=[1], label=[0])
    with pytest.raises(ValueError, match="label column has a missing value at row 1"):
        votes_from_long(None, task=[1, 2], worker=[1, 1], label=[0.0, np.nan])


def test_votes_to_long_checks_id_lengths():
    with pytest.raises(ValueError, match="tasks has 1 ids for 2 tasks"):
        votes_to_long(np.array([[0], [1]]), tasks=["a"])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64, np.int64])
def test_integer_labels_encode_as_sorted_distinct_values_in_their_dtype(dtype):
    """The table-of-the-range encoding (small ranges) agrees with np.unique, extremes included."""
    info = np.iinfo(dtype)
    low, high = (info.min, info.min + 200) if info.min < 0 else (info.max - 200, info.max)
    labels = np.array([high, low, low + 7, high, low + 7], dtype=dtype)
    votes = np.ma.masked_array(labels[:, None], mask=False)
    v = check_votes(votes)
    assert v.classes.dtype == dtype
    np.testing.assert_array_equal(v.classes, np.unique(labels))
    np.testing.assert_array_equal(v.classes[v.label], labels)


# -- regressions found by the property-based tests (tests/test_votes_properties.py) --------------


def test_empty_known_classes_is_a_value_error_not_an_index_error():
    with pytest.raises(ValueError, match="classes must be a non-empty 1-D array"):
        check_votes(np.array([[0, 1]]), classes=[])
    with pytest.raises(ValueError, match="distinct labels"):
        check_votes(np.array([[0, 1]]), classes=[0, 0, 1])


def test_a_list_mixing_strings_and_numbers_is_not_turned_into_text():
    # numpy made [[0, -1, "a"]] strings: the marker -1 became the label "-1"
    with pytest.raises(TypeError, match=r"mixes label types: 'a' \(str\) at row \(task\) 0, "
                                        r"column \(worker\) 2 and 0 \(int\)"):
        check_votes([[0, -1, "a"]])
    # and task ids 0 and "0" became one task
    with pytest.raises(TypeError, match="long-format task column mixes"):
        votes_from_long(None, task=[0, "0"], worker=[1, 2], label=[0, 1])
    assert check_votes([["a", "b"]]).classes.tolist() == ["a", "b"]


def test_a_string_array_holding_the_text_of_a_numeric_marker_is_an_error():
    with pytest.raises(ValueError, match=r"holds the string '-1' at row \(task\) 0, column "
                                         r"\(worker\) 1 where missing_label=-1 is not a string"):
        check_votes(np.array([["a", "-1"]]))
    with pytest.raises(ValueError, match="holds the string 'nan'"):
        check_votes(np.array([["a", "nan"]]), missing_label=np.nan)


def test_masked_array_entries_equal_to_the_marker_are_missing_too():
    votes = np.ma.masked_array([[0, -1], [1, 5]], mask=[[False, False], [False, True]])
    v = check_votes(votes)
    assert triplets(v) == ([0, 1], [0, 0], [0, 1])
    nan = np.ma.masked_array([[0.0, np.nan]], mask=[[False, False]])
    assert check_votes(nan, missing_label=np.nan).n_votes == 1
    with pytest.raises(ValueError, match=r"NaN at row \(task\) 0, column \(worker\) 1"):
        check_votes(nan)


def test_bools_are_neither_numbers_nor_numeric_markers():
    with pytest.raises(TypeError, match=r"mixes label types: True \(bool\) .* 2 \(int\)"):
        check_votes(np.array([[True, 2]], dtype=object))
    # True is not the marker 1 (it was dropped as missing), nor 1 the marker True
    assert check_votes(np.array([[True, False]]), missing_label=1).n_votes == 2
    assert check_votes(np.array([[1, 0]]), missing_label=True).n_votes == 2
    assert check_votes(np.array([[True, False]]), missing_label=False).n_votes == 1


def test_complex_and_huge_float_labels_are_named_where_they_are():
    with pytest.raises(ValueError, match=r"complex label \(15\+0j\) at row \(task\) 0, column "
                                         r"\(worker\) 1"):
        check_votes(np.array([[1.0, 15 + 0j]], dtype=object))
    # 2**63 as a float overflowed int64 (a RuntimeWarning and a wrong label)
    with pytest.raises(ValueError, match=r"float label 9.223372036854776e\+18 at row \(task\) 0, "
                                         r"column \(worker\) 1, beyond the 64-bit integers"):
        check_votes(np.array([[1.0, 2.0**63]]))


def test_integer_labels_beyond_int64_in_an_object_array_stay_exact():
    # Python ints in an object array went through float64: 2**64 - 1 next to 3 became a "float
    # label beyond the 64-bit integers" (found by the property tests' uint64 labels)
    votes = check_votes(np.array([[2**64 - 1, -1], [3, 2**64 - 1]], dtype=object))
    assert votes.classes.dtype == np.uint64
    assert votes.classes.tolist() == [3, 2**64 - 1]
    assert votes.label.tolist() == [1, 0, 1]
    # on both sides of the 64-bit range: Python ints, still exact and ordered
    votes = check_votes(np.array([[2**64 - 1, -5], [3, None]], dtype=object), missing_label=None)
    assert votes.classes.tolist() == [-5, 3, 2**64 - 1]
    assert votes.label.tolist() == [2, 0, 1]


@pytest.mark.parametrize("na", ["none", "pd.NA", "pd.NaT"])
def test_votes_from_long_finds_pandas_missing_values(na):
    pd = pytest.importorskip("pandas")
    value = {"none": None, "pd.NA": pd.NA, "pd.NaT": pd.NaT}[na]
    frame = pd.DataFrame({"task": pd.array([1, 2, 3], dtype="Int64"), "worker": [1, 1, 1],
                          "label": ["a", "b", "a"]}, dtype=object)
    frame.loc[2, "task"] = value
    with pytest.raises(ValueError, match="long-format task column has a missing value at row 2"):
        votes_from_long(frame)
    labels = pd.DataFrame({"task": [1, 2], "worker": [1, 1],
                           "label": pd.array(["a", None], dtype="string")})
    with pytest.raises(ValueError, match="long-format label column has a missing value at row 1"):
        votes_from_long(labels)
