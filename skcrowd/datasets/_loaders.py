"""Loader of a crowd dataset: a folder in skcrowd's layout, or a public crowd by name.

The folder layout is read by ``skcrowd.datasets._folder``; a name is fetched
by ``skcrowd.datasets._fetchers``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._fetchers import CROWD_DATASETS, load_fetched
from ._folder import read_crowd_folder

__all__ = ["load_crowd_dataset"]


def load_crowd_dataset(path, *, features="auto", sparse=False, data_home=None,
                       download_if_missing=True):
    """Load a crowd dataset from a folder, or by name: votes, gold labels, features if present.

    ``path`` is a folder in skcrowd's layout (``votes.csv``, ``truth.csv``,
    ``tasks.csv``, ``workers.csv``, ``labels.csv``, ``stats.json``,
    ``features_<name>_<split>.npy``, ``labels_<split>.npy``, described on the
    documentation's datasets page; only ``votes.csv`` is required), or the name of a public crowd of
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
        if isinstance(path, str) and path in CROWD_DATASETS:
            return load_fetched(path, data_home=data_home, features=features, sparse=sparse,
                                download_if_missing=download_if_missing)
        raise FileNotFoundError(
            f"crowd dataset folder {folder} does not exist"
            + (f", and {path!r} is not a dataset name (see list_crowd_datasets())."
               if isinstance(path, str) and os.sep not in path and "/" not in path else ".")
        )
    return read_crowd_folder(folder, features=features, sparse=sparse)
