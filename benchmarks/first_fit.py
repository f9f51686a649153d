"""A user's first fit: cold (empty numba cache) and warm, by engine, against crowd-kit.

Each figure is one ``fit`` of a model with its default parameters (``max_iter=100``,
``tol=1e-6``) in a fresh Python process, on a simulated crowd of ``n_votes`` votes: K=4
classes (``--n-classes``), 5 distinct workers per task, ``max(100, n_votes / 100)`` workers
(``--n-workers``: that many; the issue's crowd at 1e4 votes: 2000 tasks, 100 workers), each
right with a probability drawn in [0.4, 0.95], else answering another class uniformly;
``scipy.sparse.coo_array`` input. Import time is not in the fit.

- ``cold``: the first fit after a fresh install: ``NUMBA_CACHE_DIR`` points at a new, empty
  folder (the skcrowd kernels are cached in that folder, not in the package's
  ``__pycache__``), with the background compile on (``SKCROWD_BACKGROUND_COMPILE=1``);
- ``warm``: a fresh process again on that folder, once it holds the compiled kernels (numba
  loads them from disk, as after any earlier fit on the machine). Where the cold fit started
  the background compile (``auto`` from ``kernels.AUTO_NUMBA_MIN_VOTES`` votes), the script
  waits for its marker first; ``compile s`` is the time from the cold fit's start to the
  marker (the compile ran at the lowest priority beside the cold fits, then alone). Per
  repeat, the models' cold fits run one after the other on one new folder (the first starts
  the only background compile, the next run beside it, as a user's next fits would), then,
  the compile done, their warm fits.

Engines (``skcrowd.aggregation.kernels.ENGINE``): ``auto`` (the default: numpy below
``kernels.AUTO_NUMBA_MIN_VOTES`` votes, numba from there once the kernels are in numba's cache,
numpy and a background compile until then), ``numpy`` and ``numba`` (compiles at the first
call). ``path`` says what the cold and the warm fit ran (``numpy+bg``: numpy, having started the
background compile; ``numba+bg``: numba compiling in the fit, EBCC's choice, the background
compile started too), ``jit``: the number of kernels the warm fit compiled itself (0: all
loaded from the cache). crowd-kit 1.4.2's ``DawidSkene()`` (its defaults: ``n_iter=100``,
``tol=1e-5``) runs on a pandas frame of the same votes in ``--competitor-python``, in fresh
processes too; ``/ck`` is a fit's time divided by crowd-kit's DawidSkene time on the same votes
(for every model: crowd-kit's GLAD, MACE and one-coin DS are slower than its DS, and it has no
Bayesian DS, EBCC or weighted DS); ``cpu``: process time of all threads (less sensitive to the
other jobs of a shared machine than wall time), ``cpu/ck`` the cold fit's against crowd-kit's.
Medians of ``--repeats`` runs; the machine is shared, so compare columns within one table.

Usage::

    python benchmarks/first_fit.py                          # 1e4 1e5 1e6 votes, DS GLAD BDS, auto
    python benchmarks/first_fit.py --votes 1e6 --models ds wds glad onecoin mace bds ebcc \
        --repeats 1
    python benchmarks/first_fit.py --votes 1e5 3e5 1e6 --engines numpy numba --repeats 1
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
MODELS = {"ds": "DawidSkene", "wds": "WeightedDawidSkene", "glad": "GLAD",
          "onecoin": "OneCoinDawidSkene", "mace": "MACE", "bds": "BayesianDawidSkene",
          "ebcc": "EBCC"}
COMPILE_TIMEOUT = 3600  # seconds to wait for a background compile
VOTES_PER_TASK = 5


def simulate(n_votes, n_classes, n_workers=None, seed=0):
    """Task-sorted ``(task, worker, label)`` of the crowd described in the module docstring."""
    rng = np.random.default_rng(seed)
    n_tasks = n_votes // VOTES_PER_TASK
    n_workers = n_workers or max(100, n_votes // 100)
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
    start, wall, cpu = time.time(), time.perf_counter(), time.process_time()
    model.fit(votes)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    state = kernels._compile._state
    if args.engine != "auto" or votes.nnz < kernels.AUTO_NUMBA_MIN_VOTES:
        path = kernels.engine_for_votes(votes.nnz)
    else:
        cold = "numpy+bg" if getattr(model, "_numpy_while_cold", True) else "numba+bg"
        path = "numba" if state["ready"] else cold if state["launched"] else "numpy"
    jit = sum(sum(d.stats.cache_misses.values()) for module in _kernel_modules(kernels)
              for d in vars(module).values() if hasattr(d, "stats"))
    print(json.dumps({"wall": wall, "cpu": cpu, "iters": int(model.n_iter_), "start": start,
                      "path": path, "jit": jit}))


def _kernel_modules(kernels):
    """The modules of the kernels (numba dispatchers among their attributes)."""
    return [module for name, module in vars(kernels).items()
            if getattr(module, "__name__", "").startswith(kernels.__name__ + ".")]


def _wait_for_compile(cache, timeout=COMPILE_TIMEOUT):
    """Wait for the background compile into ``cache``: the mtime of its marker (None: none in
    ``timeout`` seconds)."""
    sys.path.insert(0, str(REPO))
    from skcrowd.aggregation.kernels import _compile

    stop = time.monotonic() + timeout
    while time.monotonic() < stop:
        markers = list(Path(cache).glob(f"*/{_compile.MARKER}"))
        if markers and not list(Path(cache).glob(f"*/{_compile.LOCK}")):
            return markers[0].stat().st_mtime
        time.sleep(1)
    return None


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


def _first_fits(args, path, engine, tmp):
    """Per repeat, in a new empty numba cache: every model's cold fit, one after the other
    (the first that starts the background compile starts the only one; the others run beside
    it), then, once the compile has finished, every model's warm fit. Returns the cold and the
    warm runs by model and the compile times."""
    cold = {model: [] for model in args.models}
    warm = {model: [] for model in args.models}
    compiles = []
    for _ in range(args.repeats):
        cache = tempfile.mkdtemp(prefix="numba-cache-", dir=tmp)
        env = {"NUMBA_CACHE_DIR": cache, "SKCROWD_BACKGROUND_COMPILE": "1"}
        argv = {model: ["--child", "--data", str(path), "--model", model, "--engine", engine]
                for model in args.models}
        for model in args.models:
            cold[model].append(_spawn(sys.executable, argv[model], env))
        started = [cold[m][-1]["start"] for m in args.models
                   if cold[m][-1].get("path", "").endswith("+bg")]
        if started:
            done = _wait_for_compile(cache)
            compiles.append(float("nan") if done is None else done - started[0])
        for model in args.models:
            warm[model].append(_spawn(sys.executable, argv[model], env))
    return cold, warm, compiles


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--votes", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    parser.add_argument("--models", nargs="+", default=["ds", "glad", "bds"],
                        choices=list(MODELS))
    parser.add_argument("--engines", nargs="+", default=["auto"],
                        choices=["auto", "numpy", "numba"])
    parser.add_argument("--n-classes", type=int, default=4)
    parser.add_argument("--n-workers", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--competitor-python", default="/work/venvs/crowdkit/bin/python")
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
    header = (f"{'model':<7} {'n_votes':>8} {'engine':<6} {'iters':>5} {'cold s':>8} "
              f"{'warm s':>8} {'cold/ck':>8} {'warm/ck':>8} {'cold cpu':>8} {'warm cpu':>8} "
              f"{'cpu/ck':>6} {'path (cold, warm)':<18} {'jit':>3} {'compile s':>9}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="skcrowd-first-fit-") as tmp:
        for n_votes in (int(v) for v in args.votes):
            task, worker, label, n_tasks, n_workers = simulate(
                n_votes, args.n_classes, args.n_workers)
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
            for engine in args.engines:
                cold, warm, compiles = _first_fits(args, path, engine, tmp)
                for model in args.models:
                    errors = [r["error"] for r in cold[model] + warm[model] if "error" in r]
                    if errors:
                        print(f"{model:<7} {n_votes:>8.0e} {engine:<6} failed: {errors[0]}")
                        continue
                    c, w = _median(cold[model]), _median(warm[model])
                    c_cpu, w_cpu = _median(cold[model], "cpu"), _median(warm[model], "cpu")
                    compile_s = float(np.median(compiles)) if compiles else float("nan")
                    paths = f"{cold[model][0]['path']}, {warm[model][0]['path']}"
                    rows.append({"model": model, "n_votes": n_votes, "engine": engine,
                                 "cold": c, "warm": w, "crowdkit": crowdkit, "paths": paths,
                                 "compile": compile_s})
                    print(f"{model:<7} {n_votes:>8.0e} {engine:<6} "
                          f"{cold[model][0]['iters']:>5} {c:>8.3f} {w:>8.3f} "
                          f"{c / crowdkit:>8.3f} {w / crowdkit:>8.3f} {c_cpu:>8.3f} "
                          f"{w_cpu:>8.3f} {c_cpu / crowdkit_cpu:>6.3f} {paths:<18} "
                          f"{max(r['jit'] for r in warm[model]):>3} {compile_s:>9.1f}",
                          flush=True)
    return rows


if __name__ == "__main__":
    main()
