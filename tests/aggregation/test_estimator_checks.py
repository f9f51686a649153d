"""scikit-learn's estimator checks on every aggregator, with reasoned expected failures."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skcrowd.aggregation import GLAD, DawidSkene, MajorityVote, WeightedDawidSkene

_NEGATIVE_LABELS = (
    "-1 marks a missing vote (missing_label=-1) and other negative integers are valid labels, so "
    "negative values in X are not an error"
)
_COMMON = {
    "check_fit_non_negative": _NEGATIVE_LABELS,
    "check_positive_only_tag_during_fit": _NEGATIVE_LABELS,
    "check_estimators_pickle": (
        "with allow_nan the check puts NaN in X, which the default missing_label=-1 rejects by "
        "design; pickling is tested in test_aggregators.py::test_pickle_round_trip"
    ),
    "check_estimator_sparse_array": (
        "the check reads classifier_tags of anything with predict_proba; aggregators are not "
        "classifiers (no y). Sparse votes are tested in test_aggregators.py"
    ),
}
_COMMON["check_estimator_sparse_matrix"] = _COMMON["check_estimator_sparse_array"]
_RANDOM_TIES = (
    "MajorityVote breaks ties with draws of random_state over the whole batch, so a tied task can "
    "get another label in a subset or another order"
)


def _expected_failures(estimator):
    failures = dict(_COMMON)
    if isinstance(estimator, MajorityVote):
        failures["check_methods_subset_invariance"] = _RANDOM_TIES
        failures["check_methods_sample_order_invariance"] = _RANDOM_TIES
    return failures


@parametrize_with_checks(
    [MajorityVote(random_state=0), DawidSkene(), WeightedDawidSkene(), GLAD()],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
