"""Speed of ``skcrowd.datasets.simulate_annotators`` from 1e5 to 1e7 votes.

Two crowds, K=10 classes, accuracies drawn in (0.5, 0.95), 10 % spammers:

- sparse: 5 distinct workers per task out of 1000 (rejection sampling of workers);
- dense: 40 distinct workers per task out of 50 (the 10 non-voters are drawn instead).

Each row is the best of ``--repeat`` runs, for the ``triplets`` output (the sampling itself) and
the ``sparse`` output (plus building the CSR matrix).

Usage::

    python benchmarks/simulation_speed.py                 # 1e5, 1e6, 1e7 votes
    python benchmarks/simulation_speed.py --votes 1e6 --repeat 5

Timings are wall-clock on the machine that runs it; the figures quoted in the project's notes
were taken on a shared 2-core machine with other jobs running.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from skcrowd.datasets import simulate_annotators

CROWDS = {"sparse": (1000, 5), "dense": (50, 40)}  # name: (n_workers, votes per task)
N_CLASSES = 10


def best_time(n_votes, crowd, output, repeat):
    n_workers, per_task = CROWDS[crowd]
    y = np.random.RandomState(0).randint(0, N_CLASSES, size=int(n_votes) // per_task)
    times = []
    for seed in range(repeat):
        start = time.perf_counter()
        sim = simulate_annotators(
            y, n_workers, n_classes=N_CLASSES, accuracy=(0.5, 0.95), spammers=0.1,
            votes_per_task=per_task, output=output, random_state=seed,
        )
        times.append(time.perf_counter() - start)
    n = sim.votes.n_votes if output == "triplets" else sim.votes.nnz
    return n, min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=float, nargs="+", default=[1e5, 1e6, 1e7])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print("simulate_annotators: seconds (best of %d), K=%d" % (args.repeat, N_CLASSES))
    print("timings: wall-clock on this machine (project figures: shared 2-core machine)\n")
    print(f"{'votes':>10}  {'crowd':<28}  {'triplets s':>10}  {'sparse s':>9}  {'Mvotes/s':>8}")
    for n_votes in args.votes:
        for crowd, (n_workers, per_task) in CROWDS.items():
            n, t_triplets = best_time(n_votes, crowd, "triplets", args.repeat)
            _, t_sparse = best_time(n_votes, crowd, "sparse", args.repeat)
            label = f"{crowd}: {per_task} of {n_workers} workers"
            print(
                f"{n:>10.0e}  {label:<28}  {t_triplets:>10.3f}  {t_sparse:>9.3f}  "
                f"{n / t_triplets / 1e6:>8.2f}"
            )


if __name__ == "__main__":
    main()
