"""Scale benchmark: seconds per EM iteration and peak memory, in memory, out of core and on Dask.

Synthetic crowd (K=10 classes, 5 votes per task, n_votes / 100 workers, so 1e6 workers at 1e8
votes; worker activity is Zipf-like and worker ids are shuffled, so busy workers are not numbered
first). The votes are generated streaming into a task-sorted parquet file under /tmp (never
holding all votes in memory), then every (size, path) pair runs in its own child process, whose
peak resident memory (``ru_maxrss``; for Dask the client plus every Dask worker process) is
reported with the seconds per EM iteration.

Seconds per iteration = (time of fit with ``max_iter=m2`` - time with ``max_iter=m1``) / (m2 - m1),
so set-up (reading, encoding, partitioning) is not counted; set-up time is printed apart.

Usage::

    python benchmarks/scale.py generate --votes 1e7            # /tmp/skcrowd-scale/votes-1e7.parquet
    python benchmarks/scale.py run --votes 1e7 --path dask     # one measurement, in a child process
    python benchmarks/scale.py table --votes 1e6 1e7 --paths memory outofcore dask

Timings in the printed tables were taken on a shared 2-core machine (other jobs running).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA_DIR = Path(os.environ.get("SKCROWD_SCALE_DIR", "/tmp/skcrowd-scale"))
N_CLASSES = 10
VOTES_PER_TASK = 5
TASKS_PER_CHUNK = 1_000_000  # generator chunk: 5e6 votes in memory at a time


def n_workers_for(n_votes: int) -> int:
    """Crowd size of a benchmark: one worker per 100 votes, at most 1e6."""
    return int(min(1_000_000, max(100, n_votes // 100)))


def votes_path(n_votes: int) -> Path:
    return DATA_DIR / f"votes-{n_votes:.0e}.parquet".replace("+0", "").replace("+", "")


def truth_path(n_votes: int) -> Path:
    return votes_path(n_votes).with_suffix(".truth.npy")


def _crowd(n_workers, seed):
    """Worker activity (Zipf-like probabilities), shuffled ids and accuracies."""
    rng = np.random.default_rng([seed, 0])
    rank = np.arange(n_workers)
    activity = 1.0 / (rank + 10.0) ** 0.9
    activity /= activity.sum()
    worker_id = rng.permutation(n_workers).astype(np.int64)  # id of the worker of each rank
    accuracy = rng.beta(6.0, 3.0, size=n_workers)  # mean 0.67
    spammer = rng.random(n_workers) < 0.1
    accuracy[spammer] = 1.0 / N_CLASSES
    return np.cumsum(activity), worker_id, accuracy


def _chunk(first_task, n_tasks, n_workers, cdf, accuracy, rng):
    """Votes of tasks ``first_task ..`` as (task, worker rank, label), task-sorted; and the truth."""
    truth = rng.integers(0, N_CLASSES, size=n_tasks)
    ranks = np.searchsorted(cdf, rng.random((n_tasks, VOTES_PER_TASK)) * cdf[-1])
    ranks = np.minimum(ranks, n_workers - 1)
    while True:  # one vote per (task, worker): redraw repeated workers uniformly
        s = np.sort(ranks, axis=1)
        dup_rows = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if len(dup_rows) == 0:
            break
        ranks[dup_rows, 1:] = rng.integers(0, n_workers, size=(len(dup_rows), VOTES_PER_TASK - 1))
    correct = rng.random((n_tasks, VOTES_PER_TASK)) < accuracy[ranks]
    wrong = (truth[:, None] + rng.integers(1, N_CLASSES, size=ranks.shape)) % N_CLASSES
    labels = np.where(correct, truth[:, None], wrong)
    task = np.repeat(np.arange(first_task, first_task + n_tasks, dtype=np.int64), VOTES_PER_TASK)
    return task, ranks.ravel(), labels.ravel().astype(np.int8), truth.astype(np.int8)


def generate(n_votes: int, *, seed: int = 0, force: bool = False) -> Path:
    """Write ``n_votes`` synthetic votes to a task-sorted parquet file, one chunk at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = votes_path(n_votes)
    if path.exists() and truth_path(n_votes).exists() and not force:
        return path
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    n_tasks = n_votes // VOTES_PER_TASK
    n_workers = n_workers_for(n_votes)
    cdf, worker_id, accuracy = _crowd(n_workers, seed)
    schema = pa.schema([("task", pa.int64()), ("worker", pa.int64()), ("label", pa.int8())])
    truth = np.lib.format.open_memmap(truth_path(n_votes), mode="w+", dtype=np.int8,
                                      shape=(n_tasks,))
    tmp = path.with_suffix(".partial")
    with pq.ParquetWriter(tmp, schema) as writer:
        for c, first in enumerate(range(0, n_tasks, TASKS_PER_CHUNK)):
            rng = np.random.default_rng([seed, 1, c])
            m = min(TASKS_PER_CHUNK, n_tasks - first)
            task, ranks, labels, t = _chunk(first, m, n_workers, cdf, accuracy, rng)
            truth[first:first + m] = t
            table = pa.table({"task": task, "worker": worker_id[ranks], "label": labels},
                             schema=schema)
            writer.write_table(table, row_group_size=1_000_000)
    truth.flush()
    del truth
    tmp.rename(path)
    return path
