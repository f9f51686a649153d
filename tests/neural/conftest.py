"""Fixture of the neural tests: one torch thread per test module."""

import pytest


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny nets train 10-50x faster on one thread than on two contended ones."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
