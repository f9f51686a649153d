"""Which source holds the votes ``X`` of an aggregator: in memory, out of core or Dask.

Votes matrices (numpy, scipy.sparse, pandas) are validated by the estimators themselves
(:func:`skcrowd.check_votes`); this module opens *long-format* votes: a parquet path, a
:class:`pyarrow.dataset.Dataset`, a ``dask.dataframe``, or a source built beforehand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._optional import import_optional
from ._blocks import MemoryVotes
from ._dask import DaskVotes, is_dask_frame
from ._outofcore import OutOfCoreVotes

BACKENDS = ("auto", "memory", "outofcore", "dask")
SOURCES = (MemoryVotes, OutOfCoreVotes, DaskVotes)


def _is_dataset(X):
    return any(c.__module__.startswith("pyarrow") and c.__name__ == "Dataset"
               for c in type(X).__mro__)


def is_long_format(X) -> bool:
    """Whether ``X`` is long-format votes (path, dataset, dask DataFrame) or a votes source."""
    return (isinstance(X, (str, Path, *SOURCES)) or _is_dataset(X) or is_dask_frame(X))


def open_votes(X, backend="auto", *, classes=None, n_classes=None, worker_ids=None, name="X"):
    """The votes source of long-format ``X``, and whether the caller must close it.

    Parameters
    ----------
    X : str, Path, pyarrow.dataset.Dataset, dask.dataframe.DataFrame or a votes source
        Long-format votes (columns ``task``, ``worker``, ``label``), or a
        :class:`~skcrowd.backends.MemoryVotes`, :class:`~skcrowd.backends.OutOfCoreVotes` or
        :class:`~skcrowd.backends.DaskVotes` built beforehand.
    backend : {"auto", "memory", "outofcore", "dask"}, default="auto"
        "auto": a path or dataset is read out of core, a dask DataFrame runs on Dask.
        "memory" reads the votes into memory; "dask" runs a path on Dask.
    classes, n_classes, worker_ids
        Known classes / number of classes / worker ids (at predict time, the fitted ones).
    name : str, default="X"
        Name of the argument in error messages.

    Returns
    -------
    source : MemoryVotes, OutOfCoreVotes or DaskVotes
    owned : bool
        True when the source was opened here (close it after use).
    """
    if isinstance(X, SOURCES):
        if backend not in ("auto", _kind(X)):
            raise ValueError(f"backend={backend!r} but {name} is a {type(X).__name__}.")
        _check_known(X, classes, worker_ids, name)
        return X, False
    kwargs = {"classes": classes, "n_classes": n_classes, "worker_ids": worker_ids, "name": name}
    if is_dask_frame(X):
        if backend in ("auto", "dask"):
            return DaskVotes(X, **kwargs), True
        if backend == "memory":
            return MemoryVotes.from_blocks(DaskVotes(X, **kwargs)), True
        raise ValueError(f"backend={backend!r} reads parquet paths or datasets; {name} is a "
                         "dask DataFrame: use backend='dask' or 'memory'.")
    if backend == "dask":
        dd = import_optional("dask.dataframe", "backend='dask'")

        files = X.files if _is_dataset(X) else str(X)
        return DaskVotes(dd.read_parquet(files), **kwargs), True
    source = OutOfCoreVotes(X, **kwargs)
    if backend == "memory":
        with source:
            return MemoryVotes.from_blocks(source), True
    return source, True


def _kind(source):
    return {MemoryVotes: "memory", OutOfCoreVotes: "outofcore", DaskVotes: "dask"}[type(source)]


def _check_known(source, classes, worker_ids, name):
    """A source built beforehand must use the fitted classes and workers."""
    for what, known, have in (("classes", classes, source.classes),
                              ("worker ids", worker_ids, source.worker_ids)):
        if known is not None and (len(known) != len(have) or np.any(np.asarray(known) != have)):
            raise ValueError(
                f"{name} was encoded with other {what} than the fitted ones; build it with "
                f"{'classes=est.classes_' if what == 'classes' else 'worker_ids=est.worker_ids_'}."
            )
