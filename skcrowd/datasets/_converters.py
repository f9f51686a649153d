"""Converters of the public crowds' source files into skcrowd's dataset-folder layout.

One reader per published format, each returning a
:class:`~skcrowd.datasets._folder.Crowd` (votes as integer triplets, original
ids, gold labels, features), which one writer,
:func:`~skcrowd.datasets._folder.write_dataset`, writes into a dataset folder.
The rules every converter follows:

- **ids**: tasks, workers and classes are numbered from 0 in the order of
  their original ids, numerically when every id is an integer (``"2" <
  "10"``), as strings otherwise; ``tasks.csv``, ``workers.csv`` and
  ``labels.csv`` map each number back to its original id. The classes are
  the labels that occur in the votes or the gold labels, unless the format
  fixes them (1-based class numbers, a published list of class names).
- **duplicates**: when a worker answered a task more than once, the first
  answer in file order is kept; how many were dropped is recorded in
  ``stats.json`` and in the dataset's description.
- **gold labels**: repeated gold labels of a task must agree (a conflict is
  an error naming both lines); gold labels of tasks that no worker voted on
  are dropped and counted, except in formats where every task is listed with
  its features (then the task is kept, without votes).
- **errors** name the file, the line and the value.
- **no pickle**: ``.npy`` files are read with ``allow_pickle=False``,
  archives member by member in memory, never extracted to disk.
"""

from __future__ import annotations

import csv
import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..votes import _as_ints_if_possible
from ._folder import Crowd


# ---------------------------------------------------------------------------
# From string records to a Crowd
# ---------------------------------------------------------------------------


@dataclass
class Records:
    """Rows read from one file: string columns by name, and the line each row was read on."""

    file: str
    line: np.ndarray
    columns: dict

    def __getitem__(self, column):
        return self.columns[column]

    def where(self, i):
        return f"{self.file} line {int(self.line[i])}"


def _records(file, rows, names):
    """:class:`Records` of ``(line, fields)`` rows whose fields are ``names`` in order."""
    columns = {n: np.array([r[i] for _, r in rows], dtype=str) for i, n in enumerate(names)}
    if not rows:
        columns = {n: np.zeros(0, dtype=str) for n in names}
    return Records(file, np.array([line for line, _ in rows], dtype=np.int64), columns)


def ordered_ids(values):
    """Distinct values in skcrowd's id order: numerically when all are integers, else as strings."""
    distinct = np.unique(np.asarray(values, dtype=str))
    as_ints = _as_ints_if_possible(distinct)
    if as_ints.dtype.kind == "i":
        distinct = distinct[np.argsort(as_ints, kind="stable")]
    return distinct


def _index(values, ids, records, what, among):
    """Position of each value in ``ids``; an error naming the line of the first unknown one."""
    lookup = {v: i for i, v in enumerate(ids)}
    out = np.array([lookup.get(v, -1) for v in values], dtype=np.int64)
    if (out < 0).any():
        i = int(np.argmax(out < 0))
        shown = [str(v) for v in ids] if len(ids) <= 12 else f"the {len(ids)} {among}"
        raise ValueError(f"{records.where(i)}: {what} {str(values[i])!r} is not one of {shown}.")
    return out


def build_crowd(votes, gold=None, *, tasks=None, classes=None, tasks_from=None):
    """A :class:`Crowd` from vote records (``task``, ``worker``, ``label``) and gold records.

    Parameters
    ----------
    votes : Records
        One row per vote.
    gold : Records, default=None
        ``task``, ``label`` rows; a task may repeat if its label agrees.
    tasks : array of str, default=None
        Every task, in order (e.g. the rows of a feature file): tasks without
        votes are kept, and a vote on another task is an error. Default: the
        voted tasks in id order, gold labels of other tasks dropped.
    classes : array of str, default=None
        The class labels in class-index order, when the format fixes them;
        a label outside is an error. Default: the labels of the votes and
        gold labels, in id order.
    tasks_from : str, default=None
        Where ``tasks`` come from, for errors.
    """
    gold_labels = gold["label"] if gold is not None else np.zeros(0, dtype=str)
    if classes is None:
        classes = ordered_ids(np.concatenate([votes["label"], gold_labels]))
    classes = np.asarray(classes, dtype=str)
    task_ids = ordered_ids(votes["task"]) if tasks is None else np.asarray(tasks, dtype=str)
    worker_ids = ordered_ids(votes["worker"])
    task = _index(votes["task"], task_ids, votes, "task", f"tasks of {tasks_from}")
    worker = _index(votes["worker"], worker_ids, votes, "worker", "workers")
    label = _index(votes["label"], classes, votes, "label", "classes")

    key = task * len(worker_ids) + worker
    _, first = np.unique(key, return_index=True)
    n_duplicates = len(key) - len(first)
    first = first[np.lexsort((worker[first], task[first]))]

    target = np.full(len(task_ids), -1, dtype=np.int64)
    gold_line = np.zeros(len(task_ids), dtype=np.int64)
    dropped = set()
    if gold is not None:
        lookup = {v: i for i, v in enumerate(task_ids)}
        gold_label = _index(gold["label"], classes, gold, "gold label", "classes")
        for i, (t, k) in enumerate(zip(gold["task"], gold_label)):
            j = lookup.get(str(t))
            if j is None:
                dropped.add(t)
            elif target[j] < 0:
                target[j], gold_line[j] = k, gold.line[i]
            elif target[j] != k:
                raise ValueError(
                    f"{gold.file} lines {int(gold_line[j])} and {int(gold.line[i])}: task "
                    f"{str(t)!r} has gold labels {str(classes[target[j]])!r} and "
                    f"{str(classes[k])!r}."
                )
    return Crowd(
        task=task[first], worker=worker[first], label=label[first], task_ids=task_ids,
        worker_ids=worker_ids, labels=classes, target=target, n_duplicates=int(n_duplicates),
        n_gold_dropped=len(dropped),
    )


# ---------------------------------------------------------------------------
# Reading text files
# ---------------------------------------------------------------------------


def read_text(path, notes=None):
    """Text of a file: UTF-8 (a BOM is skipped), else Latin-1 (recorded in ``notes``)."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        if notes is not None:
            notes.append(f"{Path(path).name} is not UTF-8: read as Latin-1.")
        return raw.decode("latin-1")


def _lines(text):
    """Lines of ``text`` split at LF, CRLF or CR (only those), without their endings."""
    return [line.rstrip("\r\n") for line in io.StringIO(text, newline="")]


def csv_rows(path, *, delimiter=",", header=True, text=None, name=None):
    """``(header, [(line, fields), ...])`` of a delimited file; blank rows skipped, fields stripped.

    Line endings LF, CRLF or CR; quoted fields as the csv module reads them.
    """
    name = name or Path(path).name
    text = read_text(path) if text is None else text
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows = []
    for fields in reader:
        if any(f.strip() for f in fields):
            rows.append((reader.line_num, [f.strip() for f in fields]))
    if header:
        if not rows:
            raise ValueError(f"{name} is empty: expected a header line.")
        return rows[0][1], rows[1:]
    return None, rows


def _require(rows, name, n_fields, layout, used=None):
    """Check that every row has at least ``n_fields`` fields, the ``used`` ones (default all)
    not empty."""
    for line, fields in rows:
        if len(fields) < n_fields or not all(
                fields[i] for i in (range(len(fields)) if used is None else used)):
            shown = ",".join(fields)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            raise ValueError(f"{name} line {line}: expected {layout}, got {shown!r}.")


def _column_indices(header, columns, name):
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"{name} has columns {header}; missing {', '.join(missing)}.")
    return [header.index(c) for c in columns]


def load_npy(path):
    """A plain numpy array from ``path``; pickled (object) arrays are refused."""
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(
            f"{Path(path).name} is not a plain numpy array ({exc}); skcrowd does not unpickle "
            "downloaded data."
        ) from exc


# ---------------------------------------------------------------------------
# zhang2014_*: whitespace-separated "task worker label", 1-based
# ---------------------------------------------------------------------------


def _positive_int_rows(path, n_fields, layout):
    name = Path(path).name
    rows = []
    for line, text in enumerate(_lines(read_text(path)), start=1):
        fields = text.split()
        if not fields:
            continue
        if len(fields) != n_fields or not all(f.isdigit() and int(f) > 0 for f in fields):
            raise ValueError(
                f"{name} line {line}: expected {layout} (positive integers), got {text!r}."
            )
        rows.append((line, [str(int(f)) for f in fields]))
    return rows


def convert_zhang2014(crowd_path, truth_path):
    """Votes of ``*_crowd.txt`` (``task worker label``), gold of ``*_truth.txt`` (``task label``).

    Whitespace-separated positive integers; labels are class numbers 1 .. K
    (K the largest label seen), so class index = label - 1. The truth file
    may repeat a task (with the same label) and may cover only some tasks.
    """
    votes = _records(Path(crowd_path).name,
                     _positive_int_rows(crowd_path, 3, "'task worker label'"),
                     ["task", "worker", "label"])
    gold = _records(Path(truth_path).name, _positive_int_rows(truth_path, 2, "'task label'"),
                    ["task", "label"])
    if not len(votes.line):
        raise ValueError(f"{votes.file} holds no votes.")
    n_classes = max(int(v) for v in np.concatenate([votes["label"], gold["label"]]))
    return build_crowd(votes, gold, classes=[str(k) for k in range(1, n_classes + 1)])


# ---------------------------------------------------------------------------
# act_*: "WorkerID,TaskID,WorkerLabel,GoldLabel[,seconds]", no header
# ---------------------------------------------------------------------------


def _gold_on_every_row(votes):
    """Gold records of vote records whose ``gold`` column repeats the task's gold label.

    An empty or negative gold field means "no gold label" on that row.
    """
    has_gold = [i for i, g in enumerate(votes["gold"])
                if not (g == "" or (g.startswith("-") and g[1:].isdigit()))]
    return Records(votes.file, votes.line[has_gold],
                   {"task": votes["task"][has_gold], "label": votes["gold"][has_gold]})


def convert_act(path):
    """Votes and gold labels of an Active Crowd Toolkit CSV.

    Rows ``WorkerID,TaskID,WorkerLabel,GoldLabel`` or with a fifth field
    (the answer's duration in seconds, not read); no header. A file's number
    of fields is that of its shortest row: a longer row holds commas inside
    its (unquoted) task id, which is rebuilt by joining the extra fields.
    The gold label is given on every row; empty or negative means none.
    """
    name = Path(path).name
    _, rows = csv_rows(path, header=False)
    if not rows:
        raise ValueError(f"{name} holds no votes.")
    n_fields = min(len(fields) for _, fields in rows)
    layout = "'WorkerID,TaskID,WorkerLabel,GoldLabel[,seconds]'"
    if n_fields not in (4, 5):
        line = next(line for line, fields in rows if len(fields) == n_fields)
        raise ValueError(f"{name} line {line}: {n_fields} fields, expected {layout}.")
    tail = n_fields - 2  # label, gold[, seconds]
    parsed = []
    for line, fields in rows:
        task = ",".join(fields[1:len(fields) - tail])
        worker, label, gold = fields[0], fields[len(fields) - tail], fields[len(fields) - tail + 1]
        if not (worker and task and label):
            raise ValueError(f"{name} line {line}: expected {layout}, got {','.join(fields)!r}.")
        parsed.append((line, [task, worker, label, gold]))
    votes = _records(name, parsed, ["task", "worker", "label", "gold"])
    return build_crowd(votes, _gold_on_every_row(votes))


# ---------------------------------------------------------------------------
# zheng_*: "question,worker,answer" and "question,truth", with a header
# ---------------------------------------------------------------------------


def convert_zheng(answer_path, truth_path):
    """Votes of ``answer.csv`` and gold labels of ``truth.csv`` (Zheng et al.'s benchmark).

    Columns by position (headers vary: ``question,worker,answer``,
    ``id,worker,answer``; ``question,truth``, ``q,truth``): the answer and the
    worker are the last two fields of a row, the task everything before
    (commas inside an unquoted task id are kept).
    """
    _, rows = csv_rows(answer_path)
    answer_name = Path(answer_path).name
    _require(rows, answer_name, 3, "'question,worker,answer'")
    if not rows:
        raise ValueError(f"{answer_name} holds no votes.")
    votes = _records(answer_name, [(line, [",".join(f[:-2]), f[-2], f[-1]]) for line, f in rows],
                     ["task", "worker", "label"])
    _, rows = csv_rows(truth_path)
    _require(rows, Path(truth_path).name, 2, "'question,truth'")
    gold = _records(Path(truth_path).name, [(line, [",".join(f[:-1]), f[-1]]) for line, f in rows],
                    ["task", "label"])
    return build_crowd(votes, gold)


# ---------------------------------------------------------------------------
# snow2008: all_collected_data.tgz, one "<task>.standardized.tsv" per task
# ---------------------------------------------------------------------------


def archive_member(archive, member):
    """Bytes of the member of a tar archive whose name ends with ``member`` (read in memory)."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            for info in tar:
                if info.isfile() and ("/" + info.name).endswith("/" + member):
                    return tar.extractfile(info).read()
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ValueError(f"{Path(archive).name} is not a readable tar archive: {exc}") from exc
    raise ValueError(f"{Path(archive).name} has no member {member}.")


def convert_snow2008(archive, task):
    """Votes and gold labels of ``{task}.standardized.tsv`` in Snow et al.'s archive.

    Tab-separated with a header ``!amt_annotation_ids, !amt_worker_ids,
    orig_id, response, gold``: one row per vote, the gold label repeated on
    every row of its item (empty: none).
    """
    member = f"{task}.standardized.tsv"
    text = archive_member(archive, member).decode("utf-8")
    header, rows = csv_rows(None, delimiter="\t", text=text, name=member)
    layout = ["!amt_worker_ids", "orig_id", "response", "gold"]
    i_worker, i_task, i_response, i_gold = _column_indices(header, layout, member)
    _require(rows, member, len(header), "\t".join(header),
             used=[i_worker, i_task, i_response])
    votes = _records(member, [(line, [f[i_task], f[i_worker], f[i_response], f[i_gold]])
                              for line, f in rows], ["task", "worker", "label", "gold"])
    return build_crowd(votes, _gold_on_every_row(votes))


# ---------------------------------------------------------------------------
# PyLearningCrowds (labelme, sentiment_polarity): answers matrix, one label per line
# ---------------------------------------------------------------------------


def _answers_matrix(path, n_classes):
    """Votes of an ``answers.txt`` matrix (a row per task, a column per worker, -1: no vote)."""
    name = Path(path).name
    rows = []
    for line, text in enumerate(_lines(read_text(path)), start=1):
        if text.strip():
            rows.append((line, text.split()))
    widths = {len(fields) for _, fields in rows}
    if len(widths) != 1:
        line = next(line for line, fields in rows if len(fields) != len(rows[0][1]))
        raise ValueError(f"{name} line {line}: rows have {sorted(widths)} columns; expected "
                         "one column per worker on every row.")
    parsed = []
    for i, (line, fields) in enumerate(rows):
        for j, value in enumerate(fields):
            if value != "-1":
                parsed.append((line, [str(i), str(j), value]))
    votes = _records(name, parsed, ["task", "worker", "label"])
    classes = [str(k) for k in range(n_classes)]
    return votes, [str(i) for i in range(len(rows))], classes


def _label_lines(path):
    """One label per line (e.g. ``LabelMe_Z_train.txt``), as :class:`Records` with a line number."""
    rows = [(line, [text.strip()]) for line, text in enumerate(_lines(read_text(path)), start=1)
            if text.strip()]
    return _records(Path(path).name, rows, ["label"])


def _held_out(path, classes):
    records = _label_lines(path)
    return _index(records["label"], classes, records, "label", "classes")


def _text_lines(path, n_rows):
    lines = _lines(read_text(path))
    if len(lines) != n_rows:
        raise ValueError(f"{Path(path).name} has {len(lines)} lines, expected {n_rows} (one "
                         "sentence per task).")
    return np.array(lines, dtype=str)


def _pylearningcrowds(answers, gold_train, class_names):
    votes, tasks, classes = _answers_matrix(answers, len(class_names))
    gold = _label_lines(gold_train)
    if len(gold.line) != len(tasks):
        raise ValueError(f"{gold.file} has {len(gold.line)} labels but {Path(answers).name} "
                         f"{len(tasks)} rows.")
    gold.columns["task"] = np.array(tasks, dtype=str)
    crowd = build_crowd(votes, gold, tasks=tasks, classes=classes, tasks_from=votes.file)
    crowd.class_names = list(class_names)
    return crowd


def convert_labelme(paths):
    """LabelMe as published in PyLearningCrowds: ``answers.txt``, gold and VGG16 features."""
    crowd = _pylearningcrowds(paths["answers.txt"], paths["LabelMe_Z_train.txt"], LABELME_CLASSES)
    crowd.feature_name = "vgg16avg"
    for split in ("train", "valid", "test"):
        X = load_npy(paths[f"LabelMe_VGG_avg_{split}.npy"])
        n_rows = len(crowd.task_ids)
        if split != "train":
            crowd.held_out[split] = _held_out(paths[f"LabelMe_Z_{split}.txt"], crowd.labels)
            n_rows = len(crowd.held_out[split])
        if X.ndim != 2 or len(X) != n_rows:
            raise ValueError(f"LabelMe_VGG_avg_{split}.npy has shape {X.shape}; expected "
                             f"{n_rows} rows of features.")
        crowd.features[split] = X
    return crowd


def convert_sentiment_polarity(paths):
    """Sentiment polarity as published in PyLearningCrowds: ``answers.txt``, gold and sentences."""
    crowd = _pylearningcrowds(paths["answers.txt"], paths["Sentiment_Z_train.txt"],
                              SENTIMENT_CLASSES)
    crowd.held_out["test"] = _held_out(paths["Sentiment_Z_test.txt"], crowd.labels)
    crowd.feature_name = "text"
    crowd.features["train"] = _text_lines(paths["Sentiment_text_train.txt"], len(crowd.task_ids))
    crowd.features["test"] = _text_lines(paths["Sentiment_text_test.txt"],
                                         len(crowd.held_out["test"]))
    return crowd


LABELME_CLASSES = ("highway", "insidecity", "tallbuilding", "street", "forest", "coast",
                   "mountain", "opencountry")
SENTIMENT_CLASSES = ("negative", "positive")


# ---------------------------------------------------------------------------
# music: music_genre_{mturk,gold,test}.csv
# ---------------------------------------------------------------------------


def _songs(path):
    """Song ids, feature matrix and class names of ``music_genre_{gold,test}.csv``."""
    name = Path(path).name
    header, rows = csv_rows(path)
    i_id, i_class = _column_indices(header, ["id", "class"], name)
    i_features = [i for i, c in enumerate(header) if c.startswith("feature")]
    _require(rows, name, len(header), f"{len(header)} fields ({','.join(header[:3])},...)",
             used=[i_id, i_class])
    ids = np.array([f[i_id] for _, f in rows], dtype=str)
    distinct, count = np.unique(ids, return_counts=True)
    if (count > 1).any():
        song = str(distinct[np.argmax(count > 1)])
        lines = [line for line, f in rows if f[i_id] == song]
        raise ValueError(f"{name} lines {lines}: song {song!r} is listed more than once.")
    bad = next((line for line, f in rows if not all(_is_float(f[i]) for i in i_features)), None)
    if bad is not None:
        raise ValueError(f"{name} line {bad}: a feature is not a number.")
    X = np.array([[float(f[i]) for i in i_features] for _, f in rows], dtype=np.float64)
    records = _records(name, [(line, [f[i_class]]) for line, f in rows], ["label"])
    return ids, X, records


def _is_float(value):
    try:
        float(value)
    except ValueError:
        return False
    return True


def convert_music(paths):
    """Music genres: votes of ``music_genre_mturk.csv``, songs of ``music_genre_{gold,test}.csv``.

    The tasks are the songs of ``music_genre_gold.csv`` (in id order, with
    their features and gold genre); a vote on another song is an error.
    """
    ids, X, gold_classes = _songs(paths["music_genre_gold.csv"])
    _, X_test, test_classes = _songs(paths["music_genre_test.csv"])
    name = "music_genre_mturk.csv"
    header, rows = csv_rows(paths[name])
    columns = _column_indices(header, ["id", "annotator", "class"], name)
    _require(rows, name, len(header), f"{len(header)} fields (id,annotator,...,class)",
             used=columns)
    votes = _records(name, [(line, [f[i] for i in columns]) for line, f in rows],
                     ["task", "worker", "label"])
    classes = ordered_ids(np.concatenate([votes["label"], gold_classes["label"],
                                          test_classes["label"]]))
    tasks = ordered_ids(ids)
    gold = Records(gold_classes.file, gold_classes.line,
                   {"task": ids, "label": gold_classes["label"]})
    crowd = build_crowd(votes, gold, tasks=tasks, classes=classes, tasks_from=gold.file)
    crowd.feature_name = "audio"
    crowd.features["train"] = X[_index(tasks, ids, gold, "song", "songs")]
    crowd.features["test"] = X_test
    crowd.held_out["test"] = _index(test_classes["label"], classes, test_classes, "class",
                                    "classes")
    return crowd
