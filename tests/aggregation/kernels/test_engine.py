"""The engine switch: both engines agree on every kernel and fit; numpy without numba."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from skcrowd.aggregation import GLAD, DawidSkene, WeightedDawidSkene, kernels
from skcrowd.aggregation import MACE, OneCoinDawidSkene
from skcrowd.aggregation import KOS, MMSR, Wawa, ZeroBasedSkill
from skcrowd.aggregation import EBCC, BayesianDawidSkene
from skcrowd.aggregation.kernels import (
    SOFTMAX,
    BlockLayout,
    agreement_credit,
    ds_block_statistics,
    ds_cavity_counts,
    ds_e_step,
    ds_log_confusions,
    ds_vote_share_counts,
    glad_block_statistics,
    glad_gradients,
    glad_task_difficulties,
    kos_iteration,
    msr_step,
    naive_soft_labels,
    one_coin_agreement,
    one_coin_block_statistics,
    one_coin_e_step,
    row_argmax,
    weighted_vote_proba,
    worker_agreement,
)
from skcrowd.aggregation._priors import fit_dirichlet_multinomial
from skcrowd.aggregation.kernels import dirichlet_expectations

from ._crowds import random_log_confusions, random_votes


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
def test_engines_agree_on_every_kernel(monkeypatch):
    rng = np.random.default_rng(2)
    votes = random_votes(rng, n_tasks=80, n_workers=9, K=4)
    layout = BlockLayout(votes)
    log_conf_t = random_log_confusions(rng, votes.n_workers, 4)
    log_priors = np.log(rng.dirichlet(np.ones(4)))
    abilities = rng.normal(1.0, 1.0, size=votes.n_workers)
    log_betas = rng.normal(0.0, 0.5, size=votes.n_tasks)
    resp = rng.dirichlet(np.ones(4), size=votes.n_tasks)
    log_task_priors = np.log(rng.dirichlet(np.ones(4), size=votes.n_tasks))
    log_task_priors[5::7] = -np.inf  # known tasks, task 5 (no votes) among them
    log_task_priors[5::7, 1] = np.log(0.4)
    indptr, neighbour = worker_agreement(layout)[:2]
    pair_values = rng.random(len(neighbour))
    counts = rng.gamma(0.5, 3.0, size=(9, 4, 4)) * (rng.random((9, 4, 4)) < 0.7)
    results = {}
    for engine in ("numba", "numpy"):
        monkeypatch.setattr(kernels, "ENGINE", engine)
        results[engine] = [
            *ds_block_statistics(layout, log_conf_t, log_priors,
                                 resp=np.empty((votes.n_tasks, 4)))[:3],
            *glad_block_statistics(layout, abilities, log_betas, log_priors),
            *glad_task_difficulties(layout, abilities, log_priors),
            *glad_gradients(layout, resp, abilities, log_betas),
            ds_log_confusions(np.exp(log_conf_t), np.eye(4)),
            naive_soft_labels(layout.task, layout.label, votes.n_tasks, np.exp(log_priors)),
            row_argmax(np.round(resp, 1)),  # ties: the first largest entry
            *ds_vote_share_counts(layout, np.exp(log_priors)),
            ds_cavity_counts(layout, log_conf_t, resp),
            *ds_block_statistics(layout, log_conf_t, log_priors, log_task_priors=log_task_priors,
                                 cavity=True)[1:],
            *ds_block_statistics(layout, log_conf_t, log_priors, resp=np.empty((votes.n_tasks, 4)),
                                 log_task_priors=log_task_priors)[:3],
            *glad_block_statistics(layout, abilities, log_betas, log_priors,
                                   log_task_priors=log_task_priors),
            *glad_task_difficulties(layout, abilities, log_priors,
                                    log_task_priors=log_task_priors),
            weighted_vote_proba(layout, abilities, np.exp(log_priors))[0],
            *weighted_vote_proba(layout, abilities, log_priors, kind=SOFTMAX),
            agreement_credit(layout, np.abs(abilities)),
            *worker_agreement(layout),
            msr_step(indptr, neighbour, pair_values, np.exp(abilities), abilities,
                     np.arange(votes.n_workers) % 3),
            *dirichlet_expectations(np.exp(log_conf_t) * 3.0 + 0.5, np.exp(log_conf_t[0])),
            fit_dirichlet_multinomial(counts, np.ones((4, 4)), bounds=(1e-2, 1e5)),
            # the Dawid-Skene pass on latent states other than the classes (EBCC's pairs),
            # with per-task priors over the states
            *ds_block_statistics(layout, np.repeat(log_conf_t, 2, axis=2),
                                 np.repeat(log_priors - np.log(2), 2),
                                 resp=np.empty((votes.n_tasks, 8)),
                                 log_task_priors=np.repeat(log_task_priors - np.log(2), 2,
                                                           axis=1))[:3],
            *one_coin_block_statistics(layout, log_conf_t[:, 0, 0], log_conf_t[:, 1, 0],
                                       log_priors, resp=np.empty((votes.n_tasks, 4)))[:3],
            *one_coin_e_step(layout, log_conf_t[:, 0], log_conf_t[:, 1], log_priors,
                             per_cell=True),
            one_coin_agreement(layout, resp, per_cell=True),
            *one_coin_block_statistics(layout, log_conf_t[:, 0], log_conf_t[:, 1], log_priors,
                                       per_cell=True, resp=np.empty((votes.n_tasks, 4)),
                                       log_task_priors=log_task_priors)[:3],
            *one_coin_e_step(layout, log_conf_t[:, 0, 0], log_conf_t[:, 1, 0], log_priors,
                             log_task_priors=log_task_priors),
        ]
    for a, b in zip(results["numba"], results["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
def test_engines_agree_on_kos_iterations(monkeypatch):
    votes = random_votes(np.random.default_rng(4), n_tasks=80, n_workers=9, K=2)
    layout = BlockLayout(votes)
    sign = 2.0 * layout.label - 1
    results = {}
    for engine in ("numba", "numpy"):
        monkeypatch.setattr(kernels, "ENGINE", engine)
        y, x = np.random.default_rng(5).normal(1, 1, votes.n_votes), np.empty(votes.n_votes)
        results[engine] = [kos_iteration(layout, sign, y, x)[0] for _ in range(3)] + [y, x]
    for a, b in zip(results["numba"], results["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
@pytest.mark.parametrize("model", [Wawa(), ZeroBasedSkill(), MMSR(random_state=0),
                                   KOS(random_state=0, max_iter=15, tol=0)], ids=type)
def test_engines_agree_on_weighted_votes(model, monkeypatch):
    rng = np.random.default_rng(3)
    K = 2 if isinstance(model, KOS) else 4
    votes = rng.integers(K, size=(120, 10))
    votes[rng.random(votes.shape) < 0.6] = -1
    fitted = {}
    for engine in ("numba", "numpy"):
        monkeypatch.setattr(kernels, "ENGINE", engine)
        m = model.fit(votes)
        fitted[engine] = [m.predict_proba(votes)] + [
            getattr(m, name) for name in ("skills_", "reliabilities_", "accuracies_", "n_iter_")
            if hasattr(m, name)]
    for a, b in zip(fitted["numba"], fitted["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
@pytest.mark.parametrize("model", [DawidSkene(tol=0, max_iter=15),
                                   WeightedDawidSkene(tol=0, max_iter=15),
                                   GLAD(tol=0, max_iter=15),
                                   BayesianDawidSkene(tol=0, max_iter=15),
                                   EBCC(tol=0, max_iter=15, random_state=0),
                                   OneCoinDawidSkene(tol=0, max_iter=15),
                                   MACE(tol=0, max_iter=15)], ids=type)
def test_engines_agree_on_whole_fits(model, monkeypatch):
    rng = np.random.default_rng(3)
    votes = rng.integers(4, size=(120, 10))
    votes[rng.random(votes.shape) < 0.6] = -1
    fitted = {}
    for engine in ("numba", "numpy"):
        monkeypatch.setattr(kernels, "ENGINE", engine)
        with pytest.warns(Warning):  # tol=0: ConvergenceWarning
            m = model.fit(votes)
        fitted[engine] = (m.predict_proba(votes), np.array(m.lower_bounds_),
                          m.score_samples(votes))
    for a, b in zip(fitted["numba"], fitted["numpy"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_numpy_engine_is_used_when_numba_cannot_be_imported():
    code = (
        "import sys; sys.modules['numba'] = None\n"
        "import numpy as np\n"
        "from skcrowd.aggregation import DawidSkene, GLAD, kernels\n"
        "votes = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]] * 10)\n"
        "print(kernels.ENGINE, kernels.engine_for_votes(10**12),"
        " DawidSkene().fit(votes).predict([[0, 1, 1]])[0],"
        " GLAD().fit(votes).predict([[0, 1, 1]])[0])\n"
    )
    repo = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["auto", "numpy", "0", "0"]


def test_auto_engine_chooses_by_the_number_of_votes(monkeypatch):
    monkeypatch.setattr(kernels, "ENGINE", "auto")
    threshold = kernels.AUTO_NUMBA_MIN_VOTES
    assert kernels.engine_for_votes(threshold - 1) == "numpy"
    assert kernels.engine_for_votes(threshold) == ("numpy" if kernels.numba is None else "numba")
    for engine in ("numba", "numpy"):
        if engine == "numba" and kernels.numba is None:
            continue
        monkeypatch.setattr(kernels, "ENGINE", engine)
        assert kernels.engine_for_votes(0) == kernels.engine_for_votes(10**12) == engine


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_auto_engine_runs_one_engine_per_fit(monkeypatch):
    """Inside a fit every kernel runs the fit's engine, whatever the size of its own call."""
    from skcrowd.aggregation.kernels import _common

    monkeypatch.setattr(kernels, "ENGINE", "auto")
    assert _common._engine(10) == "numpy" and _common._engine() == "numpy"
    with kernels.fit_engine(kernels.AUTO_NUMBA_MIN_VOTES):
        assert _common._engine(10) == _common._engine() == "numba"
        with kernels.fit_engine(10):
            assert _common._engine(10**9) == "numpy"
        assert _common._engine() == "numba"
    assert _common._engine() == "numpy"
    seen = []
    numba_pass = kernels.dawid_skene._ds_chunks_serial

    def spy(*args):
        seen.append("numba")
        return numba_pass(*args)

    monkeypatch.setattr(kernels.dawid_skene, "_ds_chunks_serial", spy)
    votes = np.array([[0, 0, 1], [1, 1, 0], [0, 1, 1]] * 5)
    DawidSkene(max_iter=3).fit(votes)
    assert not seen  # 45 votes: numpy
    monkeypatch.setattr(_common, "AUTO_NUMBA_MIN_VOTES", 45)
    DawidSkene(max_iter=3).fit(votes)
    assert seen  # numba's fused pass


@pytest.mark.skipif(kernels.numba is None, reason="numba is not installed")
@pytest.mark.parametrize("model", [DawidSkene(tol=0, max_iter=15), GLAD(tol=0, max_iter=10),
                                   BayesianDawidSkene(tol=0, max_iter=15)],
                         ids=lambda m: type(m).__name__)
def test_auto_engine_fits_equal_those_of_both_engines(model, monkeypatch):
    """A fit under ENGINE="auto" equals the numba and numpy fits on either side of the
    threshold: which engine the number of votes picks does not change the result."""
    from skcrowd.aggregation.kernels import _common

    rng = np.random.default_rng(5)
    votes = rng.integers(4, size=(150, 12))
    votes[rng.random(votes.shape) < 0.5] = -1
    n_votes = int((votes >= 0).sum())
    fitted = {}
    for engine, threshold in [("numba", None), ("numpy", None), ("auto", n_votes),
                              ("auto", n_votes + 1)]:
        monkeypatch.setattr(kernels, "ENGINE", engine)
        if threshold is not None:
            monkeypatch.setattr(_common, "AUTO_NUMBA_MIN_VOTES", threshold)
        with pytest.warns(Warning):  # tol=0: ConvergenceWarning
            m = clone(model).fit(votes)
        fitted[engine, threshold] = (m.predict_proba(votes), np.array(m.lower_bounds_))
    reference = fitted["numba", None]
    for key, result in fitted.items():
        for a, b in zip(result, reference):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=str(key))


@pytest.mark.parametrize("kernel", ["ds_e_step", "glad_task_difficulties", "row_argmax"])
def test_one_switch_for_every_model(kernel, monkeypatch):
    """Every model's kernels read the package's ENGINE at call time."""
    layout = BlockLayout(random_votes(np.random.default_rng(0)))
    call = {
        "ds_e_step": lambda: ds_e_step(layout, random_log_confusions(
            np.random.default_rng(1), layout.n_workers, 3), np.log(np.full(3, 1 / 3))),
        "glad_task_difficulties": lambda: glad_task_difficulties(
            layout, np.ones(layout.n_workers), np.log(np.full(3, 1 / 3))),
        "row_argmax": lambda: row_argmax(np.eye(3)),
    }[kernel]
    monkeypatch.setattr(kernels, "ENGINE", "fortran")
    with pytest.raises(ValueError, match=r"skcrowd\.aggregation\.kernels\.ENGINE must be"):
        call()
