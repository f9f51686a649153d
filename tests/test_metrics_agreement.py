"""Tests of the inter-annotator agreement coefficients of skcrowd.metrics."""

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

from skcrowd.datasets import simulate_annotators
from skcrowd.metrics import AgreementInterval, _agreement, fleiss_kappa, krippendorff_alpha

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units,
# values 1-5, NaN missing; published alpha: nominal 0.743, ordinal 0.815, interval 0.849.
_NAN = np.nan
KRIPPENDORFF_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _NAN, _NAN, _NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _NAN, 3],
    [_NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _NAN],
]).T

# Fleiss (1971) as reproduced in most textbooks: 10 subjects, 14 raters, 5 categories;
# row i gives how many raters chose each category. Published kappa: 0.210.
FLEISS_1971_COUNTS = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])

# Small table with missing votes (-1): tasks (1, 2), (3, 3), (1, 1, 3) and a task with one vote.
SMALL = np.array([
    [1, 2, -1],
    [3, -1, 3],
    [1, 1, 3],
    [-1, 2, -1],
])


def votes_from_counts(counts):
    """A complete votes matrix whose task i has counts[i, k] votes for class k."""
    return np.array([np.repeat(np.arange(counts.shape[1]), row) for row in counts])


def reference_alpha(votes, level, missing=-1):
    """Krippendorff's alpha by enumerating the pairs of values (independent of skcrowd)."""
    units = [[x for x in row if x != missing] for row in votes.tolist()]
    units = [u for u in units if len(u) >= 2]
    values = sorted({x for u in units for x in u})
    pairs = {}  # coincidences o_ck
    for u in units:
        for a, b in itertools.permutations(range(len(u)), 2):
            pairs[u[a], u[b]] = pairs.get((u[a], u[b]), 0.0) + 1.0 / (len(u) - 1)
    totals = {c: sum(o for (a, _), o in pairs.items() if a == c) for c in values}
    n = sum(totals.values())

    def delta(c, k):
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (c - k) ** 2
        lo, hi = min(c, k), max(c, k)
        return (sum(totals[g] for g in values if lo <= g <= hi) - (totals[c] + totals[k]) / 2) ** 2

    observed = sum(o * delta(c, k) for (c, k), o in pairs.items())
    expected = sum(totals[c] * totals[k] * delta(c, k) for c in values for k in values)
    return 1.0 - (n - 1) * observed / expected


# ---------------------------------------------------------------------------
# Krippendorff's alpha: published and hand-computed values
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("level, published", [
    ("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849),
])
def test_alpha_equals_krippendorffs_published_example(level, published):
    alpha = krippendorff_alpha(KRIPPENDORFF_2011, level_of_measurement=level,
                               missing_label=np.nan)
    assert round(alpha, 3) == published
    assert alpha == pytest.approx(reference_alpha(np.nan_to_num(KRIPPENDORFF_2011, nan=-1),
                                                  level), abs=1e-12)


def test_alpha_hand_computed_on_a_small_table_with_missing_votes():
    # pairable values: 1 x3, 2 x1, 3 x3 (n = 7); the task with one vote is left out.
    # nominal: observed 2 (task 0) + 4 / 2 (task 2) = 4; expected 2 (3 + 9 + 3) = 30
    assert krippendorff_alpha(SMALL) == pytest.approx(1 - 6 * 4 / 30)
    # interval: observed 2 * 1 + 4 * 4 / 2 = 10; expected 2 (3 * 1 + 9 * 4 + 3 * 1) = 84
    assert krippendorff_alpha(SMALL, level_of_measurement="interval") == pytest.approx(
        1 - 6 * 10 / 84)
    # ordinal: mid-ranks 1.5, 3.5, 5.5 give distances 4 (1-2, 2-3) and 16 (1-3):
    # observed 2 * 4 + 4 * 16 / 2 = 40; expected 2 (3 * 4 + 9 * 16 + 3 * 4) = 336
    assert krippendorff_alpha(SMALL, level_of_measurement="ordinal") == pytest.approx(
        1 - 6 * 40 / 336)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(4))
def test_alpha_equals_pair_enumeration_on_random_sparse_votes(level, seed):
    rng = np.random.RandomState(seed)
    votes = rng.randint(4, size=(30, 6))
    votes[rng.rand(30, 6) < 0.6] = -1
    expected = reference_alpha(votes, level)
    assert krippendorff_alpha(votes, level_of_measurement=level) == pytest.approx(expected,
                                                                                  abs=1e-12)


def test_alpha_ignores_tasks_with_fewer_than_two_votes():
    extra = np.array([[0, -1, -1], [-1, -1, 2], [-1, -1, -1]])
    assert krippendorff_alpha(np.vstack([SMALL, extra])) == krippendorff_alpha(SMALL)


def test_alpha_extremes():
    perfect = np.array([[0, 0, -1], [1, 1, 1], [2, -1, 2]])
    assert krippendorff_alpha(perfect) == pytest.approx(1.0)
    # every pair disagrees: n_0 = n_1 = N, observed 2N, expected 2 N^2 -> 1 - (2N - 1) / N
    opposed = np.tile([[0, 1]], (5, 1))
    assert krippendorff_alpha(opposed) == pytest.approx(1 - 9 / 5)


def test_ordinal_alpha_follows_the_order_of_classes():
    words = np.array([["low", "mid"], ["mid", "high"], ["high", "high"], ["low", "low"]])
    as_ints = np.array([[0, 1], [1, 2], [2, 2], [0, 0]])
    in_order = krippendorff_alpha(words, level_of_measurement="ordinal",
                                  classes=["low", "mid", "high"])
    assert in_order == pytest.approx(krippendorff_alpha(as_ints, level_of_measurement="ordinal"))
    alphabetical = krippendorff_alpha(words, level_of_measurement="ordinal",
                                      classes=["high", "low", "mid"])
    assert alphabetical != pytest.approx(in_order)


# ---------------------------------------------------------------------------
# Fleiss' kappa
# ---------------------------------------------------------------------------


def test_kappa_equals_fleiss_published_example():
    assert round(fleiss_kappa(votes_from_counts(FLEISS_1971_COUNTS)), 3) == 0.210


def test_kappa_hand_computed_with_missing_votes():
    votes = np.array([[0, 0, -1], [1, 1, 1], [0, 1, -1], [1, -1, -1]])
    # P_o = (1 + 1 + 0) / 3; prevalences 3/8 and 5/8 (the one-vote task counts), P_e = 17/32
    assert fleiss_kappa(votes) == pytest.approx((2 / 3 - 17 / 32) / (1 - 17 / 32))


def test_kappa_with_equal_votes_per_task_is_fleiss_formula():
    rng = np.random.RandomState(0)
    votes = rng.randint(3, size=(40, 5))
    counts = np.stack([(votes == k).sum(axis=1) for k in range(3)], axis=1)
    p_i = ((counts * (counts - 1)).sum(axis=1) / (5 * 4)).mean()
    p_e = ((counts.sum(axis=0) / counts.sum()) ** 2).sum()
    assert fleiss_kappa(votes) == pytest.approx((p_i - p_e) / (1 - p_e))


def test_kappa_extremes():
    assert fleiss_kappa(np.array([[0, 0], [1, 1], [2, 2]])) == pytest.approx(1.0)
    assert fleiss_kappa(np.tile([[0, 1]], (4, 1))) == pytest.approx(-1.0)


# ---------------------------------------------------------------------------
# input formats: the estimators' conventions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("coefficient", [krippendorff_alpha, fleiss_kappa])
def test_same_value_for_every_input_format(coefficient):
    dense = np.array([[0, 0, -1], [1, 1, 1], [0, 1, -1], [1, -1, 0], [-1, 2, 2]])
    expected = coefficient(dense)
    rows, cols = np.nonzero(dense >= 0)
    explicit_zeros = sp.csr_array((dense[rows, cols], (rows, cols)), shape=dense.shape)
    names = np.array(["cat", "dog", "emu"], dtype=object)
    as_strings = np.where(dense >= 0, names[np.maximum(dense, 0)], None)
    frame = pd.DataFrame(np.where(dense >= 0, dense, np.nan), columns=["a", "b", "c"])
    masked = np.ma.masked_array(dense, mask=dense < 0)
    assert coefficient(explicit_zeros) == pytest.approx(expected)
    assert coefficient(as_strings, missing_label=None) == pytest.approx(expected)
    assert coefficient(frame, missing_label=np.nan) == pytest.approx(expected)
    assert coefficient(masked) == pytest.approx(expected)
    assert coefficient(np.where(dense >= 0, dense, 99), missing_label=99) == pytest.approx(
        expected)


# ---------------------------------------------------------------------------
# bootstrap intervals
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("coefficient", [krippendorff_alpha, fleiss_kappa])
def test_interval_is_reproducible_and_brackets_the_estimate(coefficient):
    y = np.random.RandomState(0).randint(3, size=200)
    votes = simulate_annotators(y, 10, accuracy=0.7, votes_per_task=(1, 4), random_state=0).votes
    result = coefficient(votes, confidence_level=0.9, random_state=1)
    assert isinstance(result, AgreementInterval)
    assert result.estimate == coefficient(votes)
    assert result.low < result.estimate < result.high
    assert result == coefficient(votes, confidence_level=0.9, random_state=1)
    assert result != coefficient(votes, confidence_level=0.9, random_state=2)
    wider = coefficient(votes, confidence_level=0.99, random_state=1)
    assert wider.low < result.low and wider.high > result.high


def test_bootstrap_replicate_is_the_coefficient_of_the_resampled_tasks():
    """A replicate's weights give the alpha of the votes matrix with the drawn tasks."""
    rng = np.random.RandomState(3)
    votes = rng.randint(4, size=(25, 5))
    votes[rng.rand(25, 5) < 0.5] = -1
    votes = votes[(votes >= 0).sum(axis=1) > 0]
    counts, classes = _agreement._agreement_counts(votes, -1, None)
    draws = rng.randint(len(votes), size=(3, len(votes)))
    weights = np.stack([np.bincount(d, minlength=len(votes)) for d in draws]).astype(float)
    for level in ("nominal", "ordinal", "interval"):
        statistic, _ = _agreement._alpha_statistic(counts, level, classes)
        expected = [krippendorff_alpha(votes[d], level_of_measurement=level) for d in draws]
        np.testing.assert_allclose(statistic(weights), expected, rtol=1e-10)
    expected = [fleiss_kappa(votes[d]) for d in draws]
    np.testing.assert_allclose(_agreement._kappa_statistic(counts)(weights), expected, rtol=1e-10)


def test_interval_does_not_depend_on_the_batch_size(monkeypatch):
    votes = np.random.RandomState(0).randint(3, size=(60, 4))
    full = krippendorff_alpha(votes, confidence_level=0.9, n_resamples=50, random_state=0)
    monkeypatch.setattr(_agreement, "_BOOTSTRAP_BATCH_ENTRIES", 7 * 60)  # batches of 7 replicates
    assert krippendorff_alpha(votes, confidence_level=0.9, n_resamples=50,
                              random_state=0) == full


def test_interval_shrinks_with_more_tasks():
    def width(n_tasks):
        y = np.random.RandomState(0).randint(2, size=n_tasks)
        votes = simulate_annotators(y, 8, accuracy=0.75, votes_per_task=3, random_state=0).votes
        _, low, high = krippendorff_alpha(votes, confidence_level=0.95, random_state=0)
        return high - low

    assert width(2000) < 0.5 * width(200)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("coefficient", [krippendorff_alpha, fleiss_kappa])
def test_errors_when_undefined(coefficient):
    with pytest.raises(ValueError, match="no task has two votes"):
        coefficient(np.array([[0, -1], [-1, 1], [1, -1]]))
    with pytest.raises(ValueError, match="undefined"):
        coefficient(np.array([[1, 1], [1, -1], [1, 1]]))
    with pytest.raises(ValueError, match="no observed vote"):
        coefficient(np.full((3, 2), -1))


def test_alpha_undefined_when_only_unpairable_votes_differ():
    # the only 0 is a single vote: pairable values are all 1
    with pytest.raises(ValueError, match="every pairable vote is 1"):
        krippendorff_alpha(np.array([[1, 1], [0, -1]]))


def test_level_errors_name_the_labels():
    words = np.array([["low", "mid"], ["mid", "high"]])
    with pytest.raises(ValueError, match="needs numeric labels"):
        krippendorff_alpha(words, level_of_measurement="interval")
    with pytest.raises(ValueError, match="pass classes= the labels in their order"):
        krippendorff_alpha(words, level_of_measurement="ordinal")
    with pytest.raises(InvalidParameterError, match="level_of_measurement"):
        krippendorff_alpha(words, level_of_measurement="ratio")


@pytest.mark.parametrize("coefficient", [krippendorff_alpha, fleiss_kappa])
def test_parameter_errors(coefficient):
    votes = np.array([[0, 1], [1, 1]])
    with pytest.raises(InvalidParameterError, match="confidence_level"):
        coefficient(votes, confidence_level=1.5)
    with pytest.raises(InvalidParameterError, match="n_resamples"):
        coefficient(votes, confidence_level=0.9, n_resamples=0)
    with pytest.raises(ValueError, match="label 2 at row \\(task\\) 1.*not one of the known"):
        coefficient(np.array([[0, 1], [2, 1]]), classes=[0, 1])
    with pytest.raises(ValueError, match="classes must be distinct"):
        coefficient(votes, classes=[0, 1, 1])
