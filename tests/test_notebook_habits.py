"""The notebook experience: pandas outputs, set_output, verbose progress, repr (issue 7).

- Aggregators key their per-task outputs like a DataFrame ``X`` (index, class columns);
  ``transform`` follows ``set_output``.
- Feature models keep numpy ``predict_proba`` for DataFrame features, so scikit-learn's scorers
  (which take ``y_pred[:, 1]`` on binary problems) keep working in a grid search.
- Every long fit prints progress at ``verbose>0`` and nothing at ``verbose=0``.
- ``repr`` and the HTML repr show the parameters set away from their defaults, never arrays.
"""

import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils import estimator_checks
from sklearn.utils._param_validation import InvalidParameterError

from estimator_instances import seeded_aggregators
from skcrowd import SelfCrowdClassifier, check_votes
from skcrowd.aggregated_target import AggregatedTargetClassifier
from skcrowd.aggregation import GLAD, AggregatorSelector, DawidSkene, MajorityVote
from skcrowd.pruning import PrunedClassifier, WAUMPruner

# aggregators that cannot be built with default arguments (or cheaply): name -> factory
_FACTORIES = {
    "AggregatorSelector": lambda: AggregatorSelector([MajorityVote(random_state=0), DawidSkene()],
                                                     n_splits=1, random_state=0),
}


# Aggregators that these tests' crowds do not fit: name -> reason (a ValueError is expected)
EXPECTED_EXCLUSIONS = {
    "KOS": "KOS is binary: it refuses the 3-class votes of these tests with a ValueError naming "
           "the classes (tests/aggregation/test_kos.py covers it on binary votes)",
}


def _cases(models, *checks):
    """``models`` (each paired with each of ``checks``, if any), those of
    EXPECTED_EXCLUSIONS marked as expected ValueErrors."""
    cases = [(model, *args) for model in models for args in ([(c,) for c in checks] or [()])]
    return [pytest.param(*case, marks=pytest.mark.xfail(
                raises=ValueError, strict=True,
                reason=EXPECTED_EXCLUSIONS[type(case[0]).__name__]))
            if type(case[0]).__name__ in EXPECTED_EXCLUSIONS else
            (case if checks else case[0]) for case in cases]


AGGREGATORS = seeded_aggregators(_FACTORIES)
# scikit-learn's HTML repr has a table of the parameters from 1.7 on, of the fitted attributes
# from 1.9 on; older releases show neither (and so no arrays either)
SKLEARN_VERSION = tuple(int(part) for part in sklearn.__version__.split(".")[:2])
HTML_PARAMETERS, HTML_FITTED_ATTRIBUTES = SKLEARN_VERSION >= (1, 7), SKLEARN_VERSION >= (1, 9)
# the EM aggregators: restarts (n_init), per-task log-likelihoods (score_samples)
EM = [model for model in AGGREGATORS if "n_init" in model.get_params()]
name = type


@pytest.fixture
def votes(make_votes):
    return make_votes(3, 40, 6, accuracy=0.7, empty_task=5)


@pytest.fixture
def votes_frame(votes):
    return pd.DataFrame(votes, index=pd.Index([f"img{i:02d}" for i in range(40)], name="image"),
                        columns=[f"w{j}" for j in range(6)])


@pytest.fixture
def one_torch_thread():
    """Tiny nets train much faster on one thread (as in tests/neural/conftest.py)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("skorch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# -- aggregators: per-task outputs keyed like X -------------------------------------------


@pytest.mark.parametrize("model", _cases(AGGREGATORS), ids=name)
def test_dataframe_votes_give_frames_keyed_by_the_index_and_classes(model, votes, votes_frame):
    fitted = clone(model).fit(votes_frame)
    proba = fitted.predict_proba(votes_frame)
    assert isinstance(proba, pd.DataFrame)
    assert proba.index.equals(votes_frame.index) and proba.index.name == "image"
    assert list(proba.columns) == [0, 1, 2]
    reference = clone(model).fit(votes)
    np.testing.assert_allclose(proba.to_numpy(), reference.predict_proba(votes), rtol=1e-12)
    labels = fitted.predict(votes_frame)
    assert isinstance(labels, pd.Series) and labels.index.equals(votes_frame.index)
    np.testing.assert_array_equal(labels.to_numpy(), reference.predict(votes))
    # the label of a task is found by its id
    assert labels["img07"] == reference.predict(votes)[7]
    fit_labels = clone(model).fit_predict(votes_frame)
    assert isinstance(fit_labels, pd.Series) and fit_labels.index.equals(votes_frame.index)
    np.testing.assert_array_equal(fit_labels.to_numpy(), labels.to_numpy())


@pytest.mark.parametrize("model", EM, ids=name)
def test_dataframe_votes_give_per_task_log_likelihoods_by_index(model, votes, votes_frame):
    fitted = clone(model).fit(votes_frame)
    per_task = fitted.score_samples(votes_frame)
    assert isinstance(per_task, pd.Series) and per_task.index.equals(votes_frame.index)
    assert per_task["img05"] == pytest.approx(0.0, abs=1e-12)  # no votes: log 1
    assert fitted.score(votes_frame) == pytest.approx(per_task.mean())
    assert isinstance(fitted.score(votes_frame), float)


@pytest.mark.parametrize("model", _cases(AGGREGATORS), ids=name)
def test_arrays_and_sparse_votes_keep_numpy_outputs(model, votes):
    rows, cols = np.nonzero(votes >= 0)
    sparse = sp.csr_array((votes[rows, cols], (rows, cols)), shape=votes.shape)
    for X in (votes, sparse):
        fitted = clone(model).fit(X)
        assert type(fitted.predict_proba(X)) is np.ndarray
        assert type(fitted.predict(X)) is np.ndarray
        assert type(clone(model).fit_predict(X)) is np.ndarray


def test_string_labels_name_the_columns(votes_frame):
    names = np.array(["ant", "bee", "cat"], dtype=object)
    frame = votes_frame.apply(lambda col: col.map(lambda v: names[v] if v >= 0 else None))
    ds = DawidSkene(missing_label=None).fit(frame)
    proba = ds.predict_proba(frame)
    assert list(proba.columns) == ["ant", "bee", "cat"]
    assert ds.predict(frame).loc["img00"] == proba.loc["img00"].idxmax()


def test_majority_vote_breaks_ties_alike_for_frames_and_arrays():
    votes = np.array([[0, 1], [1, 0], [0, 1], [2, 2], [0, 1]])  # four ties
    frame = pd.DataFrame(votes, index=list("abcde"))
    mv = MajorityVote(random_state=4).fit(votes)
    np.testing.assert_array_equal(mv.predict(frame).to_numpy(), mv.predict(votes))


# -- aggregators: transform and set_output -------------------------------------------------


@pytest.mark.parametrize("model", _cases(AGGREGATORS), ids=name)
def test_set_output_pandas_names_columns_and_keeps_the_index(model, votes, votes_frame):
    prefix = type(model).__name__.lower()
    default = clone(model).fit(votes_frame)
    # the default output of a transformer stays an array, DataFrame input included
    assert type(default.transform(votes_frame)) is np.ndarray
    pandas_out = clone(model).set_output(transform="pandas")
    frame = pandas_out.fit_transform(votes_frame)
    assert list(frame.columns) == [f"{prefix}_0", f"{prefix}_1", f"{prefix}_2"]
    assert frame.index.equals(votes_frame.index)
    np.testing.assert_allclose(frame.to_numpy(), default.predict_proba(votes_frame).to_numpy())
    from_array = pandas_out.fit(votes).transform(votes)
    assert list(from_array.columns) == list(frame.columns)
    assert from_array.index.equals(pd.RangeIndex(40))


# scikit-learn's set_output checks; those of the feature names fit 3-class votes (the others
# fit data that KOS takes)
_SET_OUTPUT_CHECKS = ["check_set_output_transform", "check_set_output_transform_pandas",
                      "check_global_output_transform_pandas"]
_FEATURE_NAMES_CHECKS = ["check_transformer_get_feature_names_out",
                         "check_transformer_get_feature_names_out_pandas",
                         "check_dataframe_column_names_consistency"]


def _by_name_online(case):
    """``case``, a strict expected failure where the check's second ``partial_fit`` gives other
    column names: ``partial_fit`` matches workers by name, and a later batch may bring new
    workers, omit others and order its columns freely (doc/online.rst)."""
    if (isinstance(case, tuple) and case[1] == "check_dataframe_column_names_consistency"
            and hasattr(case[0], "partial_fit")):
        return pytest.param(*case, marks=pytest.mark.xfail(
            raises=AssertionError, strict=True,
            reason="partial_fit takes batches with other worker names (new workers join)"))
    return case


@pytest.mark.filterwarnings("ignore:X (has|does not have valid) feature names:UserWarning")
@pytest.mark.parametrize("model, check", [
    *[(model, check) for model in AGGREGATORS for check in _SET_OUTPUT_CHECKS],
    *map(_by_name_online, _cases(AGGREGATORS, *_FEATURE_NAMES_CHECKS)),
], ids=lambda x: x if isinstance(x, str) else name(x))
def test_scikit_learn_set_output_checks(model, check):
    # not among the checks parametrize_with_checks yields for these tags; run them here
    getattr(estimator_checks, check)(type(model).__name__, clone(model))


def test_get_feature_names_out_checks_input_features(votes_frame):
    ds = DawidSkene().fit(votes_frame)
    assert ds.get_feature_names_out(list(votes_frame.columns)).tolist() == [
        "dawidskene_0", "dawidskene_1", "dawidskene_2"]
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        ds.get_feature_names_out(["a", "b", "c", "d", "e", "f"])


# -- feature models: numpy predict_proba, scorers work on DataFrame features ----------------


class CopyCrowd(LogisticRegression):
    """A fast crowd model of the Self-Crowd protocol: a logistic regression on the majority
    vote, each worker copying the predicted class with its own accuracy."""

    def fit(self, X, votes):
        v = check_votes(votes)
        has = v.votes_per_task() > 0
        super().fit(X[has], v.counts()[has].argmax(1))
        hit = super().predict(X)[v.task] == v.classes[v.label]
        self.accuracy_ = (np.bincount(v.worker, hit, v.n_workers) + 1) / (
            v.votes_per_worker() + 2)
        return self

    def predict_annotator_proba(self, X, workers=None):
        acc = self.accuracy_ if workers is None else self.accuracy_[workers]
        p, k = self.predict_proba(X)[:, None, :], len(self.classes_)
        return acc[:, None] * p + (1 - acc[:, None]) * (1 - p) / (k - 1)


def _binary_crowd():
    rng = np.random.RandomState(0)
    X = pd.DataFrame(rng.normal(size=(90, 2)), columns=["a", "b"],
                     index=[f"t{i}" for i in range(90)])
    truth = (X["a"] > 0).to_numpy().astype(int)
    votes = np.where(rng.rand(90, 3) < 0.85, truth[:, None], 1 - truth[:, None])
    return X, votes, truth


def _feature_models():
    from skcrowd.neural import CrowdLayerClassifier

    net = CrowdLayerClassifier(max_epochs=15, lr=0.1, batch_size=-1, train_split=None,
                               module__hidden_units=8, random_state=0)
    return [
        net,
        AggregatedTargetClassifier(LogisticRegression(), aggregator=MajorityVote(random_state=0)),
        PrunedClassifier(AggregatedTargetClassifier(LogisticRegression()),
                         pruner=WAUMPruner(alpha=0.1, method="aumc", n_epochs=5, random_state=0)),
        SelfCrowdClassifier(CopyCrowd(), n_iterations=1, n_pseudo=10, random_state=0),
    ]


@pytest.mark.parametrize(
    "index", range(4), ids=["CrowdLayerClassifier", "AggregatedTarget", "PrunedClassifier",
                            "SelfCrowd"])
def test_feature_models_keep_numpy_probabilities_so_binary_scorers_work(index, one_torch_thread):
    X, votes, truth = _binary_crowd()
    model = _feature_models()[index]
    # roc_auc and log-loss read predict_proba(X)[:, 1] on a binary problem: a DataFrame
    # there raises pandas' InvalidIndexError
    grid = GridSearchCV(model, {}, scoring=["roc_auc", "neg_log_loss"], refit="roc_auc",
                        cv=KFold(3, shuffle=True, random_state=0), error_score="raise")
    grid.fit(X, truth)  # one gold label per task: the held-out folds are scored against it
    assert grid.best_score_ > 0.9
    fitted = clone(model).fit(X, votes)
    proba = fitted.predict_proba(X)
    assert type(proba) is np.ndarray and proba.shape == (90, 2)
    assert type(fitted.predict(X)) is np.ndarray


# -- verbose ----------------------------------------------------------------------------------


def _pruning_data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 2))
    truth = (X[:, 0] > 0).astype(int)
    return X, np.column_stack([truth, truth, 1 - truth])


@pytest.mark.parametrize("method", ["waum", "aumc"])
def test_waum_pruner_prints_one_line_per_epoch(method, capsys):
    X, votes = _pruning_data()
    quiet = WAUMPruner(alpha=0.1, n_epochs=4, method=method, random_state=0).fit(X, votes)
    assert capsys.readouterr().out == ""
    loud = clone(quiet).set_params(verbose=1).fit(X, votes)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"[WAUMPruner] epoch {e}/4" for e in range(1, 5)]
    # the epochs' mean margins average to the mean of the recorded AUMs (one row per vote)
    means = [float(line.rsplit(" ", 1)[1]) for line in lines]
    scores = loud.aum_ if method == "waum" else loud.aumc_
    assert np.mean(means) == pytest.approx(scores.mean(), abs=1e-4)
    np.testing.assert_array_equal(loud.support_, quiet.support_)


def test_worker_wise_pruner_prints_workers_then_epochs(capsys):
    X, votes = _pruning_data()
    pruner = WAUMPruner(alpha=0.1, n_epochs=2, method="worker-wise", verbose=1, random_state=0)
    pruner.fit(X, votes)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"[WAUMPruner] worker {j}/3" for j in (1, 2, 3)]
    assert all("40 votes, 2 epochs" in line for line in lines)
    pruner.set_params(verbose=2).fit(X, votes)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 * 3 and lines[0].startswith("[WAUMPruner] worker 1/3, epoch 1/2:")


def test_cached_margin_training_prints_nothing(tmp_path, capsys):
    X, votes = _pruning_data()
    first = WAUMPruner(alpha=0.1, n_epochs=3, memory=str(tmp_path), random_state=0)
    first.fit(X, votes)
    capsys.readouterr()
    # another verbose level and alpha: the cached training serves it, no epoch runs
    second = clone(first).set_params(alpha=0.2, verbose=1).fit(X, votes)
    assert capsys.readouterr().out == ""
    np.testing.assert_array_equal(second.waum_, first.waum_)


def test_verbose_is_validated():
    X, votes = _pruning_data()
    with pytest.raises(InvalidParameterError, match="verbose"):
        WAUMPruner(verbose=-1).fit(X, votes)


def test_self_crowd_prints_one_line_per_round(capsys):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 2))
    truth = (X[:, 0] > 0).astype(int)
    votes = np.where(rng.rand(60, 4) < 0.4, truth[:, None], -1)
    model = SelfCrowdClassifier(CopyCrowd(), n_iterations=2, n_pseudo=20, random_state=0)
    model.fit(X, votes)
    assert capsys.readouterr().out == ""
    model.set_params(verbose=1).fit(X, votes, X_val=X, y_val=truth)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"[SelfCrowd] iteration {t}" for t in range(3)]
    assert "20 pseudo-annotations added" in lines[1] and "valid accuracy=" in lines[2]


@pytest.mark.parametrize("model", EM, ids=name)
def test_em_prints_initializations_at_one_and_iterations_at_two(model, votes, capsys):
    clone(model).set_params(max_iter=500).fit(votes)
    assert capsys.readouterr().out == ""
    clone(model).set_params(verbose=1, n_init=2, max_iter=500).fit(votes)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["Initialization 0", "Initialization 1"]
    with pytest.warns(ConvergenceWarning):  # tol=0 runs all max_iter iterations
        clone(model).set_params(verbose=2, tol=0, max_iter=2, n_init=1).fit(votes)
    lines = capsys.readouterr().out.splitlines()
    # the iterations that choose the "auto" prior come first, each on its own line; whether
    # there are any depends on the crowd drawn (none on make_votes(3, ...), up to 49 on others)
    choosing = [line for line in lines if line.strip().startswith("Choosing the prior")]
    assert lines[:len(choosing)] == choosing
    assert [line.split(":")[0].strip() for line in lines[len(choosing):]] == [
        "Iteration 1", "Iteration 2", "Initialization 0"]


def _nets():
    from skcrowd.neural import CoNALClassifier, CrowdLayerRegressor, DeepEMClassifier

    tiny = dict(max_epochs=2, module__hidden_units=4, random_state=0)
    return [CoNALClassifier(**tiny), DeepEMClassifier(**tiny), CrowdLayerRegressor(**tiny)]


@pytest.mark.parametrize("index", range(3), ids=["CoNAL", "DeepEM", "CrowdLayerRegressor"])
def test_nets_print_one_row_per_epoch(index, one_torch_thread, capsys):
    net = _nets()[index]
    X, votes, _ = _binary_crowd()
    X = X.to_numpy(np.float32, copy=True)
    y = votes.astype(np.float32) if "Regressor" in type(net).__name__ else votes
    net.fit(X, y)
    assert capsys.readouterr().out == ""
    loud = clone(net).set_params(verbose=1).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    # a net that chooses its settings (lr="auto") first prints one line per search run
    search = loud.search_results_
    n_runs = 0 if search is None else len(search["rung"]) + int(np.sum(search["rung"] == 1))
    assert all(line.startswith("search: ") for line in lines[:n_runs])
    rows = [line.split() for line in lines[n_runs:]]
    assert rows[0][0] == "epoch" and "train_loss" in rows[0]
    assert [row[0] for row in rows[2:4]] == ["1", "2"]  # after the header's rule
    # then the refit on every task, for the epochs the held-out votes chose, in one line and
    # a row per epoch
    n = net.best_epoch_
    assert rows[4][:2] == ["refit", "on"] and str(n) in rows[4]
    assert [row[0] for row in rows[5:]] == [str(i) for i in range(1, n + 1)]


# -- repr -------------------------------------------------------------------------------------


def _status(html):
    return re.findall(r"<span>((?:Not )?[Ff]itted)</span>", html)


@pytest.mark.parametrize("model, text", [
    (MajorityVote(random_state=0), "MajorityVote(random_state=0)"),
    (DawidSkene(max_iter=20, smoothing=0.0), "DawidSkene(max_iter=20, smoothing=0.0)"),
    (GLAD(), "GLAD()"),
    (WAUMPruner(alpha=0.1, n_epochs=3), "WAUMPruner(alpha=0.1, n_epochs=3)"),
])
def test_repr_shows_changed_parameters_fitted_or_not(model, text):
    X, votes = _pruning_data()
    assert repr(model) == text
    assert _status(model._repr_html_()) == ["Not fitted"]
    fitted = clone(model).fit(X, votes) if isinstance(model, WAUMPruner) else clone(model).fit(
        votes)
    assert repr(fitted) == text
    html = fitted._repr_html_()
    assert _status(html) == ["Fitted"]
    assert ("Fitted attributes" in html) == HTML_FITTED_ATTRIBUTES


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_html_repr_summarizes_large_fitted_arrays():
    rng = np.random.default_rng(0)
    votes = np.where(rng.random((500, 2000)) < 0.01, rng.integers(3, size=(500, 2000)), -1)
    ds = DawidSkene(max_iter=5).fit(votes)
    html = ds._repr_html_()
    # confusion_matrices_ has 2000 x 3 x 3 entries; the table shows a summary
    assert ("ndarray[float64](2000, 3, 3)" in html) == HTML_FITTED_ATTRIBUTES
    assert len(html) < 60_000 and repr(ds) == "DawidSkene(max_iter=5)"


def test_net_repr_is_scikit_learn_style_and_nests(one_torch_thread):
    from skcrowd.neural import CoNALClassifier, CrowdLayerClassifier

    assert repr(CrowdLayerClassifier()) == "CrowdLayerClassifier()"
    net = CoNALClassifier(lr=0.01, max_epochs=3, module__hidden_units=8, reg_lambda=0.001)
    assert repr(net) == ("CoNALClassifier(lr=0.01, max_epochs=3, module__hidden_units=8, "
                         "reg_lambda=0.001)")
    assert repr(PrunedClassifier(CoNALClassifier(max_epochs=2))) == (
        "PrunedClassifier(estimator=CoNALClassifier(max_epochs=2))")
    # skorch's bookkeeping is not a parameter; clone still carries module__* settings
    assert "_params_to_validate" not in net.get_params(deep=False)
    X, votes, _ = _binary_crowd()
    X = X.to_numpy(np.float32, copy=True)
    cloned = clone(net).set_params(max_epochs=1).fit(X, votes)
    assert cloned.module_.hidden.out_features == 8
    assert repr(cloned) == repr(net).replace("max_epochs=3", "max_epochs=1")
    html = cloned._repr_html_()
    assert _status(html) == ["Fitted"]
    # the parameter table lists the net's own parameters, not every callback's settings
    assert (">max_epochs<" in html) == HTML_PARAMETERS and "callbacks__print_log" not in html
