"""WAUMPruner: the rank rule, the sampler API, caching, the estimator contract."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from pruning_stubs import FixedConfusion, NoConfusion, ProbaFeatures, noisy_blobs
from skcrowd import check_votes
from skcrowd.pruning import WAUMPruner
from skcrowd.utils.estimator_checks import parametrize_with_checks


@pytest.fixture(autouse=True)
def reset_counters():
    ProbaFeatures.calls = 0
    ProbaFeatures.seen_rows = []


def stub_pruner(**kwargs):
    params = dict(margin_estimator=ProbaFeatures(), aggregator=FixedConfusion(), n_epochs=2)
    params.update(kwargs)
    return WAUMPruner(**params)


def tied_tasks(n):
    """n identical tasks: every score ties."""
    return np.tile([0.7, 0.3], (n, 1)), np.tile([0, 1], (n, 1))


@pytest.mark.parametrize("alpha, n, n_pruned", [(0.0, 10, 0), (0.1, 10, 1), (0.29, 100, 29),
                                                (0.7, 10, 7), (0.05, 30, 1), (0.999, 10, 9)])
def test_prunes_exactly_floor_alpha_n_ties_by_task_index(alpha, n, n_pruned):
    X, votes = tied_tasks(n)
    p = stub_pruner(alpha=alpha).fit(X, votes)
    np.testing.assert_array_equal(np.flatnonzero(~p.support_), np.arange(n_pruned))
    assert p.threshold_ == pytest.approx(p.waum_[0])


def test_prunes_the_lowest_scores_and_reports_the_threshold():
    # every task gets votes 0 and 1; margins 2 p0 - 1 and 0, equal trust
    p0 = np.array([0.9, 0.55, 0.8, 0.6, 0.95, 0.6, 0.7, 0.85])
    X = np.column_stack([p0, 1 - p0])
    votes = np.tile([0, 1], (8, 1))
    p = stub_pruner(alpha=0.3).fit(X, votes)  # floor(2.4) = 2
    np.testing.assert_allclose(p.waum_, (2 * p0 - 1) / 2)
    # 0.55 (task 1) then the first of the tied 0.6 (task 3, before task 5)
    np.testing.assert_array_equal(np.flatnonzero(~p.support_), [1, 3])
    assert p.threshold_ == pytest.approx(0.1)  # task 5, the lowest kept
    assert (p.waum_[~p.support_] <= p.threshold_).all()
    assert (p.waum_[p.support_] >= p.threshold_).all()


@pytest.mark.filterwarnings("ignore:pruning removes every vote:UserWarning")
def test_tasks_without_votes_rank_first_and_scores_stay_finite():
    X = np.tile([0.8, 0.2], (6, 1))
    votes = np.array([[0, 0], [-1, -1], [1, 0], [0, -1], [-1, -1], [0, 0]])
    for method in ("waum", "aumc", "worker-wise"):
        p = stub_pruner(alpha=0.5, method=method).fit(X, votes)
        scores = p.aumc_ if method == "aumc" else p.waum_
        assert np.isfinite(scores).all()
        assert scores[[1, 4]].max() <= scores[[0, 2, 3, 5]].min()
        # tasks 1 and 4 (no votes) go first, then task 2 (its vote 1 is beaten); its
        # majority vote is a tie broken towards class 0, so AUMC ties all voted tasks
        expected = [0, 1, 4] if method == "aumc" else [1, 2, 4]
        np.testing.assert_array_equal(np.flatnonzero(~p.support_), expected)


@pytest.mark.filterwarnings("ignore:pruning removes every vote:UserWarning")
def test_fit_resample_keeps_rows_in_their_container():
    pd = pytest.importorskip("pandas")
    p0 = np.array([0.9, 0.55, 0.8, 0.6])
    X = np.column_stack([p0, 1 - p0])
    votes = np.array([[0, 1], [0, -1], [1, 0], [0, 0]])
    kept = [0, 2, 3]
    p = stub_pruner(alpha=0.25)
    Xk, vk = p.fit_resample(X, votes)
    np.testing.assert_array_equal(Xk, X[kept])
    np.testing.assert_array_equal(vk, votes[kept])
    frame = pd.DataFrame(X, columns=["a", "b"], index=[10, 11, 12, 13])
    Xk, vk = p.fit_resample(frame, check_votes(votes).to_sparse())  # explicit zeros are votes
    assert list(Xk.index) == [10, 12, 13] and list(Xk.columns) == ["a", "b"]
    assert sp.issparse(vk) and vk.shape == (3, 2)
    Xk, vk = p.fit_resample(X.tolist(), votes.tolist())
    assert Xk == X[kept].tolist() and vk == votes[kept].tolist()
    # one label per task (the classical AUM setting)
    Xk, yk = p.fit_resample(X, np.array([0, 1, 0, 0]))
    np.testing.assert_array_equal(yk, [0, 0, 0])


def test_memory_caches_the_margin_training_across_alphas(tmp_path):
    X, votes, _ = noisy_blobs(n=30, n_flipped=3)
    X = np.abs(X) / np.abs(X).sum(axis=1, keepdims=True)  # rows usable as probabilities
    p = stub_pruner(alpha=0.1, memory=str(tmp_path), n_epochs=4)
    first = p.fit(X, votes).waum_.copy()
    assert ProbaFeatures.calls == 4
    p.set_params(alpha=0.2).fit(X, votes)
    assert ProbaFeatures.calls == 4  # cache hit: no retraining
    assert (~p.support_).sum() == 6
    np.testing.assert_array_equal(p.waum_, first)
    p.set_params(n_epochs=3).fit(X, votes)
    assert ProbaFeatures.calls == 7  # another T trains again
    p.set_params(memory=None, n_epochs=4).fit(X, votes)
    assert ProbaFeatures.calls == 11  # no memory, no cache


def test_refit_with_another_method_drops_the_other_scores():
    X, votes = tied_tasks(6)
    p = stub_pruner(alpha=0.2).fit(X, votes)
    assert hasattr(p, "waum_") and hasattr(p, "aggregator_")
    p.set_params(method="aumc").fit(X, votes)
    assert hasattr(p, "aumc_") and not hasattr(p, "waum_") and not hasattr(p, "aum_")
    p.set_params(method="worker-wise").fit(X, votes)
    assert hasattr(p, "waum_") and not hasattr(p, "aumc_")


def test_random_state_makes_fits_reproducible():
    X, votes, _ = noisy_blobs(n=40, n_flipped=4)
    p = WAUMPruner(0.1, aggregator=FixedConfusion(), n_epochs=5, random_state=3)
    a = p.fit(X, votes).waum_
    b = clone(p).fit(X, votes).waum_
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("aggregator", [None, FixedConfusion()], ids=["dawid-skene", "fixed"])
@pytest.mark.parametrize("method", ["waum", "aumc", "worker-wise"])
def test_recovers_tasks_whose_majority_is_wrong(aggregator, method):
    X, votes, _ = noisy_blobs(n=60, n_flipped=6)
    p = WAUMPruner(
        0.1, aggregator=aggregator, method=method, n_epochs=20, random_state=0
    ).fit(X, votes)
    assert set(np.flatnonzero(~p.support_)) == set(range(6))


def test_dawid_skene_reliabilities_reach_the_trust_scores():
    # worker 2 answers at random: Dawid-Skene gives it a low diagonal, hence low trust
    X, votes, _ = noisy_blobs(n=80, n_flipped=0)
    votes[:, 2] = np.random.RandomState(0).randint(0, 2, size=80)
    p = WAUMPruner(0.05, n_epochs=10, random_state=0).fit(X, votes)
    diag = np.diagonal(p.aggregator_.confusion_matrices_, axis1=1, axis2=2)
    assert diag[2].max() < diag[:2].min()
    spammer = p.vote_workers_ == 2
    assert p.trust_scores_[spammer].max() < p.trust_scores_[~spammer].min()


def test_trust_scores_downweight_an_unreliable_worker():
    # worker 2 (diagonal 0.05) contradicts workers 0 and 1 on tasks 0-3
    X, votes, truth = noisy_blobs(n=40, n_flipped=0)
    votes[:4, 2] = 1 - truth[:4]
    diag = np.array([[0.95, 0.95], [0.95, 0.95], [0.05, 0.05]])
    trusting = WAUMPruner(
        0.1, aggregator=FixedConfusion(), n_epochs=10, margin="pleiss", random_state=0
    )
    weighted = clone(trusting).set_params(aggregator=FixedConfusion(diagonals=diag))
    trusting.fit(X, votes)
    weighted.fit(X, votes)
    w2 = weighted.vote_workers_ == 2
    assert weighted.trust_scores_[w2].max() < weighted.trust_scores_[~w2].min()
    # with equal trust the contradicted tasks are the lowest; weighting lifts them
    assert set(np.flatnonzero(~trusting.support_)) == {0, 1, 2, 3}
    assert weighted.waum_[:4].min() > trusting.waum_[:4].max()


def test_warns_when_pruning_removes_a_class():
    X = np.array([[0.9, 0.1]] * 6)
    votes = np.array([[0, 0]] * 5 + [[1, 0]])  # class 1 has a single, beaten vote
    with pytest.warns(UserWarning, match=r"every vote for class\(es\) \[1\]"):
        stub_pruner(alpha=0.2).fit(X, votes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stub_pruner(alpha=0.0).fit(X, votes)


def test_bad_input_names_the_argument():
    X = np.tile([0.5, 0.5], (3, 1))
    with pytest.raises(ValueError, match="X has 3 rows .* y \\(votes\\) has 2"):
        stub_pruner().fit(X, np.array([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="one class only"):
        stub_pruner().fit(X, np.array([[1, 1], [1, -1], [-1, 1]]))
    with pytest.raises(ValueError, match="top_k=2"):
        stub_pruner(top_k=2).fit(X, np.array([[0, 1], [1, 0], [0, 0]]))
    with pytest.raises(ValueError, match="row \\(task\\) 1, column \\(worker\\) 0"):
        stub_pruner().fit(X, np.array([[0, 1], [0.5, 0], [0, 0]]))
    with pytest.raises(TypeError, match="no confusion_matrices_"):
        stub_pruner(aggregator=NoConfusion()).fit(X, np.array([[0, 1], [1, 0], [0, 0]]))
    with pytest.raises(ValueError, match="alpha"):
        stub_pruner(alpha=1.0).fit(X, np.array([[0, 1], [1, 0], [0, 0]]))
    with pytest.raises(ValueError, match="requires y"):
        stub_pruner().fit(X, None)


def test_wrong_confusion_shape_is_reported():
    X = np.tile([0.5, 0.5], (3, 1))
    three_workers = FixedConfusion(diagonals=np.full((3, 2), 0.9))
    with pytest.raises(ValueError, match=r"shape \(3, 2, 2\); expected \(2, 2, 2\)"):
        stub_pruner(aggregator=three_workers).fit(X, np.array([[0, 1], [1, 0], [0, 0]]))


def test_imblearn_pipeline_accepts_the_pruner_as_sampler():
    pipeline = pytest.importorskip("imblearn.pipeline")
    X, votes, truth = noisy_blobs(n=60, n_flipped=6)
    y = votes[:, 1]  # one (noisy) label per task
    pipe = pipeline.Pipeline(
        [
            ("prune", WAUMPruner(0.1, method="aumc", n_epochs=20, random_state=0)),
            ("clf", LogisticRegression()),
        ]
    )
    pipe.fit(X, y)
    assert (~pipe.named_steps["prune"].support_).sum() == 6
    assert pipe.predict(X).shape == (60,)  # nothing pruned at predict time
    assert (pipe.predict(X) == truth).mean() == 1.0
    assert not hasattr(WAUMPruner(), "transform")


@parametrize_with_checks(
    [
        WAUMPruner(
            0.1,
            method="aumc",
            n_epochs=2,
            margin_estimator=MLPClassifier(hidden_layer_sizes=(4,)),
            random_state=0,
        ),
        WAUMPruner(
            0.1,
            aggregator=FixedConfusion(),
            n_epochs=2,
            margin_estimator=MLPClassifier(hidden_layer_sizes=(4,)),
            random_state=0,
        ),
    ]
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_pruning_with_a_sklearn_margin_model_never_imports_torch():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "import skcrowd\n"
        "X = np.random.RandomState(0).normal(size=(30, 2))\n"
        "y = (X[:, 0] > 0).astype(int)\n"
        "skcrowd.WAUMPruner(0.1, method='aumc', n_epochs=2).fit(X, y)\n"
        "skcrowd.PrunedClassifier\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    repo = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=repo)


LABELME = Path(__file__).resolve().parents[2] / "../shared/data/labelme"


def test_labelme_lowest_waum_tasks_often_have_a_wrong_majority():
    """Real crowd (1 to 3 votes per task): gold labels are not used by the WAUM, yet the
    majority vote is wrong far more often on the lowest-WAUM tasks than on the others."""
    if not LABELME.is_dir():
        pytest.skip(f"LabelMe data not found at {LABELME}")
    from skcrowd.datasets import load_crowd_dataset

    data = load_crowd_dataset(LABELME)
    p = WAUMPruner(0.1, n_epochs=20, random_state=0).fit(data.data, data.votes)
    wrong = check_votes(data.votes).counts().argmax(axis=1) != data.target
    pruned = ~p.support_
    assert pruned.sum() == 100
    assert wrong[pruned].mean() > 2 * wrong[~pruned].mean()
