"""Worker reports against the truth: simulated crowds with known workers, real crowds with gold.

**Simulated crowds** (``skcrowd.datasets.simulate_annotators``; regimes below, ``--seeds``
seeds each): for each aggregator, :func:`skcrowd.quality.worker_report` is compared with the
simulated workers:

- ``acc MAE``: mean absolute error of the estimated ``accuracy`` against each worker's true
  probability of a right vote on the tasks they answered (their confusion matrix weighted by
  the true classes of their tasks); ``cover``: share of workers whose 95 % interval
  (``accuracy_low``, ``accuracy_high``) contains it;
- ``spam AUC``: area under the ROC curve of the spammer score separating the spammers (lower
  score) from the regular workers (1 = every spammer below every regular worker);
- ``review P``: share of spammers and adversarial workers among the first ``n_bad`` workers
  of the review list (``review_rank``), ``n_bad`` their number.

**Real crowds** (``--data DIR [DIR ...]``, default every folder of ``../shared/data`` with a
``truth.csv``, cifar10n left out: its worker ids are unreliable): each worker's estimated
accuracy (from the votes alone) is compared with their accuracy on gold, for the workers with
at least ``--min-votes`` votes (default 20): ``acc MAE`` (weighted by votes), ``Spearman``
(rank correlation of the two), ``cover`` (share whose interval contains the gold accuracy),
and ``score rho``: the rank correlation of the spammer score with the spammer score of the
worker's confusion matrix counted against gold.

Usage::

    python benchmarks/quality.py
    python benchmarks/quality.py --seeds 5 --data ../shared/data/labelme
    python benchmarks/quality.py --no-real
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"

# name: (n_classes, n_workers, votes per task, n_tasks, spammers, adversarial, accuracy range)
REGIMES = {
    "K=3, 30 workers, 5 votes/task": (3, 30, 5, 1500, 0.1, 0.0, (0.5, 0.95)),
    "K=3, spammers and adversaries": (3, 30, 5, 600, 0.1, 0.1, (0.65, 0.95)),
    "K=2, 100 workers, 3 votes/task": (2, 100, 3, 1000, 0.2, 0.05, (0.6, 0.9)),
    "K=5, 50 workers, 3 votes/task": (5, 50, 3, 1000, 0.2, 0.0, (0.5, 0.9)),
    "K=4, sparse: 200 workers, 2-4 votes": (4, 200, (2, 4), 2000, 0.15, 0.0, (0.5, 0.95)),
}


def aggregators():
    from skcrowd.aggregation import GLAD, DawidSkene, MajorityVote, WeightedDawidSkene

    return {"DawidSkene": DawidSkene, "WeightedDawidSkene": WeightedDawidSkene, "GLAD": GLAD,
            "MajorityVote": MajorityVote}


def true_accuracy(votes, y, confusions):
    from skcrowd import check_votes

    v = check_votes(votes)
    mix = np.zeros((v.n_workers, confusions.shape[1]))
    np.add.at(mix, (v.worker, y[v.task]), 1.0)
    with np.errstate(invalid="ignore"):
        mix /= mix.sum(axis=1, keepdims=True)
    return np.einsum("jk,jkk->j", mix, confusions)


def simulated_table(args):
    from sklearn.metrics import roc_auc_score

    from skcrowd.datasets import simulate_annotators
    from skcrowd.quality import worker_report

    print(f"Simulated crowds, {args.seeds} seeds each (mean over seeds):")
    print(f"{'regime':<36} {'aggregator':<19} {'acc MAE':>7} {'cover':>6} {'spam AUC':>8} "
          f"{'review P':>8}")
    for regime, (K, W, vpt, n, spam, adv, acc) in REGIMES.items():
        rows = {name: [] for name in aggregators()}
        for seed in range(args.seeds):
            y = np.random.RandomState(seed).randint(K, size=n)
            crowd = simulate_annotators(y, W, n_classes=K, accuracy=acc, votes_per_task=vpt,
                                        spammers=spam, adversarial=adv, random_state=seed)
            truth = true_accuracy(crowd.votes, y, crowd.confusions)
            kinds = crowd.worker_type
            bad = np.isin(kinds, ["spammer", "adversarial"])
            scored = np.isin(kinds, ["spammer", "regular"])
            for name, model in aggregators().items():
                report = worker_report(model().fit(crowd.votes), crowd.votes)
                has = report["n_votes"].to_numpy() > 0
                est = report["accuracy"].to_numpy()
                covered = ((report["accuracy_low"] <= truth) & (truth <= report["accuracy_high"]))
                first = report["review_rank"].to_numpy() <= bad.sum()
                rows[name].append((
                    np.abs(est - truth)[has].mean(), covered[has].mean(),
                    roc_auc_score(kinds[scored] == "spammer",
                                  -np.nan_to_num(report["spammer_score"].to_numpy()[scored])),
                    (first & bad).sum() / max(bad.sum(), 1),
                ))
        for name, values in rows.items():
            mae, cover, auc, precision = np.mean(values, axis=0)
            print(f"{regime:<36} {name:<19} {mae:>7.3f} {cover:>6.2f} {auc:>8.3f} "
                  f"{precision:>8.2f}", flush=True)


def real_table(folders, args):
    from scipy.stats import spearmanr

    from skcrowd.datasets import load_crowd_dataset
    from skcrowd.quality import spammer_score, worker_report

    print(f"\nReal crowds, workers with at least {args.min_votes} votes (all on gold tasks):")
    print(f"{'dataset':<40} {'aggregator':<19} {'workers':>7} {'acc MAE':>7} {'Spearman':>8} "
          f"{'cover':>6} {'score rho':>9}")
    for folder in folders:
        data = load_crowd_dataset(folder, features=None, sparse=True)
        known = data.target
        for name, model in aggregators().items():
            fitted = model().fit(data.votes)
            report = worker_report(fitted, data.votes, known=known)
            keep = ((report["n_votes"] >= args.min_votes)
                    & (report["n_known"] == report["n_votes"])).to_numpy()
            if keep.sum() < 3:
                print(f"{folder.name:<40} {name:<19} {keep.sum():>7}  too few workers")
                break
            r = report[keep]
            gold = r["known_accuracy"].to_numpy()
            error = np.average(np.abs(r["accuracy"].to_numpy() - gold),
                               weights=r["n_votes"].to_numpy())
            cover = ((r["accuracy_low"] <= gold) & (gold <= r["accuracy_high"])).mean()
            gold_scores = spammer_score(_gold_confusions(data.votes, known, fitted)[keep])
            rho = spearmanr(r["spammer_score"], gold_scores, nan_policy="omit").statistic
            print(f"{folder.name:<40} {name:<19} {keep.sum():>7} {error:>7.3f} "
                  f"{spearmanr(r['accuracy'], gold).statistic:>8.3f} {cover:>6.2f} "
                  f"{rho:>9.3f}", flush=True)


def _gold_confusions(votes, known, fitted):
    """Each worker's confusion matrix counted against the gold labels (NaN rows: unseen)."""
    from skcrowd import check_votes

    v = check_votes(votes, classes=fitted.classes_)
    on_gold = known[v.task] >= 0
    K = len(fitted.classes_)
    counts = np.zeros((v.n_workers, K, K))
    np.add.at(counts, (v.worker[on_gold], known[v.task[on_gold]], v.label[on_gold]), 1.0)
    total = counts.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, counts / total, np.nan)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="+", type=Path, default=None)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--min-votes", type=int, default=20)
    parser.add_argument("--no-real", action="store_true")
    parser.add_argument("--no-simulated", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    warnings.simplefilter("ignore")  # ConvergenceWarning of the EM aggregators

    if not args.no_simulated:
        simulated_table(args)
    if not args.no_real:
        folders = args.data
        if folders is None:
            folders = sorted(p for p in DEFAULT_DATA.iterdir() if (p / "truth.csv").is_file()
                             and p.name != "cifar10n") if DEFAULT_DATA.is_dir() else []
        real_table(folders, args)


if __name__ == "__main__":
    main()
