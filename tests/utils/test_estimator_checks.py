"""skcrowd.utils.estimator_checks: the domain checks catch what they check, the expected failures
are applied, and every discovered aggregator passes the domain checks or fails them by a listed
reason (issue 26)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.utils import get_tags

from skcrowd import AggregatedTargetClassifier
from skcrowd.aggregation import GLAD, MMSR, AggregatorSelector, DawidSkene, MajorityVote
from skcrowd.multilabel import MultiLabelDawidSkene
from skcrowd.utils.discovery import all_estimators
from skcrowd.utils.estimator_checks import (
    _DATA_FREE_CHECKS,
    check_comparison_order_invariance,
    check_fit_error_leaves_estimator,
    check_item_relabelling_invariance,
    check_side_swap,
    check_worker_permutation_invariance,
    check_worker_without_votes,
    common_expected_failures,
    parametrize_with_checks,
)

DOMAIN_CHECKS = {
    "aggregator": [check_fit_error_leaves_estimator, check_worker_permutation_invariance,
                   check_worker_without_votes],
    "rating": [check_fit_error_leaves_estimator],
    "multilabel": [check_fit_error_leaves_estimator],
    "feature_model": [check_fit_error_leaves_estimator],
    "pairwise": [check_fit_error_leaves_estimator, check_comparison_order_invariance,
                 check_item_relabelling_invariance, check_side_swap],
}


# ---------------------------------------------------------------------------
# deliberately broken aggregators: each domain check catches its breach
# ---------------------------------------------------------------------------


class FirstWorkerCountsTwice(MajorityVote):
    """Soft labels that mix in the first column's vote: they depend on the order of the
    workers."""

    def predict_proba(self, X):
        proba = super().predict_proba(X)
        first = np.asarray(X)[:, 0]
        voted = first >= 0
        proba[voted] /= 2
        proba[voted, first[voted]] += 0.5
        return proba


class ShrinksByWorkerCount(MajorityVote):
    """Soft labels pulled to uniform by ``1 / n_features_in_``: a worker without votes changes
    them."""

    def predict_proba(self, X):
        share = 1.0 / self.n_features_in_
        return (1 - share) * super().predict_proba(X) + share / len(self.classes_)


class WritesBeforeRaising(MajorityVote):
    """A fit that writes an attribute before the validation raises."""

    def fit(self, X, y=None):
        self.started_ = True
        return super().fit(X, y)


class TakesInfiniteVotes(MajorityVote):
    """A fit that takes invalid votes as missing ones instead of raising."""

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        return super().fit(np.where(np.isfinite(X), X, -1).astype(int), y)


@pytest.mark.parametrize("check, broken", [
    (check_worker_permutation_invariance, FirstWorkerCountsTwice()),
    (check_worker_without_votes, ShrinksByWorkerCount()),
    (check_fit_error_leaves_estimator, WritesBeforeRaising()),
    (check_fit_error_leaves_estimator, TakesInfiniteVotes()),
])
def test_domain_check_catches_its_breach(check, broken):
    check("MajorityVote", MajorityVote())  # the sound model passes
    with pytest.raises(AssertionError, match=type(broken).__name__):
        check(type(broken).__name__, broken)


def test_failed_fit_check_names_the_written_attribute():
    with pytest.raises(AssertionError, match=r"added \['started_'\]"):
        check_fit_error_leaves_estimator("WritesBeforeRaising", WritesBeforeRaising())


def test_checks_fit_clones_not_the_given_estimator():
    estimator = MajorityVote()
    check_worker_permutation_invariance("MajorityVote", estimator)
    check_fit_error_leaves_estimator("MajorityVote", estimator)
    assert not hasattr(estimator, "classes_")  # each check fits clones


# ---------------------------------------------------------------------------
# parametrize_with_checks: domain checks added, expected failures applied
# ---------------------------------------------------------------------------


def _params(decorator):
    """``{(estimator class name, check name): (raises, reason, strict) of its xfail, or None}``
    of a parametrization."""
    argnames, params = decorator.args[:2]
    assert argnames == "estimator, check"
    out = {}
    for param in params:
        values, marks = (param.values, param.marks) if hasattr(param, "values") else (param, ())
        estimator, check = values
        name = getattr(check, "func", check).__name__
        xfails = [(mark.kwargs["raises"], mark.kwargs["reason"], mark.kwargs["strict"])
                  for mark in marks if mark.name == "xfail"]
        out[type(estimator).__name__, name] = xfails[0] if xfails else None
    return out


def test_aggregator_gets_domain_checks_and_common_expected_failures():
    params = _params(parametrize_with_checks([DawidSkene()]))
    for check in DOMAIN_CHECKS["aggregator"]:
        assert params["DawidSkene", check.__name__] is None  # run, not expected to fail
    # truthful tags (negative labels are valid, NaN is refused under missing_label=-1): run,
    # and check_fit_non_negative (for estimators that refuse negative X) is not yielded
    for check in ("check_positive_only_tag_during_fit", "check_estimators_pickle",
                  "check_estimators_nan_inf"):
        assert params["DawidSkene", check] is None
    assert ("DawidSkene", "check_fit_non_negative") not in params
    assert params["DawidSkene", "check_estimator_sparse_matrix"] == (
        AssertionError, common_expected_failures(DawidSkene())[
            "check_estimator_sparse_matrix"][1], True)
    assert params["DawidSkene", "check_fit_idempotent"] is None  # scikit-learn's, run


@pytest.mark.parametrize("missing_label, allow_nan", [(-1, False), ("", False), (np.nan, True),
                                                      (None, True)])
def test_aggregator_tags_say_what_fit_takes(missing_label, allow_nan):
    tags = get_tags(DawidSkene(missing_label=missing_label))
    assert not tags.input_tags.positive_only  # a label of -2 is a label
    assert tags.input_tags.allow_nan is allow_nan
    votes = np.array([[-2.0, 0.0], [0.0, np.nan], [-2.0, -2.0]])
    if allow_nan:
        assert DawidSkene(missing_label=missing_label).fit(votes).n_features_in_ == 2
    else:
        with pytest.raises(ValueError, match="NaN at row"):
            DawidSkene(missing_label=missing_label).fit(votes)


def test_estimators_of_3d_input_get_the_data_free_checks():
    params = _params(parametrize_with_checks([MultiLabelDawidSkene()]))
    assert get_tags(MultiLabelDawidSkene()).input_tags.three_d_array
    assert set(params) == {("MultiLabelDawidSkene", check) for check in (
        "check_estimator_cloneable", *_DATA_FREE_CHECKS, "check_fit_error_leaves_estimator")}
    assert all(reason is None for reason in params.values())


def test_model_expected_failures_of_a_domain_check():
    params = _params(parametrize_with_checks([MMSR(random_state=0), MajorityVote()]))
    raises, reason, strict = params["MMSR", "check_worker_without_votes"]
    assert raises is AssertionError and strict and "M-MSR starts from one uniform draw" in reason
    assert params["MajorityVote", "check_worker_without_votes"] is None
    # a subclass inherits the reasons of skcrowd's model
    subclass = type("MySelector", (AggregatorSelector,), {})
    reasons = common_expected_failures(subclass([DawidSkene()]))
    assert "held-out votes" in reasons["check_worker_permutation_invariance"][1]


def test_callers_expected_failures_are_merged():
    params = _params(parametrize_with_checks(
        [MajorityVote(), DawidSkene()],
        expected_failed_checks=lambda est: ({"check_fit_idempotent": "my reason",
                                             "check_estimator_sparse_array": (
                                                 ValueError, "my other reason")}
                                            if isinstance(est, MajorityVote) else {})))
    assert params["MajorityVote", "check_fit_idempotent"] == (None, "my reason", True)
    assert params["MajorityVote", "check_estimator_sparse_array"] == (  # caller wins
        ValueError, "my other reason", True)
    assert params["MajorityVote", "check_estimator_sparse_matrix"] is not None  # common one kept
    assert params["DawidSkene", "check_fit_idempotent"] is None


def test_feature_model_gets_the_failed_fit_check_and_classifier_failures():
    params = _params(parametrize_with_checks([AggregatedTargetClassifier(LogisticRegression())]))
    assert params["AggregatedTargetClassifier", "check_fit_error_leaves_estimator"] is None
    assert "-1 marks a missing vote" in params["AggregatedTargetClassifier",
                                               "check_classifiers_classes"][1]
    # a continuous or complex y is refused in scikit-learn's words: run
    assert params["AggregatedTargetClassifier", "check_classifiers_regression_target"] is None
    assert params["AggregatedTargetClassifier", "check_complex_data"] is None
    assert not any(name.startswith("check_worker") for _, name in params)


def test_estimator_of_no_kind_gets_scikit_learns_checks_only():
    params = _params(parametrize_with_checks([LogisticRegression()]))
    assert ("LogisticRegression", "check_classifiers_classes") in params
    assert ("LogisticRegression", "check_fit_idempotent") in params
    assert not any(name.startswith("check_worker") or name == "check_fit_error_leaves_estimator"
                   for _, name in params)
    assert all(reason is None for reason in params.values())
    assert common_expected_failures(LogisticRegression()) == {}


def test_classes_are_refused():
    with pytest.raises(TypeError, match="instances, not classes"):
        parametrize_with_checks([DawidSkene])


def test_every_common_expected_failure_has_a_reason():
    for kind, checks in DOMAIN_CHECKS.items():
        for name, cls in all_estimators(type_filter=kind):
            for check, (raises, reason) in common_expected_failures(
                    _instance(name, cls)).items():
                assert check.startswith("check_") and len(reason) > 40, (name, check)
                raises = raises if isinstance(raises, tuple) else (raises,)
                assert all(issubclass(r, Exception) for r in raises), (name, check)


# ---------------------------------------------------------------------------
# every discovered estimator of a kind with domain checks
# ---------------------------------------------------------------------------


def _instance(name, cls):
    if name == "AggregatorSelector":  # cannot be cheap with its default candidates
        return AggregatorSelector([DawidSkene(), GLAD()], random_state=0)
    if name == "AggregatedTargetClassifier":  # meta-estimators without a default estimator
        return cls(LogisticRegression())
    if name == "PrunedClassifier":  # its estimator takes the votes matrix as y
        return cls(AggregatedTargetClassifier(LogisticRegression()))
    return cls()


@pytest.mark.parametrize("name, cls, check", [
    (name, cls, check) for kind, checks in DOMAIN_CHECKS.items()
    for name, cls in all_estimators(type_filter=kind) for check in checks
], ids=lambda obj: getattr(obj, "__name__", None))
def test_discovered_estimators_pass_the_domain_checks(name, cls, check):
    estimator = _instance(name, cls)
    failure = common_expected_failures(estimator).get(check.__name__)
    if failure is None:
        check(name, estimator)
    else:  # a listed failure fails, by its exception
        with pytest.raises(failure[0]):
            check(name, estimator)
