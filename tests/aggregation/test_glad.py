"""GLAD's M-step for the abilities: a step that never decreases its objective."""

import numpy as np
import pytest

from skcrowd import check_votes
from skcrowd.aggregation._glad import _ability_step
from skcrowd.aggregation.kernels import BlockLayout, glad_gradients

from .kernels._crowds import random_votes


def _q_of_workers(layout, resp, abilities, log_betas, mean, scale):
    """Each worker's Q_j(alpha): sum over its votes of q log s + (1 - q) log(1 - s), plus the
    ability's Gaussian log-prior, straight from the definitions."""
    q = resp[layout.task, layout.label]
    z = abilities[layout.worker] * np.exp(log_betas)[layout.task]
    terms = q * -np.logaddexp(0.0, -z) + (1 - q) * -np.logaddexp(0.0, z)
    return (np.bincount(layout.worker, weights=terms, minlength=layout.n_workers)
            - 0.5 * (abilities - mean) ** 2 / scale**2)


@pytest.mark.parametrize("seed", range(6))
def test_ability_step_never_decreases_q(seed):
    """For any posteriors, difficulties and abilities (near 0, negative, large), the step
    raises every worker's Q_j; the plain Newton step lowers some of them here."""
    rng = np.random.default_rng(seed)
    votes = random_votes(rng, n_tasks=80, n_workers=40, K=3, density=0.3)
    layout = BlockLayout(votes)
    mean, scale = rng.normal(1.0, 0.5), rng.uniform(0.2, 20.0)
    overshoots = 0
    for _ in range(20):
        abilities = rng.normal(0.0, 3.0, size=votes.n_workers) * rng.integers(0, 2, 40)
        resp = rng.dirichlet(np.full(3, 0.3), size=votes.n_tasks)
        log_betas, _, grad, curv, curv_half, curv_zero = glad_gradients(
            layout, resp, abilities, rng.normal(0.0, 1.5, size=votes.n_tasks))
        q = _q_of_workers(layout, resp, abilities, log_betas, mean, scale)
        step = _ability_step(abilities, grad, curv, curv_half, curv_zero, mean, scale)
        q_next = _q_of_workers(layout, resp, abilities + step, log_betas, mean, scale)
        assert np.all(q_next >= q - 1e-12 * np.abs(q))
        inv_var = 1.0 / scale**2
        newton = np.clip((grad - inv_var * (abilities - mean)) / (curv + inv_var), -1, 1)
        q_newton = _q_of_workers(layout, resp, abilities + newton, log_betas, mean, scale)
        overshoots += np.sum(q_newton < q - 1e-9 * np.abs(q))
        outward = newton * abilities >= 0
        np.testing.assert_array_equal(step[outward], newton[outward])
    assert overshoots > 0


def test_ability_step_crosses_zero():
    """A worker whose votes all disagree with the posteriors goes from a positive ability to a
    negative one (the bound at 0 lets a step cross it)."""
    labels = np.random.default_rng(0).integers(2, size=30)
    layout = BlockLayout(check_votes(labels[:, None], n_classes=2))
    resp = np.eye(2)[1 - labels]  # every vote is wrong
    abilities = np.array([0.3])
    for _ in range(5):
        log_betas, _, *stats = glad_gradients(layout, resp, abilities, np.zeros(30))
        abilities = abilities + _ability_step(abilities, *stats, 1.0, 10.0)
    assert abilities[0] < -1.0
