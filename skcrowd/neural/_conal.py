"""CoNALClassifier: common and individual noise adaptation layers (Chu et al., 2021)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import SHARED_ATTRIBUTES_DOC, SHARED_PARAMETERS_DOC, CrowdNetClassifier
from ._modules import CommonNoiseAdaptation

__all__ = ["CoNALClassifier"]


class CoNALClassifier(CrowdNetClassifier):
    """Learning from crowds by modeling common confusions (CoNAL, Chu et al., 2021).

    Annotation noise has two sources: a *common* confusion ``W_g`` shared by
    all annotators and an *individual* confusion ``W_r`` per annotator. An
    auxiliary network picks the source per (instance, annotator) pair,
    ``omega_ri = sigmoid(u_r . v_i)`` from unit-normalised embeddings of the
    instance's features and of the annotator (one-hot, or
    ``annotator_features``), and the vote distribution is the mixture::

        p(y_ri | x_i) = omega_ri softmax(sigma_i @ W_g) + (1 - omega_ri) softmax(sigma_i @ W_r)

    with ``sigma_i`` the backbone's class probabilities. Training minimises
    the cross-entropy of the observed votes (averaged over observed votes)
    minus ``reg_lambda`` times the summed distances between ``W_g`` and each
    ``W_r``, which keeps the two sources identifiable. ``predict_proba``
    returns the backbone's probabilities.

    Parameters
    ----------
    module : torch.nn.Module class or instance, default=None
        Backbone mapping a batch of ``X`` to class logits. ``None``:
        :class:`MLP` (128 units, ReLU, dropout 0.5) sized from the data.
    reg_lambda : float, default=1e-5
        Strength of the regularization rewarding ``W_g != W_r`` (the paper's
        best value on LabelMe and Music). 0 disables it.
    reg_norm : {"fro", "fro_squared"}, default="fro"
        Distance between ``W_g`` and each ``W_r``: the Frobenius norm (the
        authors' public code) or its square (the paper's formula ``-lambda
        sum_r ||W_g - W_r||^2``). The term is *subtracted* from the loss: it
        rewards moving the layers apart and is unbounded below either way.
        With the plain norm its pull is constant; squared, the pull grows
        with the distance and eventually outweighs the cross-entropy, whose
        gradient stays bounded, so training diverges: on a two-class toy
        problem (300 full-batch Adam epochs, ``reg_lambda=1e-3``) the
        training loss fell to -40 with "fro_squared" and stayed at +0.42
        with "fro". Hence "fro" by default.
    embedding_dim : int, default=20
        Dimension of the instance and annotator embeddings of the auxiliary
        network (the paper searches 20-80).
    annotator_features : array-like of shape (n_workers, n_annotator_features), default=None
        Features of the annotators, one row per worker (column of the
        votes). ``None``: each annotator is embedded from its one-hot code.
{shared}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, from the votes (or ``classes``).
    n_workers_ : int
        Number of workers.
    n_features_in_ : int
        Number of features of ``X``.
    module_ : torch.nn.Module
        The fitted backbone.
    noise_model_ : CommonNoiseAdaptation
        Noise adaptation layers and auxiliary network.
    annotator_confusions_ : ndarray of shape (n_workers, n_classes, n_classes)
        Individual confusions, row softmax of ``W_r`` (rows = true class, as
        in :attr:`skcrowd.DawidSkene.confusion_matrices_`).
    common_confusion_ : ndarray of shape (n_classes, n_classes)
        Common confusion, row softmax of ``W_g``.
    history_ : skorch.History
        Losses and ``valid_acc`` per epoch.
{shared_attributes}

    See Also
    --------
    CrowdLayerClassifier : individual confusions only.

    References
    ----------
    Chu, Z., Ma, J. and Wang, H. (2021). Learning from crowds by modeling
    common confusions. AAAI.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.neural import CoNALClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.normal(-2, 1, (50, 2)), rng.normal(2, 1, (50, 2))]
    >>> truth = np.r_[np.zeros(50, int), np.ones(50, int)]
    >>> votes = np.c_[truth, truth, 1 - truth]
    >>> clf = CoNALClassifier(max_epochs=60, lr=0.02, module__hidden_units=16,
    ...                       train_split=None, random_state=0).fit(X, votes)
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    >>> clf.common_confusion_.shape, clf.annotator_confusions_.shape
    ((2, 2), (3, 2, 2))
    """

    _crowd_parameter_constraints = {
        **CrowdNetClassifier._crowd_parameter_constraints,
        "reg_lambda": [Interval(Real, 0, None, closed="left")],
        "reg_norm": [StrOptions({"fro", "fro_squared"})],
        "embedding_dim": [Interval(Integral, 1, None, closed="left")],
        "annotator_features": [None, "array-like"],
    }

    def __init__(
        self,
        module=None,
        *,
        reg_lambda=1e-5,
        reg_norm="fro",
        embedding_dim=20,
        annotator_features=None,
        lr=1e-3,
        weight_decay=0.0,
        **kwargs,
    ):
        # constants, not "auto": the search on CoNAL's held-out vote likelihood cost 5.6 points on
        # audio_like and 1.0 on LabelMe (benchmarks/deep.py, 3 seeds)
        super().__init__(module, lr=lr, weight_decay=weight_decay, **kwargs)
        self.reg_lambda = reg_lambda
        self.reg_norm = reg_norm
        self.embedding_dim = embedding_dim
        self.annotator_features = annotator_features

    def _make_noise_model(self):
        features = self.annotator_features
        if features is not None:
            features = np.asarray(features, dtype=np.float32)
            if features.ndim != 2 or len(features) != self.n_workers_:
                raise ValueError(
                    f"annotator_features must have one row per worker: shape ({self.n_workers_}, "
                    f"n_annotator_features), got {features.shape}."
                )
            if not np.isfinite(features).all():
                row = int(np.argwhere(~np.isfinite(features))[0, 0])
                raise ValueError(f"annotator_features has a non-finite value for worker {row}.")
        return CommonNoiseAdaptation(
            self.n_workers_,
            len(self.classes_),
            self.n_inputs_,
            embedding_dim=self.embedding_dim,
            annotator_features=features,
        )

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """Cross-entropy of the observed votes, minus the regularization when training."""
        loss = super().get_loss(y_pred, y_true, X=X, training=training)
        if not training or self.reg_lambda == 0:
            return loss
        distances = self.noise_model_.difference_norms()
        if self.reg_norm == "fro_squared":
            distances = distances**2
        return loss - self.reg_lambda * distances.sum()

    @property
    def annotator_confusions_(self):
        check_is_fitted(self)
        return self.noise_model_.confusions().cpu().numpy().astype(np.float64)

    @property
    def common_confusion_(self):
        check_is_fitted(self)
        return self.noise_model_.common_confusion().cpu().numpy().astype(np.float64)


CoNALClassifier.__doc__ = CoNALClassifier.__doc__.replace(
    "{shared}", SHARED_PARAMETERS_DOC.strip("\n").replace(
        'lr : float or "auto", default="auto"', 'lr : float or "auto", default=1e-3').replace(
        'weight_decay : float or "auto", default="auto"',
        'weight_decay : float or "auto", default=0.0').replace(
        "``weight_decay`` argument gets none.\n",
        "``weight_decay`` argument gets none. CoNAL keeps the constants 1e-3\n"
        "        and 0 by default: the search on its held-out vote likelihood scored\n"
        "        5.6 points below them on a simulated crowd and 1.0 on LabelMe\n"
        "        (:ref:`benchmarks_deep_auto`); pass ``\"auto\"`` to search anyway.\n")
).replace("{shared_attributes}", SHARED_ATTRIBUTES_DOC.strip("\n"))
