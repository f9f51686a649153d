"""skcrowd's dataset folder layout: reading and writing a crowd dataset folder.

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

:func:`read_crowd_folder` reads one (the Bunch of
:func:`~skcrowd.datasets.load_crowd_dataset`); :func:`write_dataset` writes a
converted :class:`Crowd` into one, ``votes.csv`` last. Files are read with
the csv module and numpy only (never with pickle). This module imports no
other module of the package: the converters, the fetchers and the loader all
build on it.
"""

from __future__ import annotations

import csv
import json
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from ..votes import _as_ints_if_possible

__all__ = ["Crowd", "read_crowd_folder", "write_dataset"]

# ---------------------------------------------------------------------------
# Reading a folder
# ---------------------------------------------------------------------------

_SPLITS = ("train", "valid", "test")
_FEATURES_RE = re.compile(r"^features(?:_(?P<name>.+))?_train\.npy$")


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
    return _as_ints_if_possible(out)


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


# ---------------------------------------------------------------------------
# The converted crowd and its writer
# ---------------------------------------------------------------------------


@dataclass
class Crowd:
    """A converted crowd: votes as triplets of class indices, with the original ids.

    ``task``, ``worker``, ``label`` are int64 arrays sorted by task then
    worker, one vote per (task, worker); ``target`` holds the gold class of
    each task (-1: none). ``features`` maps a split (``train``, ``valid``,
    ``test``) to its rows (``train`` in task order) and ``held_out`` a split
    to its gold classes.
    """

    task: np.ndarray
    worker: np.ndarray
    label: np.ndarray
    task_ids: np.ndarray
    worker_ids: np.ndarray
    labels: np.ndarray
    target: np.ndarray
    n_duplicates: int = 0
    n_gold_dropped: int = 0
    class_names: list | None = None
    feature_name: str | None = None
    features: dict = field(default_factory=dict)
    held_out: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def crowd_stats(crowd):
    """Counts of a converted crowd, under the keys of the shared folders' ``stats.json``."""
    n_tasks, n_workers, n_classes = len(crowd.task_ids), len(crowd.worker_ids), len(crowd.labels)
    per_task = np.bincount(crowd.task, minlength=n_tasks)
    per_worker = np.bincount(crowd.worker, minlength=n_workers)
    gold = np.flatnonzero(crowd.target >= 0)
    counts = np.zeros((n_tasks, n_classes))
    np.add.at(counts, (crowd.task, crowd.label), 1)
    scored = gold[per_task[gold] > 0]
    winners = counts[scored] == counts[scored].max(axis=1, keepdims=True)
    credit = winners[np.arange(len(scored)), crowd.target[scored]] / winners.sum(axis=1)
    return {
        "n_tasks": n_tasks,
        "n_tasks_with_votes": int((per_task > 0).sum()),
        "n_workers": n_workers,
        "n_classes": n_classes,
        "n_votes": len(crowd.task),
        "duplicate_task_worker_pairs_dropped": int(crowd.n_duplicates),
        "gold_labels_of_tasks_without_votes_dropped": int(crowd.n_gold_dropped),
        "votes_per_task_mean": round(float(per_task.mean()), 2),
        "votes_per_task_min": int(per_task.min()),
        "votes_per_task_median": float(np.median(per_task)),
        "votes_per_task_max": int(per_task.max()),
        "votes_per_worker_mean": round(float(per_worker.mean()), 2),
        "votes_per_worker_min": int(per_worker.min()),
        "votes_per_worker_max": int(per_worker.max()),
        "n_gold": len(gold),
        "gold_class_counts": np.bincount(crowd.target[gold], minlength=n_classes).tolist(),
        # ties count as a uniform random pick among the tied classes (tasks with votes)
        "mv_accuracy_random_ties": round(float(credit.mean()), 4) if len(scored) else None,
    }


def _write_ids(path, key, header, ids):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow([key, header])
        writer.writerows(enumerate(ids))


def _write_ints(path, header, *columns):
    table = np.column_stack(columns) if len(columns[0]) else np.zeros((0, len(header)), int)
    np.savetxt(path, table, fmt="%d", delimiter=",", header=",".join(header), comments="")


def write_dataset(folder, crowd, *, name, sources):
    """Write ``crowd`` into ``folder`` in skcrowd's layout; ``votes.csv`` last, atomically.

    ``votes.csv`` marks a complete conversion: it is written into a
    temporary file renamed into place once every other file is written, so an
    interrupted conversion leaves no ``votes.csv`` and is converted again by
    the next call. Returns the ``stats.json`` content.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    _write_ids(folder / "tasks.csv", "task", "original_id", crowd.task_ids)
    _write_ids(folder / "workers.csv", "worker", "original_id", crowd.worker_ids)
    _write_ids(folder / "labels.csv", "label", "original_label", crowd.labels)
    gold = np.flatnonzero(crowd.target >= 0)
    _write_ints(folder / "truth.csv", ["task", "label"], gold, crowd.target[gold])
    for split, X in crowd.features.items():
        np.save(folder / f"features_{crowd.feature_name}_{split}.npy", X, allow_pickle=False)
    for split, y in crowd.held_out.items():
        np.save(folder / f"labels_{split}.npy", np.asarray(y, dtype=np.int64), allow_pickle=False)
    class_names = list(crowd.class_names or [str(c) for c in crowd.labels])
    notes = [
        *crowd.notes,
        f"Duplicate (task, worker) votes dropped: {crowd.n_duplicates} (a worker's first answer "
        "to a task is kept).",
        "Classes: " + ", ".join(f"{k} = {c}" for k, c in enumerate(class_names)) + ".",
    ]
    if crowd.n_gold_dropped:
        notes.insert(-1, f"Gold labels of {crowd.n_gold_dropped} tasks without votes dropped.")
    stats = {"name": name, **crowd_stats(crowd), "class_names": class_names,
             "source_files": list(sources), "notes": " ".join(notes)}
    (folder / "stats.json").write_text(json.dumps(stats, indent=1))
    part = folder / f".votes.csv.{os.getpid()}.part"
    try:
        _write_ints(part, ["task", "worker", "label"], crowd.task, crowd.worker, crowd.label)
        os.replace(part, folder / "votes.csv")
    finally:
        part.unlink(missing_ok=True)
    return stats
