"""Helpers of skcrowd's meta-estimators (estimators that wrap an ``estimator``)."""


def _estimator_has(attr):
    """``available_if`` check: the fitted ``estimator_`` has ``attr`` (before fit, the
    ``estimator`` parameter)."""

    def check(self):
        est = self.estimator_ if hasattr(self, "estimator_") else self.estimator
        return hasattr(est, attr)

    return check
