"""pytest configuration shared by all tests: the slow marker, the shared data folder and a small
simulated votes matrix."""

import datetime
import os
import subprocess
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
# examples drawn from a seed that changes with the commit (printed in the header: a failure
# replays with --hypothesis-seed), no example database, so that a run depends only on the code
# and the seed; "slow" with --runslow, many fresh random examples per property. --hypothesis-profile
# NAME picks one explicitly; --hypothesis-seed N fixes the seed of either.
HYPOTHESIS_PROFILES = {
    "ci": dict(max_examples=25, deadline=None, derandomize=False, database=None,
               print_blob=True, suppress_health_check=["too_slow", "data_too_large"]),
    "slow": dict(max_examples=300, deadline=None, print_blob=True,
                 suppress_health_check=["too_slow", "data_too_large"]),
}


def _commit_seed():
    """The "ci" profile's seed and where it comes from: the first 32 bits of the commit checked
    out (each commit tries new examples, a rerun of a commit the same ones), or the UTC date
    where git cannot tell the commit."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                                capture_output=True, text=True, timeout=30,
                                check=True).stdout.strip()
        return int(commit[:8], 16), f"commit {commit[:12]}"
    except (OSError, subprocess.SubprocessError, ValueError):
        today = datetime.datetime.now(datetime.timezone.utc).date()
        return int(today.strftime("%Y%m%d")), f"UTC date {today}"


@pytest.hookimpl(tryfirst=True)  # before hypothesis's plugin, which reads --hypothesis-seed
def pytest_configure(config):
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # hypothesis is in the test extra; without it the property tests skip
        return
    for name, options in HYPOTHESIS_PROFILES.items():
        checks = [HealthCheck[c] for c in options.get("suppress_health_check", ())]
        settings.register_profile(name, **{**options, "suppress_health_check": checks})
    profile = config.getoption("hypothesis_profile", None)
    if not profile:
        profile = "slow" if config.getoption("--runslow") else "ci"
        settings.load_profile(profile)
    if profile == "ci" and config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed, source = _commit_seed()
        config.stash[_SEED_SOURCE] = source


_SEED_SOURCE = pytest.StashKey[str]()


def pytest_report_header(config):
    if _SEED_SOURCE in config.stash:
        seed = config.option.hypothesis_seed
        return [f"hypothesis: profile 'ci', seed {seed} from the {config.stash[_SEED_SOURCE]} "
                f"(replay with --hypothesis-seed={seed})"]
    return []


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if exitstatus and _SEED_SOURCE in config.stash:
        terminalreporter.write_line(pytest_report_header(config)[0])


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
