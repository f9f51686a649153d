"""skorch plumbing shared by skcrowd's neural estimators (features as X, votes as y).

What skorch does not do on its own when ``y`` is a votes matrix, done once
here for every net:

* encode the votes with :func:`skcrowd.check_votes` (``classes_`` from the
  votes, never ``-1``) and hand skorch a compact integer targets array;
* split train/valid on the *tasks*, shuffled and stratified on each task's
  majority vote (:class:`TaskHoldoutSplit`), seeded by ``random_state``;
* score the validation set against its held-out votes (``valid_acc`` is the
  tie-aware accuracy against their majority vote);
* seed torch from ``random_state`` without touching the global RNG state;
* fail clearly on ``device="cuda"`` without CUDA;
* run torch on ``n_jobs`` CPU threads (one by default), whatever the
  process's thread count is (numba's OpenMP kernels reset it);
* run SAM's two passes with batch-norm statistics frozen on the second.

A net then only says which noise model maps its backbone's class logits to
the observed votes (``_make_noise_model``) and, if needed, its loss.
"""

import copy
import inspect
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
import torch
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import (
    Interval,
    Options,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.validation import check_is_fitted, validate_data
from skorch import NeuralNetClassifier
from skorch.callbacks import EpochScoring, EpochTimer, PassthroughScoring, PrintLog, ProgressBar
from skorch.dataset import unpack_data
from skorch.utils import TeeGenerator, is_dataset, to_tensor

from .._holdout import holdout_tasks
from ..base import FeatureModelMixin, _as_it_was_on_error
from ..metrics import mv_accuracy_score
from ..optim import SAM, frozen_batchnorm_stats
from ..votes import check_votes
from ._losses import MaskedMultiCrossEntropy, observed_votes
from ._modules import MLP
from ._selection import HeldOutSelection

__all__ = ["TaskHoldoutSplit", "softmax"]


def softmax(logits):
    """Class probabilities (float64) from logits: the nets' default ``predict_nonlinearity``.

    Parameters
    ----------
    logits : torch.Tensor of shape (..., n_classes)
        Class logits, as the backbones return them.

    Returns
    -------
    torch.Tensor of shape (..., n_classes), dtype float64
        Softmax over the last axis.

    Examples
    --------
    >>> import torch
    >>> from skcrowd.neural import softmax
    >>> softmax(torch.tensor([[0.0, 0.0], [0.0, 2.0]])).numpy().round(3)
    array([[0.5  , 0.5  ],
           [0.119, 0.881]])
    """
    return torch.softmax(logits.double(), dim=-1)


class TaskHoldoutSplit:
    """Hold out a random fraction of the tasks for validation.

    The default ``train_split`` of skcrowd's nets. The net calls it with the
    majority-vote label of each task (``-1`` for a task without votes); the
    split is shuffled and stratified on those labels when every label occurs
    at least twice and both parts can hold every label, else only shuffled.
    When the net's ``random_state`` is set and this split's is None, the net
    seeds it.

    Parameters
    ----------
    valid_size : float or int, default=0.2
        Fraction (float in (0, 1)) or number (int) of tasks held out. When
        it leaves no task for one of the parts, there is no validation set.
    stratified : bool, default=True
        Stratify on the labels the net passes.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffle.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.neural import TaskHoldoutSplit
    >>> split = TaskHoldoutSplit(0.25, random_state=0)
    >>> train, valid = split(np.zeros((8, 1)), np.array([0, 0, 0, 0, 1, 1, 1, 1]))
    >>> len(train), len(valid)
    (6, 2)
    """

    def __init__(self, valid_size=0.2, *, stratified=True, random_state=None):
        self.valid_size = valid_size
        self.stratified = stratified
        self.random_state = random_state

    def __call__(self, dataset, y=None, groups=None):
        strata = y if self.stratified else None
        train, valid = holdout_tasks(len(dataset), self.valid_size, strata, self.random_state)
        if valid is None:
            return dataset, None
        return torch.utils.data.Subset(dataset, train), torch.utils.data.Subset(dataset, valid)

    def __repr__(self):
        return (
            f"{type(self).__name__}({self.valid_size!r}, stratified={self.stratified!r}, "
            f"random_state={self.random_state!r})"
        )


# Parameters every votes-as-y net shares (CrowdNetClassifier.__init__); appended to
# the docstring of each public net.
SHARED_PARAMETERS_DOC = """
    criterion : type of torch.nn.Module, default=MaskedMultiCrossEntropy
        Loss between the noise model's vote logits and the observed votes.
    optimizer : type of torch.optim.Optimizer, default=torch.optim.Adam
        Optimizer; ``optimizer=skcrowd.optim.SAM`` with
        ``optimizer__base_optimizer=...`` for sharpness-aware minimization.
    lr : float or "auto", default="auto"
        Learning rate. ``"auto"`` chooses it at each ``fit`` among 1e-3,
        3e-3 and 1e-2, with ``weight_decay``, on the held-out tasks' votes
        (successive halving: every pair of candidates trains ``max_epochs //
        3`` epochs, the best third trains to the end with ``patience``, the
        best held-out score wins; ``lr_``, ``weight_decay_`` and
        ``search_results_`` record it), as
        :class:`~sklearn.linear_model.LogisticRegressionCV` chooses ``C``.
        Without held-out tasks (``train_split=None``), on a warm start, or
        above ``auto_max_tasks`` tasks, nothing is searched and ``"auto"`` is
        a constant (fallback 1e-3). ``optimizer__lr`` overrides it.
    weight_decay : float or "auto", default="auto"
        L2 penalty of the optimizer (``weight_decay`` of Adam); ``"auto"``
        chooses it among 0, 1e-4 and 1e-3 together with ``lr`` (fallback 0).
        ``optimizer__weight_decay`` overrides it; an optimizer without a
        ``weight_decay`` argument gets none.
    auto_max_tasks : int or None, default=20000
        Above this many tasks ``"auto"`` searches nothing and takes its
        fallback values: the search costs about 5 fits (9 short runs, 3
        full ones). None: no limit.
    max_epochs : int, default=50
        Most epochs of the first run (the selection run, when tasks are held
        out); the number of epochs when nothing is held out.
    batch_size : int, default=64
        Mini-batch size (-1: the whole data set).
    iterator_train__shuffle : bool, default=True
        Shuffle the training batches.
    train_split : callable or None, default=TaskHoldoutSplit(0.2)
        Train/valid split of the tasks, called with the tasks' majority-vote
        labels for stratification. The held-out tasks' votes choose the
        number of epochs (see ``patience`` and ``refit``); ``None`` holds
        nothing out and trains on every task for ``max_epochs``.
    patience : int or None, default=10
        With held-out tasks, every epoch is scored on their votes (the loss
        of the held-out votes under the net's noise model, ``valid_loss``);
        training stops after ``patience`` epochs without improvement and the
        weights of the best epoch (``best_epoch_``), noise model included,
        are put back. None trains for ``max_epochs`` and still keeps the best
        epoch. The held-out score is the callback ``"held_out_selection"``
        (:class:`HeldOutSelection`): ``callbacks__held_out_selection=None``
        turns the selection off, ``callbacks__held_out_selection__monitor=
        "valid_acc"`` (with ``__lower_is_better=False``) scores the held-out
        majority vote instead.
    refit : bool, default=True
        After the held-out votes chose ``best_epoch_``, train a fresh net on
        every task for that many epochs (the first run's history is kept as
        ``selection_history_``), as :class:`~sklearn.model_selection.GridSearchCV`
        refits its best model: no task is lost to validation. False keeps the
        first run's best-epoch net, trained on the other tasks only.
    callbacks : list of skorch callbacks, "disable" or None, default=None
        Extra callbacks (e.g. ``skorch.callbacks.EarlyStopping``).
    predict_nonlinearity : callable or None, default=softmax
        Maps the backbone's logits to ``predict_proba``'s output.
    classes : array-like or None, default=None
        All classes, when some never appear in the votes; default: the
        labels seen in the votes.
    missing_label : int, float, str or None, default=-1
        Marker of a missing vote.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation, dropout, batch shuffling and the
        train/valid split (torch's global RNG state is restored after
        ``fit``). Equal seeds give equal results on CPU.
    verbose : int, default=0
        1 prints skorch's table of losses and ``valid_acc`` per epoch; 2 adds
        a progress bar.
    device : str or torch.device, default="cpu"
        ``"cuda"`` trains on the GPU (a clear error at ``fit`` without CUDA);
        a net fitted on a GPU unpickles on a CPU-only machine (skorch moves
        it to the CPU with a ``DeviceWarning``).
    n_jobs : int or None, default=None
        CPU threads of torch while the net trains and predicts, counted as
        scikit-learn counts ``n_jobs``: None is one thread (unless inside a
        :func:`joblib.parallel_config` context that sets ``n_jobs``), -1
        every core, -2 all but one. torch's own thread count is put back
        after each call. Nets of this size train fastest on one thread:
        more threads made the README's quick start 2.4x slower on an idle
        2-core machine and up to 17x slower with the other core busy (see
        :ref:`threads`); give more to wide backbones on many idle cores.
    **kwargs
        Further skorch settings: ``module__*`` (e.g. ``module__hidden_units``
        and ``module__dropout`` of the default :class:`MLP`),
        ``optimizer__*``, ``iterator_train__*``, ``callbacks__*``,
        ``warm_start``, ``compile``...
"""


SHARED_ATTRIBUTES_DOC = """
    lr_ : float
        Learning rate of the fitted net (chosen when ``lr="auto"``).
    weight_decay_ : float or None
        Its weight decay (chosen when ``weight_decay="auto"``; None when the
        optimizer takes none).
    search_results_ : dict or None
        The search of the ``"auto"`` settings, one entry per candidate, as
        ``cv_results_``: ``lr``, ``weight_decay``, ``rung`` (0: short run
        only; 1: trained to the end), ``epochs`` and ``best_epoch`` of its
        last run, ``score`` (best held-out score of that run), ``score_short``
        (after the short run), ``rank`` (1: chosen) and ``monitor`` (the
        history key scored, ``"valid_loss"`` by default: lower is better).
        None when nothing was searched. ``pandas.DataFrame`` takes it without
        ``monitor``.
    best_epoch_ : int or None
        Epoch chosen on the held-out tasks' votes (its weights were kept, or
        the refit ran that many epochs); None when nothing was held out.
    selection_history_ : skorch.History
        History of the run that chose ``best_epoch_``, when a refit followed
        (``history_`` is then the refit's).
    interrupted_ : bool
        Whether the last fit was interrupted (``KeyboardInterrupt``, from
        Ctrl-C or a callback): skorch stops at the end of the batch, the
        best epoch so far is kept, no refit follows, and the net is usable.
"""


def _compact_int_dtype(max_value):
    """Smallest signed integer dtype holding ``-1 .. max_value``."""
    for dtype in (np.int8, np.int16, np.int32):
        if max_value <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def _valid_majority_vote_accuracy(net, X, y):
    """``valid_acc``: tie-aware accuracy of the predictions against the held-out votes."""
    votes = net._item_votes(y)
    pred = net.predict_proba(X).argmax(-1).reshape(-1)
    return mv_accuracy_score(votes, pred, classes=np.arange(len(net.classes_)))


def _full_init_signature(cls):
    """Signature of ``cls.__init__`` with the keywords its ``**kwargs`` hand on to the bases.

    Each keyword gets the default of the most derived ``__init__`` along the
    MRO that has one (skorch's own defaults last).
    """
    defaults = {}
    for klass in cls.__mro__[:-1]:  # without object
        init = vars(klass).get("__init__")
        for name, p in inspect.signature(init).parameters.items() if init else ():
            if p.default is not p.empty:
                defaults.setdefault(name, p.default)
    own = inspect.signature(vars(cls)["__init__"])
    named = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    passed_on = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
        for name, default in defaults.items() if name not in own.parameters
    ]
    var_keyword = [p for p in own.parameters.values() if p.kind is p.VAR_KEYWORD]
    return own.replace(parameters=[*named, *passed_on, *var_keyword])


class CrowdNetMixin(FeatureModelMixin):
    """Parts shared by the votes-as-y classifiers and the crowd regressor.

    On top of the feature models' base (:class:`skcrowd.base.FeatureModelMixin`:
    tags, default ``score``, a failed ``fit`` that leaves the net as it was):
    skorch's plumbing. Subclasses define ``_crowd_parameter_constraints`` (their own parameters),
    ``_check_fit_data`` (validation and encoding of ``X`` and ``y``),
    ``_default_module(**module_kwargs)`` (the backbone when ``module=None``),
    ``_make_noise_model()``,
    ``_stratification_labels(targets)`` and ``_validation_scoring()``.
    """

    # scikit-learn's repr (text, nested and HTML) shows the parameters that differ from the
    # defaults of the __init__ signature; skorch's repr lists only the modules, and the public
    # nets pass most of their parameters on through **kwargs.
    __repr__ = BaseEstimator.__repr__

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in vars(cls):
            cls.__init__.__signature__ = _full_init_signature(cls)

    def _get_param_names(self):
        # skorch counts every attribute in __dict__; its bookkeeping (_params_to_validate) and
        # the fit's own private state (_refitting, _stopped_early, ...) are not parameters
        return [name for name in super()._get_param_names() if not name.startswith("_")]

    def _get_params_html(self, deep=True, doc_link=""):
        # The HTML repr's parameter table: the net's own parameters. The deep ones add every
        # setting of every default callback (callbacks__print_log__tablefmt, ...).
        return super()._get_params_html(deep=False, doc_link=doc_link)

    _shared_parameter_constraints = {
        "module": [None, callable],
        "criterion": [callable],
        "optimizer": [callable],
        "lr": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "weight_decay": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "auto_max_tasks": [None, Interval(Integral, 0, None, closed="left")],
        "max_epochs": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1})],
        "iterator_train": [callable],
        "iterator_valid": [callable],
        "iterator_train__shuffle": ["boolean"],
        "dataset": [callable],
        "train_split": [None, callable],
        "callbacks": [None, list, StrOptions({"disable"})],
        "predict_nonlinearity": [None, callable, StrOptions({"auto"})],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "device": [None, str, torch.device],
        "compile": ["boolean"],
        "use_caching": ["boolean", StrOptions({"auto"})],
        "torch_load_kwargs": [None, dict],
        "random_state": ["random_state"],
        "n_jobs": [None, Interval(Integral, None, -1, closed="right"),
                   Interval(Integral, 1, None, closed="left")],
        "patience": [None, Interval(Integral, 1, None, closed="left")],
        "refit": ["boolean"],
    }

    @property
    def _parameter_constraints(self):
        """Constraints of every parameter.

        ``module__*``-style settings are validated by skorch when the net
        initializes.
        """
        constraints = {**self._shared_parameter_constraints, **self._crowd_parameter_constraints}
        for name in self.get_params(deep=False):
            if "__" in name:
                constraints.setdefault(name, "no_validation")
        return constraints

    def _validate_params(self):
        validate_parameter_constraints(
            self._parameter_constraints,
            self.get_params(deep=False),
            caller_name=type(self).__name__,
        )
        if getattr(self, "module_", None) is not None:
            # skorch's own check of the dunder settings needs the registered modules.
            super()._validate_params()

    # -- fit-time checks -------------------------------------------------------

    def _check_device_available(self):
        if self.device is None:
            return
        try:
            device = torch.device(self.device)
        except RuntimeError as exc:
            raise ValueError(f"device={self.device!r} is not a torch device: {exc}") from exc
        available = {
            "cuda": torch.cuda.is_available,
            "mps": torch.backends.mps.is_available,
        }.get(device.type, lambda: True)
        if not available():
            raise ValueError(
                f"device={self.device!r} was requested but {device.type.upper()} is not "
                f"available to this torch ({torch.__version__}); use device='cpu'."
            )

    def _validate_X(self, X, *, reset):
        X = validate_data(self, X, reset=reset, dtype=np.float32, allow_nd=True,
                          accept_sparse="csr")
        # skorch densifies a sparse X row by row (TfidfVectorizer output, say); it expects
        # the 2-D rows of a csr_matrix (a csr_array's rows are 1-D)
        return sp.csr_matrix(X) if sp.issparse(X) else X

    def _validate_X_or_dataset(self, X):
        """Prediction input: fitted and valid ``X``; a torch Dataset (from callbacks) as is."""
        check_is_fitted(self)
        return X if is_dataset(X) else self._validate_X(X, reset=False)

    def _check_lengths(self, X, targets):
        if X.shape[0] != len(targets):
            raise ValueError(
                f"X has {X.shape[0]} samples but y has {len(targets)} tasks (rows); give one row "
                "of answers (votes) per sample."
            )

    def _draw_seeds(self):
        """``(torch seed, split seed)`` of one fit, drawn from ``random_state``."""
        rng = check_random_state(self.random_state)
        return tuple(int(s) for s in rng.randint(np.iinfo(np.int32).max, size=2))

    @contextmanager
    def _seeded(self, seeds=None):
        """Seed torch (and the split) from ``seeds`` (default: drawn from ``random_state``).

        The torch RNG state is restored after.
        """
        torch_seed, split_seed = self._draw_seeds() if seeds is None else seeds
        self._split_seed_ = int(split_seed)
        device = torch.device(self.device) if self.device is not None else torch.device("cpu")
        devices = [device.index or 0] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(int(torch_seed))
            yield

    def _fit_targets(self, X, targets, **fit_params):
        """(Re)initialize unless warm-starting, choose the settings, train, then refit.

        With ``lr`` or ``weight_decay`` set to ``"auto"`` and tasks held out,
        the candidate settings are compared on the held-out votes first
        (:meth:`_search_settings`). The selection run trains on
        ``train_split``'s part of the tasks; when its held-out votes chose an
        epoch and ``refit`` is true, the net is re-initialized and trained on
        every task for that many epochs. Every run of one fit uses the same
        seeds: the same split, initial weights and batch order.
        """
        warm = self.warm_start and self.initialized_
        self.interrupted_ = False
        if not warm:
            vars(self).pop("selection_history_", None)  # of an earlier fit
        seeds = self._draw_seeds()
        try:
            if not warm:
                self._search_settings(X, targets, seeds, **fit_params)
            if self.interrupted_:  # during the search: that run's net is kept
                return self
            self._count_loaded_epochs = not warm
            if not getattr(self, "_search_kept_run", False):
                with self._seeded(seeds):
                    if not warm:
                        # a fresh start: after a search (or an earlier fit) skorch would
                        # print one "Re-initializing" line per module
                        self.initialized_ = False
                        self.initialize()
                    super().partial_fit(X, targets, **fit_params)
            selection = dict(self.callbacks_).get("held_out_selection")
            self.best_epoch_ = getattr(selection, "best_epoch_", None)
            if self.refit and self.best_epoch_ is not None and not (warm or self.interrupted_):
                self._refit(X, targets, self.best_epoch_, seeds, **fit_params)
        finally:
            self._count_loaded_epochs = False
            self._search_kept_run = False
            self._trial = None
        return self

    # -- settings chosen at fit ("auto") -----------------------------------------------

    #: candidates of ``lr="auto"`` and ``weight_decay="auto"``
    _lr_grid = (1e-3, 3e-3, 1e-2)
    _weight_decay_grid = (0.0, 1e-4, 1e-3)
    #: the values ``"auto"`` takes when nothing is searched
    _auto_fallback = {"lr": 1e-3, "weight_decay": 0.0}

    def _optimizer_takes_weight_decay(self):
        try:
            parameters = inspect.signature(self.optimizer).parameters
        except (TypeError, ValueError):
            return False
        return "weight_decay" in parameters or any(
            p.kind is p.VAR_KEYWORD for p in parameters.values())

    def _setting_grids(self):
        """Candidate values of ``lr`` and ``weight_decay`` (one value: fixed)."""
        own = self.get_params_for("optimizer")
        grids = {}
        for name, grid in (("lr", self._lr_grid), ("weight_decay", self._weight_decay_grid)):
            value = getattr(self, name, None)
            if name in own:  # optimizer__lr / optimizer__weight_decay win
                grids[name] = (own[name],)
            elif value is None or (name == "weight_decay"
                                   and not self._optimizer_takes_weight_decay()):
                grids[name] = (None,)
            elif isinstance(value, str):  # "auto"
                grids[name] = tuple(grid)
            else:
                grids[name] = (value,)
        return grids

    def _resolved_setting(self, name):
        """The value of ``lr`` or ``weight_decay`` the optimizer gets now."""
        trial = getattr(self, "_trial", None)
        if trial is not None:
            return trial[name]
        value = getattr(self, name, None)
        if not isinstance(value, str):
            return value
        if name + "_" in vars(self):  # chosen by this fit (None: no weight decay)
            return vars(self)[name + "_"]
        return self._auto_fallback[name]

    def get_params_for_optimizer(self, prefix, named_parameters):
        """skorch's optimizer arguments, with the chosen ``lr`` and ``weight_decay``."""
        args, kwargs = super().get_params_for_optimizer(prefix, named_parameters)
        if prefix == "optimizer":
            own = self.get_params_for(prefix)
            for name in ("lr", "weight_decay"):
                value = self._resolved_setting(name)
                if name not in own and value is not None:
                    kwargs[name] = value
        return args, kwargs

    def _search_settings(self, X, targets, seeds, **fit_params):
        """Choose ``lr_`` and ``weight_decay_`` on the held-out votes (successive halving).

        Every candidate of the grids trains for ``max(1, max_epochs // 3)``
        epochs on ``train_split``'s part of the tasks; the third with the best
        held-out score (the ``held_out_selection`` callback's monitor, by
        default ``valid_loss``) trains again for up to ``max_epochs`` epochs
        with ``patience``, from the same start (the same seeds: it continues
        the short run), and the best of these wins. Without held-out tasks,
        with one candidate, or above ``auto_max_tasks`` tasks, nothing is
        searched and ``"auto"`` takes its fallback value.
        """
        grids = self._setting_grids()
        candidates = [(lr, wd) for lr in grids["lr"] for wd in grids["weight_decay"]]
        self.lr_, self.weight_decay_ = (
            values[0] if len(values) == 1 else self._auto_fallback[name]
            for name, values in grids.items())
        self.search_results_ = None
        limit = getattr(self, "auto_max_tasks", None)
        too_many = limit is not None and len(targets) > limit
        if len(candidates) == 1 or too_many or not self.train_split:
            return
        n_kept = max(1, -(-len(candidates) // 3))
        runs = {}  # (rung, candidate): (best score, epochs run, best epoch)
        sign = 1.0
        verbose, self.verbose = self.verbose, 0
        try:
            pool = candidates
            for rung, budget in ((0, max(1, self.max_epochs // 3)), (1, None)):
                if rung == 1:
                    pool = sorted(candidates, key=lambda c: sign * runs[0, c][0])[:n_kept]
                for candidate in pool:
                    self._trial = dict(zip(("lr", "weight_decay"), candidate))
                    with self._seeded(seeds):
                        self.initialize()
                        super().partial_fit(X, targets, epochs=budget, **fit_params)
                    selection = dict(self.callbacks_).get("held_out_selection")
                    if self.interrupted_:
                        self.lr_, self.weight_decay_ = candidate
                        self.best_epoch_ = getattr(selection, "best_epoch_", None)
                        return
                    if getattr(selection, "best_score_", None) is None:
                        return  # nothing held out, or the selection turned off
                    sign = 1.0 if selection.lower_is_better else -1.0
                    runs[rung, candidate] = (
                        selection.best_score_, len(self.history), selection.best_epoch_)
                    if verbose:
                        print(f"search: lr={candidate[0]}, weight_decay={candidate[1]}: "
                              f"{len(self.history)} epochs, best held-out {selection.monitor} "
                              f"{selection.best_score_:.4f} at epoch {selection.best_epoch_}")
        finally:
            self.verbose = verbose
            self._trial = None
        winner = min(pool, key=lambda c: sign * runs[1, c][0])
        self.lr_, self.weight_decay_ = winner
        # the last run is the winner's selection run: keep it rather than run it again
        # (verbose: run it again, to print its table)
        self._search_kept_run = winner == pool[-1] and not verbose
        last = [(1 if (1, c) in runs else 0, c) for c in candidates]
        order = sorted(last, key=lambda rc: (-rc[0], sign * runs[rc][0]))
        self.search_results_ = {
            "lr": np.array([c[0] for c in candidates], dtype=object),
            "weight_decay": np.array([c[1] for c in candidates], dtype=object),
            "rung": np.array([r for r, _ in last]),
            "epochs": np.array([runs[rc][1] for rc in last]),
            "best_epoch": np.array([runs[rc][2] for rc in last]),
            "score": np.array([runs[rc][0] for rc in last]),
            "score_short": np.array([runs[0, c][0] for c in candidates]),
            "rank": np.array([order.index(rc) + 1 for rc in last]),
            "monitor": selection.monitor,
        }

    def _refit(self, X, targets, n_epochs, seeds=None, **fit_params):
        """Train a fresh module on every task for ``n_epochs`` epochs (callbacks kept)."""
        self.selection_history_, self.history_ = self.history_, None
        with self._seeded(seeds):
            # Not initialize(): it would reset the callbacks, and a LoadInitState would load
            # the checkpoint of the first run again. Quiet: skorch would print one
            # "Re-initializing" line per module.
            verbose, self.verbose = self.verbose, 0
            try:
                self._initialize_module()
                self._initialize_criterion()
                self._initialize_optimizer()
            finally:
                self.verbose = verbose
            self._initialize_history()
            if self.verbose:
                print(f"refit on every task for {n_epochs} epochs (best_epoch_)")
            self._refitting = True
            try:
                self.notify("on_train_begin", X=X, y=targets)
                try:
                    self.fit_loop(X, targets, epochs=n_epochs, **fit_params)
                except KeyboardInterrupt:
                    pass
                self.notify("on_train_end", X=X, y=targets)
            finally:
                self._refitting = False

    def fit_loop(self, X, y=None, epochs=None, **fit_params):
        """skorch's loop; a fit resumed from a checkpoint runs only the epochs left.

        A ``KeyboardInterrupt`` that is not early stopping (a user's
        interrupt, or one raised by a callback) marks the fit as interrupted:
        no refit follows.
        """
        if epochs is None and getattr(self, "_count_loaded_epochs", False):
            # LoadInitState loaded the history of an interrupted fit at on_train_begin
            epochs = max(self.max_epochs - len(self.history), 0)
        try:
            with self._torch_threads():
                return super().fit_loop(X, y, epochs=epochs, **fit_params)
        except KeyboardInterrupt:
            if not getattr(self, "_stopped_early", False):
                self.interrupted_ = True
            raise

    def forward_iter(self, X, training=False, device="cpu"):
        """skorch's forward pass in batches (every prediction), on ``n_jobs`` threads."""
        with self._torch_threads():
            yield from super().forward_iter(X, training=training, device=device)

    @contextmanager
    def _torch_threads(self):
        """Run torch on ``n_jobs`` CPU threads; its thread count is put back after.

        Set at every call rather than once: numba's OpenMP kernels (the aggregators) set the
        process's OpenMP thread count, which torch shares, back to one per core.
        """
        before = torch.get_num_threads()
        # getattr: a net pickled before n_jobs existed
        torch.set_num_threads(effective_n_jobs(getattr(self, "n_jobs", None)))
        try:
            yield
        finally:
            torch.set_num_threads(before)

    # -- fit ------------------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, **fit_params):
        """Train on features ``X`` and the workers' answers ``y``.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_features) or (n_tasks, ...)
            Features of the tasks.
        y : array-like or sparse matrix of shape (n_tasks, n_workers)
            ``y[i, j]`` is worker ``j``'s answer for task ``i``: a label or
            ``missing_label`` for classifiers (a votes matrix), a value or NaN
            for the regressor. A 1-D ``y`` is one answer per task.
        **fit_params
            Passed to the module's ``forward``.

        Returns
        -------
        self
        """
        with _as_it_was_on_error(self):
            X, targets = self._check_fit_data(
                X, y, reset=not (self.warm_start and self.initialized_)
            )
            return self._fit_targets(X, targets, **fit_params)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, **fit_params):
        """Train for ``max_epochs`` more epochs without re-initializing.

        The first call initializes the net (seeded by ``random_state``);
        later calls continue with torch's current random state and must use
        the fitted classes and workers.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_features)
            Features of the tasks.
        y : array-like or sparse matrix of shape (n_tasks, n_workers)
            Answers, as for :meth:`fit`.
        classes : array-like, default=None
            Unused; set the ``classes`` parameter of a classifier to fix the
            classes.
        **fit_params
            Passed to the module's ``forward``.

        Returns
        -------
        self
        """
        with _as_it_was_on_error(self):
            if self.initialized_:
                X, targets = self._check_fit_data(X, y, reset=False)
                super(CrowdNetMixin, self).partial_fit(X, targets, **fit_params)
                return self
            X, targets = self._check_fit_data(X, y, reset=True)
            return self._fit_targets(X, targets, **fit_params)

    def initialize_module(self):
        """Build the backbone (default :class:`MLP` sized from the data) and the noise model."""
        kwargs = self.get_params_for("module")
        if self.module is None:
            self.module_ = self._default_module(**kwargs)
        else:
            self.module_ = self.initialized_instance(self.module, kwargs)
        self.noise_model_ = self._make_noise_model()
        return self

    def load_params(self, *args, checkpoint=None, **kwargs):
        """skorch's ``load_params``; a checkpoint must hold the noise model too.

        A resumed crowd net needs its annotator model as much as its
        backbone: a ``Checkpoint`` that saves the backbone (``f_params``) but
        not ``f_noise_model`` would resume with the noise model of a fresh
        net, so loading it raises.
        """
        if (checkpoint is not None and getattr(checkpoint, "f_params", None) is not None
                and getattr(checkpoint, "f_noise_model", None) is None):
            raise ValueError(
                "the checkpoint saves the backbone (f_params) but not the noise model: pass "
                "f_noise_model='noise_model.pt' to skorch's Checkpoint as well."
            )
        return super().load_params(*args, checkpoint=checkpoint, **kwargs)

    # -- loss -------------------------------------------------------------------

    def _item_votes(self, targets):
        """Answers ``(n_items, n_workers)`` of a batch of targets (missing: -1 or NaN)."""
        return targets

    def _vote_logits(self, outputs, targets, X):
        """The noise model's output for each observed answer, and the answers.

        Classifiers: vote logits ``(n_votes, K)`` and labels; the regressor:
        predicted answers ``(n_votes,)`` and answers.
        """
        votes = to_tensor(self._item_votes(targets), device=self.device)
        task, worker, answer = observed_votes(votes)
        x = to_tensor(X, device=self.device)
        if not answer.is_floating_point():
            answer = answer.long()
        return self.noise_model_(outputs, x, task, worker), answer

    def get_loss(self, y_pred, y_true, X=None, training=False):
        return self.criterion_(*self._vote_logits(y_pred, y_true, X))

    # -- skorch hooks -----------------------------------------------------------

    def check_data(self, X, y):
        # X and y were validated and encoded before skorch sees them.
        pass

    def get_split_datasets(self, X, y=None, **fit_params):
        dataset = self.get_dataset(X, y)
        if not self.train_split or getattr(self, "_refitting", False):
            return dataset, None
        split = self.train_split
        if getattr(split, "random_state", False) is None:
            split = copy.copy(split)
            split.random_state = self._split_seed_
        return split(dataset, self._stratification_labels(y), **fit_params)

    @property
    def _default_callbacks(self):
        callbacks = [
            ("epoch_timer", EpochTimer()),
            ("train_loss", PassthroughScoring(name="train_loss", on_train=True)),
            ("valid_loss", PassthroughScoring(name="valid_loss")),
            *self._validation_scoring(),
            ("print_log", PrintLog()),
        ]
        if self.verbose and self.verbose >= 2:
            callbacks.insert(-1, ("progress_bar", ProgressBar()))
        monitor, lower_is_better = self._selection_monitor()
        # after the scores of the epoch
        callbacks.append(("held_out_selection", HeldOutSelection(
            monitor, lower_is_better, self.patience)))
        return callbacks

    def train_step(self, batch, **fit_params):
        """One optimizer step; SAM's second pass runs with batch-norm statistics frozen."""
        if not isinstance(self.optimizer_, SAM):
            return super().train_step(batch, **fit_params)
        self._zero_grad_optimizer()
        step = self.train_step_single(batch, **fit_params)
        self.notify(
            "on_grad_computed",
            named_parameters=TeeGenerator(self.get_all_learnable_params()),
            batch=batch,
            training=True,
        )
        self.optimizer_.first_step()
        self._zero_grad_optimizer()
        modules = [
            getattr(self, name + "_")
            for name in self._modules + self._criteria
            if isinstance(getattr(self, name + "_"), torch.nn.Module)
        ]
        with frozen_batchnorm_stats(*modules):
            self.train_step_single(batch, **fit_params)
        self.optimizer_.second_step()
        return step


class CrowdNetClassifier(CrowdNetMixin, NeuralNetClassifier):
    """Base of the classifiers trained end to end on features ``X`` and votes ``y``.

    A subclass provides ``_make_noise_model()``, a torch module mapping the
    backbone's class logits to the logits of the observed votes (see
    :mod:`skcrowd.neural._modules`); training minimises
    ``criterion(noise_model(logits), observed votes)``.
    """

    _crowd_parameter_constraints = {
        "classes": [None, "array-like"],
        "missing_label": "no_validation",  # any marker; check_votes validates it
    }

    def __init__(
        self,
        module=None,
        *,
        criterion=MaskedMultiCrossEntropy,
        optimizer=torch.optim.Adam,
        lr="auto",
        weight_decay="auto",
        auto_max_tasks=20000,
        max_epochs=50,
        batch_size=64,
        iterator_train__shuffle=True,
        train_split=TaskHoldoutSplit(0.2),
        patience=10,
        refit=True,
        callbacks=None,
        predict_nonlinearity=softmax,
        classes=None,
        missing_label=-1,
        random_state=None,
        verbose=0,
        device="cpu",
        n_jobs=None,
        **kwargs,
    ):
        super().__init__(
            module,
            criterion=criterion,
            optimizer=optimizer,
            lr=lr,
            max_epochs=max_epochs,
            batch_size=batch_size,
            train_split=train_split,
            callbacks=callbacks,
            predict_nonlinearity=predict_nonlinearity,
            classes=classes,
            verbose=verbose,
            device=device,
            **kwargs,
        )
        self.iterator_train__shuffle = iterator_train__shuffle
        self.weight_decay = weight_decay
        self.auto_max_tasks = auto_max_tasks
        self.patience = patience
        self.refit = refit
        self.missing_label = missing_label
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- votes encoding ---------------------------------------------------------

    def _encode_votes(self, y, *, reset, name="y"):
        """Validate votes: ``(Votes, targets array for skorch)``.

        With ``reset`` the classes come from the votes (or ``classes``);
        otherwise they must be the fitted classes and workers.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "pass the votes matrix (n_tasks, n_workers), missing votes marked with "
                f"missing_label={self.missing_label!r}."
            )
        if reset:
            votes = check_votes(y, missing_label=self.missing_label, classes=self.classes,
                                name=name)
        else:
            votes = check_votes(y, missing_label=self.missing_label, classes=self.classes_,
                                n_workers=self.n_workers_, name=name)
        return votes, self._targets(votes)

    def _targets(self, votes):
        """Targets array handed to skorch: dense class indices, -1 missing."""
        return votes.to_dense().astype(_compact_int_dtype(votes.n_classes - 1))

    def _check_fit_data(self, X, y, *, reset):
        self._check_device_available()
        X = self._validate_X(X, reset=reset)
        votes, targets = self._encode_votes(y, reset=reset)
        self._check_lengths(X, targets)
        if reset:
            self.classes_inferred_ = votes.classes
            self.n_workers_ = votes.n_workers
            self.n_inputs_ = int(np.prod(X.shape[1:]))
        return X, targets

    def _default_module(self, **kwargs):
        return MLP(self.n_inputs_, len(self.classes_), **kwargs)

    def _stratification_labels(self, targets):
        votes = np.asarray(self._item_votes(targets), dtype=np.int64)
        n_classes = len(self.classes_)
        counts = np.zeros((len(votes), n_classes + 1))
        np.add.at(counts, (np.arange(len(votes))[:, None], votes), 1.0)
        counts = counts[:, :-1]  # column -1 collected the missing votes
        return np.where(counts.any(axis=1), counts.argmax(axis=1), -1)

    def _selection_monitor(self):
        return "valid_loss", True

    def _validation_scoring(self):
        return [
            ("valid_acc", EpochScoring(
                _valid_majority_vote_accuracy, name="valid_acc", lower_is_better=False
            )),
        ]

    # -- prediction and scores --------------------------------------------------------

    def predict_proba(self, X):
        """Class probabilities of the backbone (the noise model is only for training).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or a torch Dataset
            Features.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Probabilities, columns in the order of ``classes_``.
        """
        # numpy even for a DataFrame X (unlike the aggregators): scikit-learn's scorers take
        # predict_proba(X)[:, 1] on binary problems (roc_auc, neg_log_loss), which a DataFrame
        # rejects. See "In a notebook" in doc/aggregation.rst.
        return super().predict_proba(self._validate_X_or_dataset(X))

    def _scored_votes(self, X, y):
        # the votes of the fitted workers, encoded as class indices (-1 missing), one row per
        # item (a token of a sequence)
        proba = self.predict_proba(X)
        targets = self._encode_votes(y, reset=False)[1]
        self._check_lengths(proba, targets)
        return (self._item_votes(targets), proba.argmax(axis=-1).reshape(-1), -1,
                np.arange(len(self.classes_)))

    def predict_annotator_proba(self, X, workers=None):
        """Distribution of the vote each worker would give each sample.

        The backbone's class probabilities passed through the fitted noise
        model (crowd layer, noise adaptation layers or confusion matrices),
        in evaluation mode: the crowd-model protocol of
        :class:`skcrowd.SelfCrowdClassifier`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        workers : array-like of int, default=None
            Worker indices (columns of the fitted votes); None means all.

        Returns
        -------
        ndarray of shape (n_samples, n_selected_workers, n_classes)
            Rows sum to one; columns in the order of ``classes_``.
        """
        X = self._validate_X_or_dataset(X)
        workers = np.arange(self.n_workers_) if workers is None else np.asarray(workers)
        if workers.size == 0:
            workers = workers.astype(np.int64)  # np.asarray([]) is float
        if workers.ndim != 1 or workers.dtype.kind not in "iu":
            raise ValueError(f"workers must be a 1-D array of worker indices, got {workers!r}.")
        bad = (workers < 0) | (workers >= self.n_workers_)
        if bad.any():
            raise ValueError(
                f"workers has worker {int(workers[bad][0])}, not one of the fitted workers "
                f"0..{self.n_workers_ - 1}."
            )
        worker = torch.as_tensor(workers, device=self.device)
        probas = []
        self._set_training(False)
        with torch.no_grad():
            for batch in self.get_iterator(self.get_dataset(X), training=False):
                Xi = unpack_data(batch)[0]
                logits = self.infer(Xi)
                items = logits.reshape(-1, logits.shape[-1])
                task = torch.arange(len(items), device=items.device)
                vote_logits = self.noise_model_(
                    items, to_tensor(Xi, device=self.device),
                    task.repeat_interleave(len(worker)), worker.repeat(len(items)),
                )
                proba = torch.softmax(vote_logits.double(), dim=-1)
                shape = (*logits.shape[:-1], len(worker), len(self.classes_))
                probas.append(proba.reshape(shape).cpu().numpy())
        return np.concatenate(probas)

    def annotation_log_likelihood(self, X, votes):
        """Mean log-probability of the observed ``votes`` under the model's noise model.

        Each observed vote ``y_ri`` scores ``log p(y_ri | x_i)``, where the
        model predicts annotator ``r``'s vote through its own annotator-noise
        model (crowd layer, noise adaptation layers, or confusion matrices);
        the mean is over observed votes. Higher is better; usable for model
        selection through :func:`skcrowd.metrics.annotation_log_likelihood_scorer`.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_features)
            Features.
        votes : array-like or sparse matrix of shape (n_tasks, n_workers)
            Votes by the fitted workers, labels in ``classes_``.

        Returns
        -------
        float
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        targets = self._encode_votes(votes, reset=False, name="votes")[1]
        self._check_lengths(X, targets)
        dataset = self.get_dataset(X, targets)
        total, count = 0.0, 0
        self._set_training(False)
        with torch.no_grad():
            for Xi, yi in self.get_iterator(dataset, training=False):
                vote_logits, labels = self._vote_logits(self.infer(Xi), yi, Xi)
                log_proba = torch.log_softmax(vote_logits.double(), dim=-1)
                total += log_proba.gather(1, labels.unsqueeze(1)).sum().item()
                count += len(labels)
        return total / count
