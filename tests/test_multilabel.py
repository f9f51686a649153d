"""Multi-label votes: BinaryRelevance, MultiLabelDawidSkene and the long-table converter."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skcrowd import BinaryRelevance, MultiLabelDawidSkene, multilabel_votes_from_long
from skcrowd.aggregation import DawidSkene, MajorityVote
from skcrowd.utils.estimator_checks import parametrize_with_checks

pd = pytest.importorskip("pandas")


# scikit-learn's checks build 2-D arrays of continuous values; multi-label votes are a 3-D
# array of bits (or a list of matrices), so these checks stop at the votes' validation with a
# ValueError naming the shape: skcrowd.utils.estimator_checks lists them as the expected
# failures of every multi-label aggregator. The same contracts on multi-label votes are tested
# below (clone, pickle, idempotent fit, order invariance, n_features_in_, bad input).
@parametrize_with_checks([MultiLabelDawidSkene(), BinaryRelevance()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def simulate(seed, n_tasks=300, n_workers=30, n_labels=8, votes_per_task=3):
    """A sparse multi-label crowd: each task answered by ``votes_per_task`` workers, workers of
    sensitivity and specificity from 0.55 (near spammers) to 0.95, labels of prevalence 0.05 to
    0.5."""
    rng = np.random.default_rng(seed)
    prevalence = np.linspace(0.05, 0.5, n_labels)
    truth = (rng.random((n_tasks, n_labels)) < prevalence).astype(int)
    sensitivity = rng.uniform(0.55, 0.95, n_workers)
    specificity = rng.uniform(0.55, 0.95, n_workers)
    votes = np.full((n_tasks, n_workers, n_labels), -1)
    for i in range(n_tasks):
        for j in rng.choice(n_workers, votes_per_task, replace=False):
            u = rng.random(n_labels)
            votes[i, j] = np.where(truth[i] == 1, u < sensitivity[j], u >= specificity[j])
    return votes, truth, sensitivity, specificity


VOTES = np.array([[[1, 0], [1, 1], [1, 0]],
                  [[0, 1], [0, 1], [-1, -1]],
                  [[1, 1], [-1, -1], [0, 1]],
                  [[0, 0], [0, 0], [1, 0]]])


def test_predict_proba_is_bayes_rule_with_the_fitted_parameters():
    model = MultiLabelDawidSkene().fit(VOTES)
    sens, spec, prev = model.sensitivity_, model.specificity_, model.prevalence_
    expected = np.empty((4, 2))
    for i in range(4):
        for label in range(2):
            on, off = prev[label], 1 - prev[label]
            for j in range(3):
                bit = VOTES[i, j, label]
                if bit == -1:
                    continue
                on *= sens[j] if bit else 1 - sens[j]
                off *= 1 - spec[j] if bit else spec[j]
            expected[i, label] = on / (on + off)
    np.testing.assert_allclose(model.predict_proba(VOTES), expected, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(VOTES), (expected > 0.5).astype(int))


def test_fitted_parameters_are_the_m_step_of_their_own_posteriors():
    votes, *_ = simulate(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = MultiLabelDawidSkene(tol=1e-12, max_iter=2000).fit(votes)
    q = model.predict_proba(votes)
    task, worker, label = np.nonzero(votes >= 0)
    bit, q = votes[task, worker, label], q[task, label]
    (a_s, b_s), (a_p, b_p) = model.prior_pseudo_counts_
    sens = (np.bincount(worker, q * bit, 30) + a_s) / (np.bincount(worker, q, 30) + a_s + b_s)
    spec = ((np.bincount(worker, (1 - q) * (1 - bit), 30) + a_p)
            / (np.bincount(worker, 1 - q, 30) + a_p + b_p))
    np.testing.assert_allclose(model.sensitivity_, sens, atol=1e-6)
    np.testing.assert_allclose(model.specificity_, spec, atol=1e-6)
    np.testing.assert_allclose(model.prevalence_,
                               (model.predict_proba(votes).sum(axis=0) + 1) / (300 + 2),
                               atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_objective_never_decreases(seed):
    votes, *_ = simulate(seed, votes_per_task=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tol=0: ConvergenceWarning by design
        model = MultiLabelDawidSkene(tol=0.0, max_iter=60).fit(votes)
    bounds = np.asarray(model.lower_bounds_)
    assert len(bounds) == 60 and model.n_iter_ == 60 and not model.converged_
    assert np.all(np.diff(bounds) >= -1e-12 * np.abs(bounds[1:]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shared_workers_beat_independent_labels_on_a_sparse_crowd(seed):
    """Three votes per task, 15 answers per worker: one label's bits say little about a worker,
    all labels' bits do. Measured gains over per-label DawidSkene on seeds 0-5: 0.8 to 2.5
    points; over majority vote 2.2 to 4.5."""
    votes, truth, sensitivity, specificity = simulate(seed, n_tasks=150)
    shared = MultiLabelDawidSkene().fit(votes)
    independent = BinaryRelevance(DawidSkene()).fit(votes)
    majority = BinaryRelevance(MajorityVote(random_state=0)).fit(votes)
    accuracy = {name: np.mean(m.predict(votes) == truth)
                for name, m in [("shared", shared), ("independent", independent),
                                ("majority", majority)]}
    assert accuracy["shared"] >= accuracy["independent"] + 0.005
    assert accuracy["shared"] >= accuracy["majority"] + 0.015
    # the workers' coins are recovered (sensitivities from fewer bits: labels are mostly off)
    assert np.corrcoef(shared.sensitivity_, sensitivity)[0, 1] > 0.5
    assert np.corrcoef(shared.specificity_, specificity)[0, 1] > 0.75


def test_binary_relevance_is_one_aggregator_per_label():
    model = BinaryRelevance(MajorityVote(random_state=0)).fit(VOTES)
    assert len(model.estimators_) == 2 and model.n_labels_ == 2 and model.n_features_in_ == 3
    # label 0: task 0 three ticks, task 1 two blanks, task 2 a tick and a blank (a tie), task 3
    # two blanks and a tick
    np.testing.assert_allclose(model.predict_proba(VOTES)[:, 0], [1.0, 0.0, 0.5, 1 / 3])
    for label, estimator in enumerate(model.estimators_):
        own = MajorityVote(random_state=0, n_classes=2).fit(
            np.where(VOTES[:, :, label] >= 0, VOTES[:, :, label], -1))
        np.testing.assert_array_equal(estimator.predict_proba(
            np.where(VOTES[:, :, label] >= 0, VOTES[:, :, label], -1)),
            own.predict_proba(np.where(VOTES[:, :, label] >= 0, VOTES[:, :, label], -1)))


def test_a_label_nobody_ticks_is_off():
    votes = VOTES.copy()
    votes[:, :, 1] = np.where(votes[:, :, 1] >= 0, 0, -1)
    for model in (BinaryRelevance(), MultiLabelDawidSkene()):
        assert not model.fit(votes).predict(votes)[:, 1].any()


@pytest.mark.parametrize("model", [MultiLabelDawidSkene(), BinaryRelevance()], ids=type)
def test_list_of_matrices_dense_or_sparse_equals_the_3d_array(model):
    votes, *_ = simulate(3, n_tasks=60, n_workers=8, n_labels=3)
    expected = clone(model).fit(votes).predict_proba(votes)
    dense = [votes[:, :, label] for label in range(3)]
    sparse = [sp.csr_matrix((v[v >= 0], np.nonzero(v >= 0)), shape=v.shape) for v in dense]
    for form in (dense, sparse):
        np.testing.assert_allclose(clone(model).fit(form).predict_proba(form), expected,
                                   rtol=1e-12)


@pytest.mark.parametrize("model", [MultiLabelDawidSkene(), BinaryRelevance()], ids=type)
def test_contract_on_multilabel_votes(model):
    votes, *_ = simulate(4, n_tasks=80, n_workers=10, n_labels=3)
    params = model.get_params()
    fitted = clone(model).fit(votes)
    assert model.get_params() == params  # fit does not touch the parameters
    first = fitted.predict_proba(votes)
    np.testing.assert_array_equal(clone(model).fit(votes).predict_proba(votes), first)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict_proba(votes), first)
    order = np.random.default_rng(0).permutation(80)  # tasks in another order
    np.testing.assert_allclose(fitted.predict_proba(votes[order]), first[order], rtol=1e-12)
    assert fitted.n_features_in_ == 10
    with pytest.raises(ValueError, match="fitted on 10 workers and 3 labels"):
        fitted.predict(votes[:, :9])


@pytest.mark.parametrize("model", [MultiLabelDawidSkene(), BinaryRelevance()], ids=type)
def test_bad_votes_are_named(model):
    bad = VOTES.copy()
    bad[2, 0, 1] = 2
    with pytest.raises(ValueError, match=r"row 2, worker 0, label 1\): 2 is not a vote"):
        clone(model).fit(bad)
    with pytest.raises(ValueError, match=r"X\[1\] \(label 1\), row 0, worker 1: 3"):
        clone(model).fit([VOTES[:, :, 0], np.where(VOTES[:, :, 1] == 1, 3, VOTES[:, :, 1])])
    with pytest.raises(ValueError, match="X has 2 dimensions"):
        clone(model).fit(VOTES[:, :, 0])
    with pytest.raises(ValueError, match=r"X\[1\] has shape \(3, 3\), X\[0\] has \(4, 3\)"):
        clone(model).fit([VOTES[:, :, 0], VOTES[:3, :, 1]])
    with pytest.raises(ValueError, match="multilabel_votes_from_long"):
        clone(model).fit(pd.DataFrame({"task": [0], "worker": [0], "labels": [["a"]]}))
    with pytest.raises(ValueError, match="'yes' is not a vote"):
        clone(model).fit(np.array([[["yes"]]], dtype=object))


def test_long_table_lists_and_delimited_strings():
    frame = pd.DataFrame({"task": ["t1", "t1", "t2", "t2", "t3"],
                          "worker": ["w1", "w2", "w1", "w3", "w2"],
                          "labels": [["cat", "dog"], ["cat"], [], ["bird"], ["dog"]]})
    votes, tasks, workers, names = multilabel_votes_from_long(frame)
    assert tasks.tolist() == ["t1", "t2", "t3"] and workers.tolist() == ["w1", "w2", "w3"]
    assert names.tolist() == ["bird", "cat", "dog"]
    answered = np.zeros((3, 3), dtype=bool)
    answered[[0, 0, 1, 1, 2], [0, 1, 0, 2, 1]] = True
    for label, v in enumerate(votes):
        stored = np.zeros((3, 3), dtype=bool)
        coo = v.tocoo()
        stored[coo.row, coo.col] = True
        np.testing.assert_array_equal(stored, answered)  # blanks are stored votes too
    dense = np.stack([v.toarray() for v in votes], axis=2)
    assert dense[0, 0].tolist() == [0, 1, 1] and dense[1, 2].tolist() == [1, 0, 0]
    strings = frame.assign(labels=["cat|dog", "cat", "", "bird", "dog"])
    again, *_ = multilabel_votes_from_long(strings, sep="|")
    for a, b in zip(votes, again):
        assert (a != b).nnz == 0 and a.nnz == b.nnz
    model = MultiLabelDawidSkene().fit(votes)
    assert model.predict(votes).shape == (3, 3)


def test_long_table_errors_name_the_row():
    frame = pd.DataFrame({"task": [0, 0], "worker": [0, 0], "labels": [["a"], ["b"]]})
    with pytest.raises(ValueError, match="task 0, worker 0 has 2 rows"):
        multilabel_votes_from_long(frame)
    with pytest.raises(ValueError, match="labels, row 0: 'a|b' is a string; give sep"):
        multilabel_votes_from_long(pd.DataFrame({"task": [0], "worker": [0],
                                                 "labels": ["a|b"]}))
    with pytest.raises(ValueError, match="no column 'answers'"):
        multilabel_votes_from_long(frame, labels="answers")
    with pytest.raises(ValueError, match="'b' is not in label_names"):
        multilabel_votes_from_long(frame.iloc[1:], label_names=["a"])


def test_prior_pseudo_counts_given_or_chosen():
    fixed = MultiLabelDawidSkene(prior=(3.0, 1.0)).fit(VOTES)
    np.testing.assert_array_equal(fixed.prior_pseudo_counts_, [[3.0, 1.0], [3.0, 1.0]])
    chosen = MultiLabelDawidSkene().fit(simulate(0)[0]).prior_pseudo_counts_
    assert np.all(chosen > 0) and np.all(chosen[:, 0] > chosen[:, 1])  # better than chance
    with pytest.raises(ValueError, match=r"two non-negative pseudo-counts \(a, b\), got \(1.0,\)"):
        MultiLabelDawidSkene(prior=(1.0,)).fit(VOTES)


def test_grid_search_with_gold_on_held_out_tasks():
    """Folds of tasks: fit on some tasks' votes (the gold y is not read by fit), predict the
    other tasks from the fitted workers, score against their gold."""
    from sklearn.metrics import f1_score, make_scorer
    from sklearn.model_selection import GridSearchCV

    votes, truth, *_ = simulate(0)
    candidates = {"aggregator": [DawidSkene(), MajorityVote(random_state=0)]}
    grid = GridSearchCV(BinaryRelevance(), candidates,
                        scoring=make_scorer(f1_score, average="micro"), cv=3).fit(votes, truth)
    assert type(grid.best_params_["aggregator"]).__name__ == "DawidSkene"
    assert grid.best_estimator_.predict(votes).shape == truth.shape
    assert 0.7 < grid.best_score_ < 1.0


def test_nan_marks_a_missing_answer_when_asked():
    votes = VOTES.astype(float)
    votes[votes == -1] = np.nan
    for model in (MultiLabelDawidSkene(), BinaryRelevance()):
        expected = clone(model).fit(VOTES).predict_proba(VOTES)
        np.testing.assert_allclose(
            clone(model).set_params(missing_label=np.nan).fit(votes).predict_proba(votes),
            expected, rtol=1e-12)
        with pytest.raises(ValueError, match=r"row 1, worker 2, label 0\): nan is not a vote"):
            clone(model).fit(votes)  # the default marker is -1


def test_label_names_from_a_dict_of_matrices_are_kept():
    frame = pd.DataFrame({"task": ["t1", "t1", "t2", "t2", "t3"],
                          "worker": ["w1", "w2", "w1", "w3", "w2"],
                          "labels": [["cat", "dog"], ["cat"], [], ["bird"], ["dog"]]})
    votes, _, _, names = multilabel_votes_from_long(frame)
    named = dict(zip(names, votes))
    for model in (MultiLabelDawidSkene(), BinaryRelevance(MajorityVote(random_state=0))):
        fitted = model.fit(named)
        assert fitted.classes_.tolist() == ["bird", "cat", "dog"]
        np.testing.assert_array_equal(fitted.predict(named), clone(model).fit(votes).predict(votes))
        assert clone(model).fit(votes).classes_.tolist() == [0, 1, 2]
        with pytest.raises(ValueError, match=r"labels \['cat', 'bird', 'dog'\]; the estimator was "
                                             r"fitted on \['bird', 'cat', 'dog'\]"):
            fitted.predict({name: named[name] for name in ["cat", "bird", "dog"]})


def test_an_all_empty_long_table_asks_for_the_label_names():
    frame = pd.DataFrame({"task": [0, 1], "worker": [0, 0], "labels": [[], []]})
    with pytest.raises(ValueError, match="none of the 2 rows ticks a label.*label_names="):
        multilabel_votes_from_long(frame)
    votes, *_ = multilabel_votes_from_long(frame, label_names=["a", "b"])
    assert [v.nnz for v in votes] == [2, 2]


def test_score_is_the_mean_held_out_log_likelihood():
    votes, *_ = simulate(1, n_tasks=400)
    model = MultiLabelDawidSkene().fit(votes[:300])
    assert isinstance(model.lower_bounds_, np.ndarray)
    held_out = votes[300:]
    sens, spec, prev = model.sensitivity_, model.specificity_, model.prevalence_
    expected = np.zeros(100)
    for i in range(100):
        for label in range(held_out.shape[2]):
            on, off = prev[label], 1 - prev[label]
            for j in np.flatnonzero(held_out[i, :, label] >= 0):
                bit = held_out[i, j, label]
                on *= sens[j] if bit else 1 - sens[j]
                off *= 1 - spec[j] if bit else spec[j]
            expected[i] += np.log(on + off)
    np.testing.assert_allclose(model.score_samples(held_out), expected, rtol=1e-10)
    assert model.score(held_out) == pytest.approx(expected.mean())
    # the fitted workers explain held-out votes better than workers who tick at random
    assert model.score(held_out) > np.sum(held_out >= 0) / 100 * np.log(0.5)
    # BinaryRelevance: the sum of the labels' aggregators' scores, if they have one
    relevance = BinaryRelevance().fit(votes[:300])
    parts = sum(m.score(held_out[:, :, k]) for k, m in enumerate(relevance.estimators_))
    assert relevance.score(held_out) == pytest.approx(parts)
    assert not hasattr(BinaryRelevance(MajorityVote()), "score")
