"""Torch modules: the default backbone and the annotator-noise models.

Every noise model maps the backbone's class logits to per-vote logits for the
*observed* votes only: it receives the batch's class logits, the batch inputs
and the ``(task, worker)`` index of each observed vote, and returns a
``(n_votes, n_classes)`` tensor whose log-softmax is the log-probability of
each possible vote. No ``tasks x workers x classes`` tensor is ever built.

Weight matrices follow the confusion-matrix convention of
:class:`skcrowd.DawidSkene`: row ``c`` is the true class, column ``l`` the
vote, so an annotator's vote logits are ``sigma @ W`` for the bottleneck's
class probabilities ``sigma``.
"""

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

CROWD_LAYERS = ("MW", "VW", "VB", "VW+B", "softmax")
REGRESSION_CROWD_LAYERS = ("S", "B", "S+B")


class MLP(nn.Module):
    """One hidden layer perceptron returning class logits.

    The backbone of Rodrigues & Pereira (2018) and Chu et al. (2021) on
    LabelMe's VGG16 features: fully connected layer, optional batch
    normalization (Chu et al. use it in every layer on the Music data), ReLU,
    dropout, output layer. Inputs with more than two dimensions are
    flattened per sample.

    Parameters
    ----------
    n_features : int
        Number of input features (after flattening).
    n_outputs : int
        Number of outputs: classes for classifiers, 1 for regression.
    hidden_units : int, default=128
        Width of the hidden layer.
    dropout : float, default=0.5
        Dropout probability after the hidden layer.
    batch_norm : bool, default=False
        Batch normalization of the hidden layer, before the ReLU. A training
        batch of a single sample (the last one of an epoch, say) is
        normalized with the running statistics instead of failing.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import MLP
    >>> MLP(4, 3, hidden_units=8)(torch.zeros(2, 4)).shape
    torch.Size([2, 3])
    """

    def __init__(self, n_features, n_outputs, *, hidden_units=128, dropout=0.5, batch_norm=False):
        super().__init__()
        self.hidden = nn.Linear(n_features, hidden_units)
        self.batch_norm = nn.BatchNorm1d(hidden_units) if batch_norm else None
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(hidden_units, n_outputs)

    def forward(self, X):
        h = self.hidden(X.reshape(X.shape[0], -1))
        bn = self.batch_norm
        if bn is not None and self.training and len(h) == 1:
            # one sample has no batch statistics: use the running ones
            h = F.batch_norm(h, bn.running_mean, bn.running_var, bn.weight, bn.bias,
                             training=False, eps=bn.eps)
        elif bn is not None:
            h = bn(h)
        return self.output(self.dropout(F.relu(h)))


def mixture_log_proba(class_log_proba, log_confusions):
    """Log-probability of each vote under a confusion-matrix noise model.

    ``log p(vote = l) = logsumexp_c(log p(z = c) + log T[c, l])``, computed
    row by row for ``class_log_proba`` of shape ``(n, K)`` and
    ``log_confusions`` of shape ``(n, K, K)`` (one matrix per vote).
    """
    return torch.logsumexp(class_log_proba.unsqueeze(-1) + log_confusions, dim=1)


def _softmax_identity_logits(n_workers, n_classes, diagonal=0.9):
    """Weights whose row softmax has ``diagonal`` on the diagonal."""
    off = (1.0 - diagonal) / max(n_classes - 1, 1)
    scale = math.log(diagonal / off)
    return scale * torch.eye(n_classes).expand(n_workers, n_classes, n_classes).clone()


class NoNoise(nn.Module):
    """The absence of a noise model: every vote is taken as a sample of the true class.

    Each observed vote's logits are its task's class logits, so the masked
    cross-entropy is the plain cross-entropy of the votes (of the labels, for
    one label per task). Used by :class:`PlainNetClassifier`.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import NoNoise
    >>> NoNoise()(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), None, torch.tensor([1, 1]), None)
    tensor([[3., 4.],
            [3., 4.]])
    """

    def forward(self, class_logits, x, task, worker):
        """Class logits of each observed vote's task."""
        return class_logits[task]


class CrowdLayer(nn.Module):
    """Annotator-specific maps from the bottleneck to each annotator's votes.

    With ``sigma`` the bottleneck's class probabilities, annotator ``r``'s vote
    logits are (Rodrigues & Pereira, 2018, parameters initialised to the
    identity map):

    - ``"MW"``: ``sigma @ W_r``, a ``K x K`` matrix per annotator;
    - ``"VW"``: ``w_r * sigma``, a per-class scale;
    - ``"VB"``: ``sigma + b_r``, a per-class bias;
    - ``"VW+B"``: ``w_r * sigma + b_r``;
    - ``"softmax"``: the softmax-CrowdLayer (SemEval-2021 task 12 system paper):
      each annotator's map is normalised by a softmax, ``T_r =
      softmax(W_r)`` row by row, and the vote probabilities are ``sigma @
      T_r``, a proper mixture over the true class. ``T_r`` starts with 0.9 on
      the diagonal.

    Parameters
    ----------
    n_workers, n_classes : int
        Number of annotators and classes.
    kind : {"MW", "VW", "VB", "VW+B", "softmax"}, default="MW"
        The annotator map.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import CrowdLayer
    >>> layer = CrowdLayer(n_workers=3, n_classes=2, kind="MW")
    >>> class_logits = torch.log(torch.tensor([[0.8, 0.2]]))  # one task
    >>> task, worker = torch.tensor([0, 0]), torch.tensor([0, 2])  # two of its votes
    >>> layer(class_logits, None, task, worker)  # identity at init: sigma itself
    tensor([[0.8000, 0.2000],
            [0.8000, 0.2000]], grad_fn=<SqueezeBackward1>)
    >>> layer.confusions().shape
    torch.Size([3, 2, 2])
    """

    def __init__(self, n_workers, n_classes, kind="MW"):
        super().__init__()
        if kind not in CROWD_LAYERS:
            raise ValueError(f"crowd layer kind must be one of {CROWD_LAYERS}, got {kind!r}.")
        self.kind = kind
        self.n_workers, self.n_classes = n_workers, n_classes
        if kind == "MW":
            eye = torch.eye(n_classes).expand(n_workers, n_classes, n_classes)
            self.weight = nn.Parameter(eye.clone())
        elif kind == "softmax":
            self.weight = nn.Parameter(_softmax_identity_logits(n_workers, n_classes))
        if kind in ("VW", "VW+B"):
            self.scale = nn.Parameter(torch.ones(n_workers, n_classes))
        if kind in ("VB", "VW+B"):
            self.bias = nn.Parameter(torch.zeros(n_workers, n_classes))

    def forward(self, class_logits, x, task, worker):
        """Vote logits ``(n_votes, K)`` of the observed votes ``(task, worker)``.

        ``x`` (the batch inputs) is unused: the crowd layer sees the
        bottleneck only.
        """
        logits = class_logits[task]
        if self.kind == "softmax":
            log_t = F.log_softmax(self.weight[worker], dim=-1)
            return mixture_log_proba(F.log_softmax(logits, dim=-1), log_t)
        return self._map(F.softmax(logits, dim=-1), worker)

    def _map(self, sigma, worker):
        """Annotator maps ``f_r(sigma)`` of the non-softmax variants."""
        if self.kind == "MW":
            return torch.bmm(sigma.unsqueeze(1), self.weight[worker]).squeeze(1)
        out = sigma * self.scale[worker] if "VW" in self.kind else sigma
        return out + self.bias[worker] if "B" in self.kind else out

    @torch.no_grad()
    def confusions(self):
        """Row-stochastic ``(n_workers, K, K)`` annotator confusion matrices.

        Row ``c`` of annotator ``r`` is the layer's vote distribution when the
        bottleneck puts all its mass on class ``c``: ``softmax(f_r(e_c))``
        (``T_r`` itself for the softmax-CrowdLayer).
        """
        if self.kind == "softmax":
            return F.softmax(self.weight, dim=-1)
        params = next(self.parameters())
        eye = torch.eye(self.n_classes, device=params.device, dtype=params.dtype)
        worker = torch.arange(self.n_workers, device=params.device)
        rows = [
            F.softmax(self._map(eye[c].expand(self.n_workers, -1), worker), dim=-1)
            for c in range(self.n_classes)
        ]
        return torch.stack(rows, dim=1)


class CommonNoiseAdaptation(nn.Module):
    """CoNAL's noise adaptation layers and auxiliary network (Chu et al., 2021).

    A common confusion ``W_g`` shared by all annotators and an individual one
    ``W_r`` per annotator, both identity-initialised, mixed per (instance,
    annotator) by ``omega_ri = sigmoid(u_r . v_i)`` where ``v_i`` embeds the
    instance's raw features and ``u_r`` the annotator (one-hot by default, or
    annotator features), both normalised to unit length as in the paper, so
    ``omega`` lies in ``[sigmoid(-1), sigmoid(1)] = [0.27, 0.73]``::

        p(vote | x_i) = omega_ri softmax(sigma_i @ W_g) + (1 - omega_ri) softmax(sigma_i @ W_r)

    Parameters
    ----------
    n_workers, n_classes, n_features : int
        Number of annotators, classes and (flattened) input features.
    embedding_dim : int, default=20
        Dimension of the instance and annotator embeddings.
    annotator_features : ndarray of shape (n_workers, n_annotator_features), default=None
        Features of the annotators; ``None`` embeds their one-hot encoding.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import CommonNoiseAdaptation
    >>> noise = CommonNoiseAdaptation(n_workers=3, n_classes=2, n_features=4)
    >>> x, class_logits = torch.randn(5, 4), torch.randn(5, 2)
    >>> task, worker = torch.tensor([0, 0, 4]), torch.tensor([0, 1, 2])
    >>> log_votes = noise(class_logits, x, task, worker)  # one vote distribution per row
    >>> log_votes.shape, bool(torch.allclose(log_votes.exp().sum(-1), torch.ones(3)))
    (torch.Size([3, 2]), True)
    """

    def __init__(
        self, n_workers, n_classes, n_features, *, embedding_dim=20, annotator_features=None
    ):
        super().__init__()
        eye = torch.eye(n_classes)
        self.common = nn.Parameter(eye.clone())
        self.individual = nn.Parameter(eye.expand(n_workers, n_classes, n_classes).clone())
        self.instance_embedding = nn.Linear(n_features, embedding_dim)
        if annotator_features is None:
            # W_u e_r + b_u for a one-hot e_r is a free vector per annotator.
            self.annotator_embedding = nn.Embedding(n_workers, embedding_dim)
            self.register_buffer("annotator_features", None)
        else:
            features = torch.as_tensor(annotator_features, dtype=torch.float32)
            self.annotator_embedding = nn.Linear(features.shape[1], embedding_dim)
            self.register_buffer("annotator_features", features)

    def common_logit(self, x, task, worker):
        """``u_r . v_i`` (unit embeddings) of each observed vote; omega is its sigmoid."""
        v = F.normalize(self.instance_embedding(x.reshape(len(x), -1)), dim=-1)[task]
        annotator = worker if self.annotator_features is None else self.annotator_features[worker]
        u = F.normalize(self.annotator_embedding(annotator), dim=-1)
        return (u * v).sum(-1)

    def forward(self, class_logits, x, task, worker):
        """Vote log-probabilities ``(n_votes, K)`` of the observed votes."""
        sigma = F.softmax(class_logits[task], dim=-1)
        log_common = F.log_softmax(sigma @ self.common, dim=-1)
        log_individual = F.log_softmax(
            torch.bmm(sigma.unsqueeze(1), self.individual[worker]).squeeze(1), dim=-1
        )
        s = self.common_logit(x, task, worker).unsqueeze(-1)
        return torch.logaddexp(F.logsigmoid(s) + log_common, F.logsigmoid(-s) + log_individual)

    def difference_norms(self):
        """Frobenius norms ``||W_g - W_r||`` of every annotator, shape ``(n_workers,)``."""
        return torch.linalg.matrix_norm(self.common - self.individual)

    @torch.no_grad()
    def confusions(self):
        """Individual confusions ``softmax(W_r)`` row by row, ``(n_workers, K, K)``."""
        return F.softmax(self.individual, dim=-1)

    @torch.no_grad()
    def common_confusion(self):
        """Common confusion ``softmax(W_g)`` row by row, ``(K, K)``."""
        return F.softmax(self.common, dim=-1)


class ConfusionNoise(nn.Module):
    """Dawid-Skene noise with fixed confusion matrices (deep EM's M-step sets them).

    ``p(vote = l | x) = sum_c p(z = c | x) pi_r[c, l]``. The log-confusions are
    a buffer, not a parameter: gradients never reach them. They start
    uniform.

    Parameters
    ----------
    n_workers, n_classes : int
        Number of annotators and classes.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import ConfusionNoise
    >>> noise = ConfusionNoise(n_workers=1, n_classes=2)
    >>> _ = noise.log_confusions.copy_(torch.log(torch.tensor([[[0.9, 0.1], [0.2, 0.8]]])))
    >>> class_logits = torch.log(torch.tensor([[0.5, 0.5]]))
    >>> noise(class_logits, None, torch.tensor([0]), torch.tensor([0])).exp()
    tensor([[0.5500, 0.4500]])
    """

    def __init__(self, n_workers, n_classes):
        super().__init__()
        uniform = torch.full((n_workers, n_classes, n_classes), -math.log(n_classes))
        self.register_buffer("log_confusions", uniform)

    def forward(self, class_logits, x, task, worker):
        """Vote log-probabilities ``(n_votes, K)`` of the observed votes."""
        return mixture_log_proba(
            F.log_softmax(class_logits[task], dim=-1), self.log_confusions[worker]
        )

    @torch.no_grad()
    def confusions(self):
        return self.log_confusions.exp()


class RegressionCrowdLayer(nn.Module):
    """Per-annotator scale and/or bias on a regression bottleneck (Rodrigues & Pereira, 2018).

    Annotator ``r``'s expected answer is ``s_r * mu`` (``"S"``), ``mu + b_r``
    (``"B"``) or ``s_r * mu + b_r`` (``"S+B"``), with ``s_r = 1`` and ``b_r =
    0`` at initialisation. The bottleneck is the crowd's average annotator:
    the scales are held at a weighted mean of 1 and the biases at a weighted
    mean of 0 (the parameters ``scale`` and ``bias`` are free; the layer uses
    them divided by, or less, their weighted mean). Without this, ``mu + c``
    with every ``b_r - c`` (and ``a mu`` with every ``s_r / a``) explains the
    answers as well, and training leaves ``mu`` off by whatever ``c`` the
    start and the optimizer give it: about one point on a 1-10 scale on
    real movie-review ratings (``benchmarks/movie_reviews.py``). The same
    assumption makes a net trained on the mean answer unbiased.

    Parameters
    ----------
    n_workers : int
        Number of annotators.
    kind : {"S", "B", "S+B"}, default="S+B"
        Scale, bias or both.
    weights : array-like of shape (n_workers,), default=None
        Non-negative weight of each annotator in the means held fixed (the
        regressor passes each annotator's share of the answers). None: equal
        weights.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import RegressionCrowdLayer
    >>> layer = RegressionCrowdLayer(n_workers=2, kind="B")
    >>> with torch.no_grad():
    ...     _ = layer.bias.copy_(torch.tensor([0.0, 2.0]))  # used as -1 and 1: mean 0
    >>> layer(torch.tensor([[3.0]]), None, torch.tensor([0, 0]), torch.tensor([0, 1]))
    tensor([2., 4.], grad_fn=<AddBackward0>)
    """

    def __init__(self, n_workers, kind="S+B", weights=None):
        super().__init__()
        if kind not in REGRESSION_CROWD_LAYERS:
            raise ValueError(
                f"regression crowd layer kind must be one of {REGRESSION_CROWD_LAYERS}, "
                f"got {kind!r}."
            )
        self.kind = kind
        weights = (torch.ones(n_workers) if weights is None
                   else torch.as_tensor(np.asarray(weights, dtype=np.float32)))
        if weights.shape != (n_workers,) or not torch.all(weights >= 0) or weights.sum() <= 0:
            raise ValueError(f"weights must be {n_workers} non-negative numbers, not all zero.")
        self.register_buffer("weights", weights / weights.sum())
        if "S" in kind:
            self.scale = nn.Parameter(torch.ones(n_workers))
        if "B" in kind:
            self.bias = nn.Parameter(torch.zeros(n_workers))

    def annotator_parameters(self):
        """``(scales, biases)`` as the layer uses them (weighted means 1 and 0); ``None`` for
        the one the kind lacks."""
        scale = self.scale / (self.weights * self.scale).sum() if "S" in self.kind else None
        bias = self.bias - (self.weights * self.bias).sum() if "B" in self.kind else None
        return scale, bias

    def forward(self, mu, x, task, worker):
        """Expected answers ``(n_votes,)`` of the observed votes."""
        scale, bias = self.annotator_parameters()
        out = mu.reshape(len(mu))[task]
        if scale is not None:
            out = out * scale[worker]
        return out if bias is None else out + bias[worker]


class GRUTagger(nn.Module):
    """Bidirectional GRU returning per-token class logits.

    The default backbone of :class:`SequenceCrowdLayerClassifier`, after the
    recurrent tagger of Rodrigues & Pereira (2018) on CoNLL NER (their GRU
    has 50 units; the word embeddings are the input features here).

    Parameters
    ----------
    n_features : int
        Number of features of each token.
    n_classes : int
        Number of tags.
    hidden_units : int, default=50
        GRU state size per direction.
    dropout : float, default=0.5
        Dropout probability on the GRU outputs.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import GRUTagger
    >>> GRUTagger(3, 4, hidden_units=5)(torch.zeros(2, 7, 3)).shape
    torch.Size([2, 7, 4])
    """

    def __init__(self, n_features, n_classes, *, hidden_units=50, dropout=0.5):
        super().__init__()
        self.gru = nn.GRU(n_features, hidden_units, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(2 * hidden_units, n_classes)

    def forward(self, X):
        states, _ = self.gru(X)
        return self.output(self.dropout(states))
