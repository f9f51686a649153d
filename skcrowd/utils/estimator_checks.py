"""scikit-learn's estimator checks with skcrowd's domain checks, in the manner of imbalanced-learn.

:func:`parametrize_with_checks` yields, for each estimator, scikit-learn's checks and the domain
checks of its kind (see :func:`skcrowd.utils.discovery.all_estimators` for the kinds), with the
expected failures that hold for every estimator of that kind written once here, each with its
reason. A test module then adds only what is particular to its estimators::

    from skcrowd.utils.estimator_checks import parametrize_with_checks

    @parametrize_with_checks([DawidSkene(), GLAD(random_state=0)])
    def test_sklearn_compatible(estimator, check):
        check(estimator)

The domain checks are public functions of the signature of scikit-learn's, ``check(name,
estimator)``; each fits clones of the estimator on a few tasks (milliseconds for an aggregator,
about a second for a net):

- :func:`check_fit_error_leaves_estimator` (every kind): a ``fit`` that raises leaves the
  estimator's ``__dict__`` as it was;
- :func:`check_worker_permutation_invariance` (aggregators): permuting the workers (columns)
  leaves ``predict_proba`` unchanged;
- :func:`check_worker_without_votes` (aggregators): a worker (column) without any vote
  changes no soft label;
- :func:`check_comparison_order_invariance` (pairwise models): permuting the comparisons (rows)
  leaves the scores unchanged;
- :func:`check_item_relabelling_invariance` (pairwise models): renaming the items (other ids,
  of another type, sorting in another order) leaves each item's score unchanged;
- :func:`check_side_swap` (pairwise models): swapping ``left`` and ``right`` of every
  comparison leaves the scores unchanged and turns ``predict_proba`` into one minus it.
- :func:`check_text_worker_permutation_invariance` (text aggregators): permuting the workers
  (columns) leaves ``predict`` unchanged, and :func:`check_text_task_order` (text aggregators):
  permuting the tasks (rows) permutes ``predict`` alike, and ``fit_predict`` equals
  ``fit().predict()``.

scikit-learn's checks feed numeric arrays, which are not comparisons (a DataFrame of rows
``worker, left, right, label``): the pairwise models say so in their tags
(``input_tags.two_d_array=False``), so that scikit-learn runs only its checks that need no
data on them, and the contracts of the others (pickle, idempotent fit, order of the rows, bad
input) are tested on comparisons in ``tests/test_pairwise.py`` and by the domain checks above.
"""

import warnings
from functools import partial
from inspect import isfunction
from itertools import chain

import numpy as np
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "check_comparison_order_invariance",
    "check_fit_error_leaves_estimator",
    "check_item_relabelling_invariance",
    "check_side_swap",
    "check_text_task_order",
    "check_text_worker_permutation_invariance",
    "check_worker_permutation_invariance",
    "check_worker_without_votes",
    "common_expected_failures",
    "parametrize_with_checks",
]

_NOT_A_CLASSIFIER = (
    "the check reads classifier_tags of anything with predict_proba (an AttributeError, which it "
    "reports as an AssertionError); aggregators are not classifiers (no y). Sparse votes are "
    "tested in tests/aggregation/test_aggregators.py"
)
_Y_IGNORED = (
    "fit ignores y: an aggregator learns from the ratings X alone (y, the gold ratings, is for "
    "score), so a y of the wrong length or with NaN/inf is not an error"
)
_NOT_TEXT = ("the check feeds numbers; a text aggregator takes a votes matrix of strings and "
             "raises a TypeError naming the first entry that is not a string (its contracts on "
             "strings are tested in tests/test_texts.py and by the text domain checks)")

#: scikit-learn's checks that fail on every estimator of a kind, each with the exception it
#: fails by and why.
_COMMON_EXPECTED_FAILURES = {
    "aggregator": dict.fromkeys(
        ["check_estimator_sparse_array", "check_estimator_sparse_matrix"],
        (AssertionError, _NOT_A_CLASSIFIER)),
    "rating": dict.fromkeys(
        ["check_regressors_train", "check_supervised_y_2d", "check_supervised_y_no_nan"],
        (AssertionError, _Y_IGNORED)),
    # scikit-learn wraps the TypeError of check_positive_only_tag_during_fit in an AssertionError
    "text": {"check_positive_only_tag_during_fit": (AssertionError, _NOT_TEXT), **dict.fromkeys([
        "check_dict_unchanged", "check_dont_overwrite_parameters", "check_dtype_object",
        "check_estimators_dtypes", "check_estimators_fit_returns_self",
        "check_estimators_nan_inf", "check_estimators_overwrite_params",
        "check_estimators_pickle", "check_f_contiguous_array_estimator", "check_fit2d_1feature",
        "check_fit2d_1sample", "check_fit2d_predict1d", "check_fit_check_is_fitted",
        "check_fit_idempotent", "check_fit_score_takes_y",
        "check_methods_sample_order_invariance", "check_methods_subset_invariance",
        "check_n_features_in", "check_n_features_in_after_fitting",
        "check_pipeline_consistency", "check_readonly_memmap_input"], (TypeError, _NOT_TEXT))},
    # scikit-learn's classifier checks, on the feature models that are classifiers
    "feature_model": {
        "check_classifiers_classes": ((AssertionError, ValueError), (
            "-1 marks a missing vote (missing_label=-1): the check's labels {-1, 1} lose their "
            "-1 votes, leaving one class (classes_ is [1], an AssertionError of the check, or "
            "a wrapped classifier refuses one class with a ValueError)"
        )),
        "check_classifier_multioutput": (AssertionError, (
            "a 2-D y is a votes matrix (one target seen by several workers, a column per "
            "worker), not multi-output targets: predict gives one label per task"
        )),
    },
}

_RANDOM_START = (
    "M-MSR starts from one uniform draw of random_state per worker, in column order, and its "
    "trimmed means stop at a fixed point that depends on the start: another order of the "
    "workers, or one more worker, draws other starts"
)
#: The domain checks that fail on one of skcrowd's estimators (and its subclasses), each with
#: the exception it fails by and why.
_DOMAIN_EXPECTED_FAILURES = {
    "AggregatorSelector": {
        "check_worker_permutation_invariance": (AssertionError, (
            "the held-out votes are drawn by random_state in the order of the votes (task by "
            "task, worker by worker): permuting the workers holds out other votes, which can "
            "change the scores and the candidate chosen"
        )),
    },
    "KOS": {
        "check_worker_permutation_invariance": (AssertionError, (
            "the messages start at N(1, 1) draws of random_state, one per vote in the order of "
            "the votes, and stop when they move by less than tol=1e-6: another order of the "
            "workers gives other starts and soft labels that agree to about 1e-7, not 1e-8"
        )),
    },
    "MMSR": {
        "check_worker_without_votes": (AssertionError, _RANDOM_START),
        "check_worker_permutation_invariance": (AssertionError, (
            "M-MSR starts from one uniform draw of random_state per worker, in column order, "
            "and stops when no reliability moves by more than tol=1e-6: from the permuted "
            "starts the soft labels agree to 2.4e-7 on the check's crowd, not 1e-8"
        )),
    },
}

#: scikit-learn's checks that need no data, run on the estimators whose input is not a 2-D
#: array (multi-label votes, sequences): scikit-learn yields no other check for them.
_DATA_FREE_CHECKS = (
    "check_estimator_tags_renamed", "check_valid_tag_types", "check_estimator_repr",
    "check_no_attributes_set_in_init", "check_do_not_raise_errors_in_init_or_set_params",
    "check_mixin_order", "check_parameters_default_constructible",
    "check_get_params_invariance", "check_set_params",
)


def _kind(estimator):
    """The kind of ``estimator`` in :func:`~skcrowd.utils.discovery.all_estimators`, or None."""
    from .discovery import _kind, _kind_bases

    return _kind(type(estimator), _kind_bases())


def _domain_checks(kind):
    """The domain checks of an estimator of ``kind``."""
    if kind is not None:
        yield check_fit_error_leaves_estimator
    if kind == "aggregator":
        yield check_worker_permutation_invariance
        yield check_worker_without_votes
    if kind == "pairwise":
        yield check_comparison_order_invariance
        yield check_item_relabelling_invariance
        yield check_side_swap
    if kind == "text":
        yield check_text_worker_permutation_invariance
        yield check_text_task_order


def common_expected_failures(estimator):
    """The checks that skcrowd expects to fail on ``estimator``, each with how and why.

    These are scikit-learn's checks that fail on every estimator of the kind of ``estimator``
    by design (an aggregator is not a classifier, a rating aggregator ignores ``y``, a feature
    model's 2-D ``y`` is a votes matrix, ...) and the domain checks of this module that fail on
    one of skcrowd's models (or a subclass) by design. :func:`parametrize_with_checks` marks
    them as strict expected failures: a check that passes, or fails by another exception,
    fails the test.

    Parameters
    ----------
    estimator : estimator object
        An estimator; one of no skcrowd kind has no expected failure here.

    Returns
    -------
    failures : dict of str to tuple
        Name of each check expected to fail -> ``(exception type, reason)``: the exception
        the check raises (``AssertionError`` where the check's own assertion fails) and why.

    Examples
    --------
    >>> from skcrowd.aggregation import MMSR
    >>> from skcrowd.utils.estimator_checks import common_expected_failures
    >>> raises, reason = common_expected_failures(MMSR())["check_worker_without_votes"]
    >>> raises.__name__, reason[:34]
    ('AssertionError', 'M-MSR starts from one uniform draw')
    """
    failures = dict(_COMMON_EXPECTED_FAILURES.get(_kind(estimator), {}))
    for cls in reversed(type(estimator).__mro__):  # a subclass's reason wins
        if cls.__module__.startswith("skcrowd."):
            failures.update(_DOMAIN_EXPECTED_FAILURES.get(cls.__name__, {}))
    return failures


def _xfail(failure):
    """The strict ``pytest.mark.xfail`` of an expected failure: ``(exception type, reason)``,
    or a reason alone (any exception)."""
    import pytest

    raises, reason = failure if isinstance(failure, tuple) else (None, failure)
    return pytest.mark.xfail(raises=raises, reason=reason, strict=True)


def _sklearn_checks(estimator, legacy):
    """scikit-learn's checks of ``estimator``, as ``(estimator, check)`` pairs.

    An estimator whose input is not a 2-D array (``input_tags.two_d_array=False``: multi-label
    votes, sequences) gets, besides the cloning check that scikit-learn yields for it, the
    checks that need no data (:data:`_DATA_FREE_CHECKS`).
    """
    from sklearn.exceptions import SkipTestWarning
    from sklearn.utils import estimator_checks, get_tags

    two_d = get_tags(estimator).input_tags.two_d_array
    with warnings.catch_warnings():  # scikit-learn's "Can't test estimator" for other input
        warnings.simplefilter("ignore", SkipTestWarning)
        yield from estimator_checks.estimator_checks_generator(estimator, legacy=legacy)
    if not two_d:
        name = type(estimator).__name__
        for check in _DATA_FREE_CHECKS:
            yield estimator, partial(getattr(estimator_checks, check), name)


def _check_id(obj):
    """pytest id of an estimator (its repr, changed parameters only) or of a check (its name,
    with the keywords it is bound to: ``check_estimators_pickle(readonly_memmap=True)``), the
    ids scikit-learn's ``parametrize_with_checks`` gives."""
    if isinstance(obj, partial):
        keywords = ",".join(f"{k}={v}" for k, v in obj.keywords.items())
        return obj.func.__name__ + (f"({keywords})" if keywords else "")
    if isfunction(obj):
        return obj.__name__
    if hasattr(obj, "get_params"):
        with config_context(print_changed_only=True):
            return "".join(str(obj).split())
    return None


def parametrize_with_checks(estimators, *, expected_failed_checks=None, legacy=True):
    """Pytest parametrization of scikit-learn's checks and skcrowd's domain checks.

    The same as :func:`sklearn.utils.estimator_checks.parametrize_with_checks`, and for each
    estimator the domain checks of its kind (the kinds of
    :func:`skcrowd.utils.discovery.all_estimators`):

    - aggregators: :func:`check_fit_error_leaves_estimator`,
      :func:`check_worker_permutation_invariance`, :func:`check_worker_without_votes`;
    - pairwise models: :func:`check_fit_error_leaves_estimator`,
      :func:`check_comparison_order_invariance`, :func:`check_item_relabelling_invariance`,
      :func:`check_side_swap`;
    - text aggregators: :func:`check_fit_error_leaves_estimator`,
      :func:`check_text_worker_permutation_invariance`, :func:`check_text_task_order`;
    - rating and multi-label aggregators, feature models: :func:`check_fit_error_leaves_estimator`;
    - estimators of no skcrowd kind: none.

    An estimator whose input is not a 2-D array (multi-label votes, sequences; tag
    ``input_tags.two_d_array=False``) gets scikit-learn's checks that need no data: scikit-learn
    yields no other check for it, and the contracts on its data are its own tests'.

    The checks that :func:`common_expected_failures` lists for an estimator (skcrowd's
    expected failures for its kind and model) and those that the caller's
    ``expected_failed_checks`` returns for it are marked as strict expected failures
    (``pytest.mark.xfail(strict=True)``) with their reasons, and the exception they fail by
    where one is given: such a check that passes, or fails by another exception, fails. The
    caller's entry wins for a check in both.

    Parameters
    ----------
    estimators : list of estimator objects
        Estimators (instances, not classes) to check.
    expected_failed_checks : callable, default=None
        Called on each estimator, returns a dict of the checks that are expected to fail on
        it, in addition to skcrowd's common ones: ``{check name: (exception type, reason)}``,
        or ``{check name: reason}`` (scikit-learn's form: any exception).
    legacy : bool, default=True
        Whether to include scikit-learn's legacy checks (see scikit-learn's function).

    Returns
    -------
    decorator : ``pytest.mark.parametrize``
        Parametrizes a test of arguments ``estimator, check``; the test calls
        ``check(estimator)``.

    See Also
    --------
    sklearn.utils.estimator_checks.parametrize_with_checks : scikit-learn's checks alone.

    Examples
    --------
    >>> from skcrowd.aggregation import DawidSkene, MajorityVote
    >>> from skcrowd.utils.estimator_checks import parametrize_with_checks
    >>> @parametrize_with_checks([DawidSkene(), MajorityVote()])
    ... def test_sklearn_compatible(estimator, check):
    ...     check(estimator)
    """
    import pytest

    if any(isinstance(estimator, type) for estimator in estimators):
        raise TypeError("Pass estimator instances, not classes, to parametrize_with_checks.")

    def checks():
        for estimator in estimators:
            failures = common_expected_failures(estimator)
            if expected_failed_checks is not None:
                failures.update(expected_failed_checks(estimator))
            name = type(estimator).__name__
            domain = ((estimator, partial(check, name))
                      for check in _domain_checks(_kind(estimator)))
            for instance, check in chain(_sklearn_checks(estimator, legacy), domain):
                failure = failures.get(check.func.__name__)
                yield (instance, check) if failure is None else pytest.param(
                    instance, check, marks=_xfail(failure))

    return pytest.mark.parametrize("estimator, check", list(checks()), ids=_check_id)


# ---------------------------------------------------------------------------
# domain checks
# ---------------------------------------------------------------------------


def _crowd():
    """A small seeded simulated crowd: 30 binary tasks, 6 workers, 3 votes a task.

    Binary, so that every aggregator (KOS is binary) takes it, with an odd number of votes on
    each task, so that no majority is tied.
    """
    from ..datasets import simulate_annotators

    y_true = np.random.default_rng(0).integers(0, 2, 30)
    return simulate_annotators(y_true, 6, n_classes=2, accuracy=(0.6, 0.9), votes_per_task=3,
                               random_state=0).votes


def _comparisons():
    """A small seeded crowd of comparisons: 8 items (log-scores 0-7 halved), 80 comparisons of
    random pairs by 5 workers, one of whom always answers the opposite of the model."""
    import pandas as pd

    rng = np.random.default_rng(0)
    left = rng.integers(0, 8, 80)
    right = (left + rng.integers(1, 8, 80)) % 8
    worker = rng.integers(0, 5, 80)
    left_wins = rng.random(80) < 1 / (1 + np.exp((right - left) / 2))
    left_wins ^= worker == 4
    return pd.DataFrame({"worker": worker, "left": left, "right": right,
                         "label": np.where(left_wins, left, right)})


def _text_crowd():
    """A small seeded crowd of texts: 12 sentences of 5-8 words, 6 workers, 3 answers a task,
    each word of an answer replaced (by a word of the vocabulary) or dropped with probability
    0.15, as an object array with None where a worker did not answer."""
    rng = np.random.default_rng(0)
    vocabulary = np.array("the a cat dog sat ran on under mat red blue big small house tree "
                          "old".split(), dtype=object)
    X = np.full((12, 6), None, dtype=object)
    for i in range(12):
        sentence = rng.choice(vocabulary, rng.integers(5, 9))
        for j in rng.choice(6, 3, replace=False):
            words = [rng.choice(vocabulary) if r < 0.1 else w
                     for w, r in zip(sentence, rng.random(len(sentence))) if r > 0.05]
            X[i, j] = " ".join(words or sentence)
    return X


def _seeded_clone(estimator):
    """A clone of ``estimator`` with ``random_state=0`` where it takes one."""
    estimator = clone(estimator)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=0)
    return estimator


def _fit(estimator, X, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X) if y is None else estimator.fit(X, y)


def _valid_and_invalid_data(estimator):
    """Arguments of ``fit`` of ``estimator`` (``X``, or ``X`` and ``y``), and the same with one
    invalid vote."""
    from sklearn.utils import get_tags

    kind = _kind(estimator)
    if kind == "feature_model":  # 30 tasks of 3 features, the votes of 6 workers as y
        X = np.random.default_rng(0).normal(size=(30, 3)).astype(np.float32)
        y = _crowd().astype(float)
        if get_tags(estimator).input_tags.three_d_array:  # 10 sequences of 3 tokens
            X, y = X.reshape(10, 3, 3), y.reshape(10, 3, 6)
        y_invalid = y.copy()
        y_invalid.flat[0] = np.inf
        return (X, y), (X, y_invalid)
    if kind == "pairwise":  # a comparison of an item with itself is invalid
        X = _comparisons()
        X_invalid = X.copy()
        X_invalid.loc[0, "right"] = X_invalid.loc[0, "left"]
        return (X,), (X_invalid,)
    if kind == "text":  # an empty answer is an error (a missing one is None)
        X = _text_crowd()
        X_invalid = X.copy()
        X_invalid[0, np.flatnonzero(np.not_equal(X[0], None))[0]] = " "
        return (X,), (X_invalid,)
    if kind == "aggregator":
        X = _crowd().astype(float)
        invalid = np.inf  # no missing_label makes a vote of inf valid
    elif kind == "rating":
        X = np.array([[1.0, 2.0, np.nan], [3.0, 4.0, 5.0], [2.0, np.nan, 1.0]])
        invalid = np.inf
    else:  # multilabel: tasks x workers x labels, bits or -1
        X = np.array([[[1, 0], [1, 1], [-1, -1]], [[0, 0], [0, 1], [0, 0]],
                      [[1, 1], [-1, -1], [1, 0]]])
        invalid = 2
    X_invalid = X.copy()
    X_invalid.flat[0] = invalid
    return (X,), (X_invalid,)


def _assert_dict_as_it_was(name, estimator, before, when):
    after = estimator.__dict__
    added, removed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    changed = sorted(key for key in set(before) & set(after) if after[key] is not before[key])
    assert not (added or removed or changed), (
        f"{name}: a fit that raised {when} changed the estimator (added {added}, removed "
        f"{removed}, replaced {changed}); a fit that raises must leave it as it was.")


def check_fit_error_leaves_estimator(name, estimator):
    """Check that a ``fit`` that raises leaves the estimator's ``__dict__`` as it was.

    skcrowd's failed-fit policy: a fit that fails (bad input, a lost cluster, an interrupt)
    leaves no half-written fitted attribute, so the estimator stays unfitted or keeps its last
    fit. The check fits a clone on invalid votes (one vote of ``inf``, or of ``2`` for
    multi-label votes; a feature model gets 3 features and the votes as ``y``; a pairwise model
    gets comparisons whose first row compares an item with itself) before any fit
    and after a valid fit, and asserts that each raises a ValueError and leaves every attribute
    the same object as before.

    Parameters
    ----------
    name : str
        Name of the estimator, for the messages.
    estimator : estimator object
        An estimator of one of skcrowd's kinds (an aggregator, a rating or multi-label
        aggregator, a feature model, a pairwise model).

    Raises
    ------
    AssertionError
        If a fit on invalid votes does not raise a ValueError or changes the estimator.
    """
    valid, invalid = _valid_and_invalid_data(estimator)
    estimator = clone(estimator)
    for when in ("before any fit", "after a valid fit"):
        if when == "after a valid fit":
            _fit(estimator, *valid)
        before = dict(estimator.__dict__)
        try:
            _fit(estimator, *invalid)
        except ValueError:
            pass
        else:
            raise AssertionError(f"{name}: fit took invalid votes {when}.")
        _assert_dict_as_it_was(name, estimator, before, when)


def check_worker_permutation_invariance(name, aggregator):
    """Check that permuting the workers (columns) leaves ``predict_proba`` unchanged.

    A model of the workers has no order of the workers: a clone (``random_state=0`` where it
    takes one) fitted on the votes with their
    columns permuted gives the same soft labels (to 1e-8) as one fitted on the votes, on a
    small seeded simulated crowd (30 binary tasks, 6 workers, 3 votes a task).

    Parameters
    ----------
    name : str
        Name of the aggregator, for the messages.
    aggregator : estimator object
        An aggregator of votes.

    Raises
    ------
    AssertionError
        If the soft labels differ by more than 1e-8.
    """
    X = _crowd()
    permutation = np.array([3, 0, 5, 1, 4, 2])
    proba = _fit(_seeded_clone(aggregator), X).predict_proba(X)
    permuted = _fit(_seeded_clone(aggregator), X[:, permutation]).predict_proba(X[:, permutation])
    np.testing.assert_allclose(
        np.asarray(permuted), np.asarray(proba), rtol=0, atol=1e-8,
        err_msg=f"{name}: permuting the workers (columns) changed predict_proba")


def check_worker_without_votes(name, aggregator):
    """Check that a worker (column) without any vote changes no soft label.

    A clone (``random_state=0`` where it takes one) fitted on the votes with a column of missing
    votes inserted among the workers gives
    the same soft labels (to 1e-8) as one fitted on the votes, on a small seeded simulated
    crowd (30 binary tasks, 6 workers, 3 votes a task).

    Parameters
    ----------
    name : str
        Name of the aggregator, for the messages.
    aggregator : estimator object
        An aggregator of votes whose ``missing_label`` is -1 (the default).

    Raises
    ------
    AssertionError
        If the soft labels differ by more than 1e-8.
    """
    X = _crowd()
    with_empty = np.insert(X, 2, -1, axis=1)
    proba = _fit(_seeded_clone(aggregator), X).predict_proba(X)
    proba_empty = _fit(_seeded_clone(aggregator), with_empty).predict_proba(with_empty)
    np.testing.assert_allclose(
        np.asarray(proba_empty), np.asarray(proba), rtol=0, atol=1e-8,
        err_msg=f"{name}: a worker (column) without votes changed predict_proba")


def _assert_same_scores(name, scores, other, what):
    np.testing.assert_allclose(
        np.asarray(other, dtype=float), np.asarray(scores, dtype=float), rtol=0, atol=1e-6,
        err_msg=f"{name}: {what} changed the scores")


def check_comparison_order_invariance(name, model):
    """Check that permuting the comparisons (rows) leaves the scores unchanged.

    A clone fitted on the comparisons in another order gives the same ``scores_`` (to 1e-6)
    and the same index of items, on a small seeded crowd (8 items, 80 comparisons, 5 workers,
    one adversarial).

    Parameters
    ----------
    name : str
        Name of the model, for the messages.
    model : estimator object
        A pairwise model.

    Raises
    ------
    AssertionError
        If the scores differ by more than 1e-6.
    """
    X = _comparisons()
    scores = _fit(_seeded_clone(model), X).scores_
    permuted = X.iloc[np.random.default_rng(1).permutation(len(X))]
    other = _fit(_seeded_clone(model), permuted).scores_
    assert list(other.index) == list(scores.index), f"{name}: the items' order changed"
    _assert_same_scores(name, scores, other, "permuting the comparisons")


def check_item_relabelling_invariance(name, model):
    """Check that renaming the items leaves each item's score unchanged.

    The items (integers 0-7) renamed to strings that sort in the reverse order give each item
    the same score (to 1e-6), on a small seeded crowd (8 items, 80 comparisons, 5 workers).

    Parameters
    ----------
    name : str
        Name of the model, for the messages.
    model : estimator object
        A pairwise model.

    Raises
    ------
    AssertionError
        If an item's score changes by more than 1e-6.
    """
    X = _comparisons()
    scores = _fit(_seeded_clone(model), X).scores_
    rename = {item: f"item {9 - item}" for item in range(8)}
    renamed = X.assign(**{column: X[column].map(rename) for column in ("left", "right", "label")})
    other = _fit(_seeded_clone(model), renamed).scores_
    _assert_same_scores(name, scores, other[[rename[item] for item in scores.index]],
                        "renaming the items")


def check_side_swap(name, model):
    """Check that swapping the sides of every comparison leaves the scores unchanged.

    A clone fitted on the comparisons with ``left`` and ``right`` exchanged (the label, the
    preferred item, kept) gives the same ``scores_`` (to 1e-6), and ``predict_proba`` of the
    swapped rows is one minus that of the rows, on a small seeded crowd (8 items, 80
    comparisons, 5 workers).

    Parameters
    ----------
    name : str
        Name of the model, for the messages.
    model : estimator object
        A pairwise model.

    Raises
    ------
    AssertionError
        If the scores or the probabilities differ by more than 1e-6.
    """
    X = _comparisons()
    fitted = _fit(_seeded_clone(model), X)
    swapped = X.rename(columns={"left": "right", "right": "left"})
    _assert_same_scores(name, fitted.scores_, _fit(_seeded_clone(model), swapped).scores_,
                        "swapping left and right")
    np.testing.assert_allclose(
        fitted.predict_proba(swapped), 1 - fitted.predict_proba(X), rtol=0, atol=1e-12,
        err_msg=f"{name}: predict_proba of the swapped rows is not one minus predict_proba")


def check_text_worker_permutation_invariance(name, aggregator):
    """Check that permuting the workers (columns) of texts leaves ``predict`` unchanged.

    A text aggregator has no order of the workers: a clone (``random_state=0`` where it takes
    one) fitted on the answers with their columns permuted gives the same text for every task
    as one fitted on the answers, on a small seeded crowd of texts (12 tasks, 6 workers, 3
    answers a task).

    Parameters
    ----------
    name : str
        Name of the aggregator, for the messages.
    aggregator : estimator object
        An aggregator of texts (a votes matrix of strings).

    Raises
    ------
    AssertionError
        If a task's text differs.
    """
    X = _text_crowd()
    permutation = np.array([3, 0, 5, 1, 4, 2])
    texts = _fit(_seeded_clone(aggregator), X).predict(X)
    permuted = _fit(_seeded_clone(aggregator), X[:, permutation]).predict(X[:, permutation])
    assert list(permuted) == list(texts), (
        f"{name}: permuting the workers (columns) changed predict")


def check_text_task_order(name, aggregator):
    """Check that permuting the tasks (rows) of texts permutes ``predict`` alike, and that
    ``fit_predict`` gives ``fit().predict()``.

    On a small seeded crowd of texts (12 tasks, 6 workers, 3 answers a task), with a clone
    (``random_state=0`` where it takes one).

    Parameters
    ----------
    name : str
        Name of the aggregator, for the messages.
    aggregator : estimator object
        An aggregator of texts (a votes matrix of strings).

    Raises
    ------
    AssertionError
        If a task's text differs.
    """
    X = _text_crowd()
    order = np.random.default_rng(1).permutation(len(X))
    texts = list(_fit(_seeded_clone(aggregator), X).predict(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert list(_seeded_clone(aggregator).fit_predict(X)) == texts, (
            f"{name}: fit_predict(X) differs from fit(X).predict(X)")
    permuted = _fit(_seeded_clone(aggregator), X[order]).predict(X[order])
    assert list(permuted) == [texts[i] for i in order], (
        f"{name}: permuting the tasks (rows) did not permute predict alike")
