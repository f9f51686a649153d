"""Fast paths of Dawid-Skene's fit that must give the results of the slow ones exactly.

The shortcut of the numba Dawid-Skene pass's leave-one-out counts: a vote whose task's best
class wins by more than the bound on every other class's leave-one-out gap goes to that class
without the class-by-class comparison; the other votes (close tasks, exact ties) take the
comparison. Both must give the counts of the definition.

The distinct (cell, count) pairs of the "auto" prior's strength search: encoded into one
integer code where the counts are integers, they must be the arrays of the two-key lexsort.
"""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation import kernels
from skcrowd.aggregation.kernels import BlockLayout, ds_block_statistics, ds_e_step, safe_log
from skcrowd.aggregation.kernels import _common

needs_numba = pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")


def _crowd(rng, K=3, n_tasks=400, n_workers=8):
    """Sharp tasks (reliable workers agreeing) and exact ties (a worker and its mirror image,
    alone on a task), with the log-confusions of both kinds of worker."""
    truth = rng.integers(K, size=n_tasks)
    votes = np.full((n_tasks, n_workers), -1)
    sharp = np.arange(n_tasks) % 4 != 0
    votes[sharp, :5] = truth[sharp, None]
    flip = rng.random((n_tasks, 5)) < 0.1  # some disagreement among the reliable workers
    votes[:, :5][sharp[:, None] & flip] = ((truth[:, None] + 1) % K).repeat(5, 1)[
        sharp[:, None] & flip]
    tied = ~sharp
    votes[tied, 5] = 0  # workers 5 and 6 are the same uniform guesser: each vote's
    votes[tied, 6] = 1  # leave-one-out posterior is the other's, a tie between classes
    votes[rng.random(n_tasks) < 0.3, 7] = 2  # a worker with votes on a few tasks
    conf = np.full((n_workers, K, K), 0.05 / (K - 1))
    conf[:, np.arange(K), np.arange(K)] = 0.95
    conf[5:7] = 1.0 / K
    log_conf_t = np.ascontiguousarray(np.log(conf).transpose(0, 2, 1))
    return check_votes(votes, n_classes=K), log_conf_t


def _reference(layout, log_conf_t, resp, rows, n_rows, tie=1e-9):
    """The definition, vote by vote: the classes within ``tie`` of the best of ``log
    resp[task] - log P(vote | class)`` share the vote."""
    K = layout.n_classes
    out = np.zeros((n_rows, K, K))
    log_resp = safe_log(resp)
    for task, worker, label in zip(layout.task, layout.worker, layout.label):
        if rows[worker] < 0:
            continue
        gap = log_resp[task] - log_conf_t[worker, label]
        tied = gap >= gap.max() - tie
        out[rows[worker], label, tied] += 1.0 / tied.sum()
    return out


@needs_numba
@pytest.mark.parametrize("chunks", ["one chunk", "chunks"])
def test_leave_one_out_counts_shortcut_and_ties(chunks, monkeypatch):
    rng = np.random.default_rng(0)
    votes, log_conf_t = _crowd(rng)
    layout = BlockLayout(votes)
    log_priors = np.log(np.full(3, 1.0 / 3))
    monkeypatch.setattr(kernels, "ENGINE", "numba")
    if chunks == "chunks":
        monkeypatch.setattr(_common, "PARALLEL_MIN_VOTES", 0)
    resp = ds_e_step(layout, log_conf_t, log_priors)[0]
    workers = np.arange(votes.n_workers)
    for rows, n_rows in [(workers, votes.n_workers),
                         (np.where(workers % 2 == 0, workers // 2, -1), 4)]:
        got = ds_block_statistics(layout, log_conf_t, log_priors, cavity=True,
                                  cavity_rows=rows, n_cavity_rows=n_rows).cavity_counts
        expected = _reference(layout, log_conf_t, resp, rows, n_rows)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
        # every counted vote is counted once, and the tied votes were split
        assert got.sum() == pytest.approx(np.isin(layout.worker, workers[rows >= 0]).sum())
        assert np.any((got % 1.0) != 0.0)


def _pairs_cases():
    """Keys and values of ``_distinct_pairs``: hand-made ties, the counts of a crowd, values
    that are not integers, large keys and values, zeros of both signs."""
    rng = np.random.default_rng(0)
    counts_key = rng.integers(100, size=5000)
    yield "ties", np.array([3, 1, 3, 1, 3, 0, 1]), np.array([2.0, 5.0, 2.0, 5.0, 1.0, 7.0, 4.0])
    yield "hard counts", counts_key, rng.integers(1, 120, size=5000).astype(np.float64)
    yield "one pair", np.array([4]), np.array([1.0])
    yield "empty", np.array([], dtype=np.int64), np.array([], dtype=np.float64)
    yield "fractions", counts_key, rng.integers(1, 9, size=5000) / 2.0
    yield "a fraction", np.array([0, 0, 1, 0]), np.array([1.0, 1.0 + 2.0**-40, 1.0, 1.0])
    yield "NaN and inf", np.array([0, 0, 1, 1, 0]), np.array([1.0, np.nan, np.inf, 2.0, 1.0])
    yield "above 2**53", np.array([0, 1, 0]), np.array([2.0**60, 1.0, 2.0**60])
    yield "negative values", counts_key, rng.integers(-5, 5, size=5000).astype(np.float64)
    # -0.0 and 0.0 are one pair: the first of them in the stable order is returned
    yield "signed zeros", np.array([1, 1, 0, 1, 0]), np.array([-0.0, 0.0, 0.0, 2.0, -0.0])
    yield "negative zero, negatives", np.array([1, 1, 1]), np.array([-1.0, -0.0, 0.0])
    # a range of codes too wide for bins: the stable argsort of the codes
    yield "wide keys", rng.integers(0, 2**40, size=3000) // 7 * 7, rng.integers(
        1, 4, size=3000).astype(np.float64)
    yield "wide values", rng.integers(3, size=3000), rng.integers(0, 2**50, size=3000) // 5 * 5.0
    yield "negative keys", rng.integers(-2**40, 2**40, size=3000) // 3, np.ones(3000)
    # codes that would overflow int64: the lexsort
    yield "huge keys", np.array([2**62, 0, 2**62, 5]), np.array([3.0, 3.0, 3.0, 1.0])
    yield "huge span", np.array([0, 2**20, 0]), np.array([0.0, 2.0**52, 2.0**52])
    yield "uint64 keys", np.array([2**63 + 5, 1, 2**63 + 5], dtype=np.uint64), np.ones(3)
    yield "uint32 keys", np.array([7, 1, 7, 1], dtype=np.uint32), np.array([1.0, 2.0, 1.0, 2.0])
    yield "int32 keys", np.array([7, -1, 7, -1], dtype=np.int32), np.array([1.0, 2.0, 1.0, 2.0])
    yield "integer values", counts_key, rng.integers(-3, 300, size=5000)
    yield "float32 values", counts_key, rng.integers(0, 30, size=5000).astype(np.float32)


@pytest.mark.parametrize("name, key, value", list(_pairs_cases()),
                         ids=[case[0] for case in _pairs_cases()])
def test_distinct_pairs_codes_equal_lexsort(name, key, value):
    from skcrowd.aggregation._priors import _distinct_pairs, _distinct_pairs_sorted

    got, expected = _distinct_pairs(key, value), _distinct_pairs_sorted(key, value)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert g.tobytes() == e.tobytes()  # bitwise: the sign of a zero included
    if name in ("hard counts", "ties", "wide keys", "wide values", "negative keys"):
        from skcrowd.aggregation._priors import _pair_codes

        assert _pair_codes(key, value) is not None  # the encoded path ran


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_auto_prior_fit_same_with_coded_pairs(engine, monkeypatch):
    # the whole "auto" fit (its strength searches on coded pairs) is bit for bit the one of the
    # lexsort path
    if engine == "numba" and kernels.numba is None:
        pytest.skip("numba is not installed")
    from skcrowd.aggregation import DawidSkene
    from skcrowd.aggregation import _priors

    rng = np.random.default_rng(3)
    n_tasks, n_workers, K = 600, 40, 4
    truth = rng.integers(K, size=n_tasks)
    skill = rng.uniform(0.3, 0.9, size=n_workers)
    votes = np.full((n_tasks, n_workers), -1)
    for i in range(n_tasks):
        workers = rng.choice(n_workers, 5, replace=False)
        right = rng.random(5) < skill[workers]
        votes[i, workers] = np.where(right, truth[i], rng.integers(K, size=5))
    monkeypatch.setattr(kernels, "ENGINE", engine)
    fits, pair_codes, used = [], _priors._pair_codes, []

    def counted(key, value):
        codes = pair_codes(key, value)
        used.append(codes is not None)
        return codes

    for coded in (True, False):
        monkeypatch.setattr(_priors, "_pair_codes",
                            counted if coded else (lambda key, value: None))
        model = DawidSkene(max_iter=20, tol=0).fit(votes)
        fits.append((model.predict_proba(votes), np.array(model.lower_bounds_),
                     model.smoothing_))
    assert any(used)  # the coded path ran
    (proba, bounds, strength), (proba_ref, bounds_ref, strength_ref) = fits
    assert proba.tobytes() == proba_ref.tobytes()
    assert bounds.tobytes() == bounds_ref.tobytes()
    assert strength == strength_ref and strength not in _priors.STRENGTH_BOUNDS
