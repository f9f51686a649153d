"""Discovery of skcrowd's estimators, in the manner of :mod:`sklearn.utils.discovery`.

:func:`all_estimators` walks skcrowd's public modules and returns their estimators, so that a
model exported by its subpackage is found by the tests, the model selector and the documentation
without a hand-kept list.
"""

import inspect
import pkgutil
from importlib import import_module
from operator import itemgetter

__all__ = ["all_estimators"]

#: The kinds of estimator that ``type_filter`` selects, each with what the estimator takes.
KINDS = {
    "aggregator": "votes matrix as X, one label (a class) per task",
    "rating": "continuous ratings as X, one value per task (a regressor)",
    "multilabel": "multi-label votes as X, a set of labels per task",
    "text": "a votes matrix of strings as X, one text per task",
    "feature_model": "features X and the votes matrix as y",
    "pairwise": "pairwise comparisons as X (rows worker, left, right, label), a score per item",
}

# Public modules that import torch (extra ``deep``): only walked when feature models are asked
# for, so that the other kinds are found without importing torch.
_TORCH_MODULES = ("skcrowd.neural", "skcrowd.optim")


def _kind_bases():
    """The base class of each kind."""
    from ..aggregation._base import BaseAggregator
    from ..aggregation._continuous import _BaseRatingAggregator
    from ..base import FeatureModelMixin
    from ..multilabel import _MultiLabelAggregator
    from ..pairwise import _PairwiseModel
    from ..texts import _BaseTextAggregator

    return {"aggregator": BaseAggregator, "rating": _BaseRatingAggregator,
            "multilabel": _MultiLabelAggregator, "text": _BaseTextAggregator,
            "feature_model": FeatureModelMixin, "pairwise": _PairwiseModel}


def _kind(cls, bases):
    """The kind of ``cls``: the first whose base it inherits (None: of no kind)."""
    return next((kind for kind, base in bases.items() if issubclass(cls, base)), None)


def _public_modules(with_torch):
    """Names of skcrowd's public modules (no part starting with ``_``), the package excluded.

    A package is imported to walk its modules (as :func:`pkgutil.walk_packages` does), except a
    private one or, without ``with_torch``, one of :data:`_TORCH_MODULES`.
    """
    import skcrowd

    names = []
    packages = [(skcrowd.__path__, "skcrowd.")]
    while packages:
        path, prefix = packages.pop(0)
        for info in pkgutil.iter_modules(path, prefix):
            if info.name.rpartition(".")[2].startswith("_") or (
                    not with_torch and info.name.startswith(_TORCH_MODULES)):
                continue
            names.append(info.name)
            if info.ispkg:
                try:
                    packages.append((import_module(info.name).__path__, info.name + "."))
                except ImportError:  # an optional dependency is missing
                    continue
    return names


def _is_abstract(cls):
    return bool(getattr(cls, "__abstractmethods__", None))


def all_estimators(type_filter=None):
    """Get a list of all public estimators of skcrowd.

    This function walks skcrowd's public modules (no part of the module path starts with an
    underscore) and gets the classes they hold that inherit from scikit-learn's
    :class:`~sklearn.base.BaseEstimator`, are defined in skcrowd, are not abstract and whose
    names do not start with an underscore. A module that cannot be imported because an optional
    dependency is missing (torch and skorch for :mod:`skcrowd.neural`) is skipped. Torch is
    imported only when feature models are asked for (``type_filter=None`` included) and is
    installed.

    Parameters
    ----------
    type_filter : {"aggregator", "rating", "multilabel", "feature_model", "pairwise", "text"} \
            or list of such str, default=None
        Which kind of estimators to return; None returns every estimator. Each of skcrowd's
        estimators has exactly one kind (tested):

        - ``"aggregator"``: the votes matrix as ``X`` (tasks are rows, workers columns), one
          class per task out (subclasses of the aggregators' base, such as
          :class:`~skcrowd.aggregation.DawidSkene` and the meta-estimator
          :class:`~skcrowd.aggregation.AggregatorSelector`);
        - ``"rating"``: continuous ratings as ``X``, one value per task out, as regressors
          (:class:`~skcrowd.aggregation.MeanRating`, ...);
        - ``"multilabel"``: multi-label votes as ``X``, a set of labels per task out
          (:class:`~skcrowd.multilabel.MultiLabelDawidSkene`, ...);
        - ``"text"``: a votes matrix of strings as ``X``, one text per task out
          (:class:`~skcrowd.texts.ROVER`, ...);
        - ``"feature_model"``: features ``X`` and the votes matrix as ``y`` (subclasses of
          :class:`~skcrowd.base.FeatureModelMixin`: the nets of :mod:`skcrowd.neural`,
          :class:`~skcrowd.selftraining.SelfCrowdClassifier`,
          :class:`~skcrowd.pruning.WAUMPruner`, ...);
        - ``"pairwise"``: pairwise comparisons as ``X`` (a DataFrame of rows ``worker, left,
          right, label``), a score per item out (:class:`~skcrowd.pairwise.BradleyTerry`,
          ...).

        A list returns the estimators of any of its kinds.

    Returns
    -------
    estimators : list of tuples
        List of ``(name, class)``, sorted by name, where ``name`` is the class name and
        ``class`` the class itself.

    Raises
    ------
    ValueError
        If ``type_filter`` names an unknown kind.

    See Also
    --------
    sklearn.utils.discovery.all_estimators : The same for scikit-learn's estimators.

    Examples
    --------
    >>> from skcrowd.utils.discovery import all_estimators
    >>> aggregators = all_estimators(type_filter="aggregator")
    >>> name, cls = aggregators[0]
    >>> name, cls.__name__
    ('AggregatorSelector', 'AggregatorSelector')
    >>> [name for name, _ in aggregators][:4]
    ['AggregatorSelector', 'BayesianDawidSkene', 'DawidSkene', 'EBCC']
    >>> [name for name, _ in all_estimators(type_filter="rating")]
    ['BiasPrecisionEM', 'CATD', 'CensoredRatingEM', 'MeanRating', 'MedianRating']
    >>> [name for name, _ in all_estimators(type_filter="pairwise")]
    ['BradleyTerry', 'CrowdBT', 'NoisyBradleyTerry']
    >>> [name for name, _ in all_estimators(type_filter="text")]
    ['ClosestToAverage', 'HRRASA', 'RASA', 'ROVER', 'WeightedROVER']
    >>> [name for name, _ in all_estimators(type_filter=["multilabel", "aggregator"])][:4]
    ['AggregatorSelector', 'BayesianDawidSkene', 'BinaryRelevance', 'DawidSkene']
    """
    if type_filter is None:
        kinds = set(KINDS)
    else:
        kinds = {type_filter} if isinstance(type_filter, str) else set(type_filter)
        unknown = sorted(kinds - set(KINDS))
        if unknown:
            raise ValueError(
                f"Parameter type_filter must be one of {sorted(KINDS)}, a list of them or None, "
                f"got {type_filter!r} (unknown: {unknown}).")

    from sklearn.base import BaseEstimator

    found = set()
    for module_name in _public_modules(with_torch="feature_model" in kinds):
        try:
            module = import_module(module_name)
        except ImportError:  # an optional dependency (torch, skorch, matplotlib) is missing
            continue
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (not name.startswith("_") and issubclass(cls, BaseEstimator)
                    and cls.__module__.startswith("skcrowd.") and not _is_abstract(cls)):
                found.add((name, cls))
    if type_filter is not None:
        bases = _kind_bases()
        found = {(name, cls) for name, cls in found if _kind(cls, bases) in kinds}
    return sorted(found, key=itemgetter(0))
