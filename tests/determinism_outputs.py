"""Seeded outputs that must not depend on the machine: ``python tests/determinism_outputs.py OUT``.

Writes to ``OUT`` (an ``.npz`` file) the votes of seeded simulations, the labels, probabilities and
objectives of every aggregator that ``skcrowd.utils.discovery.all_estimators`` finds (numba engine,
one crowd small enough for the serial drivers and one large enough for the parallel ones; numpy
engine on the small one), the same of every aggregator with ``partial_fit`` fed the small crowd in
batches (a window that holds the stream, and one that folds batches), of
:class:`~skcrowd.GroupedDawidSkene` with a group and each ``copy_rate``, the ratings of every
rating aggregator, and the seeded results of the other randomized pieces: Self-Crowd's vote
selection, the consensus classifier, agreement bootstrap intervals and a small CrowdLayer net
trained on CPU.

``tests/test_determinism.py`` runs this script under the default CPU dispatch and under
``NPY_DISABLE_CPU_FEATURES`` (numpy's SIMD kernels turned off), ``NUMBA_CPU_NAME=generic``
(numba compiled for a baseline CPU), ``NUMBA_NUM_THREADS=1`` and ``ATEN_CPU_CAPABILITY=default``
(torch's baseline kernels), and compares the files: the same votes and labels, probabilities within
1e-6. What another machine would compute is thus computed on this one.
"""

import sys
import warnings

import numpy as np

TOLERANCE = 1e-6  # probabilities and objectives: absolute; votes and labels: exact


def _simulations(out):
    from skcrowd.datasets import (make_confusion_matrix, make_crowd_classification,
                                  simulate_annotators)

    rng = np.random.RandomState(0)
    truth = rng.randint(4, size=600)
    cases = {
        # many duplicate (task, worker) draws: 8 workers, up to 4 votes per task (the rejection
        # sampler's tie order decided the crowd, issue 22)
        "few_workers": dict(n_workers=8, votes_per_task=(1, 4)),
        "complement": dict(n_workers=6, votes_per_task=(2, 6)),  # more than half: complement
        "types": dict(n_workers=30, votes_per_task=5, spammers=0.2, adversarial=0.2,
                      accuracy=(0.5, 0.9)),
        "dense_default": dict(n_workers=5),
        "confusion": dict(n_workers=12, votes_per_task=3,
                          class_confusion=make_confusion_matrix(4, pattern="asymmetric",
                                                                random_state=1),
                          common_confusion=make_confusion_matrix(4, noise=0.4,
                                                                 pattern="symmetric",
                                                                 random_state=2),
                          common_weight=(0.0, 0.5)),
    }
    for name, kwargs in cases.items():
        for seed in (0, 1, 2):
            crowd = simulate_annotators(truth, n_classes=4, random_state=seed, **kwargs)
            out[f"simulate/{name}/{seed}"] = crowd.votes
    for seed in (0, 1):
        crowd = make_crowd_classification(300, n_workers=10, votes_per_task=3, n_classes=3,
                                          random_state=seed)
        out[f"make_crowd/{seed}/votes"] = crowd.votes
        out[f"make_crowd/{seed}/y"] = crowd.target
        out[f"make_crowd/{seed}/X"] = crowd.data


def _crowds():
    from skcrowd.datasets import simulate_annotators

    rng = np.random.RandomState(3)
    small_truth = rng.randint(3, size=400)
    small = simulate_annotators(small_truth, 15, n_classes=3, votes_per_task=(2, 6),
                                accuracy=(0.45, 0.9), spammers=0.1, random_state=4,
                                output="sparse").votes
    large_truth = rng.randint(2, size=30_000)  # 1.2e5 votes: the parallel numba drivers run
    large = simulate_annotators(large_truth, 400, n_classes=2, votes_per_task=4,
                                accuracy=(0.55, 0.95), random_state=5, output="sparse").votes
    return {"small": small, "large": large}


def _aggregators(out):
    from skcrowd.aggregation import kernels
    from skcrowd.utils.discovery import all_estimators

    crowds = _crowds()
    for engine, names in (("numba", ("small", "large")), ("numpy", ("small",))):
        kernels.ENGINE = engine
        for crowd_name in names:
            votes = crowds[crowd_name]
            for model, cls in all_estimators(type_filter="aggregator"):
                estimator = cls()
                if "random_state" in estimator.get_params():
                    estimator.set_params(random_state=0)
                if model == "AggregatorSelector":  # every default candidate, one hold-out:
                    estimator.set_params(n_splits=1)  # about 2 s on the large crowd
                if model == "KOS" and crowd_name == "small":
                    continue  # KOS is binary: on the 3-class crowd it raises (tested elsewhere)
                key = f"aggregate/{engine}/{crowd_name}/{model}"
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter is fine
                    estimator.fit(votes)
                out[f"{key}/proba"] = estimator.predict_proba(votes)
                out[f"{key}/labels"] = estimator.predict(votes)
                for attr in ("lower_bound_", "n_iter_"):
                    if hasattr(estimator, attr):
                        out[f"{key}/{attr}"] = np.asarray(getattr(estimator, attr), dtype=float)
    kernels.ENGINE = "numba"


def _streams(out):
    """``partial_fit`` in five batches (issue 39), and GroupedDawidSkene with a group."""
    from skcrowd import GroupedDawidSkene
    from skcrowd.aggregation._online import OnlineEMMixin
    from skcrowd.utils.discovery import all_estimators

    small = _crowds()["small"].tocoo()  # stored entries are votes, label 0 included
    votes = np.full(small.shape, -1)
    votes[small.row, small.col] = small.data
    for model, cls in all_estimators(type_filter="aggregator"):
        if not issubclass(cls, OnlineEMMixin) or cls is GroupedDawidSkene:
            continue
        for window in (500, 30):  # 30 votes per worker: about one batch, the others fold
            estimator = cls(random_state=0, window=window)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for batch in np.array_split(votes, 5):
                    estimator.partial_fit(batch, classes=[0, 1, 2])
            key = f"stream/{model}/{window}"
            out[f"{key}/proba"] = estimator.predict_proba(votes)
            out[f"{key}/lower_bound_"] = np.asarray(estimator.lower_bound_, dtype=float)
    groups = np.array([0, 0, 0, 0] + [-1] * (votes.shape[1] - 4))
    for copy_rate in ("worker", "group", "auto"):
        estimator = GroupedDawidSkene(worker_groups=groups, copy_rate=copy_rate, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[f"grouped/{copy_rate}/proba"] = estimator.fit(votes).predict_proba(votes)
        out[f"grouped/{copy_rate}/lower_bound_"] = np.asarray(estimator.lower_bound_, dtype=float)


def _rating_aggregators(out):
    """Aggregated ratings of every rating aggregator (issue 27)."""
    from skcrowd.utils.discovery import all_estimators

    rng = np.random.RandomState(6)
    ratings = rng.normal(50, 20, size=(500, 1)) + rng.normal(0, 5, size=20)
    ratings = ratings + rng.normal(size=(500, 20)) * rng.choice([2.0, 5.0, 30.0], size=20)
    ratings[rng.rand(500, 20) < 0.7] = np.nan
    for model, cls in all_estimators(type_filter="rating"):
        estimator = cls()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[f"ratings/{model}"] = estimator.fit(ratings).predict(ratings)


def _other_randomized(out):
    from skcrowd import ConsensusClassifier, fleiss_kappa, krippendorff_alpha, select_next_votes
    from skcrowd.datasets import make_crowd_classification

    crowd = make_crowd_classification(200, n_workers=8, votes_per_task=3, n_classes=3,
                                      random_state=7)
    for name, measure in (("alpha", krippendorff_alpha), ("kappa", fleiss_kappa)):
        value = measure(crowd.votes, confidence_level=0.95, n_resamples=200, random_state=0)
        out[f"agreement/{name}"] = np.array([value.estimate, value.low, value.high], dtype=float)
    consensus = ConsensusClassifier(random_state=0).fit(crowd.data, crowd.votes)
    out["consensus/proba"] = consensus.consensus_proba_
    out["consensus/labels"] = consensus.consensus_labels_
    tasks, scores = select_next_votes(crowd.data, crowd.votes, k=20,
                                      consensus=ConsensusClassifier(random_state=0))
    out["next_votes/tasks"] = np.asarray(tasks)
    out["next_votes/scores"] = np.asarray(scores, dtype=float)


def _net(out):
    try:
        import torch
        from skcrowd import CrowdLayerClassifier
    except ImportError:
        return
    from skcrowd.datasets import make_crowd_classification

    torch.set_num_threads(1)
    crowd = make_crowd_classification(300, n_workers=6, votes_per_task=3, n_classes=3,
                                      random_state=8)
    net = CrowdLayerClassifier(max_epochs=5, random_state=0, train_split=None)
    net.fit(crowd.data.astype(np.float32), crowd.votes)
    out["net/crowdlayer/proba"] = net.predict_proba(crowd.data.astype(np.float32))


def main(path):
    out = {}
    _simulations(out)
    _aggregators(out)
    _streams(out)
    _rating_aggregators(out)
    _other_randomized(out)
    _net(out)
    np.savez(path, **out)


def compare(reference, other, tolerance=TOLERANCE):
    """Differences between two output files: ``[(key, what), ...]``, empty when they agree."""
    a, b = np.load(reference), np.load(other)
    problems = [(key, "missing") for key in sorted(set(a.files) ^ set(b.files))]
    for key in sorted(set(a.files) & set(b.files)):
        x, y = a[key], b[key]
        if x.shape != y.shape:
            problems.append((key, f"shape {x.shape} != {y.shape}"))
        elif x.dtype.kind in "fc":
            diff = np.abs(x - y)
            worst = float(np.nanmax(diff)) if diff.size else 0.0
            if not (worst <= tolerance and np.array_equal(np.isnan(x), np.isnan(y))):
                problems.append((key, f"max abs difference {worst:.3g} > {tolerance:g}"))
        elif not np.array_equal(x, y):
            problems.append((key, f"{int(np.sum(x != y))} of {x.size} entries differ"))
    return problems


if __name__ == "__main__":
    main(sys.argv[1])
