"""Losses on observed votes.

The votes of a mini-batch arrive as a dense ``(batch, n_workers)`` tensor of
class indices with ``-1`` for a missing vote. :func:`observed_votes` turns it
into the observed ``(task, worker, label)`` triplets; the noise models and
losses only ever see those, so a missing vote contributes nothing.
"""

import torch
from torch import nn
from torch.nn import functional as F


def observed_votes(votes):
    """``(task, worker, label)`` of the observed entries of a dense votes tensor.

    Parameters
    ----------
    votes : torch.Tensor of shape (n_tasks, n_workers)
        Class indices with ``-1`` for missing (classification), or floats with
        NaN for missing (regression).

    Returns
    -------
    task, worker : torch.Tensor of shape (n_votes,), dtype int64
        Row and column of each observed entry, in row-major order.
    label : torch.Tensor of shape (n_votes,)
        The entries themselves.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import observed_votes
    >>> [t.tolist() for t in observed_votes(torch.tensor([[0, -1], [-1, 2]]))]
    [[0, 1], [0, 1], [0, 2]]
    """
    observed = ~torch.isnan(votes) if votes.is_floating_point() else votes >= 0
    task, worker = observed.nonzero(as_tuple=True)
    return task, worker, votes[task, worker]


class MaskedMultiCrossEntropy(nn.Module):
    """Cross-entropy of the observed votes, averaged over the observed votes.

    The "masked multi cross-entropy" of Rodrigues & Pereira (2018) and of the
    softmax-CrowdLayer system paper (SemEval-2021 task 12): each observed
    vote ``y_ri`` contributes ``-log softmax(a_ri)[y_ri]`` for its
    annotator's vote logits ``a_ri``; missing votes contribute nothing, and
    the sum is divided by the number of observed votes of the batch (not by
    ``batch x n_workers``). A batch without any vote gives a loss of 0, not
    NaN.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import MaskedMultiCrossEntropy
    >>> logits = torch.log(torch.tensor([[0.5, 0.5], [0.25, 0.75]]))
    >>> loss = MaskedMultiCrossEntropy()(logits, torch.tensor([0, 1]))
    >>> round(loss.item(), 4)  # -(log .5 + log .75) / 2
    0.4904
    """

    def forward(self, vote_logits, labels):
        log_proba = F.log_softmax(vote_logits, dim=-1)
        nll = -log_proba.gather(1, labels.long().unsqueeze(1)).sum()
        return nll / max(len(labels), 1)


class MaskedMSE(nn.Module):
    """Squared error of the observed continuous answers, averaged over them (0 when none).

    The loss of :class:`CrowdLayerRegressor`: it receives each observed
    answer's prediction and value only, so missing answers (NaN) contribute
    nothing.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import MaskedMSE
    >>> MaskedMSE()(torch.tensor([1.0, 2.0]), torch.tensor([0.0, 4.0])).item()
    2.5
    """

    def forward(self, predicted_votes, votes):
        return ((predicted_votes - votes) ** 2).sum() / max(len(votes), 1)


class SoftNLLLoss(nn.NLLLoss):
    """Cross-entropy against class-probability targets, from log-probabilities.

    ``-(target * input).sum(-1)`` averaged over the batch, for modules whose
    outputs are probabilities: a subclass of ``torch.nn.NLLLoss``, so skorch's
    ``NeuralNetClassifier`` takes the log of the outputs first, as it does for
    ``NLLLoss``. (Modules that output logits need no special loss:
    ``torch.nn.CrossEntropyLoss`` accepts probability targets.)

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import SoftNLLLoss
    >>> log_proba = torch.log(torch.tensor([[0.5, 0.5], [0.9, 0.1]]))
    >>> target = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
    >>> round(SoftNLLLoss()(log_proba, target).item(), 4)  # (log 2 + (-log .9 - log .1) / 2) / 2
    0.9486
    """

    def forward(self, input, target):
        return -(target * input).sum(dim=-1).mean()
