"""Fixtures of the kernel tests: the engine switch."""

import pytest

from skcrowd.aggregation import kernels

ENGINES = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(
    kernels.numba is None, reason="numba is not installed"))]


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    monkeypatch.setattr(kernels, "ENGINE", request.param)
    return request.param
