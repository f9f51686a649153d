"""Tests of skcrowd.quality: spammer scores, worker and task reports."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from skcrowd import check_votes
from skcrowd.aggregation import GLAD, DawidSkene, MajorityVote, WeightedDawidSkene
from skcrowd.datasets import make_crowd_classification, simulate_annotators
from skcrowd.quality import spammer_score, task_report, worker_report

# ---------------------------------------------------------------------------
# spammer_score
# ---------------------------------------------------------------------------


def test_spammer_score_binary_is_squared_youden_index():
    sensitivity, specificity = 0.8, 0.9
    matrix = [[specificity, 1 - specificity], [1 - sensitivity, sensitivity]]
    assert spammer_score(matrix) == pytest.approx((sensitivity + specificity - 1) ** 2)


def test_spammer_score_hand_computed_three_classes():
    matrix = np.array([[0.8, 0.1, 0.1], [0.2, 0.6, 0.2], [0.0, 0.5, 0.5]])
    # squared row distances: (0,1) 0.36 + 0.25 + 0.01, (0,2) 0.64 + 0.16 + 0.16,
    # (1,2) 0.04 + 0.01 + 0.09; sum 1.72 over K (K - 1) = 6
    assert spammer_score(matrix) == pytest.approx(1.72 / 6)
    # equal to the distance from the closest rank-one matrix e v' (v: the column means)
    closest = np.ones((3, 1)) * matrix.mean(axis=0)
    assert spammer_score(matrix) == pytest.approx(((matrix - closest) ** 2).sum() / 2)


def test_spammer_score_extremes():
    rng = np.random.RandomState(0)
    spammers = np.repeat(rng.dirichlet(np.ones(4), size=5)[:, None, :], 4, axis=1)
    np.testing.assert_allclose(spammer_score(spammers), 0.0, atol=1e-12)
    permutation = np.eye(4)[[1, 2, 3, 0]]
    np.testing.assert_allclose(spammer_score(np.stack([np.eye(4), permutation])), 1.0)


def test_spammer_score_leaves_out_unseen_rows():
    matrix = np.array([[0.9, 0.1, 0.0], [np.nan] * 3, [0.1, 0.1, 0.8]])
    # one pair of known rows: half its squared distance
    assert spammer_score(matrix) == pytest.approx((0.64 + 0.0 + 0.64) / 2)
    assert np.isnan(spammer_score([[0.5, 0.5], [np.nan, np.nan]]))


def test_spammer_score_errors_name_the_row():
    with pytest.raises(ValueError, match="worker 1, row 0 .* probability distribution"):
        spammer_score([np.eye(2), [[0.5, 0.6], [0.5, 0.5]]])
    assert np.isnan(spammer_score([[1.0]]))  # one class: nothing to tell apart
    with pytest.raises(ValueError, match="shape"):
        spammer_score(np.eye(3)[:2])


# ---------------------------------------------------------------------------
# worker_report on simulated crowds
# ---------------------------------------------------------------------------


def true_accuracy(crowd, y):
    """Each worker's probability of a right vote on the tasks they answered."""
    v = check_votes(crowd.votes)
    n_classes = crowd.confusions.shape[1]
    mix = np.zeros((v.n_workers, n_classes))
    np.add.at(mix, (v.worker, y[v.task]), 1.0)
    mix /= mix.sum(axis=1, keepdims=True)
    return np.einsum("jk,jkk->j", mix, crowd.confusions)


@pytest.fixture(scope="module")
def crowd():
    y = np.random.RandomState(0).randint(3, size=1500)
    sim = simulate_annotators(y, 30, n_classes=3, accuracy=(0.5, 0.95), votes_per_task=5,
                              spammers=0.1, random_state=0)
    sim.target = y
    return sim


@pytest.mark.parametrize("aggregator", [DawidSkene(), GLAD()], ids=["DS", "GLAD"])
def test_estimated_accuracy_is_close_and_covered(crowd, aggregator):
    truth = true_accuracy(crowd, crowd.target)
    report = worker_report(aggregator.fit(crowd.votes), crowd.votes)
    assert np.abs(report["accuracy"] - truth).mean() < 0.035
    covered = (report["accuracy_low"] <= truth) & (truth <= report["accuracy_high"])
    assert covered.mean() >= 0.85
    assert (report["accuracy_low"] < report["accuracy"]).all()
    assert (report["accuracy"] < report["accuracy_high"]).all()


def test_known_accuracy_is_the_share_of_right_votes_on_known_tasks(crowd):
    y = crowd.target
    known = np.where(np.arange(len(y)) % 4 == 0, y, -1)  # a quarter of the tasks are known
    report = worker_report(DawidSkene().fit(crowd.votes), crowd.votes, known=known)
    v = check_votes(crowd.votes)
    on_known = known[v.task] >= 0
    for j in (0, 7, 29):
        mine = on_known & (v.worker == j)
        assert report.loc[j, "n_known"] == mine.sum()
        assert report.loc[j, "known_accuracy"] == pytest.approx(
            np.mean(v.label[mine] == y[v.task[mine]]))
    truth = true_accuracy(crowd, y)
    covered = (report["known_accuracy_low"] <= truth) & (truth <= report["known_accuracy_high"])
    assert covered.mean() >= 0.85


def test_jeffreys_interval_of_known_accuracy():
    from scipy.stats import beta

    votes = np.array([[0, 0], [1, 1], [0, 1], [1, 1]])
    report = worker_report(MajorityVote().fit(votes), votes, known=[0, 1, 0, 0],
                           confidence_level=0.9)
    # worker 1: right on tasks 0 and 1, wrong on 2 and 3
    assert report.loc[1, "known_accuracy"] == 0.5
    # columns first: a row of the mixed-dtype frame is an object Series under pandas 2.0
    np.testing.assert_allclose(report[["known_accuracy_low", "known_accuracy_high"]].loc[1],
                               beta.ppf([0.05, 0.95], 2.5, 2.5))


def test_spammers_are_ranked_first_for_review():
    crowd = make_crowd_classification(600, n_classes=3, n_workers=30, accuracy=(0.65, 0.95),
                                      votes_per_task=5, spammers=0.2, random_state=0)
    report = worker_report(DawidSkene().fit(crowd.votes), crowd.votes)
    spammers = np.flatnonzero(crowd.worker_type == "spammer")
    first = report.sort_values("review_rank").index[:len(spammers)]
    assert sorted(first) == sorted(spammers)
    assert report.loc[spammers, "spammer_score"].max() < report.drop(spammers)[
        "spammer_score"].min()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_adversarial_workers_come_before_spammers(seed):
    crowd = make_crowd_classification(600, n_classes=3, n_workers=30, accuracy=(0.65, 0.95),
                                      votes_per_task=5, spammers=0.1, adversarial=0.1,
                                      random_state=seed)
    report = worker_report(DawidSkene().fit(crowd.votes), crowd.votes).sort_values("review_rank")
    kinds = crowd.worker_type[report.index]
    n_adv, n_spam = (kinds == "adversarial").sum(), (kinds == "spammer").sum()
    assert (kinds[:n_adv] == "adversarial").all()
    assert (kinds[n_adv:n_adv + n_spam] == "spammer").all()
    assert report["below_chance"].iloc[:n_adv].all()
    assert not report["below_chance"].iloc[n_adv + n_spam:].any()
    # The adversarial workers are informative: their spammer score stands clear of the spammers'.
    # Not a fixed level: an adversary of accuracy a has the true score ((3a - 1) / 2)^2, 0.23 at
    # a = 0.65, and about 100 votes per worker with the smoothing shrink the estimate (true
    # 0.23-0.85, estimated 0.12-0.60 on seeds 1-6, 1001-1003, 2001-2003). The spammers' scores
    # are at most 0.061 there, the smallest gap to an adversary 0.083; the margin 0.05 is the
    # order of the spammers' own estimation noise.
    adversaries = report["spammer_score"].iloc[:n_adv]
    spammers = report["spammer_score"].iloc[n_adv:n_adv + n_spam]
    assert adversaries.min() > spammers.max() + 0.05


class FixedPosterior(BaseEstimator):
    """A fitted aggregator whose posteriors are given (no worker model)."""

    def __init__(self, proba=None):
        self.proba = proba

    def fit(self, X, y=None):
        self.classes_ = np.arange(np.shape(self.proba)[1])
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, X):
        return np.asarray(self.proba, dtype=np.float64)


def test_below_chance_is_a_one_sided_binomial_test_hand_computed():
    proba = np.eye(2)[[0, 0, 0, 1, 1, 1]]  # the aggregate: tasks 0-2 class 0, 3-5 class 1
    votes = np.array([
        # flips every label; agrees always; answers 1 on five tasks; answers 0 on the 0s
        [1, 0, 1, 0], [1, 0, 1, 0], [1, 0, 1, 0],
        [0, 1, 1, -1], [0, 1, 1, -1], [0, 1, -1, -1],
    ])
    report = worker_report(FixedPosterior(proba).fit(votes), votes)
    # worker 0: tasks (0, 0, 0, 1, 1, 1) and answers (1, 1, 1, 0, 0, 0) dealt at random agree
    # with chance 1/2 each; none agrees: p = 1/2^6
    # worker 2: tasks 3/5 class 0, answers all 1: chance 2/5, 2 agreements out of 5
    # worker 3: tasks all class 0, answers all 0: chance 1, 3 agreements out of 3
    np.testing.assert_allclose(report["chance_agreement"], [0.5, 0.5, 0.4, 1.0])
    np.testing.assert_allclose(report["below_chance_pvalue"],
                               [0.5**6, 1.0, binom.cdf(2, 5, 0.4), 1.0])
    np.testing.assert_array_equal(report["below_chance"], [True, False, False, False])
    assert report["review_rank"].iloc[0] == 1
    # the level is 1 - confidence_level: p = 1/64 is not below 1 %
    assert not worker_report(FixedPosterior(proba).fit(votes), votes,
                             confidence_level=0.99)["below_chance"].any()


@pytest.mark.parametrize("n_votes, flagged", [(4, False), (5, True)])
def test_below_chance_needs_votes(n_votes, flagged):
    # every vote wrong on tasks of two classes dealt half and half (chance 1/2): p = 1/2^n,
    # below 5 % from 5 votes on
    labels = np.arange(n_votes) % 2
    proba = np.eye(2)[labels]
    votes = np.column_stack([1 - labels, labels])
    report = worker_report(FixedPosterior(proba).fit(votes), votes)
    assert report.loc[0, "below_chance_pvalue"] == pytest.approx(binom.cdf(
        0, n_votes, report.loc[0, "chance_agreement"]))
    assert report["below_chance"].tolist() == [flagged, False]


def test_perfect_workers_are_never_below_chance():
    # one class, always right: chance agreement 1 (the w82: 3 votes, all class 3);
    # one vote, right: chance 1; every vote right on several classes: p-value 1
    y = np.array([3, 3, 3, 0, 1, 2, 0, 1])
    votes = np.full((8, 4), -1)
    votes[:3, 0] = 3
    votes[4, 1] = 1
    votes[:, 2] = y
    votes[:, 3] = y
    votes[3, 3] = 2
    for aggregator in (DawidSkene(), MajorityVote(), GLAD()):
        report = worker_report(aggregator.fit(votes), votes)
        assert not report["below_chance"].any(), type(aggregator).__name__
        np.testing.assert_allclose(report["below_chance_pvalue"].iloc[:3], 1.0)
        np.testing.assert_allclose(report["chance_agreement"].iloc[:2], 1.0)
    # GLAD's posterior confusion: a trace of every class on every task; the rows of the classes
    # worker 0 was not seen on (less than one task's mass) are unknown, not a spammer's rows
    report = worker_report(GLAD().fit(votes), votes)
    assert report.attrs["worker_model"] == "posterior"
    assert np.isnan(report.loc[0, "confusion_matrix"][[0, 1, 2]]).all()
    assert np.isnan(report.loc[0, "spammer_score"])
    assert report.loc[0, "review_rank"] > report.loc[2, "review_rank"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_review_starts_with_adversaries_and_spammers_never_perfect_workers(seed):
    # 600 tasks of 4 classes, 5 votes each from 24 workers: 3 adversaries (systematic wrong
    # answers), 3 spammers (uniform random); then perfect workers added: 4 who answer one
    # class (3 or 20 votes, always right) and 8 with one right vote each
    rng = np.random.RandomState(seed)
    y = rng.randint(4, size=600)
    types = ["regular"] * 18 + ["adversarial"] * 3 + ["spammer"] * 3
    crowd = simulate_annotators(y, 24, n_classes=4, accuracy=(0.7, 0.95), votes_per_task=5,
                                worker_types=types, random_state=seed)
    perfect = np.full((600, 12), -1)
    for j, (k, n) in enumerate([(0, 3), (1, 3), (2, 20), (3, 20)]):
        tasks = rng.choice(np.flatnonzero(y == k), n, replace=False)
        perfect[tasks, j] = k
    for j, i in enumerate(rng.choice(600, 8, replace=False), start=4):
        perfect[i, j] = y[i]
    votes = np.hstack([crowd.votes, perfect])
    kinds = np.r_[crowd.worker_type, ["perfect"] * 12]
    for aggregator in (DawidSkene(), GLAD()):
        report = worker_report(aggregator.fit(votes), votes).sort_values("review_rank")
        order = kinds[report.index]
        assert (order[:3] == "adversarial").all(), (type(aggregator).__name__, order[:6])
        assert (order[3:6] == "spammer").all(), (type(aggregator).__name__, order[:6])
        flagged = report["below_chance"].to_numpy()
        assert flagged[:3].all() and not flagged[order == "perfect"].any()
        assert not flagged[order == "regular"].any()


def test_agreement_is_the_share_of_votes_equal_to_the_aggregate(crowd):
    ds = DawidSkene().fit(crowd.votes)
    report = worker_report(ds, crowd.votes)
    v = check_votes(crowd.votes)
    label = ds.predict(crowd.votes)
    for j in (0, 5):
        mine = v.worker == j
        assert report.loc[j, "agreement"] == pytest.approx(np.mean(v.label[mine] ==
                                                                   label[v.task[mine]]))


# ---------------------------------------------------------------------------
# the report interface: which worker model is read
# ---------------------------------------------------------------------------


class OneCoin(BaseEstimator):
    """A fitted aggregator with one accuracy per worker and fixed posteriors."""

    def __init__(self, accuracies=None, proba=None):
        self.accuracies = accuracies
        self.proba = proba

    def fit(self, X, y=None):
        self.classes_ = np.array([0, 1, 2])
        self.n_features_in_ = X.shape[1]
        self.worker_accuracies_ = np.asarray(self.accuracies)
        return self

    def predict_proba(self, X):
        return np.asarray(self.proba)


def test_worker_model_from_confusion_matrices(crowd):
    ds = DawidSkene().fit(crowd.votes)
    report = worker_report(ds, crowd.votes)
    assert report.attrs["worker_model"] == "confusion_matrices_"
    np.testing.assert_array_equal(np.stack(report["confusion_matrix"]), ds.confusion_matrices_)
    np.testing.assert_allclose(report["spammer_score"], spammer_score(ds.confusion_matrices_))
    wds = WeightedDawidSkene().fit(crowd.votes)
    assert worker_report(wds, crowd.votes).attrs["worker_model"] == "confusion_matrices_"


def test_worker_model_from_worker_accuracies():
    votes = np.array([[0, 0], [1, 2], [2, 2]])
    proba = np.eye(3)
    model = OneCoin([0.7, 1 / 3], proba).fit(votes)
    report = worker_report(model, votes)
    assert report.attrs["worker_model"] == "worker_accuracies_"
    np.testing.assert_allclose(report.loc[0, "confusion_matrix"],
                               [[0.7, 0.15, 0.15], [0.15, 0.7, 0.15], [0.15, 0.15, 0.7]])
    # one-coin score: ((K a - 1) / (K - 1))^2
    np.testing.assert_allclose(report["spammer_score"], [((3 * 0.7 - 1) / 2) ** 2, 0.0],
                               atol=1e-12)
    # accuracy from the posteriors (tasks of classes 0, 1, 2): worker 1 misses task 1
    np.testing.assert_allclose(report["accuracy"], [1, 2 / 3])


def test_worker_model_from_posteriors_without_worker_attributes():
    votes = np.array([[0, 0], [1, 1], [0, 1], [1, -1]])
    mv = MajorityVote().fit(votes)
    report = worker_report(mv, votes)
    assert report.attrs["worker_model"] == "posterior"
    # worker 1 answered 0 on task 0 (posterior 1, 0), 1 on task 1 (0, 1), 1 on task 2 (.5, .5)
    np.testing.assert_allclose(report.loc[1, "confusion_matrix"], [[2 / 3, 1 / 3], [0, 1]])
    assert report.loc[1, "accuracy"] == pytest.approx((1 + 1 + 0.5) / 3)
    np.testing.assert_allclose(report["n_votes"], [4, 3])


def test_single_class_crowd_has_no_spammer_score():
    votes = np.array([[3, 3], [3, -1], [-1, 3]])
    report = worker_report(DawidSkene().fit(votes), votes)
    assert report["spammer_score"].isna().all()
    np.testing.assert_allclose(report["accuracy"], 1.0)
    np.testing.assert_array_equal(report["review_rank"], [1, 2])


def test_worker_without_votes_gets_no_accuracy():
    votes = np.array([[0, 0, -1], [1, 1, -1], [0, 1, -1]])
    ds = DawidSkene().fit(np.array([[0, 0, 0], [1, 1, 1], [0, 1, 1]]))
    report = worker_report(ds, votes)
    assert report.loc[2, "n_votes"] == 0
    assert report.loc[2, ["accuracy", "accuracy_low", "accuracy_high", "agreement"]].isna().all()
    assert report.loc[2, "review_rank"] >= 1


def test_dataframe_votes_give_worker_and_task_ids():
    frame = pd.DataFrame({"ann": ["cat", "dog", "cat", None], "bob": ["cat", "dog", "dog", "dog"]},
                         index=pd.Index(["t1", "t2", "t3", "t4"], name="item"))
    mv = MajorityVote(missing_label=None).fit(frame)
    report = worker_report(mv, frame, known=pd.Series(["cat", None, "cat", "dog"]))
    assert report.index.tolist() == ["ann", "bob"]
    assert report.index.name == "worker"
    assert report.loc["bob", "known_accuracy"] == pytest.approx(2 / 3)
    tasks = task_report(mv, frame, known=["cat", None, "cat", "dog"])
    assert tasks.index.tolist() == ["t1", "t2", "t3", "t4"]
    assert tasks["label"].tolist()[:2] == ["cat", "dog"]
    assert tasks["known"].isna().tolist() == [False, True, False, False]


def test_known_accepts_nan_and_none_for_unknown_tasks():
    votes = np.array([[0, 0], [1, 1], [0, 1], [1, 1]])
    ds = DawidSkene().fit(votes)
    expected = worker_report(ds, votes, known=[0, -1, 1, -1])
    for known in (pd.Series([0, np.nan, 1, np.nan]), np.array([0, None, 1, -1], dtype=object)):
        report = worker_report(ds, votes, known=known)
        pd.testing.assert_frame_equal(report.drop(columns="confusion_matrix"),
                                      expected.drop(columns="confusion_matrix"))
    tasks = task_report(ds, votes, known=pd.Series([0, np.nan, 1, np.nan]))
    assert tasks["known"].isna().tolist() == [False, True, False, True]
    with pytest.raises(ValueError, match="non-integer float label 0.5"):
        worker_report(ds, votes, known=[0.5, np.nan, 1, 1])


# ---------------------------------------------------------------------------
# task_report
# ---------------------------------------------------------------------------


def test_task_report_hand_computed():
    votes = np.array([[0, 0, 0], [0, 1, -1], [1, 1, 0], [-1, -1, -1]])
    mv = MajorityVote().fit(votes)
    report = task_report(mv, votes, known=[0, -1, 0, 1])
    np.testing.assert_array_equal(report["n_votes"], [3, 2, 3, 0])
    np.testing.assert_allclose(report["confidence"], [1, 0.5, 2 / 3, 5 / 8])
    np.testing.assert_allclose(report["entropy"][:2], [0.0, np.log(2)])
    np.testing.assert_allclose(report["vote_agreement"], [1, 0, 1 / 3, np.nan])
    np.testing.assert_allclose(report["majority_share"], [1, 0.5, 2 / 3, np.nan])
    assert report["known"].tolist()[:1] == [0] and report["known"].isna().tolist() == [
        False, True, False, False]
    assert report["correct"].tolist() == [True, pd.NA, False, False]


def test_task_report_entropy_is_that_of_the_posterior(crowd):
    ds = DawidSkene().fit(crowd.votes)
    report = task_report(ds, crowd.votes)
    proba = ds.predict_proba(crowd.votes)
    expected = -(proba * np.log(np.clip(proba, 1e-300, None))).sum(axis=1)
    np.testing.assert_allclose(report["entropy"], expected, atol=1e-12)
    np.testing.assert_array_equal(report["label"], ds.predict(crowd.votes))


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("report", [worker_report, task_report])
def test_bad_input_errors(report):
    votes = np.array([[0, 1], [1, 1], [0, 0]])
    with pytest.raises(NotFittedError):
        report(DawidSkene(), votes)
    with pytest.raises(TypeError, match="needs a fitted aggregator with predict_proba"):
        report(object(), votes)
    ds = DawidSkene().fit(votes)
    with pytest.raises(ValueError, match="3 workers .* fitted with 2"):
        report(ds, np.array([[0, 1, 1]]))
    with pytest.raises(ValueError, match="label 5 .* not one of the known classes"):
        report(ds, np.array([[0, 5], [1, 1]]))
    with pytest.raises(TypeError, match="votes matrix in memory"):
        report(ds, "votes.parquet")
    with pytest.raises(ValueError, match="one label per task .* expected shape \\(3,\\)"):
        report(ds, votes, known=[0, 1])
    with pytest.raises(ValueError, match="known has label 7 at task 1"):
        report(ds, votes, known=[0, 7, -1])


def test_bad_confusion_matrices_attribute_is_named():
    votes = np.array([[0, 1], [1, 1], [0, 0]])
    ds = DawidSkene().fit(votes)
    ds.confusion_matrices_ = ds.confusion_matrices_[:1]
    with pytest.raises(ValueError, match="DawidSkene.confusion_matrices_ has shape"):
        worker_report(ds, votes)
