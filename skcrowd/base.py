"""Base classes and policies shared by skcrowd's estimators.

A fit that fails leaves the estimator as it was before the call (:func:`_as_it_was_on_error`),
for the aggregators and the feature models alike.
"""

import contextlib


@contextlib.contextmanager
def _as_it_was_on_error(estimator):
    """Restore ``estimator``'s attributes if the block raises: a fit that fails (bad input, a
    lost Dask cluster, an interrupt) leaves no half-written fitted attribute."""
    before = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(before)
        raise
