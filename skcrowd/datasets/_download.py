"""Downloads of pinned source files: where they come from, where they go, how they are checked.

Each source file of a public crowd is pinned to a commit of the public git
repository that holds it (:class:`RemoteFile`: repository, commit, path, size,
sha256). It is downloaded from ``{host}/{repository}/{commit}/{path}``, the
host being the environment variable ``SKCROWD_DATASETS_URL`` (default
``https://raw.githubusercontent.com``; an ``http(s)://`` mirror, or a
``file://`` folder laid out the same way), into
``{data_home}/sources/{repository}/{commit}/{path}``.

Downloads go through `pooch <https://www.fatiando.org/pooch>`_ (retries,
streaming into a temporary file of the destination folder, moved into place
only once its sha256 matches). A file that does not match its recorded sha256
is deleted and the error names the URL, the expected and the found digests. A
file already in place is used only if its sha256 matches: an interrupted or
corrupted copy is downloaded again, never trusted. Downloads are quiet but for a progress line
on stderr for files of 1 MB or more (pooch's own line per file is silenced).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote, urlparse
from urllib.request import url2pathname

from .._optional import import_optional

__all__ = ["get_data_home", "datasets_url", "RemoteFile", "fetch_file"]

DEFAULT_DATASETS_URL = "https://raw.githubusercontent.com"
_TIMEOUT_S = 60
#: Attempts after a failed download (connection error or checksum mismatch), with pooch's
#: back-off of 1 s, 2 s, ... between them.
_RETRIES = 2
#: Downloads at least this large report their progress on stderr.
_PROGRESS_MIN_BYTES = 1 << 20


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


def datasets_url():
    """The download host: ``SKCROWD_DATASETS_URL`` or ``https://raw.githubusercontent.com``."""
    return os.environ.get("SKCROWD_DATASETS_URL", "").rstrip("/") or DEFAULT_DATASETS_URL


class RemoteFile(NamedTuple):
    """A source file pinned to a commit of a public git repository, with its size and sha256."""

    repository: str
    commit: str
    path: str
    size: int
    sha256: str

    @property
    def key(self):
        """``{repository}/{commit}/{path}``: the file's place on the host and in the cache."""
        return f"{self.repository}/{self.commit}/{self.path}"

    def url(self, host=None):
        """The file's URL on ``host`` (default :func:`datasets_url`), its path percent-quoted."""
        return f"{host or datasets_url()}/{quote(self.key)}"

    def local_path(self, data_home):
        """Where the file is cached: ``{data_home}/sources/{repository}/{commit}/{path}``."""
        return Path(data_home, "sources", self.repository, self.commit, *self.path.split("/"))


def sha256_of(path):
    """Hex sha256 digest of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ChecksumError(OSError, ValueError):
    """A downloaded file whose sha256 is not the recorded one (the file is deleted).

    A ValueError too, so that pooch retries the download before giving up.
    """


class _Progress:
    """Progress of one download on stderr, in the shape pooch's downloaders expect.

    pooch sets ``total`` (bytes, 0 when unknown), calls ``update(n)`` per
    chunk, then ``reset()``, ``update(total)`` and ``close()``. Downloads
    smaller than ``_PROGRESS_MIN_BYTES`` print nothing; others print at most
    one line a second and a last one when done.
    """

    def __init__(self, name, stream=None):
        self.name, self.stream = name, stream or sys.stderr
        self.total, self.done, self._last = 0, 0, 0.0

    def _shown(self):
        return self.total >= _PROGRESS_MIN_BYTES

    def update(self, n):
        self.done += n
        now = time.monotonic()
        if self._shown() and now - self._last >= 1.0:
            self._last = now
            self._print("\r")

    def _print(self, end):
        done = min(self.done, self.total)
        self.stream.write(
            f"\rskcrowd: downloading {self.name}: {done / 1e6:.1f} of {self.total / 1e6:.1f} MB "
            f"({100 * done / self.total:.0f} %)" + ("" if end == "\r" else end)
        )
        self.stream.flush()

    def reset(self):
        self.done = 0

    def close(self):
        if self._shown():
            self._print("\n")


class _Downloader:
    """pooch downloader for one pinned file: HTTP(S) through pooch, ``file://`` by copy.

    After the transfer it checks the sha256 of the temporary file pooch gave
    it, and raises :class:`ChecksumError` (naming URL, expected and found
    digests) when it differs; pooch then deletes that file.
    """

    def __init__(self, remote):
        self.remote = remote

    def __call__(self, url, output_file, pooch_instance, check_only=False):
        import pooch

        progress = _Progress(self.remote.path.rsplit("/", 1)[-1])
        if urlparse(url).scheme == "file":
            _copy_local(url, output_file, progress)
        else:
            pooch.HTTPDownloader(progressbar=progress, timeout=_TIMEOUT_S)(
                url, output_file, pooch_instance
            )
        found = sha256_of(output_file)
        if found != self.remote.sha256:
            raise ChecksumError(
                f"the file downloaded from {url} has sha256 {found}, expected "
                f"{self.remote.sha256}: the download is corrupted or the host serves another "
                "file; it was deleted."
            )


def _copy_local(url, output_file, progress):
    """Copy the file a ``file://`` URL points to into ``output_file``, reporting progress."""
    source = url2pathname(urlparse(url).path)
    with open(source, "rb") as src, open(output_file, "wb") as dst:
        progress.total = os.fstat(src.fileno()).st_size
        for block in iter(lambda: src.read(1 << 20), b""):
            dst.write(block)
            progress.update(len(block))
    progress.close()


def _import_pooch():
    return import_optional(
        "pooch", "downloading a dataset (folders already in data_home are read without it)")


def fetch_file(remote, data_home, *, download_if_missing=True, dataset=None):
    """Local path of a pinned file: the cached copy if its sha256 matches, else downloaded.

    Parameters
    ----------
    remote : RemoteFile
        The file.
    data_home : path-like
        The cache folder; the file goes to ``remote.local_path(data_home)``.
    download_if_missing : bool, default=True
        When False, a missing or mismatching copy raises instead of being
        downloaded.
    dataset : str, default=None
        Name of the dataset that needs the file, for error messages.

    Returns
    -------
    pathlib.Path
        The verified local copy.

    Raises
    ------
    OSError
        If the file cannot be downloaded (the message names the URL and the
        offline alternatives), or its download does not match the recorded
        sha256 (the message names the URL and both digests; the download is
        deleted).
    """
    local = remote.local_path(data_home)
    if local.is_file() and sha256_of(local) == remote.sha256:
        return local
    url = remote.url()
    state = "does not match its recorded sha256" if local.is_file() else "is missing"
    if not download_if_missing:
        raise OSError(
            f"{local} {state}, and download_if_missing=False: it would be downloaded from "
            f"{url}."
        )
    pooch = _import_pooch()
    import requests

    root = Path(data_home, "sources")
    cache = pooch.create(
        path=root, base_url="", registry={remote.key: f"sha256:{remote.sha256}"},
        urls={remote.key: url}, retry_if_failed=_RETRIES,
    )
    logger = pooch.get_logger()
    level = logger.level
    # pooch logs "Downloading file ... from ... to ..." for every file at INFO: quiet, as the
    # progress line of the large files says what is downloaded
    logger.setLevel("WARNING")
    try:
        cache.fetch(remote.key, downloader=_Downloader(remote))
    except ChecksumError:
        raise
    except (OSError, requests.RequestException) as exc:
        what = f" (needed by {dataset})" if dataset else ""
        raise OSError(
            f"could not download {url}{what}: {exc}. Offline? Save a copy of that file as "
            f"{local} (it is checked against sha256 {remote.sha256}); or set "
            "SKCROWD_DATASETS_URL to a mirror (http(s):// or file:// folder laid out as "
            "{repository}/{commit}/{path}); or pass a data_home whose "
            f"{dataset or '<dataset name>'}/ folder holds the dataset in skcrowd's folder "
            "layout (votes.csv, truth.csv, ...)."
        ) from exc
    finally:
        logger.setLevel(level)
    return local
