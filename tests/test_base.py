"""The base of the feature models (skcrowd.base.FeatureModelMixin): one tags block, one
validation of (X, votes), one score, and the failed-fit policy of the aggregators."""

import importlib

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils import get_tags

from skcrowd.base import FeatureModelMixin
from skcrowd.metrics import mv_accuracy_score

# 12 tasks, 2 features, 3 workers; labels 0/1 (worker 2 sometimes wrong, some votes missing)
X = np.array([[-2.0, 0.1], [-1.5, -0.3], [-1.0, 0.5], [-0.8, -0.2], [-0.5, 0.4], [-0.3, 0.0],
              [0.3, 0.2], [0.5, -0.4], [0.8, 0.3], [1.0, -0.1], [1.5, 0.6], [2.0, -0.5]])
TRUTH = (X[:, 0] > 0).astype(int)
VOTES = np.column_stack([TRUTH, TRUTH, 1 - TRUTH])
VOTES[::3, 1] = -1
VOTES[1::4, 2] = TRUTH[1::4]
VOTES[5] = -1  # a task without votes


class _TinyCrowd(ClassifierMixin, BaseEstimator):
    """A crowd model of SelfCrowdClassifier's protocol, without torch: logistic regression
    on the majority vote, every worker predicted to vote as the model."""

    def __init__(self, classes=None, missing_label=-1):
        self.classes = classes
        self.missing_label = missing_label

    def fit(self, X, votes):
        votes = np.asarray(votes)
        n_classes = len(self.classes)
        counts = np.stack([(votes == k).sum(axis=1) for k in range(n_classes)], axis=1)
        voted = counts.sum(axis=1) > 0
        self.model_ = LogisticRegression().fit(X[voted], counts[voted].argmax(axis=1))
        self.classes_ = np.arange(n_classes)
        self.n_workers_ = votes.shape[1]
        return self

    def predict_proba(self, X):
        proba = np.zeros((len(X), len(self.classes_)))
        proba[:, self.model_.classes_] = self.model_.predict_proba(X)
        return proba

    def predict_annotator_proba(self, X, workers=None):
        workers = np.arange(self.n_workers_) if workers is None else np.asarray(workers)
        return np.repeat(self.predict_proba(X)[:, None, :], len(workers), axis=1)


class _Failing(LogisticRegression):
    """A classifier whose fit raises: the failure comes after the model wrote attributes."""

    def fit(self, X, y, sample_weight=None):
        raise RuntimeError("the inner fit failed")


def _torch_nets():
    pytest.importorskip("torch")
    pytest.importorskip("skorch")
    from skcrowd import neural

    fast = dict(max_epochs=2, train_split=None, lr=0.01, weight_decay=0.0,
                module__hidden_units=4, random_state=0)
    return {
        "CrowdLayerClassifier": neural.CrowdLayerClassifier(**fast),
        "CoNALClassifier": neural.CoNALClassifier(**{**fast, "embedding_dim": 2}),
        "DeepEMClassifier": neural.DeepEMClassifier(**fast),
        "PlainNetClassifier": neural.PlainNetClassifier(**fast),
    }


def _model(name):
    """A small, fast instance of the feature model ``name``."""
    if name in ("CrowdLayerClassifier", "CoNALClassifier", "DeepEMClassifier",
                "PlainNetClassifier"):
        return _torch_nets()[name]
    if name == "CrowdLayerRegressor":
        pytest.importorskip("torch")
        from skcrowd.neural import CrowdLayerRegressor

        return CrowdLayerRegressor(max_epochs=2, train_split=None, module__hidden_units=4,
                                   random_state=0)
    if name == "SequenceCrowdLayerClassifier":
        pytest.importorskip("torch")
        from skcrowd.neural import SequenceCrowdLayerClassifier

        return SequenceCrowdLayerClassifier(max_epochs=2, train_split=None,
                                            module__hidden_units=4, random_state=0)
    from skcrowd import AggregatedTargetClassifier, ConsensusClassifier, MajorityVote
    from skcrowd.pruning import PrunedClassifier, WAUMPruner
    from skcrowd.selftraining import SelfCrowdClassifier

    pruner = WAUMPruner(alpha=0.1, method="aumc", n_epochs=2, random_state=0)
    return {
        "SelfCrowdClassifier": SelfCrowdClassifier(_TinyCrowd(), n_iterations=1, n_pseudo=2,
                                                   validation_fraction=None, random_state=0),
        "AggregatedTargetClassifier": AggregatedTargetClassifier(LogisticRegression(),
                                                                 aggregator=MajorityVote()),
        "ConsensusClassifier": ConsensusClassifier(LogisticRegression(), cv=2, n_rounds=1,
                                                   random_state=0),
        "WAUMPruner": pruner,
        "PrunedClassifier": PrunedClassifier(
            AggregatedTargetClassifier(LogisticRegression(), aggregator=MajorityVote()),
            pruner=pruner),
    }[name]


FEATURE_MODELS = {
    "CrowdLayerClassifier": "skcrowd.neural",
    "CoNALClassifier": "skcrowd.neural",
    "DeepEMClassifier": "skcrowd.neural",
    "PlainNetClassifier": "skcrowd.neural",
    "CrowdLayerRegressor": "skcrowd.neural",
    "SequenceCrowdLayerClassifier": "skcrowd.neural",
    "SelfCrowdClassifier": "skcrowd",
    "AggregatedTargetClassifier": "skcrowd",
    "ConsensusClassifier": "skcrowd",
    "WAUMPruner": "skcrowd.pruning",
    "PrunedClassifier": "skcrowd.pruning",
}
CLASSIFIERS = [name for name in FEATURE_MODELS
               if name not in ("CrowdLayerRegressor", "WAUMPruner")]


def _data(name):
    """``(X, y)`` the model ``name`` fits on."""
    if name == "CrowdLayerRegressor":
        y = np.where(VOTES >= 0, X[:, :1] + VOTES, np.nan)
        return X.astype(np.float32), y
    if name == "SequenceCrowdLayerClassifier":
        # 6 sequences of 2 tokens, the votes of each token
        return X.reshape(6, 2, 2).astype(np.float32), VOTES.reshape(6, 2, 3)
    return X, VOTES


def test_the_models_here_are_the_discovered_feature_models():
    # a new feature model must get a fast instance in _model (and is then checked below)
    pytest.importorskip("torch")
    pytest.importorskip("skorch")
    from skcrowd.utils.discovery import all_estimators

    assert sorted(FEATURE_MODELS) == [name for name, _ in all_estimators("feature_model")]


@pytest.mark.parametrize("name", FEATURE_MODELS)
def test_every_feature_model_has_the_base(name):
    if FEATURE_MODELS[name] == "skcrowd.neural":
        pytest.importorskip("torch")
        pytest.importorskip("skorch")
    cls = getattr(importlib.import_module(FEATURE_MODELS[name]), name)
    assert issubclass(cls, FeatureModelMixin)
    model = _model(name)
    assert isinstance(model, FeatureModelMixin)
    tags = get_tags(model)
    # y is a votes matrix (DESIGN.md, "Estimator contract")
    assert tags.target_tags.required
    assert tags.target_tags.multi_output and tags.target_tags.single_output
    # a sampler does not predict, so it has no score
    assert hasattr(model, "score") == hasattr(model, "predict")


def _snapshot(model):
    return dict(vars(model))


def _assert_as_it_was(model, before):
    after = vars(model)
    assert after.keys() == before.keys()
    changed = [name for name in before if after[name] is not before[name]]
    assert not changed, f"{type(model).__name__}: {changed} changed by a fit that failed"


@pytest.mark.parametrize("name", FEATURE_MODELS)
def test_a_fit_that_fails_leaves_the_model_as_it_was(name):
    model = _model(name)
    X_fit, y_fit = _data(name)
    model.fit(X_fit, y_fit)
    before = _snapshot(model)
    # other features (n_features_in_ is written), and one task more in y than in X
    X_other = np.concatenate([X_fit, X_fit], axis=-1)[:-1]
    with pytest.raises(ValueError):
        model.fit(X_other, y_fit)
    _assert_as_it_was(model, before)
    # a bad parameter on the fitted model
    bad = "batch_size" if "batch_size" in model.get_params() else next(
        p for p in ("n_rounds", "n_iterations", "n_epochs", "targets", "pruner")
        if p in model.get_params(deep=False))
    model.set_params(**{bad: "bad"})
    before = _snapshot(model)
    with pytest.raises((ValueError, TypeError)):
        model.fit(X_fit, y_fit)
    _assert_as_it_was(model, before)


@pytest.mark.parametrize("name", ["AggregatedTargetClassifier", "ConsensusClassifier",
                                  "PrunedClassifier"])
def test_a_fit_that_fails_late_leaves_the_meta_estimator_as_it_was(name):
    # the wrapped classifier fails after the model wrote fitted attributes of its own
    model = _model(name).fit(X, VOTES)
    before = _snapshot(model)
    inner = "estimator__estimator" if name == "PrunedClassifier" else "estimator"
    model.set_params(**{inner: _Failing()})
    before["estimator"] = model.estimator
    with pytest.raises(RuntimeError, match="inner fit failed"):
        model.fit(X, VOTES)
    _assert_as_it_was(model, before)


def test_a_first_fit_that_fails_leaves_the_model_unfitted():
    from sklearn.exceptions import NotFittedError

    model = _model("ConsensusClassifier").set_params(estimator=_Failing())
    with pytest.raises(RuntimeError):
        model.fit(X, VOTES)
    assert not [name for name in vars(model) if name.endswith("_")]
    with pytest.raises(NotFittedError):
        model.predict(X)


class _FirstColumn(FeatureModelMixin, ClassifierMixin, BaseEstimator):
    """Predicts the first feature: a feature model with the base's score."""

    def __init__(self, missing_label=-1):
        self.missing_label = missing_label

    def fit(self, X, y):
        X, y, votes = self._check_features_and_votes(X, y)
        self.classes_ = votes.classes
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]


def test_score_is_the_tie_aware_accuracy_against_the_majority_vote():
    votes = np.array([[0, 0, 1],      # majority 0, predicted 0: 1
                      [0, 1, -1],     # tie, predicted 1: 1/2
                      [-1, -1, -1],   # no vote: skipped
                      [1, 1, -1]])    # majority 1, predicted 0: 0
    X = np.array([[0], [1], [1], [0]])
    model = _FirstColumn().fit(X, votes)
    assert model.score(X, votes) == pytest.approx(0.5)
    assert model.score(X, votes) == mv_accuracy_score(votes, [0, 1, 1, 0])
    with pytest.raises(ValueError, match="does not support sample_weight"):
        model.score(X, votes, sample_weight=np.ones(4))
    # another missing-vote marker, string labels
    labels = np.where(votes == -1, "", np.where(votes == 1, "b", "a"))
    model = _FirstColumn(missing_label="").fit(X, labels)
    assert model.score(np.array([["a"], ["b"], ["b"], ["a"]]), labels) == pytest.approx(0.5)


def test_fit_validates_the_votes():
    model = _FirstColumn()
    with pytest.raises(ValueError, match="requires y to be passed"):
        model.fit(X, None)
    with pytest.raises(ValueError, match="X has 11 samples but the votes y have 12 tasks"):
        model.fit(X[:-1], VOTES)
    # a 1-D y is one vote per task
    assert model.fit(X, TRUTH).classes_.tolist() == [0, 1]


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_score_agrees_with_mv_accuracy_score(name):
    model = _model(name)
    X_fit, y_fit = _data(name)
    model.fit(X_fit, y_fit)
    y_pred = model.predict(X_fit).reshape(-1)
    votes = y_fit.reshape(len(y_pred), -1)
    assert model.score(X_fit, y_fit) == pytest.approx(
        mv_accuracy_score(votes, y_pred, classes=model.classes_))
