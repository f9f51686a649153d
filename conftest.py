"""pytest configuration shared by all tests: the slow marker, the shared data folder and a small
simulated votes matrix."""

from pathlib import Path

import numpy as np
import pytest

SHARED_DATA = Path(__file__).resolve().parent.parent / "shared" / "data"


def pytest_addoption(parser):
    parser.addoption(
        "--runslow", action="store_true", default=False, help="also run tests marked slow"
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture(scope="session")
def shared_data():
    """Path of the shared real-data folder; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture(scope="session")
def make_votes():
    """``make_votes(seed, n_tasks, n_workers)``: a 3-class votes matrix (-1 missing) whose workers
    give the true class with probability 0.7-0.75, 40 % of entries missing, one task without votes.
    """

    def make(seed, n_tasks, n_workers, accuracy, empty_task):
        rng = np.random.default_rng(seed)
        truth = rng.integers(3, size=n_tasks)
        v = np.where(rng.random((n_tasks, n_workers)) < accuracy, truth[:, None],
                     rng.integers(3, size=(n_tasks, n_workers)))
        v[rng.random(v.shape) < 0.4] = -1
        v[empty_task] = -1
        return v

    return make
