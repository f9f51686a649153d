"""GLAD kernels: hand-computed values, the difficulties' M-step, the MAP difficulty search."""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation.kernels import (BlockLayout, glad_block_statistics, glad_gradients,
                                         glad_task_difficulties)

from ._crowds import random_votes


def _q_of_tasks(layout, resp, abilities, log_betas, prior_scale=1.0):
    """Each task's Q_i(b): sum over its votes of q log s + (1 - q) log(1 - s), minus its
    log-difficulty's Gaussian prior term, straight from the definitions."""
    q = resp[layout.task, layout.label]
    z = abilities[layout.worker] * np.exp(log_betas)[layout.task]
    terms = q * -np.logaddexp(0.0, -z) + (1 - q) * -np.logaddexp(0.0, z)
    return (np.bincount(layout.task, weights=terms, minlength=layout.n_tasks)
            - 0.5 * log_betas**2 / prior_scale**2)


def test_glad_e_step_by_hand(engine):
    # K=3, task votes [0, 0, 1] by workers with abilities 1, 2, 0.5; beta = e**0.3
    layout = BlockLayout(check_votes(np.array([[0, 0, 1]]), n_classes=3))
    alpha = np.array([1.0, 2.0, 0.5])
    beta = np.exp(0.3)
    st = glad_block_statistics(layout, alpha, np.array([0.3]), np.log(np.ones(3) / 3))
    right = 1 / (1 + np.exp(-alpha * beta))
    wrong = (1 - right) / 2
    labels = np.array([0, 0, 1])
    lik = np.array([np.prod(np.where(labels == k, right, wrong)) for k in range(3)]) / 3
    np.testing.assert_allclose(st.resp[0], lik / lik.sum(), rtol=1e-12)
    assert st.task_log_likelihood[0] == pytest.approx(np.log(lik.sum()), rel=1e-12)
    q = (lik / lik.sum())[labels]  # posterior that each vote is right
    # the difficulty's M-step: Q is concave here, so one Newton step (of at most 1), which
    # increases Q
    z = alpha * beta
    grad = np.sum((q - right) * z) - 0.3
    hess = np.sum((q - right) * z) - np.sum(right * (1 - right) * z**2) - 1.0
    assert hess < 0
    assert st.log_betas[0] == pytest.approx(0.3 + np.clip(-grad / hess, -1, 1), rel=1e-12)
    assert _q_of_tasks(layout, st.resp, alpha, st.log_betas) > _q_of_tasks(
        layout, st.resp, alpha, np.array([0.3]))
    # the abilities' statistics, at the new difficulty
    beta = np.exp(st.log_betas[0])
    right = 1 / (1 + np.exp(-alpha * beta))
    half = 1 / (1 + np.exp(-alpha * beta / 2))
    np.testing.assert_allclose(st.ability_gradient, (q - right) * beta, rtol=1e-12)
    np.testing.assert_allclose(st.ability_curvature, right * (1 - right) * beta**2, rtol=1e-12)
    np.testing.assert_allclose(st.ability_curvature_half, half * (1 - half) * beta**2,
                               rtol=1e-12)
    np.testing.assert_allclose(st.ability_curvature_zero, beta**2 / 4, rtol=1e-12)
    assert st.difficulty_curvature[0] == pytest.approx(
        np.sum(right * (1 - right) * (alpha * beta) ** 2), rel=1e-12)


@pytest.mark.parametrize("prior_scale", [0.3, 1.0, 5.0])
def test_glad_difficulty_step_never_decreases_q(engine, prior_scale):
    """Each call's M-step raises (or keeps) every task's Q_i, for any abilities, difficulties
    and posteriors; repeated calls reach its maximum (grid check)."""
    rng = np.random.default_rng(7)
    votes = random_votes(rng, n_tasks=40, n_workers=9, K=3, density=0.7)
    layout = BlockLayout(votes)
    abilities = rng.normal(0.5, 2.0, size=votes.n_workers)
    resp = rng.dirichlet(np.full(3, 0.5), size=votes.n_tasks)
    log_betas = rng.uniform(-4, 4, size=votes.n_tasks)
    q = _q_of_tasks(layout, resp, abilities, log_betas, prior_scale)
    for _ in range(60):
        log_betas = glad_gradients(layout, resp, abilities, log_betas,
                                   prior_scale=prior_scale)[0]
        q_next = _q_of_tasks(layout, resp, abilities, log_betas, prior_scale)
        assert np.all(q_next >= q - 1e-12 * np.abs(q))
        q = q_next
    grid = np.linspace(-6, 6, 1201)
    on_grid = [_q_of_tasks(layout, resp, abilities, np.full(votes.n_tasks, b), prior_scale)
               for b in grid]
    assert np.all(q >= np.max(on_grid, axis=0) - 1e-9)
    assert log_betas[5] == 0.0  # no votes: the prior's mode


def test_glad_difficulty_is_the_map(engine):
    """The Newton search lands on the maximum of the per-task objective (grid check)."""
    rng = np.random.default_rng(4)
    votes = random_votes(rng, n_tasks=15, n_workers=8, K=3, density=0.8)
    layout = BlockLayout(votes)
    abilities = rng.normal(1.0, 1.0, size=votes.n_workers)
    log_priors = np.log(np.ones(3) / 3)
    _, log_betas, task_ll = glad_task_difficulties(layout, abilities, log_priors)
    # the objective on a grid of b, through the log-likelihoods of the E-step (one call)
    grid = np.linspace(-4, 4, 401)
    on_grid = votes.take_tasks(np.repeat(np.arange(votes.n_tasks), len(grid)))
    st = glad_block_statistics(BlockLayout(on_grid), abilities, np.tile(grid, votes.n_tasks),
                               log_priors)
    best = (st.task_log_likelihood - 0.5 * np.tile(grid, votes.n_tasks) ** 2).reshape(
        votes.n_tasks, len(grid)).max(axis=1)
    objective = task_ll - 0.5 * log_betas**2
    assert np.all(objective >= best - 1e-9)
    assert log_betas[5] == 0.0  # no votes: the prior mode, beta = 1


def test_glad_log_task_priors_by_hand(engine):
    """A task's prior row replaces the class priors; -inf rules a class out exactly."""
    layout = BlockLayout(check_votes(np.array([[0, 0, 1], [0, 0, 1], [-1, -1, -1]]),
                                     n_classes=3))
    alpha = np.array([1.0, 2.0, 0.5])
    prior = np.array([0.2, 0.5, 0.3])
    with np.errstate(divide="ignore"):
        log_task_priors = np.log([prior, [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    st = glad_block_statistics(layout, alpha, np.zeros(3), np.log(np.ones(3) / 3),
                               log_task_priors=log_task_priors)
    right = 1 / (1 + np.exp(-alpha))
    wrong = (1 - right) / 2
    lik = np.array([np.prod(np.where(np.array([0, 0, 1]) == k, right, wrong)) for k in range(3)])
    np.testing.assert_allclose(st.resp[0], prior * lik / (prior @ lik), rtol=1e-12)
    np.testing.assert_array_equal(st.resp[1:], [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(st.task_log_likelihood, [np.log(prior @ lik), np.log(lik[1]), 0.0],
                               rtol=1e-12, atol=1e-15)
    resp, log_betas, ll = glad_task_difficulties(layout, alpha, np.log(np.ones(3) / 3),
                                                 log_task_priors=log_task_priors)
    np.testing.assert_array_equal(resp[1:], st.resp[1:])
    assert np.all(np.isfinite(log_betas)) and np.all(np.isfinite(ll))
    assert log_betas[2] == 0.0  # no votes: the prior's mode
