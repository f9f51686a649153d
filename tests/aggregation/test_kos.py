"""KOS (binary): the paper's message passing by hand, the K > 2 error, and the behaviour the
other aggregators' tests check on 3-class votes, here on binary votes."""

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from skcrowd.aggregation import KOS, MajorityVote
from skcrowd.datasets import simulate_annotators


@pytest.fixture
def votes():
    """Binary votes of 12 workers on 200 tasks, 6 per task; workers 0-2 are adversarial."""
    rng = np.random.default_rng(0)
    y = rng.integers(2, size=200)
    types = ["adversarial"] * 3 + ["regular"] * 9
    sim = simulate_annotators(y, 12, accuracy=(0.65, 0.9), votes_per_task=6, worker_types=types,
                              random_state=0)
    v = sim.votes
    v[7] = -1  # a task without votes
    return v, y


def _reference_kos(votes, y0, n_iter):
    """Algorithm 1 of Karger, Oh & Shah (2011) on a dict of edges, messages rescaled to unit
    root mean square after each iteration; returns the decisions sign(sum_j A_ij y_{j->i}) and
    the workers' full messages."""
    edges = list(zip(*np.nonzero(votes >= 0)))  # task-sorted, like the estimator's votes
    A = {e: 2.0 * votes[e] - 1 for e in edges}
    y = dict(zip(edges, y0))
    by_task, by_worker = {}, {}
    for i, j in edges:
        by_task.setdefault(i, []).append(j)
        by_worker.setdefault(j, []).append(i)
    for _ in range(n_iter):
        x = {(i, j): sum(A[i, k] * y[i, k] for k in by_task[i] if k != j) for i, j in edges}
        y = {(i, j): sum(A[t, j] * x[t, j] for t in by_worker[j] if t != i) for i, j in edges}
        scale = np.sqrt(np.mean(np.square(list(y.values()))))
        y = {e: m / scale for e, m in y.items()}
    decisions = {i: np.sign(sum(A[i, j] * y[i, j] for j in js)) for i, js in by_task.items()}
    full = {j: sum(A[t, j] * x[t, j] for t in ts) for j, ts in by_worker.items()}
    return decisions, full


def test_message_passing_matches_the_paper(votes):
    votes, _ = votes
    n_votes = int((votes >= 0).sum())
    y0 = np.random.RandomState(4).normal(1.0, 1.0, size=n_votes)
    for n_iter in (1, 3):
        kos = KOS(max_iter=n_iter, tol=0, random_state=4).fit(votes)
        decisions, full = _reference_kos(votes, y0, n_iter)
        reference = np.array([full[j] for j in range(12)])
        np.testing.assert_allclose(kos.reliabilities_, reference / np.abs(reference).max(),
                                   rtol=1e-10)
    # at convergence, the labels are the paper's decisions
    kos = KOS(random_state=4).fit(votes)
    decisions, _ = _reference_kos(votes, y0, kos.n_iter_)
    labels = kos.predict(votes)
    for i, d in decisions.items():
        assert labels[i] == (d > 0)


def test_adversarial_workers_get_negative_reliabilities_and_truth_is_recovered(votes):
    votes, y = votes
    kos = KOS(random_state=0).fit(votes)
    assert kos.converged_
    assert np.all(kos.reliabilities_[:3] < 0) and np.all(kos.reliabilities_[3:] > 0)
    assert np.abs(kos.reliabilities_).max() == pytest.approx(1.0)
    voted = np.arange(200) != 7
    mv = MajorityVote(random_state=0).fit_predict(votes)
    assert np.mean(kos.predict(votes)[voted] == y[voted]) > np.mean(mv[voted] == y[voted]) + 0.1


def test_more_than_two_classes_raise_naming_them():
    with pytest.raises(ValueError, match=r"KOS is a binary method, but X has 3 classes \(\[0, "
                                         r"1, 2\]\)"):
        KOS().fit(np.array([[0, 1], [2, 1]]))
    with pytest.raises(ValueError, match=r"X has 4 classes \(\['a', 'b', 'c', 'd'\]\)"):
        KOS(missing_label=None).fit(np.array([["a", "b"], ["c", "d"]], dtype=object))
    with pytest.raises(ValueError, match="X has 3 classes"):
        KOS(n_classes=3).fit(np.array([[0, 1], [1, 1]]))


def test_a_failed_fit_leaves_the_estimator_as_it_was():
    # classes_ and n_features_in_ are recorded before the K > 2 check: a failed fit undoes them
    kos = KOS()
    with pytest.raises(ValueError, match="binary method"):
        kos.fit(np.array([[0, 1], [2, 1]]))
    assert [name for name in vars(kos) if name.endswith("_")] == []
    fitted = KOS(random_state=0).fit(np.array([[0, 1], [1, 1], [0, 0]]))
    before = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in vars(fitted).items()}
    with pytest.raises(ValueError, match="binary method"):
        fitted.fit(np.array([[0, 1], [2, 1]]))
    assert vars(fitted).keys() == before.keys()
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(fitted, name), value)


def test_outputs_are_consistent(votes):
    votes, _ = votes
    kos = KOS(random_state=0).fit(votes)
    proba = kos.predict_proba(votes)
    assert proba.shape == (200, 2) and np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[7], kos.class_priors_)
    np.testing.assert_array_equal(kos.transform(votes), proba)
    np.testing.assert_array_equal(KOS(random_state=0).fit_predict(votes), kos.predict(votes))
    np.testing.assert_array_equal(kos.predict(votes), np.argmax(proba, axis=1))
    # soft labels: shares of the absolute reliabilities, a negative one voting against its label
    r = kos.reliabilities_
    row = votes[0]
    for_one = sum(abs(r[j]) for j in np.flatnonzero(row >= 0) if (row[j] == 1) == (r[j] > 0))
    assert proba[0, 1] == pytest.approx(for_one / np.abs(r[row >= 0]).sum())
    assert kos.get_feature_names_out().tolist() == ["kos_0", "kos_1"]


def test_predicts_new_tasks_with_the_fitted_workers(votes):
    votes, _ = votes
    kos = KOS(random_state=0).fit(votes[:150])
    new = votes[150:]
    proba = kos.predict_proba(new)
    np.testing.assert_allclose(kos.predict_proba(new[5:9]), proba[5:9], rtol=1e-12)
    score = (2.0 * new - 1) * (new >= 0) @ kos.reliabilities_
    decided = score != 0
    np.testing.assert_array_equal(kos.predict(new)[decided], (score > 0)[decided])


def test_input_formats_and_labels_agree(votes):
    votes, _ = votes
    reference = KOS(random_state=0).fit(votes).predict_proba(votes)
    rows, cols = np.nonzero(votes >= 0)
    coo = sp.coo_array((votes[rows, cols], (rows, cols)), shape=votes.shape)
    frame = pd.DataFrame(votes, columns=[f"w{j}" for j in range(12)])
    names = np.array(["no", "yes"], dtype=object)
    strings = np.where(votes >= 0, names[np.maximum(votes, 0)], None)
    for X, params in [(coo, {}), (coo.tocsr(), {}), (frame, {}),
                      (strings, {"missing_label": None})]:
        fitted = KOS(random_state=0, **params).fit(X)
        np.testing.assert_allclose(np.asarray(fitted.predict_proba(X)), reference, rtol=1e-10)
    labels = KOS(random_state=0, missing_label=None).fit_predict(strings)
    np.testing.assert_array_equal(labels, names[np.argmax(reference, axis=1)])


def test_pickle_clone_memmap_and_random_state(votes):
    from sklearn.utils._testing import create_memmap_backed_data

    votes, _ = votes
    fitted = KOS(random_state=3).fit(votes)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict_proba(votes), fitted.predict_proba(votes))
    memmapped = create_memmap_backed_data(fitted)
    np.testing.assert_array_equal(memmapped.predict_proba(votes), fitted.predict_proba(votes))
    np.testing.assert_array_equal(clone(fitted).fit(votes).reliabilities_, fitted.reliabilities_)
    one = KOS(max_iter=1, tol=0)
    assert not np.array_equal(clone(one).set_params(random_state=1).fit(votes).reliabilities_,
                              clone(one).set_params(random_state=2).fit(votes).reliabilities_)


def test_convergence_warning_and_verbose(votes, capsys):
    votes, _ = votes
    with pytest.warns(ConvergenceWarning, match="KOS did not converge in max_iter=2"):
        kos = KOS(max_iter=2, random_state=0, verbose=2).fit(votes)
    assert not kos.converged_ and kos.n_iter_ == 2
    out = capsys.readouterr().out
    assert "Iteration 2: largest reliability change" in out and "KOS: 2 iterations" in out


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # little structure
def test_no_nan_on_extreme_data():
    rng = np.random.default_rng(5)
    votes = np.full((6, 1100), -1)
    votes[:3, :1000] = rng.integers(2, size=(3, 1000))  # 1000 votes per task, split ones
    votes[0, :1000] = 0  # and a unanimous one
    votes[3, 1000:1010] = 1  # workers with one vote each
    # tasks 4 and 5 have no votes
    kos = KOS(random_state=0).fit(votes)
    proba = kos.predict_proba(votes)
    assert np.all(np.isfinite(proba)) and np.all(np.isfinite(kos.reliabilities_))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert kos.predict(votes)[0] == 0
    # one class only, declared binary
    single = KOS(n_classes=2).fit(np.zeros((4, 3), dtype=int))
    np.testing.assert_array_equal(single.predict(np.zeros((4, 3), dtype=int)), 0)


def test_single_votes_give_majority_vote():
    votes = np.full((5, 5), -1)
    votes[np.arange(5), np.arange(5)] = [0, 1, 1, 0, 1]  # no task has two votes
    kos = KOS(random_state=0).fit(votes)
    np.testing.assert_array_equal(kos.reliabilities_, 1.0)
    np.testing.assert_array_equal(kos.predict(votes), [0, 1, 1, 0, 1])
