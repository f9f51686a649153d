"""CrowdLayerClassifier: a crowd layer on top of any classifier network."""

import numpy as np
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import SHARED_ATTRIBUTES_DOC, SHARED_PARAMETERS_DOC, CrowdNetClassifier
from ._modules import CROWD_LAYERS, CrowdLayer

__all__ = ["CrowdLayerClassifier"]


class CrowdLayerClassifier(CrowdNetClassifier):
    """Deep learning from crowds with a crowd layer (Rodrigues & Pereira, 2018).

    The backbone (``module``) maps features to class logits; its softmax
    ``sigma`` is the shared bottleneck. During training a crowd layer maps
    ``sigma`` to each annotator's vote logits with an annotator-specific
    function ``f_r``, and the masked multi-annotator cross-entropy of the
    observed votes (averaged over observed votes, missing votes contribute
    nothing) is minimised end to end by backpropagation. ``predict_proba``
    returns the bottleneck's probabilities: the crowd layer is only for
    training.

    Parameters
    ----------
    module : torch.nn.Module class or instance, default=None
        Backbone mapping a batch of ``X`` to class logits ``(batch, n_classes)``
        (logits, not probabilities). ``None``: :class:`MLP` (fully connected
        128 units, ReLU, dropout 0.5, as in the papers' LabelMe setup), sized
        from the data at ``fit``.
    crowd_layer : {"MW", "VW", "VB", "VW+B", "softmax"}, default="MW"
        Annotator function: ``"MW"`` a ``K x K`` matrix per annotator
        (identity-initialised), ``"VW"`` a per-class scale vector, ``"VB"`` a
        per-class bias vector, ``"VW+B"`` both; ``"softmax"`` the
        softmax-CrowdLayer (SemEval-2021 task 12 system paper), where each
        annotator's matrix is normalised by a row softmax into a confusion matrix ``T_r``
        and its vote probabilities are ``sigma @ T_r``. See
        :class:`skcrowd.neural.CrowdLayer`.
{shared}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, from the votes (or ``classes``).
    n_workers_ : int
        Number of workers (columns of the votes).
    n_features_in_ : int
        Number of features of ``X``.
    module_ : torch.nn.Module
        The fitted backbone.
    noise_model_ : CrowdLayer
        The fitted crowd layer.
    annotator_confusions_ : ndarray of shape (n_workers, n_classes, n_classes)
        Row-stochastic confusion matrices, rows = true class as in
        :attr:`skcrowd.DawidSkene.confusion_matrices_`: row ``c`` is the crowd
        layer's vote distribution when the bottleneck is certain of class
        ``c``, ``softmax(f_r(e_c))``. For ``"MW"`` it is the row softmax of
        ``W_r``; for ``"softmax"``, ``T_r``.
    history_ : skorch.History
        Losses and ``valid_acc`` per epoch.
{shared_attributes}

    See Also
    --------
    CoNALClassifier : common and individual noise adaptation layers.
    DeepEMClassifier : the EM alternative of the same paper.

    References
    ----------
    Rodrigues, F. and Pereira, F. C. (2018). Deep learning from crowds. AAAI.
    "Learning from disagreements" (SemEval-2021 task 12
    system paper): softmax-CrowdLayer and masked multi cross-entropy.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.neural import CrowdLayerClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.normal(-2, 1, (50, 2)), rng.normal(2, 1, (50, 2))]
    >>> truth = np.r_[np.zeros(50, int), np.ones(50, int)]
    >>> votes = np.c_[truth, truth, 1 - truth]  # the third worker always flips
    >>> clf = CrowdLayerClassifier(max_epochs=60, lr=0.02, module__hidden_units=16,
    ...                            train_split=None, random_state=0).fit(X, votes)
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    >>> clf.annotator_confusions_.shape
    (3, 2, 2)
    """

    _crowd_parameter_constraints = {
        **CrowdNetClassifier._crowd_parameter_constraints,
        "crowd_layer": [StrOptions(set(CROWD_LAYERS))],
    }

    # lr="auto" without a search: 1e-2, chosen leave-one-dataset-out for the crowd layer
    # (benchmarks/deep_defaults.py); the other nets fall back to 1e-3
    _auto_fallback = {**CrowdNetClassifier._auto_fallback, "lr": 1e-2}

    def __init__(self, module=None, *, crowd_layer="MW", **kwargs):
        super().__init__(module, **kwargs)
        self.crowd_layer = crowd_layer

    def _make_noise_model(self):
        return CrowdLayer(self.n_workers_, len(self.classes_), self.crowd_layer)

    @property
    def annotator_confusions_(self):
        check_is_fitted(self)
        return self.noise_model_.confusions().cpu().numpy().astype(np.float64)


CrowdLayerClassifier.__doc__ = CrowdLayerClassifier.__doc__.replace(
    "{shared}", SHARED_PARAMETERS_DOC.strip("\n").replace(
        "(fallback 1e-3)", "(fallback 1e-2, chosen leave-one-dataset-out)")
).replace("{shared_attributes}", SHARED_ATTRIBUTES_DOC.strip("\n"))
