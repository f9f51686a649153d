"""Behaviour of the votes-as-y nets: votes plumbing, recovery of simulated crowds, numerics."""

import pickle
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.base import clone  # noqa: E402
from sklearn.datasets import make_blobs  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold  # noqa: E402

from skcrowd.datasets import simulate_annotators  # noqa: E402
from skcrowd.metrics import (  # noqa: E402
    annotation_log_likelihood_scorer,
    mv_accuracy_score,
    mv_accuracy_scorer,
)
from skcrowd.neural import (  # noqa: E402
    CoNALClassifier,
    CrowdLayerClassifier,
    DeepEMClassifier,
    TaskHoldoutSplit,
)

NETS = [CrowdLayerClassifier, CoNALClassifier, DeepEMClassifier]
SMALL = dict(max_epochs=3, lr=0.05, module__hidden_units=8, random_state=0)


@pytest.fixture(scope="module")
def crowd():
    """Two Gaussian blobs labelled by the five simulated annotators of paper 001, fig. 2."""
    X, y = make_blobs(500, centers=[[-1.5, 0.0], [1.5, 0.0]], cluster_std=1.0, random_state=0)
    sim = simulate_annotators(
        y, 5, sensitivity=[0.6, 0.9, 0.5, 0.9, 0.9], specificity=[0.7, 0.8, 0.5, 0.2, 0.9],
        random_state=0,
    )
    return X.astype(np.float32), y, sim.votes, sim.confusions


def diagonals(confusions):
    return np.r_[confusions[:, 0, 0], confusions[:, 1, 1]]


# -- recovery of the simulated crowd ---------------------------------------------------


@pytest.mark.parametrize(
    "net",
    [CrowdLayerClassifier(crowd_layer="MW"), CrowdLayerClassifier(crowd_layer="softmax"),
     DeepEMClassifier()],
    ids=["crowd-layer-MW", "softmax-crowd-layer", "deep-EM"],
)
def test_learned_confusions_track_the_true_sensitivities_and_specificities(net, crowd):
    # Paper 001, fig. 2: the diagonals of the learned annotator matrices against the
    # simulated annotators' specificities and sensitivities.
    X, y, votes, true_confusions = crowd
    net = clone(net).set_params(max_epochs=30, lr=0.05, train_split=None, random_state=0,
                                module__hidden_units=16)
    net.fit(X, votes)
    learned = net.annotator_confusions_
    assert learned.shape == (5, 2, 2)
    np.testing.assert_allclose(learned.sum(axis=-1), 1.0, rtol=1e-6)
    assert np.corrcoef(diagonals(learned), diagonals(true_confusions))[0, 1] > 0.95
    assert np.abs(diagonals(learned) - diagonals(true_confusions)).max() < 0.15
    # the bottleneck recovers the truth better than the majority vote does
    majority = (votes == 1).sum(1) > (votes == 0).sum(1)
    assert (net.predict(X) == y).mean() > (majority == y).mean() + 0.03


# -- votes plumbing ------------------------------------------------------------------


@pytest.mark.parametrize("Net", NETS)
def test_classes_come_from_the_votes_and_predictions_are_labels(Net):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 3))
    votes = np.where(rng.rand(40, 4) < 0.5, -1, np.where(X[:, :1] > 0, 7, 3))
    votes[0] = [7, -1, -1, -1]
    net = Net(**SMALL).fit(X, votes)
    assert net.classes_.tolist() == [3, 7]  # not [-1, 3, 7]
    assert set(net.predict(X).tolist()) <= {3, 7}
    assert net.predict_proba(X).shape == (40, 2)
    np.testing.assert_allclose(net.predict_proba(X).sum(axis=1), 1.0)

    words = np.where(votes == 7, "cat", np.where(votes == 3, "dog", None))
    net = Net(missing_label=None, **SMALL).fit(X, words)
    assert net.classes_.tolist() == ["cat", "dog"]
    assert set(net.predict(X).tolist()) <= {"cat", "dog"}


def test_classes_parameter_adds_classes_never_voted():
    rng = np.random.RandomState(0)
    X, votes = rng.normal(size=(30, 2)), rng.randint(0, 2, (30, 3))
    net = CrowdLayerClassifier(classes=[0, 1, 2], **SMALL).fit(X, votes)
    assert net.classes_.tolist() == [0, 1, 2]
    assert net.predict_proba(X).shape == (30, 3)
    assert net.annotator_confusions_.shape == (3, 3, 3)


def test_one_dimensional_y_is_one_vote_per_task():
    X, y = make_blobs(60, centers=2, random_state=0)
    net = CrowdLayerClassifier(**SMALL).fit(X, y)
    assert net.n_workers_ == 1 and net.annotator_confusions_.shape == (1, 2, 2)


def test_task_holdout_split_is_shuffled_and_stratified_on_the_majority_vote():
    # label-sorted tasks: an unshuffled split would hold out one class only
    labels = np.repeat([0, 1, 2], 20)
    train, valid = TaskHoldoutSplit(0.25, random_state=0)(np.zeros((60, 1)), labels)
    assert len(valid) == 15 and len(train) == 45
    assert np.bincount(labels[valid.indices]).tolist() == [5, 5, 5]
    # a label seen once cannot be stratified: shuffled only, still a valid split
    train, valid = TaskHoldoutSplit(0.5, random_state=0)(np.zeros((6, 1)),
                                                         np.array([0, 0, 0, 1, 1, 2]))
    assert sorted(np.r_[train.indices, valid.indices].tolist()) == list(range(6))
    assert TaskHoldoutSplit(0.2)(np.zeros((3, 1)), None)[1] is not None
    assert TaskHoldoutSplit(0.2)(np.zeros((1, 1)), None)[1] is None
    with pytest.raises(ValueError, match="valid_size"):
        TaskHoldoutSplit(1.5)(np.zeros((4, 1)))


def test_net_stratifies_its_split_on_majority_votes_and_scores_held_out_votes(crowd):
    X, y, votes, _ = crowd
    order = np.argsort(y, kind="stable")
    net = CrowdLayerClassifier(max_epochs=2, lr=0.05, refit=False, random_state=0)
    seen = {}
    split = net.train_split

    def spy(dataset, labels, **kwargs):
        seen["labels"] = labels
        return split(dataset, labels, **kwargs)

    net.set_params(train_split=spy).fit(X[order], votes[order])
    counts = np.stack([(votes[order] == k).sum(1) for k in (0, 1)], axis=1)
    np.testing.assert_array_equal(seen["labels"], counts.argmax(1))
    assert {"train_loss", "valid_loss", "valid_acc"} <= set(net.history[-1])
    assert 0.5 < net.history[-1, "valid_acc"] <= 1.0


class RecordingSplit(TaskHoldoutSplit):
    held_out = []

    def __call__(self, dataset, y=None, groups=None):
        train, valid = super().__call__(dataset, y, groups)
        RecordingSplit.held_out.append(valid.indices.tolist())
        return train, valid


def test_a_split_without_seed_is_seeded_by_the_net_random_state(crowd):
    X, _, votes, _ = crowd
    split = RecordingSplit(0.2)
    held_out = []
    for seed in (0, 0, 1):
        RecordingSplit.held_out.clear()
        CrowdLayerClassifier(max_epochs=1, train_split=split, random_state=seed).fit(X, votes)
        # the search of lr and weight_decay splits once per run: the same tasks every time
        assert len(RecordingSplit.held_out) > 9
        assert all(valid == RecordingSplit.held_out[0] for valid in RecordingSplit.held_out)
        held_out.append(RecordingSplit.held_out[0])
    first, again, other = held_out
    assert len(first) == 100 and first == again and first != other
    assert split.random_state is None  # the net seeds a copy


def test_validation_accuracy_is_the_majority_vote_accuracy_of_held_out_votes(crowd):
    X, _, votes, _ = crowd
    split = TaskHoldoutSplit(0.3, random_state=3)
    net = CrowdLayerClassifier(max_epochs=2, lr=0.05, train_split=split, patience=None,
                               refit=False, random_state=0)
    net.fit(X, votes)
    counts = np.stack([(votes == k).sum(1) for k in (0, 1)], axis=1)
    _, valid = split(np.zeros(len(X)), counts.argmax(1))
    expected = mv_accuracy_score(votes[valid.indices], net.predict(X[valid.indices]))
    assert net.history[-1, "valid_acc"] == pytest.approx(expected)


def test_score_is_tie_aware_accuracy_against_the_majority_vote(crowd):
    X, _, votes, _ = crowd
    net = CrowdLayerClassifier(**SMALL).fit(X, votes)
    assert net.score(X, votes) == pytest.approx(mv_accuracy_score(votes, net.predict(X)))
    assert mv_accuracy_scorer(net, X, votes) == pytest.approx(net.score(X, votes))


@pytest.mark.parametrize("Net", NETS)
def test_annotation_log_likelihood_uses_the_noise_model(Net, crowd):
    X, _, votes, _ = crowd
    net = Net(**SMALL).fit(X[:100], votes[:100])
    value = net.annotation_log_likelihood(X[:50], votes[:50])
    # by hand: mean over observed votes of log p(vote | x) through the noise model
    net.module_.eval()
    with torch.no_grad():
        x = torch.as_tensor(X[:50])
        targets = torch.as_tensor(net._encode_votes(votes[:50], reset=False)[1])
        vote_logits, labels = net._vote_logits(net.module_(x), targets, x)
        expected = torch.log_softmax(vote_logits.double(), -1)[torch.arange(len(labels)),
                                                               labels].mean().item()
    assert value == pytest.approx(expected, rel=1e-6)
    assert value < 0
    assert annotation_log_likelihood_scorer(net, X[:50], votes[:50]) == pytest.approx(value)


@pytest.mark.parametrize("Net", NETS)
def test_annotator_probabilities_agree_with_the_annotation_likelihood(Net, crowd):
    X, _, votes, _ = crowd
    net = Net(**SMALL).fit(X[:100], votes[:100])
    proba = net.predict_annotator_proba(X[:60])
    assert proba.shape == (60, 5, 2)
    np.testing.assert_allclose(proba.sum(axis=-1), 1.0)
    task, worker = np.nonzero(votes[:60] >= 0)
    expected = np.log(proba[task, worker, votes[:60][task, worker]]).mean()
    assert net.annotation_log_likelihood(X[:60], votes[:60]) == pytest.approx(expected)
    np.testing.assert_allclose(net.predict_annotator_proba(X[:60], workers=[3, 1]),
                               proba[:, [3, 1]])
    assert net.predict_annotator_proba(X[:2], workers=[]).shape == (2, 0, 2)
    with pytest.raises(ValueError, match="workers has worker 5, not one of the fitted"):
        net.predict_annotator_proba(X[:2], workers=[0, 5])


@pytest.mark.parametrize("seed", range(3))
def test_self_crowd_trains_a_crowd_layer_net(seed):
    # SelfCrowdClassifier's crowd-model protocol: fit, predict_proba, predict_annotator_proba.
    # Scored against the truth: score() compares with the majority vote of 2 votes of accuracy
    # 0.8, where even the true labels expect 0.64 + 0.32 / 2 = 0.8 (0.76-0.86 measured), so the
    # former "score > 0.8" was a coin flip of the draw. The blobs at +-2 (unit variance) have a
    # Bayes accuracy of 0.977; measured 0.94-1.0 on seeds 0-3, 1000, 1001, 2000, 2001; 0.9 is
    # about four standard errors (0.017 on 80 tasks) below the Bayes rate.
    from skcrowd import SelfCrowdClassifier

    X, y = make_blobs(80, centers=[[-2, 0], [2, 0]], random_state=seed)
    votes = simulate_annotators(y, 6, accuracy=0.8, votes_per_task=2, random_state=seed).votes
    crowd_model = CrowdLayerClassifier(max_epochs=3, lr=0.05, module__hidden_units=8,
                                       train_split=None)
    clf = SelfCrowdClassifier(crowd_model, n_iterations=1, n_pseudo=20,
                              validation_fraction=None, random_state=0)
    clf.fit(X, votes)
    assert [h["n_added"] for h in clf.history_] == [0, 20]
    assert np.mean(clf.predict(X) == y) > 0.9


def test_grid_search_on_held_out_votes():
    X, y = make_blobs(120, centers=2, random_state=0)
    votes = simulate_annotators(y, 4, accuracy=0.8, random_state=0).votes
    search = GridSearchCV(
        CrowdLayerClassifier(max_epochs=2, module__hidden_units=4, train_split=None,
                             random_state=0),
        {"crowd_layer": ["MW", "VB"]},
        cv=KFold(3, shuffle=True, random_state=0),
        scoring={"mv": mv_accuracy_scorer, "ll": annotation_log_likelihood_scorer},
        refit="ll",
    ).fit(X, votes)
    assert search.best_params_["crowd_layer"] in ("MW", "VB")
    assert np.isfinite(search.cv_results_["mean_test_ll"]).all()


# -- reproducibility, devices, pickling ------------------------------------------------


@pytest.mark.parametrize("Net", NETS)
def test_equal_seeds_give_equal_results_and_leave_torch_rng_alone(Net, crowd):
    X, _, votes, _ = crowd
    state = torch.get_rng_state()
    net = Net(**SMALL).fit(X, votes)
    assert torch.equal(state, torch.get_rng_state())  # fit forks torch's RNG
    first = net.predict_proba(X)
    np.testing.assert_array_equal(first, Net(**SMALL).fit(X, votes).predict_proba(X))
    other = Net(**{**SMALL, "random_state": 1}).fit(X, votes).predict_proba(X)
    assert not np.allclose(first, other)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_without_cuda_is_a_clear_error_at_fit():
    net = CrowdLayerClassifier(device="cuda", max_epochs=1)
    with pytest.raises(ValueError, match="device='cuda'.*CUDA is not available"):
        net.fit(np.zeros((4, 2)), np.array([[0], [1], [0], [1]]))
    with pytest.raises(ValueError, match="not a torch device"):
        CrowdLayerClassifier(device="gpu0").fit(np.zeros((4, 2)), np.array([0, 1, 0, 1]))


@pytest.mark.parametrize("Net", NETS)
def test_pickle_round_trip_keeps_predictions(Net, crowd):
    X, _, votes, _ = crowd
    net = Net(**SMALL).fit(X, votes)
    copy = pickle.loads(pickle.dumps(net))
    np.testing.assert_array_equal(copy.predict_proba(X), net.predict_proba(X))
    np.testing.assert_array_equal(copy.annotator_confusions_, net.annotator_confusions_)


def test_clone_keeps_parameters_with_underscored_prefixes():
    net = CoNALClassifier(reg_lambda=0.1, reg_norm="fro_squared", module__hidden_units=3,
                          optimizer__weight_decay=0.01)
    params = clone(net).get_params()
    assert params["reg_lambda"] == 0.1 and params["reg_norm"] == "fro_squared"
    assert params["module__hidden_units"] == 3 and params["optimizer__weight_decay"] == 0.01


def test_verbose_prints_the_table_and_two_adds_a_progress_bar(capsys):
    X, y = make_blobs(40, centers=2, random_state=0)
    CrowdLayerClassifier(max_epochs=2, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
    CrowdLayerClassifier(max_epochs=2, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "valid_acc" in out and "train_loss" in out
    net = CrowdLayerClassifier(max_epochs=1, verbose=2, random_state=0).fit(X, y)
    assert "progress_bar" in dict(net.callbacks_)
    assert "progress_bar" not in dict(CrowdLayerClassifier(verbose=1).initialize_callbacks()
                                      .callbacks_)


def test_import_skcrowd_does_not_import_torch():
    code = ("import skcrowd, sys; skcrowd.AggregatedTargetClassifier; "
            "assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- bad input ----------------------------------------------------------------------


def test_bad_votes_name_the_argument_the_position_and_the_label(crowd):
    X, _, votes, _ = crowd
    net = CrowdLayerClassifier(**SMALL).fit(X[:50], votes[:50])
    bad = votes[:50].copy()
    bad[7, 3] = 5
    with pytest.raises(ValueError, match=r"y has label 5 at row \(task\) 7, column \(worker\) 3"):
        net.score(X[:50], bad)
    with pytest.raises(ValueError, match=r"votes has label 5 at row \(task\) 7"):
        net.annotation_log_likelihood(X[:50], bad)
    with pytest.raises(ValueError, match="fitted with 5"):
        net.score(X[:50], votes[:50, :3])
    with pytest.raises(ValueError, match="X has 49 samples but y has 50 tasks"):
        CrowdLayerClassifier(**SMALL).fit(X[:49], votes[:50])
    with pytest.raises(ValueError, match="requires y to be passed"):
        CrowdLayerClassifier(**SMALL).fit(X[:50], None)
    with pytest.raises(ValueError, match="no observed vote"):
        CrowdLayerClassifier(**SMALL).fit(X[:2], np.full((2, 3), -1))
    with pytest.raises(ValueError, match="X has 3 features"):
        net.predict(np.zeros((2, 3)))


def test_conal_annotator_features_are_checked_and_used(crowd):
    X, _, votes, _ = crowd
    features = np.random.RandomState(0).normal(size=(5, 3))
    net = CoNALClassifier(annotator_features=features, **SMALL).fit(X, votes)
    assert isinstance(net.noise_model_.annotator_embedding, torch.nn.Linear)
    with pytest.raises(ValueError, match=r"one row per worker: shape \(5, n_annotator"):
        CoNALClassifier(annotator_features=features[:4], **SMALL).fit(X, votes)
    features[2, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite value for worker 2"):
        CoNALClassifier(annotator_features=features, **SMALL).fit(X, votes)


# -- numerics -----------------------------------------------------------------------


@pytest.mark.parametrize("Net", NETS)
def test_extreme_crowds_stay_finite(Net):
    # 1000 votes on some tasks, workers with one vote, tasks without votes, an empty class
    rng = np.random.RandomState(0)
    X = rng.normal(size=(30, 2)).astype(np.float32) * 100
    votes = np.full((30, 1010), -1)
    votes[:10, :1000] = rng.randint(0, 2, (10, 1000))
    votes[10:20, 1000:1010] = np.diag(rng.randint(0, 2, 10)) - (1 - np.eye(10, dtype=int))
    net = Net(classes=[0, 1, 2], max_epochs=3, lr=0.1, batch_size=8, random_state=0)
    net.fit(X, votes)
    assert np.isfinite(net.history[:, "train_loss"]).all()
    assert np.isfinite(net.predict_proba(X)).all()
    assert np.isfinite(net.annotator_confusions_).all()
    assert np.isfinite(net.annotation_log_likelihood(X[:20], votes[:20]))


# -- CoNAL regularization ------------------------------------------------------------


def test_conal_squared_regularization_diverges_where_the_norm_does_not():
    # The paper's -lambda ||W_g - W_r||^2 is unbounded below and outgrows the
    # cross-entropy; the plain norm's constant pull does not (the reg_norm docstring).
    X, y = make_blobs(200, centers=[[-1.5, 0.0], [1.5, 0.0]], random_state=0)
    votes = simulate_annotators(y, 5, accuracy=0.8, votes_per_task=3, random_state=0).votes
    losses = {}
    for norm in ("fro", "fro_squared"):
        net = CoNALClassifier(max_epochs=300, lr=0.05, batch_size=-1, train_split=None,
                              reg_lambda=1e-3, reg_norm=norm, module__hidden_units=8,
                              random_state=0).fit(X, votes)
        losses[norm] = net.history[-1, "train_loss"]
    assert losses["fro"] > 0
    assert losses["fro_squared"] < -10


def test_conal_regularization_is_subtracted_from_the_training_loss_only(crowd):
    X, _, votes, _ = crowd
    net = CoNALClassifier(reg_lambda=0.5, **SMALL).fit(X[:40], votes[:40])
    x, targets = torch.as_tensor(X[:40]), torch.as_tensor(net._encode_votes(votes[:40],
                                                                            reset=False)[1])
    with torch.no_grad():
        logits = net.module_(x)
        train = net.get_loss(logits, targets, X=x, training=True)
        valid = net.get_loss(logits, targets, X=x, training=False)
        penalty = net.noise_model_.difference_norms().sum()
    assert penalty > 0
    assert train.item() == pytest.approx(valid.item() - 0.5 * penalty.item(), rel=1e-5)


# -- deep EM ------------------------------------------------------------------------


def test_deep_em_first_m_step_uses_the_vote_frequencies_and_the_dirichlet_prior():
    X = np.array([[0.0], [1.0], [2.0]])
    votes = np.array([[0, 0], [0, 1], [1, -1]])
    net = DeepEMClassifier(max_epochs=1, smoothing=1.0, train_split=None, random_state=0)
    net.fit(X, votes)
    assert net.n_em_steps_ == 1
    # q = vote frequencies: task 0 -> (1, 0), task 1 -> (1/2, 1/2), task 2 -> (0, 1)
    # worker 0 voted 0, 0, 1 on them; worker 1 voted 0, 1.
    q = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    prior = 1.0 * (np.eye(2) + 0.5)
    for worker, tasks in ((0, [0, 1, 2]), (1, [0, 1])):
        counts = prior.copy()
        for task in tasks:
            counts[:, votes[task, worker]] += q[task]
        np.testing.assert_allclose(net.annotator_confusions_[worker],
                                   counts / counts.sum(1, keepdims=True), rtol=1e-6)


def test_deep_em_takes_one_em_step_every_epochs_per_em_step(crowd):
    X, _, votes, _ = crowd
    assert DeepEMClassifier(**{**SMALL, "max_epochs": 4}).fit(X, votes).n_em_steps_ == 4
    net = DeepEMClassifier(epochs_per_em_step=2, **{**SMALL, "max_epochs": 5}).fit(X, votes)
    assert net.n_em_steps_ == 3
    assert not hasattr(net, "_posterior_")  # the data-sized posterior is not kept


def test_labelme_crowd_layer_matches_or_beats_majority_vote_training(shared_data):
    # benchmarks/deep.py in small: 1000 LabelMe images with 2.5 crowd votes each, the
    # estimators' defaults, the same network trained on majority-vote labels (about 14 s: in CI
    # at full size, since a smaller training set would move the paper's accuracy it checks)
    folder = shared_data / "labelme"
    if not (folder / "features_vgg16avg_train.npy").exists():
        pytest.skip("LabelMe features are absent")
    import pandas as pd

    from skcrowd import AggregatedTargetClassifier, MajorityVote
    from skcrowd.neural import PlainNetClassifier

    X = np.load(folder / "features_vgg16avg_train.npy")
    mean, std = X.mean(axis=0), X.std(axis=0) + 1e-6
    X = ((X - mean) / std).astype(np.float32)
    X_test = ((np.load(folder / "features_vgg16avg_test.npy") - mean) / std).astype(np.float32)
    y_test = np.load(folder / "labels_test.npy")
    long = pd.read_csv(folder / "votes.csv")
    votes = np.full((len(X), long.worker.max() + 1), -1)
    votes[long.task, long.worker] = long.label
    crowd_layer = CrowdLayerClassifier(random_state=0).fit(X, votes)
    mv = AggregatedTargetClassifier(PlainNetClassifier(random_state=0),
                                    aggregator=MajorityVote(random_state=0)).fit(X, votes)
    acc_crowd_layer = (crowd_layer.predict(X_test) == y_test).mean()
    acc_mv = (mv.predict(X_test) == y_test).mean()
    assert acc_crowd_layer > 0.82  # paper 001: 0.832 (4x4x512 VGG16 maps)
    # Paper 001's DL-MV scores 0.767; given the crowd nets' held-out selection of the epoch,
    # the same network on majority-vote labels narrows that gap to two points (0.826 against 0.848
    # over two seeds in benchmarks/deep.py): the crowd layer must not fall below it.
    assert acc_mv > 0.80
    assert acc_crowd_layer > acc_mv - 0.01


@pytest.mark.parametrize("Net", NETS)
def test_unfitted_nets_raise_not_fitted_error(Net):
    from sklearn.exceptions import NotFittedError

    net = Net()
    with pytest.raises(NotFittedError):
        net.annotator_confusions_
    with pytest.raises(NotFittedError):
        net.predict(np.zeros((2, 2)))
    with pytest.raises(NotFittedError):
        net.annotation_log_likelihood(np.zeros((2, 2)), np.zeros((2, 1), dtype=int))
