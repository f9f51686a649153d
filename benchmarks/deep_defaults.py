"""Choosing the deep estimators' defaults across datasets, checked leave one dataset out.

Each stage fits one estimator under a small grid of settings on every dataset of
``benchmarks/deep.py`` (two real crowds with features, five simulated ones) and a few seeds,
and records the test accuracy on gold labels. Leave-one-dataset-out (LODO) selection then
picks, for each dataset ``d``, the setting with the smallest mean regret on the *other*
datasets (regret: the dataset's best mean accuracy minus the setting's), and reports how that
setting scores on ``d`` next to the best setting on ``d`` (the oracle, which LODO cannot see)
and the previous default. A default is a setting that LODO picks for most left-out datasets.

Stages (each keeps the previous stages' choices):

- ``training``: how the number of epochs is chosen (held-out votes with the best epoch kept and
  a refit, scored by the held-out vote likelihood or by majority-vote accuracy; no refit;
  nothing held out and a fixed number of epochs) and the learning rate;
- ``backbone``: weight decay (Adam's ``weight_decay``, on every parameter) and batch
  normalization of the default MLP;
- ``dropout``: the MLP's dropout, with the choices above;
- ``conal``: CoNAL's ``reg_lambda``.

Results are cached in ``--cache`` (JSON; a rerun only fits what is missing) and printed as
tables. Usage::

    python benchmarks/deep_defaults.py --stage training --seeds 2
    python benchmarks/deep_defaults.py --stage backbone --seeds 2
    python benchmarks/deep_defaults.py --stage dropout --seeds 2
    python benchmarks/deep_defaults.py --stage conal --seeds 2
    python benchmarks/deep_defaults.py --stage backbone --report   # tables only

Run one stage at a time, niced, with one torch thread: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import deep  # noqa: E402  (benchmarks/deep.py: datasets and evaluation)

DATASETS = [*deep.REAL, *deep.SIMULATED]

# The settings before this study: 20 % of the tasks held out but not used, 50 epochs, Adam
# with learning rate 1e-3, no weight decay, MLP(128, dropout 0.5), no batch norm.
PREVIOUS = {"callbacks__held_out_selection": None, "max_epochs": 50, "lr": 1e-3,
            "module__batch_norm": False, "module__dropout": 0.5, "optimizer__weight_decay": 0.0}

ACCURACY_MONITOR = {"callbacks__held_out_selection__monitor": "valid_acc",
                    "callbacks__held_out_selection__lower_is_better": False}


def _training_grid():
    grid = {"previous": PREVIOUS}
    for lr in (1e-3, 1e-2):
        base = {"lr": lr, "max_epochs": 200, "patience": 10}
        grid[f"holdout-loss+refit lr={lr:g}"] = base
        grid[f"holdout-acc+refit lr={lr:g}"] = {**base, **ACCURACY_MONITOR}
        grid[f"holdout-loss lr={lr:g}"] = {**base, "refit": False}
        grid[f"all-tasks 50 epochs lr={lr:g}"] = {
            "lr": lr, "max_epochs": 50, "train_split": None}
    return grid


def _backbone_grid():
    grid = {"previous": PREVIOUS}
    for wd in (0.0, 1e-4, 1e-3, 1e-2):
        for bn in (False, True):
            grid[f"wd={wd:g} bn={'yes' if bn else 'no'}"] = {
                "optimizer__weight_decay": wd, "module__batch_norm": bn,
            }
    return grid


def _dropout_grid():
    grid = {"previous": PREVIOUS}
    for dropout in (0.0, 0.2, 0.5):
        grid[f"dropout={dropout}"] = {"module__dropout": dropout}
    return grid


def _conal_grid():
    grid = {"previous": {**PREVIOUS, "reg_lambda": 1e-5}}
    for reg in (0.0, 1e-6, 1e-5, 1e-4, 1e-3):
        grid[f"reg_lambda={reg:g}"] = {"reg_lambda": reg}
    return grid


STAGES = {
    "training": ("CrowdLayerClassifier", _training_grid),
    "backbone": ("CrowdLayerClassifier", _backbone_grid),
    "dropout": ("CrowdLayerClassifier", _dropout_grid),
    "conal": ("CoNALClassifier", _conal_grid),
}


def run(stage, seeds, datasets, cache_path):
    import skcrowd.neural

    estimator, make_grid = STAGES[stage]
    cache = json.loads(cache_path.read_text()) if cache_path.is_file() else {}
    for dataset in datasets:
        for seed in range(seeds):
            data = deep.load(dataset, seed)
            for name, params in make_grid().items():
                key = f"{stage}|{dataset}|{seed}|{name}"
                if key in cache:
                    continue
                net = getattr(skcrowd.neural, estimator)(random_state=seed, **params)
                accuracy, ece, seconds = deep.evaluate(net, data)
                cache[key] = {"accuracy": accuracy, "ece": ece, "seconds": seconds,
                              "best_epoch": getattr(net, "best_epoch_", None)}
                cache_path.write_text(json.dumps(cache, indent=0))
                print(f"{key}: {accuracy:.3f} (ECE {ece:.3f}, {seconds:.1f} s, best epoch "
                      f"{cache[key]['best_epoch']})", flush=True)
    return cache


def table(stage, cache, datasets):
    """Mean accuracy per (setting, dataset) over the cached seeds."""
    names = list(STAGES[stage][1]())
    acc = np.full((len(names), len(datasets)), np.nan)
    for i, name in enumerate(names):
        for j, dataset in enumerate(datasets):
            runs = [v["accuracy"] for k, v in cache.items()
                    if k.startswith(f"{stage}|{dataset}|") and k.endswith(f"|{name}")]
            if runs:
                acc[i, j] = np.mean(runs)
    return names, acc


def lodo(names, acc, datasets, candidates):
    """For each left-out dataset: the setting chosen on the others, and its score there."""
    regret = np.nanmax(acc[candidates], axis=0) - acc
    rows = []
    for j, dataset in enumerate(datasets):
        others = [k for k in range(len(datasets)) if k != j]
        chosen = candidates[int(np.argmin(regret[candidates][:, others].mean(axis=1)))]
        oracle = candidates[int(np.nanargmax(acc[candidates, j]))]
        rows.append((dataset, names[chosen], acc[chosen, j], names[oracle], acc[oracle, j]))
    return rows


def report(stage, cache, datasets):
    names, acc = table(stage, cache, datasets)
    done = [j for j in range(len(datasets)) if not np.isnan(acc[:, j]).any()]
    datasets, acc = [datasets[j] for j in done], acc[:, done]
    print(f"\nStage {stage}: mean test accuracy over seeds\n")
    print("| setting | " + " | ".join(datasets) + " | mean regret |")
    print("|---|" + "---|" * (len(datasets) + 1))
    regret = np.nanmax(acc, axis=0) - acc
    for i, name in enumerate(names):
        cells = " | ".join(f"{a:.3f}" for a in acc[i])
        print(f"| {name} | {cells} | {regret[i].mean():.3f} |")
    candidates = [i for i, name in enumerate(names) if name != "previous"]
    print(f"\nLeave one dataset out ({stage})\n")
    print("| left out | chosen on the others | its accuracy there | previous default | best "
          "there (oracle) |")
    print("|---|---|---|---|---|")
    previous = names.index("previous")
    for dataset, chosen, score, oracle, best in lodo(names, acc, datasets, candidates):
        j = datasets.index(dataset)
        print(f"| {dataset} | {chosen} | {score:.3f} | {acc[previous, j]:.3f} | {best:.3f} "
              f"({oracle}) |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stage", choices=list(STAGES), required=True)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--datasets", nargs="*", default=DATASETS)
    parser.add_argument("--cache", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "deep_defaults.json")
    parser.add_argument("--report", action="store_true", help="print the tables, fit nothing")
    args = parser.parse_args(argv)
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    if args.report:
        cache = json.loads(args.cache.read_text())
    else:
        import torch

        torch.set_num_threads(1)
        cache = run(args.stage, args.seeds, args.datasets, args.cache)
    report(args.stage, cache, args.datasets)


if __name__ == "__main__":
    main()
