"""Fetchers of public crowdsourced datasets, in the style of scikit-learn's ``fetch_*``.

:func:`fetch_labelme`, :func:`fetch_music` and :func:`fetch_cifar10h` return
the dataset stored in ``data_home/<name>/`` in skcrowd's dataset-folder layout
(``votes.csv``, ``truth.csv``, features ...; see
:func:`~skcrowd.datasets.load_crowd_dataset`, which reads it). A folder that
already holds ``votes.csv`` is read as is, so pointing ``data_home`` at a
folder of such datasets works offline. Otherwise the original release is
downloaded from its publisher into ``data_home/<name>/raw/``, checked, and
converted to the layout (``votes.csv`` is written last: a folder without it is
converted again on the next call).

**Checksums.** Every downloaded file is checked against the sha256 recorded in
:data:`RELEASES` before it is used, and deleted when it does not match. A file
whose checksum is not recorded is never downloaded: the error names the URL
and the path where a copy obtained and checked by hand is read instead. (The
checksums are not recorded yet: skcrowd was written on a machine without
network access, where they could not be computed.)

**No pickle.** Downloaded data is read with ``np.load(allow_pickle=False)``,
the csv module and ``np.frombuffer``; archives are read member by member in
memory, never extracted to disk.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from http.client import HTTPException
from pathlib import Path
from tempfile import NamedTemporaryFile
from typing import Callable, NamedTuple
from urllib.error import URLError
from urllib.request import Request, urlopen

import numpy as np

from ._loaders import load_crowd_dataset

__all__ = ["get_data_home", "fetch_labelme", "fetch_music", "fetch_cifar10h"]

_DOWNLOAD_TIMEOUT_S = 60
# Rodrigues' server rejects clients that do not announce themselves as a browser.
_USER_AGENT = "Mozilla/5.0 (compatible; skcrowd dataset fetcher)"


class RemoteFile(NamedTuple):
    """A file of a dataset release: local name, publisher's URL, sha256 (None: not recorded)."""

    filename: str
    url: str
    sha256: str | None


@dataclass(frozen=True)
class Release:
    """How to obtain a dataset: its folder under ``data_home``, files, converter, description."""

    folder: str
    files: tuple[RemoteFile, ...]
    convert: Callable[[dict, Path], None]
    description: str


def get_data_home(data_home=None):
    """Folder where skcrowd's dataset fetchers store and look for datasets.

    ``data_home`` if given, else the ``SKCROWD_DATA`` environment variable,
    else ``~/skcrowd_data``; ``~`` is expanded. The folder is not created.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder to use.

    Returns
    -------
    str
        The folder's path.

    Examples
    --------
    >>> from skcrowd.datasets import get_data_home
    >>> get_data_home("/data/crowds")
    '/data/crowds'
    """
    if data_home is None:
        data_home = os.environ.get("SKCROWD_DATA", os.path.join("~", "skcrowd_data"))
    return os.path.expanduser(str(data_home))


# ---------------------------------------------------------------------------
# Download and verification
# ---------------------------------------------------------------------------


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url, part, path):
    """Write the content at ``url`` into the file ``part``; OSError naming the URL on failure."""
    request = Request(url, headers={"User-Agent": _USER_AGENT})
    try:
        with urlopen(request, timeout=_DOWNLOAD_TIMEOUT_S) as response, open(part, "wb") as f:
            shutil.copyfileobj(response, f)
    except (URLError, HTTPException, OSError) as exc:
        raise OSError(
            f"could not download {url} ({exc}); are you offline? Save the file as {path} to "
            "use a copy obtained elsewhere, or pass a data_home holding the dataset in "
            "skcrowd's folder layout."
        ) from exc


def _fetch_remote(remote, folder):
    """Path of ``remote`` in ``folder``, downloaded and verified if absent.

    Returns ``(path, downloaded)``. A file already there is verified when a
    checksum is recorded (and downloaded again when it does not match), and
    trusted as placed by the user when none is.
    """
    path = folder / remote.filename
    if path.is_file():
        if remote.sha256 is None or _sha256(path) == remote.sha256:
            return path, False
        path.unlink()
    if remote.sha256 is None:
        raise OSError(
            f"skcrowd has no recorded sha256 checksum for {remote.url}, so it does not "
            f"download it (downloads are always verified). Download it yourself, check it, "
            f"and save it as {path}: it is then read from there."
        )
    folder.mkdir(parents=True, exist_ok=True)
    with NamedTemporaryFile(dir=folder, prefix=remote.filename + ".part", delete=False) as tmp:
        part = Path(tmp.name)
    try:
        _download(remote.url, part, path)
        digest = _sha256(part)
        if digest != remote.sha256:
            raise OSError(
                f"the file downloaded from {remote.url} has sha256 {digest}, expected "
                f"{remote.sha256}: the download is corrupted or the release has changed; it "
                "was deleted."
            )
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    os.replace(part, path)
    return path, True


# ---------------------------------------------------------------------------
# Reading the releases (no pickle) and writing skcrowd's layout
# ---------------------------------------------------------------------------


def _archive_members(archive, wanted):
    """``{suffix: bytes}`` of the members of a tar or zip archive whose path ends with each suffix.

    Tar archives are streamed and left as soon as every member was found (a
    release may be truncated after the members skcrowd needs).
    """
    found = {}

    def match(name):
        """The wanted suffix that member ``name`` ends with, if not found yet."""
        return next((suffix for suffix in wanted
                     if suffix not in found and ("/" + name).endswith("/" + suffix)), None)

    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    if not info.is_dir() and (suffix := match(info.filename)):
                        found[suffix] = zf.read(info)
        else:
            with tarfile.open(archive, "r|*") as tar:
                for member in tar:
                    if member.isfile() and (suffix := match(member.name)):
                        found[suffix] = tar.extractfile(member).read()
                    if len(found) == len(wanted):
                        break
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error) as exc:
        if len(found) < len(wanted):
            raise ValueError(f"{archive} is not a readable tar or zip archive: {exc}") from exc
    missing = [suffix for suffix in wanted if suffix not in found]
    if missing:
        raise ValueError(
            f"{archive.name} has no member {', '.join(missing)}: is it the original release?"
        )
    return found


def _load_npy(raw, where):
    try:
        return np.load(io.BytesIO(raw), allow_pickle=False)
    except ValueError as exc:
        raise ValueError(
            f"{where} is not a plain numpy array ({exc}); skcrowd does not unpickle downloaded "
            "data."
        ) from exc


def _csv_rows(raw, where, columns=None):
    """Header and rows of a CSV member; with ``columns``, the index of each named column."""
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    if not rows:
        raise ValueError(f"{where} is empty.")
    header = [c.strip() for c in rows[0]]
    body = [(line, row) for line, row in enumerate(rows[1:], start=2) if row]
    if columns is None:
        return header, body
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"{where} has columns {header}; missing {', '.join(missing)}.")
    return [header.index(c) for c in columns], body


def _int(value, where, line, column):
    try:
        return int(value)
    except ValueError:
        raise ValueError(
            f"{where} line {line}: {column} {value!r} is not an integer."
        ) from None


def _class_indices(values, class_names, where, what="label", place=None):
    """Integer class index of each value (int-valued array, or names in ``class_names``).

    ``place(i)`` says where value ``i`` was read (default ``"row i"``) in errors.
    """
    values = np.asarray(values).ravel()
    if values.dtype.kind in "US":
        lookup = {name: k for k, name in enumerate(class_names)}
        out = np.array([lookup.get(v, -1) for v in values], dtype=np.int64)
        bad = out < 0
    else:
        out = values.astype(np.int64)
        bad = (out != values) | (out < 0) | (out >= len(class_names))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{where} {place(i) if place else f'row {i}'}: {what} {values[i].item()!r} is not "
            f"one of the classes {list(class_names)} (or their indices "
            f"0 .. {len(class_names) - 1})."
        )
    return out


def _write_ids(path, key, ids):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([key, "original_id"])
        writer.writerows(enumerate(ids))


def _write_ints(path, header, *columns):
    table = np.column_stack(columns) if len(columns[0]) else np.zeros((0, len(header)), int)
    np.savetxt(path, table, fmt="%d", delimiter=",", header=",".join(header), comments="")


def _write_dataset(folder, *, name, task, worker, label, target, task_ids, worker_ids,
                   class_names, feature_name, features, held_out_targets, notes):
    """Write a converted release in skcrowd's layout; ``votes.csv`` last, as the completion mark.

    A worker's second answer to a task is dropped (the first one is kept).
    """
    task, worker, label = (np.asarray(a, dtype=np.int64) for a in (task, worker, label))
    _, first = np.unique(task * len(worker_ids) + worker, return_index=True)
    n_dropped = len(task) - len(first)
    first = first[np.lexsort((worker[first], task[first]))]
    task, worker, label = task[first], worker[first], label[first]

    folder.mkdir(parents=True, exist_ok=True)
    _write_ids(folder / "tasks.csv", "task", task_ids)
    _write_ids(folder / "workers.csv", "worker", worker_ids)
    _write_ids(folder / "labels.csv", "label", class_names)
    gold = np.flatnonzero(target >= 0)
    _write_ints(folder / "truth.csv", ["task", "label"], gold, target[gold])
    for split, X in features.items():
        np.save(folder / f"features_{feature_name}_{split}.npy", X, allow_pickle=False)
    for split, y in held_out_targets.items():
        np.save(folder / f"labels_{split}.npy", np.asarray(y, dtype=np.int64), allow_pickle=False)
    stats = {
        "name": name,
        "n_tasks": len(task_ids),
        "n_workers": len(worker_ids),
        "n_classes": len(class_names),
        "n_votes": len(task),
        "duplicate_task_worker_pairs_dropped": int(n_dropped),
        "n_gold": len(gold),
        "class_names": list(class_names),
        "notes": notes,
    }
    (folder / "stats.json").write_text(json.dumps(stats, indent=1))
    part = folder / "votes.csv.part"
    _write_ints(part, ["task", "worker", "label"], task, worker, label)
    os.replace(part, folder / "votes.csv")


# ---------------------------------------------------------------------------
# LabelMe (Rodrigues & Pereira, 2018)
# ---------------------------------------------------------------------------

_LABELME_CLASSES = (
    "highway", "insidecity", "tallbuilding", "street", "forest", "coast", "mountain",
    "opencountry",
)
_SPLITS = ("train", "valid", "test")


def _convert_labelme(paths, folder):
    archive = paths["deep_LabelMe.tar.gz"]
    members = {"answers": "prepared/answers.npy"}
    for split in _SPLITS:
        members[f"data_{split}"] = f"prepared/data_{split}_vgg16.npy"
        members[f"labels_{split}"] = f"prepared/labels_{split}.npy"
    raw = _archive_members(archive, list(members.values()))
    arrays = {key: _load_npy(raw[m], f"{archive.name}:{m}") for key, m in members.items()}

    answers = np.asarray(arrays["answers"])
    where = f"{archive.name}:prepared/answers.npy"
    if answers.ndim != 2:
        raise ValueError(f"{where} must be a (tasks, workers) matrix, got shape {answers.shape}.")
    task, column = np.nonzero(answers != -1)
    label = _class_indices(answers[task, column], _LABELME_CLASSES, where,
                           place=lambda i: f"row {task[i]}, column {column[i]}")
    active = np.unique(column)  # workers without any vote are dropped
    features, targets = {}, {}
    for split in _SPLITS:
        X = arrays[f"data_{split}"]
        y = _class_indices(arrays[f"labels_{split}"].ravel(), _LABELME_CLASSES,
                           f"{archive.name}:prepared/labels_{split}.npy")
        if len(X) != len(y):
            raise ValueError(
                f"{archive.name}: data_{split}_vgg16.npy has {len(X)} rows but "
                f"labels_{split}.npy {len(y)}."
            )
        features[split] = X.reshape(len(X), -1).astype(np.float32, copy=False)
        targets[split] = y
    if len(answers) != len(targets["train"]):
        raise ValueError(
            f"{where} has {len(answers)} rows but labels_train.npy {len(targets['train'])}."
        )
    _write_dataset(
        folder, name="labelme", task=task, worker=np.searchsorted(active, column), label=label,
        target=targets["train"], task_ids=np.arange(len(answers)), worker_ids=active,
        class_names=_LABELME_CLASSES, feature_name="vgg16", features=features,
        held_out_targets={"valid": targets["valid"], "test": targets["test"]},
        notes="Converted from deep_LabelMe.tar.gz (prepared/): features are the release's "
        "VGG16 feature maps, flattened (4x4x512 -> 8192); worker ids are the columns of "
        "answers.npy, workers without votes dropped.",
    )


# ---------------------------------------------------------------------------
# Music genres (Rodrigues, Pereira & Ribeiro, 2013)
# ---------------------------------------------------------------------------

_MUSIC_CLASSES = (
    "blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop", "reggae", "rock",
)
_MUSIC_DIR = "music_genre_classification"


def _music_songs(raw, where):
    """Song ids, features and gold class indices of a ``music_genre_{gold,test}.csv``."""
    header, rows = _csv_rows(raw, where)
    if len(header) < 3 or header[0] != "id" or header[-1] != "class":
        raise ValueError(f"{where} must have columns id, <features>, class; got {header[:3]}...")
    ids = [row[0] for _, row in rows]
    try:
        X = np.array([row[1:-1] for _, row in rows], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{where}: features must be numbers ({exc}).") from exc
    y = _class_indices(np.array([row[-1] for _, row in rows]), _MUSIC_CLASSES, where, "class",
                       place=lambda i: f"line {rows[i][0]}")
    return ids, X, y


def _convert_music(paths, folder):
    archive = paths["mturk-datasets.tar.gz"]
    names = {key: f"{_MUSIC_DIR}/music_genre_{key}.csv" for key in ("gold", "test", "mturk")}
    raw = _archive_members(archive, list(names.values()))
    ids, X, y = _music_songs(raw[names["gold"]], names["gold"])
    _, X_test, y_test = _music_songs(raw[names["test"]], names["test"])
    if X_test.shape[1] != X.shape[1]:
        raise ValueError(
            f"{names['test']} has {X_test.shape[1]} features, {names['gold']} {X.shape[1]}."
        )
    (i_id, i_worker, i_class), rows = _csv_rows(
        raw[names["mturk"]], names["mturk"], ["id", "annotator", "class"]
    )
    row_of = {song: i for i, song in enumerate(ids)}
    task = []
    for line, row in rows:
        if row[i_id] not in row_of:
            raise ValueError(
                f"{names['mturk']} line {line}: song {row[i_id]!r} is not in {names['gold']}."
            )
        task.append(row_of[row[i_id]])
    workers, worker = np.unique([row[i_worker] for _, row in rows], return_inverse=True)
    label = _class_indices(np.array([row[i_class] for _, row in rows]), _MUSIC_CLASSES,
                           names["mturk"], "class", place=lambda i: f"line {rows[i][0]}")
    _write_dataset(
        folder, name="music", task=task, worker=worker, label=label, target=y, task_ids=ids,
        worker_ids=workers, class_names=_MUSIC_CLASSES, feature_name="audio",
        features={"train": X, "test": X_test}, held_out_targets={"test": y_test},
        notes="Converted from mturk-datasets.tar.gz (music_genre_classification/): features "
        "are the release's audio features; test songs have gold labels and no votes.",
    )


# ---------------------------------------------------------------------------
# CIFAR-10H (Peterson et al., 2019)
# ---------------------------------------------------------------------------

_CIFAR10_CLASSES = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)
_CIFAR10_RECORD = 1 + 32 * 32 * 3  # label byte, then 1024 red, 1024 green, 1024 blue bytes


def _convert_cifar10h(paths, folder):
    votes_name, images_name = "cifar10h-raw.csv", "cifar-10-batches-bin/test_batch.bin"
    raw_votes = _archive_members(paths["cifar10h-raw.zip"], [votes_name])[votes_name]
    raw_images = _archive_members(paths["cifar-10-binary.tar.gz"], [images_name])[images_name]
    if len(raw_images) % _CIFAR10_RECORD:
        raise ValueError(
            f"{images_name} has {len(raw_images)} bytes, not a multiple of the "
            f"{_CIFAR10_RECORD}-byte CIFAR-10 records."
        )
    records = np.frombuffer(raw_images, dtype=np.uint8).reshape(-1, _CIFAR10_RECORD)
    target = _class_indices(records[:, 0], _CIFAR10_CLASSES, images_name,
                            place=lambda i: f"record {i}")
    n_images = len(records)

    columns = ["annotator_id", "cifar10_test_test_idx", "chosen_label", "is_attn_check"]
    (i_worker, i_task, i_label, i_check), rows = _csv_rows(raw_votes, votes_name, columns)
    task, worker, label, lines = [], [], [], []
    for line, row in rows:
        image = _int(row[i_task], votes_name, line, "cifar10_test_test_idx")
        if _int(row[i_check], votes_name, line, "is_attn_check") or image < 0:
            continue  # attention-check trial, not a CIFAR-10 test image
        if image >= n_images:
            raise ValueError(
                f"{votes_name} line {line}: image {image} is outside the {n_images} CIFAR-10 "
                "test images."
            )
        task.append(image)
        worker.append(_int(row[i_worker], votes_name, line, "annotator_id"))
        label.append(_int(row[i_label], votes_name, line, "chosen_label"))
        lines.append(line)
    workers, worker = np.unique(np.asarray(worker, dtype=np.int64), return_inverse=True)
    label = _class_indices(np.asarray(label, dtype=np.int64), _CIFAR10_CLASSES, votes_name,
                           "chosen_label", place=lambda i: f"line {lines[i]}")
    _write_dataset(
        folder, name="cifar10h", task=task, worker=worker, label=label, target=target,
        task_ids=np.arange(n_images), worker_ids=workers, class_names=_CIFAR10_CLASSES,
        feature_name="pixels", features={"train": records[:, 1:]}, held_out_targets={},
        notes="Converted from cifar10h-raw.zip (attention checks dropped) and the CIFAR-10 "
        "binary test batch: features are the 3072 uint8 pixels of each image, channel "
        "first (reshape to (-1, 3, 32, 32)).",
    )


# ---------------------------------------------------------------------------
# Registry and public fetchers
# ---------------------------------------------------------------------------

_LABELME_DESCR = """\
LabelMe scene classification, crowd labels from Amazon Mechanical Turk.

Images of 8 scene classes (highway, inside city, tall building, street,
forest, coast, mountain, open country); the crowd labelled 1000 training
images (59 workers, 1 to 3 votes per image), all with gold labels; held-out
validation (500) and test (1188) images have gold labels. Features: VGG16
features of the images, the flattened 4x4x512 maps published by Rodrigues &
Pereira when downloaded (a folder in skcrowd's layout may hold others, see
the notes below). The line below gives the counts of this copy.

References
----------
F. Rodrigues and F. C. Pereira. "Deep learning from crowds". AAAI, 2018.
B. C. Russell, A. Torralba, K. P. Murphy and W. T. Freeman. "LabelMe: a
database and web-based tool for image annotation". IJCV 77, 2008."""

_MUSIC_DESCR = """\
Music genre classification, crowd labels from Amazon Mechanical Turk.

700 songs (30 s excerpts) of 10 genres labelled by 44 workers, with gold
labels; 300 test songs with gold labels and no votes. Features: the audio
features published with the release. The line below gives the counts of
this copy.

References
----------
F. Rodrigues, F. Pereira and B. Ribeiro. "Learning from multiple annotators:
distinguishing good from random labelers". Pattern Recognition Letters
34(12), 2013.
G. Tzanetakis and P. Cook. "Musical genre classification of audio signals".
IEEE Transactions on Speech and Audio Processing 10(5), 2002."""

_CIFAR10H_DESCR = """\
CIFAR-10H: human labels of the 10000 CIFAR-10 test images.

About 50 votes per image from 2571 workers (attention-check trials dropped),
10 classes; gold labels are the CIFAR-10 labels. Features: the 32x32 color
images, 3072 uint8 values per image, channel first. The line below gives the
counts of this copy.

References
----------
J. C. Peterson, R. M. Battleday, T. L. Griffiths and O. Russakovsky. "Human
uncertainty makes classification more robust". ICCV, 2019.
A. Krizhevsky. "Learning multiple layers of features from tiny images".
Technical report, University of Toronto, 2009."""

#: Dataset releases known to the fetchers, by name. A ``sha256`` of None means
#: the checksum is not recorded: the file is then never downloaded.
RELEASES = {
    "labelme": Release(
        folder="labelme",
        files=(RemoteFile("deep_LabelMe.tar.gz", "http://fprodrigues.com/deep_LabelMe.tar.gz",
                          None),),
        convert=_convert_labelme,
        description=_LABELME_DESCR,
    ),
    "music": Release(
        folder="music",
        files=(RemoteFile("mturk-datasets.tar.gz",
                          "http://fprodrigues.com/mturk-datasets.tar.gz", None),),
        convert=_convert_music,
        description=_MUSIC_DESCR,
    ),
    "cifar10h": Release(
        folder="cifar10h",
        files=(
            RemoteFile("cifar10h-raw.zip",
                       "https://github.com/jcpeterson/cifar-10h/raw/master/data/cifar10h-raw.zip",
                       None),
            RemoteFile("cifar-10-binary.tar.gz",
                       "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz", None),
        ),
        convert=_convert_cifar10h,
        description=_CIFAR10H_DESCR,
    ),
}


def _fetch(name, data_home, download_if_missing, sparse, return_X_y):
    release = RELEASES[name]
    folder = Path(get_data_home(data_home)) / release.folder
    if not (folder / "votes.csv").is_file():
        if not download_if_missing:
            raise OSError(
                f"{name} not found: {folder} holds no votes.csv, and download_if_missing=False."
            )
        fetched = [_fetch_remote(remote, folder / "raw") for remote in release.files]
        release.convert({path.name: path for path, _ in fetched}, folder)
        for path, downloaded in fetched:
            if downloaded:  # the copies a user saved there are kept
                path.unlink()
    dataset = load_crowd_dataset(folder, sparse=sparse)
    if return_X_y:
        return dataset.data, dataset.votes
    dataset.DESCR = f"{release.description}\n\n{dataset.DESCR}"
    return dataset


_SHARED_DOC = """Parameters
    ----------
    data_home : str or path-like, default=None
        Folder of the datasets; default ``SKCROWD_DATA`` or ``~/skcrowd_data``
        (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        Download the release when the dataset is not in ``data_home``; when
        False, raise an ``OSError`` instead.
    sparse : bool, default=False
        Return ``votes`` as a ``scipy.sparse.csr_array`` (stored entries are
        the votes) instead of a dense array.
    return_X_y : bool, default=False
        Return ``(data, votes)`` instead of the Bunch.

    Returns
    -------
    sklearn.utils.Bunch or tuple
        The Bunch of :func:`~skcrowd.datasets.load_crowd_dataset`: ``data``
        (features of the crowd-labelled tasks), ``votes`` (class indices, -1
        where a worker did not vote), ``target`` (gold class indices),
        ``data_valid``, ``target_valid``, ``data_test``, ``target_test``
        (held-out tasks with gold labels, None where the release has none),
        ``class_names``, ``task_ids``, ``worker_ids``, ``stats`` and ``DESCR``
        (with the references); or ``(data, votes)``.

    Raises
    ------
    OSError
        If the dataset is absent and cannot be downloaded (offline, no
        recorded checksum, ``download_if_missing=False``), or a download does
        not match its checksum; the message names the URL.
    ValueError
        If a downloaded release does not have the expected content."""


def fetch_labelme(*, data_home=None, download_if_missing=True, sparse=False, return_X_y=False):
    """Load the LabelMe crowdsourced scene classification dataset (8 classes, 59 workers).

    Read from ``data_home/labelme/`` when that folder holds a ``votes.csv`` in
    skcrowd's layout (see :func:`~skcrowd.datasets.load_crowd_dataset`);
    otherwise downloaded from Filipe Rodrigues' site
    (http://fprodrigues.com/deep_LabelMe.tar.gz), checked against its sha256
    and converted: votes from ``prepared/answers.npy``, features from
    ``prepared/data_{train,valid,test}_vgg16.npy`` (flattened), gold labels
    from ``prepared/labels_*.npy``. The checksum is not recorded yet, so the
    download raises an error saying where to save a copy obtained by hand.
    Held-out splits: ``data_valid``/``target_valid`` (500 images) and
    ``data_test``/``target_test`` (1188 images).

    {shared}

    References
    ----------
    F. Rodrigues and F. C. Pereira. "Deep learning from crowds". AAAI, 2018.

    B. C. Russell, A. Torralba, K. P. Murphy and W. T. Freeman. "LabelMe: a
    database and web-based tool for image annotation". IJCV 77, 2008.

    Examples
    --------
    With the dataset downloaded, or ``data_home`` a folder of datasets in
    skcrowd's layout:

    >>> from skcrowd.datasets import fetch_labelme
    >>> labelme = fetch_labelme()  # doctest: +SKIP
    >>> labelme.votes.shape, labelme.data_test.shape  # doctest: +SKIP
    ((1000, 59), (1188, 8192))

    A folder already in the layout is read without network access:

    >>> import pathlib, tempfile
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "labelme").mkdir()
    >>> votes_csv = "task,worker,label\\n0,0,3\\n0,1,3\\n1,1,5\\n"
    >>> _ = (home / "labelme" / "votes.csv").write_text(votes_csv)
    >>> fetch_labelme(data_home=home, download_if_missing=False).votes
    array([[ 3,  3],
           [-1,  5]])
    """
    return _fetch("labelme", data_home, download_if_missing, sparse, return_X_y)


def fetch_music(*, data_home=None, download_if_missing=True, sparse=False, return_X_y=False):
    """Load the crowdsourced music genre classification dataset (10 genres, 44 workers).

    Read from ``data_home/music/`` when that folder holds a ``votes.csv`` in
    skcrowd's layout (see :func:`~skcrowd.datasets.load_crowd_dataset`);
    otherwise downloaded from Filipe Rodrigues' site
    (http://fprodrigues.com/mturk-datasets.tar.gz), checked against its sha256
    and converted from ``music_genre_classification/``: songs, features and
    gold labels from ``music_genre_gold.csv``, votes from
    ``music_genre_mturk.csv``, test songs from ``music_genre_test.csv``. The
    checksum is not recorded yet, so the download raises an error saying
    where to save a copy obtained by hand. Held-out split:
    ``data_test``/``target_test`` (300 songs, no votes).

    {shared}

    References
    ----------
    F. Rodrigues, F. Pereira and B. Ribeiro. "Learning from multiple
    annotators: distinguishing good from random labelers". Pattern
    Recognition Letters 34(12), 2013.

    Examples
    --------
    >>> from skcrowd.datasets import fetch_music
    >>> music = fetch_music()  # doctest: +SKIP
    >>> music.votes.shape, len(music.target_test)  # doctest: +SKIP
    ((700, 44), 300)
    >>> music.class_names[:3].tolist()  # doctest: +SKIP
    ['blues', 'classical', 'country']
    """
    return _fetch("music", data_home, download_if_missing, sparse, return_X_y)


def fetch_cifar10h(*, data_home=None, download_if_missing=True, sparse=False, return_X_y=False):
    """Load CIFAR-10H: crowd labels of the 10000 CIFAR-10 test images (about 50 per image).

    Read from ``data_home/cifar10h/`` when that folder holds a ``votes.csv``
    in skcrowd's layout (see :func:`~skcrowd.datasets.load_crowd_dataset`);
    otherwise downloaded, checked against the sha256 of each file and
    converted: votes from ``cifar10h-raw.csv`` of Joshua Peterson's repository
    (https://github.com/jcpeterson/cifar-10h; attention checks dropped),
    images and gold labels from the CIFAR-10 binary test batch of Alex
    Krizhevsky's site (https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz).
    The checksums are not recorded yet, so the download raises an error
    saying where to save copies obtained by hand. ``data`` holds the 3072
    uint8 pixels of each image, channel first (``reshape(-1, 3, 32, 32)``).
    With 2571 workers a dense ``votes`` takes about 200 MB: use
    ``sparse=True``.

    {shared}

    References
    ----------
    J. C. Peterson, R. M. Battleday, T. L. Griffiths and O. Russakovsky.
    "Human uncertainty makes classification more robust". ICCV, 2019.

    Examples
    --------
    >>> from skcrowd.datasets import fetch_cifar10h
    >>> cifar10h = fetch_cifar10h(sparse=True)  # doctest: +SKIP
    >>> cifar10h.data.shape, cifar10h.votes.shape  # doctest: +SKIP
    ((10000, 3072), (10000, 2571))
    """
    return _fetch("cifar10h", data_home, download_if_missing, sparse, return_X_y)


for _fetcher in (fetch_labelme, fetch_music, fetch_cifar10h):
    _fetcher.__doc__ = _fetcher.__doc__.replace("{shared}", _SHARED_DOC)
del _fetcher
