"""Crowd datasets: simulated crowds with known confusions, and a loader of real ones.

- :func:`simulate_annotators` draws votes of workers with known confusion
  matrices (accuracies, spammers, adversarial workers, class confusions, a
  common confusion, binary sensitivity/specificity workers) on given truth;
- :func:`make_confusion_matrix` builds confusion patterns for it;
- :func:`make_crowd_classification` adds features and imbalanced truth from
  :func:`sklearn.datasets.make_classification`;
- :func:`load_crowd_dataset` reads a dataset folder (``votes.csv``,
  ``truth.csv``, features ...);
- :func:`fetch_labelme`, :func:`fetch_music`, :func:`fetch_cifar10h` load
  public crowdsourced datasets, downloaded into :func:`get_data_home` and
  converted to that folder layout.
"""

from ._fetchers import fetch_cifar10h, fetch_labelme, fetch_music, get_data_home
from ._loaders import load_crowd_dataset
from ._simulation import make_confusion_matrix, make_crowd_classification, simulate_annotators

__all__ = [
    "fetch_cifar10h",
    "fetch_labelme",
    "fetch_music",
    "get_data_home",
    "load_crowd_dataset",
    "make_confusion_matrix",
    "make_crowd_classification",
    "simulate_annotators",
]
