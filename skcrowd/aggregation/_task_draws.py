"""Counter-based random numbers of the tasks: the same draws in memory, out of core and on
Dask, on every CPU (the random starts of :class:`~skcrowd.aggregation._em.BaseEM`)."""

import numpy as np


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix64(x):
    """SplitMix64's finalizer on a uint64 array (wrapping arithmetic): a bijection that spreads
    each input bit over the output (Steele, Lea & Flood, 2014)."""
    with np.errstate(over="ignore"):  # wrapping is the point (numpy warns on scalars)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _id_keys(tasks, n_tasks):
    """A uint64 key of each task id: the id itself for integer ids (positions when ``tasks`` is
    None), a hash of its text (code points) for other ids; a function of the id alone."""
    if tasks is None:
        return np.arange(n_tasks, dtype=np.uint64)
    tasks = np.asarray(tasks)
    if tasks.dtype.kind in "iub":
        return tasks.astype(np.int64).view(np.uint64)
    text = np.ascontiguousarray(tasks.astype(str))
    codes = text.view(np.uint32).reshape(len(text), -1)
    keys = np.full(len(text), np.uint64(0x5EED))
    for column in codes.T:  # the padding after a shorter id (code point 0) leaves it alone
        with np.errstate(over="ignore"):
            mixed = _mix64(keys + _GOLDEN * (column.astype(np.uint64) + np.uint64(1)))
        keys = np.where(column != 0, mixed, keys)
    return keys


class _TaskDraws:
    """The random numbers of a block's tasks, functions of ``(seed, task id, stream)`` only.

    A fit in memory, out of core or on Dask therefore starts from the same random
    responsibilities whatever the blocks, and every CPU draws the same numbers: they are
    counter-based (SplitMix64 of the task's key, the seed, the stream and the number's
    position), with integer arithmetic and a sort, and no transcendental function whose last
    bit could depend on the CPU's SIMD code.
    """

    def __init__(self, seed, tasks, n_tasks):
        with np.errstate(over="ignore"):
            self.keys = _mix64(_id_keys(tasks, n_tasks) ^ _mix64(np.uint64(seed) + _GOLDEN))

    def uniform(self, stream, n):
        """``(n_tasks, n)`` uniforms in the open interval (0, 1) of stream ``stream``."""
        counter = np.arange(n, dtype=np.uint64) + np.uint64(stream) * np.uint64(1 << 32)
        with np.errstate(over="ignore"):
            bits = _mix64(_mix64(self.keys[:, None] + _GOLDEN * (counter + np.uint64(1))))
        return ((bits >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53

    def flat_dirichlet(self, stream, n_rows, n):
        """``(n_tasks, n_rows, n)``: ``n_rows`` draws of each task from the flat Dirichlet
        distribution over ``n`` entries, the spacings of ``n - 1`` sorted uniforms."""
        cuts = np.sort(self.uniform(stream, n_rows * (n - 1)).reshape(
            len(self.keys), n_rows, n - 1), axis=2)
        edges = np.concatenate([np.zeros(cuts.shape[:2] + (1,)), cuts,
                                np.ones(cuts.shape[:2] + (1,))], axis=2)
        return np.diff(edges, axis=2)
