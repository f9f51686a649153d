"""Hypothesis strategies of votes: valid votes matrices in every accepted container, long-format
votes, and malformed input.

A :class:`VotesCase` is one generated crowd: a grid of labels with a mask of observed entries,
the kind of labels (int, str, float, bool), the missing marker and the container (numpy, nested
lists, pandas, masked array, scipy.sparse). :meth:`VotesCase.build` writes it in its container,
rows and columns optionally permuted; :meth:`VotesCase.observed` gives the votes it holds, the
oracle of every property. Used by ``tests/test_votes_properties.py`` and
``tests/aggregation/test_properties.py``; the sizes and counts are listed in
``doc/reliability.rst``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

MAX_TASKS = 25
MAX_WORKERS = 10
MAX_CLASSES = 100
KINDS = ("int", "str", "float", "bool")
CONTAINERS = ("numpy", "list", "pandas", "masked", "sparse")
SPARSE_FORMATS = ("csr_array", "csc_array", "coo_array", "csr_matrix", "coo_matrix")
INT_DTYPES = ("int64", "int32", "int16", "int8", "uint8", "uint16", "uint64")
# label text: any unicode but NUL, which numpy's fixed-width strings drop
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6)
# string labels: an empty or whitespace-only string is never a label (check_votes raises)
LABEL_TEXT = TEXT.filter(str.strip)


@dataclass
class VotesCase:
    """One generated votes matrix and how it is written.

    ``labels[i, j]`` is the label of entry ``(i, j)`` (a Python object of ``kind``), a vote
    where ``mask[i, j]``; ``storage`` is how the container holds it: ``"native"`` (an array
    of the labels' own dtype, the marker written in missing entries), ``"object"`` (an object
    array, the marker written in missing entries), ``"float"`` (float64, NaN in missing
    entries) or ``"nullable"`` (a pandas nullable dtype, ``pd.NA`` in missing entries).
    """

    labels: np.ndarray  # object array (n_tasks, n_workers)
    mask: np.ndarray  # bool: observed entries
    kind: str
    container: str
    storage: str
    missing_label: object
    dtype: str | None = None  # numpy dtype of "native" storage
    sparse_format: str = "csr_array"
    worker_names: bool = False  # pandas: string column names

    @property
    def shape(self):
        return self.mask.shape

    def observed(self, rows=None, cols=None):
        """Set of ``(row, column, label)`` of the votes (after the permutations, if given)."""
        labels, mask = self._permuted(rows, cols)
        r, c = np.nonzero(mask)
        return {(int(i), int(j), _plain(labels[i, j])) for i, j in zip(r, c)}

    def _permuted(self, rows, cols):
        labels, mask = self.labels, self.mask
        if rows is not None:
            labels, mask = labels[rows], mask[rows]
        if cols is not None:
            labels, mask = labels[:, cols], mask[:, cols]
        return labels, mask

    def build(self, rows=None, cols=None):
        """The votes in their container; ``rows``/``cols``: permutations applied first."""
        labels, mask = self._permuted(rows, cols)
        if self.container == "sparse":
            r, c = np.nonzero(mask)
            data = np.array([labels[i, j] for i, j in zip(r, c)], dtype=self.dtype)
            coo = sp.coo_array((data, (r, c)), shape=mask.shape)
            return getattr(sp, self.sparse_format)(coo) if self.sparse_format != "coo_array" \
                else coo
        if self.container == "masked":
            # hidden entries hold a valid label: a mask that is lost would turn them into votes
            hidden = labels.copy()
            first = labels[mask][0] if mask.any() else self._some_label()
            hidden[~mask] = first
            return np.ma.masked_array(np.asarray(hidden.tolist(), dtype=self.dtype), mask=~mask)
        grid = labels.copy()
        if self.storage == "float":
            grid[~mask] = np.nan
            arr = np.asarray(grid.tolist(), dtype=np.float64) if grid.size else \
                np.zeros(mask.shape)
        elif self.storage == "nullable":
            grid[~mask] = None
            arr = grid
        else:
            grid[~mask] = self.missing_label
            arr = np.empty(mask.shape, dtype=object)
            arr[...] = grid
            if self.storage == "native":
                arr = np.asarray(arr.tolist(), dtype=self.dtype)
        if self.container == "numpy":
            return arr
        if self.container == "list":
            return arr.tolist()
        import pandas as pd

        columns = [f"w{j}" for j in range(mask.shape[1])] if self.worker_names else None
        if cols is not None and columns is not None:
            columns = [f"w{j}" for j in cols]
        frame = pd.DataFrame(arr, columns=columns)
        if self.storage == "nullable":
            frame = frame.astype("Int64" if self.kind == "int" else
                                 "boolean" if self.kind == "bool" else "string")
        return frame

    def _some_label(self):
        return self.labels.flat[0]


def _plain(value):
    """A label as a plain Python value: integral floats as ints (as check_votes encodes them)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return int(value)
    return value


def _dtype_range(dtype):
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


@st.composite
def label_sets(draw, kind, n_classes, exclude=(), dtype="int64"):
    """``n_classes`` distinct labels of ``kind`` (fewer for bool), none equal to ``exclude``."""
    if kind == "int":
        low, high = _dtype_range(dtype)
        # clustered small values or anywhere in the dtype's range (far apart labels)
        element = st.one_of(st.integers(max(low, -5), min(high, 3 * MAX_CLASSES)),
                            st.integers(low, high))
    elif kind == "float":
        element = st.integers(-(2**53), 2**53).map(float)
    elif kind == "str":
        element = LABEL_TEXT
    else:
        element = st.booleans()
        n_classes = min(n_classes, 2)
    labels = draw(st.lists(element.filter(lambda x: not any(_same(x, e) for e in exclude)),
                           min_size=n_classes, max_size=n_classes, unique=True))
    return labels


def _same(x, marker):
    if isinstance(marker, float) and marker != marker:
        return False
    if isinstance(x, str) != isinstance(marker, str) or marker is None:
        return False
    return x == marker


@st.composite
def grids(draw, max_tasks=MAX_TASKS, max_workers=MAX_WORKERS, max_classes=MAX_CLASSES):
    """(n_tasks, n_workers, n_classes, class index of each entry, observed mask)."""
    n_tasks = draw(st.integers(1, max_tasks))
    n_workers = draw(st.integers(1, max_workers))
    n_classes = draw(st.integers(1, max_classes))
    shape = (n_tasks, n_workers)
    index = draw(hnp.arrays(np.int64, shape, elements=st.integers(0, n_classes - 1)))
    density = draw(st.sampled_from([0.0, 0.1, 0.4, 0.8, 1.0]))
    mask = draw(hnp.arrays(bool, shape, elements=st.booleans(),
                           fill=st.just(bool(density >= 0.5))))
    if density in (0.0, 1.0):  # all missing (an error) or all observed
        mask[...] = bool(density)
    for i in draw(st.sets(st.integers(0, n_tasks - 1), max_size=3)):
        mask[i] = False  # tasks without votes
    for j in draw(st.sets(st.integers(0, n_workers - 1), max_size=2)):
        mask[:, j] = False  # workers without votes
    return n_classes, index, mask


def _markers(kind, dtype):
    """Missing markers for labels of ``kind``: (marker, storage) choices."""
    if kind == "int":
        low, high = _dtype_range(dtype)
        ints = st.integers(max(low, -(10**6)), min(high, 10**6)) | st.sampled_from(
            [m for m in (-1, 0, low, high) if low <= m <= high])
        return st.one_of(ints.map(lambda m: (m, "native")),
                         st.sampled_from([(None, "object"), (np.nan, "object"),
                                          (np.nan, "float"), (None, "float"),
                                          (None, "nullable")]))
    if kind == "float":
        return st.one_of(st.sampled_from([(np.nan, "float"), (None, "float"), (None, "object")]),
                         st.integers(-5, 5).map(lambda m: (float(m), "native")))
    if kind == "str":
        return st.one_of(TEXT.map(lambda m: (m, "native")), TEXT.map(lambda m: (m, "object")),
                         st.sampled_from([(None, "object"), (np.nan, "object"),
                                          (None, "nullable")]))
    return st.sampled_from([(None, "object"), (np.nan, "object"), (None, "nullable")])


@st.composite
def votes_cases(draw, containers=CONTAINERS, kinds=KINDS, max_tasks=MAX_TASKS,
                max_workers=MAX_WORKERS, max_classes=MAX_CLASSES):
    """A valid :class:`VotesCase` (possibly without any vote: check_votes rejects that)."""
    container = draw(st.sampled_from(containers))
    kinds = [k for k in kinds if container != "sparse" or k in ("int", "float")]
    kind = draw(st.sampled_from(kinds))
    n_classes, index, mask = draw(grids(max_tasks, max_workers, max_classes))
    dtype = None
    if kind == "int":  # a nested list has no dtype: Python ints
        dtype = "int64" if container == "list" else draw(st.sampled_from(INT_DTYPES))
    elif kind == "float":
        dtype = "float64"
    if container == "sparse":
        marker, storage = None, "native"
    elif container == "masked":
        marker, storage = -1, "native"
        if kind == "str":
            marker, dtype = "", "U"
        elif kind == "bool":
            dtype = "bool"
    else:
        marker, storage = draw(_markers(kind, dtype))
        if container != "pandas" and storage == "nullable":
            storage = "object"
    exclude = (marker,) if storage in ("native", "object") else ()
    labels = draw(label_sets(kind, n_classes, exclude=exclude, dtype=dtype or "int64"))
    if storage == "float" and kind == "int":
        labels = [x for x in labels if abs(x) <= 2**53]  # exact in float64
        assume(labels)
    if kind == "str" and storage == "native":
        dtype = "U"
    n = len(labels)
    grid = np.empty(mask.shape, dtype=object)
    for (i, j), k in np.ndenumerate(index):
        grid[i, j] = labels[k % n]
    sparse_format = draw(st.sampled_from(SPARSE_FORMATS)) if container == "sparse" else "csr_array"
    return VotesCase(labels=grid, mask=mask, kind=kind, container=container, storage=storage,
                     missing_label=marker, dtype=dtype, sparse_format=sparse_format,
                     worker_names=container == "pandas" and draw(st.booleans()))


# -- long format --------------------------------------------------------------------------------

IDS = st.one_of(st.integers(-(2**62), 2**62), TEXT)


@st.composite
def long_votes(draw, max_votes=60, duplicates=True):
    """Long-format votes ``(task, worker, label)`` columns, and the duplicated (task, worker)
    pairs (empty when none)."""
    id_kind = draw(st.sampled_from(["int", "str"]))
    ids = st.integers(-(2**62), 2**62) if id_kind == "int" else TEXT
    tasks = draw(st.lists(ids, min_size=1, max_size=12, unique=True))
    workers = draw(st.lists(st.integers(-(2**62), 2**62) if draw(st.booleans()) else TEXT,
                            min_size=1, max_size=8, unique=True))
    kind = draw(st.sampled_from(["int", "str", "float"]))
    labels = draw(label_sets(kind, draw(st.integers(1, 12))))
    pairs = draw(st.lists(st.tuples(st.sampled_from(tasks), st.sampled_from(workers)),
                          min_size=1, max_size=max_votes, unique=True))
    rows = [(t, w, draw(st.sampled_from(labels))) for t, w in pairs]
    repeated = []
    if duplicates and draw(st.booleans()):
        for k in draw(st.lists(st.integers(0, len(rows) - 1), min_size=1, max_size=3)):
            t, w, lab = rows[k]
            rows.append((t, w, draw(st.sampled_from([lab, *labels]))))  # same or other label
            repeated.append((t, w))
    rows = draw(st.permutations(rows))
    return rows, set(repeated)


# -- malformed input ----------------------------------------------------------------------------

BAD_ENTRIES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),  # non-integral, NaN, inf
    st.complex_numbers(max_magnitude=10),
    st.sampled_from([None, b"x", (1,), [2], {"a": 1}, object(), 1.5, float("inf"), True]),
    st.integers(-3, 3),
    TEXT,
)


@st.composite
def arbitrary_entries(draw, max_tasks=6, max_workers=5):
    """Object arrays of anything (labels, None, NaN, inf, non-integral floats, complex numbers,
    bytes, containers, objects, mixed types): check_votes accepts them or raises clearly."""
    shape = (draw(st.integers(0, max_tasks)), draw(st.integers(0, max_workers)))
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(shape):
        out[idx] = draw(BAD_ENTRIES)
    return out
