"""AggregatedTargetClassifier: the DL-MV / DL-DS baselines, hard and soft targets."""

import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from skcrowd import AggregatedTargetClassifier, DawidSkene, MajorityVote
from skcrowd.metrics import mv_accuracy_score
from skcrowd.utils.estimator_checks import parametrize_with_checks


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 2))
    truth = (X[:, 0] > 0).astype(int)
    votes = np.where(rng.rand(60, 5) < 0.8, truth[:, None], 1 - truth[:, None])
    votes[rng.rand(60, 5) < 0.3] = -1
    votes[:3] = -1  # tasks without votes
    return X, votes


def test_hard_targets_are_the_aggregated_labels_of_the_voted_tasks(data):
    X, votes = data
    clf = AggregatedTargetClassifier(LogisticRegression(),
                                     aggregator=MajorityVote(random_state=0))
    clf.fit(X, votes)
    labels = MajorityVote(random_state=0).fit(votes).predict(votes)  # same tie-breaking
    voted = (votes >= 0).any(axis=1)
    reference = LogisticRegression().fit(X[voted], labels[voted])
    np.testing.assert_allclose(clf.estimator_.coef_, reference.coef_)
    np.testing.assert_array_equal(clf.predict(X), reference.predict(X))
    np.testing.assert_allclose(clf.predict_proba(X), reference.predict_proba(X))
    assert clf.score(X, votes) == pytest.approx(mv_accuracy_score(votes, clf.predict(X)))


def test_default_aggregator_is_dawid_skene_and_missing_label_reaches_it(data):
    X, votes = data
    clf = AggregatedTargetClassifier(LogisticRegression()).fit(X, votes)
    assert isinstance(clf.aggregator_, DawidSkene) and clf.aggregator is None
    words = np.where(votes == 1, "yes", np.where(votes == 0, "no", None))
    clf = AggregatedTargetClassifier(LogisticRegression(), aggregator=DawidSkene(),
                                     missing_label=None).fit(X, words)
    assert clf.aggregator_.missing_label is None
    assert clf.classes_.tolist() == ["no", "yes"]
    assert set(clf.predict(X).tolist()) <= {"no", "yes"}


def test_probability_columns_follow_classes_when_a_class_is_never_aggregated():
    X = np.array([[0.0], [0.1], [1.0], [1.1]])
    votes = np.array([[0, 0, 2], [0, 0, -1], [1, 1, 2], [1, 1, -1]])  # 2: always outvoted
    clf = AggregatedTargetClassifier(LogisticRegression(), aggregator=MajorityVote())
    proba = clf.fit(X, votes).predict_proba(X)
    assert clf.classes_.tolist() == [0, 1, 2] and clf.estimator_.classes_.tolist() == [0, 1]
    assert proba.shape == (4, 3)
    np.testing.assert_array_equal(proba[:, 2], 0.0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_bad_input_is_reported(data):
    X, votes = data
    clf = AggregatedTargetClassifier(LogisticRegression())
    with pytest.raises(ValueError, match="X has 59 samples but the votes y have 60 tasks"):
        clf.fit(X[:-1], votes)
    with pytest.raises(ValueError, match="requires y to be passed"):
        clf.fit(X, None)
    bad = votes.astype(float)
    bad[5, 1] = 2.5
    with pytest.raises(ValueError, match=r"non-integer float label 2.5 at row \(task\) 5"):
        clf.fit(X, bad)


def test_hard_path_works_without_torch():
    code = """
import importlib.abc, sys

class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "skorch"):
            raise ImportError(f"{name} is not installed (blocked by the test)")

sys.meta_path.insert(0, NoTorch())
import numpy as np
from sklearn.linear_model import LogisticRegression
from skcrowd import AggregatedTargetClassifier, MajorityVote
X = np.array([[0.0], [0.1], [1.0], [1.1]])
votes = np.array([[0, 0], [0, -1], [1, 1], [1, -1]])
clf = AggregatedTargetClassifier(LogisticRegression(), aggregator=MajorityVote()).fit(X, votes)
assert clf.predict(X).tolist() == [0, 0, 1, 1]
assert "torch" not in sys.modules
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_soft_targets_need_a_skorch_classifier(data):
    X, votes = data
    with pytest.raises(TypeError, match="skorch NeuralNetClassifier"):
        AggregatedTargetClassifier(LogisticRegression(), targets="soft").fit(X, votes)


# -- soft targets (torch) ---------------------------------------------------------------


@pytest.fixture
def one_torch_thread():
    """Tiny nets train much faster on one thread than on two contended ones."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def constant_votes():
    """Every task: 7 votes for class 0, 3 for class 1 (vote frequencies 0.7 / 0.3)."""
    votes = np.tile(np.r_[np.zeros(7, int), np.ones(3, int)], (40, 1))
    return np.ones((40, 1), dtype=np.float32), votes


@pytest.mark.parametrize("loss", ["NLLLoss", "CrossEntropyLoss"])
def test_soft_targets_train_a_net_towards_the_aggregated_probabilities(loss, one_torch_thread):
    torch = pytest.importorskip("torch")
    pytest.importorskip("skorch")
    from skorch import NeuralNetClassifier

    class Linear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(1, 2)

        def forward(self, X):
            out = self.linear(X)
            return out if loss == "CrossEntropyLoss" else torch.softmax(out, dim=-1)

    X, votes = constant_votes()
    torch.manual_seed(0)
    net = NeuralNetClassifier(Linear, criterion=getattr(torch.nn, loss),
                              optimizer=torch.optim.Adam, lr=0.1, max_epochs=60, verbose=0)
    soft = AggregatedTargetClassifier(net, aggregator=MajorityVote(), targets="soft")
    soft.fit(X, votes)
    # the soft cross-entropy is minimal at the target distribution
    np.testing.assert_allclose(soft.predict_proba(X[:1])[0], [0.7, 0.3], atol=0.02)
    assert soft.estimator_.classes_.tolist() == [0, 1]
    assert "valid_acc" in soft.estimator_.history[-1]  # stratified split on the argmax
    assert soft.predict(X[:2]).tolist() == [0, 0]
    if loss == "NLLLoss":
        from skcrowd.neural import SoftNLLLoss

        assert soft.estimator_.criterion is SoftNLLLoss
    hard = clone(soft).set_params(targets="hard").fit(X, votes)
    assert hard.predict_proba(X[:1])[0, 0] > 0.9


def test_soft_targets_reject_other_losses():
    torch = pytest.importorskip("torch")
    pytest.importorskip("skorch")
    from skorch import NeuralNetClassifier

    X, votes = constant_votes()
    net = NeuralNetClassifier(torch.nn.Linear, module__in_features=1, module__out_features=2,
                              criterion=torch.nn.MSELoss)
    with pytest.raises(TypeError, match="NLLLoss.*CrossEntropyLoss"):
        AggregatedTargetClassifier(net, targets="soft").fit(X, votes)


# -- scikit-learn contract ----------------------------------------------------------------

# the classifier checks that fail on every feature model are listed, with their reasons, in
# skcrowd.utils.estimator_checks, whose parametrize_with_checks adds the failed-fit check
@parametrize_with_checks(
    [AggregatedTargetClassifier(LogisticRegression()),
     AggregatedTargetClassifier(LogisticRegression(), aggregator=MajorityVote())],
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
