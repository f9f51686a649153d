"""Crowd datasets: simulated crowds with known confusions, and real public crowds.

- :func:`simulate_annotators` draws votes of workers with known confusion
  matrices (accuracies, spammers, adversarial workers, class confusions, a
  common confusion, binary sensitivity/specificity workers) on given truth;
- :func:`make_confusion_matrix` builds confusion patterns for it;
- :func:`make_crowd_classification` adds features and imbalanced truth from
  :func:`sklearn.datasets.make_classification`;
- :func:`load_crowd_dataset` reads a dataset folder (``votes.csv``,
  ``truth.csv``, features ...), or a public crowd by name;
- :func:`fetch_crowd_dataset` loads any public crowd of
  :func:`list_crowd_datasets`, downloaded (sha256-verified) into
  :func:`get_data_home` and converted to that folder layout (the datasets
  listed with ``convertible`` False are pinned, but have no converter yet);
  the regression crowd ``movie_reviews_rodrigues`` and the sequence-labelling
  crowd ``conll2003_ner_mturk`` come as the arrays of
  :class:`~skcrowd.neural.CrowdLayerRegressor` and
  :class:`~skcrowd.neural.SequenceCrowdLayerClassifier`;
  :func:`fetch_labelme` and :func:`fetch_music` are shortcuts for two
  crowds with features;
- :func:`dataset_folder` gives the folder of a fetched classification crowd,
  for tools that read a dataset folder.
"""

from ._download import get_data_home
from ._fetchers import (dataset_folder, fetch_crowd_dataset, fetch_labelme, fetch_music,
                        list_crowd_datasets)
from ._loaders import load_crowd_dataset
from ._simulation import make_confusion_matrix, make_crowd_classification, simulate_annotators

__all__ = [
    "dataset_folder",
    "fetch_crowd_dataset",
    "fetch_labelme",
    "fetch_music",
    "get_data_home",
    "list_crowd_datasets",
    "load_crowd_dataset",
    "make_confusion_matrix",
    "make_crowd_classification",
    "simulate_annotators",
]
