"""Scale benchmark: seconds per EM iteration and peak memory, in memory, out of core and on Dask.

Synthetic crowd (K=10 classes, 5 votes per task, n_votes / 100 workers, so 1e6 workers at 1e8
votes; worker activity is Zipf-like and worker ids are shuffled, so busy workers are not numbered
first). The votes are generated streaming into a task-sorted parquet file in the system's
temporary folder (never holding all votes in memory), then every (size, path) pair runs in its
own child process, whose peak resident memory (``ru_maxrss``; for Dask the client plus every
Dask worker process) is reported with the seconds per EM iteration.

The peak (``peak MB``) of an out-of-core row is checked against ``PEAK_BOUND_MB`` (4000 MB at
1e8 votes): a row above it is flagged and ``table`` exits with status 1, so that the memory cannot
creep back unseen (smoothing="auto"'s leave-one-out table had raised it from 3.2 to 4.9 GB).
``run`` prints the peak too (``peak_mb``).

Seconds per iteration: the median time between the per-iteration lines that ``verbose=2``
prints (one M-step + E-step each) in a fit of ``--iters`` iterations; set-up (reading, encoding,
partitioning, the initial statistics) and the final labels are printed apart.

Usage::

    python benchmarks/scale.py generate --votes 1e7     # <temp>/skcrowd-scale/votes-1e7.parquet
    python benchmarks/scale.py run --votes 1e7 --path dask --cluster threads   # one measurement
    python benchmarks/scale.py table --votes 1e6 1e7 5e7 1e8    # each one in a child process
    python benchmarks/scale.py tables --votes 1e7       # worker numbering, float32 tables

Run from the repository root with skcrowd installed (``pip install ".[fast,dask]"``) or with
``PYTHONPATH=.``; ``SKCROWD_SCALE_DIR`` moves the data folder.

Timings in the printed tables were taken on a shared 2-core machine (other jobs running).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

# numba's times are measured here: ENGINE="auto" compiles at a fit's first call (and a warm cache
# is loaded), instead of running numpy while a background process compiles the kernels
# (skcrowd.aggregation.kernels._compile; benchmarks/first_fit.py measures that path). Inherited
# by the child processes.
os.environ.setdefault("SKCROWD_BACKGROUND_COMPILE", "0")
DATA_DIR = Path(os.environ.get("SKCROWD_SCALE_DIR",
                               Path(tempfile.gettempdir()) / "skcrowd-scale"))
N_CLASSES = 10
VOTES_PER_TASK = 5
TASKS_PER_CHUNK = 1_000_000  # generator chunk: 5e6 votes in memory at a time


def n_workers_for(n_votes: int) -> int:
    """Crowd size of a benchmark: one worker per 100 votes, at most 1e6 (``SKCROWD_SCALE_WORKERS``
    sets it: a 1e7-vote crowd of 1e6 workers has per-worker tables as large as the 1e8 one's,
    a proxy of its memory in a tenth of the time; give it its own ``SKCROWD_SCALE_DIR``)."""
    if os.environ.get("SKCROWD_SCALE_WORKERS"):
        return int(float(os.environ["SKCROWD_SCALE_WORKERS"]))
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
    """Votes of tasks ``first_task ..``: (task, worker rank, label), task-sorted; and the truth."""
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


# ---------------------------------------------------------------------------
# one measurement, in this process (run it in a child: `run` does)
# ---------------------------------------------------------------------------

METHODS = {"mv": "MajorityVote", "ds": "DawidSkene", "wds": "WeightedDawidSkene", "glad": "GLAD"}


class _LineTimes(io.StringIO):
    """stdout stand-in that records when each line was written."""

    def __init__(self):
        super().__init__()
        self.times = []

    def write(self, text):
        now = time.perf_counter()
        self.times += [(now, line) for line in text.splitlines() if line.strip()]
        return len(text)


def _peak_rss_mb(client=None):
    """Peak resident memory of this process (and of the Dask worker processes) in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if client is None or client.cluster is None or not client.cluster.processes:
        return own
    workers = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return own + sum(workers.values())


def _memory_votes(path):
    """The parquet votes as a scipy.sparse matrix (tasks x workers), what an in-memory user has."""
    import pyarrow.parquet as pq
    import scipy.sparse as sp

    table = pq.read_table(path)
    task = table["task"].to_numpy()
    worker = table["worker"].to_numpy()
    label = table["label"].to_numpy()
    del table
    shape = (int(task[-1]) + 1, int(worker.max()) + 1)
    return sp.csr_array((label, (task, worker)), shape=shape)


def measure(n_votes, path, method="ds", iters=4, cluster="threads"):
    """Fit ``method`` on ``n_votes`` votes through ``path``; return a dict of figures."""
    import skcrowd

    data = votes_path(n_votes)
    estimator_class = getattr(skcrowd, METHODS[method])
    client = None
    t0 = time.perf_counter()
    if path == "memory":
        source = _memory_votes(data)
    elif path == "outofcore":
        from skcrowd.backends import OutOfCoreVotes

        source = OutOfCoreVotes(data)
    elif path == "dask":
        import dask.dataframe as dd
        import distributed

        local = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=cluster == "processes",
            dashboard_address=":0") if cluster != "embedded" else None
        client = distributed.Client(local) if local is not None else None
        from skcrowd.backends import DaskVotes

        source = DaskVotes(dd.read_parquet(data))
        client = source.client
    else:
        raise ValueError(f"unknown path {path!r}")
    setup = time.perf_counter() - t0

    est = estimator_class(**({} if method == "mv" else
                             {"max_iter": iters, "tol": 0.0, "verbose": 2}))
    lines = _LineTimes()
    t = time.perf_counter()
    with warnings.catch_warnings(), contextlib.redirect_stdout(lines):
        warnings.simplefilter("ignore")
        labels = est.fit_predict(source)
        if hasattr(labels, "compute"):  # Dask: a lazy series indexed by task
            labels = labels.compute()
    total = time.perf_counter() - t
    labels = np.asarray(labels.sort_index() if hasattr(labels, "sort_index") else labels)
    ticks = [t] + [tick for tick, line in lines.times if "Iteration" in line]
    steps = np.diff(ticks)
    per_iter = float(np.median(steps[1:])) if len(steps) > 1 else float("nan")
    first = total - per_iter * (len(steps) - 1) if len(steps) > 1 else total
    truth = np.load(truth_path(n_votes))
    result = {
        "n_votes": n_votes, "path": path, "method": method, "cluster": cluster,
        "setup_s": setup, "first_and_final_s": first, "s_per_iter": per_iter,
        "accuracy": float(np.mean(labels == truth)),
        "peak_mb": _peak_rss_mb(client),
    }
    out = DATA_DIR / f"result-{method}-{n_votes:.0e}-{path}.npz"
    fitted = {"labels": labels.astype(np.int8)}
    if hasattr(est, "class_priors_"):
        fitted["class_priors"] = est.class_priors_
    table = getattr(est, "confusion_matrices_", getattr(est, "abilities_", None))
    if table is not None:  # a fixed sample of workers' tables, for the equality check
        rows = np.random.default_rng(0).choice(len(table), size=min(2000, len(table)),
                                               replace=False)
        fitted["worker_tables"] = table[np.sort(rows)]
    np.savez(out, **fitted)
    if hasattr(source, "close"):
        source.close()
    if client is not None:
        client.close()
    return result


def _child(args):
    """Run one measurement in a fresh process; its peak memory is its own."""
    cmd = [sys.executable, __file__, "run", "--votes", f"{args[0]:g}", "--path", args[1],
           "--method", args[2], "--iters", str(args[3]),
           "--cluster", args[4]]
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"n_votes": args[0], "path": args[1], "method": args[2], "cluster": args[4],
                "error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(lines[-1])


def _max_diff(n_votes, method, a, b):
    fa = np.load(DATA_DIR / f"result-{method}-{n_votes:.0e}-{a}.npz")
    fb = np.load(DATA_DIR / f"result-{method}-{n_votes:.0e}-{b}.npz")
    diff = max((float(np.abs(fa[k] - fb[k]).max()) for k in fa.files if k != "labels"),
               default=0.0)
    return diff, float(np.mean(fa["labels"] == fb["labels"]))


# Peak resident memory bounds of the out-of-core path (issue 25: 1e8 votes under 4 GB); a row
# above its bound is flagged and the command exits with status 1.
PEAK_BOUND_MB = {100_000_000: 4000}


def table(sizes, paths, method, iters, clusters):
    print(f"# {METHODS[method]}, K={N_CLASSES}, {VOTES_PER_TASK} votes per task, "
          f"n_votes/100 workers (max 1e6); timings on a shared 2-core machine")
    print(f"# seconds per EM iteration: median over a fit of {iters} iterations (verbose=2 "
          "line times); peak = max RSS of the child process (+ the Dask worker processes); "
          "dask: LocalCluster of 2 workers, as processes or as threads of the child")
    print("| votes | workers | path | s / iteration | set-up s | init + labels s | peak MB | "
          "accuracy | vs memory: max abs diff, label agreement |")
    print("|---|---|---|---|---|---|---|---|---|")
    runs = [(p, c) for p in paths for c in (clusters if p == "dask" else [None])]
    rows = []
    for n in sizes:
        generate(n)
        memory = None
        for p, c in runs:
            name = p if c is None else f"dask ({c})"
            r = _child((n, p, method, iters, c or "threads"))
            rows.append(r)
            if "error" in r:
                print(f"| {n:.0e} | {n_workers_for(n)} | {name} | error: {r['error']} ||||||")
                continue
            eq = ""
            if p == "memory":
                memory = r
            elif memory is not None:
                d, agree = _max_diff(n, method, "memory", p)
                eq = f"{d:.1e}, {agree:.6f}"
                if p == "dask" and method != "mv":
                    eq += f"; dask / memory {r['s_per_iter'] / memory['s_per_iter']:.2f}x"
            bound = PEAK_BOUND_MB.get(n) if p == "outofcore" else None
            r["over_bound"] = bound is not None and r["peak_mb"] > bound
            flag = f" (over the {bound} MB bound)" if r["over_bound"] else ""
            print(f"| {n:.0e} | {n_workers_for(n)} | {name} | {r['s_per_iter']:.3f} | "
                  f"{r['setup_s']:.1f} | {r['first_and_final_s']:.1f} | {r['peak_mb']:.0f}{flag} | "
                  f"{r['accuracy']:.4f} | {eq} |", flush=True)
    return rows


def table_layout(n_votes, repeats=5):
    """Worker tables: renumbering workers by activity, and float32 tables, on the DS kernels.

    Times the Dawid-Skene E-step and worker-count kernels on all the votes as one block, with the
    workers numbered by their (shuffled) ids or by activity (busiest first), and with float64 or
    float32 log-confusion tables; then the effect of float32 tables on the fitted model (tables
    rounded to float32 after every M-step) against float64.
    """
    import pyarrow.parquet as pq

    from skcrowd import DawidSkene
    from skcrowd.aggregation.kernels import BlockLayout, _common, dawid_skene
    from skcrowd.votes import Votes

    table = pq.read_table(generate(n_votes))
    task = table["task"].to_numpy()
    worker = table["worker"].to_numpy()
    label = table["label"].to_numpy().astype(np.int64)
    del table
    n_workers, K = int(worker.max()) + 1, N_CLASSES
    activity = np.bincount(worker, minlength=n_workers)
    rank = np.empty(n_workers, dtype=np.int64)
    rank[np.argsort(-activity, kind="stable")] = np.arange(n_workers)
    rng = np.random.default_rng(0)
    log_conf = np.log(rng.dirichlet(np.ones(K), size=(n_workers, K)))
    print(f"# {n_votes:.0e} votes, {n_workers} workers, K={K}; kernel seconds (median of "
          f"{repeats}) on a shared 2-core machine")
    print("| worker numbers | table dtype | E-step s | worker counts s |")
    print("|---|---|---|---|")
    for numbering, w in (("ids (shuffled)", worker), ("by activity", rank[worker])):
        votes = Votes(task=task, worker=w, label=label, n_tasks=int(task[-1]) + 1,
                      n_workers=n_workers, classes=np.arange(K))
        layout = BlockLayout(votes)
        indptr, _, task_w, label_w = layout.worker_order
        tables = log_conf if numbering.startswith("ids") else log_conf[np.argsort(rank)]
        resp = np.empty((layout.n_tasks, K))
        task_ll = np.empty(layout.n_tasks)
        counts = np.empty((n_workers, K, K))
        for dtype in (np.float64, np.float32):
            t_conf = np.ascontiguousarray(tables, dtype=dtype)
            prior = np.full(K, -np.log(K), dtype=dtype)
            e, c = [], []
            for _ in range(repeats + 1):  # the first call compiles the dtype's specialization
                t0 = time.perf_counter()
                dawid_skene._ds_pass(layout, dawid_skene._E_STEP, _common._MAX_CHUNKS, resp,
                                     t_conf, prior, task_ll)
                t1 = time.perf_counter()
                dawid_skene._ds_worker_counts_parallel(indptr, task_w, label_w, resp, counts,
                                                       True)
                e.append(t1 - t0)
                c.append(time.perf_counter() - t1)
            print(f"| {numbering} | {np.dtype(dtype).name} | {np.median(e[1:]):.3f} | "
                  f"{np.median(c[1:]):.3f} |", flush=True)

    class Float32Tables(DawidSkene):
        def _m_step(self, *args, **kwargs):
            return tuple(p.astype(np.float32).astype(np.float64)
                         for p in super()._m_step(*args, **kwargs))

    import scipy.sparse as sp

    X = sp.csr_array((label, (task, worker)), shape=(int(task[-1]) + 1, n_workers))
    truth = np.load(truth_path(n_votes))
    fits = {}
    for name, cls in (("float64", DawidSkene), ("float32", Float32Tables)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(max_iter=20, tol=0.0)
            fits[name] = (est, est.fit_predict(X))
    (a, la), (b, lb) = fits["float64"], fits["float32"]
    print(f"\nfloat32 tables (rounded after each M-step), 20 EM iterations: accuracy "
          f"{np.mean(lb == truth):.5f} vs float64 {np.mean(la == truth):.5f}; labels agree on "
          f"{np.mean(la == lb):.6f}; max |confusion difference| "
          f"{np.abs(a.confusion_matrices_ - b.confusion_matrices_).max():.1e}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write the synthetic votes under " + str(DATA_DIR))
    g.add_argument("--votes", type=float, nargs="+", required=True)
    g.add_argument("--force", action="store_true")
    t = sub.add_parser("tables", help="time worker numbering and float32 tables on the kernels")
    t.add_argument("--votes", type=float, nargs="+", required=True)
    for name in ("run", "table"):
        p = sub.add_parser(name)
        p.add_argument("--votes", type=float, nargs="+", required=True)
        p.add_argument("--method", choices=sorted(METHODS), default="ds")
        p.add_argument("--iters", type=int, default=4, help="EM iterations of the fit")
        p.add_argument("--cluster", choices=("threads", "processes", "embedded"),
                       default=["processes", "threads"] if name == "table" else "threads",
                       nargs="+" if name == "table" else None,
                       help="Dask LocalCluster of 2 workers: threads of this process, 2 worker "
                            "processes, or skcrowd's embedded default")
        if name == "run":
            p.add_argument("--path", choices=("memory", "outofcore", "dask"), required=True)
        else:
            p.add_argument("--paths", nargs="+", default=("memory", "outofcore", "dask"))
    args = parser.parse_args(argv)
    sizes = [int(v) for v in args.votes]
    if args.command == "tables":
        for n in sizes:
            table_layout(n)
    elif args.command == "generate":
        for n in sizes:
            print(generate(n, force=args.force))
    elif args.command == "run":
        print(json.dumps(measure(sizes[0], args.path, args.method, args.iters,
                                 args.cluster)))
    else:
        rows = table(sizes, args.paths, args.method, args.iters, args.cluster)
        if any(r.get("over_bound") for r in rows):
            print("# peak memory over its bound: see the flagged rows")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
