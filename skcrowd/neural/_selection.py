"""Choosing the number of epochs on held-out votes: the best epoch, kept.

When a net's ``train_split`` holds tasks out, their votes score every epoch;
:class:`HeldOutSelection` keeps the weights of the best-scoring epoch (of
every module, the noise model included: skorch's ``EarlyStopping`` restores
only ``module_``), stops after ``patience`` epochs without improvement, and
puts them back at the end of training. The net then refits on every task for
that many epochs when its ``refit`` is true (``CrowdNetMixin._fit_targets``).
"""

import copy

from skorch.callbacks import Callback

__all__ = ["HeldOutSelection"]


class HeldOutSelection(Callback):
    """Keep the best epoch on the held-out votes; stop after ``patience`` epochs without gain.

    A default callback of skcrowd's nets (``"held_out_selection"``): it does
    nothing when ``train_split`` leaves no task out. It stops training as
    skorch's ``EarlyStopping`` does, by raising ``KeyboardInterrupt`` (which
    skorch catches), and tells the net so (``net._stopped_early``): a
    ``KeyboardInterrupt`` without that mark is a user's interrupt.

    Parameters
    ----------
    monitor : str
        History key scored on the held-out tasks (``"valid_loss"``,
        ``"valid_acc"``).
    lower_is_better : bool
        Whether lower values of ``monitor`` are better.
    patience : int or None
        Epochs without a strict improvement before training stops; None
        trains for ``max_epochs`` and still keeps the best epoch.

    Attributes
    ----------
    best_epoch_ : int or None
        1-based epoch (of this training run) with the best score, None when
        nothing was scored.
    best_score_ : float or None
        Its score.

    Examples
    --------
    The nets hold 20 % of the tasks out by default; with ``refit=False`` the
    fitted net is the one of the best epoch on their votes:

    >>> import numpy as np
    >>> from skcrowd.neural import CrowdLayerClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 2))
    >>> truth = (X[:, 0] > 0).astype(int)
    >>> votes = np.c_[truth, truth, 1 - truth]
    >>> net = CrowdLayerClassifier(max_epochs=300, patience=5, refit=False, lr=0.05,
    ...                            module__hidden_units=8, random_state=0).fit(X, votes)
    >>> losses = net.history[:, "valid_loss"]
    >>> bool(net.best_epoch_ == np.argmin(losses) + 1), len(losses) == net.best_epoch_ + 5
    (True, True)
    """

    def __init__(self, monitor, lower_is_better, patience):
        self.monitor = monitor
        self.lower_is_better = lower_is_better
        self.patience = patience

    def on_train_begin(self, net, **kwargs):
        self.best_epoch_, self.best_score_, self._best_state = None, None, None
        self._first_epoch = len(net.history)  # epochs loaded by a checkpoint are not chosen from
        self._misses = 0
        net._stopped_early = False

    def on_epoch_end(self, net, dataset_valid=None, **kwargs):
        if dataset_valid is None:
            return
        score = float(net.history[-1, self.monitor])
        better = self.best_score_ is None or (
            score < self.best_score_ if self.lower_is_better else score > self.best_score_
        )
        if better:
            self.best_score_ = score
            self.best_epoch_ = len(net.history) - self._first_epoch
            self._best_state = {
                name: copy.deepcopy(getattr(net, name + "_").state_dict())
                for name in net._modules
            }
            self._misses = 0
            return
        self._misses += 1
        if self.patience is not None and self._misses >= self.patience:
            net._stopped_early = True
            raise KeyboardInterrupt

    def on_train_end(self, net, **kwargs):
        if self._best_state is None:
            return
        for name, state in self._best_state.items():
            getattr(net, name + "_").load_state_dict(state)
        self._best_state = None  # data-free: only the chosen weights stay, in the net
