"""The background compile of numba's kernels (see ``skcrowd.aggregation.kernels._compile``):
the job that the background process runs, every aggregator fitted with the numba engine.

It lives with the aggregators, not with the kernels, since it fits the models: the kernels'
layer only launches it (by module name, in a new interpreter) and reads the marker it writes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .kernels import _common, _compile

_ITERATIONS = 5  # of each fit of the compile: every kernel runs, the smoothing's choice too


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

    from . import AggregatorSelector, __all__, kernels
    from ._base import BaseAggregator

    kernels.ENGINE = "numba"
    package = sys.modules[__package__]
    models = [cls for cls in (getattr(package, name) for name in sorted(__all__))
              if isinstance(cls, type) and issubclass(cls, BaseAggregator)
              and cls not in (AggregatorSelector, BaseAggregator)]
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
        folder = Path(_compile.cache_dir())
        partial = folder / f"{_compile.MARKER}.{os.getpid()}"
        partial.write_text(json.dumps(_compile.cache_key()))
        os.replace(partial, folder / _compile.MARKER)
    finally:
        Path(lock).unlink(missing_ok=True)
