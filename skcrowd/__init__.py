"""skcrowd: learning from crowdsourced labels, the scikit-learn way.

Aggregators (votes as ``X``), end-to-end crowd classifiers (features as ``X``,
votes as ``y``), ambiguous-task pruning and self-training. Names that need
torch are imported lazily, so ``import skcrowd`` never imports torch.
"""

import importlib

from .votes import (LongVotes, SoftVotes, Votes, aggregate_long, check_not_long_format,
                    check_votes, votes_from_long, votes_to_long)
from ._soft_votes import soft_votes, soft_votes_from_long

__version__ = "0.1.0.dev0"

# public name -> submodule that defines it (imported on first access). The top level re-exports
# the estimators and main functions of each subpackage's __all__, not its helpers (such as
# skcrowd.neural.MLP). Kept by hand so that `import skcrowd` reads no subpackage;
# tests/utils/test_discovery.py checks that every name here is in its subpackage's __all__ and
# that every estimator skcrowd.utils.discovery.all_estimators finds has a line here.
_LAZY = {
    # aggregation
    "MajorityVote": "aggregation",
    "DawidSkene": "aggregation",
    "WeightedDawidSkene": "aggregation",
    "GLAD": "aggregation",
    "Wawa": "aggregation",
    "ZeroBasedSkill": "aggregation",
    "KOS": "aggregation",
    "MMSR": "aggregation",
    "BayesianDawidSkene": "aggregation",
    "EBCC": "aggregation",
    "OneCoinDawidSkene": "aggregation",
    "MACE": "aggregation",
    "AggregatorSelector": "aggregation",
    "MeanRating": "aggregation",
    "MedianRating": "aggregation",
    "BiasPrecisionEM": "aggregation",
    "CATD": "aggregation",
    "CensoredRatingEM": "aggregation",
    "check_ratings": "aggregation",
    "OrdinalDawidSkene": "aggregation",
    "GroupedDawidSkene": "aggregation",
    # metrics and scorers
    "expected_calibration_error": "metrics",
    "soft_accuracy_score": "metrics",
    "top_k_accuracy_score": "metrics",
    "mv_accuracy_score": "metrics",
    "mv_accuracy_scorer": "metrics",
    "annotation_log_likelihood_scorer": "metrics",
    "held_out_vote_scorer": "metrics",
    "imbalance_ratio": "metrics",
    "krippendorff_alpha": "metrics",
    "fleiss_kappa": "metrics",
    "AgreementInterval": "metrics",
    # quality control: worker and task reports, spammer scores
    "worker_report": "quality",
    "task_report": "quality",
    "spammer_score": "quality",
    # datasets: simulated crowds and the dataset-folder loader
    "simulate_annotators": "datasets",
    "make_confusion_matrix": "datasets",
    "make_crowd_classification": "datasets",
    "load_crowd_dataset": "datasets",
    "fetch_labelme": "datasets",
    "fetch_music": "datasets",
    "fetch_crowd_dataset": "datasets",
    "list_crowd_datasets": "datasets",
    # self-training
    "SelfCrowdClassifier": "selftraining",
    # deep learning from crowds (torch is imported on first access)
    "CrowdLayerClassifier": "neural",
    "CoNALClassifier": "neural",
    "DeepEMClassifier": "neural",
    "PlainNetClassifier": "neural",
    "CrowdLayerRegressor": "neural",
    "SequenceCrowdLayerClassifier": "neural",
    # two-stage baseline: aggregate, then train
    "AggregatedTargetClassifier": "aggregated_target",
    # ambiguous-task identification and pruning (WAUM)
    "WAUMPruner": "pruning",
    "PrunedClassifier": "pruning",
    # classifier-aided consensus, label and annotator quality, next votes
    "ConsensusClassifier": "consensus",
    "select_next_votes": "consensus",
    # multi-label votes
    "BinaryRelevance": "multilabel",
    "MultiLabelDawidSkene": "multilabel",
    "multilabel_votes_from_long": "multilabel",
    # pairwise comparisons
    "BradleyTerry": "pairwise",
    "NoisyBradleyTerry": "pairwise",
    "CrowdBT": "pairwise",
    "select_next_pairs": "pairwise",
    # free-text answers (a votes matrix of strings)
    "ROVER": "texts",
    "WeightedROVER": "texts",
    "ClosestToAverage": "texts",
    "RASA": "texts",
    "HRRASA": "texts",
    "check_texts": "texts",
    "word_error_rate": "metrics",
}

__all__ = [
    "LongVotes",
    "Votes",
    "check_votes",
    "check_not_long_format",
    "aggregate_long",
    "votes_from_long",
    "votes_to_long",
    "SoftVotes",
    "soft_votes",
    "soft_votes_from_long",
    *_LAZY,
]


def __getattr__(name):
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
