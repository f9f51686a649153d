"""GLAD kernels: hand-computed values, the MAP difficulty search."""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation.kernels import BlockLayout, glad_block_statistics, glad_task_difficulties

from ._crowds import random_votes


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
    np.testing.assert_allclose(st.ability_gradient, (q - right) * beta, rtol=1e-12)
    np.testing.assert_allclose(st.ability_curvature, right * (1 - right) * beta**2, rtol=1e-12)
    assert st.difficulty_gradient[0] == pytest.approx(np.sum((q - right) * alpha * beta))


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
