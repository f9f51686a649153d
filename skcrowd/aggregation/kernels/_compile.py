"""numba's compilation off the user's clock: the kernels compiled in a background process.

numba compiles a kernel at its first call and keeps it in an on-disk cache (``_common._jit``);
after an install that cache is empty, and a first fit on numba would compile every kernel it
calls (seconds to tens of seconds) before it starts. ``ENGINE="auto"`` therefore gives a fit of
``AUTO_NUMBA_MIN_VOTES`` votes or more numba only once the kernels are in the cache
(:func:`numba_ready`); until then the fit runs the numpy engine, and the first such fit of the
process starts one background process that compiles the kernels into the cache (:func:`main`:
every aggregator fitted with the numba engine on four small simulated crowds, at the lowest
priority; about 2.5 minutes of CPU on the project's machine) and then writes a marker file
there. Later fits, in this process or the next, find the marker and run numba, loading the
kernels from disk. A model whose numpy fit takes longer than compiling (EBCC,
``_numpy_while_cold = False``) runs numba and compiles in its fit, starting the background
compile all the same.

The marker (``skcrowd-kernels.json`` in numba's cache folder of the kernels) records what
numba's cache depends on: the versions of numba and Python, the CPU numba compiles for, and
the size and modification time of each kernel source file; any change makes the cache cold
again. A lock file beside it (``skcrowd-compile.lock``, taken with ``O_EXCL``, stale after an
hour) keeps concurrent processes from starting a second compile; a daemon thread waits for the
background process, so none is left as a zombie, and the process runs in its own session, so
it finishes the compile if the user's process exits first. Where no cache folder is writable
(numba then compiles in every process), ``ENGINE="auto"`` keeps numpy.

The package attribute ``BACKGROUND_COMPILE`` (default: the environment variable
``SKCROWD_BACKGROUND_COMPILE``, on unless it is ``0``, ``false``, ``no`` or ``off``) turns this
off: ``ENGINE="auto"`` then runs numba from ``AUTO_NUMBA_MIN_VOTES`` votes whatever the cache
holds, compiling at the first call as before. The test suite turns it off (``conftest.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import _common

MARKER = "skcrowd-kernels.json"
LOCK = "skcrowd-compile.lock"
_STALE_LOCK_S = 3600  # a lock older than this is left by a compile that died
_OFF = ("0", "false", "no", "off")
_ITERATIONS = 5  # of each fit of the compile: every kernel runs, the smoothing's choice too
_state = {"ready": False, "launched": False}  # this process: cache found warm, compile started


def background_default():
    """``BACKGROUND_COMPILE``'s default: the environment variable ``SKCROWD_BACKGROUND_COMPILE``
    (on unless it is ``0``, ``false``, ``no`` or ``off``)."""
    return os.environ.get("SKCROWD_BACKGROUND_COMPILE", "1").strip().lower() not in _OFF


def cache_dir():
    """numba's on-disk cache folder of the kernels (all of them share one), None where none is
    writable."""
    return getattr(_common._row_argmax_serial._cache, "_cache_path", None)


def cache_key():
    """What numba's cache of the kernels depends on (the marker's content)."""
    import llvmlite.binding as llvm
    from numba.core import config

    sources = sorted(Path(__file__).parent.glob("*.py"))
    return {
        "numba": _common.numba.__version__,
        "python": sys.version,
        "cpu": config.CPU_NAME or llvm.get_host_cpu_name(),
        "cpu_features": config.CPU_FEATURES or "",
        "sources": {p.name: [p.stat().st_mtime_ns, p.stat().st_size] for p in sources},
    }


def is_warm(folder=None):
    """Whether the marker of a finished compile of the current kernels is in ``folder``
    (default: :func:`cache_dir`)."""
    folder = cache_dir() if folder is None else folder
    if folder is None:
        return False
    try:
        return json.loads((Path(folder) / MARKER).read_text()) == cache_key()
    except (OSError, ValueError):
        return False


def numba_ready():
    """Whether ``ENGINE="auto"`` may give a fit numba now without compiling on the user's clock.

    True when ``BACKGROUND_COMPILE`` is off (numba compiles at the first call, as before) or
    the kernels are in numba's cache (:func:`is_warm`); otherwise starts the background compile
    (once per process, :func:`launch`) and returns False: the fit runs numpy.
    """
    if not sys.modules[__package__].BACKGROUND_COMPILE or _state["ready"]:
        return True
    folder = cache_dir()
    if folder is None:
        return False
    if is_warm(folder):
        _state["ready"] = True
        return True
    if not _state["launched"]:
        _state["launched"] = True
        launch(folder)
    return False


def _take_lock(lock):
    """Create ``lock`` (exclusively); False when another compile holds it or it cannot be."""
    try:
        if time.time() - lock.stat().st_mtime < _STALE_LOCK_S:
            return False
        lock.unlink()  # left by a compile that died
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:  # taken meanwhile, or a read-only folder
        return False
    return True


def launch(folder, command=None):
    """Start the background compile into ``folder``, unless one holds its lock.

    ``command`` (default: this module's :func:`main` in the running interpreter, with
    skcrowd's own folder first on its path) runs with the lock's path as its last argument and
    removes the lock when done. Returns the process (None when none was started); a daemon
    thread waits for it, so it never stays a zombie.
    """
    lock = Path(folder) / LOCK
    if not sys.executable or not _take_lock(lock):
        return None
    if command is None:
        root = str(Path(__file__).resolve().parents[3])
        command = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                   "from skcrowd.aggregation.kernels._compile import main; main(sys.argv[2])",
                   root]
    env = {**os.environ, "SKCROWD_BACKGROUND_COMPILE": "0", "NUMBA_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1"}
    try:
        process = subprocess.Popen([*command, str(lock)], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env=env, start_new_session=True, close_fds=True)
    except OSError:
        lock.unlink(missing_ok=True)
        return None
    threading.Thread(target=process.wait, name="skcrowd-compile-wait", daemon=True).start()
    return process


def _crowds():
    """The simulated crowds whose fits compile every kernel a fit of ``AUTO_NUMBA_MIN_VOTES``
    votes or more may call: parallel passes with fused count tables (K=4 and K=2, 1000
    workers, per-worker tables small enough for the serial table kernels), parallel passes
    summing in worker order with parallel table kernels (40000 workers), and the serial
    passes of small blocks (an out-of-core fit's)."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    large = 2 * _common.PARALLEL_MIN_VOTES
    for n_votes, n_workers, K in [(large, 1000, 4), (large, 40000, 4), (large, 1000, 2),
                                  (3000, 60, 3)]:
        n_tasks = n_votes // 5
        truth = rng.integers(K, size=n_tasks)
        task = np.repeat(np.arange(n_tasks), 5)
        worker = (task * 7 + np.tile(np.arange(5), n_tasks) * 13) % n_workers
        right = rng.random(n_votes) < rng.uniform(0.5, 0.95, n_workers)[worker]
        label = np.where(right, truth[task], rng.integers(K, size=n_votes))
        yield sp.coo_array((label, (task, worker)), shape=(n_tasks, n_workers))


def compile_kernels():
    """Compile (or load) every kernel: each aggregator of ``skcrowd.aggregation`` (but the
    selector, whose candidates are among them) fitted with its defaults (``max_iter=5``) and
    the numba engine on each of :func:`_crowds`. A fit that fails (KOS refuses more than two
    classes) skips to the next: the compile is a best effort, and whatever it missed compiles
    at its first call."""
    import warnings

    from skcrowd.aggregation import AggregatorSelector
    from skcrowd.utils.discovery import all_estimators

    package = sys.modules[__package__]
    package.ENGINE = "numba"
    models = [cls for _, cls in all_estimators("aggregator") if cls is not AggregatorSelector]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for votes in _crowds():
            for cls in models:
                model = cls()
                if "max_iter" in model.get_params():  # compiling takes one iteration
                    model.set_params(max_iter=_ITERATIONS)
                try:
                    model.fit(votes)
                except Exception:  # noqa: BLE001 - see the docstring
                    continue


def main(lock):
    """The background compile: at the lowest priority, :func:`compile_kernels`, then the marker
    (written whole, then renamed); removes ``lock`` in any case."""
    try:
        if hasattr(os, "nice"):
            os.nice(19)
        compile_kernels()
        folder = Path(cache_dir())
        partial = folder / f"{MARKER}.{os.getpid()}"
        partial.write_text(json.dumps(cache_key()))
        os.replace(partial, folder / MARKER)
    finally:
        Path(lock).unlink(missing_ok=True)
