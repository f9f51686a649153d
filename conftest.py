"""pytest configuration shared by all tests: the slow marker, the shared data folder and a small
simulated votes matrix."""

import os
from pathlib import Path

# No background compile of the numba kernels (skcrowd.aggregation.kernels._compile) in the tests:
# ENGINE="auto" gives numba from its threshold, compiling at the first call, whatever numba's
# cache holds (tests/aggregation/kernels/test_compile.py turns it on where it tests it). Set
# before skcrowd is imported, and inherited by the tests' subprocesses.
os.environ.setdefault("SKCROWD_BACKGROUND_COMPILE", "0")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parent.parent / "shared" / "data"


def pytest_addoption(parser):
    parser.addoption(
        "--runslow", action="store_true", default=False, help="also run tests marked slow"
    )


# Hypothesis profiles of the property-based tests (doc/reliability.rst): "ci" by default, few
# examples in a fixed sequence (derandomized: CI never fails at random); "slow" with --runslow,
# many fresh random examples per property. --hypothesis-profile NAME picks one explicitly.
HYPOTHESIS_PROFILES = {
    "ci": dict(max_examples=25, deadline=None, derandomize=True, print_blob=True,
               suppress_health_check=["too_slow", "data_too_large"]),
    "slow": dict(max_examples=300, deadline=None, print_blob=True,
                 suppress_health_check=["too_slow", "data_too_large"]),
}


def pytest_configure(config):
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # hypothesis is in the test extra; without it the property tests skip
        return
    for name, options in HYPOTHESIS_PROFILES.items():
        checks = [HealthCheck[c] for c in options.get("suppress_health_check", ())]
        settings.register_profile(name, **{**options, "suppress_health_check": checks})
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("slow" if config.getoption("--runslow") else "ci")


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
