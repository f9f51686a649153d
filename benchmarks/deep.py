"""Deep learning from crowds on every dataset with features, with the estimators' defaults.

For each dataset, every deep estimator of skcrowd and the two-stage baselines are fitted on
the crowd-labelled training tasks and scored on gold test labels: test accuracy and expected
calibration error (ECE, 15 bins), mean +- standard deviation over seeds, and seconds per fit.
Every estimator runs with its defaults (the way a new user runs it), seeded:

- ``MV + net``, ``DS + net``: ``AggregatedTargetClassifier(PlainNetClassifier(),
  aggregator=MajorityVote() | DawidSkene())``: the same network, optimizer and held-out
  selection of the number of epochs as the crowd nets, trained on the aggregated labels;
- ``CrowdLayer`` (MW), ``CoNAL``, ``deep EM``: :mod:`skcrowd.neural` with defaults;
- ``Self-Crowd``: :class:`skcrowd.SelfCrowdClassifier` with defaults (``--selfcrowd``, slow);
- ``gold + net``: ``PlainNetClassifier()`` on the gold labels of the training tasks (upper
  bound; only where every training task has a gold label).

Datasets (``--datasets``):

- ``labelme``: ``../shared/data/labelme`` (VGG16 features, standardized on the training set);
- ``sentiment``: ``../shared/data/sentiment_polarity_rodrigues`` (raw sentences: the text
  pipeline is ``TfidfVectorizer(min_df=2, sublinear_tf=True)`` fitted on the training
  sentences, its sparse output fed to the nets);
- simulated crowds on scikit-learn's datasets, drawn anew for every seed (60/40 stratified
  train/test split, features standardized): ``digits`` (30 workers, 3 votes per task,
  accuracies uniform in [0.35, 0.85], 10 % spammers), ``breast_cancer`` (20 binary workers,
  3 votes per task, sensitivity and specificity uniform in [0.5, 0.95], as Rodrigues & Pereira
  simulate), ``wine`` (15 workers, 4 votes per task, accuracies in [0.4, 0.9], mistakes going
  to one other class per class), and paper 004's common-noise crowds (Chu et al. 2021,
  "Synthesizing annotations"): ``synthetic`` (their Synthetic data: 6 Gaussian classes, 2000
  tasks) and ``digits_common``, each with 30 annotators, 3 per task, one common asymmetric
  confusion of strength 0.5 and an individual asymmetric one of strength 0.5 per annotator,
  the common one used with probability ``omega_ri = sigmoid(3 u_r . v_i + logit(0.5))`` from
  hidden unit embeddings of the instance and the annotator; ``audio_like``, a stand-in for
  issue 24's audio crowd (``benchmarks/selfcrowd_sparse.py``: 700 training tasks, 124 features,
  10 classes, 44 workers of mean accuracy 0.73 with one asymmetric confusion pattern, 4 votes per
  task).

``--settings fixed`` runs the nets with the constants used before the settings were chosen per
fit (learning rate 1e-2 for the crowd layer, 1e-3 for the others, no weight decay): the same
seeds, splits and epochs selection as the ``auto`` default otherwise.

``--data DIR`` (repeatable) adds any folder in the shared-data layout: ``votes.csv``,
``labels_test.npy`` and either ``features[_NAME]_{train,test}.npy`` (standardized on the
training rows) or ``*_text_{train,test}.txt`` (one text per line, the text pipeline above).

Usage::

    python benchmarks/deep.py                                  # every dataset, 3 seeds
    python benchmarks/deep.py --datasets labelme digits --seeds 5
    python benchmarks/deep.py --data /path/to/crowd --selfcrowd
    python benchmarks/deep.py --json results.json
    python benchmarks/deep.py --device cuda    # on a GPU; then unpickles the last net on a
                                               # CPU-only process and compares predictions

Timings come from a shared 2-core machine (one torch thread): compare within a table only.
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
DATA = REPO.parent / "shared" / "data"
REAL = {"labelme": "labelme", "sentiment": "sentiment_polarity_rodrigues"}
SIMULATED = ("digits", "breast_cancer", "wine", "synthetic", "digits_common", "audio_like")


# -- datasets ----------------------------------------------------------------------------------


def load_folder(folder):
    """A shared-data folder: standardized (or TF-IDF) features, votes, gold test labels."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import StandardScaler

    from skcrowd.datasets import load_crowd_dataset

    folder = Path(folder)
    ds = load_crowd_dataset(folder)
    if ds.data is not None:
        scaler = StandardScaler().fit(ds.data.reshape(len(ds.data), -1))
        X = scaler.transform(ds.data.reshape(len(ds.data), -1)).astype(np.float32)
        X_test = scaler.transform(ds.data_test.reshape(len(ds.data_test), -1)).astype(np.float32)
    else:
        texts = {split: sorted(folder.glob(f"*_text_{split}.txt")) for split in ("train", "test")}
        if len(texts["train"]) != 1 or len(texts["test"]) != 1:
            raise FileNotFoundError(
                f"{folder} has neither features_*_train.npy nor one *_text_train.txt and one "
                "*_text_test.txt."
            )
        train, test = (texts[s][0].read_text().splitlines() for s in ("train", "test"))
        tfidf = TfidfVectorizer(min_df=2, sublinear_tf=True).fit(train)
        X, X_test = (tfidf.transform(t).astype(np.float32) for t in (train, test))
    if ds.target_test is None or X_test is None:
        raise FileNotFoundError(f"{folder} has no test features or no labels_test.npy.")
    gold = ds.target if ds.target_mask.all() else None
    return dict(X=X, votes=ds.votes, X_test=X_test, y_test=ds.target_test, y_gold=gold,
                n_classes=len(ds.class_names))


def common_noise_crowd(X, y, n_classes, rng, *, n_workers=30, votes_per_task=3,
                       common_strength=0.5, individual_strength=0.5, proportion=0.5):
    """Paper 004's annotations: per-(instance, annotator) mixture of common and own confusion."""
    from skcrowd.datasets import make_confusion_matrix

    common = make_confusion_matrix(n_classes, noise=common_strength, pattern="asymmetric",
                                   random_state=rng)
    individual = np.stack([
        make_confusion_matrix(n_classes, noise=individual_strength, pattern="asymmetric",
                              random_state=rng)
        for _ in range(n_workers)
    ])
    v = X @ rng.normal(size=(X.shape[1], 8))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    u = rng.normal(size=(n_workers, 8))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    n = len(y)
    worker = np.argsort(rng.random_sample((n, n_workers)), axis=1)[:, :votes_per_task]
    task = np.repeat(np.arange(n), votes_per_task)
    worker = worker.ravel()
    logit = 3.0 * np.sum(v[task] * u[worker], axis=1) + np.log(proportion / (1 - proportion))
    from_common = rng.random_sample(len(task)) < 1.0 / (1.0 + np.exp(-logit))
    rows = np.where(from_common[:, None], common[y[task]], individual[worker, y[task]])
    label = (rows.cumsum(axis=1) > rng.random_sample((len(task), 1))).argmax(axis=1)
    votes = np.full((n, n_workers), -1)
    votes[task, worker] = label
    return votes


def simulated(name, seed):
    """A simulated crowd on a scikit-learn dataset, drawn from ``seed``."""
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from skcrowd.datasets import make_confusion_matrix, simulate_annotators

    if name == "audio_like":  # issue 24's stand-in (benchmarks/selfcrowd_sparse.py)
        sys.path.insert(0, str(REPO / "benchmarks"))
        from selfcrowd_sparse import simulated_crowd

        return simulated_crowd(name, seed)
    rng = np.random.RandomState(seed)
    if name == "synthetic":
        K = 6
        y = rng.randint(K, size=2000)
        X = rng.normal(size=(K, 20))[y] * 0.6 + rng.normal(size=(2000, 20))
    else:
        loader = {"digits": datasets.load_digits, "digits_common": datasets.load_digits,
                  "breast_cancer": datasets.load_breast_cancer, "wine": datasets.load_wine}[name]
        X, y = loader(return_X_y=True)
        K = int(y.max()) + 1
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.4, stratify=y, random_state=rng)
    scaler = StandardScaler().fit(X)
    X, X_test = scaler.transform(X).astype(np.float32), scaler.transform(X_test).astype(np.float32)
    if name == "digits":
        votes = simulate_annotators(y, 30, accuracy=(0.35, 0.85), votes_per_task=3,
                                    spammers=0.1, random_state=rng).votes
    elif name == "breast_cancer":
        votes = simulate_annotators(y, 20, sensitivity=(0.5, 0.95), specificity=(0.5, 0.95),
                                    votes_per_task=3, random_state=rng).votes
    elif name == "wine":
        votes = simulate_annotators(
            y, 15, accuracy=(0.4, 0.9), votes_per_task=4,
            class_confusion=make_confusion_matrix(K, noise=1.0, pattern="asymmetric",
                                                  random_state=rng),
            random_state=rng).votes
    else:
        votes = common_noise_crowd(X, y, K, rng)
    return dict(X=X, votes=votes, X_test=X_test, y_test=y_test, y_gold=y, n_classes=K)


def load(name, seed, cache={}):
    """Dataset ``name`` (a real folder's data is the same for every seed)."""
    if name in SIMULATED:
        return simulated(name, seed)
    folder = DATA / REAL[name] if name in REAL else Path(name)
    if folder not in cache:
        cache[folder] = load_folder(folder)
    return cache[folder]


# -- estimators --------------------------------------------------------------------------------


def methods(selfcrowd=False, device="cpu", settings="auto"):
    """(name, factory(seed), fitted on gold labels?) of every compared estimator."""
    from skcrowd import AggregatedTargetClassifier, DawidSkene, MajorityVote, SelfCrowdClassifier
    from skcrowd.neural import (
        CoNALClassifier,
        CrowdLayerClassifier,
        DeepEMClassifier,
        PlainNetClassifier,
    )

    on = {"device": device}
    if settings == "fixed":  # the constants before issue 24
        on.update(lr=1e-3, weight_decay=0.0)
    cl = {**on, "lr": 1e-2} if settings == "fixed" else on
    rows = [
        ("MV + net", lambda s: AggregatedTargetClassifier(
            PlainNetClassifier(random_state=s, **on), aggregator=MajorityVote(random_state=s)),
         False),
        ("DS + net", lambda s: AggregatedTargetClassifier(
            PlainNetClassifier(random_state=s, **on), aggregator=DawidSkene()), False),
        ("CrowdLayer", lambda s: CrowdLayerClassifier(random_state=s, **cl), False),
        ("CoNAL", lambda s: CoNALClassifier(random_state=s, **on), False),
        ("deep EM", lambda s: DeepEMClassifier(random_state=s, **on), False),
    ]
    if selfcrowd:
        # its default crowd model, on the CPU
        rows.append(("Self-Crowd", lambda s: SelfCrowdClassifier(random_state=s), False))
    rows.append(("gold + net", lambda s: PlainNetClassifier(random_state=s, **on), True))
    return rows


def evaluate(estimator, data, *, gold=False):
    """Fit on the training tasks; (test accuracy, ECE, seconds) on the gold test labels."""
    import torch

    from skcrowd.metrics import expected_calibration_error

    torch.set_num_threads(1)  # numba's OpenMP kernels (the aggregators) may reset it
    t0 = time.perf_counter()
    estimator.fit(data["X"], data["y_gold"] if gold else data["votes"])
    seconds = time.perf_counter() - t0
    proba = np.zeros((data["X_test"].shape[0], data["n_classes"]))
    proba[:, np.asarray(estimator.classes_, dtype=np.int64)] = estimator.predict_proba(
        data["X_test"])
    accuracy = float(np.mean(proba.argmax(axis=1) == data["y_test"]))
    return accuracy, expected_calibration_error(data["y_test"], proba), seconds


def check_gpu_pickle_on_cpu(net, X):
    """Unpickle a GPU-fitted net in a process that sees no GPU; compare its predictions."""
    import os
    import pickle
    import subprocess
    import tempfile

    folder = Path(tempfile.mkdtemp())
    (folder / "net.pkl").write_bytes(pickle.dumps(net))
    np.save(folder / "proba.npy", net.predict_proba(X))
    np.save(folder / "X.npy", X)
    code = f"""
import pickle, warnings
import numpy as np, torch
assert not torch.cuda.is_available()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    net = pickle.loads(open({str(folder / "net.pkl")!r}, "rb").read())
proba = net.predict_proba(np.load({str(folder / "X.npy")!r}))
diff = float(np.abs(proba - np.load({str(folder / "proba.npy")!r})).max())
names = sorted({{type(w.message).__name__ for w in caught}})
print("GPU-fitted net unpickled without CUDA: device", net.device, "| warnings", names,
      "| max |proba difference|", diff)
"""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    print(out.stdout.strip() or out.stderr.strip())


def mean_sd(values):
    return f"{np.mean(values):.3f} ± {np.std(values):.3f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="*", default=[*REAL, *SIMULATED],
                        help=f"among {[*REAL, *SIMULATED]}")
    parser.add_argument("--data", action="append", default=[], type=Path,
                        help="a folder in the shared-data layout (repeatable)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--selfcrowd", action="store_true", help="add Self-Crowd (slow)")
    parser.add_argument("--only", default=None, help="run the methods whose name contains this")
    parser.add_argument("--json", type=Path, default=None, help="write every score here")
    parser.add_argument("--settings", choices=["auto", "fixed"], default="auto",
                        help="auto: the nets' defaults; fixed: the constants before issue 24")
    parser.add_argument("--device", default="cpu",
                        help="torch device of the nets; with cuda, also checks that a "
                        "GPU-fitted net unpickles on a CPU")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    names = [*args.datasets, *map(str, args.data)]
    results = {}
    device = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    print(f"torch {torch.__version__}, device={args.device} ({device}), one CPU thread; seeds "
          f"0..{args.seeds - 1}; shared machine: compare timings within a table only.")
    net = None
    for name in names:
        data = load(name, 0)
        n_votes = int((np.asarray(data["votes"]) >= 0).sum())
        print(f"\n### {name}: {data['X'].shape[0]} training tasks, {data['X'].shape[1]} "
              f"features, {data['votes'].shape[1]} workers, {n_votes} votes, "
              f"{data['n_classes']} classes; {len(data['y_test'])} gold test tasks\n")
        print("| method | test accuracy | ECE | s/fit |")
        print("|---|---|---|---|")
        results[name] = {}
        for method, factory, on_gold in methods(args.selfcrowd, args.device, args.settings):
            if (args.only and args.only not in method) or (on_gold and data["y_gold"] is None):
                continue
            scores = []
            for seed in range(args.seeds):
                net = factory(seed)
                scores.append(evaluate(net, load(name, seed), gold=on_gold))
            acc, ece, sec = map(list, zip(*scores))
            results[name][method] = {"accuracy": acc, "ece": ece, "seconds": sec}
            print(f"| {method} | {mean_sd(acc)} | {mean_sd(ece)} | {np.mean(sec):.1f} |",
                  flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.device.startswith("cuda") and net is not None:
        check_gpu_pickle_on_cpu(net, load(names[-1], 0)["X_test"])


if __name__ == "__main__":
    main()
