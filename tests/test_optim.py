"""SAM and ASAM: hand-computed steps, the skorch integration, batch-norm statistics."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from skcrowd.optim import SAM, frozen_batchnorm_stats  # noqa: E402


@pytest.fixture(autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def quadratic_closure(opt, w, scale):
    def closure():
        opt.zero_grad()
        loss = (scale * w**2).sum()
        loss.backward()
        return loss

    return closure


def test_sam_step_by_hand():
    # loss = sum(w^2): g = 2w, e = rho g / |g|, update with the gradient at w + e
    w = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    opt = SAM([w], torch.optim.SGD, rho=0.5, lr=0.1)
    loss = opt.step(quadratic_closure(opt, w, 1.0))
    assert loss.item() == pytest.approx(25.0)
    e = 0.5 * np.array([6.0, 8.0]) / 10.0
    expected = np.array([3.0, 4.0]) - 0.1 * 2 * (np.array([3.0, 4.0]) + e)
    np.testing.assert_allclose(w.detach().numpy(), expected, rtol=1e-6)
    assert "e_w" not in opt.state[w]  # the perturbation is undone and forgotten


def test_asam_scales_the_neighbourhood_by_the_weights():
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = SAM([w], torch.optim.SGD, rho=0.5, adaptive=True, lr=0.1)
    opt.step(quadratic_closure(opt, w, 1.0))
    w0, g = np.array([1.0, 2.0]), np.array([2.0, 4.0])
    e = 0.5 * w0**2 * g / np.linalg.norm(np.abs(w0) * g)
    np.testing.assert_allclose(w.detach().numpy(), w0 - 0.1 * 2 * (w0 + e), rtol=1e-6)


def test_rho_zero_is_the_base_optimizer():
    w1 = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    w2 = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    sam = SAM([w1], torch.optim.SGD, rho=0.0, lr=0.1, momentum=0.9)
    sgd = torch.optim.SGD([w2], lr=0.1, momentum=0.9)
    for _ in range(3):
        sam.step(quadratic_closure(sam, w1, 1.0))
        sgd.step(quadratic_closure(sgd, w2, 1.0))
    torch.testing.assert_close(w1, w2)


def test_state_dict_is_the_base_optimizer_state():
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = SAM([w], torch.optim.SGD, lr=0.1, momentum=0.9)
    opt.step(quadratic_closure(opt, w, 1.0))
    state = opt.state_dict()
    assert "momentum_buffer" in state["state"][0]
    other = SAM([w], torch.optim.SGD, lr=0.5, momentum=0.9)
    other.load_state_dict(state)
    assert other.param_groups[0]["lr"] == 0.1
    assert torch.equal(other.base_optimizer.state[w]["momentum_buffer"],
                       opt.base_optimizer.state[w]["momentum_buffer"])


def test_step_needs_a_closure_and_rho_must_be_non_negative():
    w = torch.nn.Parameter(torch.ones(2))
    with pytest.raises(ValueError, match="closure"):
        SAM([w], lr=0.1).step()
    with pytest.raises(ValueError, match="rho"):
        SAM([w], rho=-1.0, lr=0.1)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_frozen_batchnorm_stats_restores_the_running_statistics(momentum):
    bn = torch.nn.BatchNorm1d(3, momentum=momentum)
    bn(torch.randn(16, 3))
    before = {k: v.clone() for k, v in bn.state_dict().items()}
    with frozen_batchnorm_stats(torch.nn.Sequential(bn)):
        out = bn(torch.randn(16, 3) + 5)
    assert out.abs().mean() < 2  # still normalised with the batch's own statistics
    for key, value in bn.state_dict().items():
        assert torch.equal(value, before[key]), key


class BatchNormMLP(torch.nn.Module):
    def __init__(self, n_features=2, n_outputs=2):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(n_features, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(),
            torch.nn.Linear(8, n_outputs),
        )

    def forward(self, X):
        return self.net(X)


def test_crowd_net_with_sam_updates_batchnorm_statistics_once_per_batch():
    from sklearn.datasets import make_blobs

    from skcrowd.neural import CrowdLayerClassifier

    X, y = make_blobs(96, centers=[[-2, 0], [2, 0]], random_state=0)
    votes = np.c_[y, y, 1 - y]
    net = CrowdLayerClassifier(
        BatchNormMLP, optimizer=SAM, optimizer__base_optimizer=torch.optim.SGD,
        optimizer__rho=0.05, optimizer__momentum=0.9, lr=0.1, max_epochs=10, batch_size=32,
        train_split=None, random_state=0,
    ).fit(X, votes)
    assert isinstance(net.optimizer_, SAM)
    assert int(net.module_.net[1].num_batches_tracked) == 10 * 3  # not 2 x 30
    losses = net.history[:, "train_loss"]
    assert losses[-1] < losses[0]
    assert net.score(X, votes) > 0.9


def test_sam_in_a_plain_skorch_net_evaluates_the_closure_twice():
    from skorch import NeuralNetClassifier

    calls = []

    class Counting(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        def forward(self, X):
            calls.append(len(X))
            return self.linear(X)

    X = np.random.RandomState(0).normal(size=(20, 2)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    NeuralNetClassifier(Counting, criterion=torch.nn.CrossEntropyLoss, optimizer=SAM,
                        optimizer__base_optimizer=torch.optim.SGD, lr=0.1, max_epochs=1,
                        batch_size=20, train_split=None, verbose=0).fit(X, y)
    assert calls == [20, 20]


def test_a_net_trained_with_sam_pickles():
    import pickle

    from sklearn.datasets import make_blobs

    from skcrowd.neural import DeepEMClassifier

    X, y = make_blobs(40, centers=2, random_state=0)
    net = DeepEMClassifier(optimizer=SAM, optimizer__rho=0.1, lr=0.1, max_epochs=2,
                           random_state=0).fit(X, np.c_[y, y])
    copy = pickle.loads(pickle.dumps(net))
    assert isinstance(copy.optimizer_, SAM)
    np.testing.assert_array_equal(copy.predict_proba(X), net.predict_proba(X))
