"""Stepping a skorch net epoch by epoch through a callback (imports torch and skorch)."""

from __future__ import annotations

import numpy as np
import torch
from skorch.callbacks import Callback


class EpochHook(Callback):
    """Calls ``on_epoch(net)`` at the end of every training epoch."""

    def __init__(self, on_epoch):
        self.on_epoch = on_epoch

    def on_epoch_end(self, net, **kwargs):
        self.on_epoch(net)


def train_skorch_net(net, X_train, y_train, n_classes, n_epochs, on_epoch, seed):
    """Fit ``net`` for ``n_epochs`` epochs on all rows, calling ``on_epoch`` after each.

    The net trains on every row (``train_split=None``): the margins are those
    of the training data. ``classes`` is pinned to ``0 .. n_classes - 1`` so a
    class absent from these rows still has its column, and ``seed`` seeds
    torch's generators (CPU, and the GPUs of a CUDA net) without touching the
    caller's global state.
    """
    params = net.get_params(deep=False)
    callbacks = params.get("callbacks")
    callbacks = [] if callbacks in (None, "disable") else list(callbacks)
    updates = {
        "max_epochs": n_epochs,
        "train_split": None,
        "warm_start": False,
        "callbacks": [*callbacks, ("skcrowd_epoch_margins", EpochHook(on_epoch))],
    }
    if "classes" in params:
        updates["classes"] = np.arange(n_classes)
    if "verbose" in params:
        updates["verbose"] = 0
    net.set_params(**updates)
    on_cuda = str(params.get("device", "cpu")).startswith("cuda") and torch.cuda.is_available()
    devices = list(range(torch.cuda.device_count())) if on_cuda else []
    with torch.random.fork_rng(devices=devices):
        if seed is not None:
            torch.manual_seed(seed)
        net.fit(X_train, y_train)
