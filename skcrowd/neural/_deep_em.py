"""DeepEMClassifier: EM with a network as the latent-class model (Rodrigues & Pereira, 2018)."""

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted
from torch.nn import functional as F

from ._base import (
    SHARED_ATTRIBUTES_DOC,
    SHARED_PARAMETERS_DOC,
    CrowdNetClassifier,
    _compact_int_dtype,
)
from ._losses import MaskedMultiCrossEntropy, observed_votes
from ._modules import ConfusionNoise

__all__ = ["DeepEMClassifier"]


class DeepEMClassifier(CrowdNetClassifier):
    """Deep EM: a network and Dawid-Skene confusions fitted by EM (Rodrigues & Pereira, 2018).

    The true class ``z_i`` of task ``i`` is latent with prior ``p(z_i | x_i)``
    given by the network; annotator ``r`` votes ``l`` with probability
    ``pi_r[z_i, l]``. Each EM step (every ``epochs_per_em_step`` epochs, at
    the start of the epoch):

    - **E-step**: the posterior ``q(z_i = c)`` proportional to ``p(z_i = c |
      x_i) prod_r pi_r[c, y_ri]`` over the observed votes (in log space), with
      the network in evaluation mode;
    - **M-step**: the MAP confusions from the expected counts ``sum_i q(z_i =
      c) 1{y_ri = l}`` with the Dirichlet prior of
      :class:`skcrowd.DawidSkene` (``smoothing``), and the network is trained
      on the posteriors with a soft cross-entropy until the next EM step.

    The first step of a training run starts from the vote frequencies of
    each task (soft majority vote). Tasks without votes do not contribute to training.

    Parameters
    ----------
    module : torch.nn.Module class or instance, default=None
        Network mapping a batch of ``X`` to class logits. ``None``:
        :class:`MLP` (128 units, ReLU, dropout 0.5) sized from the data.
    criterion : type of torch.nn.Module, default=torch.nn.CrossEntropyLoss
        Loss between the network's logits and the posteriors ``q`` (class
        probabilities as targets).
    smoothing : float, default=3.0
        Strength ``s >= 0`` of the Dirichlet prior on each confusion row
        ``k``: pseudo-counts ``s * (1{k == l} + 1 / K)``, as in
        :class:`skcrowd.DawidSkene`. Crowd annotators label few tasks, so the
        paper stresses MAP estimates over maximum likelihood.
    epochs_per_em_step : int, default=1
        Epochs of network training between EM steps (one EM step per epoch,
        the paper's schedule).
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
        The fitted network.
    noise_model_ : ConfusionNoise
        The confusion matrices of the last M-step (log space).
    annotator_confusions_ : ndarray of shape (n_workers, n_classes, n_classes)
        Confusion matrices of the last M-step, rows = true class, rows sum
        to one (comparable to :attr:`skcrowd.DawidSkene.confusion_matrices_`).
    n_em_steps_ : int
        Number of EM steps taken.
    history_ : skorch.History
        Losses and ``valid_acc`` per epoch. ``train_loss`` is the soft
        cross-entropy against the posteriors, ``valid_loss`` the negative
        log-likelihood of the held-out votes per vote.
{shared_attributes}

    See Also
    --------
    CrowdLayerClassifier : the same paper's backpropagation-only alternative.
    skcrowd.DawidSkene : the aggregator with the same noise model and prior.

    References
    ----------
    Rodrigues, F. and Pereira, F. C. (2018). Deep learning from crowds. AAAI.
    Albarqouni, S. et al. (2016). AggNet: deep learning from crowds for mitosis
    detection in breast cancer histology images. IEEE TMI.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.neural import DeepEMClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.normal(-2, 1, (50, 2)), rng.normal(2, 1, (50, 2))]
    >>> truth = np.r_[np.zeros(50, int), np.ones(50, int)]
    >>> votes = np.c_[truth, truth, 1 - truth]
    >>> clf = DeepEMClassifier(max_epochs=30, lr=0.02, module__hidden_units=16,
    ...                        train_split=None, random_state=0).fit(X, votes)
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    >>> clf.annotator_confusions_[2].round(1)  # the third worker flips every label
    array([[0.1, 0.9],
           [0.9, 0.1]])
    """

    _crowd_parameter_constraints = {
        **CrowdNetClassifier._crowd_parameter_constraints,
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "epochs_per_em_step": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        module=None,
        *,
        criterion=torch.nn.CrossEntropyLoss,
        smoothing=3.0,
        epochs_per_em_step=1,
        **kwargs,
    ):
        super().__init__(module, criterion=criterion, **kwargs)
        self.smoothing = smoothing
        self.epochs_per_em_step = epochs_per_em_step

    def _make_noise_model(self):
        self.n_em_steps_ = 0
        return ConfusionNoise(self.n_workers_, len(self.classes_))

    # Targets carry each task's row index (column 0) so that a batch finds its posteriors.

    def _targets(self, votes):
        largest = max(votes.n_tasks, votes.n_classes) - 1
        return np.column_stack([np.arange(votes.n_tasks), votes.to_dense()]).astype(
            _compact_int_dtype(largest)
        )

    def _item_votes(self, targets):
        return targets[:, 1:]

    # -- EM -------------------------------------------------------------------

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        super().on_train_begin(net, X=X, y=y, **kwargs)
        self._posterior_ = torch.zeros(len(y), len(self.classes_), device=self.device)

    def on_epoch_begin(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        super().on_epoch_begin(
            net, dataset_train=dataset_train, dataset_valid=dataset_valid, **kwargs
        )
        if (len(self.history) - 1) % self.epochs_per_em_step == 0:
            self._em_step(dataset_train)

    def on_train_end(self, net, X=None, y=None, **kwargs):
        super().on_train_end(net, X=X, y=y, **kwargs)
        del self._posterior_  # data-sized; not part of the fitted model

    @torch.no_grad()
    def _em_step(self, dataset):
        """E-step on the training tasks (vote frequencies at the first step), then M-step."""
        n_classes = len(self.classes_)
        noise = self.noise_model_
        counts = torch.zeros_like(noise.log_confusions)
        self._set_training(False)
        for Xi, yi in self.get_iterator(dataset, training=False):
            yi = yi.to(self.device)
            task, (t, w, label) = yi[:, 0].long(), observed_votes(self._item_votes(yi))
            label = label.long()
            if len(self.history) == 1:  # the first epoch (a resumed fit has a history)
                q = torch.zeros(len(yi), n_classes, device=self.device)
                q.index_put_((t, label), torch.ones_like(t, dtype=q.dtype), accumulate=True)
                q /= q.sum(dim=1, keepdim=True).clamp_min(1.0)  # tasks without votes stay 0
            else:
                log_q = F.log_softmax(self.infer(Xi).float(), dim=-1)
                log_q.index_add_(0, t, noise.log_confusions[w, :, label])
                q = torch.softmax(log_q, dim=-1)
            self._posterior_[task] = q
            classes = torch.arange(n_classes, device=self.device)
            counts.index_put_((w[:, None], classes[None, :], label[:, None]), q[t],
                              accumulate=True)
        eye = torch.eye(n_classes, device=self.device)
        counts += self.smoothing * (eye + 1.0 / n_classes)
        tiny = torch.finfo(counts.dtype).tiny
        total = counts.sum(dim=-1, keepdim=True)
        # a row without mass (possible only with smoothing=0) is uniform
        confusions = torch.where(total > 0, counts / total.clamp_min(tiny), 1.0 / n_classes)
        noise.log_confusions.copy_(torch.log(confusions.clamp_min(tiny)))
        self.n_em_steps_ += 1

    # -- loss -----------------------------------------------------------------

    def get_loss(self, y_pred, y_true, X=None, training=False):
        """Soft cross-entropy against the posteriors (training), held-out vote NLL (validation)."""
        if not training:
            return MaskedMultiCrossEntropy()(*self._vote_logits(y_pred, y_true, X))
        y_true = y_true.to(self.device)
        voted = (self._item_votes(y_true) >= 0).any(dim=1)
        if not voted.any():
            return y_pred.sum() * 0.0
        task = y_true[voted, 0].long()
        return self.criterion_(y_pred[voted], self._posterior_[task])

    @property
    def annotator_confusions_(self):
        check_is_fitted(self)
        return self.noise_model_.confusions().cpu().numpy().astype(np.float64)


DeepEMClassifier.__doc__ = DeepEMClassifier.__doc__.replace(
    "{shared}", SHARED_PARAMETERS_DOC.strip("\n")
).replace("{shared_attributes}", SHARED_ATTRIBUTES_DOC.strip("\n"))
