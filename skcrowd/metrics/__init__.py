"""Scores for crowdsourced learning: calibration, soft accuracy, votes-aware scorers.

Two families live here.

* **Scores against gold labels** (``y_true``, one class per task) of predicted
  probabilities ``y_proba`` of shape ``(n_samples, n_classes)``:
  :func:`expected_calibration_error`, :func:`soft_accuracy_score`,
  :func:`top_k_accuracy_score`. Their ``y_true`` follows one convention: by
  default it holds **column indices** of ``y_proba`` (``0 .. n_classes - 1``),
  so a test set that misses a class still works; pass ``labels`` (for example
  a fitted ``classes_``) to give ``y_true`` in label space, ``labels[k]`` being
  the label of column ``k``.
* **Scores against votes**, for model selection without gold labels:
  :func:`mv_accuracy_score`, and the scorers :func:`mv_accuracy_scorer` and
  :func:`annotation_log_likelihood_scorer` with the scikit-learn scorer
  signature ``scorer(estimator, X, votes)``, usable as
  ``GridSearchCV(scoring=...)``; for aggregators (the votes matrix is ``X``),
  :func:`held_out_vote_scorer`.

:func:`word_error_rate` scores aggregated texts (:mod:`skcrowd.texts`) against reference texts.

:func:`imbalance_ratio` measures how unbalanced annotations are across classes.

**Inter-annotator agreement** of a votes matrix, chance-corrected:
:func:`krippendorff_alpha` (nominal, ordinal or interval) and
:func:`fleiss_kappa`, both on votes matrices with missing entries and with
bootstrap confidence intervals over tasks.

One private module per concern: ``_gold`` (scores against gold labels),
``_votes`` (scores of votes), ``_scorers`` (the scorers), ``_agreement`` and ``_texts``.
"""

from ._agreement import AgreementInterval, fleiss_kappa, krippendorff_alpha
from ._gold import expected_calibration_error, soft_accuracy_score, top_k_accuracy_score
from ._scorers import annotation_log_likelihood_scorer, held_out_vote_scorer, mv_accuracy_scorer
from ._texts import word_error_rate
from ._votes import imbalance_ratio, mv_accuracy_score

__all__ = [
    "expected_calibration_error",
    "soft_accuracy_score",
    "top_k_accuracy_score",
    "mv_accuracy_score",
    "mv_accuracy_scorer",
    "annotation_log_likelihood_scorer",
    "held_out_vote_scorer",
    "imbalance_ratio",
    "krippendorff_alpha",
    "fleiss_kappa",
    "AgreementInterval",
    "word_error_rate",
]
