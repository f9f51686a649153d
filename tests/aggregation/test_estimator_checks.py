"""scikit-learn's and skcrowd's estimator checks on every aggregator, with reasoned failures.

:func:`skcrowd.utils.estimator_checks.parametrize_with_checks` adds an aggregator's domain checks
and the expected failures common to every aggregator; those of one model are listed here. The
aggregators are those :func:`skcrowd.utils.discovery.all_estimators` finds, seeded where they
take a ``random_state``; a meta-estimator gets its candidates in :data:`_FACTORIES`.
"""

from estimator_instances import seeded_aggregators

from skcrowd.aggregation import GLAD, KOS, AggregatorSelector, DawidSkene, MajorityVote
from skcrowd.utils.estimator_checks import parametrize_with_checks

_RANDOM_TIES = (AssertionError, (
    "MajorityVote breaks ties with draws of random_state over the whole batch, so a tied task can "
    "get another label in a subset or another order"
))

_BINARY_ONLY = (ValueError, (
    "the check's votes have up to 6 classes and KOS is binary: it raises a ValueError naming the "
    "classes; test_kos.py checks the same behaviour on binary votes"
))
_KOS_MULTICLASS_CHECKS = (
    "check_dict_unchanged", "check_dont_overwrite_parameters", "check_estimators_dtypes",
    "check_estimators_fit_returns_self", "check_estimators_overwrite_params",
    "check_f_contiguous_array_estimator", "check_fit2d_predict1d", "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_methods_sample_order_invariance", "check_methods_subset_invariance",
    "check_n_features_in", "check_n_features_in_after_fitting", "check_readonly_memmap_input",
    "check_transformer_data_not_an_array", "check_transformer_general",
    "check_transformer_preserve_dtypes",
)
# scikit-learn raises an AssertionError of its own around KOS's ValueError
_KOS_WRAPPED_CHECKS = ("check_positive_only_tag_during_fit", "check_fit2d_1sample",
                       "check_fit2d_1feature")


def _expected_failures(estimator):
    failures = {}
    if isinstance(estimator, MajorityVote):
        failures["check_methods_subset_invariance"] = _RANDOM_TIES
        failures["check_methods_sample_order_invariance"] = _RANDOM_TIES
    if isinstance(estimator, KOS):
        failures.update(dict.fromkeys(_KOS_MULTICLASS_CHECKS, _BINARY_ONLY))
        failures.update(dict.fromkeys(_KOS_WRAPPED_CHECKS, (AssertionError, _BINARY_ONLY[1])))
    return failures


# aggregators that cannot be built with default arguments: name -> factory
_FACTORIES = {
    "AggregatorSelector": lambda: AggregatorSelector([DawidSkene(), GLAD()], random_state=0),
}


@parametrize_with_checks(seeded_aggregators(_FACTORIES),
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)
