"""Fetchers of public crowdsourced datasets, in the style of scikit-learn's ``fetch_*``.

:func:`fetch_crowd_dataset` returns any convertible crowd of
:func:`list_crowd_datasets` from ``data_home/<name>/``, a folder in skcrowd's dataset layout
(``votes.csv``, ``truth.csv``, ...; see
:func:`~skcrowd.datasets.load_crowd_dataset`). A folder that already holds
``votes.csv`` is read as is, without network access, so pointing
``data_home`` at a folder of such datasets works offline. Otherwise the
crowd's pinned source files are fetched into ``data_home/sources/`` (see
``skcrowd.datasets._download``: sha256-verified, from
``SKCROWD_DATASETS_URL``), converted (``skcrowd.datasets._converters``) and
written there, ``votes.csv`` last (``skcrowd.datasets._folder``);
:func:`dataset_folder` returns that folder. The regression, sequence-labelling, ordinal,
pairwise and text crowds (``kind`` in :func:`list_crowd_datasets`) have no such folder: their
verified source files are converted in memory at each call.
"""

from __future__ import annotations

from pathlib import Path

from .._optional import import_optional
from ._download import fetch_file, get_data_home, sha256_of
from ._folder import read_crowd_folder, write_dataset
from ._registry import DATASETS

__all__ = ["dataset_folder", "fetch_crowd_dataset", "list_crowd_datasets", "fetch_labelme",
           "fetch_music"]

#: The crowds :func:`fetch_crowd_dataset` knows, by name.
CROWD_DATASETS = {dataset.name: dataset for dataset in DATASETS}

_RETIRED = {
    "snow2008": "the snow2008 archive holds three crowds: snow2008_rte, snow2008_temp and "
                "snow2008_wsd",
    "cifar10h": "CIFAR-10H was dropped: its annotator-level file is not available from any "
                "pinned source, and a counts-only soft-label file has no workers",
}


def _dataset(name):
    if not isinstance(name, str):
        raise TypeError(f"a dataset name must be a str, got {type(name).__name__}.")
    if name in CROWD_DATASETS:
        return CROWD_DATASETS[name]
    hint = f" ({_RETIRED[name]})" if name in _RETIRED else ""
    raise ValueError(
        f"unknown crowd dataset {name!r}{hint}; the names are: {', '.join(CROWD_DATASETS)}."
    )


def _check_convertible(dataset):
    """Raise a ValueError for a dataset that is pinned but has no converter yet."""
    if dataset.convertible:
        return
    files = ", ".join(f.path.rsplit("/", 1)[-1] for f in dataset.remote_files())
    raise ValueError(
        f"{dataset.name} cannot be loaded yet: its converter is not written yet. "
        f"{dataset.name} is: {dataset.title} Its source files are pinned ({files}, of "
        f"github.com/{dataset.repository} at commit {dataset.commit[:7]}), and "
        f"list_crowd_datasets() marks it convertible=False."
    )


def _sources_missing(dataset, home):
    return [
        str(remote.local_path(home)) for remote in dataset.remote_files()
        if not (remote.local_path(home).is_file()
                and sha256_of(remote.local_path(home)) == remote.sha256)
    ]


def _source_paths(dataset, home, download_if_missing, absent):
    """``{file name: verified local path}`` of the dataset's pinned files, downloaded if needed.

    ``absent`` says what is missing, for the error raised when a file would
    have to be downloaded and ``download_if_missing`` is False.
    """
    if not download_if_missing and (missing := _sources_missing(dataset, home)):
        raise OSError(
            f"{dataset.name} not found: {absent}, download_if_missing=False, and these source "
            f"files are missing or do not match their sha256: {', '.join(missing)}."
        )
    return {
        remote.path.rsplit("/", 1)[-1]:
            fetch_file(remote, home, download_if_missing=download_if_missing, dataset=dataset.name)
        for remote in dataset.remote_files()
    }


def dataset_folder(name, *, data_home=None, download_if_missing=True):
    """The folder ``data_home/<name>/`` holding a public crowd in skcrowd's layout.

    The folder that :func:`fetch_crowd_dataset` reads, for tools that take a
    dataset folder (``--data DIR`` scripts, ``python -m skcrowd fetch``):
    when it holds no ``votes.csv``, the crowd's pinned source files are
    downloaded if needed, checked, converted and written there, as by
    :func:`fetch_crowd_dataset`; otherwise it is returned as is, without
    network access. Read it with :func:`load_crowd_dataset`.

    Parameters
    ----------
    name : str
        A classification crowd of :func:`list_crowd_datasets`, e.g.
        ``"zhang2014_dog"``.
    data_home : str or path-like, default=None
        Folder of the datasets; default ``SKCROWD_DATA`` or ``~/skcrowd_data``
        (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        Download the source files when the folder holds no ``votes.csv``
        (already-downloaded source files are converted offline); when False,
        raise an ``OSError`` instead of downloading.

    Returns
    -------
    pathlib.Path
        ``data_home/<name>``, holding ``votes.csv`` and the other files of the
        layout.

    Raises
    ------
    ValueError
        If ``name`` is unknown, has no converter yet, or is a regression or
        sequence-labelling crowd, which the folder layout (class votes) cannot
        hold: those are loaded with :func:`fetch_crowd_dataset`. Nothing is
        downloaded then.
    OSError
        As :func:`fetch_crowd_dataset`, when the source files cannot be
        downloaded.

    See Also
    --------
    fetch_crowd_dataset : The crowd itself, as a Bunch.
    load_crowd_dataset : Read a folder in skcrowd's layout.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from skcrowd.datasets import dataset_folder
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "zhang2014_rte").mkdir()
    >>> _ = (home / "zhang2014_rte" / "votes.csv").write_text("task,worker,label\\n0,0,1\\n")
    >>> dataset_folder("zhang2014_rte", data_home=home, download_if_missing=False).name
    'zhang2014_rte'
    """
    dataset = _dataset(name)
    _check_convertible(dataset)
    if dataset.kind != "classification":
        raise ValueError(
            f"{name} is a {dataset.kind} crowd, which skcrowd's folder layout (votes.csv of "
            f"class votes) cannot hold: load it with fetch_crowd_dataset({name!r}), which "
            "downloads its pinned source files and converts them in memory."
        )
    home = Path(get_data_home(data_home))
    folder = home / name
    if (folder / "votes.csv").is_file():
        return folder
    paths = _source_paths(dataset, home, download_if_missing, f"{folder} holds no votes.csv")
    crowd = dataset.convert(paths)
    write_dataset(folder, crowd, name=name,
                  sources=[remote.url(host="https://raw.githubusercontent.com")
                           for remote in dataset.remote_files()])
    return folder


def load_fetched(name, *, data_home=None, features="auto", sparse=False,
                 download_if_missing=True):
    """The Bunch of dataset ``name`` (see :func:`fetch_crowd_dataset`), with its description."""
    dataset = _dataset(name)
    if dataset.convertible and dataset.kind != "classification":
        if sparse:
            raise ValueError(
                f"sparse=True returns class votes as a sparse matrix; {name} is a "
                f"{dataset.kind} crowd, whose votes are a dense array: pass sparse=False."
            )
        home = Path(get_data_home(data_home))
        absent = "it is converted from its pinned source files at each load"
        bunch = dataset.convert(_source_paths(dataset, home, download_if_missing, absent))
        bunch.DESCR = (f"{dataset.describe()}\n\nConverted from the source files in "
                       f"{home / 'sources'}: {bunch.DESCR}")
        return bunch
    folder = dataset_folder(name, data_home=data_home, download_if_missing=download_if_missing)
    bunch = read_crowd_folder(folder, features=features, sparse=sparse)
    bunch.DESCR = f"{CROWD_DATASETS[name].describe()}\n\nThis copy ({folder}): {bunch.DESCR}"
    return bunch


def fetch_crowd_dataset(name, *, data_home=None, download_if_missing=True, sparse=False,
                        return_X_y=False):
    """Load a public crowd by name, downloading and converting it on first use.

    The crowds, their counts and sources are listed by
    :func:`list_crowd_datasets` and on the documentation's datasets page.
    The dataset is read from ``data_home/<name>/`` when that folder holds a
    ``votes.csv`` in skcrowd's layout (see
    :func:`~skcrowd.datasets.load_crowd_dataset`); otherwise its source files,
    each pinned to a commit of the public repository that publishes it, are
    downloaded from ``{SKCROWD_DATASETS_URL}/{repository}/{commit}/{path}``
    (default host ``https://raw.githubusercontent.com``; a ``file://`` folder
    laid out the same way works too) into
    ``data_home/sources/{repository}/{commit}/{path}``, checked against their
    sha256, converted, and written to ``data_home/<name>/``, which any
    ``--data DIR`` script can then read.

    Downloads go through pooch (retries; a progress line on stderr for files
    of 1 MB or more); a file is moved into place only once its sha256
    matches, so an interrupted download leaves nothing that a later call
    trusts. Downloaded data is never unpickled. Conversion rules (id order,
    duplicate votes, gold labels) are described in the datasets page; the
    Bunch's ``DESCR`` says what the source files hold and how many duplicate
    votes were dropped. To convert again, delete ``data_home/<name>/``.

    Two crowds are not classification crowds, and come in the arrays that
    skcrowd's estimators for them take, converted from the verified source
    files at each call (under a second; skcrowd's folder layout holds class
    votes only): ``movie_reviews_rodrigues`` (regression: the ``y`` of
    :class:`~skcrowd.neural.CrowdLayerRegressor`) and
    ``conll2003_ner_mturk`` (sequence labelling: the ``y`` of
    :class:`~skcrowd.neural.SequenceCrowdLayerClassifier`); see Returns.

    Parameters
    ----------
    name : str
        A name of :func:`list_crowd_datasets`, e.g. ``"zhang2014_dog"``.
    data_home : str or path-like, default=None
        Folder of the datasets; default ``SKCROWD_DATA`` or ``~/skcrowd_data``
        (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        Download the source files when the dataset is not in ``data_home``
        (already-downloaded source files are converted offline); when False,
        raise an ``OSError`` instead of downloading.
    sparse : bool, default=False
        Return ``votes`` as a ``scipy.sparse.csr_array`` (stored entries are
        the votes) instead of a dense array. Classification crowds only.
    return_X_y : bool, default=False
        Return ``(data, votes)`` instead of the Bunch (``data`` is None for
        crowds without features).

    Returns
    -------
    sklearn.utils.Bunch or tuple
        The Bunch of :func:`~skcrowd.datasets.load_crowd_dataset`: ``votes``
        (class indices, -1 where a worker did not vote), ``target`` (gold
        class indices, -1 where none), ``target_mask``, ``data`` (features of
        the crowd-labelled tasks, or None), ``data_valid``, ``target_valid``,
        ``data_test``, ``target_test`` (held-out tasks with gold labels, None
        where the release has none), ``class_names``, ``task_ids``,
        ``worker_ids`` (original ids), ``stats`` and ``DESCR``; or
        ``(data, votes)``.

        ``movie_reviews_rodrigues`` (regression): ``votes`` (float answers
        ``(1500, 135)`` on a 0-1 scale, NaN where a worker did not answer),
        ``target`` (true ratings), ``data`` and ``data_test`` (bag-of-words
        counts, ``scipy.sparse.csr_matrix`` with 26735 columns),
        ``target_test`` (3506 true ratings), ``task_ids``, ``worker_ids``,
        ``stats``, ``DESCR``.

        ``snow2008_anger``, ``snow2008_disgust``, ``snow2008_fear``, ``snow2008_joy``,
        ``snow2008_sadness``, ``snow2008_surprise``, ``snow2008_valence`` (regression, the
        affect ratings of Snow et al. 2008): ``votes`` (float ratings ``(100, 38)``, 0-100,
        valence -100..100, NaN where a worker did not rate a headline), ``target`` (the
        experts' ratings), ``data`` (None), ``task_ids``, ``worker_ids``, ``stats``, ``DESCR``.

        ``metaphor_novelty_parde`` (ordinal): ``votes`` (grade indices ``(1938, 231)``, -1
        where a worker did not score an item; the grades 0-3 are ``class_names`` in order),
        ``target`` (the expert's grades), ``target_mask``, ``data`` (None), ``task_ids``,
        ``worker_ids``, ``stats``, ``DESCR``.

        ``readinglevel_chen2013`` (pairwise): ``comparisons`` (a pandas DataFrame, columns
        ``worker, left, right, label``: the pair in id order, ``label`` the passage judged
        harder to read), ``target`` (grade levels 1-12, a Series indexed by passage id),
        ``data`` (None), ``item_ids``, ``worker_ids``, ``stats``, ``DESCR``.

        ``crowdspeech_dev-clean``, ``crowdspeech_dev-other``, ``crowdspeech_test-clean``,
        ``crowdspeech_test-other`` (texts): ``votes`` (a pandas DataFrame of transcriptions,
        recordings x workers, None where a worker did not transcribe a recording), ``target``
        (the reference transcripts, lowercase without punctuation), ``data`` (None),
        ``task_ids``, ``worker_ids``, ``audio`` (the recordings' URLs), ``stats``, ``DESCR``.

        ``conll2003_ner_mturk`` (sequence labelling; the release's ``val``
        documents as the training split, ``test`` as the test split; every
        sentence padded to 60 tokens): ``data`` and ``data_test`` (tokens,
        object arrays ``(n_sentences, 60)``, ``""`` for padding), ``votes``
        and ``votes_test`` (int8 tag indices ``(n_sentences, 60, 47)``, -1
        where a worker did not tag the sentence and for padding;
        ``votes_test`` is for aggregation, a model scored on ``target_test``
        must not train on it), ``target`` and ``target_test`` (gold tag
        indices, -1 for padding), ``class_names`` (the 9 BIO tags),
        ``task_ids`` and ``task_ids_test`` (``"<document>:<sentence>"``),
        ``worker_ids``, ``stats``, ``DESCR``.

    Raises
    ------
    ValueError
        If ``name`` is unknown (the message lists the names), names a dataset
        whose files are pinned but whose converter is not written yet
        (``convertible`` is False in :func:`list_crowd_datasets`; nothing is
        downloaded), ``sparse=True`` is asked of a regression or sequence
        crowd, or a source file does not have the expected content (naming
        file, line, value).
    OSError
        If the dataset is absent and cannot be downloaded (the message names
        the URL and the offline alternatives), or a download does not match
        its recorded sha256 (the message names the URL and both digests; the
        file is deleted).

    See Also
    --------
    list_crowd_datasets : The crowds, with their counts.
    load_crowd_dataset : Load a folder in skcrowd's layout, or a crowd by name.

    Examples
    --------
    >>> from skcrowd.datasets import fetch_crowd_dataset
    >>> dog = fetch_crowd_dataset("zhang2014_dog")  # doctest: +SKIP
    >>> dog.votes.shape, int(dog.target_mask.sum())  # doctest: +SKIP
    ((807, 109), 807)
    >>> reviews = fetch_crowd_dataset("movie_reviews_rodrigues")  # doctest: +SKIP
    >>> reviews.votes.shape, reviews.data.shape, reviews.target_test.shape  # doctest: +SKIP
    ((1500, 135), (1500, 26735), (3506,))
    >>> ner = fetch_crowd_dataset("conll2003_ner_mturk")  # doctest: +SKIP
    >>> ner.votes.shape, ner.class_names[-1]  # doctest: +SKIP
    ((2997, 60, 47), 'O')

    A folder already in skcrowd's layout is read without network access:

    >>> import pathlib, tempfile
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "zhang2014_rte").mkdir()
    >>> _ = (home / "zhang2014_rte" / "votes.csv").write_text("task,worker,label\\n0,0,1\\n")
    >>> fetch_crowd_dataset("zhang2014_rte", data_home=home, download_if_missing=False).votes
    array([[1]])
    """
    bunch = load_fetched(name, data_home=data_home, sparse=sparse,
                         download_if_missing=download_if_missing)
    return (bunch.data, bunch.votes) if return_X_y else bunch


def list_crowd_datasets():
    """The public crowds :func:`fetch_crowd_dataset` loads, with their counts and sources.

    Counts are those skcrowd's converter produced from the pinned source
    files (missing, as ``<NA>``, for crowds whose files have not been
    converted by the developers yet); nothing is downloaded. The table also
    lists the datasets whose source files are pinned but whose converter is
    not written yet (``convertible`` False, no counts):
    :func:`fetch_crowd_dataset` raises a ``ValueError`` for them.

    For the regression crowd ``classes`` and ``mv_accuracy`` are missing;
    for the sequence-labelling crowd the tasks are the sentences of the
    training split, ``votes`` the sentences a worker tagged, ``classes`` the
    tags.

    Returns
    -------
    pandas.DataFrame
        One row per crowd: ``name``; ``kind`` (``"classification"``: one
        class vote per task and worker; ``"regression"``; ``"sequence"``;
        ``"ordinal"``; ``"pairwise"``: comparisons of two items; ``"text"``: transcriptions);
        ``convertible`` (False: pinned, but
        :func:`fetch_crowd_dataset` cannot convert it yet); ``tasks``,
        ``workers``, ``classes``, ``votes``, ``gold`` (tasks with a gold
        label); ``duplicates`` (repeated (task, worker) votes dropped);
        ``mv_accuracy`` (majority vote on the gold tasks, ties counted as a
        uniform pick); ``features``;
        ``same_crowd_as`` (another crowd of the table holding the same votes,
        published separately: count them once in a benchmark);
        ``download_mb`` (size of the source files); ``source`` (repository and
        commit); ``reference``; ``licence``.

    Examples
    --------
    >>> from skcrowd.datasets import list_crowd_datasets
    >>> table = list_crowd_datasets()
    >>> table.set_index("name").loc["zhang2014_dog", ["tasks", "workers", "classes"]].tolist()
    [807, 109, 4]
    >>> table.loc[~table["convertible"], "name"].tolist()
    []
    >>> table.set_index("name").loc["metaphor_novelty_parde", ["classes", "votes"]].tolist()
    [4, 11598]
    >>> table.loc[table["kind"] != "classification", ["name", "kind"]].values.tolist()[:2]
    [['movie_reviews_rodrigues', 'regression'], ['conll2003_ner_mturk', 'sequence']]
    >>> affect = table.loc[table["kind"] == "regression", "name"].tolist()[1:]
    >>> affect  # doctest: +NORMALIZE_WHITESPACE
    ['snow2008_anger', 'snow2008_disgust', 'snow2008_fear', 'snow2008_joy', 'snow2008_sadness',
     'snow2008_surprise', 'snow2008_valence']
    """
    pd = import_optional("pandas", "list_crowd_datasets (it returns a pandas DataFrame)",
                         extra="datasets")

    columns = ["tasks", "workers", "classes", "votes", "gold", "duplicates"]
    rows = []
    for dataset in DATASETS:
        counts = dataset.counts
        rows.append({
            "name": dataset.name,
            "kind": dataset.kind,
            "convertible": dataset.convertible,
            **{c: (getattr(counts, c) if counts else None) for c in columns},
            "mv_accuracy": counts.mv_accuracy if counts else None,
            "features": dataset.features,
            "same_crowd_as": dataset.same_as or "",
            "download_mb": round(sum(f.size for f in dataset.remote_files()) / 1e6, 2),
            "source": f"{dataset.repository}@{dataset.commit[:7]}",
            "reference": dataset.reference,
            "licence": dataset.licence,
        })
    table = pd.DataFrame(rows)
    table[columns] = table[columns].astype("Int64")
    table["mv_accuracy"] = table["mv_accuracy"].astype("Float64")
    return table


def fetch_labelme(*, data_home=None, download_if_missing=True, sparse=False, return_X_y=False):
    """Load the LabelMe crowdsourced scene classification dataset (8 classes, 59 workers).

    A shortcut for ``fetch_crowd_dataset("labelme", ...)``: 1000 training
    images with 1 to 3 votes each and gold labels, 512-d VGG16 features
    (``data``), and held-out splits with gold labels and no votes:
    ``data_valid``/``target_valid`` (500 images) and ``data_test``/
    ``target_test`` (1188 images). Source: ``data/LabelMe/`` of the
    PyLearningCrowds repository (``answers.txt``, ``LabelMe_Z_*.txt``,
    ``LabelMe_VGG_avg_*.npy``), about 5.7 MB.

    Parameters
    ----------
    data_home, download_if_missing, sparse, return_X_y
        As in :func:`fetch_crowd_dataset`.

    Returns
    -------
    sklearn.utils.Bunch or tuple
        As :func:`fetch_crowd_dataset`.

    References
    ----------
    F. Rodrigues and F. C. Pereira. "Deep learning from crowds". AAAI, 2018.

    B. C. Russell, A. Torralba, K. P. Murphy and W. T. Freeman. "LabelMe: a
    database and web-based tool for image annotation". IJCV 77, 2008.

    Examples
    --------
    >>> from skcrowd.datasets import fetch_labelme
    >>> labelme = fetch_labelme()  # doctest: +SKIP
    >>> labelme.votes.shape, labelme.data.shape, labelme.data_test.shape  # doctest: +SKIP
    ((1000, 59), (1000, 512), (1188, 512))
    >>> labelme.class_names[:3].tolist()  # doctest: +SKIP
    ['highway', 'insidecity', 'tallbuilding']
    """
    return fetch_crowd_dataset("labelme", data_home=data_home, sparse=sparse,
                               download_if_missing=download_if_missing, return_X_y=return_X_y)


def fetch_music(*, data_home=None, download_if_missing=True, sparse=False, return_X_y=False):
    """Load the crowdsourced music genre classification dataset (10 genres).

    A shortcut for ``fetch_crowd_dataset("music", ...)``: the songs of
    ``music_genre_gold.csv`` with their crowd votes (``music_genre_mturk.csv``),
    gold genres and 124 audio features (``data``), and the test songs of
    ``music_genre_test.csv`` (``data_test``/``target_test``, no votes).
    Source: ``data/Music/`` of the end-to-end-crowdsourcing repository,
    about 4.6 MB. Classes are the genre names in alphabetical order.

    Parameters
    ----------
    data_home, download_if_missing, sparse, return_X_y
        As in :func:`fetch_crowd_dataset`.

    Returns
    -------
    sklearn.utils.Bunch or tuple
        As :func:`fetch_crowd_dataset`.

    References
    ----------
    F. Rodrigues, F. C. Pereira and B. Ribeiro. "Learning from multiple
    annotators: distinguishing good from random labelers". Pattern
    Recognition Letters 34(12), 2013.

    Examples
    --------
    >>> from skcrowd.datasets import fetch_music
    >>> music = fetch_music()  # doctest: +SKIP
    >>> music.data.shape[1], music.class_names[:3].tolist()  # doctest: +SKIP
    (124, ['blues', 'classical', 'country'])
    """
    return fetch_crowd_dataset("music", data_home=data_home, sparse=sparse,
                               download_if_missing=download_if_missing, return_X_y=return_X_y)
