"""Where the fit time of the slow aggregators goes, on the shared crowds, before and after a change.

Issue 37 timed, on ten crowds outside the shared data, MMSR at 605 s (DawidSkene 0.5 s), the
AggregatorSelector at 155 s, EBCC at 49 s and BiasPrecisionEM at 36 s. This script times the
same estimators with their defaults (``random_state=0`` where they take one) on the crowds of
``../shared/data``: the 18 classification crowds with gold (cifar10n left out: its worker ids
are rebuilt, see the data's README) for ``DawidSkene`` (the reference), ``MMSR``,
``AggregatorSelector`` and ``EBCC``, and the 8 rating crowds of ``benchmarks/continuous.py``
for ``BiasPrecisionEM``.

Each (estimator, crowd) runs in a fresh Python process (data loading and imports not timed):
``first`` is the first fit of the process (what a user's script meets: first calls of numpy,
scipy and scikit-learn, including scikit-learn's one-time look-up of dataframe plugins in the
first ``validate_data``), ``warm`` a second fit of a new estimator in the same process; both
in process CPU time (all threads; less sensitive than wall time to the other jobs of a shared
machine; the wall times are in the JSON). With ``--profile`` a third fit (of the current tree
only) runs under cProfile, on the process's CPU clock, and its own time
(``tottime``) is split into

- ``valid``: input checks (``skcrowd.votes``, scikit-learn's validation and parameter checks,
  narwhals, ``importlib.metadata``),
- ``conv``: conversions and layouts (``skcrowd._layout``, ``skcrowd._holdout``, scipy.sparse
  construction),
- ``params``: scikit-learn's ``clone``, ``get_params`` and ``set_params`` (the selector's
  copies of its candidates, every fit's reading of its parameters), with ``inspect``,
- ``jit``: numba compilation (none below ``kernels.AUTO_NUMBA_MIN_VOTES`` votes: numpy engine),
- ``model``: the rest, the model's own computations (E/M steps, iterations, kernels),

with the three functions of most own time and their shares (cProfile's own overhead inflates
functions with many small calls, so read the shares as a guide). For the selector, each
candidate's share of the candidates' fits (wall time of its fits on the hold-outs, from
``cv_results_["mean_fit_time"]``) and the candidate it chose.

``--baseline REV`` also runs every case on the skcrowd of git revision ``REV`` (exported to a
temporary folder), and prints the warm CPU times before and after and their ratio (before / after),
with the iterations; ``--baseline-path DIR`` takes a checkout instead. The machine is shared:
compare the columns of one run, and run ``uptime`` beside it.

Usage::

    python benchmarks/fit_time.py --baseline 6905e8c                       # about 15 minutes
    python benchmarks/fit_time.py --estimators MMSR EBCC --crowds labelme zhang2014_trec
    python benchmarks/fit_time.py --estimators AggregatorSelector --profile
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from _competitors import run_json_child  # benchmarks/, first on the script's path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
CLASS_CROWDS = [
    "labelme", "sentiment_polarity_rodrigues", "zheng_d_Duck_Identification",
    "zheng_s4_Dog_data", "zheng_s4_Face_Sentiment_Identification", "zheng_d_jn_product",
    "zheng_d_sentiment", "snow2008_rte", "snow2008_temp", "act_CF", "act_CF_amt",
    "act_ZenCrowd_all", "act_ZenCrowd_in", "act_ZenCrowd_us", "zhang2014_web", "zhang2014_trec",
    "zheng_s4_Relevance", "zheng_s5_AdultContent"]
RATING_CROWDS = ["snow2008_anger", "snow2008_disgust", "snow2008_fear", "snow2008_joy",
                 "snow2008_sadness", "snow2008_surprise", "snow2008_valence",
                 "movie_reviews_rodrigues"]
ESTIMATORS = ["DawidSkene", "MMSR", "AggregatorSelector", "EBCC", "BiasPrecisionEM"]
TIMEOUT = 1800  # seconds per child

# own-time categories of the profile, by the file of the function (first match)
CATEGORIES = [
    ("valid", ("skcrowd/votes.py", "sklearn/utils/validation.py", "_param_validation.py",
               "narwhals", "importlib/metadata", "importlib/__init__", "skcrowd/_optional.py")),
    ("conv", ("skcrowd/_layout.py", "skcrowd/_holdout.py", "scipy/sparse/_construct",
              "scipy/sparse/_coo", "scipy/sparse/_compressed.py:30(__init__)")),
    ("params", ("sklearn/base.py", "inspect.py")),
    ("jit", ("numba", "llvmlite")),
]


def crowds_of(estimator):
    return RATING_CROWDS if estimator == "BiasPrecisionEM" else CLASS_CROWDS


def child(spec):
    """Fit ``spec["estimator"]`` on ``spec["crowd"]`` in this process; print the result."""
    import cProfile
    import pstats
    import warnings

    import numpy as np

    from skcrowd import aggregation

    if spec["estimator"] == "BiasPrecisionEM":
        from skcrowd.datasets import fetch_crowd_dataset
        votes = fetch_crowd_dataset(spec["crowd"], data_home=spec["data"]).votes
        n_votes = int(np.sum(~np.isnan(votes)))
    else:
        from skcrowd.datasets import load_crowd_dataset
        votes = load_crowd_dataset(Path(spec["data"]) / spec["crowd"], features=None).votes
        n_votes = int(np.sum(votes >= 0))

    def fit(profiler=None):
        model = getattr(aggregation, spec["estimator"])()
        if "random_state" in model.get_params():
            model.set_params(random_state=0)
        wall, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if profiler is not None:
                profiler.enable()
            model.fit(votes)
            if profiler is not None:
                profiler.disable()
        return model, time.process_time() - cpu, time.perf_counter() - wall

    _, first, first_wall = fit()
    model, warm, warm_wall = fit()
    out = {"n_votes": n_votes, "first": first, "warm": warm, "first_wall": first_wall,
           "warm_wall": warm_wall,
           "n_iter": _plain(getattr(model, "n_iter_", None)),
           "converged": _plain(getattr(model, "converged_", None))}
    if spec["estimator"] == "AggregatorSelector":
        out["chosen"] = type(model.best_estimator_).__name__
        out["candidates"] = {type(c).__name__: float(t) * (model.n_splits + 1) for c, t in zip(
            model.cv_results_["estimator"], model.cv_results_["mean_fit_time"])}
    if spec["profile"]:
        profiler = cProfile.Profile(time.process_time)  # preemption does not count
        fit(profiler)
        stats = pstats.Stats(profiler).stats
        own = {f"{file}:{line}({func})": entry[2]
               for (file, line, func), entry in stats.items()}
        total = sum(own.values())
        shares = dict.fromkeys([c for c, _ in CATEGORIES] + ["model"], 0.0)
        for where, seconds in own.items():
            shares[_category(where)] += seconds / total
        top = sorted(own.items(), key=lambda item: -item[1])[:3]
        out["shares"] = shares
        out["top"] = [(_short(where), seconds / total) for where, seconds in top]
    print(json.dumps(out))


def _plain(value):
    return value.item() if hasattr(value, "item") else value


def _category(where):
    for name, needles in CATEGORIES:
        if any(needle in where for needle in needles):
            return name
    return "model"


def _short(where):
    file, _, rest = where.rpartition(":")
    return f"{Path(file).name}:{rest}" if file else where


def export(revision, folder):
    """The ``skcrowd`` package of git revision ``revision``, under ``folder``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision, "skcrowd"],
                             check=True, capture_output=True).stdout
    path = Path(folder) / "archive.tar"
    path.write_bytes(archive)
    with tarfile.open(path) as tar:
        tar.extractall(folder, filter="data")
    return Path(folder)


def run(estimator, crowd, root, args, profile):
    spec = {"estimator": estimator, "crowd": crowd, "data": str(args.data), "profile": profile}
    return run_json_child([sys.executable, __file__, "--child", json.dumps(spec)],
                          timeout=TIMEOUT, name="error", env={"PYTHONPATH": str(root)})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--estimators", nargs="+", default=ESTIMATORS, choices=ESTIMATORS)
    parser.add_argument("--crowds", nargs="+", default=None,
                        help="crowd names (default: every crowd of each estimator's list)")
    parser.add_argument("--data", type=Path, default=SHARED)
    parser.add_argument("--baseline", default=None, help="git revision to compare with")
    parser.add_argument("--baseline-path", type=Path, default=None,
                        help="a checkout to compare with (its folder holding skcrowd/)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return
    with tempfile.TemporaryDirectory() as folder:
        roots = {"after": REPO}
        if args.baseline_path:
            roots["before"] = args.baseline_path
        elif args.baseline:
            roots["before"] = export(args.baseline, folder)
        results = []
        for estimator in args.estimators:
            for crowd in args.crowds or crowds_of(estimator):
                if crowd not in crowds_of(estimator):
                    continue
                row = {"estimator": estimator, "crowd": crowd}
                for label, root in roots.items():
                    row[label] = run(estimator, crowd, root, args,
                                     args.profile and label == "after")
                results.append(row)
                print_row(row, args, len(roots) > 1)
    print_totals(results, len(roots) > 1)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


def _cell(result, key, spec):
    value = result.get(key)
    return "-" if value is None else format(value, spec)


def print_row(row, args, compare):
    after = row["after"]
    if "error" in after:
        print(f"{row['estimator']:<18} {row['crowd']:<38} {after['error']}")
        return
    line = (f"{row['estimator']:<18} {row['crowd'][:38]:<38} {after['n_votes']:>7} "
            f"first {after['first']:7.3f} warm {after['warm']:7.3f} "
            f"n_iter {_cell(after, 'n_iter', '>5')} conv {_cell(after, 'converged', '')}")
    if compare:
        before = row["before"]
        if "error" in before:
            line += f" | before: {before['error']}"
        else:
            line += (f" | before warm {before['warm']:7.3f} n_iter "
                     f"{_cell(before, 'n_iter', '>5')} ratio {before['warm'] / after['warm']:5.2f}")
    print(line, flush=True)
    if "chosen" in after:
        total = sum(after["candidates"].values())
        print("    chosen " + after["chosen"] + "; candidates' shares of their fits: " + ", ".join(
            f"{name} {seconds / total:.0%}" for name, seconds in after["candidates"].items()))
    if "shares" in after:
        shares = ", ".join(f"{name} {share:.0%}" for name, share in after["shares"].items())
        top = ", ".join(f"{name} {share:.0%}" for name, share in after["top"])
        print(f"    own time: {shares}; top: {top}", flush=True)


def print_totals(results, compare):
    print("\ntotal CPU time of the fits by estimator (s)"
          + (": before, after, ratio" if compare else ""))
    for estimator in dict.fromkeys(row["estimator"] for row in results):
        rows = [row for row in results if row["estimator"] == estimator
                and "error" not in row["after"]
                and (not compare or "error" not in row["before"])]
        after = sum(row["after"]["warm"] for row in rows)
        first = sum(row["after"]["first"] for row in rows)
        line = f"  {estimator:<18} {len(rows):>2} crowds  first {first:8.2f}  warm {after:8.2f}"
        if compare:
            before = sum(row["before"]["warm"] for row in rows)
            line += f"  before {before:8.2f}  ratio {before / after:5.2f}"
        print(line)


if __name__ == "__main__":
    sys.exit(main())
