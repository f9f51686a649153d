"""Stepping margin models epoch by epoch: what is recorded, for which votes, by which model."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, SGDClassifier

from pruning_stubs import (
    DecisionFeatures,
    Diverging,
    FixedConfusion,
    ProbaFeatures,
    noisy_blobs,
)
from skcrowd import check_votes
from skcrowd.pruning import WAUMPruner, margins

# Features are the margin model's probabilities (see ProbaFeatures).
X3 = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.5, 0.25, 0.25]])
VOTES3 = np.array([[0, 1, -1], [0, 1, 1], [2, -1, 2], [-1, 0, 2]])


@pytest.fixture(autouse=True)
def reset_counters():
    ProbaFeatures.calls = 0
    ProbaFeatures.seen_rows = []


def pruner(**kwargs):
    params = dict(alpha=0.25, margin_estimator=ProbaFeatures(), aggregator=FixedConfusion())
    params.update(kwargs)
    return WAUMPruner(**params)


@pytest.mark.parametrize("n_epochs, weight", [(1, 1.0), (2, 0.5), (3, 2 / 3)])
def test_aum_is_the_mean_margin_over_epochs(n_epochs, weight):
    # ProbaFeatures(alternate=True) predicts X on odd epochs, uniform (margin 0) on even ones
    p = pruner(margin_estimator=ProbaFeatures(alternate=True), n_epochs=n_epochs)
    p.fit(X3, VOTES3)
    v = check_votes(VOTES3)
    np.testing.assert_allclose(p.aum_, weight * margins(X3[v.task], v.label))
    np.testing.assert_array_equal(p.vote_tasks_, v.task)
    np.testing.assert_array_equal(p.vote_workers_, v.worker)
    assert ProbaFeatures.calls == n_epochs
    assert ProbaFeatures.seen_rows == [v.n_votes] * n_epochs  # one training row per vote


def test_trust_scores_use_the_last_epoch_probabilities():
    diag = np.array([[0.9, 0.8, 0.7], [0.5, 0.5, 0.5], [0.2, 0.3, 1.0]])
    v = check_votes(VOTES3)
    for n_epochs, last in [(3, X3), (2, np.full_like(X3, 1 / 3))]:
        p = pruner(
            margin_estimator=ProbaFeatures(alternate=True),
            aggregator=FixedConfusion(diagonals=diag),
            n_epochs=n_epochs,
        ).fit(X3, VOTES3)
        expected = (last[v.task] * diag[v.worker]).sum(axis=1)
        np.testing.assert_allclose(p.trust_scores_, expected)
        waum = np.bincount(v.task, expected * p.aum_) / np.bincount(v.task, expected)
        np.testing.assert_allclose(p.waum_, waum)


def test_worker_wise_trains_one_fresh_model_per_worker():
    p = pruner(method="worker-wise", n_epochs=2).fit(X3, VOTES3)
    v = check_votes(VOTES3)
    per_worker = v.votes_per_worker().tolist()  # [3, 3, 3]
    assert ProbaFeatures.calls == 2 * v.n_workers
    assert ProbaFeatures.seen_rows == [n for n in per_worker for _ in range(2)]
    # each vote is scored by its worker's model on its own task
    np.testing.assert_allclose(p.aum_, margins(X3[v.task], v.label))


def test_aumc_trains_on_one_majority_row_per_task():
    votes = np.array([[0, 1, 1], [2, 2, 0], [1, 0, -1], [-1, -1, 2]])
    p = pruner(method="aumc", n_epochs=1).fit(X3, votes)
    assert ProbaFeatures.seen_rows == [4]
    # majority labels 1, 2, 0 (tie 0/1 -> smaller index), 2
    np.testing.assert_allclose(p.aumc_, margins(X3, [1, 2, 0, 2]))
    assert not hasattr(p, "waum_") and not hasattr(p, "aggregator_")


def test_logit_margins_from_log_probabilities():
    p = pruner(logits=True, n_epochs=1).fit(X3, VOTES3)
    v = check_votes(VOTES3)
    np.testing.assert_allclose(p.aum_, margins(np.log(X3)[v.task], v.label))
    # task 3, worker 1 voted 0: log(0.5) - log(0.25)
    assert p.aum_[(v.task == 3) & (v.worker == 1)] == pytest.approx(np.log(2))


def test_logit_margins_from_decision_function():
    p = pruner(margin_estimator=DecisionFeatures(), logits=True, n_epochs=1).fit(X3, VOTES3)
    v = check_votes(VOTES3)
    np.testing.assert_allclose(p.aum_, margins(10 * X3[v.task], v.label))
    # binary: a single decision column d is the scores (0, d)
    X2 = np.array([[0.3, 0.7], [0.9, 0.1]])
    p = pruner(margin_estimator=DecisionFeatures(), logits=True, n_epochs=1, alpha=0.0)
    p.fit(X2, np.array([[1, 0], [0, 0]]))
    np.testing.assert_allclose(p.aum_, [0.4, 0.0, 0.8, 0.8])


@pytest.mark.parametrize(
    "estimator",
    [
        None,  # the default MLP
        SGDClassifier(loss="log_loss"),
    ],
    ids=["default-mlp", "sgd"],
)
def test_real_margin_models_rank_contradicted_tasks_lowest(estimator):
    X, votes, _ = noisy_blobs(n=60, n_flipped=6)
    p = WAUMPruner(
        alpha=0.1,
        margin_estimator=estimator,
        aggregator=FixedConfusion(),
        n_epochs=20,
        margin="pleiss",  # with two classes the top-1 margin of a beaten label is 0
        random_state=0,
    ).fit(X, votes)
    assert set(np.flatnonzero(~p.support_)) == set(range(6))
    # the wrong votes have the lowest AUMs
    wrong = p.vote_tasks_ < 6
    wrong &= p.vote_workers_ > 0
    assert p.aum_[wrong].max() < p.aum_[~wrong].min()


def test_margin_model_errors_name_the_problem():
    with pytest.raises(TypeError, match="margin_estimator .* lacks partial_fit"):
        pruner(margin_estimator=LogisticRegression()).fit(X3, VOTES3)
    with pytest.raises(ValueError, match=r"returned shape \(4, 3\) .* expected \(4, 2\)"):
        pruner().fit(X3, np.array([[0, 1], [1, 1], [0, 0], [1, 0]]))
    with pytest.raises(ValueError, match="non-finite scores at epoch 1"):
        pruner(margin_estimator=Diverging()).fit(X3, VOTES3)


def test_skorch_net_is_stepped_through_an_epoch_callback():
    torch = pytest.importorskip("torch")
    skorch = pytest.importorskip("skorch")

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        def forward(self, X):
            return self.linear(X)  # logits; skorch applies the softmax in predict_proba

    epochs = []

    class Count(skorch.callbacks.Callback):
        def on_epoch_end(self, net, **kwargs):
            epochs.append(len(net.history))

    net = skorch.NeuralNetClassifier(
        Tiny,
        criterion=torch.nn.CrossEntropyLoss,
        optimizer=torch.optim.SGD,
        lr=0.5,
        batch_size=32,
        callbacks=[("count", Count())],
    )
    X, votes, _ = noisy_blobs(n=60, n_flipped=6)
    X = X.astype(np.float32)
    state = torch.random.get_rng_state()
    p = WAUMPruner(
        alpha=0.1, margin_estimator=net, aggregator=FixedConfusion(), n_epochs=5,
        margin="pleiss", random_state=0,
    ).fit(X, votes)
    assert torch.equal(torch.random.get_rng_state(), state)  # global torch RNG untouched
    assert epochs == [1, 2, 3, 4, 5]  # the user's callbacks still run, once per epoch
    assert set(np.flatnonzero(~p.support_)) == set(range(6))
    again = WAUMPruner(
        alpha=0.1, margin_estimator=net, aggregator=FixedConfusion(), n_epochs=5,
        margin="pleiss", random_state=0,
    ).fit(X, votes)
    np.testing.assert_array_equal(again.aum_, p.aum_)  # seeded
