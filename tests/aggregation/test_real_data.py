"""Accuracy on gold labels of real crowdsourced datasets (skipped when the data are absent).

Floors are the accuracies measured with the default parameters, rounded down by about 0.005
(``MajorityVote(random_state=0)``, whose ties are random, is the reference that Dawid-Skene must
not lose to). The floors hold for the crowds they were measured on; the comparison with majority
vote runs on every crowd of the shared data that has gold labels, found by listing its folders.

EBCC's three seeds and the selector took 70 s and 100 s on CIFAR-10N's 150,000 votes (their cost
goes with the workers and the iterations more than with the votes): there they run with
``--runslow``, and by default on 2000 of its tasks drawn at random (``SUBSAMPLE``; 6000 votes of
598 workers, 9 s and 13 s of CPU), with bounds from the sampling error of that many gold tasks.
"""

import functools
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skcrowd.aggregation import EBCC, GLAD, DawidSkene, MajorityVote, WeightedDawidSkene

from ._subsample import subsample_tasks

DATA = Path(__file__).resolve().parents[2] / "../shared/data"

# dataset: measured accuracy of MV, DS, WDS, GLAD (data-chosen priors, the defaults)
MEASURED = {
    "labelme": (0.763, 0.796, 0.770, 0.769),
    "sentiment_polarity_rodrigues": (0.885, 0.9146, 0.8956, 0.9158),
    "snow2008_rte": (0.890, 0.925, 0.9025, 0.9275),
    "snow2008_temp": (0.9372, 0.9416, 0.9481, 0.9394),
    "zheng_d_Duck_Identification": (0.7593, 0.8981, 0.7593, 0.7222),
    "zheng_d_jn_product": (0.8966, 0.9382, 0.8968, 0.9275),
    "zheng_d_sentiment": (0.935, 0.960, 0.950, 0.948),
    "zheng_s4_Dog_data": (0.8228, 0.8414, 0.8327, 0.8327),
    "zheng_s4_Face_Sentiment_Identification": (0.637, 0.6524, 0.6318, 0.6318),
    "cifar10n": (0.9116, 0.9148, 0.9108, 0.9114),
    # the crowds added to the shared data later (issue 22), measured when they arrived
    "act_CF": (0.8767, 0.8933, 0.8867, 0.8833),
    "act_CF_amt": (0.8533, 0.85, 0.8533, 0.8533),
    "act_ZenCrowd_all": (0.8289, 0.7897, 0.8387, 0.8304),
    "act_ZenCrowd_in": (0.7407, 0.7618, 0.7647, 0.7691),
    "act_ZenCrowd_us": (0.8608, 0.8206, 0.8662, 0.8716),
    "zhang2014_web": (0.7233, 0.7949, 0.7132, 0.8436),
    "zhang2014_trec": (0.6492, 0.7108, 0.6448, 0.5727),
    "zheng_s4_Relevance": (0.5426, 0.62, 0.55, 0.4904),
    "zheng_s5_AdultContent": (0.7568, 0.7538, 0.7387, 0.7598),
}
MARGIN = 0.005
SLOW = {"cifar10n"}
SUBSAMPLE = 2000  # tasks of a SLOW crowd drawn for its fast variants

# crowds where Dawid-Skene loses to majority vote by more than MARGIN: (DS, MV) measured
DS_BELOW_MV = {
    "act_ZenCrowd_all": (0.7897, 0.8289),
    "act_ZenCrowd_us": (0.8206, 0.8608),
}


def _shared_crowds():
    """Every folder of the shared data with votes and gold labels."""
    if not DATA.is_dir():
        return []
    return sorted(p.name for p in DATA.iterdir()
                  if (p / "votes.csv").is_file() and (p / "truth.csv").is_file())


def _case(name, findings=None, reason=None, slow=SLOW):
    """``name`` as a parameter: slow for the crowds of ``slow``, a strict xfail with
    ``reason(name, *findings[name])`` for a crowd of ``findings``."""
    marks = [pytest.mark.slow] if name in slow else []
    if findings and name in findings:
        marks.append(pytest.mark.xfail(strict=True, raises=AssertionError,
                                       reason=reason(name, *findings[name])))
    return pytest.param(name, marks=marks)


def _ds_below_mv(name, ds, mv):
    return (f"finding for issue 23 (aggregation on unseen crowds): on {name} DawidSkene's gold "
            f"accuracy is {ds} against MajorityVote(random_state=0)'s {mv}, below the bound "
            f"DS >= MV - {MARGIN}")


def _load(name, n_tasks=None):
    """The votes (sparse), the gold tasks and their labels; with ``n_tasks``, those of
    ``n_tasks`` tasks drawn at random (:func:`subsample_tasks`)."""
    folder = DATA / name
    if not (folder / "votes.csv").is_file():
        pytest.skip(f"real dataset {folder} is absent")
    pd = pytest.importorskip("pandas")
    votes = pd.read_csv(folder / "votes.csv")
    truth = pd.read_csv(folder / "truth.csv")
    shape = (int(votes.task.max()) + 1, int(votes.worker.max()) + 1)
    X = sp.coo_array((votes.label.to_numpy(), (votes.task.to_numpy(), votes.worker.to_numpy())),
                     shape=shape)
    tasks, gold = truth.task.to_numpy(), truth.label.to_numpy()
    if n_tasks is not None:
        X, kept = subsample_tasks(X, n_tasks)
        drawn = np.isin(tasks, kept)
        tasks, gold = np.searchsorted(kept, tasks[drawn]), gold[drawn]
    return X, tasks, gold


@functools.lru_cache(maxsize=None)
def _right(name, n_tasks=None):
    """Whether MV, DS, WDS and GLAD with their defaults get each gold task right, fitted once per
    crowd (``n_tasks``: on a subsample, see :func:`_load`)."""
    X, tasks, gold = _load(name, n_tasks)
    return {
        type(model).__name__: model.fit_predict(X)[tasks] == gold
        for model in (MajorityVote(random_state=0), DawidSkene(), WeightedDawidSkene(), GLAD())
    }


def _accuracies(name):
    """Gold accuracy of MV, DS, WDS and GLAD with their defaults."""
    return {method: float(np.mean(right)) for method, right in _right(name).items()}


@pytest.mark.parametrize("name", list(MEASURED))
def test_accuracy_on_gold_labels(name):
    accuracy = _accuracies(name)
    floors = dict(zip(accuracy, MEASURED[name]))
    for method, value in accuracy.items():
        assert value >= floors[method] - MARGIN, (method, value)


@pytest.mark.parametrize("name", [_case(name, DS_BELOW_MV, _ds_below_mv, slow=())
                                  for name in _shared_crowds()] or ["none_shared"])
def test_dawid_skene_does_not_lose_to_majority_vote(name):
    accuracy = _accuracies(name)
    assert accuracy["DawidSkene"] >= accuracy["MajorityVote"] - MARGIN, accuracy


def test_every_crowd_that_loses_is_a_shared_crowd():
    assert set(DS_BELOW_MV) <= set(MEASURED)
    if _shared_crowds():
        assert set(DS_BELOW_MV) <= set(_shared_crowds())


# EBCC's authors' procedure (Li et al.'s code as wrench ports it, run by
# benchmarks/ebcc_reference.py --seeds 5): mean gold accuracy over its seeds 0-4
EBCC_REFERENCE = {
    "act_CF": 0.8820,
    "act_CF_amt": 0.8613,
    "act_ZenCrowd_all": 0.8666,
    "act_ZenCrowd_in": 0.7834,
    "act_ZenCrowd_us": 0.9108,
    "cifar10n": 0.9131,
    "labelme": 0.7860,
    "sentiment_polarity_rodrigues": 0.9126,
    "snow2008_rte": 0.9313,
    "snow2008_temp": 0.9416,
    "zhang2014_trec": 0.7037,
    "zhang2014_web": 0.7437,
    "zheng_d_Duck_Identification": 0.8741,
    "zheng_d_jn_product": 0.9347,
    "zheng_d_sentiment": 0.9610,
    "zheng_s4_Dog_data": 0.8414,
    "zheng_s4_Face_Sentiment_Identification": 0.6240,
    "zheng_s4_Relevance": 0.5979,
    "zheng_s5_AdultContent": 0.7495,
}
EBCC_SEEDS = (0, 1, 2)


@functools.lru_cache(maxsize=None)
def _ebcc_accuracy(name, n_tasks=None):
    """Mean gold accuracy of EBCC() over EBCC_SEEDS (``n_tasks``: see :func:`_load`)."""
    X, tasks, gold = _load(name, n_tasks)
    return float(np.mean([np.mean(EBCC(random_state=seed).fit_predict(X)[tasks] == gold)
                          for seed in EBCC_SEEDS]))


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name for name in EBCC_REFERENCE
])
def test_ebcc_is_within_two_points_of_its_authors_procedure(name):
    """Issue 23, section 1: EBCC() never 2 points below the reference on a crowd."""
    assert _ebcc_accuracy(name) >= EBCC_REFERENCE[name] - 0.02


# A one-sided bound at about 97.7 % on the sampling error of a crowd's gold tasks
PAIRED_Z = 2.0


@pytest.mark.parametrize("name", sorted(SLOW))
def test_ebcc_is_within_two_points_of_its_authors_procedure_on_a_subsample(name):
    """The test above on SUBSAMPLE tasks of a SLOW crowd: the reference (the whole crowd's) less
    two points and PAIRED_Z binomial standard errors of an accuracy measured on that many gold
    tasks (on CIFAR-10N's 2000: 0.0063 each at the reference's 0.913). The sampling error of the
    draw is what the bound covers; fewer votes per worker may also change EBCC's fit, which only
    the slow test at full size rules out."""
    _, tasks, _ = _load(name, SUBSAMPLE)
    p = EBCC_REFERENCE[name]
    standard_error = np.sqrt(p * (1 - p) / len(tasks))
    assert (_ebcc_accuracy(name, SUBSAMPLE)
            >= EBCC_REFERENCE[name] - 0.02 - PAIRED_Z * standard_error)


def test_ebcc_mean_is_within_half_a_point_of_its_authors_procedure():
    """Issue 23, section 1: the mean over the crowds at least the reference's - 0.5 point (the
    crowds present, cifar10n left out: slow)."""
    names = [n for n in EBCC_REFERENCE if n not in SLOW and (DATA / n / "votes.csv").is_file()]
    if not names:
        pytest.skip("no real crowd present")
    assert (np.mean([_ebcc_accuracy(n) for n in names])
            >= np.mean([EBCC_REFERENCE[n] for n in names]) - 0.005)


@functools.lru_cache(maxsize=None)
def _selector_and_candidates(name, n_tasks=None):
    """Whether AggregatorSelector(random_state=0) gets each gold task right, and the gold
    accuracy of each default candidate (``n_tasks``: see :func:`_load`)."""
    from skcrowd.aggregation import AggregatorSelector
    from skcrowd.aggregation._selection import _default_candidates

    X, tasks, gold = _load(name, n_tasks)
    accuracy = {type(c).__name__: float(np.mean(clone(c).set_params(
        **({"random_state": 0} if "random_state" in c.get_params() else {})).fit_predict(X)[tasks]
        == gold)) for c in _default_candidates()}
    selector = AggregatorSelector(random_state=0)
    return selector.fit_predict(X)[tasks] == gold, accuracy


def _assert_selector_not_surely_below_majority_vote(name, n_tasks=None):
    selected, _ = _selector_and_candidates(name, n_tasks)
    d = selected.astype(float) - _right(name, n_tasks)["MajorityVote"]
    standard_error = d.std(ddof=1) / np.sqrt(len(d))
    assert d.mean() >= -PAIRED_Z * standard_error, (d.mean() * len(d), standard_error * len(d))


@pytest.mark.parametrize("name", [_case(name) for name in _shared_crowds()] or ["none_shared"])
def test_selector_is_not_surely_below_majority_vote(name):
    """Issue 23, section 2, as a bound from sampling error (issue 37): the selector's gold
    accuracy minus majority vote's is at least -2 standard errors of that difference, paired
    over the gold tasks (d_i = selector right - majority vote right on task i; its standard
    error is sd(d) / sqrt(n)).

    The former bound, one point below majority vote whatever the number of gold tasks, failed
    by one task on zheng_s4_Face_Sentiment_Identification (366 of 584 against 372, where it
    allowed 5.84): a strict xfail one task from flipping. There the two differ on 36 tasks, the
    difference is -6 tasks with a standard error of 6 tasks (z = -1.0, 2026-12-04), 6 tasks
    from this bound: the selector's lead of EBCC on the held-out votes costs majority vote's
    accuracy within what 584 gold tasks can tell apart. Over the 18 shared crowds (cifar10n
    aside) z runs from -1.0 to +14.5, and the bound is at least 6 tasks away (6.0 there, 6.3 on
    act_CF_amt, 6.9 on snow2008_temp, 7.6 on act_CF; 2026-12-04).
    """
    _assert_selector_not_surely_below_majority_vote(name)


@pytest.mark.parametrize("name", sorted(SLOW))
def test_selector_is_not_surely_below_majority_vote_on_a_subsample(name):
    """The test above on SUBSAMPLE tasks of a SLOW crowd, both models fitted on them: its bound,
    from the paired sampling error of the gold tasks, follows the smaller number of tasks."""
    _assert_selector_not_surely_below_majority_vote(name, SUBSAMPLE)


def test_selector_mean_is_at_least_the_best_single_model_mean():
    """Issue 23, section 2, over the shared crowds present (cifar10n left out: slow): measured
    0.838 for the selector against at most 0.832 for a single model over the 19 crowds."""
    names = [n for n in _shared_crowds() if n not in SLOW]
    if not names:
        pytest.skip("no real crowd present")
    runs = [_selector_and_candidates(n) for n in names]
    best_single = max(np.mean([accuracy[model] for _, accuracy in runs]) for model in runs[0][1])
    assert np.mean([np.mean(selected) for selected, _ in runs]) >= best_single
