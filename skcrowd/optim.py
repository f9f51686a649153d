"""Sharpness-aware minimization (SAM) for torch and skorch.

SAM (Foret et al., ICLR 2021) seeks parameters whose whole neighbourhood has
a low loss, which makes training robust to noisy labels (used on
crowdsourced CIFAR-10 by a "Learning from disagreements" system paper,
SemEval-2021 task 12). Each step takes two forward/backward passes: one at
the weights ``w`` to find the ascent direction ``e(w) = rho g / ||g||``, one
at ``w + e(w)`` whose gradient the base optimizer applies to ``w``. ASAM
(Kwon et al., ICML 2021, ``adaptive=True``) scales the neighbourhood by
``|w|``.

Batch normalization: the second pass must not update the running statistics
(they would see every batch twice, once at perturbed weights). skcrowd's
nets freeze them during the second pass with :func:`frozen_batchnorm_stats`;
do the same in a hand-written loop.
"""

from contextlib import contextmanager

from ._optional import import_optional

torch = import_optional("torch", "skcrowd.optim (SAM)")

__all__ = ["SAM", "frozen_batchnorm_stats"]


class SAM(torch.optim.Optimizer):
    """Sharpness-aware minimization wrapping a base optimizer.

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups, as for any torch optimizer.
    base_optimizer : type of torch.optim.Optimizer, default=torch.optim.SGD
        The optimizer that applies the sharpness-aware gradient.
    rho : float, default=0.05
        Radius of the neighbourhood (for ASAM, typically 10 times larger).
    adaptive : bool, default=False
        ASAM: scale the neighbourhood element-wise by ``|w|``.
    **kwargs
        Passed to ``base_optimizer`` (``lr``, ``momentum``, ``weight_decay``...).

    Notes
    -----
    With skorch, ``optimizer=SAM, optimizer__base_optimizer=torch.optim.SGD,
    optimizer__rho=0.05`` plugs it into any net (``lr`` and the
    ``optimizer__*`` settings reach the base optimizer, whose parameter groups
    SAM shares). :meth:`step` takes a closure that zeroes the gradients,
    computes the loss and calls ``backward`` (the closure skorch and
    ``torch.optim.LBFGS`` use): it is evaluated twice. For hand-written loops,
    :meth:`first_step` and :meth:`second_step` split the step around the
    second pass.

    References
    ----------
    Foret, Kleiner, Mobahi, Neyshabur (2021). Sharpness-aware minimization for
    efficiently improving generalization. ICLR.
    Kwon, Kim, Park, Choi (2021). ASAM: adaptive sharpness-aware minimization
    for scale-invariant learning of deep neural networks. ICML.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.optim import SAM
    >>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    >>> opt = SAM([w], torch.optim.SGD, rho=0.1, lr=0.5)
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (w ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> round(opt.step(closure).item(), 4)  # the loss at w, before the step
    5.0
    >>> [round(v, 4) for v in w.tolist()]  # w - lr * 2 (w + rho g / |g|)
    [-0.0447, 0.0894]
    """

    def __init__(self, params, base_optimizer=torch.optim.SGD, *, rho=0.05, adaptive=False,
                 **kwargs):
        if not rho >= 0:
            raise ValueError(f"rho must be non-negative, got {rho!r}.")
        super().__init__(params, dict(rho=rho, adaptive=adaptive, **kwargs))
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)

    def _grad_norm(self):
        norms = [
            ((p.abs() if group["adaptive"] else 1.0) * p.grad).norm(p=2)
            for group in self.param_groups
            for p in group["params"]
            if p.grad is not None
        ]
        if not norms:
            return None
        device = norms[0].device
        return torch.stack([n.to(device) for n in norms]).norm(p=2)

    @torch.no_grad()
    def first_step(self):
        """Move the weights to ``w + e(w)`` (call after the first backward pass)."""
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12) if grad_norm is not None else 0.0
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = (p.pow(2) if group["adaptive"] else 1.0) * p.grad * scale.to(p)
                p.add_(e_w)
                self.state[p]["e_w"] = e_w

    @torch.no_grad()
    def second_step(self):
        """Restore ``w`` and apply the base optimizer with the gradient at ``w + e(w)``."""
        for group in self.param_groups:
            for p in group["params"]:
                e_w = self.state[p].pop("e_w", None)
                if e_w is not None:
                    p.sub_(e_w)
        self.base_optimizer.step()

    def step(self, closure=None):
        """Two-pass SAM step; returns the loss at the unperturbed weights.

        ``closure`` must zero the gradients, compute the loss, call
        ``backward`` and return the loss.
        """
        if closure is None:
            raise ValueError(
                "SAM.step needs a closure (it evaluates the loss twice); or call "
                "first_step() and second_step() around the second backward pass."
            )
        closure = torch.enable_grad()(closure)
        loss = closure()
        self.first_step()
        closure()
        self.second_step()
        return loss

    def state_dict(self):
        return self.base_optimizer.state_dict()

    def load_state_dict(self, state_dict):
        self.base_optimizer.load_state_dict(state_dict)
        self.param_groups = self.base_optimizer.param_groups


@contextmanager
def frozen_batchnorm_stats(*modules):
    """Keep the running statistics of every batch-norm layer unchanged inside the block.

    The layers still normalise each batch with its own statistics in training
    mode; only ``running_mean``, ``running_var`` and ``num_batches_tracked``
    are restored on exit. Use it around SAM's second forward pass.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.optim import frozen_batchnorm_stats
    >>> bn = torch.nn.BatchNorm1d(2)
    >>> with frozen_batchnorm_stats(bn):
    ...     _ = bn(torch.randn(8, 2))
    >>> bn.running_mean.tolist(), int(bn.num_batches_tracked)
    ([0.0, 0.0], 0)
    """
    saved = [
        (layer, {name: buf.clone() for name, buf in layer.named_buffers(recurse=False)
                 if buf is not None})
        for module in modules
        for layer in module.modules()
        if isinstance(layer, torch.nn.modules.batchnorm._BatchNorm)
    ]
    try:
        yield
    finally:
        with torch.no_grad():
            for layer, buffers in saved:
                for name, value in buffers.items():
                    getattr(layer, name).copy_(value)
