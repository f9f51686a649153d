"""
===========================================================
A stream of votes: partial_fit against refitting
===========================================================

Votes arrive in 30 batches of 4000 (800 tasks, 5 votes each, from a pool of
150 workers, 3 classes). Halfway through the stream, a quarter of the workers
start to swap the classes (they answer ``k + 1`` for class ``k``): their old
confusion matrices are now wrong.

* ``DawidSkene().partial_fit(batch)`` keeps the votes of the latest batches
  (``window``, 500 votes per worker: here about 18 batches), re-read at every
  batch, and each worker's expected confusion counts of the older ones (one
  row per worker): its time per batch stops growing once the window is full;
* ``half_life`` (votes) halves the weight of the older counts every
  ``half_life`` votes, so that the worker models follow the drift;
* the refit, :meth:`~skcrowd.aggregation.DawidSkene.fit` on every vote so far
  at each batch, must keep the whole history, and its time grows with it.

Each batch is scored on its own tasks' true classes right after it arrives.
See :ref:`online` for what is kept and what is guaranteed.
"""

# %%
# The stream
# ----------
import time

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp

from skcrowd.aggregation import DawidSkene
from skcrowd.datasets import simulate_annotators

rng = np.random.default_rng(0)
n_workers, K, n_batches, n_tasks = 150, 3, 30, 800
swapping = rng.random(n_workers) < 0.25
accuracy = rng.uniform(0.6, 0.9, n_workers)
stream = []
for b in range(n_batches):
    y = rng.integers(K, size=n_tasks)
    votes = simulate_annotators(y, n_workers, accuracy=accuracy, votes_per_task=5,
                                output="sparse", random_state=b).votes.tocoo()
    if b >= n_batches // 2:  # the swap: k -> k + 1 for a quarter of the workers
        swap = swapping[votes.col]
        votes.data[swap] = (votes.data[swap] + 1) % K
    stream.append((votes.tocsr(), y))

# %%
# partial_fit, with and without forgetting, and the refit
# -------------------------------------------------------
models = {"partial_fit, half_life=None": DawidSkene(half_life=None),
          "partial_fit, default half_life": DawidSkene()}
accuracy_of = {name: [] for name in [*models, "refit on all votes so far"]}
seconds_of = {name: [] for name in accuracy_of}
history = []
for votes, y in stream:
    for name, model in models.items():
        start = time.perf_counter()
        model.partial_fit(votes, classes=np.arange(K))
        seconds_of[name].append(time.perf_counter() - start)
        accuracy_of[name].append(np.mean(model.predict(votes) == y))
    history.append(votes)
    start = time.perf_counter()
    refit = DawidSkene(n_classes=K).fit(sp.vstack(history, format="csr"))
    seconds_of["refit on all votes so far"].append(time.perf_counter() - start)
    accuracy_of["refit on all votes so far"].append(np.mean(refit.predict(votes) == y))

for name in accuracy_of:
    print(f"{name:27s} accuracy before the swap {np.mean(accuracy_of[name][:15]):.3f}, "
          f"after {np.mean(accuracy_of[name][15:]):.3f}")

# %%
# Accuracy and time per batch
# ---------------------------
fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
batches = np.arange(1, n_batches + 1)
for name in accuracy_of:
    top.plot(batches, accuracy_of[name], marker=".", label=name)
    bottom.plot(batches, seconds_of[name], marker=".", label=name)
top.axvline(n_batches // 2 + 0.5, color="grey", linestyle=":")
top.set_ylabel("accuracy of the batch")
top.legend(loc="lower left", fontsize=8)
bottom.set_ylabel("seconds per batch")
bottom.set_xlabel("batch")
bottom.set_yscale("log")
fig.tight_layout()
plt.show()
