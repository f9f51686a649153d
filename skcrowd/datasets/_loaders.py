"""Loader of crowd datasets stored in skcrowd's folder layout.

A dataset folder holds

- ``votes.csv``: ``task,worker,label``, integer ids from 0, one row per vote
  (required);
- ``truth.csv``: ``task,label`` gold labels of the tasks that have one;
- ``tasks.csv``, ``workers.csv``: ``task,original_id`` and
  ``worker,original_id``; ``labels.csv``: ``label,original_label``;
- ``stats.json``: counts and descriptions (``class_names``, ``notes``);
- optional features ``features_<name>_{train,valid,test}.npy`` (rows of
  ``train`` in task order) and gold labels ``labels_{valid,test}.npy`` of the
  held-out splits.

Files are read with the csv module and numpy only (never with pickle).
"""

from __future__ import annotations

import csv
import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

__all__ = ["load_crowd_dataset"]

_SPLITS = ("train", "valid", "test")
_FEATURES_RE = re.compile(r"^features(?:_(?P<name>.+))?_train\.npy$")
_INTEGER_RE = re.compile(r"[+-]?[0-9]+")


def as_ints_if_possible(values):
    """String values as an int64 array if every one is written as an integer, else as str.

    Only plain decimal integers count (``int()`` would also read ``"6_11"`` as
    611 and ``" 7"`` as 7, merging distinct ids).
    """
    values = np.asarray(values, dtype=str)
    if not all(_INTEGER_RE.fullmatch(v) for v in values):
        return values
    try:
        return np.array([int(v) for v in values], dtype=np.int64)
    except OverflowError:
        return values


def _read_header(path):
    with open(path, newline="") as f:
        header = f.readline()
    columns = [c.strip() for c in header.strip().split(",")]
    return columns


def _read_int_table(path, columns):
    """Integer columns of a CSV file with a header, as a dict of int64 arrays."""
    if not path.is_file():
        raise FileNotFoundError(f"crowd dataset file {path} is missing.")
    header = _read_header(path)
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(
            f"{path.name} has columns {header}; expected {', '.join(columns)} "
            f"(missing: {', '.join(missing)})."
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "input contained no data"
        try:
            table = np.loadtxt(
                path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2,
                usecols=[header.index(c) for c in columns],
            )
        except ValueError as exc:
            raise ValueError(f"{path.name}: every value must be an integer id: {exc}") from exc
    return {c: table[:, i] for i, c in enumerate(columns)}


def _read_id_table(path, key):
    """``<key>,original_id`` CSV as an array of original ids indexed by ``key``.

    None when the file is absent.
    """
    if not path.is_file():
        return None
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = [c.strip() for c in rows[0]] if rows else []
    if len(header) < 2 or header[0] != key:
        raise ValueError(f"{path.name} must start with a header '{key},<original id>'.")
    ids, originals = [], []
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        try:
            ids.append(int(row[0]))
            originals.append(row[1])
        except (ValueError, IndexError) as exc:
            raise ValueError(
                f"{path.name} line {line}: expected '<integer {key} id>,<original id>', "
                f"got {','.join(row)!r}."
            ) from exc
    ids = np.asarray(ids, dtype=np.int64)
    if not np.array_equal(np.sort(ids), np.arange(len(ids))):
        raise ValueError(f"the {key} ids of {path.name} must be 0 .. {len(ids) - 1}, each once.")
    out = np.empty(len(ids), dtype=object)
    out[ids] = originals
    return as_ints_if_possible(out)


def _n_ids(table, stated, *columns):
    """Number of ids 0 .. n-1: the id table's length, else ``stated``, else the largest id + 1."""
    if table is not None:
        return len(table)
    if stated is not None:
        return int(stated)
    return int(max(col.max(initial=-1) for col in columns)) + 1


def _check_ids(values, n, what, path):
    bad = (values < 0) | (values >= n)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{path.name} line {i + 2}: {what} {int(values[i])} is outside 0 .. {n - 1}."
        )


def _class_names(stats, labels_csv, n_classes):
    names = stats.get("class_names")
    if isinstance(names, dict):
        names = [names.get(str(k), str(k)) for k in range(n_classes)]
        names = ["/".join(n) if isinstance(n, list) else str(n) for n in names]
    if names is not None and len(names) == n_classes:
        return np.asarray(names, dtype=str)
    if labels_csv is not None:
        return np.asarray(labels_csv, dtype=str)
    return np.arange(n_classes).astype(str)


def _feature_name(folder, features):
    if features is None:
        return None
    found = sorted(
        m.group("name") or "" for f in folder.glob("features*_train.npy")
        if (m := _FEATURES_RE.match(f.name))
    )
    if features == "auto":
        if len(found) > 1:
            raise ValueError(
                f"{folder} holds several feature sets {found}; choose one with features=<name>."
            )
        return found[0] if found else None
    if features not in found:
        raise FileNotFoundError(
            f"features {features!r} not found in {folder}: no file "
            f"features_{features}_train.npy (feature sets there: {found})."
        )
    return features


def _load_npy(path):
    return np.load(path, allow_pickle=False)


def load_crowd_dataset(path, *, features="auto", sparse=False, data_home=None,
                       download_if_missing=True):
    """Load a crowd dataset from a folder, or by name: votes, gold labels, features if present.

    ``path`` is a folder in skcrowd's layout (``votes.csv``, ``truth.csv``,
    ``tasks.csv``, ``workers.csv``, ``labels.csv``, ``stats.json``,
    ``features_<name>_<split>.npy``, ``labels_<split>.npy``, described in the
    module documentation of ``skcrowd.datasets._loaders``; only ``votes.csv``
    is required), or the name of a public crowd of
    :func:`~skcrowd.datasets.list_crowd_datasets`, which is then fetched as by
    :func:`~skcrowd.datasets.fetch_crowd_dataset` (read from ``data_home``,
    downloaded and converted there if absent). An existing folder wins over a
    name. Scripts that take ``--data DIR`` accept dataset names this way.

    Parameters
    ----------
    path : str or path-like
        The dataset folder, or a dataset name such as ``"zhang2014_dog"``.
    features : "auto", str or None, default="auto"
        Which feature set ``features_<name>_*.npy`` to load: ``"auto"`` loads
        the only one present (none is fine, several raise), a name picks one,
        None loads no features.
    sparse : bool, default=False
        Return ``votes`` as a ``scipy.sparse.csr_array`` whose stored entries
        (explicit zeros included) are the votes, instead of a dense array;
        use it for large crowds.
    data_home : str or path-like, default=None
        Only for a dataset name: where fetched datasets are stored (see
        :func:`~skcrowd.datasets.get_data_home`).
    download_if_missing : bool, default=True
        Only for a dataset name: download the dataset when it is not in
        ``data_home``; when False, raise an ``OSError`` instead.

    Returns
    -------
    sklearn.utils.Bunch
        With attributes

        votes : ndarray of shape (n_tasks, n_workers) or csr_array
            Class index of each vote, -1 where a worker did not vote.
        target : ndarray of shape (n_tasks,)
            Gold class index of each task, -1 where there is no gold label.
        target_mask : ndarray of shape (n_tasks,) of bool
            Which tasks have a gold label.
        data : ndarray of shape (n_tasks, n_features) or None
            Features of the crowd-labelled tasks.
        data_valid, target_valid, data_test, target_test : ndarray or None
            Features and gold class indices of held-out splits, where present.
        class_names : ndarray of shape (n_classes,) of str
            Name of each class index.
        task_ids, worker_ids : ndarray
            Original id of each task and worker (int when all ids are ints).
        stats : dict
            The content of ``stats.json`` (empty when absent).
        DESCR : str
            Description of the dataset.

    Raises
    ------
    FileNotFoundError
        If the folder (and no dataset of that name), ``votes.csv`` or a
        requested feature set is missing.
    ValueError
        If a file does not follow the layout, naming the file and the line.
    OSError
        If a named dataset cannot be downloaded (see
        :func:`~skcrowd.datasets.fetch_crowd_dataset`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from skcrowd.datasets import load_crowd_dataset
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "votes.csv").write_text("task,worker,label\\n0,0,1\\n0,1,1\\n1,1,0\\n")
    >>> _ = (folder / "truth.csv").write_text("task,label\\n0,1\\n")
    >>> ds = load_crowd_dataset(folder)
    >>> ds.votes
    array([[ 1,  1],
           [-1,  0]])
    >>> ds.target, ds.target_mask
    (array([ 1, -1]), array([ True, False]))

    By name (downloaded into ``data_home`` on first use):

    >>> dog = load_crowd_dataset("zhang2014_dog")  # doctest: +SKIP
    >>> dog.votes.shape  # doctest: +SKIP
    (807, 109)
    """
    folder = Path(path)
    if not folder.is_dir():
        from ._fetchers import CROWD_DATASETS, load_fetched

        if isinstance(path, str) and path in CROWD_DATASETS:
            return load_fetched(path, data_home=data_home, features=features, sparse=sparse,
                                download_if_missing=download_if_missing)
        raise FileNotFoundError(
            f"crowd dataset folder {folder} does not exist"
            + (f", and {path!r} is not a dataset name (see list_crowd_datasets())."
               if isinstance(path, str) and os.sep not in path and "/" not in path else ".")
        )
    return read_crowd_folder(folder, features=features, sparse=sparse)


def read_crowd_folder(folder, *, features="auto", sparse=False):
    """The Bunch of :func:`load_crowd_dataset` for a folder in skcrowd's layout."""
    folder = Path(folder)
    votes_path = folder / "votes.csv"
    votes = _read_int_table(votes_path, ["task", "worker", "label"])
    if len(votes["task"]) == 0:
        raise ValueError(f"{votes_path.name} holds no votes.")
    truth_path = folder / "truth.csv"
    truth = (
        _read_int_table(truth_path, ["task", "label"]) if truth_path.is_file()
        else {"task": np.zeros(0, np.int64), "label": np.zeros(0, np.int64)}
    )
    stats_path = folder / "stats.json"
    stats = json.loads(stats_path.read_text()) if stats_path.is_file() else {}

    task_ids = _read_id_table(folder / "tasks.csv", "task")
    worker_ids = _read_id_table(folder / "workers.csv", "worker")
    label_names = _read_id_table(folder / "labels.csv", "label")
    n_tasks = _n_ids(task_ids, None, votes["task"], truth["task"])
    n_workers = _n_ids(worker_ids, None, votes["worker"])
    n_classes = _n_ids(label_names, stats.get("n_classes"), votes["label"], truth["label"])
    for what, n in (("task", n_tasks), ("worker", n_workers), ("label", n_classes)):
        _check_ids(votes[what], n, what, votes_path)
    _check_ids(truth["task"], n_tasks, "task", truth_path)
    _check_ids(truth["label"], n_classes, "label", truth_path)

    t, w, lab = votes["task"], votes["worker"], votes["label"]
    key = t * n_workers + w
    _, first, count = np.unique(key, return_index=True, return_counts=True)
    if (count > 1).any():
        dup = np.flatnonzero(key == key[first[np.argmax(count > 1)]])
        raise ValueError(
            f"{votes_path.name} lines {(dup + 2).tolist()}: worker {int(w[dup[0]])} voted "
            f"more than once on task {int(t[dup[0]])}."
        )
    _, first, count = np.unique(truth["task"], return_index=True, return_counts=True)
    if (count > 1).any():
        task = int(truth["task"][first[np.argmax(count > 1)]])
        raise ValueError(f"{truth_path.name}: task {task} has more than one gold label.")

    if sparse:
        order = np.argsort(t, kind="stable")
        indptr = np.r_[0, np.cumsum(np.bincount(t, minlength=n_tasks))]
        votes_matrix = sp.csr_array((lab[order], w[order], indptr), shape=(n_tasks, n_workers))
    else:
        votes_matrix = np.full((n_tasks, n_workers), -1, dtype=np.int64)
        votes_matrix[t, w] = lab
    target = np.full(n_tasks, -1, dtype=np.int64)
    target[truth["task"]] = truth["label"]

    splits = {}
    name = _feature_name(folder, features)
    prefix = "features" if name in (None, "") else f"features_{name}"
    for split in _SPLITS:
        feat_path = folder / f"{prefix}_{split}.npy"
        X = _load_npy(feat_path) if name is not None and feat_path.is_file() else None
        lab_path = folder / f"labels_{split}.npy"
        y = _load_npy(lab_path) if split != "train" and lab_path.is_file() else None
        expected = n_tasks if split == "train" else (len(y) if y is not None else None)
        if X is not None and expected is not None and len(X) != expected:
            raise ValueError(
                f"{feat_path.name} has {len(X)} rows but the {split} split has {expected} "
                "tasks."
            )
        if y is not None:
            _check_ids(np.asarray(y, dtype=np.int64), n_classes, "label", lab_path)
        splits[split] = (X, y)

    description = [
        f"{stats.get('name', folder.name)}: {n_tasks} tasks, {n_workers} workers, "
        f"{n_classes} classes, {len(t)} votes, gold labels for {len(truth['task'])} tasks.",
    ]
    if stats.get("notes"):
        description.append(str(stats["notes"]))
    for readme in ("README.md", "README"):
        if (folder / readme).is_file():
            description.append((folder / readme).read_text())
    return Bunch(
        votes=votes_matrix,
        target=target,
        target_mask=target >= 0,
        data=splits["train"][0],
        data_valid=splits["valid"][0],
        target_valid=splits["valid"][1],
        data_test=splits["test"][0],
        target_test=splits["test"][1],
        class_names=_class_names(stats, label_names, n_classes),
        task_ids=task_ids if task_ids is not None else np.arange(n_tasks),
        worker_ids=worker_ids if worker_ids is not None else np.arange(n_workers),
        stats=stats,
        DESCR="\n\n".join(description),
    )
