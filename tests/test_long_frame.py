"""A long table (one row per vote) is never read as a votes matrix (issue 22, section 3).

Every aggregator and feature model that :func:`skcrowd.utils.discovery.all_estimators` finds is
collected, so a new one is covered without editing this file (one that needs constructor
arguments gets a line in ``_FACTORIES``). Given a
crowd-kit style frame with columns ``task, worker, label``, as the votes ``X`` of an aggregator
or the votes ``y`` of a feature model, each method that reads votes raises a ValueError that
names ``votes_from_long`` and shows the call to make; the call, run, gives the votes matrix.
"""

import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

import skcrowd
from skcrowd import check_votes, votes_to_long
from skcrowd.utils.discovery import all_estimators
from skcrowd.votes import check_not_long_format

pd = pytest.importorskip("pandas")

# 6 tasks x 3 workers, every vote observed: read wide, the 18 x 3 long table of these votes is
# all integers too, so nothing but the check stops an estimator from aggregating it
VOTES = np.array([[0, 0, 1], [1, 1, 1], [0, 1, 0], [1, 0, 1], [0, 0, 0], [1, 1, 0]])
LONG = votes_to_long(VOTES, as_frame=True)
RNG = np.random.RandomState(0)
X_TASKS = RNG.normal(size=(6, 4)).astype(np.float32)  # one row per task
X_VOTES = RNG.normal(size=(18, 4)).astype(np.float32)  # one row per row of LONG
TINY_NET = dict(max_epochs=1, module__hidden_units=4, train_split=None, random_state=0)


def _tiny_net():
    from skcrowd.neural import CrowdLayerClassifier

    return CrowdLayerClassifier(**TINY_NET)


# public estimators that cannot be built with default arguments: name -> factory
_FACTORIES = {
    "AggregatorSelector": lambda cls: cls([skcrowd.MajorityVote(), skcrowd.DawidSkene()],
                                          random_state=0),
    "AggregatedTargetClassifier": lambda cls: cls(LogisticRegression()),
    "ConsensusClassifier": lambda cls: cls(LogisticRegression(), cv=2, n_rounds=1),
    "SelfCrowdClassifier": lambda cls: cls(_tiny_net(), n_iterations=1, random_state=0),
    "WAUMPruner": lambda cls: cls(alpha=0.2, n_epochs=1, random_state=0),
    "PrunedClassifier": lambda cls: cls(
        _tiny_net(), pruner=skcrowd.WAUMPruner(alpha=0.2, n_epochs=1, random_state=0)),
}


# Not collected: the aggregators of continuous ratings (issue 27), whose long table is refused
# with the pivot that converts it, not votes_from_long (class indices):
# tests/aggregation/test_continuous.py; and those of multi-label votes (a set of labels per row),
# which convert with multilabel_votes_from_long: tests/test_multilabel.py.
AGGREGATORS = dict(all_estimators(type_filter="aggregator"))


def _public_estimators():
    """name -> class of every aggregator and feature model (the nets only with torch)."""
    return dict(all_estimators(type_filter=["aggregator", "feature_model"]))


ESTIMATORS = _public_estimators()


def make(name):
    cls = ESTIMATORS[name]
    if name in _FACTORIES:
        try:
            return _FACTORIES[name](cls)
        except ImportError as exc:
            pytest.skip(f"{name}: {exc}")
    skorch = pytest.importorskip("skorch") if "neural" in cls.__module__ else None
    estimator = cls(**TINY_NET) if skorch and issubclass(cls, skorch.NeuralNet) else cls()
    if "random_state" in estimator.get_params():  # KOS, MMSR: seeded starts, same labels twice
        estimator.set_params(random_state=0)
    return estimator


def is_aggregator(name):
    return name in AGGREGATORS


def proper_data(name):
    """``(X, votes)`` a fit accepts (``X`` None for an aggregator), one row per task."""
    if is_aggregator(name):
        return None, VOTES
    if name == "SequenceCrowdLayerClassifier":  # (sequences, tokens, features / workers)
        return np.repeat(X_TASKS[:, None, :2], 3, axis=1), np.repeat(VOTES[:, None], 3, axis=1)
    if name == "CrowdLayerRegressor":
        return X_TASKS, VOTES.astype(float)
    return X_TASKS, VOTES


def x_for_long(name):
    """Features with one row per row of LONG: the lengths agree, only the check objects."""
    if name == "SequenceCrowdLayerClassifier":  # LONG would be 18 sequences of 3 tokens
        return np.repeat(X_VOTES[:, None, :2], 3, axis=1)
    return X_VOTES


def fit_proper(estimator, name):
    X, votes = proper_data(name)
    return estimator.fit(votes) if X is None else estimator.fit(X, votes)


FIT_METHODS = ("fit", "fit_predict", "partial_fit", "fit_resample")
FITTED_METHODS = ("predict", "predict_proba", "transform", "score")


def _cases():
    """(estimator name, method) for every method of every estimator that reads votes."""
    cases = []
    for name, cls in ESTIMATORS.items():
        try:  # an instance: a method may be available for some kinds only (a sampler's score)
            estimator = make(name)
        except pytest.skip.Exception:  # an optional dependency of a factory is missing
            estimator = cls
        for method in FIT_METHODS + FITTED_METHODS:
            if not hasattr(estimator, method):
                continue
            if not is_aggregator(name) and method not in FIT_METHODS + ("score",):
                continue  # predict(X) of a feature model reads features only
            cases.append(pytest.param(name, method, id=f"{name}-{method}"))
    return cases


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny nets train much faster on one thread (see tests/neural/conftest.py)."""
    try:
        import torch
    except ImportError:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_every_public_estimator_is_collected():
    names = set(ESTIMATORS)
    assert {"MajorityVote", "DawidSkene", "AggregatorSelector", "SelfCrowdClassifier",
            "AggregatedTargetClassifier", "WAUMPruner", "PrunedClassifier",
            "ConsensusClassifier"} <= names
    try:
        import skorch  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return
    assert {"CrowdLayerClassifier", "SequenceCrowdLayerClassifier",
            "CrowdLayerRegressor"} <= names


@pytest.mark.parametrize("name, method", _cases())
def test_long_frame_is_refused_naming_votes_from_long(name, method):
    estimator = make(name)
    aggregator = is_aggregator(name)
    if method in FITTED_METHODS:
        fit_proper(estimator, name)
    args = (LONG,) if aggregator else (x_for_long(name), LONG)
    arg = "X" if aggregator else "y"
    with pytest.raises(ValueError, match=rf"^{arg}\b.*long-format votes") as info:
        getattr(estimator, method)(*args)
    message = str(info.value)
    assert "votes_from_long" in message
    assert (f"skcrowd.votes_from_long({arg}, task='task', worker='worker', label='label')"
            in message)


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if not is_aggregator(n)])
def test_long_y_is_refused_before_the_lengths_are_compared(name):
    """The usual mistake: X has one row per task, the long y one per vote."""
    estimator = make(name)
    X, _ = proper_data(name)
    with pytest.raises(ValueError, match="votes_from_long"):
        estimator.fit(X, LONG)


def _suggested_call(message):
    """The code between backticks in the error message."""
    (code,) = re.findall(r"`([^`]+)`", message)
    return code


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_the_suggested_call_gives_votes_the_estimator_accepts(name):
    estimator = make(name)
    aggregator = is_aggregator(name)
    frame = LONG.sample(frac=1.0, random_state=0)  # row order of the long table is free
    with pytest.raises(ValueError) as info:
        estimator.fit(frame) if aggregator else estimator.fit(X_TASKS, frame)
    scope = {"skcrowd": skcrowd, "X" if aggregator else "y": frame}
    exec(_suggested_call(str(info.value)), scope)
    votes, tasks, workers, classes = (scope[k] for k in ("votes", "tasks", "workers", "classes"))
    assert np.array_equal(tasks, np.arange(6)) and np.array_equal(workers, np.arange(3))
    assert np.array_equal(classes[votes], VOTES)  # rows follow tasks; labels index classes
    X, wide = proper_data(name)
    if name == "SequenceCrowdLayerClassifier":
        votes = np.repeat(votes[:, None], 3, axis=1)
    elif name == "CrowdLayerRegressor":
        votes = votes.astype(float)
    fitted = estimator.fit(votes) if aggregator else estimator.fit(X, votes)
    if aggregator:
        assert np.array_equal(classes[fitted.predict(votes)],
                              clone(estimator).fit(wide).predict(wide))


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_wide_frame_with_worker_id_columns_is_a_votes_matrix(name):
    """A pandas votes matrix (pivot of the long table, index "task") is accepted as before."""
    estimator = make(name)
    X, wide = proper_data(name)
    if wide.ndim != 2:
        pytest.skip("sequence votes are 3-D: no frame holds them")
    frame = pd.DataFrame(wide, columns=["alice", "user", "w3"],
                         index=pd.Index(range(6), name="task"))
    frame.columns.name = "worker"
    if is_aggregator(name):
        got = estimator.fit(frame).predict(frame)
        assert list(got.index) == list(range(6))
        assert np.array_equal(np.asarray(got), clone(estimator).fit(wide).predict(wide))
    elif hasattr(estimator, "predict"):
        assert estimator.fit(X, frame).predict(X).shape == (6,)
    else:  # WAUMPruner: a sampler
        X_kept, votes_kept = estimator.fit_resample(X, frame)
        assert len(X_kept) == len(votes_kept) >= 4


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"alice": [0, 1], "bob": [1, -1]}),
    pd.DataFrame({0: [0, 1], 1: [1, -1], 2: [1, 1]}),
    pd.DataFrame({"task": [0, 1], "w2": [1, -1]}),  # one role only: a worker named "task"
    pd.DataFrame({"user": [0, 1], "bob": [1, -1]}, index=pd.Index([3, 4], name="task")),
    pd.Series([0, 1], index=pd.Index([3, 4], name="task"), name="label"),  # a vote per task
    {"alice": [0, 1], "bob": [1, -1]},
    np.array([[0, 1], [1, -1]]),
    [[0, 1], [1, -1]],
], ids=["names", "ints", "task-only", "index-task", "series", "mapping", "array", "list"])
def test_votes_matrices_pass(frame):
    check_not_long_format(frame, "X")


LONG_FORMS = {
    "frame": (LONG, "X", "task='task', worker='worker', label='label'"),
    "crowd-kit-0.x": (LONG.rename(columns={"worker": "performer"}), "X",
                      "task='task', worker='performer', label='label'"),
    "export": (LONG.set_axis(["Task ID", "WorkerId", "Answer"], axis=1), "X",
               "task='Task ID', worker='WorkerId', label='Answer'"),
    "other-label": (LONG.rename(columns={"label": "value"}), "X",
                    "task='task', worker='worker', label='value'"),
    "extra-columns": (LONG.assign(seconds=1.0), "X",
                      "task='task', worker='worker', label='label'"),
    "mapping": (LONG.to_dict("list"), "X", "task='task', worker='worker', label='label'"),
    "records": (LONG.to_records(index=False), "X",
                "task='task', worker='worker', label='label'"),
    "series": (LONG.set_index(["task", "worker"])["label"], "X.reset_index()",
               "task='task', worker='worker', label='label'"),
    "indexed-by-task": (LONG.set_index("task"), "X.reset_index()",
                        "task='task', worker='worker', label='label'"),
}
try:
    import pyarrow
except ImportError:  # pragma: no cover - pyarrow is a test dependency
    pass
else:
    LONG_FORMS["arrow"] = (pyarrow.Table.from_pandas(LONG, preserve_index=False), "X",
                           "task='task', worker='worker', label='label'")


@pytest.mark.parametrize("form", list(LONG_FORMS))
def test_long_forms_are_refused_with_a_call_that_converts_them(form):
    data, expr, columns = LONG_FORMS[form]
    with pytest.raises(ValueError) as info:
        skcrowd.MajorityVote().fit_predict(data)
    message = str(info.value)
    call = f"skcrowd.votes_from_long({expr}, {columns})"
    assert message.startswith("X looks like long-format votes") and call in message
    scope = {"skcrowd": skcrowd, "X": data}
    exec(_suggested_call(message), scope)
    assert np.array_equal(scope["classes"][scope["votes"]], VOTES)


def test_label_column_that_cannot_be_told_is_left_to_the_user():
    data = LONG.rename(columns={"label": "value"}).assign(note="")
    with pytest.raises(ValueError, match=r"label=<the label column, one of 'value', 'note'>"):
        check_votes(data, name="y")


@pytest.mark.parametrize("function", ["mv_accuracy_score", "krippendorff_alpha",
                                      "fleiss_kappa", "imbalance_ratio"])
def test_votes_functions_refuse_long_frames(function):
    args = (LONG, np.zeros(18, dtype=int)) if function == "mv_accuracy_score" else (LONG,)
    with pytest.raises(ValueError, match="votes_from_long"):
        getattr(skcrowd, function)(*args)


def test_check_votes_names_the_argument():
    with pytest.raises(ValueError, match=r"^y_val looks like .*votes_from_long\(y_val, "):
        check_votes(LONG, name="y_val")


def test_aggregate_long_gives_one_label_per_task_id():
    frame = pd.DataFrame({"item": ["t2", "t1", "t1", "t1", "t2"],
                          "annotator": ["a", "a", "b", "c", "b"],
                          "answer": ["dog", "cat", "cat", "dog", "dog"]})
    labels = skcrowd.aggregate_long(skcrowd.MajorityVote(), frame, task="item",
                                    worker="annotator", label="answer")
    assert labels.index.name == "item" and labels.name == "answer"
    assert labels.to_dict() == {"t1": "cat", "t2": "dog"}
    proba = skcrowd.aggregate_long(skcrowd.MajorityVote(), frame, task="item",
                                   worker="annotator", label="answer", proba=True)
    assert list(proba.columns) == ["cat", "dog"] and list(proba.index) == ["t1", "t2"]
    assert np.allclose(proba.to_numpy(), [[2 / 3, 1 / 3], [0, 1]])


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if is_aggregator(n)])
def test_aggregate_long_matches_the_aggregator_on_the_votes_matrix(name):
    estimator = make(name)
    labels = skcrowd.aggregate_long(estimator, LONG.sample(frac=1.0, random_state=1))
    assert list(labels.index) == list(range(6)) and labels.index.name == "task"
    assert np.array_equal(labels.to_numpy(), clone(estimator).fit(VOTES).predict(VOTES))


def test_aggregate_long_refuses_a_feature_model():
    with pytest.raises(TypeError, match="needs an aggregator"):
        skcrowd.aggregate_long(LogisticRegression(), LONG)


@pytest.mark.parametrize("estimator", [skcrowd.MeanRating(),
                                       skcrowd.AggregatedTargetClassifier(LogisticRegression())],
                         ids=["rating", "feature model"])
def test_aggregate_long_takes_only_class_aggregators(estimator):
    # a rating aggregator would read class indices as ratings, a feature model wants y
    with pytest.raises(TypeError, match="needs an aggregator"):
        skcrowd.aggregate_long(estimator, LONG)


# -- repeated (task, worker) rows: duplicates="raise" | "first" | "last" (issue 36, item 5) -----

# worker "b" answered task "t1" three times (rows 1, 3 and 5): "cat", then "cat", then "dog";
# "bird" only ever appears in row 3, so it is a class only where that row is kept
REPEATED = pd.DataFrame({"task": ["t1", "t1", "t2", "t1", "t2", "t1"],
                         "worker": ["a", "b", "a", "b", "b", "b"],
                         "label": ["cat", "cat", "dog", "bird", "dog", "dog"]})


def _kept(lv):
    """{(task, worker): label} of a LongVotes."""
    v = check_votes(lv.votes, n_classes=len(lv.classes))
    return {(lv.tasks[t], lv.workers[w]): lv.classes[k]
            for t, w, k in zip(v.task, v.worker, v.label)}


@pytest.mark.parametrize("sparse", [False, True])
def test_votes_from_long_keeps_the_first_or_last_repeated_vote(sparse):
    first = skcrowd.votes_from_long(REPEATED, duplicates="first", sparse=sparse)
    assert _kept(first) == {("t1", "a"): "cat", ("t1", "b"): "cat", ("t2", "a"): "dog",
                            ("t2", "b"): "dog"}
    assert first.classes.tolist() == ["cat", "dog"]  # "bird" was only in a dropped row
    last = skcrowd.votes_from_long(REPEATED, duplicates="last", sparse=sparse)
    assert _kept(last) == {**_kept(first), ("t1", "b"): "dog"}
    assert last.classes.tolist() == ["cat", "dog"]
    # the same as the table without the dropped rows
    for lv, rows in ((first, [0, 1, 2, 4]), (last, [0, 2, 4, 5])):
        alone = skcrowd.votes_from_long(REPEATED.iloc[rows], sparse=sparse)
        assert _kept(alone) == _kept(lv)
        assert np.array_equal(check_votes(alone.votes).to_dense(),
                              check_votes(lv.votes).to_dense())


def test_votes_from_long_exact_duplicates_are_one_vote():
    frame = pd.concat([LONG, LONG.iloc[[4, 4, 0]]], ignore_index=True)  # rows 4 and 0 again
    # of the two repeated pairs, the one whose first row comes first in the table is named
    with pytest.raises(ValueError, match=r"^worker 0 voted more than once on task 0 \(rows of "
                                         r"the long data: \[0, 20\]\); keep one vote per "
                                         r"\(task, worker\), or pass duplicates='first' or "
                                         r"'last'\.$"):
        skcrowd.votes_from_long(frame)
    for duplicates in ("first", "last"):
        assert np.array_equal(skcrowd.votes_from_long(frame, duplicates=duplicates).votes, VOTES)


def test_votes_from_long_names_the_repeated_rows_by_default():
    with pytest.raises(ValueError, match=r"worker 'b' voted more than once on task 't1' "
                                         r"\(rows of the long data: \[1, 3, 5\]\).*"
                                         r"duplicates='first' or 'last'"):
        skcrowd.votes_from_long(REPEATED)


@pytest.mark.parametrize("duplicates", ["keep", "First", None, True, ["first"]])
def test_votes_from_long_validates_duplicates(duplicates):
    message = (r"duplicates must be one of 'raise', 'first', 'last', got "
               + re.escape(repr(duplicates)))
    with pytest.raises(ValueError, match=message):
        skcrowd.votes_from_long(REPEATED, duplicates=duplicates)
    with pytest.raises(ValueError, match=message):  # before any work on the table
        skcrowd.aggregate_long(skcrowd.MajorityVote(), REPEATED, duplicates=duplicates)


def test_aggregate_long_takes_the_duplicate_policy():
    with pytest.raises(ValueError, match="duplicates='first' or 'last'"):
        skcrowd.aggregate_long(skcrowd.MajorityVote(), REPEATED)
    # t1: a "cat" and b's first "cat", or b's last "dog" (a tie: the first class, "cat")
    first = skcrowd.aggregate_long(skcrowd.MajorityVote(), REPEATED, duplicates="first",
                                   proba=True)
    last = skcrowd.aggregate_long(skcrowd.MajorityVote(), REPEATED, duplicates="last",
                                  proba=True)
    assert list(first.columns) == list(last.columns) == ["cat", "dog"]
    assert np.allclose(first.to_numpy(), [[1, 0], [0, 1]])
    assert np.allclose(last.to_numpy(), [[0.5, 0.5], [0, 1]])


# -- reports keyed by the ids of votes_from_long (issue 36, item 8) ------------------------------


@pytest.mark.parametrize("sparse", [False, True])
def test_reports_of_long_votes_are_keyed_by_task_and_worker_ids(sparse):
    # integer worker ids that are not the column positions (as "w82" was column 81)
    frame = LONG.assign(worker=LONG["worker"] * 10 + 82, task="q" + LONG["task"].astype(str))
    lv = skcrowd.votes_from_long(frame, sparse=sparse)
    ds = skcrowd.DawidSkene().fit(lv.votes)
    by_id = skcrowd.worker_report(ds, lv)
    by_position = skcrowd.worker_report(ds, lv.votes)
    assert by_id.index.tolist() == [82, 92, 102] and by_id.index.name == "worker"
    assert by_position.index.tolist() == [0, 1, 2]
    columns = ["n_votes", "accuracy", "agreement", "spammer_score", "review_rank"]
    assert np.array_equal(by_id[columns].to_numpy(), by_position[columns].to_numpy())
    tasks = skcrowd.task_report(ds, lv, known=VOTES[:, 0])
    assert tasks.index.tolist() == [f"q{i}" for i in range(6)] and tasks.index.name == "task"
    assert tasks["label"].tolist() == ds.predict(lv.votes).tolist()
