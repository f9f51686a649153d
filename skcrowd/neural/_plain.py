"""PlainNetClassifier: the crowd nets' backbone and training, without a noise model."""

from ._base import SHARED_ATTRIBUTES_DOC, SHARED_PARAMETERS_DOC, CrowdNetClassifier
from ._modules import NoNoise

__all__ = ["PlainNetClassifier"]


class PlainNetClassifier(CrowdNetClassifier):
    """The backbone alone, trained on every vote as if it were the true label.

    With one label per task (a 1-D ``y``: aggregated labels, or gold labels)
    this is plain supervised training of the network with cross-entropy: the
    classifier of the two-stage baselines,
    ``AggregatedTargetClassifier(PlainNetClassifier(), aggregator=MajorityVote())``
    ("DL-MV") or ``aggregator=DawidSkene()`` ("DL-DS"), trained, validated and
    regularized exactly as the crowd nets are (same default backbone,
    optimizer, held-out selection of the number of epochs, refit), so that
    comparisons with them are fair. With a votes matrix it fits every
    observed vote as a label (no annotator model).

    Parameters
    ----------
    module : torch.nn.Module class or instance, default=None
        Network mapping a batch of ``X`` to class logits. ``None``: the
        default :class:`MLP`, sized from the data.
{shared}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, from ``y`` (or ``classes``).
    n_workers_ : int
        Number of columns of ``y`` (1 for labels).
    n_features_in_ : int
        Number of features of ``X``.
    module_ : torch.nn.Module
        The fitted network.
    history_ : skorch.History
        Losses and ``valid_acc`` per epoch.
{shared_attributes}

    See Also
    --------
    skcrowd.AggregatedTargetClassifier : aggregate the votes, then train a classifier.
    CrowdLayerClassifier : the same network with a crowd layer.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd import AggregatedTargetClassifier, MajorityVote
    >>> from skcrowd.neural import PlainNetClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.normal(-2, 1, (50, 2)), rng.normal(2, 1, (50, 2))]
    >>> truth = np.r_[np.zeros(50, int), np.ones(50, int)]
    >>> votes = np.c_[truth, truth, 1 - truth]
    >>> net = PlainNetClassifier(max_epochs=30, lr=0.02, module__hidden_units=16,
    ...                          train_split=None, random_state=0)
    >>> clf = AggregatedTargetClassifier(net, aggregator=MajorityVote()).fit(X, votes)
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    """

    def _make_noise_model(self):
        return NoNoise()


PlainNetClassifier.__doc__ = PlainNetClassifier.__doc__.replace(
    "{shared}", SHARED_PARAMETERS_DOC.strip("\n")
).replace("{shared_attributes}", SHARED_ATTRIBUTES_DOC.strip("\n"))
