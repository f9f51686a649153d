"""CrowdLayerRegressor (continuous answers) and SequenceCrowdLayerClassifier (per-token votes)."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402

from skcrowd.metrics import mv_accuracy_score  # noqa: E402
from skcrowd.neural import CrowdLayerRegressor, SequenceCrowdLayerClassifier  # noqa: E402


@pytest.fixture(scope="module")
def ratings():
    """Linear truth, ten annotators with their own bias and scale, 40 % of answers missing."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (400, 4)).astype(np.float32)
    truth = X @ np.array([2.0, -1.0, 0.5, 1.0])
    bias = rng.uniform(-2, 2, 10)
    scale = rng.uniform(0.5, 2.0, 10)
    answers = truth[:, None] + bias + rng.normal(0, 0.3, (400, 10))
    scaled = truth[:, None] * scale + rng.normal(0, 0.3, (400, 10))
    missing = rng.rand(400, 10) < 0.4
    answers[missing], scaled[missing] = np.nan, np.nan
    answers[:5] = np.nan  # tasks without answers
    return X, truth, answers, bias, scaled, scale


def test_regressor_recovers_the_annotator_biases(ratings):
    # Paper 001, fig. 4: learned b_r against the true biases.
    X, truth, answers, bias, _, _ = ratings
    reg = CrowdLayerRegressor(crowd_layer="B", max_epochs=50, lr=0.02, batch_size=128,
                              train_split=None, random_state=0).fit(X, answers)
    assert np.corrcoef(reg.annotator_biases_, bias)[0, 1] > 0.99
    np.testing.assert_array_equal(reg.annotator_scales_, 1.0)
    # mu is the average annotator's answer: off the truth by the answer-weighted mean true bias
    offset = np.mean(reg.annotator_biases_ - bias)
    assert np.abs(reg.predict(X) + offset - truth).mean() < 0.3
    assert r2_score(truth, reg.predict(X) + offset) > 0.95


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regressor_bottleneck_is_the_average_annotator(seed):
    """The crowd layer holds the answer-weighted mean bias at 0 and mean scale at 1, so ``mu`` is
    the average annotator's answer. Free, ``mu + c`` with every ``b_r - c`` fitted as well, and
    S+B ended 0.73 to 0.83 below these ratings (centred at 5, unbiased crowd) on seeds 0-2."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, (300, 4)).astype(np.float32)
    truth = X @ np.array([1.0, -1.0, 0.5, 0.0]) + 5.0
    offsets = rng.normal(0, 1, 8)
    answers = truth[:, None] + offsets - offsets.mean() + rng.normal(0, 0.3, (300, 8))
    answers[rng.rand(*answers.shape) < 0.6] = np.nan
    reg = CrowdLayerRegressor(crowd_layer="S+B", max_epochs=40, random_state=seed).fit(X, answers)
    counts = reg.annotator_answer_counts_
    np.testing.assert_array_equal(counts, (~np.isnan(answers)).sum(axis=0))
    assert np.average(reg.annotator_biases_, weights=counts) == pytest.approx(0, abs=1e-5)
    assert np.average(reg.annotator_scales_, weights=counts) == pytest.approx(1, abs=1e-5)
    assert abs(np.mean(reg.predict(X) - truth)) < 0.4


def test_regressor_recovers_the_annotator_scales(ratings):
    X, truth, _, _, scaled, scale = ratings
    reg = CrowdLayerRegressor(crowd_layer="S", max_epochs=50, lr=0.02, batch_size=128,
                              train_split=None, random_state=0).fit(X, scaled)
    # identified up to a common factor between mu and the scales
    assert np.corrcoef(reg.annotator_scales_, scale)[0, 1] > 0.99
    np.testing.assert_array_equal(reg.annotator_biases_, 0.0)
    assert abs(np.corrcoef(reg.predict(X), truth)[0, 1]) > 0.98


def test_regressor_scores_against_the_mean_answer_and_has_no_predict_proba(ratings):
    X, _, answers, _, _, _ = ratings
    reg = CrowdLayerRegressor(max_epochs=5, random_state=0).fit(X, answers)
    assert not hasattr(reg, "predict_proba")
    answered = ~np.isnan(answers).all(axis=1)
    expected = r2_score(np.nanmean(answers[answered], axis=1), reg.predict(X)[answered])
    assert reg.score(X, answers) == pytest.approx(expected)
    assert reg.predict(X).shape == (400,) and reg.predict(X).dtype == np.float64


def test_regressor_equal_seeds_equal_results(ratings):
    X, _, answers, _, _, _ = ratings
    first = CrowdLayerRegressor(max_epochs=3, random_state=3).fit(X, answers).predict(X)
    again = CrowdLayerRegressor(max_epochs=3, random_state=3).fit(X, answers).predict(X)
    np.testing.assert_array_equal(first, again)


def test_regressor_bad_answers(ratings):
    X, _, answers, _, _, _ = ratings
    bad = answers.copy()
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="y"):
        CrowdLayerRegressor(max_epochs=1).fit(X, bad)
    with pytest.raises(ValueError, match="no observed answer"):
        CrowdLayerRegressor(max_epochs=1).fit(X[:3], np.full((3, 2), np.nan))
    reg = CrowdLayerRegressor(max_epochs=1, random_state=0).fit(X, answers)
    with pytest.raises(ValueError, match="fitted with 10"):
        reg.score(X, answers[:, :4])
    with pytest.raises(ValueError, match="requires y to be passed"):
        CrowdLayerRegressor().fit(X, None)


# -- sequences ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sequences():
    """40 sequences of 6 tokens, 2 tags; the last two positions of half of them are padding."""
    rng = np.random.RandomState(0)
    tags = rng.randint(0, 2, (40, 6))
    X = (np.eye(2)[tags] + rng.normal(0, 0.3, (40, 6, 2))).astype(np.float32)
    votes = np.stack([tags, tags, 1 - tags], axis=-1)  # worker 2 flips every tag
    votes[rng.rand(40, 6, 3) < 0.2] = -1
    votes[:20, 4:] = -1  # padding
    return X, tags, votes


def test_sequence_tagger_learns_through_the_per_token_crowd_layer(sequences):
    X, tags, votes = sequences
    clf = SequenceCrowdLayerClassifier(max_epochs=40, lr=0.02, train_split=None,
                                       module__hidden_units=8, random_state=0).fit(X, votes)
    assert clf.predict(X).shape == (40, 6)
    assert clf.predict_proba(X).shape == (40, 6, 2)
    assert (clf.predict(X) == tags).mean() > 0.95
    conf = clf.annotator_confusions_
    assert conf[2, 0, 1] > 0.6 and conf[2, 1, 0] > 0.6  # the flipping worker (0.27 at init)
    expected = mv_accuracy_score(votes.reshape(-1, 3), clf.predict(X).reshape(-1))
    assert clf.score(X, votes) == pytest.approx(expected)  # token level
    assert np.isfinite(clf.annotation_log_likelihood(X, votes))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # one epoch
def test_padded_tokens_contribute_nothing(sequences):
    X, _, votes = sequences
    clf = SequenceCrowdLayerClassifier(max_epochs=1, module__hidden_units=4,
                                       random_state=0).fit(X, votes)
    targets = torch.as_tensor(clf._encode_votes(votes, reset=False)[1])
    with torch.no_grad():
        logits = clf.module_(torch.as_tensor(X))
        vote_logits, labels = clf._vote_logits(logits, targets, torch.as_tensor(X))
        loss = clf.get_loss(logits, targets, X=torch.as_tensor(X))
        # the same loss with the padded positions' logits replaced by garbage
        garbage = logits.clone()
        garbage[:20, 4:] = 1e3
        loss_garbage = clf.get_loss(garbage, targets, X=torch.as_tensor(X))
    assert len(labels) == (votes >= 0).sum()
    assert loss.item() == pytest.approx(loss_garbage.item())


def test_sequence_input_checks(sequences):
    X, tags, votes = sequences
    with pytest.raises(ValueError, match="tokens per sequence"):
        SequenceCrowdLayerClassifier(max_epochs=1).fit(X[:, :5], votes)
    with pytest.raises(ValueError, match=r"shape \(n_sequences, seq_len, n_workers\)"):
        SequenceCrowdLayerClassifier(max_epochs=1).fit(X, votes[:, 0, 0])
    with pytest.raises(ValueError, match="GRUTagger needs float X"):
        SequenceCrowdLayerClassifier(max_epochs=1).fit(tags, votes)
    bad = votes.copy()
    bad[1, 2, 0] = 5
    with pytest.raises(ValueError, match=r"label 5 at row \(task\) 8"):  # 1 * 6 + 2
        SequenceCrowdLayerClassifier(max_epochs=1, classes=[0, 1]).fit(X, bad)
    # one worker: 2-D votes (n_sequences, seq_len)
    clf = SequenceCrowdLayerClassifier(max_epochs=1, random_state=0).fit(X, tags)
    assert clf.n_workers_ == 1


class EmbeddingTagger(torch.nn.Module):
    def __init__(self, vocabulary=10, n_classes=2):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocabulary, 4)
        self.output = torch.nn.Linear(4, n_classes)

    def forward(self, X):
        return self.output(self.embedding(X))


def test_token_ids_with_an_embedding_module():
    rng = np.random.RandomState(0)
    tokens = rng.randint(0, 10, (30, 5))
    tags = (tokens >= 5).astype(int)
    votes = np.stack([tags, tags], axis=-1)
    clf = SequenceCrowdLayerClassifier(EmbeddingTagger, max_epochs=30, lr=0.05,
                                       train_split=None, random_state=0).fit(tokens, votes)
    assert (clf.predict(tokens) == tags).mean() > 0.95


def dominant_tag_crowd(seed, n=200, length=10, n_tags=5, share=0.9):
    """Tag 0 on 90 % of the tokens (as ``O`` in NER), noisy one-hot features, 4 workers.

    Each worker's vote is the tag, or a uniform tag 20 % of the time; 40 % of the
    (worker, sequence) pairs have no votes.
    """
    rng = np.random.RandomState(seed)
    tags = np.where(rng.rand(n, length) < share, 0, rng.randint(1, n_tags, (n, length)))
    X = (np.eye(n_tags)[tags] + rng.normal(0, 0.5, (n, length, n_tags))).astype(np.float32)
    votes = np.repeat(tags[..., None], 4, axis=-1)
    wrong = rng.rand(*votes.shape) < 0.2
    votes[wrong] = rng.randint(0, n_tags, wrong.sum())
    votes[np.repeat(rng.rand(n, 1, 4) < 0.4, length, axis=1)] = -1
    return X, tags, votes


@pytest.mark.parametrize("seed, layer", [(0, "MW"), (1, "VW+B"), (2, "MW"), (3, "VW")])
def test_the_auto_scale_keeps_a_dominant_tag_from_swallowing_the_others(seed, layer):
    # From the paper's identity map the vote logits span at most 1: the bottleneck saturates on
    # the dominant tag and tags every entity 0 (the CoNLL-2003 crowd: every token O).
    X, _, votes = dominant_tag_crowd(seed)
    X_test, tags_test, _ = dominant_tag_crowd(seed + 100)
    entity = tags_test > 0
    settings = dict(crowd_layer=layer, max_epochs=30, lr=1e-2, weight_decay=0.0,
                    train_split=None, module__hidden_units=8, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        identity = SequenceCrowdLayerClassifier(crowd_layer_scale=1.0, **settings).fit(X, votes)
    assert (identity.predict(X_test)[entity] == tags_test[entity]).mean() < 0.05
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = SequenceCrowdLayerClassifier(**settings).fit(X, votes)
    assert (clf.predict(X_test)[entity] == tags_test[entity]).mean() > 0.25
    assert 4 < clf.crowd_layer_scale_ < 6


def test_crowd_layer_scale_from_the_votes_and_the_collapse_warning():
    X, _, votes = dominant_tag_crowd(0, n=60)
    observed = votes[votes >= 0]
    share = np.bincount(observed).max() / observed.size
    clf = SequenceCrowdLayerClassifier(max_epochs=5, lr=1e-2, weight_decay=0.0,
                                       train_split=None, module__hidden_units=8, random_state=0)
    with pytest.warns(ConvergenceWarning, match="tags every voted training token 0, although "
                      "the votes hold 5 tags: its bottleneck collapsed onto one tag"):
        clf.set_params(crowd_layer_scale=1.0).fit(X, votes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.set_params(crowd_layer_scale="auto", max_epochs=1).fit(X, votes)
        assert clf.crowd_layer_scale_ == pytest.approx(2 * np.log(share * 4 / (1 - share)))
        weight = clf.noise_model_.weight.detach().numpy()
        assert weight.shape == (4, 5, 5)
        for layer, scale in (("VB", 1.0), ("softmax", 1.0), ("VW", clf.crowd_layer_scale_)):
            assert clf.set_params(crowd_layer=layer).fit(X, votes).crowd_layer_scale_ == scale
    with pytest.raises(ValueError, match="crowd_layer_scale"):
        clf.set_params(crowd_layer_scale=0.0).fit(X, votes)


def test_balanced_votes_keep_the_papers_identity(sequences):
    X, _, votes = sequences
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # one epoch: not yet separated
        clf = SequenceCrowdLayerClassifier(max_epochs=1, train_split=None,
                                           module__hidden_units=4, random_state=0).fit(X, votes)
    assert clf.crowd_layer_scale_ == 1.0
    assert np.allclose(clf.noise_model_.weight.detach().numpy()[:, [0, 1], [0, 1]] > 0.9, True)
