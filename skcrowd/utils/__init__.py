"""Utilities for developers of skcrowd and of code built on it.

- :mod:`skcrowd.utils.discovery`: :func:`~skcrowd.utils.discovery.all_estimators`, every public
  estimator of skcrowd, by kind (aggregators, rating aggregators, multi-label aggregators,
  feature models). The tests, the model selector and the documentation list the models with it,
  so a new model is listed once it is exported by its subpackage.
"""

__all__ = ["discovery"]
