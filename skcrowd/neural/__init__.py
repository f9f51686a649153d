"""Deep learning from crowds: skorch nets trained on features ``X`` and votes ``y``.

Needs the ``deep`` extra (torch and skorch). ``import skcrowd`` does not
import this package; its estimators are re-exported lazily at the top level.
"""

from ._base import TaskHoldoutSplit, softmax
from ._conal import CoNALClassifier
from ._crowdlayer import CrowdLayerClassifier
from ._deep_em import DeepEMClassifier
from ._losses import MaskedMSE, MaskedMultiCrossEntropy, SoftNLLLoss, observed_votes
from ._regression import CrowdLayerRegressor
from ._sequence import SequenceCrowdLayerClassifier
from ._modules import (
    MLP,
    CommonNoiseAdaptation,
    ConfusionNoise,
    CrowdLayer,
    GRUTagger,
    RegressionCrowdLayer,
)

__all__ = [
    "CrowdLayerClassifier",
    "CoNALClassifier",
    "DeepEMClassifier",
    "CrowdLayerRegressor",
    "SequenceCrowdLayerClassifier",
    "TaskHoldoutSplit",
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
    "RegressionCrowdLayer",
]
