"""Losses and noise models, checked against hand computations."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from torch.nn import functional as F  # noqa: E402

from skcrowd.neural import (  # noqa: E402
    MLP,
    CommonNoiseAdaptation,
    ConfusionNoise,
    CrowdLayer,
    GRUTagger,
    MaskedMSE,
    MaskedMultiCrossEntropy,
    RegressionCrowdLayer,
    SoftNLLLoss,
    observed_votes,
)


def test_observed_votes_are_the_non_missing_entries():
    votes = torch.tensor([[0, -1, 1], [-1, -1, 2]])
    task, worker, label = observed_votes(votes)
    assert task.tolist() == [0, 0, 1]
    assert worker.tolist() == [0, 2, 2]
    assert label.tolist() == [0, 1, 2]
    answers = torch.tensor([[1.5, float("nan")], [float("nan"), -2.0]])
    task, worker, value = observed_votes(answers)
    assert (task.tolist(), worker.tolist(), value.tolist()) == ([0, 1], [0, 1], [1.5, -2.0])


def test_masked_multi_cross_entropy_by_hand_on_two_tasks():
    # Two tasks, three workers, identity MW crowd layer: each vote's logits are the
    # task's bottleneck probabilities sigma (sigma @ I).
    class_logits = torch.log(torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]))
    votes = torch.tensor([[0, -1, 1], [-1, -1, 2]])
    task, worker, label = observed_votes(votes)
    layer = CrowdLayer(n_workers=3, n_classes=3, kind="MW")
    vote_logits = layer(class_logits, None, task, worker)
    torch.testing.assert_close(vote_logits, torch.tensor([[0.7, 0.2, 0.1], [0.7, 0.2, 0.1],
                                                          [0.1, 0.3, 0.6]]))

    def nll(logits, k):  # -log softmax(logits)[k]
        return -(logits[k] - math.log(sum(math.exp(v) for v in logits)))

    expected = (nll([0.7, 0.2, 0.1], 0) + nll([0.7, 0.2, 0.1], 1) + nll([0.1, 0.3, 0.6], 2)) / 3
    loss = MaskedMultiCrossEntropy()(vote_logits, label)
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    # averaged over the 3 observed votes, not over the 6 (task, worker) cells
    assert loss.item() != pytest.approx(expected * 3 / 6)


def test_masked_losses_are_zero_without_votes_and_keep_the_graph():
    logits = torch.zeros(0, 3, requires_grad=True)
    loss = MaskedMultiCrossEntropy()(logits, torch.zeros(0, dtype=torch.long))
    assert loss.item() == 0.0 and not torch.isnan(loss)
    loss.backward()
    pred = torch.zeros(0, requires_grad=True)
    assert MaskedMSE()(pred, torch.zeros(0)).item() == 0.0


def test_masked_mse_averages_over_observed_answers():
    assert MaskedMSE()(torch.tensor([1.0, 2.0]), torch.tensor([0.0, 4.0])).item() == 2.5


def test_soft_nll_loss_by_hand():
    log_proba = torch.log(torch.tensor([[0.5, 0.5], [0.9, 0.1]]))
    target = torch.tensor([[1.0, 0.0], [0.25, 0.75]])
    expected = (-math.log(0.5) - 0.25 * math.log(0.9) - 0.75 * math.log(0.1)) / 2
    assert SoftNLLLoss()(log_proba, target).item() == pytest.approx(expected, rel=1e-6)
    assert isinstance(SoftNLLLoss(), torch.nn.NLLLoss)  # skorch logs the outputs first


@pytest.mark.parametrize("kind", ["MW", "VW", "VB", "VW+B"])
def test_crowd_layers_start_as_the_identity_map(kind):
    layer = CrowdLayer(4, 3, kind)
    class_logits = torch.randn(5, 3)
    task, worker = torch.tensor([0, 1, 4]), torch.tensor([3, 0, 2])
    sigma = F.softmax(class_logits, dim=-1)
    torch.testing.assert_close(layer(class_logits, None, task, worker), sigma[task])
    # confusion of a one-hot bottleneck: softmax(e_c) = e / (e + K - 1) on the diagonal
    conf = layer.confusions()
    assert conf.shape == (4, 3, 3)
    torch.testing.assert_close(conf.sum(-1), torch.ones(4, 3))
    assert conf[0, 0, 0].item() == pytest.approx(math.e / (math.e + 2))


def test_mw_confusions_are_row_softmax_of_the_weights():
    layer = CrowdLayer(2, 2, "MW")
    with torch.no_grad():
        layer.weight[1] = torch.tensor([[0.0, 3.0], [1.0, -1.0]])
    torch.testing.assert_close(layer.confusions()[1], F.softmax(layer.weight[1], dim=-1))
    # vote logits of a mixed bottleneck: sigma @ W_r
    sigma = torch.tensor([[0.25, 0.75]])
    out = layer(torch.log(sigma), None, torch.tensor([0]), torch.tensor([1]))
    torch.testing.assert_close(out, torch.tensor([[0.75, 0.0]]))


def test_vw_b_layer_scales_and_shifts_sigma():
    layer = CrowdLayer(1, 2, "VW+B")
    with torch.no_grad():
        layer.scale[0] = torch.tensor([2.0, 3.0])
        layer.bias[0] = torch.tensor([1.0, -1.0])
    sigma = torch.tensor([[0.5, 0.5]])
    out = layer(torch.log(sigma), None, torch.tensor([0]), torch.tensor([0]))
    torch.testing.assert_close(out, torch.tensor([[2.0, 0.5]]))


def test_softmax_crowd_layer_is_a_mixture_through_row_stochastic_matrices():
    layer = CrowdLayer(2, 3, "softmax")
    conf = layer.confusions()
    torch.testing.assert_close(torch.diagonal(conf, dim1=-2, dim2=-1), torch.full((2, 3), 0.9))
    sigma = torch.tensor([[0.6, 0.3, 0.1]])
    out = layer(torch.log(sigma), None, torch.tensor([0]), torch.tensor([1]))
    torch.testing.assert_close(out.exp(), sigma @ conf[1])  # log-probabilities already


def test_confusion_noise_marginalises_the_true_class():
    noise = ConfusionNoise(1, 2)
    pi = torch.tensor([[0.8, 0.2], [0.3, 0.7]])
    noise.log_confusions.copy_(torch.log(pi)[None])
    p = torch.tensor([[0.4, 0.6]])
    out = noise(torch.log(p), None, torch.tensor([0]), torch.tensor([0]))
    expected = torch.tensor([[0.4 * 0.8 + 0.6 * 0.3, 0.4 * 0.2 + 0.6 * 0.7]])
    torch.testing.assert_close(out.exp(), expected)
    assert not noise.log_confusions.requires_grad


def test_conal_mixture_by_hand_and_omega_range():
    torch.manual_seed(0)
    noise = CommonNoiseAdaptation(3, 2, 4, embedding_dim=5)
    with torch.no_grad():
        noise.common.copy_(torch.tensor([[2.0, 0.0], [0.0, 1.0]]))
        noise.individual[1] = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    x = torch.randn(2, 4)
    class_logits = torch.tensor([[1.0, -1.0], [0.0, 0.5]])
    task, worker = torch.tensor([1]), torch.tensor([1])
    out = noise(class_logits, x, task, worker).exp()
    sigma = F.softmax(class_logits[1], dim=-1)
    omega = torch.sigmoid(noise.common_logit(x, task, worker))
    expected = (omega * F.softmax(sigma @ noise.common, dim=-1)
                + (1 - omega) * F.softmax(sigma @ noise.individual[1], dim=-1))
    torch.testing.assert_close(out[0], expected.detach())
    # unit embeddings: omega = sigmoid(cosine) in [sigmoid(-1), sigmoid(1)]
    logits = noise.common_logit(torch.randn(50, 4) * 100, torch.arange(50) % 50,
                                torch.arange(50) % 3)
    assert logits.abs().max().item() <= 1.0 + 1e-6


def test_conal_annotator_features_replace_the_one_hot_code():
    features = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    noise = CommonNoiseAdaptation(3, 2, 4, embedding_dim=5, annotator_features=features)
    assert isinstance(noise.annotator_embedding, torch.nn.Linear)
    assert noise.difference_norms().tolist() == [0.0, 0.0, 0.0]  # identity init


def test_noise_models_stay_finite_on_extreme_logits():
    class_logits = torch.tensor([[1e4, -1e4, 0.0], [-1e4, 1e4, 1e4]])
    task, worker = torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0])
    x = torch.randn(2, 4) * 1e6
    models = [CrowdLayer(2, 3, k) for k in ("MW", "VW", "VB", "VW+B", "softmax")]
    models += [ConfusionNoise(2, 3), CommonNoiseAdaptation(2, 3, 4)]
    for model in models:
        out = F.log_softmax(model(class_logits, x, task, worker), dim=-1)
        assert torch.isfinite(out).all(), model


def test_regression_crowd_layer_variants():
    mu = torch.tensor([[1.0], [2.0]])
    task, worker = torch.tensor([0, 1]), torch.tensor([1, 0])
    layer = RegressionCrowdLayer(2, "S+B")
    torch.testing.assert_close(layer(mu, None, task, worker), torch.tensor([1.0, 2.0]))
    with torch.no_grad():
        layer.scale.copy_(torch.tensor([2.0, 3.0]))
        layer.bias.copy_(torch.tensor([-1.0, 0.5]))
    # used as scales [0.8, 1.2] (mean 1) and biases [-0.75, 0.75] (mean 0)
    torch.testing.assert_close(layer(mu, None, task, worker), torch.tensor([1.95, 0.85]))
    # weighted means: worker 1 gives three answers for worker 0's one
    weighted = RegressionCrowdLayer(2, "S+B", weights=[1, 3])
    with torch.no_grad():
        weighted.scale.copy_(torch.tensor([2.0, 3.0]))  # used as [2, 3] / 2.75
        weighted.bias.copy_(torch.tensor([-1.0, 0.5]))  # used as [-1.125, 0.375]
    scale, bias = weighted.annotator_parameters()
    torch.testing.assert_close(scale, torch.tensor([2 / 2.75, 3 / 2.75]))
    torch.testing.assert_close(bias, torch.tensor([-1.125, 0.375]))
    with pytest.raises(ValueError, match="non-negative"):
        RegressionCrowdLayer(2, "B", weights=[0, 0])
    assert not hasattr(RegressionCrowdLayer(2, "B"), "scale")
    with pytest.raises(ValueError, match="kind"):
        RegressionCrowdLayer(2, "W")
    with pytest.raises(ValueError, match="kind"):
        CrowdLayer(2, 2, "MW+B")


def test_default_backbones_shapes():
    assert MLP(6, 3, hidden_units=4)(torch.zeros(5, 2, 3)).shape == (5, 3)  # flattens
    assert GRUTagger(3, 4, hidden_units=2)(torch.zeros(2, 7, 3)).shape == (2, 7, 4)
