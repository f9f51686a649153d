"""Batches of votes: ``partial_fit`` against a full refit on all the votes so far (issue 39).

Three studies, one per sub-command:

``crowds``
    Each real crowd with gold (``--data``; default every folder of ``../shared/data`` with a
    ``truth.csv``, cifar10n left out: its worker ids are unreliable) is cut into ``--batches``
    (10) batches of its tasks in task order (each task's votes with it; every batch spans all
    the crowd's columns, a worker not seen yet has no counts). Each model (``--models``: ds,
    onecoin, mace, bds, glad) streams the batches through ``partial_fit``; after the last batch its
    gold accuracy on every task (``predict`` re-reads them with the final worker models) is
    compared with a ``fit`` on all the votes; "at arrival" scores each task with the model of
    its own batch's end. Ties of the posterior get fractional credit. Times: all the
    ``partial_fit`` calls against one refit. ``--window`` sets the models' ``window`` (votes
    per worker kept and re-read; 0: none), default theirs.
``stream``
    A simulated stream (``--workers`` workers, K=``--classes``, ``--votes-per-task`` votes per
    task, ``--batch-votes`` votes per batch, ``--n-batches`` batches: 100 x 1e5 = 1e7 votes by
    default) whose workers drift: a third of them lose accuracy linearly over the stream (from
    their start to 1/K + 0.05). Each batch is simulated, then given to
    ``DawidSkene(half_life=...)`` (``--half-life``, votes per worker; 0: None, no forgetting);
    the table gives the seconds of each ``partial_fit`` (simulation excluded),
    the accuracy of the batch at arrival, and, at ``--refit-at`` batches, the accuracy of a
    ``fit`` on all the votes so far on the same batch, and its time. ``--crowdkit PYTHON``
    times crowd-kit's DawidSkene refit at the same points (it has no partial_fit), in that
    interpreter, up to ``--crowdkit-max-votes`` votes. ``--window`` as for ``crowds``; the
    last line gives the votes kept and the process's peak memory (``--refit-at`` with no
    batch: the stream's alone).
``drift``
    Chooses ``half_life``'s default: a grid of half-lives (votes per worker; 0 stands for
    None, no forgetting) on simulated drift settings (``--choose``), scored as the mean at-arrival
    accuracy over the stream; the choice (the best mean over the choosing settings, ties to the
    longer) is then scored on the other settings (``--check``), on the check settings cut in
    batches half as large (the same half-life should do as well), and on the real crowds in
    task order (no drift known: what forgetting costs there).

Usage::

    python benchmarks/online.py crowds
    python benchmarks/online.py crowds --models ds --data ../shared/data/labelme
    python benchmarks/online.py crowds --window 50
    python benchmarks/online.py stream --n-batches 100 --refit-at 1 10 50 100
    python benchmarks/online.py stream --crowdkit /path/to/venv/bin/python
    python benchmarks/online.py drift
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from realdata import default_folders, read_folder, tie_credit  # noqa: E402

MODELS = {"ds": "DawidSkene", "onecoin": "OneCoinDawidSkene", "mace": "MACE",
          "bds": "BayesianDawidSkene", "glad": "GLAD"}


def model_class(key):
    import skcrowd.aggregation as agg

    return getattr(agg, MODELS[key])


# ---------------------------------------------------------------------------
# (a) real crowds in task order
# ---------------------------------------------------------------------------


def crowd_matrix(crowd):
    """The crowd's votes as a sparse (tasks x workers) matrix, stored entries are votes."""
    return sp.csr_matrix((crowd.label, (crowd.task, crowd.worker)),
                         shape=(crowd.n_tasks, crowd.n_workers))


def gold_score(proba, crowd, rows=None):
    """Tie-credited gold accuracy of the soft labels ``proba`` of the tasks ``rows``."""
    rows = np.arange(crowd.n_tasks) if rows is None else rows
    position = np.full(crowd.n_tasks, -1)
    position[rows] = np.arange(len(rows))
    keep = position[crowd.gold_task] >= 0
    return tie_credit(proba[position[crowd.gold_task[keep]]], crowd.gold_label[keep])


def stream_crowd(crowd, model, n_batches):
    """``partial_fit`` over the crowd's tasks in order: (final soft labels of every task,
    at-arrival soft labels, seconds of all the calls)."""
    votes = crowd_matrix(crowd)
    arrival = np.zeros((crowd.n_tasks, crowd.n_classes))
    seconds = 0.0
    for rows in np.array_split(np.arange(crowd.n_tasks), n_batches):
        batch = votes[rows]
        start = time.perf_counter()
        model.partial_fit(batch, classes=np.arange(crowd.n_classes))
        seconds += time.perf_counter() - start
        arrival[rows] = model.predict_proba(batch)
    return model.predict_proba(votes), arrival, seconds


def window(args):
    """The keyword of ``--window`` (votes per worker; 0: None, no window), none without it (the
    model's default)."""
    return {} if args.window is None else {"window": args.window or None}


def run_crowds(args):
    folders = args.data or [f for f in default_folders() if Path(f).name != "cifar10n"]
    warnings.simplefilter("ignore")
    for key in args.models:  # compile and load every kernel once
        model_class(key)().partial_fit(np.array([[0, 1], [1, 1]]))
    rows, results = [], []
    for folder in folders:
        crowd = read_folder(folder)
        for key in args.models:
            cls = model_class(key)
            final, arrival, seconds = stream_crowd(crowd, cls(random_state=0, **window(args)),
                                                   args.batches)
            start = time.perf_counter()
            refit = cls(random_state=0, n_classes=crowd.n_classes).fit(crowd_matrix(crowd))
            refit_seconds = time.perf_counter() - start
            result = {"crowd": crowd.name, "model": MODELS[key],
                      "refit": gold_score(refit.predict_proba(crowd_matrix(crowd)), crowd),
                      "stream": gold_score(final, crowd), "arrival": gold_score(arrival, crowd),
                      "stream_s": seconds, "refit_s": refit_seconds}
            results.append(result)
            rows.append(result)
            print(f"{crowd.name[:38]:38s} {MODELS[key]:18s} refit {result['refit']:.4f} "
                  f"stream {result['stream']:.4f} ({result['stream'] - result['refit']:+.4f}) "
                  f"arrival {result['arrival']:.4f}  {seconds:6.2f} s vs {refit_seconds:6.2f} s",
                  flush=True)
    print("\nmean over the crowds: model, refit, stream (final), gap, worst gap, at arrival")
    for key in args.models:
        mine = [r for r in rows if r["model"] == MODELS[key]]
        gaps = [r["stream"] - r["refit"] for r in mine]
        print(f"| {MODELS[key]} | {np.mean([r['refit'] for r in mine]):.4f} | "
              f"{np.mean([r['stream'] for r in mine]):.4f} | {np.mean(gaps):+.4f} | "
              f"{min(gaps):+.4f} ({mine[int(np.argmin(gaps))]['crowd']}) | "
              f"{np.mean([r['arrival'] for r in mine]):.4f} |")
    return results


# ---------------------------------------------------------------------------
# (b) a simulated stream with drifting workers
# ---------------------------------------------------------------------------


def drifting_stream(n_workers, n_classes, votes_per_task, batch_votes, n_batches, seed,
                    drifting=1 / 3, low=None):
    """Yield ``(votes (sparse), y)`` batches: workers of accuracy U(0.55, 0.95), a share
    ``drifting`` of whom fall linearly to ``low`` (default 1/K + 0.05) over the stream."""
    from skcrowd.datasets import simulate_annotators

    rng = np.random.default_rng(seed)
    start = rng.uniform(0.55, 0.95, n_workers)
    low = 1.0 / n_classes + 0.05 if low is None else low
    drifts = rng.random(n_workers) < drifting
    n_tasks = batch_votes // votes_per_task
    for b in range(n_batches):
        share = b / max(n_batches - 1, 1)
        accuracy = np.where(drifts, (1 - share) * start + share * low, start)
        y = rng.integers(n_classes, size=n_tasks)
        votes = simulate_annotators(y, n_workers, n_classes=n_classes, accuracy=accuracy,
                                    votes_per_task=votes_per_task, output="sparse",
                                    random_state=int(rng.integers(2**31))).votes
        yield votes, y


def run_stream(args):
    from skcrowd.aggregation import DawidSkene

    warnings.simplefilter("ignore")
    DawidSkene().partial_fit(np.array([[0, 1], [1, 1]]))  # compile and load the kernels
    model = DawidSkene(half_life=args.half_life or None, **window(args))
    history, results = [], []
    print(f"{'batch':>5s} {'votes so far':>12s} {'partial_fit s':>13s} {'acc at arrival':>14s} "
          f"{'refit acc':>9s} {'refit s':>8s} {'crowd-kit refit s':>17s}")
    stream = drifting_stream(args.workers, args.classes, args.votes_per_task, args.batch_votes,
                             args.n_batches, args.seed)
    n_votes = 0
    for b, (votes, y) in enumerate(stream, start=1):
        start = time.perf_counter()
        model.partial_fit(votes, classes=np.arange(args.classes))
        seconds = time.perf_counter() - start
        accuracy = float(np.mean(model.predict(votes) == y))
        n_votes += votes.nnz
        result = {"batch": b, "votes": n_votes, "seconds": seconds, "accuracy": accuracy,
                  "n_iter": model.n_iter_}
        if b in args.refit_at:
            history.append(votes.tocoo())
            everything = _stack(history, args.workers)
            start = time.perf_counter()
            refit = DawidSkene(n_classes=args.classes).fit(everything)
            result["refit_s"] = time.perf_counter() - start
            result["refit_accuracy"] = float(np.mean(refit.predict(votes) == y))
            if args.crowdkit and n_votes <= args.crowdkit_max_votes:
                result["crowdkit_s"] = crowdkit_refit_seconds(args.crowdkit, everything)
        elif args.refit_at and b < max(args.refit_at):
            history.append(votes.tocoo())  # kept by the benchmark only, for the refits
        results.append(result)
        if b in args.refit_at or b in (1, 2, 5) or b % 10 == 0:
            print(f"{b:5d} {n_votes:12.3g} {seconds:13.3f} {accuracy:14.4f} "
                  f"{result.get('refit_accuracy', float('nan')):9.4f} "
                  f"{result.get('refit_s', float('nan')):8.2f} "
                  f"{result.get('crowdkit_s', float('nan')):17.2f}", flush=True)
    times = np.array([r["seconds"] for r in results])
    tenth = max(len(times) // 10, 1)
    print(f"partial_fit seconds: first tenth of the batches {times[:tenth].mean():.3f}, "
          f"last tenth {times[-tenth:].mean():.3f}; mean iterations "
          f"{np.mean([r['n_iter'] for r in results]):.1f}; votes kept after the last batch "
          f"{sum(v.n_votes for v, *_ in model._window.batches):.3g} (window "
          f"{model.window} x {model.n_features_in_} workers); peak memory of the process "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GB")
    return results


def _stack(parts, n_workers):
    """The votes of several batches as one (tasks x workers) matrix."""
    offset, rows, cols, data = 0, [], [], []
    for part in parts:
        rows.append(part.row + offset)
        cols.append(part.col)
        data.append(part.data)
        offset += part.shape[0]
    return sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(offset, n_workers))


def crowdkit_refit_seconds(python, votes):
    """Seconds of crowd-kit's DawidSkene fit on ``votes`` (a child process; import excluded)."""
    from _competitors import run_json_child

    coo = votes.tocoo()
    with tempfile.TemporaryDirectory(prefix="skcrowd-online-") as tmp:
        path = Path(tmp) / "votes.npz"
        np.savez(path, task=coo.row, worker=coo.col, label=coo.data)
        out = run_json_child([python, str(Path(__file__).resolve()), "crowdkit-child",
                              str(path)], timeout=1800)
    return out.get("seconds", float("nan"))


def crowdkit_child(path):
    warnings.simplefilter("ignore")
    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    data = np.load(path)
    frame = pd.DataFrame({"task": data["task"], "worker": data["worker"], "label": data["label"]})
    start = time.perf_counter()
    DawidSkene(n_iter=100).fit(frame)
    print(json.dumps({"seconds": time.perf_counter() - start}))


# ---------------------------------------------------------------------------
# (c) choosing the half-life
# ---------------------------------------------------------------------------

# drift settings: (name, workers, classes, votes per task, votes per batch, batches, drifting
# share, accuracy the drifting workers fall to (None: 1/K + 0.05))
SETTINGS = {
    "slow-K2": (200, 2, 3, 3000, 40, 1 / 3, None),
    "slow-K5": (300, 5, 3, 6000, 40, 1 / 3, None),
    "half-adversarial-K3": (200, 3, 5, 6000, 40, 0.5, 0.1),
    "none-K4": (200, 4, 3, 6000, 40, 0.0, None),
    "fast-K3": (100, 3, 3, 3000, 60, 0.5, 0.15),
    "few-drift-K5": (300, 5, 5, 6000, 40, 0.15, None),
    "none-K2": (150, 2, 5, 3000, 40, 0.0, None),
}


def mean_arrival_accuracy(setting, half_life, seed, split=1):
    """Mean at-arrival accuracy over the stream; ``split``: batches that many times smaller
    (the same votes)."""
    from skcrowd.aggregation import DawidSkene

    n_workers, K, per_task, batch_votes, n_batches, drifting, low = SETTINGS[setting]
    model = DawidSkene(half_life=half_life or None)
    scores = []
    for votes, y in drifting_stream(n_workers, K, per_task, batch_votes, n_batches, seed,
                                    drifting=drifting, low=low):
        for rows in np.array_split(np.arange(len(y)), split):
            model.partial_fit(votes[rows], classes=np.arange(K))
            scores.append(np.mean(model.predict(votes[rows]) == y[rows]))
    return float(np.mean(scores))


def run_drift(args):
    warnings.simplefilter("ignore")
    table = {}
    for setting in [*args.choose, *args.check]:
        table[setting] = {f: np.mean([mean_arrival_accuracy(setting, f, seed)
                                      for seed in range(args.seeds)]) for f in args.grid}
        print(f"{setting:22s} " + " ".join(f"{f:g}:{a:.4f}" for f, a in table[setting].items()),
              flush=True)
    chosen = max(args.grid, key=lambda f: (np.mean([table[s][f] for s in args.choose]),
                                           f == 0, f))
    print(f"\nchosen on {', '.join(args.choose)}: half_life={chosen:g}")
    print("| setting | no forgetting | chosen | gain | chosen, batches halved |")
    halved = {}
    for setting in args.check:
        base, mine = table[setting][0.0], table[setting][chosen]
        halved[setting] = np.mean([mean_arrival_accuracy(setting, chosen, seed, split=2)
                                   for seed in range(args.seeds)])
        print(f"| {setting} (held out) | {base:.4f} | {mine:.4f} | {mine - base:+.4f} | "
              f"{halved[setting]:.4f} |", flush=True)
    results = {"table": {s: {str(f): a for f, a in row.items()} for s, row in table.items()},
               "chosen": chosen, "halved": halved, "crowds": []}
    if args.crowds:
        print("\nreal crowds in task order (10 batches), DawidSkene at arrival / final:")
        folders = [f for f in default_folders() if Path(f).name != "cifar10n"]
        from skcrowd.aggregation import DawidSkene

        for folder in folders:
            crowd = read_folder(folder)
            row = {"crowd": crowd.name}
            for f in (0.0, chosen):
                final, arrival, _ = stream_crowd(crowd, DawidSkene(half_life=f or None), 10)
                row[f"arrival_{f:g}"] = gold_score(arrival, crowd)
                row[f"final_{f:g}"] = gold_score(final, crowd)
            results["crowds"].append(row)
            print(f"{crowd.name[:38]:38s} " + " ".join(f"{k} {v:.4f}" for k, v in row.items()
                                                       if k != "crowd"), flush=True)
        for kind in ("arrival", "final"):
            gaps = [r[f"{kind}_{chosen:g}"] - r[f"{kind}_0"] for r in results["crowds"]]
            print(f"{kind}: mean change {np.mean(gaps):+.4f}, worst {min(gaps):+.4f}")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="study", required=True)
    crowds = sub.add_parser("crowds")
    crowds.add_argument("--data", nargs="+")
    crowds.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    crowds.add_argument("--batches", type=int, default=10)
    crowds.add_argument("--window", type=float, default=None,
                        help="votes per worker kept (0: none); default: the model's")
    stream = sub.add_parser("stream")
    stream.add_argument("--workers", type=int, default=1000)
    stream.add_argument("--classes", type=int, default=5)
    stream.add_argument("--votes-per-task", type=int, default=5)
    stream.add_argument("--batch-votes", type=int, default=100_000)
    stream.add_argument("--n-batches", type=int, default=100)
    stream.add_argument("--refit-at", type=int, nargs="*", default=[1, 10, 50, 100])
    stream.add_argument("--half-life", type=float, default=None)
    stream.add_argument("--seed", type=int, default=0)
    stream.add_argument("--window", type=float, default=None,
                        help="votes per worker kept (0: none); default: DawidSkene's")
    stream.add_argument("--crowdkit")
    stream.add_argument("--crowdkit-max-votes", type=float, default=2e6,
                        help="crowd-kit refits only up to this many votes (1e7: minutes)")
    drift = sub.add_parser("drift")
    drift.add_argument("--choose", nargs="+",
                       default=["slow-K2", "half-adversarial-K3", "none-K4", "few-drift-K5"])
    drift.add_argument("--check", nargs="+", default=["slow-K5", "fast-K3", "none-K2"])
    drift.add_argument("--grid", type=float, nargs="+",
                       default=[0, 25, 50, 100, 250, 500, 1000])
    drift.add_argument("--seeds", type=int, default=2)
    drift.add_argument("--crowds", action="store_true",
                       help="also score the choice on the real crowds in task order")
    child = sub.add_parser("crowdkit-child")
    child.add_argument("path")
    for p in (crowds, stream, drift):
        p.add_argument("--json")
    args = parser.parse_args(argv)
    if args.study == "crowdkit-child":
        return crowdkit_child(args.path)
    if args.study == "stream" and args.half_life is None:
        from skcrowd.aggregation import DawidSkene

        args.half_life = DawidSkene().half_life
    results = {"crowds": run_crowds, "stream": run_stream, "drift": run_drift}[args.study](args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
