"""The ``python -m skcrowd`` command line: ``demo``, ``aggregate``, ``report``, ``fetch`` and
``pairwise``.

``demo`` simulates a crowd on scikit-learn's digits and compares every
method of :data:`DEMO_METHODS` (a list of rows, extended as methods are
added), or the methods named with ``--method``. ``aggregate`` turns a
long-format votes CSV into one label per task. ``report`` writes the worker
and task quality reports of a votes CSV and prints the agreement between
workers. ``fetch`` writes public crowds into folders of skcrowd's dataset
layout. ``pairwise`` turns a CSV of pairwise comparisons into a score per
item. The commands that fit an aggregator take any aggregator that
:func:`~skcrowd.utils.discovery.all_estimators` finds, by class name, or an
alias of :data:`METHOD_ALIASES`.
"""

from __future__ import annotations

import argparse
import ast
import csv
import functools
import io
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

__all__ = ["main", "DemoMethod", "DEMO_METHODS"]


def _skcrowd_estimator(class_name, **params):
    """Factory of ``skcrowd.<class_name>(**params)``, imported when called."""

    def make():
        import skcrowd

        try:
            estimator_class = getattr(skcrowd, class_name)
        except AttributeError as exc:
            raise ImportError(f"skcrowd.{class_name} does not exist in this version") from exc
        return estimator_class(**params)

    return make


@dataclass(frozen=True)
class DemoMethod:
    """One row of the demo table.

    ``factory()`` returns an unfitted estimator. Aggregators
    (``uses_features=False``) are fitted on the votes and predict from them;
    feature models are fitted on ``(features, votes)`` and predict from the
    features.
    """

    name: str
    factory: Callable[[], object]
    uses_features: bool = False


DEMO_METHODS = [
    DemoMethod("majority vote", _skcrowd_estimator("MajorityVote")),
    DemoMethod("Dawid-Skene", _skcrowd_estimator("DawidSkene")),
    DemoMethod("weighted Dawid-Skene", _skcrowd_estimator("WeightedDawidSkene")),
    DemoMethod("GLAD", _skcrowd_estimator("GLAD")),
]

# Short names of ``--method`` (``aggregate``, ``report``, ``demo``); every aggregator found by
# :func:`skcrowd.utils.discovery.all_estimators` is also taken by its class name, in any case.
METHOD_ALIASES = {
    "auto": "AggregatorSelector",
    "mv": "MajorityVote",
    "ds": "DawidSkene",
    "wds": "WeightedDawidSkene",
    "glad": "GLAD",
}


def aggregator_names():
    """Class names of the aggregators ``--method`` takes (one class per task), sorted.

    Found by :func:`~skcrowd.utils.discovery.all_estimators`, which imports skcrowd's public
    modules: called only to read a method that is not an alias, or to show the help.
    """
    from .utils.discovery import all_estimators

    return [name for name, _ in all_estimators(type_filter="aggregator")]


def _method(text):
    """The class name of the ``--method`` ``text``: an alias or a class name in any case."""
    known = {**METHOD_ALIASES, **{n.lower(): n for n in METHOD_ALIASES.values()}}
    name = known.get(text.lower())
    if name is None:  # look further only for a name that is not an alias's
        name = {n.lower(): n for n in aggregator_names()}.get(text.lower())
    if name is None:
        raise argparse.ArgumentTypeError(
            f"unknown method {text!r}; choose one of {_methods_text()}."
        )
    return name


def _methods_text():
    aliases = ", ".join(f"{a} ({n})" for a, n in METHOD_ALIASES.items())
    return f"{aliases}, or the class name (any case) of {', '.join(aggregator_names())}"


class _MethodsHelpFormatter(argparse.HelpFormatter):
    """Help that lists the methods in ``--method``'s entry, found only when the help is shown."""

    def _get_help_string(self, action):
        text = super()._get_help_string(action)
        return f"{text}: {_methods_text()}" if action.dest == "method" else text


# Digit pairs that people (and the demo's workers) confuse more often.
_DIGIT_CONFUSIONS = [(1, 7), (3, 8), (4, 9), (5, 6), (2, 7), (0, 6), (5, 3)]


class CommandError(Exception):
    """An error in the user's input: printed without a traceback."""


# ---------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------


def simulate_digits_crowd(random_state=0):
    """The demo's crowd: 50 workers labelling scikit-learn's digits.

    3 to 5 distinct workers per task; regular workers of accuracy 0.5 to 0.95
    whose mistakes favour look-alike digits; 5 spammers and 2 adversarial
    workers.
    """
    from sklearn.datasets import load_digits

    from .datasets import simulate_annotators

    digits = load_digits()
    confusion = np.ones((10, 10))
    for a, b in _DIGIT_CONFUSIONS:
        confusion[a, b] = confusion[b, a] = 8.0
    crowd = simulate_annotators(
        digits.target, 50, n_classes=10, accuracy=(0.5, 0.95), votes_per_task=(3, 5),
        spammers=0.1, adversarial=0.04, class_confusion=confusion, random_state=random_state,
    )
    crowd.data, crowd.target = digits.data, digits.target
    return crowd


def run_demo_method(method, estimator, crowd):
    """Fit one demo estimator on the crowd: (accuracy, ECE, fit seconds) against the truth."""
    from .metrics import expected_calibration_error

    inputs = (crowd.data, crowd.votes) if method.uses_features else (crowd.votes,)
    start = time.perf_counter()
    estimator.fit(*inputs)
    fit_time = time.perf_counter() - start
    proba = estimator.predict_proba(inputs[0])
    classes = np.asarray(estimator.classes_)
    accuracy = float(np.mean(classes[proba.argmax(axis=1)] == crowd.target))
    ece = expected_calibration_error(crowd.target, proba, labels=classes)
    return accuracy, ece, fit_time


def demo(args, out):
    crowd = simulate_digits_crowd(args.seed)
    n_votes = int((crowd.votes >= 0).sum())
    types, counts = np.unique(crowd.worker_type, return_counts=True)
    print(
        f"Simulated crowd on scikit-learn's digits: {len(crowd.target)} tasks, "
        f"{crowd.votes.shape[1]} workers ({', '.join(f'{c} {t}' for t, c in zip(types, counts))}), "
        f"10 classes, {n_votes} votes (3-5 per task), seed {args.seed}.",
        file=out,
    )
    methods = DEMO_METHODS if not args.method else [
        DemoMethod(name, functools.partial(_aggregator, name, {})) for name in args.method]
    width = max(len(m.name) for m in methods)
    print(f"\n{'method':<{width}}  accuracy     ECE  fit time (s)", file=out)
    print(f"{'-' * width}  --------  ------  ------------", file=out)
    for method in methods:
        try:
            estimator = method.factory()
        except ImportError as exc:
            print(f"{method.name:<{width}}  not available: {exc}", file=out)
            continue
        accuracy, ece, fit_time = run_demo_method(method, estimator, crowd)
        print(f"{method.name:<{width}}  {accuracy:8.3f}  {ece:6.3f}  {fit_time:12.3f}", file=out)
    print(
        "\naccuracy and ECE (15 bins) against the simulated truth; fit times are wall-clock "
        "on this machine.",
        file=out,
    )
    return 0


# ---------------------------------------------------------------------------
# aggregate
# ---------------------------------------------------------------------------


def _read_long_csv(path, columns, delimiter):
    """The ``columns`` of a CSV file (``-`` for stdin) as lists of strings."""
    if path == "-":
        return _parse_long_csv(sys.stdin, "<stdin>", columns, delimiter)
    try:
        with open(path, newline="") as f:
            return _parse_long_csv(f, path, columns, delimiter)
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _parse_long_csv(f, name, columns, delimiter):
    """The columns' values (lists of str), and under ``"line"`` the line of each row."""
    reader = csv.reader(f, delimiter=delimiter)
    header = next(reader, None)
    if not header:
        raise CommandError(f"{name} is empty: expected a header row with {', '.join(columns)}.")
    header = [h.strip() for h in header]
    for what, col in columns.items():
        if col not in header:
            raise CommandError(
                f"{name} has no column {col!r} (columns: {', '.join(header)}); "
                f"name the {what} column with --{what}-col."
            )
    index = {what: header.index(col) for what, col in columns.items()}
    values = {what: [] for what in [*columns, "line"]}
    for row in reader:
        if not row:
            continue
        line = reader.line_num
        values["line"].append(line)
        if len(row) != len(header):
            raise CommandError(
                f"{name} line {line} has {len(row)} fields, the header has {len(header)}."
            )
        for what, i in index.items():
            value = row[i].strip()
            if not value:
                raise CommandError(f"{name} line {line}: empty {what} ({columns[what]!r}).")
            values[what].append(value)
    if not values["task"]:
        raise CommandError(f"{name} has a header but no votes.")
    return values


def _parse_param(text):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value  # a plain string such as an option name


def _read_votes(args):
    """The votes CSV as :class:`~skcrowd.votes.LongVotes`, and its tasks in file order."""
    from .votes import _as_ints_if_possible, _DuplicateVoteError, _fmt, votes_from_long

    columns = {"task": args.task_col, "worker": args.worker_col, "label": args.label_col}
    values = _read_long_csv(args.votes, columns, args.delimiter)
    labels = _as_ints_if_possible(values["label"])
    try:
        long = votes_from_long(
            None, task=np.asarray(values["task"]), worker=np.asarray(values["worker"]),
            label=labels, duplicates=args.duplicates,
        )
    except _DuplicateVoteError as exc:
        lines = ", ".join(str(values["line"][i]) for i in exc.rows[:5])
        raise CommandError(
            f"{args.votes} lines {lines}: worker {_fmt(exc.worker)} voted more than once on "
            f"task {_fmt(exc.task)}; keep one vote per (task, worker), or pass --duplicates "
            "first or --duplicates last."
        ) from exc
    except (ValueError, TypeError) as exc:
        raise CommandError(str(exc)) from exc
    # rows of long.votes (tasks) in order of first appearance in the file
    _, first = np.unique(np.asarray(values["task"]), return_index=True)
    return long, np.argsort(first)


def _aggregator(method, params):
    """The unfitted aggregator ``method`` (a class name) with the ``params`` of the command."""
    try:
        estimator = _skcrowd_estimator(method)()
    except ImportError as exc:
        raise CommandError(f"method {method!r} is not available: {exc}") from exc
    valid = estimator.get_params()
    unknown = [name for name in params if name not in valid]
    if unknown:
        raise CommandError(
            f"{method} has no parameter {unknown[0]!r}; its parameters are "
            f"{', '.join(sorted(valid))}."
        )
    if "random_state" in valid:  # the same output on every run
        params = {"random_state": 0, **params}
    return estimator.set_params(**params)


def _fitted_aggregator(args, votes):
    """The ``--method`` aggregator with its options, fitted on ``votes``."""
    params = dict(args.param)
    for name in ("max_iter", "smoothing"):
        if getattr(args, name, None) is not None:
            params[name] = getattr(args, name)
    estimator = _aggregator(args.method, params)
    try:
        return estimator.fit(votes)
    except (ValueError, TypeError) as exc:
        raise CommandError(f"{type(estimator).__name__}: {exc}") from exc


def aggregate(args, out):
    long, order = _read_votes(args)
    estimator = _fitted_aggregator(args, long.votes)
    proba = estimator.predict_proba(long.votes)
    class_index = np.asarray(estimator.classes_)  # class indices of long.classes
    best = proba.argmax(axis=1)

    writer = csv.writer(out, lineterminator="\n")
    header = ["task", "label", "proba"]
    if args.all_proba:
        header += [f"proba_{long.classes[k]}" for k in class_index]
    writer.writerow(header)
    for i in order:
        row = [long.tasks[i], long.classes[class_index[best[i]]], f"{proba[i, best[i]]:.6g}"]
        if args.all_proba:
            row += [f"{p:.6g}" for p in proba[i]]
        writer.writerow(row)
    return 0


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

WORKER_REPORT_FILE = "worker_report.csv"
TASK_REPORT_FILE = "task_report.csv"


def _read_known(args, long):
    """Known label (class index, -1 unknown) of each task of ``long`` from ``--known``."""
    from .votes import _as_ints_if_possible

    columns = {"task": args.task_col, "label": args.label_col}
    values = _read_long_csv(args.known, columns, args.delimiter)
    tasks = np.asarray(values["task"])
    labels = _as_ints_if_possible(values["label"])
    if long.classes.dtype.kind in "iu" and labels.dtype.kind not in "iu":
        bad = next(v for v in values["label"] if not v.lstrip("+-").isdigit())
        raise CommandError(f"{args.known}: label {bad!r} is not an integer like the votes' labels.")
    known = np.full(len(long.tasks), -1, dtype=np.int64)
    row = {task: i for i, task in enumerate(long.tasks.tolist())}
    code = {label: k for k, label in enumerate(long.classes.tolist())}
    unvoted = 0
    for line, (task, label) in enumerate(zip(tasks.tolist(), labels.tolist()), start=2):
        if label not in code:
            raise CommandError(
                f"{args.known} line {line}: label {label!r} of task {task!r} is not among the "
                f"labels of the votes {long.classes.tolist()!r}."
            )
        i = row.get(task)
        if i is None:
            unvoted += 1
        elif known[i] >= 0 and known[i] != code[label]:
            raise CommandError(
                f"{args.known} line {line}: task {task!r} has two known labels, "
                f"{long.classes[known[i]].item()!r} and {label!r}."
            )
        else:
            known[i] = code[label]
    return known, unvoted


def _json_matrix(matrix):
    rows = [[None if np.isnan(x) else round(float(x), 6) for x in row] for row in matrix]
    return json.dumps(rows, separators=(",", ":"))


def _csv_value(value):
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else f"{value:.6g}"
    if value is None or value is getattr(sys.modules.get("pandas"), "NA", None):
        return ""
    return value.item() if isinstance(value, np.generic) else value


def _write_frame(frame, path, index_name):
    """Write a report DataFrame as CSV (index first, NaN and <NA> as empty cells)."""
    try:
        with open(path, "w", newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow([index_name, *frame.columns])
            for key, row in zip(frame.index.tolist(), frame.itertuples(index=False)):
                writer.writerow([key, *(_csv_value(v) for v in row)])
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _interval(result):
    return f"{result.estimate:6.3f}  [{result.low:.3f}, {result.high:.3f}]"


def _chosen(fitted):
    """The name of a fitted aggregator, with its choice for the selector."""
    name = type(fitted).__name__
    best = getattr(fitted, "best_estimator_", None)
    return name if best is None else f"{name} (chose {type(best).__name__})"


def report(args, out):
    from .metrics import fleiss_kappa, krippendorff_alpha
    from .quality import task_report, worker_report

    long, order = _read_votes(args)
    known, unvoted = (None, 0) if args.known is None else _read_known(args, long)
    fitted = _fitted_aggregator(args, long.votes)
    estimator = getattr(fitted, "best_estimator_", fitted)  # the selector's choice
    votes_per_task = (long.votes >= 0).sum(axis=1)
    n_votes = int(votes_per_task.sum())
    print(
        f"{args.votes}: {len(long.tasks)} tasks, {len(long.workers)} workers, "
        f"{len(long.classes)} classes, {n_votes} votes ({votes_per_task.min()} to "
        f"{votes_per_task.max()} per task).", file=out,
    )

    level = int(round(100 * args.confidence_level))
    print(f"\nAgreement between workers ({level} % bootstrap intervals, {args.n_resamples} "
          f"resamples of the tasks, seed {args.seed}):", file=out)
    options = dict(confidence_level=args.confidence_level, n_resamples=args.n_resamples,
                   random_state=args.seed)
    pairable = votes_per_task >= 2
    if long.classes.dtype.kind in "iu":  # ordinal and interval levels use the numbers
        rows, cols = np.nonzero(long.votes >= 0)
        valued = sp.csr_array((long.classes[long.votes[rows, cols]], (rows, cols)),
                              shape=long.votes.shape)
    elif args.level != "nominal":
        raise CommandError(f"--level {args.level} needs integer labels; the labels are "
                           f"{long.classes.tolist()[:5]!r}.")
    else:
        valued = long.votes
    for name, compute in (
        (f"Krippendorff's alpha ({args.level})",
         lambda: krippendorff_alpha(valued, level_of_measurement=args.level, **options)),
        ("Fleiss' kappa", lambda: fleiss_kappa(long.votes, **options)),
    ):
        try:
            text = _interval(compute())
        except ValueError as exc:
            text = f"undefined: {exc}"
        print(f"  {name:<32} {text}", file=out)
    print(f"  ({int(votes_per_task[pairable].sum())} pairable votes on {int(pairable.sum())} "
          "tasks with two votes or more)", file=out)

    try:
        workers = worker_report(estimator, long, known=known,
                                confidence_level=args.confidence_level)
        tasks = task_report(estimator, long, known=known)
    except (ValueError, TypeError) as exc:
        raise CommandError(str(exc)) from exc
    labels = long.classes[np.asarray(estimator.classes_)]
    tasks["label"] = long.classes[tasks["label"].to_numpy()]
    summary = f"\nAggregated with {_chosen(fitted)}"
    if known is not None:
        is_known = known >= 0
        tasks["known"] = np.where(is_known, long.classes[np.maximum(known, 0)], None)
        n_known = int(is_known.sum())
        correct = tasks["correct"].to_numpy(dtype=bool, na_value=False)
        summary += (f": accuracy on the {n_known} known tasks "
                    f"{correct.sum() / max(n_known, 1):.3f}"
                    + (f" ({unvoted} known tasks without votes left out)" if unvoted else ""))
    print(summary + ".", file=out)
    workers = workers.sort_values("review_rank")

    top = workers.head(args.top)
    print(f"\nWorkers to review (first {len(top)} of {len(workers)}; spammer score of "
          "Raykar & Yu 2012, 0 = random answers):", file=out)
    width = max([6, *(len(str(w)) for w in top.index)])
    print(f"{'rank':>4}  {'worker':<{width}}  {'votes':>5}  {'accuracy':>8}  "
          f"{f'[{level} % interval]':>16}  {'agreement':>9}  {'spammer score':>13}  "
          "below chance", file=out)
    for worker, row in top.iterrows():
        interval = f"[{row.accuracy_low:.2f}, {row.accuracy_high:.2f}]"
        print(f"{row.review_rank:>4}  {str(worker):<{width}}  {row.n_votes:>5}  "
              f"{row.accuracy:>8.3f}  {interval:>16}  {row.agreement:>9.3f}  "
              f"{row.spammer_score:>13.3f}  {'yes' if row.below_chance else 'no'}", file=out)

    workers["confusion_matrix"] = [_json_matrix(m) for m in workers["confusion_matrix"]]
    os.makedirs(args.output_dir, exist_ok=True)
    worker_path = os.path.join(args.output_dir, WORKER_REPORT_FILE)
    task_path = os.path.join(args.output_dir, TASK_REPORT_FILE)
    _write_frame(workers, worker_path, "worker")
    _write_frame(tasks.iloc[order], task_path, "task")
    print(f"\nWrote {worker_path} ({len(workers)} workers, in review order; confusion matrices "
          f"as JSON, rows the true class in the order {labels.tolist()!r}) and {task_path} "
          f"({len(tasks)} tasks).", file=out)
    return 0


# ---------------------------------------------------------------------------
# fetch
# ---------------------------------------------------------------------------


def fetch(args, out):
    from .datasets import dataset_folder, list_crowd_datasets

    if args.list:
        columns = ["name", "tasks", "workers", "classes", "votes", "gold", "same_crowd_as"]
        out.write(list_crowd_datasets()[columns].to_string(index=False) + "\n")
        return 0
    if not args.names:
        raise CommandError("name at least one dataset (see --list).")
    for name in args.names:
        try:
            folder = dataset_folder(name, data_home=args.data_home)
        except (ValueError, OSError, ImportError) as exc:
            raise CommandError(str(exc)) from exc
        out.write(f"{folder}\n")
    return 0


def _add_method_arguments(parser, what):
    """``--method``, ``--param`` and ``--duplicates`` of a command that fits an aggregator."""
    parser.add_argument(
        "--method", type=_method, default="DawidSkene", metavar="METHOD",
        help=f"{what} (default ds)",
    )
    parser.add_argument(
        "--param", type=_parse_param, action="append", default=[], metavar="NAME=VALUE",
        help="a parameter of the method (repeatable), e.g. --param tol=1e-6; the value is read "
        "as a Python literal (1e-6, 3, True, None, 'a', [1, 2]) where it parses, else as a "
        "string. A method with a random_state gets random_state=0 unless given one",
    )
    parser.add_argument(
        "--duplicates", choices=["raise", "first", "last"], default="raise",
        help="a worker's repeated votes on a task: an error, or keep the first or the last "
        "row in file order (default raise)",
    )


# ---------------------------------------------------------------------------
# pairwise
# ---------------------------------------------------------------------------

#: --method of ``pairwise``: the pairwise model of each name.
PAIRWISE_MODELS = {"bt": "BradleyTerry", "nbt": "NoisyBradleyTerry", "crowdbt": "CrowdBT"}


def pairwise(args, out):
    """Scores with intervals of the items of a comparisons CSV (and the pairs to compare next)."""
    import pandas as pd

    try:
        frame = pd.read_csv(sys.stdin if args.comparisons == "-" else args.comparisons,
                            dtype=str, keep_default_na=False, sep=args.delimiter)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise CommandError(f"cannot read {args.comparisons}: {exc}") from exc
    frame.columns = frame.columns.str.strip()
    params = dict(args.param)
    if args.tie_label is not None:
        params["tie_label"] = args.tie_label
    try:
        model = _skcrowd_estimator(PAIRWISE_MODELS[args.method], **params)().fit(frame)
    except (TypeError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    tables = [(model.score_intervals(alpha=1 - args.confidence_level), args.output, "item")]
    if args.next_pairs:
        tables.append((model.next_pairs(args.n_next).set_index("left"), args.next_pairs, "left"))
    for table, path, index_label in tables:
        try:
            table.to_csv(out if path == "-" else path, index_label=index_label,
                         float_format="%.6g", lineterminator="\n")
        except OSError as exc:
            raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return 0


def _add_pairwise_parser(sub):
    p_pair = sub.add_parser(
        "pairwise",
        help="score the items of a CSV of pairwise comparisons, with intervals",
        description=(
            "Read pairwise comparisons (one row per comparison: worker (optional), left, right, "
            "label = the preferred item), fit a pairwise model and write a CSV with columns "
            "item,score,lower,upper (log-scores, higher = preferred, with Laplace intervals), "
            "best item first. Ids are read as strings."
        ),
        epilog="example: python -m skcrowd pairwise comparisons.csv --method crowdbt -o "
               "scores.csv --next-pairs next.csv",
    )
    p_pair.add_argument("comparisons", metavar="COMPARISONS.csv",
                        help="comparisons CSV with a header row ('-': stdin)")
    p_pair.add_argument(
        "--method", choices=sorted(PAIRWISE_MODELS), default="bt",
        help="bt: Bradley-Terry, nbt: noisy Bradley-Terry, crowdbt: Crowd-BT (default bt)")
    p_pair.add_argument("-o", "--output", default="-", help="output CSV (default: stdout)")
    p_pair.add_argument("--delimiter", default=",", help="field delimiter (default ',')")
    p_pair.add_argument("--tie-label", help="label of a tie (bt only; default: no ties)")
    p_pair.add_argument("--confidence-level", type=float, default=0.95,
                        help="level of the intervals (default 0.95)")
    p_pair.add_argument("--next-pairs", metavar="NEXT.csv",
                        help="also write the pairs to compare next (left,right,gain)")
    p_pair.add_argument("--n-next", type=int, default=10,
                        help="number of pairs in --next-pairs (default 10)")
    p_pair.add_argument(
        "--param", type=_parse_param, action="append", default=[], metavar="NAME=VALUE",
        help="any parameter of the model (repeatable), e.g. --param prior_strength=0.5")
    p_pair.set_defaults(handler=pairwise)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m skcrowd",
        description="skcrowd: learning from crowdsourced labels.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p_demo = sub.add_parser(
        "demo", formatter_class=_MethodsHelpFormatter,
        help="simulate a crowd on scikit-learn's digits and compare the aggregators",
        description=(
            "Simulate 50 workers (accuracies 0.5-0.95, look-alike digit confusions, spammers, "
            "adversarial workers) labelling scikit-learn's digits with 3-5 votes per task, "
            "aggregate the votes with every method and print accuracy, expected calibration "
            "error and fit time against the simulated truth."
        ),
    )
    p_demo.add_argument("--seed", type=int, default=0, help="random seed of the crowd (default 0)")
    p_demo.add_argument(
        "--method", type=_method, action="append", metavar="METHOD",
        help="compare this method (repeatable) instead of majority vote, Dawid-Skene, weighted "
        "Dawid-Skene and GLAD",
    )
    p_demo.set_defaults(handler=demo)

    p_agg = sub.add_parser(
        "aggregate", formatter_class=_MethodsHelpFormatter,
        help="aggregate a long-format votes CSV into one label per task",
        description=(
            "Read votes in long format (one row per vote: task, worker, label), aggregate them "
            "and write a CSV with columns task,label,proba, one row per task in order of first "
            "appearance: label is the most probable class (the first label in sorted order on "
            "ties) and proba its probability. Ids and labels are read as strings; labels are "
            "integers (and sorted as numbers) when every label parses as an integer."
        ),
        epilog=(
            "examples: python -m skcrowd aggregate votes.csv --method ds -o labels.csv "
            "--proba --max-iter 50 --param tol=1e-6; python -m skcrowd aggregate votes.csv "
            "--method auto --duplicates first"
        ),
    )
    p_agg.add_argument(
        "votes", metavar="VOTES.csv", help="votes CSV with a header row ('-': stdin)"
    )
    _add_method_arguments(p_agg, "the aggregator")
    p_agg.add_argument("-o", "--output", default="-", help="output CSV (default: stdout)")
    p_agg.add_argument("--task-col", default="task", help="task id column (default 'task')")
    p_agg.add_argument("--worker-col", default="worker", help="worker id column (default 'worker')")
    p_agg.add_argument("--label-col", default="label", help="label column (default 'label')")
    p_agg.add_argument("--delimiter", default=",", help="field delimiter (default ',')")
    p_agg.add_argument(
        "--proba", "--all-proba", action="store_true", dest="all_proba",
        help="add one column proba_<label> per class with the aggregated probabilities",
    )
    p_agg.add_argument(
        "--max-iter", type=int,
        help="maximum number of iterations of the method (--param max_iter=N)",
    )
    p_agg.add_argument(
        "--smoothing", type=float,
        help="the method's smoothing (--param smoothing=X): of the confusion counts for ds "
        "and wds",
    )
    p_agg.set_defaults(handler=aggregate)

    p_rep = sub.add_parser(
        "report", formatter_class=_MethodsHelpFormatter,
        help="write the worker and task quality reports of a votes CSV, print the agreement",
        description=(
            "Read votes in long format (one row per vote: task, worker, label), aggregate them, "
            "print Krippendorff's alpha and Fleiss' kappa between the workers with bootstrap "
            "intervals and the first workers to review, and write two CSV files: "
            f"{WORKER_REPORT_FILE} (one row per worker, in review order: votes, estimated "
            "accuracy and its interval, accuracy on known tasks, agreement with the aggregate, "
            "spammer score, confusion matrix as JSON) and "
            f"{TASK_REPORT_FILE} (one row per task in order of first appearance: aggregated "
            "label, its probability, posterior entropy, agreement of the votes)."
        ),
        epilog="example: python -m skcrowd report votes.csv --known gold.csv -o reports/",
    )
    p_rep.add_argument(
        "votes", metavar="VOTES.csv", help="votes CSV with a header row ('-': stdin)"
    )
    p_rep.add_argument(
        "--known", metavar="GOLD.csv",
        help="CSV of known labels (control tasks), columns named like the votes' task and "
        "label columns; adds the accuracy of each worker on them",
    )
    _add_method_arguments(p_rep, "the aggregator whose worker model and posteriors make the "
                          "reports (with auto, the one the selector chose)")
    p_rep.add_argument("-o", "--output-dir", default=".",
                       help="folder of the two report files (default: the current folder)")
    p_rep.add_argument("--task-col", default="task", help="task id column (default 'task')")
    p_rep.add_argument("--worker-col", default="worker", help="worker id column (default 'worker')")
    p_rep.add_argument("--label-col", default="label", help="label column (default 'label')")
    p_rep.add_argument("--delimiter", default=",", help="field delimiter (default ',')")
    p_rep.add_argument(
        "--level", choices=["nominal", "ordinal", "interval"], default="nominal",
        help="level of measurement of Krippendorff's alpha (ordinal and interval need "
        "integer labels; default nominal)",
    )
    p_rep.add_argument("--confidence-level", type=float, default=0.95,
                       help="level of the intervals (default 0.95)")
    p_rep.add_argument("--n-resamples", type=int, default=1000,
                       help="bootstrap resamples of the agreement intervals (default 1000)")
    p_rep.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    p_rep.add_argument("--top", type=int, default=10,
                       help="number of workers to review printed (default 10)")
    p_rep.set_defaults(handler=report)

    p_fetch = sub.add_parser(
        "fetch",
        help="write public crowds into folders of skcrowd's dataset layout",
        description=(
            "Fetch each named crowd of skcrowd.datasets.list_crowd_datasets() into "
            "DATA_HOME/<name>/ (downloaded from SKCROWD_DATASETS_URL, sha256-checked and "
            "converted on first use; read as is afterwards) and print one folder per line: a "
            "folder in skcrowd's layout (votes.csv, truth.csv, tasks.csv, ...) that scripts "
            "taking --data DIR read."
        ),
        epilog="example: python -m skcrowd fetch act_SP_amt snow2008_wsd --data-home crowds",
    )
    p_fetch.add_argument("names", nargs="*", metavar="NAME", help="dataset names")
    p_fetch.add_argument(
        "--data-home", help="folder of the datasets (default: SKCROWD_DATA or ~/skcrowd_data)"
    )
    p_fetch.add_argument("--list", action="store_true", help="list the crowds and their counts")
    p_fetch.set_defaults(handler=fetch)
    _add_pairwise_parser(sub)
    return parser


def main(argv=None):
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "aggregate" and args.output != "-":
            buffer = io.StringIO()
            status = args.handler(args, buffer)
            try:
                with open(args.output, "w", newline="") as f:
                    f.write(buffer.getvalue())
            except OSError as exc:
                raise CommandError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
            return status
        return args.handler(args, sys.stdout)
    except CommandError as exc:
        print(f"python -m skcrowd {args.command}: error: {exc}", file=sys.stderr)
        return 1
