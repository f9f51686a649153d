"""SequenceCrowdLayerClassifier: a per-token crowd layer for sequence labelling."""

import warnings
from numbers import Real

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ..votes import check_not_long_format
from ._base import SHARED_ATTRIBUTES_DOC, SHARED_PARAMETERS_DOC
from ._crowdlayer import CrowdLayerClassifier
from ._modules import GRUTagger

__all__ = ["SequenceCrowdLayerClassifier"]


class SequenceCrowdLayerClassifier(CrowdLayerClassifier):
    """Sequence labelling from crowd votes with a per-token crowd layer (Rodrigues & Pereira, 2018).

    Every token is a task: the backbone maps a batch of sequences to
    per-token class logits ``(batch, seq_len, n_classes)``, the crowd layer
    maps each token's bottleneck to each annotator's vote logits, and the
    masked multi-annotator cross-entropy is averaged over the observed token
    votes (the paper's named-entity-recognition experiment). Padding is
    marked with ``missing_label`` in the votes: padded tokens have no vote
    and contribute nothing; their predictions are meaningless and should be
    masked by the caller.

    Parameters
    ----------
    module : torch.nn.Module class or instance, default=None
        Backbone mapping a batch of ``X`` to ``(batch, seq_len, n_classes)``
        logits. ``None``: :class:`GRUTagger` (bidirectional GRU, 50 units
        per direction), for ``X`` of shape ``(n_sequences, seq_len,
        n_features)`` (e.g. word embeddings). Token ids (integer ``X``) need a
        module with an embedding layer.
    crowd_layer : {"MW", "VW", "VB", "VW+B", "softmax"}, default="MW"
        Annotator function, as in :class:`CrowdLayerClassifier`.
    crowd_layer_scale : float or "auto", default="auto"
        Scale ``s`` of the crowd layer's initial map: ``"MW"`` starts at
        ``s`` times the identity, ``"VW"`` and ``"VW+B"`` at a scale vector
        of ``s`` (``"VB"`` and ``"softmax"`` have no scale: 1). 1 is the
        paper's identity. ``"auto"`` takes ``s = max(1, 2 L)``, where ``L =
        log(pi (K - 1) / (1 - pi))`` are the log-odds of the most frequent
        tag's share ``pi`` of the votes among ``K`` tags: a bottleneck at
        half its range then reaches the votes' tag prior. From the identity,
        the vote logits ``sigma @ W_r`` span at most 1, so with a dominant tag
        (``O``: 87 % of the CoNLL-2003 crowd's votes, ``s`` = 7.9) the
        bottleneck saturates on it within the first epoch and every token
        is tagged with it; on balanced votes ``"auto"`` is the identity.
        The value used is ``crowd_layer_scale_``.
{shared}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Tags, from the votes (or ``classes``).
    n_workers_ : int
        Number of workers.
    module_ : torch.nn.Module
        The fitted backbone.
    noise_model_ : CrowdLayer
        The fitted crowd layer.
    annotator_confusions_ : ndarray of shape (n_workers, n_classes, n_classes)
        Row-stochastic confusion matrices (see :class:`CrowdLayerClassifier`).
    crowd_layer_scale_ : float
        Scale of the crowd layer's initial map (see ``crowd_layer_scale``).
{shared_attributes}

    Notes
    -----
    ``fit(X, y)`` takes ``X`` of shape ``(n_sequences, seq_len, ...)`` and
    votes ``y`` of shape ``(n_sequences, seq_len, n_workers)`` (2-D: one
    worker). ``predict`` returns ``(n_sequences, seq_len)`` tags,
    ``predict_proba`` ``(n_sequences, seq_len, n_classes)``; ``score`` and
    ``valid_acc`` are token-level tie-aware accuracies against the majority
    vote. The train/valid split holds out whole sequences, unstratified.

    A fit whose tagger ends tagging every voted training token with one tag,
    when the votes hold several, warns (``ConvergenceWarning``): the
    bottleneck collapsed onto that tag.

    References
    ----------
    Rodrigues, F. and Pereira, F. C. (2018). Deep learning from crowds. AAAI.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.neural import SequenceCrowdLayerClassifier
    >>> rng = np.random.RandomState(0)
    >>> tags = rng.randint(0, 2, (40, 6))                  # 40 sequences of 6 tokens
    >>> X = np.eye(2)[tags] + rng.normal(0, 0.3, (40, 6, 2))
    >>> votes = np.stack([tags, tags, 1 - tags], axis=-1)   # worker 2 flips every tag
    >>> votes[:, 4:] = -1                                   # padding: no votes
    >>> clf = SequenceCrowdLayerClassifier(max_epochs=40, lr=0.02, train_split=None,
    ...                                    module__hidden_units=8, random_state=0)
    >>> clf.fit(X, votes).predict(X).shape
    (40, 6)
    >>> bool((clf.predict(X)[:, :4] == tags[:, :4]).mean() > 0.9)
    True
    """

    _crowd_parameter_constraints = {
        **CrowdLayerClassifier._crowd_parameter_constraints,
        "crowd_layer_scale": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(self, module=None, *, crowd_layer="MW", crowd_layer_scale="auto", **kwargs):
        super().__init__(module, crowd_layer=crowd_layer, **kwargs)
        self.crowd_layer_scale = crowd_layer_scale

    def _input_tags(self, tags):
        tags = super()._input_tags(tags)
        # sequences are 3-D: X (n_sequences, seq_len, ...), votes (n_sequences, seq_len, n_workers)
        tags.sparse = tags.two_d_array = False
        tags.three_d_array = True
        return tags

    def _validate_X(self, X, *, reset):
        X = validate_data(self, X, reset=reset, dtype="numeric", allow_nd=True)
        return X.astype(np.int64 if X.dtype.kind in "iub" else np.float32, copy=False)

    def _default_module(self, **kwargs):
        if not hasattr(self, "n_token_features_"):
            raise ValueError(
                "the default GRUTagger needs float X of shape (n_sequences, seq_len, "
                "n_features); pass a module for other inputs (e.g. an embedding for token ids)."
            )
        return GRUTagger(self.n_token_features_, len(self.classes_), **kwargs)

    def _check_fit_data(self, X, y, *, reset):
        X, targets = super()._check_fit_data(X, y, reset=reset)
        if reset:
            self.crowd_layer_scale_ = self._initial_scale(targets)
            if X.ndim == 3 and X.dtype == np.float32:
                self.n_token_features_ = X.shape[2]
            elif hasattr(self, "n_token_features_"):
                del self.n_token_features_
        return X, targets

    def _initial_scale(self, targets):
        """``crowd_layer_scale_``: the given scale, or ``"auto"``'s from the votes' tag shares."""
        if self.crowd_layer in ("VB", "softmax"):
            return 1.0
        if self.crowd_layer_scale != "auto":
            return float(self.crowd_layer_scale)
        n_classes = len(self.classes_)
        counts = np.bincount(targets[targets >= 0].astype(np.int64), minlength=n_classes)
        share = counts.max() / max(counts.sum(), 1)
        if n_classes < 2 or share >= 1:
            return 1.0
        log_odds = np.log(share * (n_classes - 1) / (1 - share))
        return float(max(1.0, 2 * log_odds))

    def _make_noise_model(self):
        layer = super()._make_noise_model()
        with torch.no_grad():
            for name in ("weight", "scale"):
                if hasattr(layer, name):  # the softmax-CrowdLayer's weight: scale 1
                    getattr(layer, name).mul_(self.crowd_layer_scale_)
        return layer

    def _fit_targets(self, X, targets, **fit_params):
        super()._fit_targets(X, targets, **fit_params)
        voted = (targets >= 0).any(axis=-1)
        tags = np.unique(self.predict_proba(X).argmax(axis=-1)[voted])
        n_voted_tags = len(np.unique(targets[targets >= 0]))
        if len(tags) == 1 and n_voted_tags > 1:
            tag = self.classes_[tags].tolist()[0]
            warnings.warn(
                f"{type(self).__name__} tags every voted training token {tag!r}, although the "
                f"votes hold {n_voted_tags} tags: its bottleneck collapsed onto one tag. Try "
                f"more epochs, a larger crowd_layer_scale (this fit: "
                f"{self.crowd_layer_scale_:.3g}), crowd_layer='softmax', or a backbone started "
                "from a tagger trained on the majority-vote tags.",
                ConvergenceWarning,
            )
        return self

    def _encode_votes(self, y, *, reset, name="y"):
        if y is None:
            return super()._encode_votes(y, reset=reset, name=name)
        check_not_long_format(y, name)  # np.asarray would read a long table as token votes
        votes = np.asarray(y)
        if votes.ndim == 2:
            votes = votes[:, :, None]
        if votes.ndim != 3:
            raise ValueError(
                f"{name} must hold the votes of each token, shape (n_sequences, seq_len, "
                f"n_workers), got shape {votes.shape}."
            )
        n_sequences, seq_len, n_workers = votes.shape
        encoded, targets = super()._encode_votes(
            votes.reshape(n_sequences * seq_len, n_workers), reset=reset,
            name=f"{name} (tokens flattened: row = sequence * {seq_len} + position)",
        )
        return encoded, targets.reshape(n_sequences, seq_len, n_workers)

    def _check_lengths(self, X, targets):
        super()._check_lengths(X, targets)
        if X.ndim < 2 or X.shape[1] != targets.shape[1]:
            raise ValueError(
                f"X has sequences of length {X.shape[1] if X.ndim > 1 else None} but y has "
                f"{targets.shape[1]} tokens per sequence; pad both to the same length."
            )

    def _stratification_labels(self, targets):
        return None

    def _item_votes(self, targets):
        return targets.reshape(-1, targets.shape[-1])

    def _vote_logits(self, outputs, targets, X):
        return super()._vote_logits(outputs.reshape(-1, outputs.shape[-1]), targets, X)


SequenceCrowdLayerClassifier.__doc__ = SequenceCrowdLayerClassifier.__doc__.replace(
    "{shared}", SHARED_PARAMETERS_DOC.strip("\n")
).replace("{shared_attributes}", SHARED_ATTRIBUTES_DOC.strip("\n"))
