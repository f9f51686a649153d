"""Per-block EM kernels of the aggregators: one module per model, shared numerics, one engine.

The EM loops never touch the votes themselves: each iteration hands the
current parameters to a kernel that processes the votes of a *block* of whole
tasks (all tasks of a fit, or one partition of them) and returns the block's
responsibilities, its log-likelihood and its sufficient statistics; the M-step
only sees statistics summed over blocks. In memory there is one block; an
out-of-core or distributed back end calls the same kernels on partitions and
adds up the per-worker statistics, which are indexed by the block's own worker
numbers (give each block the parameter rows of its workers).

A block is described by a :class:`BlockLayout`, built once from a
:class:`skcrowd.Votes` and reused by every kernel call.

Modules:

- ``_common``: what every model's kernels use: the engine check, numba's
  import and the ``_jit`` compiler, :class:`BlockLayout`, the chunking of a
  block and the size thresholds of the parallel drivers, :func:`safe_log`,
  the log-sum-exp passes (numpy and numba), :func:`naive_soft_labels`,
  :func:`row_argmax`;
- ``dawid_skene``: the Dawid-Skene E-step fused with its confusion counts, and
  its M-step (:func:`ds_block_statistics`, :func:`ds_log_confusions`, ...);
- ``dirichlet``: the Dirichlet posteriors of the variational models (expected
  logs and KL divergences in one pass, :func:`dirichlet_expectations`);
- ``glad``: the GLAD E-step fused with the gradients of its M-step, and the
  per-task difficulty search (:func:`glad_block_statistics`,
  :func:`glad_task_difficulties`, ...);
- ``weighted_vote``: the soft labels of a weighted majority vote and each
  worker's agreement with it (Wawa, ZeroBasedSkill, KOS, MMSR);
- ``kos``: one iteration of KOS's message passing;
- ``mmsr``: the workers' agreement counts and M-MSR's trimmed means;
- ``one_coin``: the E-step of the models where a vote gives the true class or
  a draw that does not depend on it (one-coin Dawid-Skene, MACE), fused with
  each worker's (or cell's) agreement (:func:`one_coin_block_statistics`, ...);
- ``mace``: MACE's vote tables and expected knowing / spamming counts
  (:func:`mace_vote_tables`, :func:`mace_expected_counts`).
- ``_compile``: the kernels compiled in a background process while ``"auto"``
  runs numpy, and whether numba's cache holds them.

A new model adds one module here, named for it, whose public kernels take a
:class:`BlockLayout` and the parameters, branch on ``_engine()`` at each call
(numba path, numpy path) and are re-exported below (see
:class:`skcrowd.aggregation._em.BaseEM` for the estimator's side).

Two engines compute the same numbers (to rounding, about 1e-12):

- ``"numba"`` (when numba is installed, extra ``skcrowd[fast]``): compiled
  loops, parallel over tasks for the per-task work and over workers for the
  per-worker sums. Each thread owns the rows it writes, and every sum runs in
  a fixed order, so results do not depend on the number of threads. Each
  kernel is a per-unit body (a task, a chunk of tasks) and two drivers that
  loop over the units, ``*_serial`` and ``*_parallel``: blocks of fewer than
  ``_common.PARALLEL_MIN_VOTES`` votes run on one thread, as starting the threads
  costs more than the work (ten times more on a busy machine). On a machine
  busier than its cores, two threads are no faster than one (measured on a
  shared 2-core machine); on an idle one they are about 1.8 times faster. The
  model modules describe their passes.
- ``"numpy"``: vectorized numpy, ``np.bincount`` and scipy.sparse products.

The package attribute ``ENGINE`` selects the engine of every model's kernels
for later calls; the kernels read it at each call:

- ``"auto"`` (the default): numpy below ``AUTO_NUMBA_MIN_VOTES`` votes, numba
  from there once its kernels are compiled (numpy when numba does not import).
  An EM fit chooses once, by its number of votes (:func:`fit_engine`), for
  every kernel it calls; a kernel called on its own chooses by the votes of its
  block (:func:`engine_for_votes`). numba compiles a kernel at its first call
  after a fresh install (3.6 s for DawidSkene, 7.9 s for GLAD on this project's
  machine), where a numpy fit of 1e4 votes takes 0.02-0.06 s: below the
  threshold compiling does not pay for itself within a fit. From there, a fit
  that finds the kernels uncompiled runs numpy and starts their compile in a
  background process (module ``_compile``), so that no fit waits for numba's
  compiler; later fits load them from numba's cache. ``BACKGROUND_COMPILE =
  False`` (or the environment variable ``SKCROWD_BACKGROUND_COMPILE=0``)
  gives numba from the threshold, compiling at the first call (measured by
  ``benchmarks/first_fit.py``, see the benchmarks page);
- ``"numba"``, ``"numpy"``: that engine for every call (``"numba"`` compiles
  at the first call where the cache is cold).

>>> from skcrowd.aggregation import kernels
>>> kernels.ENGINE in ("auto", "numba", "numpy")
True

Log-probabilities are floored at the log of the smallest positive float
(about -708) so that an E-step never meets ``-inf - -inf``; every
normalization is a log-sum-exp.

numba caches the compiled kernels on disk (the package's ``__pycache__``, else
numba's user-wide cache, or ``NUMBA_CACHE_DIR``), and discards a kernel's cache when
its own file changes, not when a helper it calls from another file does: after
editing ``_common.py``, delete the numba cache files (``*.nbi``, ``*.nbc``) of
this package's ``__pycache__``.
"""

from ._common import (
    AUTO_NUMBA_MIN_VOTES,
    BlockLayout,
    engine_for_votes,
    fit_engine,
    naive_soft_labels,
    numpy_engine,
    row_argmax,
    safe_log,
)
from ._common import numba  # noqa: F401 - kernels.numba: None where numba does not import
from .dawid_skene import (
    DSBlockStatistics,
    ds_block_statistics,
    ds_cavity_counts,
    ds_e_step,
    ds_log_confusions,
    ds_soft_vote_terms,
    ds_vote_share_counts,
    ds_worker_counts,
)
from .dirichlet import (
    dirichlet_expectations,
    dirichlet_expected_log,
    dirichlet_kl,
    dirichlet_posterior_kl,
)
from .glad import (
    LOG_BETA_BOUND,
    GLADBlockStatistics,
    glad_block_statistics,
    glad_gradients,
    glad_task_difficulties,
)
from . import _compile
from .kos import kos_iteration
from .mace import mace_expected_counts, mace_soft_counts, mace_vote_tables
from .mmsr import msr_rows, msr_step, worker_agreement
from .one_coin import (
    OneCoinBlockStatistics,
    one_coin_agreement,
    one_coin_block_statistics,
    one_coin_e_step,
    one_coin_soft_terms,
)
from .weighted_vote import SHARES, SOFTMAX, agreement_credit, weighted_vote_proba

ENGINE = "auto"
BACKGROUND_COMPILE = _compile.background_default()

__all__ = [
    "ENGINE",
    "BACKGROUND_COMPILE",
    "AUTO_NUMBA_MIN_VOTES",
    "engine_for_votes",
    "fit_engine",
    "numpy_engine",
    "safe_log",
    "naive_soft_labels",
    "row_argmax",
    "BlockLayout",
    "DSBlockStatistics",
    "GLADBlockStatistics",
    "ds_e_step",
    "ds_worker_counts",
    "ds_vote_share_counts",
    "ds_log_confusions",
    "ds_block_statistics",
    "ds_cavity_counts",
    "ds_soft_vote_terms",
    "glad_block_statistics",
    "glad_gradients",
    "glad_task_difficulties",
    "LOG_BETA_BOUND",
    "SHARES",
    "SOFTMAX",
    "weighted_vote_proba",
    "agreement_credit",
    "kos_iteration",
    "worker_agreement",
    "msr_step",
    "msr_rows",
    "dirichlet_expectations",
    "dirichlet_expected_log",
    "dirichlet_kl",
    "dirichlet_posterior_kl",
    "OneCoinBlockStatistics",
    "one_coin_e_step",
    "one_coin_soft_terms",
    "one_coin_agreement",
    "one_coin_block_statistics",
    "mace_vote_tables",
    "mace_expected_counts",
    "mace_soft_counts",
]
