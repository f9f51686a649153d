"""scikit-learn's estimator checks on every neural estimator, with tiny nets."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("skorch")

from skcrowd.neural import (  # noqa: E402
    CoNALClassifier,
    CrowdLayerClassifier,
    CrowdLayerRegressor,
    DeepEMClassifier,
    SequenceCrowdLayerClassifier,
)
from skcrowd.utils.estimator_checks import parametrize_with_checks  # noqa: E402

TINY = dict(max_epochs=5, lr=0.05, module__hidden_units=8, random_state=0)

SKORCH = {
    "check_no_attributes_set_in_init": (
        "skorch's NeuralNet.__init__ sets history_, initialized_ and virtual_params_, and "
        "stores module__* settings as attributes"
    ),
    "check_do_not_raise_errors_in_init_or_set_params": (
        "skorch initializes the callbacks inside set_params, so set_params(callbacks=-1) raises"
    ),
}
REGRESSOR = {
    "check_regressor_multioutput": (
        "the answers of several workers are one target: predict gives one value per task"
    ),
}
# The checks feed tabular X and 1-D or 2-D y; the sequence tagger needs X of shape
# (n_sequences, seq_len, n_features) and votes of shape (n_sequences, seq_len, n_workers).
SEQUENCE_REASON = (
    "sequence data only: X (n_sequences, seq_len, ...) and votes (n_sequences, seq_len, "
    "n_workers); the check passes tabular data"
)
SEQUENCE_TABULAR_CHECKS = [
    "check_fit_score_takes_y", "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters", "check_estimators_fit_returns_self",
    "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_dtype_object",
    "check_pipeline_consistency", "check_estimators_nan_inf", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_classifier_data_not_an_array",
    "check_classifiers_one_label", "check_classifiers_one_label_sample_weights",
    "check_estimators_partial_fit_n_features", "check_classifiers_train",
    "check_supervised_y_2d", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_fit2d_1sample", "check_fit2d_1feature",
    "check_dict_unchanged", "check_fit_idempotent", "check_fit_check_is_fitted",
    "check_n_features_in", "check_fit2d_predict1d",
]


def expected_failed_checks(estimator):
    # the classifier checks that fail on every feature model, and the failed-fit check on the
    # sequence tagger, are listed with their reasons in skcrowd.utils.estimator_checks
    if isinstance(estimator, CrowdLayerRegressor):
        return {**SKORCH, **REGRESSOR}
    failures = dict(SKORCH)
    if isinstance(estimator, SequenceCrowdLayerClassifier):
        failures.update(dict.fromkeys(SEQUENCE_TABULAR_CHECKS, SEQUENCE_REASON))
    return failures


@parametrize_with_checks(
    [
        CrowdLayerClassifier(**TINY),
        CrowdLayerClassifier(crowd_layer="softmax", **TINY),
        CoNALClassifier(**TINY),
        DeepEMClassifier(**TINY),
        CrowdLayerRegressor(**{**TINY, "max_epochs": 20}),
        SequenceCrowdLayerClassifier(**TINY),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
