"""CrowdLayerRegressor: regression from continuous crowd answers (Rodrigues & Pereira, 2018)."""

import numpy as np
import torch
from sklearn.metrics import r2_score
from sklearn.utils import check_array
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted
from skorch import NeuralNetRegressor

from ..votes import check_not_long_format
from ._base import SHARED_ATTRIBUTES_DOC, CrowdNetMixin, TaskHoldoutSplit
from ._losses import MaskedMSE
from ._modules import MLP, REGRESSION_CROWD_LAYERS, RegressionCrowdLayer

__all__ = ["CrowdLayerRegressor"]


class CrowdLayerRegressor(CrowdNetMixin, NeuralNetRegressor):
    """Regression from the continuous answers of several annotators, with a crowd layer.

    The backbone (``module``) maps features to one output ``mu`` (the shared
    bottleneck); a crowd layer maps it to each annotator's expected answer
    with a per-annotator scale and/or bias, and the squared error of the
    observed answers (averaged over observed answers; missing answers, NaN,
    contribute nothing) is minimised end to end. ``predict`` returns ``mu``.

    Parameters
    ----------
    module : torch.nn.Module class or instance, default=None
        Backbone mapping a batch of ``X`` to ``(batch, 1)`` outputs. ``None``:
        :class:`MLP` (128 units, ReLU, dropout 0.5) with one output, sized
        from the data.
    crowd_layer : {"S", "B", "S+B"}, default="B"
        Annotator function: ``"S"`` a scale ``s_r mu``, ``"B"`` a bias ``mu +
        b_r`` (the best variant on the paper's movie-review ratings), ``"S+B"``
        both, ``s_r mu + b_r``. Initialised to the identity (``s_r = 1``,
        ``b_r = 0``). The scales keep a mean of 1 and the biases a mean of 0,
        each annotator weighing its share of the answers: ``mu`` is the
        average annotator's answer, as the mean answer is for a net trained
        on it (see :class:`RegressionCrowdLayer`).
    criterion : type of torch.nn.Module, default=MaskedMSE
        Loss between the predicted and the observed answers.
    optimizer : type of torch.optim.Optimizer, default=torch.optim.Adam
        Optimizer (``skcrowd.optim.SAM`` works too).
    lr : float, default=1e-3
        Learning rate.
    max_epochs : int, default=50
        Number of epochs.
    batch_size : int, default=64
        Mini-batch size (-1: the whole data set).
    iterator_train__shuffle : bool, default=True
        Shuffle the training batches.
    train_split : callable or None, default=TaskHoldoutSplit(0.2)
        Train/valid split of the tasks (shuffled): the held-out answers
        choose the number of epochs, as for the classifiers; ``None`` trains
        on every task for ``max_epochs``.
    patience : int or None, default=10
        Epochs without a lower loss of the held-out answers before training
        stops; the best epoch's weights are kept (see
        :class:`CrowdLayerClassifier`).
    refit : bool, default=True
        Retrain on every task for the chosen number of epochs.
    callbacks : list of skorch callbacks, "disable" or None, default=None
        Extra callbacks.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation, dropout, batch shuffling and the
        train/valid split; equal seeds give equal results on CPU.
    verbose : int, default=0
        1 prints skorch's table of losses per epoch; 2 adds a progress bar.
    device : str or torch.device, default="cpu"
        ``"cuda"`` trains on the GPU (a clear error at ``fit`` without CUDA).
    n_jobs : int or None, default=None
        CPU threads of torch while the net trains and predicts: None is one
        (unless inside a :func:`joblib.parallel_config` context that sets
        ``n_jobs``), -1 every core (see :class:`CrowdLayerClassifier`).
    **kwargs
        Further skorch settings (``module__*``, ``optimizer__*``, ...).

    Attributes
    ----------
    n_workers_ : int
        Number of annotators (columns of the answers).
    n_features_in_ : int
        Number of features of ``X``.
    module_ : torch.nn.Module
        The fitted backbone.
    noise_model_ : RegressionCrowdLayer
        The fitted crowd layer.
    annotator_answer_counts_ : ndarray of shape (n_workers,)
        Number of answers of each annotator in the fit's ``y``.
    annotator_scales_ : ndarray of shape (n_workers,)
        ``s_r`` (ones for ``"B"``); their mean weighted by
        ``annotator_answer_counts_`` is 1.
    annotator_biases_ : ndarray of shape (n_workers,)
        ``b_r`` (zeros for ``"S"``): an annotator's systematic offset; their
        mean weighted by ``annotator_answer_counts_`` is 0.
{shared_attributes}

    References
    ----------
    Rodrigues, F. and Pereira, F. C. (2018). Deep learning from crowds. AAAI.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrowd.neural import CrowdLayerRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, (200, 3))
    >>> truth = X @ [2.0, -1.0, 0.5]
    >>> answers = truth[:, None] + [-1.0, 0.0, 1.0]      # three biased annotators
    >>> answers[rng.rand(*answers.shape) < 0.3] = np.nan  # missing answers
    >>> reg = CrowdLayerRegressor(max_epochs=150, lr=0.03, batch_size=200,
    ...                           train_split=None, random_state=0).fit(X, answers)
    >>> reg.annotator_biases_.round(1)
    array([-1., -0.,  1.])
    """

    _crowd_parameter_constraints = {
        "crowd_layer": [StrOptions(set(REGRESSION_CROWD_LAYERS))],
    }

    def __init__(
        self,
        module=None,
        *,
        crowd_layer="B",
        criterion=MaskedMSE,
        optimizer=torch.optim.Adam,
        lr=1e-3,
        max_epochs=50,
        batch_size=64,
        iterator_train__shuffle=True,
        train_split=TaskHoldoutSplit(0.2),
        patience=10,
        refit=True,
        callbacks=None,
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
            verbose=verbose,
            device=device,
            **kwargs,
        )
        self.crowd_layer = crowd_layer
        self.iterator_train__shuffle = iterator_train__shuffle
        self.patience = patience
        self.refit = refit
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _check_answers(self, y, *, reset, name="y"):
        """Answers as float32 ``(n_tasks, n_workers)``, NaN for missing."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                "pass the answers (n_tasks, n_workers), NaN for a missing answer."
            )
        check_not_long_format(y, name)  # check_array would read a long table as answers
        answers = check_array(y, ensure_all_finite="allow-nan", ensure_2d=False,
                              dtype=np.float64, input_name=name)
        if answers.ndim == 1:
            answers = answers[:, None]
        if answers.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_tasks, n_workers), got shape {answers.shape}.")
        if np.isnan(answers).all():
            raise ValueError(f"{name} contains no observed answer (every entry is NaN).")
        if not reset and answers.shape[1] != self.n_workers_:
            raise ValueError(
                f"{name} has {answers.shape[1]} workers (columns) but the estimator was fitted "
                f"with {self.n_workers_}."
            )
        return answers.astype(np.float32)

    def _stratification_labels(self, targets):
        return None

    def _validation_scoring(self):
        return []

    def _selection_monitor(self):
        return "valid_loss", True

    def _check_fit_data(self, X, y, *, reset):
        self._check_device_available()
        X = self._validate_X(X, reset=reset)
        answers = self._check_answers(y, reset=reset)
        self._check_lengths(X, answers)
        if reset:
            self.n_workers_ = answers.shape[1]
            self.n_inputs_ = int(np.prod(X.shape[1:]))
            self.annotator_answer_counts_ = (~np.isnan(answers)).sum(axis=0)
        return X, answers

    def _default_module(self, **kwargs):
        return MLP(self.n_inputs_, 1, **kwargs)

    def _make_noise_model(self):
        # each annotator weighs its share of the answers in the means the layer holds fixed
        return RegressionCrowdLayer(self.n_workers_, self.crowd_layer,
                                    weights=self.annotator_answer_counts_)

    @available_if(lambda regressor: False)
    def predict_proba(self, X):
        """Not available: a regressor has no class probabilities (skorch defines one)."""

    def predict(self, X):
        """The bottleneck's prediction ``mu`` of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or a torch Dataset
            Features.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        # skorch's forward pass and predict_nonlinearity (predict_proba is hidden above)
        out = NeuralNetRegressor.predict_proba(self, self._validate_X_or_dataset(X))
        return out.reshape(len(out), -1)[:, 0].astype(np.float64)

    def score(self, X, y, sample_weight=None):
        """R² of the predictions against each task's mean observed answer.

        Tasks without answers are skipped.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_features)
            Features.
        y : array-like of shape (n_tasks, n_workers)
            Answers, NaN for missing.
        sample_weight : array-like of shape (n_tasks,), default=None
            Weights of the tasks.

        Returns
        -------
        float
        """
        answers = self._check_answers(y, reset=False)
        pred = self.predict(X)
        self._check_lengths(pred, answers)
        answered = ~np.isnan(answers).all(axis=1)
        mean = np.nanmean(answers[answered], axis=1)
        weight = None if sample_weight is None else np.asarray(sample_weight)[answered]
        return r2_score(mean, pred[answered], sample_weight=weight)

    @property
    def annotator_scales_(self):
        check_is_fitted(self)
        scale = self.noise_model_.annotator_parameters()[0]
        return (np.ones(self.n_workers_) if scale is None
                else scale.detach().cpu().numpy().astype(np.float64))

    @property
    def annotator_biases_(self):
        check_is_fitted(self)
        bias = self.noise_model_.annotator_parameters()[1]
        return (np.zeros(self.n_workers_) if bias is None
                else bias.detach().cpu().numpy().astype(np.float64))


CrowdLayerRegressor.__doc__ = CrowdLayerRegressor.__doc__.replace(
    "{shared_attributes}", SHARED_ATTRIBUTES_DOC.strip("\n")
)
