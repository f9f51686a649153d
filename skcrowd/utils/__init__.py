"""Utilities for developers of skcrowd and of code built on it.

- :mod:`skcrowd.utils.discovery`: :func:`~skcrowd.utils.discovery.all_estimators`, every public
  estimator of skcrowd, by kind (aggregators, rating aggregators, multi-label aggregators,
  feature models). The tests, the model selector and the documentation list the models with it,
  so a new model is listed once it is exported by its subpackage.
- :mod:`skcrowd.utils.estimator_checks`:
  :func:`~skcrowd.utils.estimator_checks.parametrize_with_checks`, scikit-learn's estimator
  checks with skcrowd's domain checks of each kind (a failed fit leaves the estimator as it was,
  the workers have no order, a worker without votes changes nothing) and the expected failures
  common to the kind, with their reasons. It needs pytest.
"""

__all__ = ["discovery", "estimator_checks"]
