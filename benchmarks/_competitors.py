"""What the benchmark scripts need to run competitor libraries in their own interpreter."""


def patch_crowdkit_fitted_check():
    """crowd-kit 1.4.2's Wawa, ZeroBasedSkill and GoldMajorityVote call scikit-learn's
    ``check_is_fitted`` on their attrs classes, which scikit-learn >= 1.6 rejects (they have no
    ``__sklearn_tags__``); give those modules a plain check of the named attribute instead."""
    import importlib

    def check_is_fitted(estimator, attributes):
        if getattr(estimator, attributes, None) is None:
            raise RuntimeError(f"{type(estimator).__name__} is not fitted")

    for module in ("wawa", "zero_based_skill", "gold_majority_vote"):
        module = importlib.import_module(f"crowdkit.aggregation.classification.{module}")
        if hasattr(module, "check_is_fitted"):
            module.check_is_fitted = check_is_fitted
