"""numba's compilation off the user's clock (``kernels._compile``): while the kernels are not in
numba's cache, ``ENGINE="auto"`` runs numpy and starts one background compile; once they are,
numba; ``BACKGROUND_COMPILE=False`` restores the compile at the first call."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from skcrowd.aggregation import DawidSkene, kernels
from skcrowd.aggregation.kernels import _common, _compile

pytestmark = pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")

REPO = Path(__file__).resolve().parents[3]
VOTES = np.array([[0, 0, 1], [1, 1, 0], [0, 1, 1], [2, 2, 1], [1, 2, 2]] * 12)  # 180 votes


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cold cache folder of the kernels, the background compile on and recorded (not run),
    and ENGINE="auto" giving numba from 180 votes: ``cache.path``, ``cache.launches`` (the
    folders of the compiles started), ``cache.warm()`` (writes the marker)."""
    launches = []
    monkeypatch.setattr(kernels, "ENGINE", "auto")
    monkeypatch.setattr(kernels, "BACKGROUND_COMPILE", True)
    monkeypatch.setattr(_common, "AUTO_NUMBA_MIN_VOTES", 180)
    monkeypatch.setattr(_compile, "_state", {"ready": False, "launched": False})
    monkeypatch.setattr(_compile, "cache_dir", lambda: str(tmp_path))
    monkeypatch.setattr(_compile, "launch", lambda folder: launches.append(folder))
    return SimpleNamespace(path=tmp_path, launches=launches, warm=lambda: (
        tmp_path / _compile.MARKER).write_text(json.dumps(_compile.cache_key())))


@pytest.fixture
def numba_passes(monkeypatch):
    """The number of calls of numba's Dawid-Skene pass (a list that grows by one a call)."""
    seen = []
    numba_pass = kernels.dawid_skene._ds_chunks_serial

    def spy(*args):
        seen.append(1)
        return numba_pass(*args)

    monkeypatch.setattr(kernels.dawid_skene, "_ds_chunks_serial", spy)
    return seen


def test_cold_cache_runs_numpy_and_starts_one_compile(cache, numba_passes):
    cold = [DawidSkene().fit(VOTES).predict_proba(VOTES) for _ in range(2)]
    assert not numba_passes  # numpy: nothing compiled on the user's clock
    assert cache.launches == [str(cache.path)]  # one background compile for the process
    assert kernels.engine_for_votes(10**9) == "numpy" and cache.launches == [str(cache.path)]
    cache.warm()  # the background compile wrote its marker
    warm = DawidSkene().fit(VOTES).predict_proba(VOTES)
    assert numba_passes  # numba, loaded from the cache
    assert cache.launches == [str(cache.path)]
    np.testing.assert_array_equal(cold[0], cold[1])
    np.testing.assert_allclose(warm, cold[0], rtol=1e-10, atol=1e-12)
    assert kernels.engine_for_votes(179) == "numpy"  # below the threshold, as before


def test_a_model_whose_numpy_fit_is_slower_than_compiling_compiles(cache, monkeypatch):
    """EBCC (numpy_while_cold=False) runs numba on a cold cache, and the background compile of
    the other kernels starts all the same."""
    from skcrowd.aggregation import EBCC

    assert EBCC._numpy_while_cold is False and DawidSkene._numpy_while_cold is True
    with kernels.fit_engine(10**9, numpy_while_cold=False):
        assert _common._engine() == "numba"
    assert cache.launches == [str(cache.path)]
    with kernels.fit_engine(10**9):
        assert _common._engine() == "numpy"
    assert cache.launches == [str(cache.path)]


def test_switched_off_compiles_at_the_first_call(cache, numba_passes, monkeypatch):
    monkeypatch.setattr(kernels, "BACKGROUND_COMPILE", False)
    DawidSkene().fit(VOTES)
    assert numba_passes and not cache.launches


def test_without_a_writable_cache_auto_keeps_numpy(cache, numba_passes, monkeypatch):
    monkeypatch.setattr(_compile, "cache_dir", lambda: None)  # numba compiles in every process
    DawidSkene().fit(VOTES)
    assert not numba_passes and not cache.launches


def test_explicit_engines_ignore_the_cache(cache, monkeypatch):
    for engine in ("numba", "numpy"):
        monkeypatch.setattr(kernels, "ENGINE", engine)
        assert kernels.engine_for_votes(10**9) == engine
    assert not cache.launches


def test_the_marker_must_match_the_kernels(cache, monkeypatch):
    assert not _compile.is_warm()
    cache.warm()
    assert _compile.is_warm()
    key = _compile.cache_key()
    for change in [{"numba": "0.1"}, {"cpu": "generic"},
                   {"sources": {**key["sources"], "glad.py": [0, 1]}}]:
        (cache.path / _compile.MARKER).write_text(json.dumps({**key, **change}))
        assert not _compile.is_warm()
    (cache.path / _compile.MARKER).write_text("{not json")
    assert not _compile.is_warm()


@pytest.mark.parametrize("value, on", [("1", True), ("", True), ("0", False), ("off", False),
                                       (" False ", False), ("no", False)])
def test_the_environment_variable_sets_the_default(value, on, monkeypatch):
    monkeypatch.setenv("SKCROWD_BACKGROUND_COMPILE", value)
    assert _compile.background_default() is on


def _reaped(process, timeout=30.0):
    """Whether ``process`` exited and was waited for by the launch's thread (not a zombie)."""
    stop = time.monotonic() + timeout
    while process.returncode is None and time.monotonic() < stop:
        time.sleep(0.02)
    try:
        os.waitpid(process.pid, os.WNOHANG)
    except ChildProcessError:  # no such child left
        return process.returncode == 0
    return False


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process handling")
def test_launch_takes_the_lock_once_and_leaves_no_zombie(tmp_path):
    release = tmp_path / "release"
    command = [sys.executable, "-c", "import pathlib, sys, time\n"
               f"while not pathlib.Path({str(release)!r}).exists(): time.sleep(0.02)\n"
               "pathlib.Path(sys.argv[1]).unlink()"]
    process = _compile.launch(tmp_path, command)
    lock = tmp_path / _compile.LOCK
    assert process is not None and lock.exists()
    assert _compile.launch(tmp_path, command) is None  # a compile is running
    release.touch()
    assert _reaped(process)
    assert not lock.exists()
    lock.touch()
    os.utime(lock, (0, 0))  # a lock left by a compile that died long ago
    process = _compile.launch(tmp_path, [sys.executable, "-c", "import pathlib, sys; "
                                         "pathlib.Path(sys.argv[1]).unlink()"])
    assert process is not None and _reaped(process) and not lock.exists()


def test_launch_into_an_unwritable_folder_starts_nothing(tmp_path):
    assert _compile.launch(tmp_path / "missing", [sys.executable, "-c", "pass"]) is None
    assert not (tmp_path / "missing").exists()


@pytest.mark.slow
def test_background_compile_fills_the_cache_for_every_model(tmp_path):
    """The real thing in a fresh numba cache: a first fit runs numpy and starts the compile;
    once its marker is written, a fresh process (two numba threads, the compile had one) runs
    numba under ENGINE="auto" and fits every aggregator as the compile did without compiling
    anything: every kernel is loaded from the cache. (benchmarks/first_fit.py checks the same
    of fits of 1e6 votes: its ``jit`` column.)"""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "SKCROWD_BACKGROUND_COMPILE": "1",
           "PYTHONPATH": str(REPO)}
    first = (
        "import numpy as np\n"
        "from skcrowd.aggregation import DawidSkene, kernels\n"
        "from skcrowd.aggregation.kernels import _common, _compile\n"
        "_common.AUTO_NUMBA_MIN_VOTES = 10\n"
        "DawidSkene().fit(np.array([[0, 0, 1], [1, 1, 0], [0, 1, 1]] * 5))\n"
        "print(_compile._state['launched'], _compile._state['ready'])\n"
    )
    out = subprocess.run([sys.executable, "-c", first], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["True", "False"]
    stop = time.monotonic() + 1800
    while time.monotonic() < stop and (not list(tmp_path.glob(f"*/{_compile.MARKER}"))
                                       or list(tmp_path.glob(f"*/{_compile.LOCK}"))):
        time.sleep(2)  # the compile writes its marker, then removes its lock
    assert list(tmp_path.glob(f"*/{_compile.MARKER}"))
    assert not list(tmp_path.glob(f"*/{_compile.LOCK}"))
    later = (
        "import numpy as np\n"
        "from skcrowd.aggregation import DawidSkene, kernels\n"
        "from skcrowd.aggregation.kernels import _common, _compile\n"
        "_common.AUTO_NUMBA_MIN_VOTES = 10\n"
        "DawidSkene().fit(np.array([[0, 0, 1], [1, 1, 0], [0, 1, 1]] * 5))\n"
        "ready = _compile._state['ready']\n"
        "_compile.compile_kernels()  # every aggregator's fits again, in this new process\n"
        "misses = sum(sum(d.stats.cache_misses.values()) for m in vars(kernels).values()"
        " if getattr(m, '__name__', '').startswith(kernels.__name__ + '.')"
        " for d in vars(m).values() if hasattr(d, 'stats'))\n"
        "print(ready, misses)\n"
    )
    out = subprocess.run([sys.executable, "-c", later], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["True", "0"]
