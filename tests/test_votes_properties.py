"""Property-based tests of the votes model: generated votes matrices in every container, long-format
votes with duplicated entries, and arbitrary entries, through check_votes and votes_from_long.

Each property says what holds for *every* input of its strategy (tests/votes_strategies.py):
valid votes are encoded exactly (every observed vote once, nothing else, the classes the sorted
distinct labels), permuting rows and columns permutes the triplets and nothing else, and anything
else is a ValueError or TypeError whose message names the argument. The example counts of each
profile are in doc/reliability.rst.
"""

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
pd = pytest.importorskip("pandas")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from votes_strategies import (  # noqa: E402
    TEXT,
    VotesCase,
    _plain,
    arbitrary_entries,
    long_votes,
    votes_cases,
)

from skcrowd import check_votes, votes_from_long, votes_to_long  # noqa: E402


def decoded(v):
    """Set of ``(row, column, label)`` of encoded votes, labels as plain Python values."""
    labels = v.classes[v.label]
    return {(int(t), int(w), _plain(lab)) for t, w, lab in zip(v.task, v.worker, labels)}


def assert_names(exc, *names):
    message = str(exc)
    assert message and any(n in message for n in names), message


def permutations(case_strategy):
    """A case with a permutation of its rows and one of its columns."""
    return case_strategy.flatmap(lambda case: st.tuples(
        st.just(case), st.permutations(range(case.shape[0])),
        st.permutations(range(case.shape[1]))))


@given(permutations(votes_cases()))
def test_check_votes_encodes_exactly_the_observed_votes(args):
    case, rows, cols = args
    rows, cols = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)
    if not case.mask.any():
        with pytest.raises(ValueError, match="votes contains no observed vote"):
            check_votes(case.build(), missing_label=case.missing_label)
        return
    v = check_votes(case.build(), missing_label=case.missing_label)
    assert (v.n_tasks, v.n_workers) == case.shape
    assert decoded(v) == case.observed()
    assert np.all(np.diff(v.task) >= 0)  # sorted by task
    assert sorted(map(_plain, v.classes.tolist())) == sorted({lab for *_, lab in decoded(v)})
    assert np.all(v.classes[:-1] < v.classes[1:])  # sorted and distinct
    # permuting tasks and workers permutes the triplets and leaves the classes as they are
    w = check_votes(case.build(rows, cols), missing_label=case.missing_label)
    np.testing.assert_array_equal(w.classes, v.classes)
    assert decoded(w) == case.observed(rows, cols)


@given(votes_cases(containers=("numpy", "pandas", "sparse")), st.data())
def test_known_classes_and_n_classes_accept_the_votes_or_name_the_label(case, data):
    if not case.mask.any():
        return
    v = check_votes(case.build(), missing_label=case.missing_label)
    # known classes: a superset encodes the same votes, a subset names a label it lacks
    kept = data.draw(st.lists(st.sampled_from(range(v.n_classes)), unique=True, max_size=5))
    subset = v.classes[np.sort(np.array(kept, dtype=np.int64))]
    if not kept:
        with pytest.raises(ValueError, match="classes must be a non-empty 1-D array"):
            check_votes(case.build(), missing_label=case.missing_label, classes=subset)
    elif len(kept) == v.n_classes:
        assert decoded(check_votes(case.build(), missing_label=case.missing_label,
                                   classes=subset)) == decoded(v)
    else:
        with pytest.raises(ValueError, match="not one of the known classes"):
            check_votes(case.build(), missing_label=case.missing_label, classes=subset)
    if v.classes.dtype.kind in "iu" and v.classes.min() >= 0 and v.classes.max() < 10**6:
        n_classes = data.draw(st.integers(1, int(v.classes.max()) + 3))
        if n_classes > v.classes.max():
            w = check_votes(case.build(), missing_label=case.missing_label, n_classes=n_classes)
            np.testing.assert_array_equal(w.classes, np.arange(n_classes))
            assert decoded(w) == decoded(v)
        else:
            with pytest.raises(ValueError, match=f"outside range.n_classes. with n_classes="
                                                 f"{n_classes}"):
                check_votes(case.build(), missing_label=case.missing_label,
                            n_classes=n_classes)


@given(arbitrary_entries(), st.sampled_from([-1, 0, None, np.nan, "", "x", 1.5, b"x", [1]]))
def test_arbitrary_entries_are_votes_or_a_clear_error(entries, marker):
    try:
        v = check_votes(entries, missing_label=marker, name="crowd")
    except (ValueError, TypeError) as exc:
        assert_names(exc, "crowd", "missing_label")
        return
    # accepted: every entry is either a vote of its own label or the missing marker
    got = {(t, w): lab for t, w, lab in decoded(v)}
    for (i, j), entry in np.ndenumerate(entries):
        if (i, j) in got:
            assert got[(i, j)] == _plain(entry) and not _is_missing(entry, marker)
        else:
            assert _is_missing(entry, marker), (i, j, entry)


def _is_missing(entry, marker):
    nan_like = entry is None or (isinstance(entry, float) and entry != entry)
    if marker is None or (isinstance(marker, float) and marker != marker):
        return nan_like
    if isinstance(marker, str) and not marker.strip():  # a blank marker: every blank string
        return isinstance(entry, str) and not entry.strip()
    return isinstance(entry, str) == isinstance(marker, str) and not nan_like and \
        entry == marker


@given(votes_cases(containers=("numpy",)), st.data())
def test_a_malformed_entry_is_named_by_its_position(case, data):
    """One bad entry in valid votes: the error names its row and column."""
    grid = case.build()
    if grid.dtype.kind != "O":
        grid = grid.astype(object)
    i = data.draw(st.integers(0, case.shape[0] - 1))
    j = data.draw(st.integers(0, case.shape[1] - 1))
    bad = [0.5, float("inf"), -float("inf"), 1 + 1j, b"x", object()]
    others = case.mask.copy()
    others[i, j] = False
    if others.any():  # a label of another type than the other votes'
        bad += [7] if case.kind == "str" else ["a", True] if case.kind != "bool" else [7, "a"]
    grid[i, j] = data.draw(st.sampled_from(bad))
    with pytest.raises((ValueError, TypeError)) as err:
        check_votes(grid, missing_label=case.missing_label)
    assert_names(err.value, f"row (task) {i}, column (worker) {j}")


# -- long format --------------------------------------------------------------------------------


@given(long_votes(), st.sampled_from(["columns", "frame", "sparse"]))
def test_votes_from_long_round_trips_or_names_the_duplicate(args, form):
    rows, repeated = args
    task, worker, label = (list(c) for c in zip(*rows))
    if form == "frame":
        call = dict(data=pd.DataFrame({"task": task, "worker": worker, "label": label}))
    else:
        call = dict(data=None, task=task, worker=worker, label=label, sparse=form == "sparse")
    if repeated:
        with pytest.raises(ValueError, match="voted more than once on task") as err:
            votes_from_long(**call)
        assert any(f"worker {w!r} voted more than once on task {t!r}" in str(err.value)
                   for t, w in repeated), str(err.value)
        return
    lv = votes_from_long(**call)
    v = check_votes(lv.votes, n_classes=len(lv.classes))
    got = {(_plain(lv.tasks[t]), _plain(lv.workers[w]), _plain(lv.classes[k]))
           for t, w, k in zip(v.task, v.worker, v.label)}
    assert got == {(t, w, _plain(lab)) for t, w, lab in rows}
    assert len(lv.tasks) == len(set(task)) and len(lv.workers) == len(set(worker))
    back = votes_to_long(lv.votes, tasks=lv.tasks, workers=lv.workers, classes=lv.classes)
    assert sorted(zip(*(map(_plain, back[c]) for c in ("task", "worker", "label"))),
                  key=repr) == sorted(((t, w, _plain(lab)) for t, w, lab in rows), key=repr)


@given(long_votes(duplicates=False), st.sampled_from(["task", "worker", "label"]), st.data())
def test_votes_from_long_names_the_row_of_a_missing_value(args, column, data):
    rows, _ = args
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    r = data.draw(st.integers(0, len(frame) - 1))
    style = data.draw(st.sampled_from(["object", "nullable"]))
    col = frame[column].astype(object)
    col[r] = data.draw(st.sampled_from([None, np.nan, pd.NA]))
    if style == "nullable":
        numeric = all(isinstance(x, (int, np.integer)) for x in frame[column])
        col = col.astype("Int64" if numeric else "string")
    frame[column] = col
    with pytest.raises(ValueError, match=f"long-format {column} column has a missing value at "
                                         f"row {r}"):
        votes_from_long(frame)


@given(st.lists(st.one_of(st.integers(-5, 5), TEXT), min_size=2, max_size=10))
def test_votes_from_long_ids_of_mixed_types_are_a_type_error(ids):
    mixed = any(isinstance(x, str) for x in ids) and any(isinstance(x, int) for x in ids)
    workers = list(range(len(ids)))
    if not mixed:
        assert votes_from_long(None, task=ids, worker=workers, label=[0] * len(ids)).votes.shape[
            0] == len(set(ids))
        return
    with pytest.raises(TypeError, match="long-format task column mixes"):
        votes_from_long(None, task=ids, worker=workers, label=[0] * len(ids))


def test_case_builder_round_trip():
    """The oracle itself: a hand-made case builds in every container to the same votes."""
    labels = np.array([[3, 5], [5, 3]], dtype=object)
    mask = np.array([[True, False], [True, True]])
    expected = {(0, 0, 3), (1, 0, 5), (1, 1, 3)}
    for container in ("numpy", "list", "pandas", "masked", "sparse"):
        case = VotesCase(labels=labels, mask=mask, kind="int", container=container,
                         storage="native", missing_label=-1, dtype="int64")
        assert decoded(check_votes(case.build(), missing_label=-1)) == expected, container
        assert case.observed() == expected
