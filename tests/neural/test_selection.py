"""The held-out votes choose the epoch; refit; interrupted fits; checkpoints and resuming."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.datasets import make_blobs  # noqa: E402
from skorch.callbacks import Callback, Checkpoint, LoadInitState  # noqa: E402

from skcrowd import AggregatedTargetClassifier, MajorityVote  # noqa: E402
from skcrowd.datasets import simulate_annotators  # noqa: E402
from skcrowd.neural import (  # noqa: E402
    MLP,
    CoNALClassifier,
    CrowdLayerClassifier,
    CrowdLayerRegressor,
    DeepEMClassifier,
    PlainNetClassifier,
)

TINY = dict(lr=0.05, module__hidden_units=8, batch_size=32, random_state=0)


@pytest.fixture(scope="module")
def crowd():
    X, y = make_blobs(120, centers=[[-1.0, 0.0], [1.0, 0.0]], cluster_std=1.2, random_state=0)
    votes = simulate_annotators(y, 5, accuracy=(0.6, 0.9), votes_per_task=3,
                                random_state=0).votes
    return X.astype(np.float32), y, votes


def first_tasks_train(dataset, y=None):
    """A fixed split: tasks 0-89 train, 90-119 valid."""
    return (torch.utils.data.Subset(dataset, range(90)),
            torch.utils.data.Subset(dataset, range(90, len(dataset))))


class InterruptAt(Callback):
    """Raises KeyboardInterrupt at the end of epoch ``epoch``, as Ctrl-C would."""

    def __init__(self, epoch):
        self.epoch = epoch

    def on_epoch_end(self, net, **kwargs):
        if len(net.history) == self.epoch:
            raise KeyboardInterrupt


@pytest.mark.parametrize("Net", [CrowdLayerClassifier, CoNALClassifier, DeepEMClassifier])
def test_the_best_epoch_on_the_held_out_votes_is_kept(Net, crowd):
    X, _, votes = crowd
    net = Net(max_epochs=12, patience=None, refit=False, train_split=first_tasks_train, **TINY)
    net.fit(X, votes)
    losses = net.history[:, "valid_loss"]
    assert len(losses) == 12
    assert net.best_epoch_ == int(np.argmin(losses)) + 1
    # the weights (noise model included) are those of that epoch: the held-out votes' loss
    # of the fitted net is the one recorded then
    held_out = -net.annotation_log_likelihood(X[90:], votes[90:])
    assert held_out == pytest.approx(losses[net.best_epoch_ - 1], rel=1e-5)


def test_training_stops_after_patience_epochs_without_gain(crowd):
    X, _, votes = crowd
    net = CrowdLayerClassifier(max_epochs=200, patience=3, refit=False, **TINY).fit(X, votes)
    assert len(net.history) == net.best_epoch_ + 3 < 200
    losses = net.history[:, "valid_loss"]
    assert min(losses[net.best_epoch_:]) >= losses[net.best_epoch_ - 1]
    assert not net.interrupted_  # early stopping is not an interrupt


def test_refit_trains_on_every_task_for_the_chosen_number_of_epochs(crowd):
    X, _, votes = crowd
    net = CrowdLayerClassifier(max_epochs=40, patience=5, **TINY).fit(X, votes)
    chosen = net.best_epoch_
    assert len(net.selection_history_) == chosen + 5
    assert len(net.history_) == chosen
    assert "valid_loss" not in net.history_[-1]  # nothing held out in the refit
    # 120 tasks in batches of 32: 4 training batches per epoch, against 3 with 20 % held out
    assert net.history_[-1, "train_batch_count"] == 4
    assert net.selection_history_[-1, "train_batch_count"] == 3
    # the refit is a fresh net, seeded: the same as a net trained on everything that long
    same = CrowdLayerClassifier(max_epochs=chosen, train_split=None, **TINY).fit(X, votes)
    np.testing.assert_allclose(net.predict_proba(X), same.predict_proba(X), atol=1e-6)


def test_without_held_out_tasks_every_task_trains_for_max_epochs(crowd):
    X, _, votes = crowd
    net = CrowdLayerClassifier(max_epochs=5, train_split=None, **TINY).fit(X, votes)
    assert net.best_epoch_ is None and len(net.history) == 5
    assert not hasattr(net, "selection_history_")


def test_the_selection_can_score_the_held_out_majority_vote_instead(crowd):
    X, _, votes = crowd
    net = CrowdLayerClassifier(max_epochs=10, patience=None, refit=False,
                               callbacks__held_out_selection__monitor="valid_acc",
                               callbacks__held_out_selection__lower_is_better=False, **TINY)
    accuracies = net.fit(X, votes).history[:, "valid_acc"]
    assert net.best_epoch_ == int(np.argmax(accuracies)) + 1


def test_the_regressor_chooses_its_epochs_too():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(100, 3)).astype(np.float32)
    answers = (X @ [1.0, -1.0, 0.5])[:, None] + rng.normal(0, 0.3, (100, 3))
    reg = CrowdLayerRegressor(max_epochs=30, patience=3, **TINY).fit(X, answers)
    assert reg.best_epoch_ is not None and len(reg.history_) == reg.best_epoch_


# -- interrupted fits (skorch's semantics) ------------------------------------------------


@pytest.mark.parametrize("train_split", [None, "default"])
def test_an_interrupted_fit_leaves_a_usable_net_and_no_refit(train_split, crowd):
    X, _, votes = crowd
    split = {} if train_split == "default" else {"train_split": None}
    net = CrowdLayerClassifier(max_epochs=30, callbacks=[InterruptAt(4)], **split, **TINY)
    net.fit(X, votes)  # skorch catches the KeyboardInterrupt
    assert net.interrupted_ and len(net.history) == 4
    assert not hasattr(net, "selection_history_")  # no refit after an interrupt
    if train_split == "default":
        assert 1 <= net.best_epoch_ <= 4  # its weights are back
    proba = net.predict_proba(X)
    assert proba.shape == (120, 2) and np.allclose(proba.sum(axis=1), 1)
    assert net.annotator_confusions_.shape == (5, 2, 2)
    # a later fit starts afresh
    assert not net.set_params(callbacks=None, max_epochs=2).fit(X, votes).interrupted_


def test_an_interrupted_aggregated_target_baseline_is_usable(crowd):
    X, y, votes = crowd
    net = PlainNetClassifier(max_epochs=30, callbacks=[InterruptAt(2)], **TINY)
    clf = AggregatedTargetClassifier(net, aggregator=MajorityVote(random_state=0))
    assert clf.fit(X, votes).estimator_.interrupted_
    assert clf.predict(X).shape == (120,)


# -- checkpoints: resuming a long fit ----------------------------------------------------


def checkpointed(dirname, *extra, **params):
    cp = Checkpoint(dirname=dirname, monitor=None, f_noise_model="noise_model.pt")
    return CrowdLayerClassifier(train_split=None, callbacks=[cp, LoadInitState(cp), *extra],
                                **{**TINY, **params})


def test_a_fit_resumes_from_its_checkpoint_and_runs_the_epochs_left(tmp_path, crowd):
    X, _, votes = crowd
    first = checkpointed(tmp_path, InterruptAt(4), max_epochs=10).fit(X, votes)
    assert first.interrupted_ and len(first.history) == 4
    # in a new session: the same net and callbacks; the backbone, the crowd layer, the
    # optimizer and the history come back, and training goes on to max_epochs in total
    resumed = checkpointed(tmp_path, max_epochs=4).fit(X, votes)  # nothing left to run
    np.testing.assert_allclose(resumed.predict_proba(X), first.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(resumed.annotator_confusions_, first.annotator_confusions_,
                               atol=1e-6)
    resumed = checkpointed(tmp_path, max_epochs=10).fit(X, votes)
    assert len(resumed.history) == 10 and not resumed.interrupted_
    assert resumed.history[-1, "train_loss"] < first.history[0, "train_loss"]


def test_a_checkpoint_without_the_noise_model_is_refused(tmp_path, crowd):
    X, _, votes = crowd
    cp = Checkpoint(dirname=tmp_path, monitor=None)
    CrowdLayerClassifier(max_epochs=1, train_split=None, callbacks=[cp], **TINY).fit(X, votes)
    net = CrowdLayerClassifier(max_epochs=1, train_split=None,
                               callbacks=[cp, LoadInitState(cp)], **TINY)
    with pytest.raises(ValueError, match="f_noise_model"):
        net.fit(X, votes)


def test_deep_em_resumes_from_the_network_not_from_the_vote_frequencies(tmp_path, crowd):
    X, _, votes = crowd
    cp = Checkpoint(dirname=tmp_path, monitor=None, f_noise_model="noise_model.pt")
    net = DeepEMClassifier(train_split=None, max_epochs=6, callbacks=[cp, LoadInitState(cp)],
                           **TINY)
    net.fit(X, votes)
    confusions = net.annotator_confusions_
    resumed = DeepEMClassifier(train_split=None, max_epochs=7,
                               callbacks=[cp, LoadInitState(cp)], **TINY).fit(X, votes)
    # one more EM step from the trained network moves the confusions a little
    assert np.abs(resumed.annotator_confusions_ - confusions).max() < 0.05


# -- the plain net: the baselines' classifier ----------------------------------------------


def test_plain_net_on_labels_is_cross_entropy_training(crowd):
    X, y, _ = crowd
    net = PlainNetClassifier(max_epochs=2, train_split=None, **TINY).fit(X, y)
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    logits = net.infer(Xt)
    expected = torch.nn.functional.cross_entropy(logits, yt)
    assert net.get_loss(logits, yt[:, None], X=Xt).item() == pytest.approx(expected.item(),
                                                                           rel=1e-6)
    assert net.score(X, y) > 0.7


def test_plain_net_is_the_aggregated_target_baselines_classifier(crowd):
    X, y, votes = crowd
    clf = AggregatedTargetClassifier(PlainNetClassifier(max_epochs=20, **TINY),
                                     aggregator=MajorityVote(random_state=0)).fit(X, votes)
    assert clf.estimator_.n_workers_ == 1 and clf.estimator_.best_epoch_ is not None
    assert np.mean(clf.predict(X) == y) > 0.7


# -- the backbone ------------------------------------------------------------------------


def test_batch_norm_handles_a_last_batch_of_one_sample():
    mlp = MLP(3, 2, hidden_units=4, batch_norm=True).train()
    assert mlp(torch.ones(1, 3)).shape == (1, 2)  # running statistics, not a failure
    out = mlp(torch.randn(5, 3))
    assert out.shape == (5, 2) and mlp.batch_norm.num_batches_tracked == 1
    mlp.eval()
    x = torch.randn(4, 3)
    assert torch.equal(mlp(x)[:1], mlp(x[:1]))  # evaluation: per-sample, running statistics
