"""SequenceCrowdLayerClassifier: a per-token crowd layer for sequence labelling."""

import numpy as np
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
{shared_attributes}

    Notes
    -----
    ``fit(X, y)`` takes ``X`` of shape ``(n_sequences, seq_len, ...)`` and
    votes ``y`` of shape ``(n_sequences, seq_len, n_workers)`` (2-D: one
    worker). ``predict`` returns ``(n_sequences, seq_len)`` tags,
    ``predict_proba`` ``(n_sequences, seq_len, n_classes)``; ``score`` and
    ``valid_acc`` are token-level tie-aware accuracies against the majority
    vote. The train/valid split holds out whole sequences, unstratified.

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

    def _input_tags(self, tags):
        tags = super()._input_tags(tags)
        tags.sparse = False  # sequences are 3-D
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
            if X.ndim == 3 and X.dtype == np.float32:
                self.n_token_features_ = X.shape[2]
            elif hasattr(self, "n_token_features_"):
                del self.n_token_features_
        return X, targets

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
