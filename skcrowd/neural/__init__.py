"""Deep learning from crowds: skorch nets trained on features ``X`` and votes ``y``.

Estimators (re-exported lazily at the top level: ``import skcrowd`` does not
import torch):

- :class:`CrowdLayerClassifier` (MW, VW, VB, VW+B and softmax crowd layers),
  :class:`CoNALClassifier` and :class:`DeepEMClassifier`: a backbone network
  and an annotator-noise model trained on the observed votes;
- :class:`PlainNetClassifier`: the same backbone and training without a
  noise model (labels, or every vote as a label): the two-stage baselines'
  classifier;
- :class:`CrowdLayerRegressor`: continuous answers, per-annotator scale/bias;
- :class:`SequenceCrowdLayerClassifier`: per-token votes on sequences.

Building blocks: the backbones (:class:`MLP`, :class:`GRUTagger`), the noise
models (:class:`CrowdLayer`, :class:`CommonNoiseAdaptation`,
:class:`ConfusionNoise`, :class:`NoNoise`, :class:`RegressionCrowdLayer`), the
losses and the
train/valid split :class:`TaskHoldoutSplit` with the callback that keeps the
best epoch on the held-out votes, :class:`HeldOutSelection`. Model selection without gold
labels: the nets' ``score`` and the scorers of :mod:`skcrowd.metrics`; use
``cv=KFold(n_splits, shuffle=True)`` (scikit-learn's default for a 2-D ``y``
is an unshuffled ``KFold``). Needs the ``deep`` extra (torch and skorch).
"""

from . import _deps  # noqa: F401 - first: torch and skorch, or the error naming the extra
from ._base import TaskHoldoutSplit, softmax
from ._conal import CoNALClassifier
from ._crowdlayer import CrowdLayerClassifier
from ._deep_em import DeepEMClassifier
from ._losses import MaskedMSE, MaskedMultiCrossEntropy, SoftNLLLoss, observed_votes
from ._modules import (
    MLP,
    CommonNoiseAdaptation,
    ConfusionNoise,
    CrowdLayer,
    GRUTagger,
    NoNoise,
    RegressionCrowdLayer,
)
from ._plain import PlainNetClassifier
from ._regression import CrowdLayerRegressor
from ._selection import HeldOutSelection
from ._sequence import SequenceCrowdLayerClassifier

__all__ = [
    "CrowdLayerClassifier",
    "CoNALClassifier",
    "DeepEMClassifier",
    "PlainNetClassifier",
    "CrowdLayerRegressor",
    "SequenceCrowdLayerClassifier",
    "TaskHoldoutSplit",
    "HeldOutSelection",
    "softmax",
    "MaskedMultiCrossEntropy",
    "MaskedMSE",
    "SoftNLLLoss",
    "observed_votes",
    "MLP",
    "GRUTagger",
    "CrowdLayer",
    "CommonNoiseAdaptation",
    "ConfusionNoise",
    "NoNoise",
    "RegressionCrowdLayer",
]
