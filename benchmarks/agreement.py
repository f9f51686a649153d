"""Inter-annotator agreement on real crowds: skcrowd against crowd-kit's ``alpha_krippendorff``.

For every dataset folder given (``--data DIR [DIR ...]``, any folder in the shared-data layout:
``votes.csv`` with columns ``task,worker,label``; default: every folder of ``../shared/data``
with a ``votes.csv``), the script prints

- the crowd's size, its tasks with two votes or more (Krippendorff's *pairable* units) and
  with a single vote;
- skcrowd's :func:`skcrowd.metrics.krippendorff_alpha` (nominal) and
  :func:`skcrowd.metrics.fleiss_kappa`, each with its 95 % percentile bootstrap interval
  (``--n-resamples`` resamples of the tasks, seed ``--seed``), and their times;
- crowd-kit 1.4.2's ``crowdkit.metrics.data.alpha_krippendorff`` on the same ``votes.csv``,
  run in the competitor interpreter (``--competitor-python``, a virtual environment holding
  crowd-kit; it goes through NLTK's ``AnnotationTask.alpha``), its time,
  and the absolute difference with skcrowd's alpha. ``--max-crowdkit-votes`` (default 2e5)
  skips crowd-kit on larger crowds.

**Conventions.** skcrowd follows Krippendorff's definition: a task with fewer than two votes is
not pairable and is dropped whole (its vote does not enter the expected disagreement either).
The NLTK installed with crowd-kit in the benchmark environment drops the same tasks, so on data
with single-vote tasks the two agree too; where every pairable vote has the same label NLTK
returns 1 and skcrowd raises (alpha is 0 / 0 there). A last table compares them on small
simulated crowds with 1 to 4 votes per task, many with a single vote, and with numeric labels
at the interval level (NLTK's ``interval_distance``, the squared difference).

Usage::

    python benchmarks/agreement.py
    python benchmarks/agreement.py --data ../shared/data/labelme ../shared/data/snow2008_rte
    python benchmarks/agreement.py --n-resamples 2000 --competitor-python /path/to/python

Timings were taken on a shared 2-core machine: compare the ratios within one table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"


# ---------------------------------------------------------------------------
# crowd-kit, in the competitor interpreter
# ---------------------------------------------------------------------------


def crowdkit_child(path, distance):
    """Print crowd-kit's alpha of a votes CSV (run by the competitor interpreter)."""
    import warnings

    import pandas as pd
    from crowdkit.metrics.data import alpha_krippendorff

    warnings.simplefilter("ignore")
    answers = pd.read_csv(path)[["task", "worker", "label"]]
    kwargs = {}
    if distance == "interval":
        from nltk.metrics.distance import interval_distance

        kwargs["distance"] = interval_distance
    start = time.perf_counter()
    alpha = alpha_krippendorff(answers, **kwargs)
    print(json.dumps({"alpha": float(alpha), "seconds": time.perf_counter() - start}))


def crowdkit_alpha(python, path, distance="binary", timeout=3600):
    cmd = [python, str(Path(__file__).resolve()), "--crowdkit-child", str(path),
           "--distance", distance]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": str(exc)[:60]}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1][:60]}
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------
# skcrowd
# ---------------------------------------------------------------------------


def read_votes(path):
    """Votes CSV (integer task, worker, label) as a sparse matrix whose entries are the labels."""
    import scipy.sparse as sp

    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    task, worker, label = table.T
    return sp.csr_array((label, (task, worker)), shape=(task.max() + 1, worker.max() + 1))


def skcrowd_figures(votes, n_resamples, seed, level="nominal"):
    from skcrowd.metrics import fleiss_kappa, krippendorff_alpha

    start = time.perf_counter()
    point = krippendorff_alpha(votes, level_of_measurement=level)
    alpha_s = time.perf_counter() - start
    alpha = krippendorff_alpha(votes, level_of_measurement=level, confidence_level=0.95,
                               n_resamples=n_resamples, random_state=seed)
    kappa = fleiss_kappa(votes, confidence_level=0.95, n_resamples=n_resamples,
                         random_state=seed)
    assert point == alpha.estimate
    return alpha, kappa, alpha_s


def _interval(result):
    return f"{result.estimate:.3f} [{result.low:.3f}, {result.high:.3f}]"


def real_data_table(folders, args):
    print(f"{'dataset':<40} {'tasks':>6} {'votes':>7} {'pairable':>8} {'1 vote':>6}  "
          f"{'alpha [95 % CI]':<22} {'kappa [95 % CI]':<22} {'crowd-kit alpha':>15} "
          f"{'|diff|':>8} {'skcrowd s':>9} {'crowd-kit s':>11} {'ratio':>6}")
    diffs = []
    for folder in folders:
        path = folder / "votes.csv"
        votes = read_votes(path)
        per_task = np.diff(votes.indptr)
        alpha, kappa, seconds = skcrowd_figures(votes, args.n_resamples, args.seed)
        if votes.nnz <= args.max_crowdkit_votes:
            ck = crowdkit_alpha(args.competitor_python, path)
        else:
            ck = {"error": "skipped (--max-crowdkit-votes)"}
        if "error" in ck:
            ck_text, diff_text, ck_s, ratio = ck["error"][:15], "-", "-", "-"
        else:
            diff = abs(ck["alpha"] - alpha.estimate)
            diffs.append(diff)
            ck_text, diff_text = f"{ck['alpha']:.6f}", f"{diff:.1e}"
            ck_s, ratio = f"{ck['seconds']:.3f}", f"{ck['seconds'] / seconds:.0f}x"
        print(f"{folder.name:<40} {votes.shape[0]:>6} {votes.nnz:>7} {(per_task >= 2).sum():>8} "
              f"{(per_task == 1).sum():>6}  {_interval(alpha):<22} {_interval(kappa):<22} "
              f"{ck_text:>15} {diff_text:>8} {seconds:>9.4f} {ck_s:>11} {ratio:>6}", flush=True)
    if diffs:
        print(f"largest |skcrowd - crowd-kit| over {len(diffs)} crowds: {max(diffs):.1e}")


def simulated_table(args):
    """Crowds with many single-vote tasks, nominal and interval levels, against crowd-kit."""
    import tempfile

    from skcrowd.datasets import simulate_annotators

    print("\nSimulated crowds (1-4 votes per task; labels 1, 2, 4, 8 for the interval level):")
    print(f"{'crowd':<34} {'level':<9} {'1-vote tasks':>12} {'skcrowd alpha':>14} "
          f"{'crowd-kit alpha':>15} {'|diff|':>8}")
    values = np.array([1, 2, 4, 8])
    with tempfile.TemporaryDirectory(prefix="skcrowd-agreement-") as tmp:
        for seed in range(3):
            y = np.random.RandomState(seed).randint(4, size=400)
            crowd = simulate_annotators(y, 12, n_classes=4, accuracy=(0.4, 0.9),
                                        votes_per_task=(1, 4), spammers=0.2, random_state=seed)
            rows, cols = np.nonzero(crowd.votes >= 0)
            labels = values[crowd.votes[rows, cols]]
            path = Path(tmp) / f"crowd{seed}.csv"
            np.savetxt(path, np.column_stack([rows, cols, labels]), fmt="%d", delimiter=",",
                       header="task,worker,label", comments="")
            votes = read_votes(path)
            singles = int((np.diff(votes.indptr) == 1).sum())
            for level, distance in (("nominal", "binary"), ("interval", "interval")):
                from skcrowd.metrics import krippendorff_alpha

                ours = krippendorff_alpha(votes, level_of_measurement=level)
                ck = crowdkit_alpha(args.competitor_python, path, distance)
                theirs = ck.get("alpha", np.nan)
                print(f"{f'seed {seed}, 400 tasks, 12 workers':<34} {level:<9} {singles:>12} "
                      f"{ours:>14.6f} {theirs:>15.6f} {abs(ours - theirs):>8.1e}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="+", type=Path, default=None,
                        help="dataset folders (default: every folder of ../shared/data)")
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    parser.add_argument("--max-crowdkit-votes", type=float, default=2e5)
    parser.add_argument("--no-simulated", action="store_true",
                        help="skip the table of simulated crowds")
    parser.add_argument("--crowdkit-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--distance", default="binary", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.crowdkit_child:
        return crowdkit_child(args.crowdkit_child, args.distance)
    sys.path.insert(0, str(REPO))

    folders = args.data
    if folders is None:
        folders = sorted(p for p in DEFAULT_DATA.iterdir() if (p / "votes.csv").is_file()) \
            if DEFAULT_DATA.is_dir() else []
    print("Krippendorff's alpha (nominal) and Fleiss' kappa with 95 % bootstrap intervals "
          f"({args.n_resamples} resamples of the tasks, seed {args.seed}); crowd-kit 1.4.2's "
          "alpha_krippendorff on the same votes. Shared 2-core machine: compare ratios.")
    real_data_table(folders, args)
    if not args.no_simulated:
        simulated_table(args)


if __name__ == "__main__":
    main()
