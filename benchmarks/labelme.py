"""LabelMe benchmark of the deep-learning-from-crowds estimators (skcrowd.neural).

Trains the papers' LabelMe backbone (VGG16 features -> FC 128, ReLU, dropout
0.5 -> 8 classes) on the 1000 crowd-labelled training images in every way
skcrowd offers and reports test accuracy (1188 images with gold labels) and
expected calibration error, mean +- std over seeds, with the time per run:

- MV-trained / DS-trained: AggregatedTargetClassifier on majority-vote or
  Dawid-Skene labels (hard), and on Dawid-Skene probabilities (soft);
- CrowdLayerClassifier MW, VW, VB, VW+B and the softmax-CrowdLayer;
- CoNALClassifier for three values of reg_lambda;
- DeepEMClassifier;
- the same net on the gold training labels.

Protocol: features standardised with the training set's mean and standard
deviation (the raw average-pooled VGG16 features reach 100 and made training
unstable from seed to seed), Adam (lr 1e-3), batch 64, a fixed number of
epochs, no early stopping: the 500 validation images are not used. Every
method sees the same seeds.

Usage::

    python benchmarks/labelme.py                  # CPU, 5 seeds
    python benchmarks/labelme.py --device cuda    # GPU; also checks that a
                                                  # GPU-fitted net unpickles on CPU

Data: ``../shared/data/labelme`` relative to the repository root (or
``--data``).
"""

import argparse
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing


def load(folder):
    import pandas as pd

    X = np.load(folder / "features_vgg16avg_train.npy").astype(np.float32)
    X_test = np.load(folder / "features_vgg16avg_test.npy").astype(np.float32)
    y_test = np.load(folder / "labels_test.npy")
    gold = pd.read_csv(folder / "truth.csv").sort_values("task")
    y_gold = np.full(len(X), -1)
    y_gold[gold.task.to_numpy()] = gold.label.to_numpy()
    long = pd.read_csv(folder / "votes.csv")  # task, worker, label: ids from 0
    votes = np.full((len(X), long.worker.max() + 1), -1)
    votes[long.task, long.worker] = long.label
    mean, std = X.mean(axis=0), X.std(axis=0) + 1e-6
    return (X - mean) / std, votes, y_gold, (X_test - mean) / std, y_test


def methods(epochs, device):
    """(name, factory(seed)) of every compared estimator."""
    import torch
    from skorch import NeuralNetClassifier

    from skcrowd import AggregatedTargetClassifier, DawidSkene, MajorityVote
    from skcrowd.neural import (
        MLP,
        CoNALClassifier,
        CrowdLayerClassifier,
        DeepEMClassifier,
    )

    common = dict(max_epochs=epochs, lr=1e-3, batch_size=64, train_split=None, device=device)

    def plain_net(seed):
        torch.manual_seed(seed)  # skorch nets have no random_state
        return NeuralNetClassifier(
            MLP, module__n_features=512, module__n_outputs=8,
            criterion=torch.nn.CrossEntropyLoss, optimizer=torch.optim.Adam,
            iterator_train__shuffle=True, verbose=0, **common,
        )

    rows = [
        ("MV-trained", lambda s: AggregatedTargetClassifier(
            plain_net(s), aggregator=MajorityVote(random_state=s))),  # seeded ties
        ("DS-trained", lambda s: AggregatedTargetClassifier(plain_net(s),
                                                            aggregator=DawidSkene())),
        ("DS-trained (soft targets)", lambda s: AggregatedTargetClassifier(
            plain_net(s), aggregator=DawidSkene(), targets="soft")),
    ]
    for kind in ("MW", "VW", "VB", "VW+B", "softmax"):
        name = "softmax-CrowdLayer" if kind == "softmax" else f"CrowdLayer {kind}"
        rows.append((name, lambda s, k=kind: CrowdLayerClassifier(
            crowd_layer=k, random_state=s, **common)))
    for reg in (1e-6, 1e-5, 1e-4):
        rows.append((f"CoNAL reg_lambda={reg:g}", lambda s, r=reg: CoNALClassifier(
            reg_lambda=r, random_state=s, **common)))
    rows.append(("deep EM", lambda s: DeepEMClassifier(random_state=s, **common)))
    rows.append(("gold labels", plain_net))
    return rows


def warm_up(X, votes, device):
    """One-time costs out of the timings: numba compilation, torch's first optimizer step."""
    from skcrowd import DawidSkene
    from skcrowd.neural import CrowdLayerClassifier

    DawidSkene().fit(votes)
    CrowdLayerClassifier(max_epochs=1, train_split=None, device=device).fit(X, votes)


def check_gpu_pickle_on_cpu(net, X):
    """Unpickle a GPU-fitted net in a process that sees no GPU; compare predictions."""
    path = REPO / "benchmarks" / "results"
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "gpu_net.pkl", "wb") as f:
        pickle.dump(net, f)
    np.save(path / "gpu_proba.npy", net.predict_proba(X))
    np.save(path / "X.npy", X)
    code = f"""
import pickle, warnings
import numpy as np, torch
assert not torch.cuda.is_available()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    net = pickle.load(open({str(path / "gpu_net.pkl")!r}, "rb"))
proba = net.predict_proba(np.load({str(path / "X.npy")!r}))
diff = float(np.abs(proba - np.load({str(path / "gpu_proba.npy")!r})).max())
names = sorted({{type(w.message).__name__ for w in caught}})
print("GPU-fitted net unpickled without CUDA: device", net.device, "| warnings", names,
      "| max |proba difference|", diff)
"""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    print(out.stdout.strip() or out.stderr.strip())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "labelme")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--only", default=None, help="run the methods whose name contains this")
    args = parser.parse_args(argv)

    import torch

    from skcrowd.metrics import expected_calibration_error

    torch.set_num_threads(args.threads)
    X, votes, y_gold, X_test, y_test = load(args.data)
    print(f"LabelMe: {len(X)} training tasks, {votes.shape[1]} workers, "
          f"{(votes >= 0).sum()} votes; {len(X_test)} test images with gold labels.")
    device_name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    print(f"device={args.device} ({device_name}); torch {torch.__version__}, "
          f"{torch.get_num_threads()} CPU thread(s); {args.epochs} epochs; seeds "
          f"0..{args.seeds - 1}. Timings on a shared machine (2 cores shared with other "
          "jobs when on CPU): compare them within a table only.")
    warm_up(X[:64], votes[:64], args.device)
    print()
    columns = ("method", "test accuracy", "ECE", "wall s/run", "CPU s/run")
    widths = (28, 14, 14, 10, 9)
    print("| " + " | ".join(f"{c:<{w}}" for c, w in zip(columns, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    last_net = None
    for name, factory in methods(args.epochs, args.device):
        if args.only and args.only not in name:
            continue
        acc, ece, wall, cpu = [], [], [], []
        for seed in range(args.seeds):
            net = factory(seed)
            target = y_gold if name == "gold labels" else votes
            # numba's OpenMP kernels (the aggregators) reset torch's thread count
            torch.set_num_threads(args.threads)
            t0, c0 = time.perf_counter(), time.process_time()
            net.fit(X, target)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            proba = net.predict_proba(X_test)
            acc.append(float(np.mean(net.classes_[proba.argmax(1)] == y_test)))
            ece.append(expected_calibration_error(y_test, proba, labels=net.classes_))
            last_net = net
        cells = (name, f"{np.mean(acc):.3f} +- {np.std(acc):.3f}",
                 f"{np.mean(ece):.3f} +- {np.std(ece):.3f}", f"{np.mean(wall):.2f}",
                 f"{np.mean(cpu):.2f}")
        print("| " + " | ".join(f"{c:>{w}}" if i else f"{c:<{w}}"
                                for i, (c, w) in enumerate(zip(cells, widths))) + " |",
              flush=True)
    if args.device.startswith("cuda") and last_net is not None:
        check_gpu_pickle_on_cpu(last_net, X_test)


if __name__ == "__main__":
    main()
