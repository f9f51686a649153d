"""Fixture of the neural tests: one torch thread per test."""

import pytest


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny nets train 10-50x faster on one thread than on two contended ones.

    Set per test: numba's OpenMP kernels (the aggregators) reset the shared
    OpenMP thread count that torch uses.
    """
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
