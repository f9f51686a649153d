"""skcrowd.utils.estimator_checks: the domain checks catch what they check, the expected failures
are applied, and every discovered aggregator passes the domain checks or fails them by a listed
reason (issue 26)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skcrowd import AggregatedTargetClassifier
from skcrowd.aggregation import GLAD, MMSR, AggregatorSelector, DawidSkene, MajorityVote
from skcrowd.utils.discovery import all_estimators
from skcrowd.utils.estimator_checks import (
    check_fit_error_leaves_estimator,
    check_text_task_order,
    check_text_worker_permutation_invariance,
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
    "text": [check_fit_error_leaves_estimator, check_text_worker_permutation_invariance,
             check_text_task_order],
    "feature_model": [check_fit_error_leaves_estimator],
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
    """``{(estimator class name, check name): xfail reason or None}`` of a parametrization."""
    argnames, params = decorator.args[:2]
    assert argnames == "estimator, check"
    out = {}
    for param in params:
        values, marks = (param.values, param.marks) if hasattr(param, "values") else (param, ())
        estimator, check = values
        name = getattr(check, "func", check).__name__
        reasons = [mark.kwargs["reason"] for mark in marks if mark.name == "xfail"]
        out[type(estimator).__name__, name] = reasons[0] if reasons else None
    return out


def test_aggregator_gets_domain_checks_and_common_expected_failures():
    params = _params(parametrize_with_checks([DawidSkene()]))
    for check in DOMAIN_CHECKS["aggregator"]:
        assert params["DawidSkene", check.__name__] is None  # run, not expected to fail
    assert params["DawidSkene", "check_fit_non_negative"].startswith("-1 marks a missing vote")
    assert params["DawidSkene", "check_estimator_sparse_matrix"] is not None
    assert params["DawidSkene", "check_fit_idempotent"] is None  # scikit-learn's, run


def test_model_expected_failures_of_a_domain_check():
    params = _params(parametrize_with_checks([MMSR(random_state=0), MajorityVote()]))
    assert "M-MSR starts from one uniform draw" in params["MMSR", "check_worker_without_votes"]
    assert params["MajorityVote", "check_worker_without_votes"] is None
    # a subclass inherits the reasons of skcrowd's model
    subclass = type("MySelector", (AggregatorSelector,), {})
    reasons = common_expected_failures(subclass([DawidSkene()]))
    assert "held-out votes" in reasons["check_worker_permutation_invariance"]


def test_callers_expected_failures_are_merged():
    params = _params(parametrize_with_checks(
        [MajorityVote(), DawidSkene()],
        expected_failed_checks=lambda est: ({"check_fit_idempotent": "my reason",
                                             "check_fit_non_negative": "my other reason"}
                                            if isinstance(est, MajorityVote) else {})))
    assert params["MajorityVote", "check_fit_idempotent"] == "my reason"
    assert params["MajorityVote", "check_fit_non_negative"] == "my other reason"  # caller wins
    assert params["MajorityVote", "check_estimators_pickle"] is not None  # common one kept
    assert params["DawidSkene", "check_fit_idempotent"] is None


def test_feature_model_gets_the_failed_fit_check_and_classifier_failures():
    params = _params(parametrize_with_checks([AggregatedTargetClassifier(LogisticRegression())]))
    assert params["AggregatedTargetClassifier", "check_fit_error_leaves_estimator"] is None
    assert "-1 marks a missing vote" in params["AggregatedTargetClassifier",
                                               "check_classifiers_classes"]
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
            for check, reason in common_expected_failures(_instance(name, cls)).items():
                assert check.startswith("check_") and len(reason) > 40, (name, check)


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
    reason = common_expected_failures(estimator).get(check.__name__)
    if reason is None:
        check(name, estimator)
    else:
        try:
            check(name, estimator)
        except (AssertionError, ValueError):  # ValueError: the check's data are not its input
            pytest.xfail(reason)
