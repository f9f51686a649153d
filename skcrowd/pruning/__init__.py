"""Identify ambiguous crowdsourced tasks and prune them from training.

The area under the margin (AUM, Pleiss et al., 2020) of a (task, label) pair
is the margin of that label in a classifier's scores, averaged over the
training epochs: low when the classifier keeps preferring another class.
Lefort, Charlier, Joly and Salmon ("Identify ambiguous tasks combining
crowdsourced labels by weighting Areas Under the Margin", TMLR 2024) carry it
to crowdsourcing:

- **AUMC**: the AUM of each task's majority-vote label (eq. 3);
- **WAUM**: the AUMs of all votes of a task, weighted by how much each
  worker is trusted on that task (eq. 4-5), from one classifier trained on all
  votes (algorithm 1) or one per worker (worker-wise WAUM, algorithm 4).

Pruning drops the ``floor(alpha * n_tasks)`` lowest-scoring tasks.

Why a sampler and not a transformer: scikit-learn transformers map ``X`` to
``X'`` row for row; they cannot drop rows, and they cannot touch ``y``. A
pruning step must do both at fit time and nothing at predict time.
:class:`WAUMPruner` therefore has ``fit(X, votes)`` and
``fit_resample(X, votes)`` (imbalanced-learn's sampler API, usable in
``imblearn.pipeline.Pipeline``) and no ``transform``. For scikit-learn's
``Pipeline`` and ``GridSearchCV``, :class:`PrunedClassifier` composes a pruner
with a classifier: it prunes at fit and predicts with the classifier on every
row; ``memory=`` on the pruner caches its margin training so a grid over
``pruner__alpha`` trains it once per fold.
"""

from ._aum import margins, trust_scores, weighted_aum
from ._pruned_classifier import PrunedClassifier
from ._pruner import WAUMPruner

__all__ = ["PrunedClassifier", "WAUMPruner", "margins", "trust_scores", "weighted_aum"]
