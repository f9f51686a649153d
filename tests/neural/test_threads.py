"""The nets' CPU threads: one by default, ``n_jobs`` as scikit-learn counts it, torch's put back."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skorch")

from joblib import cpu_count, parallel_config  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402

from skcrowd.neural import CrowdLayerClassifier, CrowdLayerRegressor, MLP  # noqa: E402

SMALL = dict(max_epochs=2, lr=0.01, module__hidden_units=4, random_state=0)


def data(Net):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 3)).astype(np.float32)
    if Net is CrowdLayerRegressor:
        return X, X[:, :1] + rng.normal(size=(60, 3))
    return X, (X[:, :1] > 0).astype(int) ^ (rng.rand(60, 3) < 0.2)


@pytest.fixture
def seen_threads(monkeypatch):
    """torch's thread count at every forward pass of the default backbone."""
    seen = []
    forward = MLP.forward

    def recording(self, X):
        seen.append(torch.get_num_threads())
        return forward(self, X)

    monkeypatch.setattr(MLP, "forward", recording)
    return seen


@pytest.fixture
def two_threads():
    """torch on two threads, as numba's OpenMP kernels leave it on a 2-core machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("Net", [CrowdLayerClassifier, CrowdLayerRegressor])
def test_nets_train_and_predict_on_one_thread_and_put_torch_s_count_back(
        Net, seen_threads, two_threads):
    X, y = data(Net)
    net = Net(**SMALL).fit(X, y)
    assert seen_threads and set(seen_threads) == {1}  # search, selection run, refit
    assert torch.get_num_threads() == 2
    seen_threads.clear()
    net.predict(X)
    assert seen_threads and set(seen_threads) == {1}
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize("n_jobs, context, expected", [
    (2, None, 2),
    (-1, None, cpu_count()),
    (None, 2, 2),  # an enclosing joblib.parallel_config(n_jobs=2), as scikit-learn reads it
    (1, 2, 1),
])
def test_n_jobs_counts_threads_as_scikit_learn_does(n_jobs, context, expected, seen_threads):
    X, y = data(CrowdLayerClassifier)
    before = torch.get_num_threads()
    with parallel_config(n_jobs=context):
        net = CrowdLayerClassifier(n_jobs=n_jobs, **SMALL).fit(X, y)
        net.predict_proba(X)
    assert set(seen_threads) == {expected}
    assert torch.get_num_threads() == before


def test_zero_jobs_is_refused_naming_the_parameter():
    X, y = data(CrowdLayerClassifier)
    with pytest.raises(InvalidParameterError, match="'n_jobs' parameter"):
        CrowdLayerClassifier(n_jobs=0, **SMALL).fit(X, y)


def test_a_failed_fit_puts_torch_s_count_back(two_threads):
    X, y = data(CrowdLayerClassifier)

    class Failing(CrowdLayerClassifier):
        def on_epoch_end(self, net, **kwargs):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        Failing(n_jobs=1, **SMALL).fit(X, y)
    assert torch.get_num_threads() == 2
