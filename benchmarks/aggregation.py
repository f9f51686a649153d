"""Speed, accuracy and memory of skcrowd's aggregators against crowd-kit and peerannot.

Synthetic crowd: K=10 classes (K=2 for KOS, a binary method), 5 distinct workers per task out
of ``--n-workers`` (default 1000), each worker right with a probability drawn in [0.4, 0.95]
and otherwise answering one of the other classes uniformly. Every method runs the same number
of iterations (``--iters``, default 50) with convergence checks off, in its own child process,
whose peak resident memory (``ru_maxrss``) is reported:

- ``skcrowd-ds`` / ``skcrowd-glad``: :class:`skcrowd.aggregation.DawidSkene` / ``GLAD`` with
  ``tol=0, max_iter=iters`` on a ``scipy.sparse.coo_array`` of votes, numba kernels;
  ``-numpy`` variants: the numpy/scipy fallback
  (``skcrowd.aggregation.kernels.ENGINE = "numpy"``). The numba kernels are compiled (or
  loaded from numba's cache) by a 2-iteration warm-up fit on the same votes first (a smaller
  one would not load the parallel kernels); its time is the ``warm-up s`` column.
  ``loop s/iter`` = (fit time with ``max_iter=iters`` - fit time with ``max_iter=1``) /
  (iters - 1): the EM iterations without input validation and set-up.
- ``skcrowd-bayesian-ds`` / ``skcrowd-ebcc`` (and ``-numpy``): the variational models
  :class:`skcrowd.aggregation.BayesianDawidSkene` and ``EBCC(random_state=0)`` (10 subtypes),
  timed as ``skcrowd-ds``; crowd-kit has neither, so their ``ratio`` is crowd-kit's
  DawidSkene ``s/iter`` divided by theirs.
- ``crowdkit-ds`` / ``crowdkit-glad``: crowd-kit 1.4.2 ``DawidSkene(n_iter=iters, tol=-inf)`` /
  ``GLAD(n_iter=iters, tol=-inf)`` on a pandas frame ``task, worker, label`` (crowd-kit stops
  when the loss *change* is below ``tol``, a decrease included, so ``tol=0`` can stop after two
  iterations; ``-inf`` never stops early), run with
  ``--competitor-python`` (a virtual environment holding crowd-kit, peerannot and cleanlab).
  crowd-kit GLAD only up to
  ``--max-crowdkit-glad`` votes (default 1e5; it takes over 1200 s at 1e6).
- ``skcrowd-wawa``, ``skcrowd-zbs``, ``skcrowd-kos``, ``skcrowd-mmsr`` (and ``-numpy``
  variants): ``Wawa()``, ``ZeroBasedSkill(max_iter=iters, tol=0)``, ``KOS(max_iter=iters,
  tol=0, random_state=0)``, ``MMSR(max_iter=iters, tol=0, random_state=0)``; against
  crowd-kit's ``Wawa()``, ``ZeroBasedSkill(n_iter=iters)``, ``KOS(n_iter=iters)`` (which stops
  early if its messages pass 1e300) and ``MMSR(n_iter=iters, tol=-inf)`` (``crowdkit-wawa``
  ...), whose ``check_is_fitted`` calls are patched for scikit-learn >= 1.6
  (``_competitors.py``). crowd-kit's MMSR builds a dense workers x tasks matrix, loops over
  every pair of workers in Python and determines the signs on a dense matrix of the signed
  graph of worker pairs (2.6 GB at 1e4 votes of 1000 workers, quadratic in the number of
  pairs): it runs only up to ``--max-crowdkit-mmsr`` votes (default 1e4); measure it at 1e6
  votes with fewer workers (``--n-workers 100 --max-crowdkit-mmsr 1e6``). ``peerannot-wawa``:
  peerannot's ``Wawa(answers, n_classes, n_workers=W).run()``. Wawa has no iterations: its
  ``s/iter`` is the whole fit.
- ``skcrowd-onecoin`` / ``skcrowd-mace`` (and ``-numpy``): ``OneCoinDawidSkene`` / ``MACE`` the
  same way (MACE: ``n_init=1``, variational Bayes, priors fitted to the crowd).
  ``crowdkit-onecoin`` / ``crowdkit-mace``: crowd-kit's ``OneCoinDawidSkene(n_iter=iters,
  tol=-inf)`` / ``MACE(n_iter=iters, n_restarts=1)`` (its restarts all start from the same
  ``random_state``, so one restart is its whole fit divided by ``n_restarts``); crowd-kit's MACE
  takes about 130 s per restart of 50 iterations at 1e6 votes: give it fewer
  (``--iters-for crowdkit-mace=5``).
- ``peerannot-ds`` / ``peerannot-glad``: peerannot's ``DawidSkene(answers, n_workers,
  n_classes).run(epsilon=0, maxiter=iters)`` and ``GLAD(answers, n_classes=K, n_workers=W,
  dataset=<temporary folder>).run(epsilon=0, maxiter=iters)`` (its ``run`` writes the fitted
  abilities and difficulties there), ``answers`` being the ``{task: {worker: label}}`` dict they
  take; tqdm bars and prints off. Its DS builds a dense tasks x workers x K tensor and
  its GLAD a dense tasks x workers matrix and loops in Python, so they run only up to
  ``--max-peerannot`` votes (default 1e4: its DS took 348 s for 50 iterations there).

``s/iter`` is the whole ``fit_predict`` time (input conversion included) divided by the
iterations run;
``ratio`` is crowd-kit's ``s/iter`` (same model, same size) divided by the method's. The slowest
competitors can be given fewer iterations (``--iters-for crowdkit-glad=10``): their cost per
iteration does not depend on the iteration, so ``s/iter`` stays comparable.

``--fresh-fit`` times the whole fit of :class:`skcrowd.aggregation.DawidSkene` (``tol=0,
max_iter=iters``, default 10 here) as a user's first call in a new process: ``--repeats`` fresh
processes with numba's cache of the kernels on disk (warm: an untimed process fills a cache
folder first, ``NUMBA_CACHE_DIR``) and ``--repeats`` with an empty one (cold: the first call
after an install compiles the kernels), each importing ``skcrowd`` and ``skcrowd.aggregation``
(timed), building the ``scipy.sparse.coo_array`` (not timed), then fitting once. The fit is cut
into phases: ``set-up`` (validation, encoding, block layout), ``initial statistics`` (the first
kernel call: numba's initialisation and loading of cached kernels, then the pass over the votes),
``iterations`` (M-steps and E-steps), itself cut into ``choosing the prior`` (the iterations in
which ``smoothing="auto"`` re-estimates the prior, each E-step also counting the votes against
their tasks' leave-one-out classes; not counted in ``n_iter_``, their number is printed) and
``EM iterations`` (the ``max_iter`` counted ones), and ``final step`` (final E-step, labels,
attributes). A
second fresh process per repeat first initialises numba's compiler target alone
(``numba init``: what any first numba call in a process pays, whatever the kernel) and then
fits, to say how much of the first call is numba's. crowd-kit's ``DawidSkene(n_iter=iters,
tol=-inf).fit_predict`` on a pandas frame runs in ``--repeats`` fresh processes too. Medians of
wall and CPU time (all threads), and ratios of crowd-kit's whole fit to skcrowd's.

``--memory-check`` fits skcrowd's DawidSkene on 5e7 votes (``--memory-votes``) in a fresh
process and reports its peak resident memory (target: below 8 GB).

Usage::

    python benchmarks/aggregation.py                                  # 1e4 1e5 1e6
    python benchmarks/aggregation.py --votes 1e4 1e5 1e6 1e7 --iters 50
    python benchmarks/aggregation.py --votes 1e6 --methods skcrowd-ds crowdkit-ds
    python benchmarks/aggregation.py --votes 1e6 --methods skcrowd-wawa crowdkit-wawa \
        skcrowd-zbs crowdkit-zbs skcrowd-kos crowdkit-kos
    python benchmarks/aggregation.py --votes 1e6 --n-workers 100 --max-crowdkit-mmsr 1e6 \
        --methods skcrowd-mmsr crowdkit-mmsr
    python benchmarks/aggregation.py --votes 1e4 1e5 --iters-for crowdkit-glad=10 peerannot-ds=10
    python benchmarks/aggregation.py --memory-check
    python benchmarks/aggregation.py --fresh-fit --votes 1e6 --iters 10 --repeats 7

Timings were taken on a shared 2-core machine (other engineers' jobs running at the same time):
compare ratios within one table, not absolute seconds across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# numba's times are measured here: ENGINE="auto" compiles at a fit's first call (and a warm cache
# is loaded), instead of running numpy while a background process compiles the kernels
# (skcrowd.aggregation.kernels._compile; benchmarks/first_fit.py measures that path). Inherited
# by the child processes.
os.environ.setdefault("SKCROWD_BACKGROUND_COMPILE", "0")
N_CLASSES = 10
VOTES_PER_TASK = 5
# model key -> skcrowd class name, crowd-kit class name and its iteration parameters
MODELS = {
    "ds": ("DawidSkene", {"tol": -np.inf}),
    "glad": ("GLAD", {"tol": -np.inf}),
    "wawa": ("Wawa", None),
    "zbs": ("ZeroBasedSkill", {}),
    "kos": ("KOS", {}),
    "mmsr": ("MMSR", {"tol": -np.inf}),
}
MODELS["onecoin"] = ("OneCoinDawidSkene", {"tol": -np.inf})
MODELS["mace"] = ("MACE", {"n_restarts": 1})  # crowd-kit's restarts all start from one seed

SKCROWD_METHODS = tuple(f"skcrowd-{m}{e}" for m in MODELS for e in ("", "-numpy"))
COMPETITOR_METHODS = (*(f"crowdkit-{m}" for m in MODELS),
                      "peerannot-ds", "peerannot-glad", "peerannot-wawa")
BINARY_MODELS = ("kos",)


def model_key(method):
    """``"skcrowd-zbs-numpy"`` -> ``"zbs"`` (the variational models: ``"ds"``, see below)."""
    return "ds" if method in VARIATIONAL_METHODS else method.split("-")[1]


# BayesianDawidSkene and EBCC: timed as DS (crowd-kit has neither; its DS is the ratio's)
VARIATIONAL_METHODS = ("skcrowd-bayesian-ds", "skcrowd-bayesian-ds-numpy", "skcrowd-ebcc",
                       "skcrowd-ebcc-numpy")
SKCROWD_METHODS += VARIATIONAL_METHODS


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------


def simulate(n_votes, n_workers, seed=0, n_classes=N_CLASSES):
    """Task-sorted triplets (int32) and the true class of each task."""
    rng = np.random.default_rng(seed)
    n_tasks = n_votes // VOTES_PER_TASK
    truth = rng.integers(n_classes, size=n_tasks, dtype=np.int32)
    # distinct workers per task: redraw the rows that hold a repeated worker
    workers = rng.integers(n_workers, size=(n_tasks, VOTES_PER_TASK), dtype=np.int32)
    while True:
        s = np.sort(workers, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if len(bad) == 0:
            break
        workers[bad] = rng.integers(n_workers, size=(len(bad), VOTES_PER_TASK), dtype=np.int32)
    accuracy = rng.uniform(0.4, 0.95, size=n_workers)
    task = np.repeat(np.arange(n_tasks, dtype=np.int32), VOTES_PER_TASK)
    worker = workers.ravel()
    right = rng.random(n_votes) < accuracy[worker]
    wrong = (truth[task] + rng.integers(1, n_classes, size=n_votes, dtype=np.int32)) % n_classes
    label = np.where(right, truth[task], wrong).astype(np.int32)
    return task, worker, label, truth


# ---------------------------------------------------------------------------
# one measurement (child process)
# ---------------------------------------------------------------------------


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_skcrowd(method, data, iters):
    import warnings

    import scipy.sparse as sp

    sys.path.insert(0, str(REPO))
    from sklearn.exceptions import ConvergenceWarning

    from skcrowd import aggregation
    from skcrowd.aggregation import kernels

    warnings.simplefilter("ignore", ConvergenceWarning)
    kernels.ENGINE = "numpy" if method.endswith("-numpy") else "numba"
    name, iteration_params = MODELS[model_key(method)]
    cls = _variational_model(method) or getattr(aggregation, name)

    def model(max_iter):
        if iteration_params is None:  # no iterations
            return cls()
        params = {"max_iter": max_iter, "tol": 0}
        if "random_state" in cls().get_params():
            params["random_state"] = 0
        return cls(**params)

    task, worker, label, truth = data["task"], data["worker"], data["label"], data["truth"]
    shape = (len(truth), int(data["n_workers"]))
    votes = sp.coo_array((label, (task, worker)), shape=shape)

    start = time.perf_counter()  # same votes, so the same (serial or parallel) kernels load
    model(2).fit_predict(votes)
    warm_up = time.perf_counter() - start

    start = time.perf_counter()
    fitted = model(iters)
    labels = fitted.fit_predict(votes)
    total = time.perf_counter() - start
    accuracy = float(np.mean(labels == truth))
    result = {"total_s": total, "iters": getattr(fitted, "n_iter_", 1), "accuracy": accuracy,
              "warm_up_s": warm_up}
    if iters > 1 and iteration_params is not None:
        start = time.perf_counter()
        model(1).fit_predict(votes)
        result["loop_s_per_iter"] = (total - (time.perf_counter() - start)) / (iters - 1)
    return result


def _variational_model(method):
    """The estimator class of a ``VARIATIONAL_METHODS`` entry (EBCC seeded), else None."""
    from functools import partial

    from skcrowd.aggregation import EBCC, BayesianDawidSkene

    if method not in VARIATIONAL_METHODS:
        return None
    return BayesianDawidSkene if "-bayesian-ds" in method else partial(EBCC, random_state=0)


def run_crowdkit(method, data, iters):
    import warnings

    import pandas as pd

    warnings.simplefilter("ignore")
    import crowdkit.aggregation as ck
    from _competitors import patch_crowdkit_fitted_check

    patch_crowdkit_fitted_check()
    name, iteration_params = MODELS[model_key(method)]
    frame = pd.DataFrame({"task": data["task"], "worker": data["worker"], "label": data["label"]})
    params = {} if iteration_params is None else {"n_iter": iters, **iteration_params}
    model = getattr(ck, name)(**params)
    start = time.perf_counter()
    labels = model.fit_predict(frame)
    total = time.perf_counter() - start
    truth = data["truth"]
    accuracy = float(np.mean(labels.reindex(np.arange(len(truth))).to_numpy() == truth))
    history = getattr(model, "loss_history_", None)
    n_iter = 1 if iteration_params is None else len(history) if history else iters
    return {"total_s": total, "iters": n_iter, "accuracy": accuracy}


def run_peerannot(method, data, iters):
    import warnings

    os.environ["TQDM_DISABLE"] = "1"
    warnings.simplefilter("ignore")
    import contextlib
    import io

    from peerannot.models.aggregation.dawid_skene import DawidSkene
    from peerannot.models.aggregation.glad import GLAD
    from peerannot.models.aggregation.wawa import Wawa

    answers = {}
    for t, w, lab in zip(data["task"].tolist(), data["worker"].tolist(), data["label"].tolist()):
        answers.setdefault(t, {})[w] = lab
    n_workers = int(data["n_workers"])
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        n_classes = int(data["n_classes"])
        if method == "peerannot-ds":
            model = DawidSkene(answers=answers, n_workers=n_workers, n_classes=n_classes)
            _, n_iter = model.run(epsilon=0.0, maxiter=iters)
        elif method == "peerannot-wawa":
            model = Wawa(answers, n_classes=n_classes, n_workers=n_workers)
            model.run()
            n_iter = 1
        else:
            model = GLAD(answers, n_classes=n_classes, n_workers=n_workers,
                         dataset=Path(tempfile.mkdtemp(prefix="peerannot-glad-")))
            model.run(epsilon=0.0, maxiter=iters)
            n_iter = iters
        labels = (model.get_answers() if method == "peerannot-wawa"
                  else np.argmax(model.get_probas(), axis=1))
    total = time.perf_counter() - start
    truth = data["truth"]
    return {"total_s": total, "iters": n_iter, "accuracy": float(np.mean(labels == truth))}


def child(args):
    data = dict(np.load(args.data))
    runner = (run_skcrowd if args.method.startswith("skcrowd")
              else run_crowdkit if args.method.startswith("crowdkit") else run_peerannot)
    result = runner(args.method, data, args.iters)
    result["peak_mb"] = _peak_mb()
    print(json.dumps(result))


def memory_child(args):
    """Fit DawidSkene on --memory-votes votes generated in this process; report peak memory."""
    import warnings

    import scipy.sparse as sp

    sys.path.insert(0, str(REPO))
    from sklearn.exceptions import ConvergenceWarning

    from skcrowd.aggregation import DawidSkene

    warnings.simplefilter("ignore", ConvergenceWarning)
    task, worker, label, truth = simulate(args.memory_votes, args.n_workers)
    votes = sp.coo_array((label, (task, worker)), shape=(len(truth), args.n_workers))
    del task, worker, label
    after_data = _peak_mb()
    start = time.perf_counter()
    model = DawidSkene(max_iter=args.memory_iters, tol=0).fit(votes)
    total = time.perf_counter() - start
    accuracy = float(np.mean(model.predict(votes) == truth))
    print(json.dumps({"total_s": total, "iters": model.n_iter_, "accuracy": accuracy,
                      "peak_mb": _peak_mb(), "peak_before_fit_mb": after_data}))


def _clock():
    return time.perf_counter(), time.process_time()


def _since(start, stop):
    return {"wall": stop[0] - start[0], "cpu": stop[1] - start[1]}


def fresh_fit_child(args):
    """One fresh process: import times, then one DawidSkene fit cut into phases (see
    ``--fresh-fit``); ``--numba-init-first`` initialises numba's compiler target first."""
    import warnings

    data = dict(np.load(args.data))
    sys.path.insert(0, str(REPO))
    start = _clock()
    import skcrowd  # noqa: F401

    imported = _clock()
    from sklearn.exceptions import ConvergenceWarning

    from skcrowd.aggregation import DawidSkene

    aggregation_imported = _clock()
    result = {"import skcrowd": _since(start, imported),
              "import skcrowd.aggregation": _since(imported, aggregation_imported)}
    import scipy.sparse as sp

    warnings.simplefilter("ignore", ConvergenceWarning)
    votes = sp.coo_array((data["label"], (data["task"], data["worker"])),
                         shape=(len(data["truth"]), int(data["n_workers"])))
    if args.numba_init_first:
        from numba.core.registry import cpu_target

        begin = _clock()
        cpu_target.target_context.refresh()  # what numba's first call in a process does
        result["numba init"] = _since(begin, _clock())
    marks = {}
    choosing = []

    class TimedDawidSkene(DawidSkene):
        """DawidSkene noting when each phase of its fit begins and ends."""

        def _initial_statistics(self, layout, random_state):
            marks["initial"] = _clock()
            stats = super()._initial_statistics(layout, random_state)
            marks["iterations"] = _clock()
            return stats

        def _m_step(self, stats, params):
            params = super()._m_step(stats, params)
            if not self._prior_settled(params):
                choosing.append(1)  # the E-step of these parameters chooses the prior
            elif "settled" not in marks:
                marks["settled"] = _clock()  # the prior is final: EM proper begins
            return params

        def _final_e_step(self, layout, params, **priors):
            marks["final"] = _clock()
            return super()._final_e_step(layout, params, **priors)

    model = TimedDawidSkene(max_iter=args.iters, tol=0)
    begin = _clock()
    model.fit(votes)
    end = _clock()
    result.update({
        "set-up": _since(begin, marks["initial"]),
        "initial statistics": _since(marks["initial"], marks["iterations"]),
        "iterations": _since(marks["iterations"], marks["final"]),
        "choosing the prior": _since(marks["iterations"], marks["settled"]),
        "EM iterations": _since(marks["settled"], marks["final"]),
        "final step": _since(marks["final"], end),
        "whole fit": _since(begin, end),
        "iters": model.n_iter_,
        "prior iters": len(choosing),
    })
    print(json.dumps(result))


def fresh_crowdkit_child(args):
    """One fresh process: import crowd-kit, then one DawidSkene ``fit_predict``."""
    import warnings

    data = dict(np.load(args.data))
    start = _clock()
    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    imported = _clock()
    warnings.simplefilter("ignore")
    frame = pd.DataFrame({"task": data["task"], "worker": data["worker"], "label": data["label"]})
    begin = _clock()
    DawidSkene(n_iter=args.iters, tol=-np.inf).fit_predict(frame)
    end = _clock()
    print(json.dumps({"import crowdkit": _since(start, imported),
                      "whole fit": _since(begin, end)}))


# ---------------------------------------------------------------------------
# driver (parent process)
# ---------------------------------------------------------------------------


def _spawn(python, argv, timeout, env=None):
    cmd = [python, str(Path(__file__).resolve()), *argv]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                             env={**os.environ, "TQDM_DISABLE": "1", **(env or {})})
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout} s"}
    except OSError as exc:  # no such interpreter (the competitors' environment is not there)
        return {"error": f"cannot run {python}: {exc.strerror}"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1][:80]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _runs(method, n_votes, args):
    if method == "crowdkit-glad" and n_votes > args.max_crowdkit_glad:
        return False
    if method == "crowdkit-mmsr" and n_votes > args.max_crowdkit_mmsr:
        return False
    if method in ("peerannot-ds", "peerannot-glad") and n_votes > args.max_peerannot:
        return False
    return True


def _fmt(value, width, spec):
    return f"{'-':>{width}}" if value is None else f"{value:>{width}{spec}}"


def print_table(rows):
    header = (f"{'method':<20} {'n_votes':>8} {'iters':>5} {'s/iter':>9} {'loop s/iter':>11} "
              f"{'total s':>9} {'warm-up s':>9} {'accuracy':>8} {'peak MB':>8} {'ratio':>7}")
    print(header)
    print("-" * len(header))
    crowdkit = {(r["model"], r["n_votes"]): r for r in rows if r["method"].startswith("crowdkit")}
    for r in rows:
        if "error" in r:
            print(f"{r['method']:<20} {r['n_votes']:>8.0e}  {r['error']}")
            continue
        per_iter = r["total_s"] / max(r["iters"], 1)
        ref = crowdkit.get((r["model"], r["n_votes"]))
        ratio = None
        if ref is not None and "error" not in ref:
            ratio = ref["total_s"] / max(ref["iters"], 1) / per_iter
        print(f"{r['method']:<20} {r['n_votes']:>8.0e} {r['iters']:>5} {per_iter:>9.4f} "
              f"{_fmt(r.get('loop_s_per_iter'), 11, '.4f')} {r['total_s']:>9.2f} "
              f"{_fmt(r.get('warm_up_s'), 9, '.2f')} {r['accuracy']:>8.4f} {r['peak_mb']:>8.0f} "
              f"{_fmt(ratio, 7, '.3g')}")
    sys.stdout.flush()


def _median(runs, phase, clock):
    values = [r[phase][clock] for r in runs if phase in r]
    return float(np.median(values)) if values else None


def fresh_fit(args):
    """``--fresh-fit``: skcrowd's and crowd-kit's whole DawidSkene fit in fresh processes."""
    n_votes = int(args.votes[0])
    print(f"Fresh-process fit: DawidSkene on {n_votes:.0e} votes, K={N_CLASSES}, "
          f"{VOTES_PER_TASK} votes per task, {args.n_workers} workers, scipy.sparse input, "
          f"{args.iters} iterations (tol=0); medians of {args.repeats} fresh processes each.")
    print(f"Load average at start: {os.getloadavg()[0]:.1f} (2 cores, shared machine).")
    with tempfile.TemporaryDirectory(prefix="skcrowd-bench-") as tmp:
        path = Path(tmp) / "votes.npz"
        task, worker, label, truth = simulate(n_votes, args.n_workers)
        np.savez(path, task=task, worker=worker, label=label, truth=truth,
                 n_workers=args.n_workers)
        common = ["--data", str(path), "--iters", str(args.iters)]
        warm = {"NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="numba-cache-", dir=tmp)}
        _spawn(sys.executable, ["--fresh-child", *common], args.timeout, warm)  # fills the cache
        plain, split, crowdkit, cold = [], [], [], []
        competitor = Path(args.competitor_python).exists()
        if not competitor:
            print(f"crowd-kit not run: no {args.competitor_python} (--competitor-python).")
        for _ in range(args.repeats):
            # cold: a first call after install, numba's cache empty (a new folder each time)
            cold.append(_spawn(sys.executable, ["--fresh-child", *common], args.timeout,
                               {"NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="numba-", dir=tmp)}))
            plain.append(_spawn(sys.executable, ["--fresh-child", *common], args.timeout, warm))
            split.append(_spawn(sys.executable, ["--fresh-child", "--numba-init-first",
                                                 *common], args.timeout, warm))
            if competitor:
                crowdkit.append(_spawn(args.competitor_python,
                                       ["--fresh-crowdkit-child", *common], args.timeout))
    for runs in (cold, plain, split, crowdkit):
        for r in runs:
            if "error" in r:
                print(f"  failed run: {r['error']}")
        runs[:] = [r for r in runs if "error" not in r]
    phases = ["import skcrowd", "import skcrowd.aggregation", "set-up", "initial statistics",
              "iterations", "  choosing the prior", "  EM iterations", "final step",
              "whole fit"]
    ck_fit = {c: _median(crowdkit, "whole fit", c) for c in ("wall", "cpu")}
    header = (f"{'phase':<34} {'cold wall':>9} {'cold cpu':>9} {'wall s':>8} {'cpu s':>8} "
              f"{'share':>6} {'crowd-kit / skcrowd (wall, cpu)':>32}")
    print("cold: numba's cache empty (first call after install); wall s, cpu s: warm (kernels "
          "compiled in an earlier process); share and ratios: warm, and cold in brackets")
    print(header)
    print("-" * len(header))

    def row(name, runs, phase, share=True, cold_runs=None):
        phase = phase.strip()
        wall, cpu = _median(runs, phase, "wall"), _median(runs, phase, "cpu")
        if wall is None:
            return
        whole = _median(runs, "whole fit", "wall")
        first = ((_median(cold_runs, phase, "wall"), _median(cold_runs, phase, "cpu"))
                 if cold_runs else (None, None))
        ratio = ""
        if ck_fit["wall"] and phase == "whole fit" and runs is not crowdkit:
            ratio = f"{ck_fit['wall'] / wall:>16.1f} {ck_fit['cpu'] / cpu:>15.1f}"
            if first[0]:
                ratio += f" ({ck_fit['wall'] / first[0]:.1f}, {ck_fit['cpu'] / first[1]:.1f})"
        print(f"{name:<34} {_fmt(first[0], 9, '.3f')} {_fmt(first[1], 9, '.3f')} {wall:>8.3f} "
              f"{cpu:>8.3f} {(f'{wall / whole:.0%}' if share else ''):>6} {ratio}")

    for phase in phases:
        row(f"skcrowd {phase}", plain, phase, share="import" not in phase, cold_runs=cold)
    row("skcrowd, numba initialised first:", split, "numba init", share=False)
    for phase in phases[2:]:
        row(f"  {phase}", split, phase)
    row("crowd-kit import", crowdkit, "import crowdkit", share=False)
    row("crowd-kit whole fit", crowdkit, "whole fit", share=False)
    print(f"iterations: {plain[0]['iters'] if plain else '-'} (skcrowd, after "
          f"{plain[0].get('prior iters', '-') if plain else '-'} choosing the prior), "
          f"{args.iters} (crowd-kit, tol=-inf); cpu: process time of all threads.")
    return plain, split, crowdkit, cold


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--votes", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    parser.add_argument("--methods", nargs="+", default=[*SKCROWD_METHODS, *COMPETITOR_METHODS],
                        choices=[*SKCROWD_METHODS, *COMPETITOR_METHODS])
    parser.add_argument("--iters", type=int, default=None,
                        help="EM iterations (default 50; 10 with --fresh-fit)")
    parser.add_argument("--iters-for", nargs="+", default=[], metavar="METHOD=N",
                        help="iterations of a given method instead of --iters")
    parser.add_argument("--n-workers", type=int, default=1000)
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    parser.add_argument("--max-crowdkit-glad", type=float, default=1e5)
    parser.add_argument("--max-crowdkit-mmsr", type=float, default=1e4)
    parser.add_argument("--max-peerannot", type=float, default=1e4)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--memory-check", action="store_true")
    parser.add_argument("--memory-votes", type=float, default=5e7)
    parser.add_argument("--memory-iters", type=int, default=10)
    parser.add_argument("--fresh-fit", action="store_true",
                        help="whole DawidSkene fit in fresh processes, by phase (--iters 10)")
    parser.add_argument("--repeats", type=int, default=5)
    # internal: one measurement in a child process
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--fresh-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--fresh-crowdkit-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--numba-init-first", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--method", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.memory_votes = int(args.memory_votes)
    if args.iters is None:
        args.iters = 10 if args.fresh_fit else 50
    iters_for = {}
    for item in args.iters_for:
        method, _, n = item.partition("=")
        if method not in (*SKCROWD_METHODS, *COMPETITOR_METHODS) or not n.isdigit():
            parser.error(f"--iters-for expects METHOD=N with a known method, got {item!r}")
        iters_for[method] = int(n)

    if args.child:
        return child(args)
    if args.memory_child:
        return memory_child(args)
    if args.fresh_child:
        return fresh_fit_child(args)
    if args.fresh_crowdkit_child:
        return fresh_crowdkit_child(args)
    if args.fresh_fit:
        return fresh_fit(args)

    print("Timings taken on a shared 2-core machine (other jobs running): compare within a table.")
    if args.memory_check:
        print(f"Memory check: DawidSkene on {args.memory_votes:.0e} votes, {args.n_workers} "
              f"workers, K={N_CLASSES}, {args.memory_iters} iterations, in a fresh process")
        result = _spawn(sys.executable, ["--memory-child", "--memory-votes",
                                         str(args.memory_votes), "--memory-iters",
                                         str(args.memory_iters), "--n-workers",
                                         str(args.n_workers)], args.timeout)
        print(json.dumps(result))
        if "peak_mb" in result:
            verdict = "below" if result["peak_mb"] < 8192 else "ABOVE"
            print(f"peak resident memory {result['peak_mb'] / 1024:.2f} GB ({verdict} 8 GB), "
                  f"{result['total_s'] / result['iters']:.3f} s per iteration "
                  f"(set-up included), accuracy {result['accuracy']:.4f}")
        return None

    print(f"Synthetic crowd: K={N_CLASSES} (KOS: 2), {VOTES_PER_TASK} votes per task, "
          f"{args.n_workers} workers, {args.iters} iterations"
          + (f" ({', '.join(args.iters_for)})" if args.iters_for else "") + ".")
    print(f"Load average at start: {os.getloadavg()[0]:.1f} (2 cores).")
    rows = []
    with tempfile.TemporaryDirectory(prefix="skcrowd-bench-") as tmp:
        for n_votes in (int(v) for v in args.votes):
            paths = {}
            for n_classes in (N_CLASSES, 2):
                if n_classes == 2 and not any(model_key(m) in BINARY_MODELS for m in args.methods):
                    continue
                path = paths[n_classes] = Path(tmp) / f"votes-{n_votes}-K{n_classes}.npz"
                task, worker, label, truth = simulate(n_votes, args.n_workers,
                                                      n_classes=n_classes)
                np.savez(path, task=task, worker=worker, label=label, truth=truth,
                         n_workers=args.n_workers, n_classes=n_classes)
                del task, worker, label, truth
            for method in args.methods:
                if not _runs(method, n_votes, args):
                    continue
                path = paths[2 if model_key(method) in BINARY_MODELS else N_CLASSES]
                python = sys.executable if method.startswith("skcrowd") else args.competitor_python
                iters = iters_for.get(method, args.iters)
                result = _spawn(python, ["--child", "--method", method, "--data", str(path),
                                         "--iters", str(iters)], args.timeout)
                result.update(method=method, n_votes=n_votes, model=model_key(method))
                rows.append(result)
                print(f"  done: {method} at {n_votes:.0e} votes: {json.dumps(result)}",
                      file=sys.stderr, flush=True)
    print_table(rows)
    return rows


if __name__ == "__main__":
    main()
