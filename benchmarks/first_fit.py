"""A user's first fit: cold (empty numba cache) and warm, by engine, against crowd-kit.

Each figure is one ``fit`` of a model with its default parameters (``max_iter=100``,
``tol=1e-6``) in a fresh Python process, on a simulated crowd of ``n_votes`` votes: K=4
classes (``--n-classes``), 5 distinct workers per task, ``max(100, n_votes / 100)`` workers
(the issue's crowd at 1e4 votes: 2000 tasks, 100 workers), each right with a probability
drawn in [0.4, 0.95], else answering another class uniformly; ``scipy.sparse.coo_array``
input. Import time is not in the fit.

- ``cold``: the first fit after a fresh install: ``NUMBA_CACHE_DIR`` points at a new, empty
  folder, so numba compiles every kernel the fit calls (the skcrowd kernels are cached in
  that folder, not in the package's ``__pycache__``);
- ``warm``: a fresh process again, with that folder now holding the compiled kernels (numba
  loads them from disk, as after any earlier fit on the machine).

Engines (``skcrowd.aggregation.kernels.ENGINE``): ``auto`` (the default: numpy below
``kernels.AUTO_NUMBA_MIN_VOTES`` votes, numba from there), ``numpy`` and ``numba``.
crowd-kit 1.4.2's ``DawidSkene()`` (its defaults: ``n_iter=100``, ``tol=1e-5``) runs on a pandas
frame of the same votes in ``--competitor-python``, in fresh processes too; ``/ck`` is a
fit's time divided by crowd-kit's DawidSkene time on the same votes (the issue's bound for the
cold first fit on 1e4 votes: 0.2); ``cpu``: process time of all threads (less sensitive to the
other jobs of a shared machine than wall time), ``cpu/ck`` the cold fit's against crowd-kit's.
Medians of ``--repeats`` runs; the machine is shared, so compare columns within one table.

Usage::

    python benchmarks/first_fit.py                                   # 1e4 votes, DS GLAD BDS
    python benchmarks/first_fit.py --votes 1e4 1e5 3e5 1e6 --models ds --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
MODELS = {"ds": "DawidSkene", "glad": "GLAD", "bds": "BayesianDawidSkene"}
VOTES_PER_TASK = 5


def simulate(n_votes, n_classes, seed=0):
    """Task-sorted ``(task, worker, label)`` of the crowd described in the module docstring."""
    rng = np.random.default_rng(seed)
    n_tasks = n_votes // VOTES_PER_TASK
    n_workers = max(100, n_votes // 100)
    truth = rng.integers(n_classes, size=n_tasks)
    workers = _distinct(rng, n_tasks, n_workers)
    task = np.repeat(np.arange(n_tasks), VOTES_PER_TASK)
    worker = workers.ravel()
    accuracy = rng.uniform(0.4, 0.95, n_workers)
    right = rng.random(task.size) < accuracy[worker]
    wrong = (truth[task] + rng.integers(1, n_classes, task.size)) % n_classes
    return task, worker, np.where(right, truth[task], wrong), n_tasks, n_workers


def _distinct(rng, n_tasks, n_workers):
    workers = rng.integers(n_workers, size=(n_tasks, VOTES_PER_TASK))
    while True:
        s = np.sort(workers, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if len(bad) == 0:
            return workers
        workers[bad] = rng.integers(n_workers, size=(len(bad), VOTES_PER_TASK))


def child(args):
    """One fresh process: one fit, timed (wall and CPU)."""
    import warnings

    data = np.load(args.data)
    sys.path.insert(0, str(REPO))
    import scipy.sparse as sp

    from skcrowd.aggregation import kernels
    import skcrowd.aggregation as aggregation

    kernels.ENGINE = args.engine
    votes = sp.coo_array((data["label"], (data["task"], data["worker"])),
                         shape=(int(data["n_tasks"]), int(data["n_workers"])))
    warnings.simplefilter("ignore")
    model = getattr(aggregation, MODELS[args.model])()
    wall, cpu = time.perf_counter(), time.process_time()
    model.fit(votes)
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                      "iters": int(model.n_iter_)}))


def crowdkit_child(args):
    """One fresh process: crowd-kit's DawidSkene().fit on a pandas frame of the votes."""
    import warnings

    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    data = np.load(args.data)
    warnings.simplefilter("ignore")
    frame = pd.DataFrame({"task": data["task"], "worker": data["worker"],
                          "label": data["label"]})
    wall, cpu = time.perf_counter(), time.process_time()
    DawidSkene().fit(frame)
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}))


def _spawn(python, argv, env=None, timeout=3600):
    out = subprocess.run([python, str(Path(__file__).resolve()), *argv], capture_output=True,
                         text=True, timeout=timeout, env={**os.environ, **(env or {})})
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1][:100]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs, clock="wall"):
    values = [r[clock] for r in runs if "error" not in r]
    return float(np.median(values)) if values else float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--votes", nargs="+", type=float, default=[1e4])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--engines", nargs="+", default=["auto", "numpy", "numba"])
    parser.add_argument("--n-classes", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crowdkit-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--engine", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    if args.crowdkit_child:
        return crowdkit_child(args)

    print(f"First fits in fresh processes, default parameters, K={args.n_classes}, "
          f"{VOTES_PER_TASK} votes per task; medians of {args.repeats}; load average at start "
          f"{os.getloadavg()[0]:.1f} (2 cores, shared machine).")
    header = (f"{'model':<6} {'n_votes':>8} {'engine':<6} {'iters':>5} {'cold s':>8} "
              f"{'warm s':>8} {'cold/ck':>8} {'warm/ck':>8} {'cold cpu':>8} {'warm cpu':>8} "
              f"{'cpu/ck':>6}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="skcrowd-first-fit-") as tmp:
        for n_votes in (int(v) for v in args.votes):
            task, worker, label, n_tasks, n_workers = simulate(n_votes, args.n_classes)
            path = Path(tmp) / f"votes-{n_votes}.npz"
            np.savez(path, task=task, worker=worker, label=label, n_tasks=n_tasks,
                     n_workers=n_workers)
            ck_runs = [_spawn(args.competitor_python, ["--crowdkit-child", "--data", str(path)])
                       for _ in range(args.repeats)]
            crowdkit, crowdkit_cpu = _median(ck_runs), _median(ck_runs, "cpu")
            print(f"\n{n_votes:.0e} votes ({n_tasks} tasks, {n_workers} workers): crowd-kit "
                  f"1.4.2 DawidSkene().fit {crowdkit:.3f} s ({crowdkit_cpu:.3f} s CPU); load "
                  f"average {os.getloadavg()[0]:.1f}")
            print(header)
            print("-" * len(header))
            for model in args.models:
                for engine in args.engines:
                    cold, warm = [], []
                    for _ in range(args.repeats):
                        cache = tempfile.mkdtemp(prefix="numba-cache-", dir=tmp)
                        argv = ["--child", "--data", str(path), "--model", model,
                                "--engine", engine]
                        cold.append(_spawn(sys.executable, argv, {"NUMBA_CACHE_DIR": cache}))
                        warm.append(_spawn(sys.executable, argv, {"NUMBA_CACHE_DIR": cache}))
                    errors = [r["error"] for r in cold + warm if "error" in r]
                    if errors:
                        print(f"{model:<6} {n_votes:>8.0e} {engine:<6} failed: {errors[0]}")
                        continue
                    c, w = _median(cold), _median(warm)
                    c_cpu, w_cpu = _median(cold, "cpu"), _median(warm, "cpu")
                    rows.append({"model": model, "n_votes": n_votes, "engine": engine,
                                 "cold": c, "warm": w, "crowdkit": crowdkit})
                    print(f"{model:<6} {n_votes:>8.0e} {engine:<6} {cold[0]['iters']:>5} "
                          f"{c:>8.3f} {w:>8.3f} {c / crowdkit:>8.3f} {w / crowdkit:>8.3f} "
                          f"{c_cpu:>8.3f} {w_cpu:>8.3f} {c_cpu / crowdkit_cpu:>6.3f}",
                          flush=True)
    return rows


if __name__ == "__main__":
    main()
