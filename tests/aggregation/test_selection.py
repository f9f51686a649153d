"""Choosing an aggregator without gold: held-out vote likelihood (AggregatorSelector and
held_out_vote_scorer)."""

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold

from skcrowd import check_votes
from skcrowd.aggregation import GLAD, AggregatorSelector, DawidSkene, MajorityVote
from skcrowd.aggregation import BayesianDawidSkene
from skcrowd.aggregation._majority import _symmetric_accuracy
from skcrowd.aggregation._selection import held_out_votes
from skcrowd.metrics import held_out_vote_scorer

from ._regimes import prolific_spammers, skewed_sparse

CANDIDATES = [MajorityVote(random_state=0), DawidSkene(), GLAD()]


@pytest.mark.parametrize("regime, truly_better", [(skewed_sparse, DawidSkene),
                                                  (prolific_spammers, GLAD)])
def test_selector_picks_the_truly_better_model(regime, truly_better):
    """Simulated crowds with known truth: class-biased sparse workers (DS 19 points above MV and
    GLAD) and prolific spammers (GLAD above DS above MV); the held-out votes pick the model
    with the best gold accuracy."""
    votes, truth = regime(1)
    accuracy = [np.mean(c.fit_predict(votes) == truth) for c in CANDIDATES]
    assert type(CANDIDATES[int(np.argmax(accuracy))]) is truly_better
    selector = AggregatorSelector(CANDIDATES, random_state=0).fit(votes)
    assert type(selector.best_estimator_) is truly_better
    assert selector.cv_results_["rank_test_score"][0] > 1  # not majority vote
    np.testing.assert_array_equal(selector.predict(votes), selector.best_estimator_.predict(votes))


def test_held_out_votes_keep_a_vote_per_task_and_the_share():
    votes, _ = skewed_sparse(0)
    v = check_votes(votes)
    held = held_out_votes(v, 0.2, np.random.RandomState(0))
    kept = np.bincount(v.task[~held], minlength=v.n_tasks)
    assert np.all(kept >= 1)
    assert held.mean() == pytest.approx(0.2, abs=0.02)


def test_dawid_skene_held_out_score_by_hand():
    """log sum_k p(k | other votes) p(vote | k, worker), with the fitted confusion matrices."""
    votes = np.array([[0, 0, 1, -1], [1, 1, -1, 1], [0, -1, 0, 0], [1, 0, 1, 1]] * 5)
    ds = DawidSkene(smoothing=1.0).fit(votes)
    context = check_votes(np.where(np.arange(4) == 3, -1, votes))  # worker 3's votes held out
    tasks = np.flatnonzero(votes[:, 3] >= 0)
    got = ds._vote_log_likelihood(context, tasks, np.full(len(tasks), 3), votes[tasks, 3])
    proba = ds.predict_proba(np.where(np.arange(4) == 3, -1, votes))[tasks]
    conf = ds.confusion_matrices_[3][:, votes[tasks, 3]].T  # [v, k] = P(answer | k)
    np.testing.assert_allclose(got, logsumexp(np.log(proba) + np.log(conf), axis=1))


def test_majority_vote_accuracy_from_pair_agreement():
    # a**2 + (1 - a)**2 / (K - 1) = agreement, inverted (Laplace-smoothed pair counts)
    a = _symmetric_accuracy(np.array([79.0, 98.0]), 3)  # agreement 0.8
    assert a**2 + (1 - a) ** 2 / 2 == pytest.approx(0.8)
    # no pairs: agreement 1/2, which binary workers reach only at chance
    assert _symmetric_accuracy(np.array([0.0, 0.0]), 2) == pytest.approx(0.5)


def test_scorer_tunes_a_prior_in_grid_search():
    votes, _ = skewed_sparse(0)
    search = GridSearchCV(DawidSkene(), {"smoothing": [0.0, "auto"]},
                          cv=KFold(3, shuffle=True, random_state=0),
                          scoring=held_out_vote_scorer).fit(votes)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(scores < 0)
    assert search.best_params_ == {"smoothing": "auto"}  # unsmoothed DS overfits sparse workers


def test_selector_rejects_a_candidate_that_cannot_score_votes():
    with pytest.raises(TypeError, match="LogisticRegression.*cannot score held-out votes"):
        AggregatorSelector([DawidSkene(), LogisticRegression()]).fit(np.array([[0, 1], [1, 1]]))
    with pytest.raises(ValueError, match="candidates is empty"):
        AggregatorSelector([]).fit(np.array([[0, 1], [1, 1]]))


def test_selector_without_two_votes_on_any_task_keeps_the_first():
    votes = np.array([[0, -1], [-1, 1], [1, -1]])
    with pytest.warns(UserWarning, match="No task has two votes"):
        selector = AggregatorSelector([DawidSkene(), MajorityVote()]).fit(votes)
    assert isinstance(selector.best_estimator_, DawidSkene)


def test_default_candidates_score_every_aggregator_that_can():
    votes, _ = prolific_spammers(0, n_tasks=150)
    selector = AggregatorSelector(n_splits=1, random_state=0).fit(votes)
    names = [type(c).__name__ for c in selector.cv_results_["estimator"]]
    assert names == ["MajorityVote", "DawidSkene", "GLAD", "OneCoinDawidSkene", "MACE",
                     "BayesianDawidSkene", "EBCC"]  # every regime, in __all__'s order
    from skcrowd.aggregation._selection import _scores_held_out_votes
    from skcrowd.utils.discovery import all_estimators

    able = {name for name, cls in all_estimators(type_filter="aggregator")
            if name != "AggregatorSelector" and _scores_held_out_votes(cls())}
    # every discovered one that can, but WeightedDawidSkene (its soft labels are not
    # posteriors) and GroupedDawidSkene (without worker_groups it is DawidSkene)
    assert set(names) == able - {"WeightedDawidSkene", "GroupedDawidSkene"}
    assert np.all(np.isfinite(selector.cv_results_["mean_test_score"]))


def test_the_selector_is_public_and_not_its_own_candidate():
    import skcrowd.aggregation as aggregation
    from skcrowd.aggregation._selection import _default_candidates

    assert "AggregatorSelector" in aggregation.__all__
    assert not any(isinstance(c, AggregatorSelector) for c in _default_candidates())


def test_bayesian_dawid_skene_scores_a_vote_by_its_posterior_mean_confusions():
    # the variational model keeps Dirichlet parameters, not log-probabilities: a held-out vote
    # is scored by the posterior predictive, the mean confusion matrix of its worker
    from skcrowd.datasets import simulate_annotators

    y = np.random.default_rng(0).integers(3, size=200)
    votes = simulate_annotators(y, 15, accuracy=0.7, votes_per_task=4, random_state=0).votes
    model = BayesianDawidSkene().fit(votes)
    v = check_votes(votes)
    got = model._vote_log_likelihood(v, v.task, v.worker, v.label)
    proba = model.predict_proba(votes)
    want = logsumexp(np.log(proba[v.task])
                     + np.log(model.confusion_matrices_[v.worker, :, v.label]), axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert np.all(got < 0)


TINY = np.array([[0, 0, 1, -1], [1, 1, -1, 1], [0, -1, 0, 0], [1, 0, 1, 1], [2, 2, 2, 0]] * 4)


def _held_out_worker_3(model):
    """The fitted ``model``'s log-probabilities of worker 3's votes given the other votes of
    their tasks, with the other votes' soft labels and the tasks."""
    context = np.where(np.arange(4) == 3, -1, TINY)
    tasks = np.flatnonzero(TINY[:, 3] >= 0)
    got = model._vote_log_likelihood(check_votes(context), tasks, np.full(len(tasks), 3),
                                     TINY[tasks, 3])
    return got, model.predict_proba(context)[tasks], tasks


def test_one_coin_held_out_score_by_hand():
    """p(l | k, j) = E[p_j] if l = k else (1 - E[p_j]) / (K - 1): the Beta posterior mean."""
    from skcrowd.aggregation import OneCoinDawidSkene

    model = OneCoinDawidSkene().fit(TINY)
    got, proba, tasks = _held_out_worker_3(model)
    p = model.accuracy_posteriors_[3, 0] / model.accuracy_posteriors_[3].sum()
    conf = np.where(np.eye(3, dtype=bool), p, (1 - p) / 2)[:, TINY[tasks, 3]].T
    np.testing.assert_allclose(got, np.log(np.sum(proba * conf, axis=1)), rtol=1e-10)


@pytest.mark.parametrize("method", ["vb", "em"])
def test_mace_held_out_score_by_hand(method):
    """p(l | k, j) = E[theta_j] 1{l = k} + (1 - E[theta_j]) E[xi_j[l]]."""
    from skcrowd.aggregation import MACE

    model = MACE(method=method).fit(TINY)
    got, proba, tasks = _held_out_worker_3(model)
    theta, xi = model.competences_[3], model.spam_distributions_[3]
    conf = (theta * np.eye(3) + (1 - theta) * xi)[:, TINY[tasks, 3]].T
    np.testing.assert_allclose(got, np.log(np.sum(proba * conf, axis=1)), rtol=1e-10)


def test_ebcc_held_out_score_sums_over_subtypes_by_hand():
    """sum over (class k, subtype m) of q(k, m | other votes) E[v[3, k, m, l]], the state
    posterior written out from the Dirichlet posteriors (not the class posterior times the
    marginal confusion matrix: the other votes also tell the subtype)."""
    from scipy.special import digamma

    from skcrowd.aggregation import EBCC

    model = EBCC(n_subtypes=2, random_state=0).fit(TINY)
    got, proba, tasks = _held_out_worker_3(model)
    counts = model.subtype_confusion_counts_  # [j, k, m, l]
    e_log_v = digamma(counts) - digamma(counts.sum(axis=3, keepdims=True))
    tau, pi = model._class_posterior, model._subtype_posterior
    log_state = ((digamma(tau) - digamma(tau.sum()))[:, None]
                 + digamma(pi) - digamma(pi.sum(axis=1, keepdims=True)))  # [k, m]
    want = []
    for i in tasks:
        log_q = log_state + sum(e_log_v[j, :, :, TINY[i, j]] for j in range(3) if TINY[i, j] >= 0)
        q = np.exp(log_q - logsumexp(log_q))
        v = counts[3, :, :, TINY[i, 3]] / counts[3].sum(axis=2)
        want.append(np.log(np.sum(q * v)))
    np.testing.assert_allclose(got, want, rtol=1e-10)
    marginal = np.log(np.sum(proba * model.confusion_matrices_[3][:, TINY[tasks, 3]].T, axis=1))
    assert not np.allclose(got, marginal)


@pytest.mark.parametrize("name", ["OneCoinDawidSkene", "MACE", "EBCC", "BayesianDawidSkene"])
def test_held_out_vote_probabilities_sum_to_one_over_the_labels(name):
    import skcrowd.aggregation as aggregation

    model = getattr(aggregation, name)().fit(TINY)
    context = check_votes(np.where(np.arange(4) == 3, -1, TINY))
    tasks = np.repeat(np.arange(len(TINY)), 3)
    labels = np.tile(np.arange(3), len(TINY))
    got = model._vote_log_likelihood(context, tasks, np.full(len(tasks), 3), labels)
    np.testing.assert_allclose(np.exp(got).reshape(-1, 3).sum(axis=1), 1.0, rtol=1e-10)


def test_selector_split_hook_gives_each_held_out_vote_its_log_probability():
    """The private hook ``_held_out_log_proba`` (one hold-out; ``benchmarks/selection_rules.py``
    reads the per-vote scores through it): each candidate's row is ``held_out_score``'s terms,
    and the selector's split scores are the rows' means."""
    from skcrowd._holdout import _subset, held_out_score

    votes, _ = skewed_sparse(0, n_tasks=120)
    v = check_votes(votes)
    candidates = [MajorityVote(random_state=0), DawidSkene(random_state=0)]  # no seed drawn
    selector = AggregatorSelector(candidates, test_size=0.3)
    fit_time = np.zeros(2)
    task, log_proba = selector._held_out_log_proba(v, candidates, np.random.RandomState(0),
                                                   fit_time)
    held = held_out_votes(v, 0.3, np.random.RandomState(0))
    np.testing.assert_array_equal(task, v.task[held])
    assert log_proba.shape == (2, held.sum()) and np.all(log_proba < 0) and np.all(fit_time > 0)
    context = _subset(v, ~held)
    for row, candidate in zip(log_proba, candidates):
        model = candidate.fit(context.to_sparse())
        assert np.mean(row) == held_out_score(model, context, _subset(v, held))
    fitted = AggregatorSelector(candidates, test_size=0.3, n_splits=1, random_state=0).fit(votes)
    np.testing.assert_array_equal(fitted.cv_results_["split0_test_score"],
                                  [np.mean(row) for row in log_proba])


def test_candidate_warnings_name_the_candidate_and_the_selector_fits():
    votes, _ = skewed_sparse(0)
    selector = AggregatorSelector([BayesianDawidSkene(max_iter=1)], random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selector.fit(votes)
    assert len(caught) == 1  # once for its 3 hold-out fits and its refit, not 4 times
    (warning,) = caught
    assert warning.category is ConvergenceWarning
    assert warning.filename == __file__  # issued at the caller of fit
    assert str(warning.message) == (
        "AggregatorSelector: candidate BayesianDawidSkene(max_iter=1) (candidates[0]), which "
        "the selector fitted on hold-out splits 1, 2 and 3 of 3 and refitted on all the votes "
        "as best_estimator_: BayesianDawidSkene did not converge in max_iter=1 iterations (last "
        "change of the objective above tol=1e-06). Increase max_iter or tol. To change its "
        "parameters, pass it with them in candidates=, e.g. BayesianDawidSkene(max_iter=...).")
    # a candidate that is not chosen warns for its hold-out fits only; one that does not warn,
    # not at all
    selector = AggregatorSelector([DawidSkene(), MajorityVote(), DawidSkene(max_iter=1)],
                                  random_state=0)
    with pytest.warns(ConvergenceWarning) as record:
        selector.fit(votes)
    assert selector.best_index_ != 2
    assert len(record) == 1 and str(record[0].message).startswith(
        "AggregatorSelector: candidate DawidSkene(max_iter=1) (candidates[2]), which the selector "
        "fitted on hold-out splits 1, 2 and 3 of 3: DawidSkene did not converge")


def test_candidate_warnings_follow_the_filters_in_force():
    votes, _ = skewed_sparse(0)
    selector = AggregatorSelector([DawidSkene(max_iter=1)], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        selector.fit(votes)  # ignored: nothing re-issued (an error would raise)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ConvergenceWarning, match="^DawidSkene did not converge"):
            selector.fit(votes)
