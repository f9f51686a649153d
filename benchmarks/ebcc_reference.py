"""skcrowd's ``EBCC()`` next to its authors' procedure, on real crowds, over several seeds.

The reference is Li, Rubinstein & Cohn's variational EBCC as JieyuZ2/wrench runs it
(``wrench/labelmodel/ebcc.py``, class ``EBCC`` with its defaults): the majority vote's soft
labels as the start, each task's split at random among the subtypes, the empirical class prior
(the soft labels' class totals), at most 1000 iterations, five random starts and the best ELBO
kept. wrench is not on PyPI: give a copy of that file (``--ebcc-reference PATH``; skcrowd's
comparison read commit 1ce3673a). Its function ``ebcc_vb`` runs unchanged in the competitor's
interpreter (``--competitor-python``, a virtual environment with numpy and scipy), in a child
process, never inside skcrowd.

Both are randomized (the starts): the script runs each with seeds ``0 .. --seeds - 1``
(skcrowd: ``EBCC(random_state=s)``, defaults otherwise; the reference: its five starts drawn
from ``RandomState(s)``) and prints, per crowd, the mean gold accuracy of each with its range
over the seeds, the gap of the means and the time of one fit; then the mean over the crowds, the
mean gap and the worst gap. Issue 23's bounds: mean gap at least -0.5 point, no crowd below -2.

Data: every folder of ``../shared/data`` with a ``truth.csv`` (``--data`` to choose), read as
``benchmarks/realdata.py`` reads them (votes renumbered, first vote of a repeated pair kept,
accuracy on the voted gold tasks).

Usage::

    python benchmarks/ebcc_reference.py --ebcc-reference /path/to/wrench/labelmodel/ebcc.py
    python benchmarks/ebcc_reference.py --ebcc-reference ebcc.py --seeds 3 \
        --data ../shared/data/labelme
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realdata import REPO, _votes_matrix, default_folders, resolve  # noqa: E402


def reference_child(args):
    """The reference on the saved crowd, for each seed; one JSON line of accuracies and times."""
    from _competitors import ebcc_reference_labels, load_ebcc_reference

    ebcc_vb = load_ebcc_reference(args.ebcc_reference)
    data = np.load(args.crowd)
    accuracy, seconds = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(args.seeds):
            start = time.perf_counter()
            labels = ebcc_reference_labels(ebcc_vb, data["task"], data["worker"], data["label"],
                                           int(data["n_tasks"]), int(data["n_workers"]),
                                           int(data["n_classes"]), seed)
            seconds.append(time.perf_counter() - start)
            accuracy.append(float(np.mean(labels[data["gold_task"]] == data["gold_label"])))
    print(json.dumps({"accuracy": accuracy, "seconds": seconds}))


def run_reference(args, crowd):
    with tempfile.TemporaryDirectory(prefix="skcrowd-ebcc-") as tmp:
        path = Path(tmp) / "crowd.npz"
        np.savez(path, task=crowd.task, worker=crowd.worker, label=crowd.label,
                 gold_task=crowd.gold_task, gold_label=crowd.gold_label, n_tasks=crowd.n_tasks,
                 n_workers=crowd.n_workers, n_classes=crowd.n_classes)
        out = subprocess.run([args.competitor_python, str(Path(__file__).resolve()),
                              "--reference-child", "--crowd", str(path), "--seeds",
                              str(args.seeds), "--ebcc-reference", args.ebcc_reference],
                             capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"the reference failed on {crowd.name}:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_skcrowd(args, crowd):
    sys.path.insert(0, str(REPO))
    from skcrowd.aggregation import EBCC

    X = _votes_matrix(crowd)
    accuracy, seconds = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(args.seeds):
            start = time.perf_counter()
            labels = EBCC(n_classes=crowd.n_classes, random_state=seed).fit_predict(X)
            seconds.append(time.perf_counter() - start)
            accuracy.append(float(np.mean(labels[crowd.gold_task] == crowd.gold_label)))
    return {"accuracy": accuracy, "seconds": seconds}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ebcc-reference", required=True, metavar="PATH",
                        help="a copy of wrench's wrench/labelmodel/ebcc.py")
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python",
                        help="interpreter with numpy and scipy that runs the reference")
    parser.add_argument("--seeds", type=int, default=5, help="seeds of each method")
    parser.add_argument("--data", nargs="+", metavar="DIR",
                        help="crowd folders or dataset names (default: ../shared/data)")
    parser.add_argument("--reference-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crowd", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.reference_child:
        return reference_child(args)

    run_skcrowd(args, resolve(default_folders()[0]) if args.data is None
                else resolve(args.data[0]))  # numba's compilation, not timed below
    print(f"{'crowd':40s} {'reference mean (range)':>24s} {'skcrowd mean (range)':>24s} "
          f"{'gap':>6s} {'ref s':>7s} {'sk s':>6s}")
    gaps, means = [], []
    for item in args.data or default_folders():
        crowd = resolve(item)
        ref, sk = run_reference(args, crowd), run_skcrowd(args, crowd)
        r, s = np.array(ref["accuracy"]), np.array(sk["accuracy"])
        gap = 100 * (s.mean() - r.mean())
        gaps.append(gap)
        means.append((r.mean(), s.mean()))
        print(f"{crowd.name:40s} {r.mean():10.4f} ({r.min():.3f}-{r.max():.3f}) "
              f"{s.mean():10.4f} ({s.min():.3f}-{s.max():.3f}) {gap:+6.2f} "
              f"{np.median(ref['seconds']):7.2f} {np.median(sk['seconds']):6.2f}", flush=True)
    means = np.array(means)
    print(f"\nmean over {len(gaps)} crowds: reference {means[:, 0].mean():.4f}, skcrowd "
          f"{means[:, 1].mean():.4f}; mean gap {np.mean(gaps):+.2f} points, worst "
          f"{min(gaps):+.2f} (gaps: skcrowd's mean accuracy over the seeds minus the "
          "reference's, in points)")


if __name__ == "__main__":
    main()
