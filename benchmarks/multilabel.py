"""Multi-label votes: one worker model shared by all labels against one aggregator per label.

Simulated crowds (no real multi-label crowd with gold is in ``../shared/data``), ``--seeds``
seeds per regime, 8 labels of prevalence 0.05 to 0.5, 30 workers of sensitivity and
specificity drawn in [0.55, 0.95]:

- ``sparse``: 150 tasks, 3 answers per task (15 answers per worker);
- ``dense``: 300 tasks, 7 answers per task;
- ``spammers``: 150 tasks, 3 answers per task, a third of the workers tick each label at random
  (probability 0.3, whatever the truth).

Accuracy is over every (task, label) bit against the truth. skcrowd's
:class:`~skcrowd.MultiLabelDawidSkene` (shared coins) and :class:`~skcrowd.BinaryRelevance`
with DawidSkene and MajorityVote are run here; crowd-kit 1.4.2's ``BinaryRelevance`` with the
same two aggregators runs in the competitor's interpreter (``--competitor-python``), on the same
votes (its long format: one row per task and worker, the ticked labels as a list).

Usage::

    python benchmarks/multilabel.py [--seeds 5] [--competitor-python VENV/bin/python]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skcrowd import BinaryRelevance, MultiLabelDawidSkene  # noqa: E402
from skcrowd.aggregation import DawidSkene, MajorityVote  # noqa: E402

N_WORKERS, N_LABELS = 30, 8
REGIMES = {"sparse": (150, 3, 0.0), "dense": (300, 7, 0.0), "spammers": (150, 3, 1 / 3)}


def simulate(regime, seed):
    """``(votes, truth)``: votes ``(n_tasks, N_WORKERS, N_LABELS)``, -1 where not answered."""
    n_tasks, per_task, spam_share = REGIMES[regime]
    rng = np.random.default_rng(seed)
    prevalence = np.linspace(0.05, 0.5, N_LABELS)
    truth = (rng.random((n_tasks, N_LABELS)) < prevalence).astype(int)
    sensitivity = rng.uniform(0.55, 0.95, N_WORKERS)
    specificity = rng.uniform(0.55, 0.95, N_WORKERS)
    spammer = np.arange(N_WORKERS) < round(spam_share * N_WORKERS)
    votes = np.full((n_tasks, N_WORKERS, N_LABELS), -1)
    for i in range(n_tasks):
        for j in rng.choice(N_WORKERS, per_task, replace=False):
            u = rng.random(N_LABELS)
            votes[i, j] = (u < 0.3) if spammer[j] else np.where(
                truth[i] == 1, u < sensitivity[j], u >= specificity[j])
    return votes, truth


def skcrowd_runs(votes, truth):
    models = {
        "skcrowd MultiLabelDawidSkene": MultiLabelDawidSkene(),
        "skcrowd BinaryRelevance(DawidSkene)": BinaryRelevance(DawidSkene()),
        "skcrowd BinaryRelevance(MajorityVote)": BinaryRelevance(MajorityVote(random_state=0)),
    }
    out = {}
    for name, model in models.items():
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            predicted = model.fit(votes).predict(votes)
        out[name] = (float(np.mean(predicted == truth)), time.perf_counter() - start)
    return out


def crowdkit_child(path):
    """crowd-kit's BinaryRelevance on the saved votes; one JSON line of results."""
    warnings.simplefilter("ignore")
    import pandas as pd
    from crowdkit.aggregation import BinaryRelevance as CK
    from crowdkit.aggregation import DawidSkene as CKDS
    from crowdkit.aggregation import MajorityVote as CKMV

    data = np.load(path)
    votes, truth = data["votes"], data["truth"]
    task, worker = np.nonzero(votes[:, :, 0] >= 0)
    ticked = [list(np.flatnonzero(votes[i, j])) for i, j in zip(task, worker)]
    frame = pd.DataFrame({"task": task, "worker": worker, "label": ticked})
    out = {}
    for name, base in (("DawidSkene", CKDS(n_iter=100)), ("MajorityVote", CKMV())):
        start = time.perf_counter()
        try:
            result = CK(base).fit_predict(frame)
            predicted = np.zeros_like(truth)
            for i, labels in result.items():
                predicted[int(i), [int(lab) for lab in labels]] = 1
            out[f"crowd-kit BinaryRelevance({name})"] = (float(np.mean(predicted == truth)),
                                                         time.perf_counter() - start)
        except Exception as exc:  # a competitor's failure is a result, not a crash
            out[f"crowd-kit BinaryRelevance({name})"] = f"{type(exc).__name__}: {exc}"[:100]
    print(json.dumps(out))


def crowdkit_runs(python, votes, truth):
    if not python or not Path(python).exists():
        return {}
    with tempfile.TemporaryDirectory(prefix="skcrowd-multilabel-") as tmp:
        path = Path(tmp) / "crowd.npz"
        np.savez(path, votes=votes, truth=truth)
        done = subprocess.run([python, str(Path(__file__).resolve()), "--crowdkit-child",
                               str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        return {"crowd-kit": (done.stderr.strip().splitlines() or ["failed"])[-1][:100]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    parser.add_argument("--crowdkit-child", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.crowdkit_child:
        crowdkit_child(args.crowdkit_child)
        return
    print(f"{'regime':9s} {'method':40s} {'accuracy (mean, min-max over seeds)':>36s} "
          f"{'seconds':>8s}")
    for regime in REGIMES:
        results = {}
        for seed in range(args.seeds):
            votes, truth = simulate(regime, seed)
            runs = {**skcrowd_runs(votes, truth),
                    **crowdkit_runs(args.competitor_python, votes, truth)}
            for name, value in runs.items():
                results.setdefault(name, []).append(value)
        for name, values in results.items():
            if any(isinstance(v, str) for v in values):
                print(f"{regime:9s} {name:40s} {next(v for v in values if isinstance(v, str))}")
                continue
            accuracy = np.array([v[0] for v in values])
            seconds = np.mean([v[1] for v in values])
            print(f"{regime:9s} {name:40s} {accuracy.mean():>12.4f} "
                  f"({accuracy.min():.4f}-{accuracy.max():.4f}) {seconds:>14.3f}")


if __name__ == "__main__":
    main()
