"""skcrowd.utils.discovery.all_estimators: every public estimator, each of one kind (issue 26)."""

import abc
import importlib
import inspect
import subprocess
import sys
import textwrap

import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LogisticRegression

import skcrowd
import skcrowd.aggregation as aggregation
from skcrowd.aggregation._base import BaseAggregator
from skcrowd.base import FeatureModelMixin
from skcrowd.utils.discovery import KINDS, all_estimators

SUBPACKAGES = sorted({module for module in skcrowd._LAZY.values()} | {"aggregation.kernels"})


def _has_torch():
    try:
        import skorch  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _exported_estimators():
    """name -> class of every estimator named in skcrowd's and its subpackages' ``__all__``."""
    exported = {}
    for module_name in ["skcrowd"] + [f"skcrowd.{name}" for name in SUBPACKAGES]:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # torch absent
            continue
        for name in module.__all__:
            try:
                obj = getattr(module, name)
            except ImportError:  # skcrowd.CrowdLayerClassifier without torch
                continue
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                exported[name] = obj
    return exported


def test_every_exported_estimator_is_discovered_and_nothing_else():
    discovered = dict(all_estimators())
    exported = _exported_estimators()
    assert discovered == exported
    assert {"MajorityVote", "DawidSkene", "AggregatorSelector", "MeanRating", "BinaryRelevance",
            "SelfCrowdClassifier", "WAUMPruner", "ConsensusClassifier"} <= set(discovered)
    if _has_torch():
        assert {"CrowdLayerClassifier", "CrowdLayerRegressor"} <= set(discovered)


def test_every_discovered_estimator_is_public_at_the_top_level():
    for name, cls in all_estimators():
        subpackage = cls.__module__.split(".")[1]
        assert name in skcrowd.__all__, (
            f"{name} is not public at the top level: add {name!r}: {subpackage!r} to _LAZY in "
            "skcrowd/__init__.py")
        assert getattr(skcrowd, name) is cls


def test_every_top_level_name_is_exported_by_its_subpackage():
    """skcrowd's lazy names are a subset of the subpackages' ``__all__`` (the top level re-exports
    the estimators and main functions; helpers such as skcrowd.neural.MLP stay below)."""
    for name, subpackage in skcrowd._LAZY.items():
        try:
            module = importlib.import_module(f"skcrowd.{subpackage}")
        except ImportError:  # torch absent
            continue
        assert name in module.__all__, f"skcrowd.{name} is not in skcrowd.{subpackage}.__all__"


def test_result_is_sorted_name_class_pairs():
    estimators = all_estimators()
    assert [name for name, _ in estimators] == sorted({name for name, _ in estimators})
    assert all(cls.__name__ == name for name, cls in estimators)


def test_an_estimator_of_no_kind_is_found_by_no_filter(monkeypatch):
    class Odd(BaseEstimator):
        """Neither an aggregator nor a feature model."""

    Odd.__module__ = "skcrowd.aggregation._fake"
    monkeypatch.setattr(aggregation, "Odd", Odd, raising=False)
    assert ("Odd", Odd) in all_estimators()
    assert "Odd" not in dict(all_estimators(type_filter=list(KINDS)))


def test_the_kinds_partition_the_estimators():
    by_kind = {kind: dict(all_estimators(type_filter=kind)) for kind in KINDS}
    everything = dict(all_estimators())
    assert sum(len(found) for found in by_kind.values()) == len(everything)
    assert {name for found in by_kind.values() for name in found} == set(everything)
    both = dict(all_estimators(type_filter=["rating", "aggregator"]))
    assert both == {**by_kind["rating"], **by_kind["aggregator"]}
    assert dict(all_estimators(type_filter=list(KINDS))) == everything


def test_each_kind_is_what_it_says():
    for name, cls in all_estimators(type_filter="aggregator"):
        assert issubclass(cls, BaseAggregator) and not issubclass(cls, RegressorMixin), name
    for name, cls in all_estimators(type_filter="rating"):
        assert issubclass(cls, RegressorMixin) and not issubclass(cls, BaseAggregator), name
    for name, cls in all_estimators(type_filter="multilabel"):
        assert cls.__module__ == "skcrowd.multilabel", name
    for name, cls in all_estimators(type_filter="pairwise"):
        assert cls.__module__ == "skcrowd.pairwise", name
    for name, cls in all_estimators(type_filter="text"):
        assert cls.__module__ == "skcrowd.texts", name
    for name, cls in all_estimators(type_filter="feature_model"):
        assert issubclass(cls, FeatureModelMixin) and not issubclass(cls, BaseAggregator), name
        assert list(inspect.signature(cls.fit).parameters)[1:3] == ["X", "y"], name
    names = {kind: [n for n, _ in all_estimators(type_filter=kind)] for kind in KINDS}
    assert {"MajorityVote", "DawidSkene", "KOS", "OrdinalDawidSkene",
            "AggregatorSelector"} <= set(names["aggregator"])
    assert names["rating"] == ["BiasPrecisionEM", "CATD", "CensoredRatingEM", "MeanRating",
                               "MedianRating"]
    assert names["multilabel"] == ["BinaryRelevance", "MultiLabelDawidSkene"]
    assert names["pairwise"] == ["BradleyTerry", "CrowdBT", "NoisyBradleyTerry"]
    assert names["text"] == ["ClosestToAverage", "HRRASA", "RASA", "ROVER", "WeightedROVER"]
    assert {"AggregatedTargetClassifier", "ConsensusClassifier", "PrunedClassifier",
            "SelfCrowdClassifier", "WAUMPruner"} <= set(names["feature_model"])


def test_abstract_private_and_foreign_classes_are_left_out(monkeypatch):
    class AbstractAggregator(BaseAggregator):
        @abc.abstractmethod
        def extra(self):
            """An abstract method: the class cannot be built."""

    class _PrivateAggregator(aggregation.MajorityVote):
        pass

    class PublicAggregator(aggregation.MajorityVote):
        pass

    for cls in (AbstractAggregator, _PrivateAggregator, PublicAggregator):
        cls.__module__ = "skcrowd.aggregation._fake"
        monkeypatch.setattr(aggregation, cls.__name__, cls, raising=False)
    monkeypatch.setattr(aggregation, "LogisticRegression", LogisticRegression, raising=False)
    names = [name for name, _ in all_estimators(type_filter="aggregator")]
    assert "PublicAggregator" in names  # found without being listed anywhere
    assert not {"AbstractAggregator", "_PrivateAggregator", "LogisticRegression"} & set(names)
    for base in ("BaseAggregator", "BaseEM", "BaseWeightedVote", "_BaseRatingAggregator",
                 "_MultiLabelAggregator", "CrowdNetClassifier"):
        assert base not in dict(all_estimators())


@pytest.mark.parametrize("type_filter", ["classifier", ["aggregator", "nets"]])
def test_an_unknown_kind_is_refused(type_filter):
    with pytest.raises(ValueError, match="type_filter must be one of"):
        all_estimators(type_filter=type_filter)


def _run(code):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_the_kinds_without_torch_do_not_import_it():
    out = _run("""
        import sys
        from skcrowd.utils.discovery import all_estimators
        found = all_estimators(type_filter=["aggregator", "rating", "multilabel"])
        print(len(found), "torch" in sys.modules, "skorch" in sys.modules)
    """)
    assert out == [str(len(all_estimators(["aggregator", "rating", "multilabel"]))),
                   "False", "False"]


def test_discovery_without_torch_skips_the_nets():
    out = _run("""
        import sys

        class NoTorch:  # import torch (and skorch) raises ImportError, as where it is absent
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in ("torch", "skorch"):
                    raise ImportError(f"No module named {name!r}")

        sys.meta_path.insert(0, NoTorch())
        from skcrowd.utils.discovery import all_estimators
        print(*[name for name, _ in all_estimators()])
    """)
    expected = [name for name, cls in all_estimators()
                if not cls.__module__.startswith(("skcrowd.neural", "skcrowd.optim"))]
    assert out == expected
