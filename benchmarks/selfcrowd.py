"""Self-Crowd on LabelMe: the experiments of figures 3 and 4 of Shi, Li & Huang (paper 003).

Data: ``../shared/data/labelme`` (1000 training images, 59 workers, 2547 votes, 8 classes;
512-d average-pooled VGG16 features, standardized on the training set; gold labels of the
1188 test images). Crowd model: :func:`skcrowd.selftraining.paper_crowd_model`, a
:class:`skcrowd.neural.CrowdLayerClassifier` with the paper's setup (MLP with 128 ReLU units and
dropout 0.5, "MW" crowd layer, Adam, learning rate 1e-3, L2 weight decay 5e-4, batch size 512,
25 epochs, no validation split), refitted from scratch in every self-training round.

(a) Figure 3: ``--fig3-iterations`` (default 10) rounds of ``--fig3-m`` (default 5000)
    pseudo-annotations for each selection rule (Self-Crowd, Self-Crowd_c, Self-Crowd_r),
    ``--fig3-repeats`` seeds (default 5). Printed per round: test accuracy, R of the
    pseudo-annotations selected so far and R of observed + selected (eq. 6). The paper adds
    10,000 per round for 14 rounds, which is more than the 56,453 unannotated (task, worker)
    pairs of LabelMe: without replacement at most 5 such rounds fit, so M is halved here to
    run 10 rounds (50,000 pairs, 89 % of the candidates).
(b) Figure 4: remove a fraction p in ``--fig4-p`` (default 0 0.3 0.5 0.7 0.9) of the observed
    votes uniformly at random, ``--fig4-repeats`` seeds (default 5), then 5 rounds of 10,000
    (the paper's setting) with ``--fig4-rules`` (default: distribution), once unchecked (the
    paper's loop, ``validation_fraction=None``) and once checked (the default: each round
    scored on 20 % held-out tasks, a round that lowers the score undone, then a refit on every
    task). "crowd layer" is the crowd model fitted on the remaining observed votes.

Figure 3 runs the paper's loop unchecked (``validation_fraction=None``). Test accuracy per round
comes from ``fit(..., X_val=X_test, y_val=y_test)``: it only fills ``history_``; nothing is selected
on it.

Usage::

    python benchmarks/selfcrowd.py                 # both parts, about 15 min on 2 shared cores
    python benchmarks/selfcrowd.py --quick         # 1 seed, fewer rounds and levels (about 2 min)
    python benchmarks/selfcrowd.py --part fig4 --fig4-rules distribution confidence random
    python benchmarks/selfcrowd.py --json results.json

Timings were taken on a shared 2-core machine (other engineers' jobs running at the same time).
torch runs with ``--threads`` (default 1) intra-op threads: on this loaded machine one crowd
layer fit took 15x longer with torch's default 2 threads than with 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
DATA = REPO / ".." / "shared" / "data" / "labelme"
RULES = ("distribution", "confidence", "random")
RULE_NAMES = {"distribution": "Self-Crowd", "confidence": "Self-Crowd_c", "random": "Self-Crowd_r"}


def load_labelme(root):
    """Standardized features, the votes matrix and the gold labels of LabelMe."""
    import pandas as pd
    from sklearn.preprocessing import StandardScaler

    long = pd.read_csv(root / "votes.csv")
    votes = np.full((long["task"].max() + 1, long["worker"].max() + 1), -1, dtype=np.int64)
    votes[long["task"], long["worker"]] = long["label"]
    scaler = StandardScaler().fit(np.load(root / "features_vgg16avg_train.npy"))
    features = {
        split: scaler.transform(np.load(root / f"features_vgg16avg_{split}.npy")).astype(
            np.float32
        )
        for split in ("train", "test")
    }
    return {
        "X": features["train"],
        "votes": votes,
        "truth": np.load(root / "labels_train.npy"),
        "X_test": features["test"],
        "y_test": np.load(root / "labels_test.npy"),
    }


def run_selfcrowd(data, votes, *, rule, n_iterations, m, seed, validation_fraction=None):
    """One Self-Crowd fit; its per-round and final test accuracy and imbalance ratios."""
    from skcrowd import SelfCrowdClassifier
    from skcrowd.selftraining import paper_crowd_model

    start = time.perf_counter()
    clf = SelfCrowdClassifier(
        paper_crowd_model(), n_iterations=n_iterations, n_pseudo=m, selection=rule,
        validation_fraction=validation_fraction, random_state=seed,
    ).fit(data["X"], votes, X_val=data["X_test"], y_val=data["y_test"])
    p = clf.pseudo_annotations_
    kept = [h for h in clf.history_ if not h["status"].startswith("undone")]
    return {
        "accuracy": [h["valid_accuracy"] for h in kept],
        "final_accuracy": float(np.mean(clf.predict(data["X_test"]) == data["y_test"])),
        "rounds_kept": clf.n_iter_,
        "r_selected": [h["imbalance_ratio_selected"] for h in kept],
        "r_combined": [h["imbalance_ratio_combined"] for h in kept],
        "pseudo_accuracy": float(np.mean(p["label"] == data["truth"][p["task"]]))
        if len(p["task"]) else None,
        "seconds": time.perf_counter() - start,
    }


def mean_sd(values):
    values = np.asarray([v for v in values if v is not None], dtype=float)
    if len(values) == 0:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{values.mean():.3f} ± {values.std(ddof=1):.3f}"


def fig3(data, args):
    from skcrowd.metrics import imbalance_ratio

    print(
        f"\n(a) Figure 3: {args.fig3_iterations} rounds of M = {args.fig3_m}, "
        f"{args.fig3_repeats} seed(s), test accuracy on {len(data['y_test'])} images"
    )
    print(
        f"    R of the gold training labels = {imbalance_ratio(data['truth']):.3f}, "
        f"R of the observed votes = {imbalance_ratio(data['votes']):.3f}"
    )
    runs = {rule: [] for rule in RULES}
    for rule in RULES:
        for seed in range(args.fig3_repeats):
            runs[rule].append(
                run_selfcrowd(data, data["votes"], rule=rule, n_iterations=args.fig3_iterations,
                              m=args.fig3_m, seed=seed)  # unchecked: the paper's loop
            )
    for key, title in (("accuracy", "test accuracy"), ("r_selected", "R of the selected"),
                       ("r_combined", "R of observed + selected")):
        print(f"\n  {title}")
        print("  round | " + " | ".join(f"{RULE_NAMES[r]:>15}" for r in RULES))
        for t in range(args.fig3_iterations + 1):
            cells = [mean_sd([run[key][t] for run in runs[r]]) for r in RULES]
            print(f"  {t:5d} | " + " | ".join(f"{c:>15}" for c in cells))
    print("\n  accuracy of all pseudo-annotations against the gold labels, and seconds per run")
    for rule in RULES:
        print(
            f"  {RULE_NAMES[rule]:>12}: {mean_sd([r['pseudo_accuracy'] for r in runs[rule]])}, "
            f"{np.mean([r['seconds'] for r in runs[rule]]):.0f} s"
        )
    return runs


def remove_votes(votes, p, rng):
    """A copy of ``votes`` without a random fraction ``p`` of its observed entries."""
    out = votes.copy()
    observed = np.flatnonzero(votes.ravel() >= 0)
    drop = rng.choice(observed, size=int(round(p * len(observed))), replace=False)
    out.ravel()[drop] = -1
    return out


def fig4(data, args):
    print(
        f"\n(b) Figure 4: remove p of the {int((data['votes'] >= 0).sum())} observed votes, "
        f"{args.fig4_repeats} seed(s); {args.fig4_iterations} rounds of M = {args.fig4_m}; "
        "test accuracy of the final model. 'crowd layer': the crowd model fitted on the votes "
        "left; 'unchecked': the paper's loop (validation_fraction=None); 'checked': the "
        "default, rounds checked on 20 % held-out tasks, then refitted on every task "
        "(in brackets: rounds kept)"
    )
    rules = args.fig4_rules
    print("      p | votes | crowd layer     | "
          + " | ".join(f"{RULE_NAMES[r] + ' unchecked':>24} | {RULE_NAMES[r] + ' checked':>24}"
                       for r in rules))
    results = {}
    for p in args.fig4_p:
        runs = {(rule, check): [] for rule in rules for check in (None, 0.2)}
        base, n_votes = [], []
        for seed in range(args.fig4_repeats):
            votes = remove_votes(data["votes"], p, np.random.RandomState(1000 + seed))
            n_votes.append(int((votes >= 0).sum()))
            base.append(run_selfcrowd(data, votes, rule=rules[0], n_iterations=0, m=1,
                                      seed=seed)["final_accuracy"])
            for rule, check in runs:
                runs[rule, check].append(
                    run_selfcrowd(data, votes, rule=rule, n_iterations=args.fig4_iterations,
                                  m=args.fig4_m, seed=seed, validation_fraction=check)
                )
        cells = []
        for rule in rules:
            unchecked, checked = runs[rule, None], runs[rule, 0.2]
            cells.append(f"{mean_sd([r['final_accuracy'] for r in unchecked]):>24}")
            kept = np.mean([r["rounds_kept"] for r in checked])
            checked_cell = f"{mean_sd([r['final_accuracy'] for r in checked])} ({kept:.1f})"
            cells.append(f"{checked_cell:>24}")
        print(f"  {p:5.1f} | {int(np.mean(n_votes)):5d} | {mean_sd(base):>15} | "
              + " | ".join(cells), flush=True)
        results[p] = {"crowd layer": base,
                      **{f"{rule} {'checked' if check else 'unchecked'}": r
                         for (rule, check), r in runs.items()}}
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--part", choices=("fig3", "fig4", "all"), default="all")
    parser.add_argument("--quick", action="store_true",
                        help="1 seed, 6 rounds for fig. 3, p in {0, 0.5, 0.9} for fig. 4")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--fig3-iterations", type=int, default=10)
    parser.add_argument("--fig3-m", type=int, default=5000)
    parser.add_argument("--fig3-repeats", type=int, default=5)
    parser.add_argument("--fig4-p", type=float, nargs="+", default=[0.0, 0.3, 0.5, 0.7, 0.9])
    parser.add_argument("--fig4-iterations", type=int, default=5)
    parser.add_argument("--fig4-m", type=int, default=10000)
    parser.add_argument("--fig4-repeats", type=int, default=5)
    parser.add_argument("--fig4-rules", nargs="+", choices=RULES, default=["distribution"])
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args(argv)
    if args.quick:
        args.fig3_iterations, args.fig3_repeats = 6, 1
        args.fig4_p, args.fig4_repeats = [0.0, 0.5, 0.9], 1
    if not args.data.is_dir():
        raise SystemExit(f"LabelMe folder {args.data} not found (see ../shared/data/README.md)")

    import torch

    torch.set_num_threads(args.threads)
    print(
        "Self-Crowd on LabelMe. Timings were taken on a shared 2-core machine "
        f"(torch threads: {args.threads}); compare them within this run only."
    )
    data = load_labelme(args.data)
    start = time.perf_counter()
    results = {}
    if args.part in ("fig3", "all"):
        results["fig3"] = fig3(data, args)
    if args.part in ("fig4", "all"):
        results["fig4"] = {str(p): runs for p, runs in fig4(data, args).items()}
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                         **results}, indent=1))


if __name__ == "__main__":
    main()
