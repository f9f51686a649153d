"""
=====================================================
Free-text answers: ROVER, worker weights, embeddings
=====================================================

Twenty workers transcribe 200 sentences, five transcriptions per sentence. Fourteen careful
workers change about one word in twelve (a substitution, a dropped word or an inserted one);
six careless workers change one word in two. We aggregate the transcriptions with
:class:`~skcrowd.texts.ROVER` (a vote per slot of aligned words),
:class:`~skcrowd.texts.WeightedROVER` (the same vote, each worker weighted by a word error rate
learned jointly with the consensus) and the embedding methods
:class:`~skcrowd.texts.ClosestToAverage` and :class:`~skcrowd.texts.RASA`, and draw each
worker's errors: their word error rate against the true sentences, and the error rate
WeightedROVER learned without them.
"""

# %%
# A crowd of careful and careless transcribers
# --------------------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skcrowd.metrics import word_error_rate
from skcrowd.texts import RASA, ROVER, ClosestToAverage, WeightedROVER

rng = np.random.default_rng(0)
vocabulary = ("the of and to in a is that for it as was with be by on not he this are or his "
              "from at which but have an they you were her she there one all we their").split()
n_tasks, n_workers, per_task = 200, 20, 5
noise = np.where(np.arange(n_workers) < 6, 0.5, 0.08)  # workers 0-5 are careless
truth = np.array([" ".join(rng.choice(vocabulary, rng.integers(6, 15)))
                  for _ in range(n_tasks)], dtype=object)
X = np.full((n_tasks, n_workers), None, dtype=object)
for i, sentence in enumerate(truth):
    for j in rng.choice(n_workers, per_task, replace=False):
        words = []
        for word in sentence.split():
            r = rng.random()
            if r >= noise[j]:
                words.append(word)
            elif r < noise[j] / 3:  # a substitution
                words.append(str(rng.choice(vocabulary)))
            elif r < 2 * noise[j] / 3:  # an insertion after the word (else: a deletion)
                words += [word, str(rng.choice(vocabulary))]
        X[i, j] = " ".join(words) or sentence
print(X[0, np.not_equal(X[0], None)])
print("truth:", truth[0])

# %%
# Aggregate
# ---------
# The word error rate of each method against the true sentences (lower is better).
models = {"ROVER": ROVER(), "WeightedROVER": WeightedROVER(),
          "ClosestToAverage": ClosestToAverage(), "RASA": RASA()}
for name, model in models.items():
    print(f"{name:17s} WER {word_error_rate(truth, model.fit_predict(X)):.3f}")

# %%
# Errors by worker
# ----------------
# Each worker's word error rate against the truth (their answers only) and the error rate per
# slot that WeightedROVER learned from the answers alone: the careless workers stand apart,
# and their votes weigh ``log((1 - e) / e)``, near zero or below.
model = models["WeightedROVER"]
true_wer = np.array([word_error_rate(truth[np.not_equal(X[:, j], None)],
                                     X[np.not_equal(X[:, j], None), j])
                     for j in range(n_workers)])
careless = noise > 0.1
fig, ax = plt.subplots(figsize=(6, 4))
ax.scatter(true_wer[~careless], model.error_rates_[~careless], label="careful")
ax.scatter(true_wer[careless], model.error_rates_[careless], marker="x", label="careless")
ax.set_xlabel("word error rate against the truth")
ax.set_ylabel("error rate learned by WeightedROVER")
ax.set_title("Errors by worker")
ax.legend()
fig.tight_layout()
plt.show()
