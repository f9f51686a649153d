"""MACE: a step by hand (VB and EM), the objective, spammers found, extremes, parameters."""

import numpy as np
import pytest
from scipy.special import digamma, gammaln
from sklearn.exceptions import ConvergenceWarning

from skcrowd.aggregation import MACE, MajorityVote

VOTES = np.array([[0, 0, 1], [1, 1, -1], [0, -1, 0]])  # three tasks, three workers, K=2


def _first_statistics(votes, K):
    """Expected known / spammed counts of the first M-step: the vote frequencies as soft labels,
    a vote for ``a`` known with probability ``r[a] K / (K + 1)``."""
    shares = np.array([np.bincount(row[row >= 0], minlength=K) / (row >= 0).sum()
                       for row in votes])
    knowing = np.zeros(votes.shape[1])
    spam = np.zeros((votes.shape[1], K))
    for i, row in enumerate(votes):
        for j, a in enumerate(row):
            if a >= 0:
                known = shares[i, a] * K / (K + 1)
                knowing[j] += known
                spam[j, a] += 1 - known
    return shares, knowing, spam


def _e_step(votes, answer, log_priors):
    """Posteriors and log-normalizers from ``answer[j, a, t]`` (probabilities or exp E[log])."""
    logits = np.tile(log_priors, (len(votes), 1))
    for i, row in enumerate(votes):
        for j, a in enumerate(row):
            if a >= 0:
                logits[i] += np.log(answer[j, a])
    log_norm = np.log(np.exp(logits).sum(axis=1))
    return np.exp(logits - log_norm[:, None]), log_norm


def _dirichlet_kl(p, q):
    return (gammaln(p.sum(-1)) - gammaln(p).sum(-1) - gammaln(q.sum(-1)) + gammaln(q).sum(-1)
            + ((p - q) * (digamma(p) - digamma(p.sum(-1))[..., None])).sum(-1))


@pytest.mark.parametrize("class_priors", ["uniform", "fit"])
def test_one_variational_step_by_hand(class_priors):
    K, (a, b), g = 2, (0.5, 0.5), 10.0
    mace = MACE(competence_prior=(a, b), spam_prior=g, class_priors=class_priors, max_iter=1,
                tol=0)
    with pytest.warns(ConvergenceWarning):
        mace.fit(VOTES)
    shares, knowing, spam = _first_statistics(VOTES, K)
    competence = np.column_stack([a + knowing, b + spam.sum(axis=1)])
    spam_rows = g + spam
    np.testing.assert_allclose(mace.competence_posteriors_, competence, rtol=1e-12)
    np.testing.assert_allclose(mace.spam_posteriors_, spam_rows, rtol=1e-12)
    np.testing.assert_allclose(mace.competences_, competence[:, 0] / competence.sum(axis=1))
    priors = np.full(K, 0.5) if class_priors == "uniform" else (shares.sum(0) + 1) / (3 + K)
    np.testing.assert_allclose(mace.class_priors_, priors)
    # E-step with the subnormalized parameters exp(E[log theta]), exp(E[log(1 - theta)] + E[log xi])
    e_theta = np.exp(digamma(competence[:, 0]) - digamma(competence.sum(axis=1)))
    e_spam = np.exp(digamma(competence[:, 1]) - digamma(competence.sum(axis=1)))[:, None] * np.exp(
        digamma(spam_rows) - digamma(spam_rows.sum(axis=1, keepdims=True)))
    answer = e_spam[:, :, None] + e_theta[:, None, None] * np.eye(K)  # [j, a, t]
    resp, log_norm = _e_step(VOTES, answer, np.log(priors))
    np.testing.assert_allclose(mace.predict_proba(VOTES), resp, rtol=1e-12)
    elbo = (log_norm.sum() - _dirichlet_kl(competence, np.array([a, b])).sum()
            - _dirichlet_kl(spam_rows, np.full(K, g)).sum())
    if class_priors == "fit":
        elbo += np.log(priors).sum()  # the Dirichlet(2, 2) prior of the class priors
    assert mace.lower_bound_ == pytest.approx(elbo / 3, rel=1e-12)
    # score_samples: the likelihood at the posterior means, the implied confusion matrices
    theta = competence[:, 0] / competence.sum(axis=1)
    xi = spam_rows / spam_rows.sum(axis=1, keepdims=True)
    confusion = theta[:, None, None] * np.eye(K) + (1 - theta)[:, None, None] * xi[:, None, :]
    np.testing.assert_allclose(mace.confusion_matrices_, confusion, rtol=1e-12)
    _, log_p = _e_step(VOTES, confusion.transpose(0, 2, 1), np.log(priors))
    np.testing.assert_allclose(mace.score_samples(VOTES), log_p, rtol=1e-12)


def test_one_em_step_by_hand():
    K, s = 2, 0.01
    mace = MACE(method="em", smoothing=s, class_priors="uniform", max_iter=1, tol=0)
    with pytest.warns(ConvergenceWarning):
        mace.fit(VOTES)
    _, knowing, spam = _first_statistics(VOTES, K)
    theta = (knowing + s / K) / (knowing + spam.sum(axis=1) + 2 * s / K)
    xi = (spam + s / K) / (spam.sum(axis=1, keepdims=True) + 2 * s / K)
    np.testing.assert_allclose(mace.competences_, theta, rtol=1e-12)
    np.testing.assert_allclose(mace.spam_distributions_, xi, rtol=1e-12)
    assert not hasattr(mace, "competence_posteriors_")  # no posteriors with EM
    answer = (1 - theta)[:, None, None] * xi[:, :, None] + theta[:, None, None] * np.eye(K)
    resp, log_norm = _e_step(VOTES, answer, np.log([0.5, 0.5]))
    np.testing.assert_allclose(mace.predict_proba(VOTES), resp, rtol=1e-12)
    log_prior = s / K * (np.log(theta).sum() + np.log1p(-theta).sum() + np.log(xi).sum())
    assert mace.lower_bound_ == pytest.approx((log_norm.sum() + log_prior) / 3, rel=1e-12)


@pytest.mark.parametrize("params", [{}, {"competence_prior": (0.5, 0.5), "spam_prior": 10.0,
                                         "class_priors": "uniform"},
                                    {"method": "em"}], ids=["auto", "paper", "em"])
@pytest.mark.parametrize("init", ["majority", "random"])
def test_objective_never_decreases(params, init):
    for seed in range(3):
        rng = np.random.default_rng(seed)
        votes = rng.integers(3, size=(150, 20))
        votes[rng.random(votes.shape) < 0.7] = -1
        votes[:, 0] = np.where(votes[:, 0] >= 0, 2, -1)  # a constant spammer
        with pytest.warns(ConvergenceWarning):
            mace = MACE(init=init, tol=0, max_iter=40, random_state=seed, **params).fit(votes)
        steps = np.diff(mace.lower_bounds_)
        assert steps.min() >= -1e-10 * abs(mace.lower_bound_), (seed, steps.min())


def _crowd_with_spammers(seed, n_tasks=1000, K=4):
    """Ten workers of accuracy 0.6-0.9 (else a uniform wrong class), one spammer answering
    uniformly at random and one always giving the same label; 5 votes per task."""
    rng = np.random.default_rng(seed)
    y = rng.integers(K, size=n_tasks)
    accuracy = np.linspace(0.6, 0.9, 10)
    votes = np.full((n_tasks, 12), -1)
    for i in range(n_tasks):
        for j in rng.choice(12, size=5, replace=False):
            if j == 10:
                votes[i, j] = rng.integers(K)
            elif j == 11:
                votes[i, j] = 1
            else:
                right = rng.random() < accuracy[j]
                votes[i, j] = y[i] if right else (y[i] + rng.integers(1, K)) % K
    return votes, y


@pytest.mark.parametrize("params", [{}, {"method": "em"},
                                    {"competence_prior": (0.5, 0.5), "spam_prior": 10.0,
                                     "class_priors": "uniform"}], ids=["auto", "em", "paper"])
def test_spammers_are_identified(params):
    votes, y = _crowd_with_spammers(0)
    mace = MACE(**params).fit(votes)
    assert mace.competences_[10] < 0.1 and mace.competences_[11] < 0.1
    assert mace.competences_[:10].min() > 0.4
    # the competences order the regular workers as their accuracies do
    assert np.corrcoef(mace.competences_[:10], np.arange(10))[0, 1] > 0.9
    assert mace.spam_distributions_[11].argmax() == 1 and mace.spam_distributions_[11, 1] > 0.9
    # measured 0.929 (auto and em), 0.930 (paper) against 0.891 for majority vote
    mv = MajorityVote(random_state=0).fit(votes).predict(votes)
    assert np.mean(mace.predict(votes) == y) > np.mean(mv == y) + 0.025


def test_fitted_priors_follow_the_crowd():
    votes, y = _crowd_with_spammers(1)
    mace = MACE().fit(votes)
    a, b = mace.competence_prior_
    # 10 regular workers of accuracy 0.6-0.9 (competence 0.47-0.87 for K=4) and 2 spammers:
    # a prior of mean 0.47 between them (measured), U-shaped (a, b < 1)
    assert 0.3 < a / (a + b) < 0.7 and a < 1 and b < 1
    assert mace.spam_prior_ > 0
    np.testing.assert_allclose(mace.class_priors_, np.bincount(y) / len(y), atol=0.03)


@pytest.mark.parametrize("votes", [np.array([[0, 0, -1], [0, -1, 0], [-1, 0, 0]]),
                                   np.array([[1, 1, 1], [0, 0, 0], [1, 1, -1]] * 20)],
                         ids=["one class", "all agree"])
@pytest.mark.parametrize("method", ["vb", "em"])
def test_unanimous_crowds_stay_finite(votes, method):
    mace = MACE(method=method).fit(votes)
    assert np.all(np.isfinite(mace.lower_bounds_))
    assert np.all(np.isfinite(mace.confusion_matrices_))
    np.testing.assert_array_equal(mace.predict(votes), votes.max(axis=1))


def test_em_fit_predicts_and_warm_starts_from_its_attributes(make_votes):
    votes = make_votes(0, 80, 8, accuracy=0.75, empty_task=7)
    em = MACE(method="em", warm_start=True).fit(votes)
    proba = em.predict_proba(votes)
    assert em.fit(votes).n_iter_ <= 2  # resumes at the fitted optimum
    np.testing.assert_allclose(em.predict_proba(votes), proba, atol=1e-3)
    vb = MACE().fit(votes)
    assert hasattr(vb, "competence_posteriors_") and hasattr(vb, "spam_prior_")


def test_invalid_priors_are_rejected(make_votes):
    votes = make_votes(0, 20, 4, accuracy=0.75, empty_task=7)
    for bad in [(1.0,), (1.0, 0.0), ("a", "b")]:
        with pytest.raises(ValueError, match="competence_prior must be 'auto' or two positive"):
            MACE(competence_prior=bad).fit(votes)
    with pytest.raises(ValueError, match="'spam_prior' parameter"):
        MACE(spam_prior=0.0).fit(votes)
    with pytest.raises(ValueError, match="'class_priors' parameter"):
        MACE(class_priors="learned").fit(votes)
    with pytest.raises(ValueError, match="'method' parameter"):
        MACE(method="gibbs").fit(votes)
