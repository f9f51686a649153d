"""Pairwise comparisons (issue 38, section 1): BradleyTerry, NoisyBradleyTerry, CrowdBT."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.special import expit
from scipy.stats import spearmanr
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, KFold

from skcrowd import BradleyTerry, CrowdBT, NoisyBradleyTerry, select_next_pairs
from skcrowd.utils.estimator_checks import (
    check_comparison_order_invariance,
    check_side_swap,
    parametrize_with_checks,
)

MODELS = [BradleyTerry(), NoisyBradleyTerry(), CrowdBT()]


def simulate(seed, n_items=60, n_workers=30, n_comparisons=2000, spam=0.0, adversary=0.0):
    """Comparisons by Bradley-Terry workers, a share of random ones and of reversed ones."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.0, 1.0, n_items)
    kind = np.zeros(n_workers, int)
    n_spam, n_adv = round(spam * n_workers), round(adversary * n_workers)
    kind[:n_spam], kind[n_spam:n_spam + n_adv] = 1, 2
    worker = rng.integers(0, n_workers, n_comparisons)
    left = rng.integers(0, n_items, n_comparisons)
    right = (left + rng.integers(1, n_items, n_comparisons)) % n_items
    wins = rng.random(n_comparisons) < expit(truth[left] - truth[right])
    wins = np.select([kind[worker] == 1, kind[worker] == 2],
                     [rng.random(n_comparisons) < 0.5, ~wins], wins)
    X = pd.DataFrame({"worker": worker, "left": left, "right": right,
                      "label": np.where(wins, left, right)})
    return X, truth, kind


def spearman(model, truth):
    return spearmanr(model.scores_.reindex(range(len(truth))).to_numpy(), truth)[0]


def duel(wins, losses, ties=0):
    """Comparisons of a with b: ``wins`` of a, ``losses`` of a, ``ties``."""
    labels = ["a"] * wins + ["b"] * losses + ["tie"] * ties
    return pd.DataFrame({"left": "a", "right": "b", "label": labels})


# ---------------------------------------------------------------------------
# hand-computed cases
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("wins, losses", [(3, 1), (7, 2), (1, 5)])
def test_two_items_maximum_likelihood_is_the_log_odds(wins, losses):
    model = BradleyTerry(prior_strength=1e-8).fit(duel(wins, losses))
    diff = model.scores_["a"] - model.scores_["b"]
    assert diff == pytest.approx(np.log(wins / losses), abs=1e-4)


def test_two_items_map_solves_its_stationary_equation():
    lam, wins, losses = 1.0, 6, 2
    model = BradleyTerry(prior_strength=lam).fit(duel(wins, losses))
    # s_a = -s_b = delta / 2: wins sigmoid(-delta) - losses sigmoid(delta) = lam delta / 2
    delta = brentq(lambda d: wins * expit(-d) - losses * expit(d) - lam * d / 2, 0, 10)
    assert model.scores_["a"] == pytest.approx(delta / 2, abs=1e-6)
    assert model.scores_["b"] == pytest.approx(-delta / 2, abs=1e-6)


def test_davidson_ties_two_items_closed_form():
    # the MLE matches the multinomial frequencies: delta = log(w / l), nu = t / sqrt(w l)
    wins, losses, ties = 6, 2, 4
    model = BradleyTerry(prior_strength=1e-8, tie_label="tie").fit(duel(wins, losses, ties))
    assert model.scores_["a"] - model.scores_["b"] == pytest.approx(np.log(3), abs=1e-4)
    assert model.tie_strength_ == pytest.approx(ties / np.sqrt(wins * losses), rel=1e-4)
    rows = pd.DataFrame({"left": ["a", "b"], "right": ["b", "a"]})
    assert list(model.predict(rows)) == ["a", "a"]
    # many ties: a tie is the likeliest answer
    tied = BradleyTerry(tie_label="tie").fit(duel(2, 2, 30))
    assert list(tied.predict(rows)) == ["tie", "tie"]


def test_undefeated_and_disconnected_items_keep_finite_scores():
    X = pd.DataFrame({"left": ["a", "a", "a", "c", "x"], "right": ["b", "b", "c", "b", "y"],
                      "label": ["a", "a", "a", "c", "x"]})
    for model in MODELS:
        scores = clone(model).fit(X).scores_
        assert np.all(np.isfinite(scores)), type(model).__name__
        assert scores["a"] > scores["c"] > scores["b"]
        assert scores["x"] > 0 > scores["y"]  # their own group, centred by the prior


def test_repeated_rows_are_repeated_evidence():
    X, _, _ = simulate(0, n_comparisons=300)
    twice = BradleyTerry(prior_strength=2.0).fit(pd.concat([X, X]))
    once = BradleyTerry(prior_strength=1.0).fit(X)
    np.testing.assert_allclose(twice.scores_, once.scores_, atol=1e-6)


def test_noisy_bt_does_not_overflow_on_lopsided_comparisons():
    X = duel(2000, 0)
    with np.errstate(all="raise"):
        model = NoisyBradleyTerry(prior_strength=1e-6).fit(X)
        assert np.isfinite(model.score(X))
    assert np.all(np.isfinite(model.scores_)) and model.scores_["a"] > model.scores_["b"]


# ---------------------------------------------------------------------------
# recovery of simulated truth
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_recovers_simulated_scores(model):
    rhos = [spearman(clone(model).fit(simulate(seed)[0]), simulate(seed)[1])
            for seed in range(3)]
    assert min(rhos) > 0.9, rhos


@pytest.mark.parametrize("spam, adversary", [(0.3, 0.0), (0.2, 0.2)])
def test_crowd_bt_beats_bt_with_spammers_and_adversaries(spam, adversary):
    gains = []
    for seed in range(3):
        X, truth, kind = simulate(seed, spam=spam, adversary=adversary)
        crowd_bt = CrowdBT().fit(X)
        gains.append(spearman(crowd_bt, truth) - spearman(BradleyTerry().fit(X), truth))
        eta = crowd_bt.reliabilities_.reindex(range(len(kind))).to_numpy()
        assert np.mean(eta[kind == 0]) > 0.8
        if adversary:
            assert np.all(eta[kind == 2] < 0.5)
        assert np.all(np.abs(eta[kind == 1] - 0.5) < 0.3)
    assert min(gains) > 0 and np.mean(gains) > 0.02, gains


def test_noisy_bt_finds_a_worker_who_always_picks_left():
    X, truth, _ = simulate(0)
    X.loc[X.worker == 0, "label"] = X.loc[X.worker == 0, "left"]
    model = NoisyBradleyTerry().fit(X)
    assert model.biases_[0] > 0.9 and model.skills_[0] < 0.2
    assert model.skills_.drop(0).min() > 0.5


# ---------------------------------------------------------------------------
# predictions, score, intervals, next pairs
# ---------------------------------------------------------------------------


def test_predict_proba_predict_and_unseen_items():
    X, _, _ = simulate(0, n_comparisons=400)
    model = BradleyTerry().fit(X)
    s = model.scores_
    rows = pd.DataFrame({"left": [0, 1, "new"], "right": [1, 0, "newer"]})
    proba = model.predict_proba(rows)
    assert proba[0] == pytest.approx(expit(s[0] - s[1]))
    assert proba[0] + proba[1] == pytest.approx(1.0)
    assert proba[2] == 0.5  # both unseen: the prior mean
    assert model.predict(rows)[0] == (0 if s[0] >= s[1] else 1)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_score_is_the_mean_log_likelihood_and_works_in_grid_search(model):
    X, _, _ = simulate(1, n_comparisons=600, spam=0.2)
    fitted = clone(model).fit(X)
    score = fitted.score(X)
    assert -np.log(2) < score < 0  # better than a coin on its own comparisons
    held_out = fitted.score(X.assign(worker="someone new"))
    assert np.isfinite(held_out)
    search = GridSearchCV(clone(model), {"prior_strength": [0.1, 1.0]},
                          cv=KFold(3, shuffle=True, random_state=0)).fit(X)
    assert search.best_params_["prior_strength"] in (0.1, 1.0)


def test_bt_score_by_hand():
    model = BradleyTerry().fit(duel(3, 1))
    rows = duel(1, 1)
    p = expit(model.scores_["a"] - model.scores_["b"])
    assert model.score(rows) == pytest.approx((np.log(p) + np.log(1 - p)) / 2)


def test_laplace_intervals_by_hand_and_against_the_bootstrap():
    lam, wins, losses = 1.0, 6, 2
    model = BradleyTerry(prior_strength=lam).fit(duel(wins, losses))
    p = expit(model.scores_["a"] - model.scores_["b"])
    # precision [[lam + I, -I], [-I, lam + I]], I = n p (1 - p): var(s_a - s_b) = 2 / (lam + 2 I),
    # and s_a = (s_a - s_b) / 2 about the mean
    info = (wins + losses) * p * (1 - p)
    var = 0.25 * 2 / (lam + 2 * info)
    intervals = model.score_intervals(alpha=0.05)
    assert list(intervals.index) == ["a", "b"]
    np.testing.assert_allclose(intervals.upper - intervals.score, 1.959964 * np.sqrt(var),
                               rtol=1e-5)
    X, _, _ = simulate(2, n_items=20, n_comparisons=800)
    bt = BradleyTerry().fit(X)
    laplace = bt.score_intervals()
    boot = bt.score_intervals(method="bootstrap", X=X, n_bootstrap=60, random_state=0)
    ratio = ((boot.upper - boot.lower) / (laplace.upper - laplace.lower)).median()
    assert 0.7 < ratio < 1.4, ratio
    again = bt.score_intervals(method="bootstrap", X=X, n_bootstrap=60, random_state=0)
    pd.testing.assert_frame_equal(boot, again)
    assert np.all((laplace.lower < laplace.score) & (laplace.score < laplace.upper))
    with pytest.raises(ValueError, match="pass X"):
        bt.score_intervals(method="bootstrap")
    with pytest.raises(ValueError, match="alpha"):
        bt.score_intervals(alpha=1.5)


def test_next_pairs_prefers_close_uncertain_pairs():
    # a-b compared 40 times, b-c 40 times, c-d once: the pairs with d are the least known,
    # the pairs compared 40 times the best known
    X = pd.concat([duel(20, 20), duel(20, 20).replace({"a": "b", "b": "c"}),
                   pd.DataFrame({"left": ["c"], "right": ["d"], "label": ["d"]})])
    pairs = select_next_pairs(X, 3)
    assert list(pairs.columns) == ["left", "right", "gain"]
    assert len(pairs) == 3 and np.all(np.diff(pairs.gain) <= 0)
    assert all("d" in pair for pair in zip(pairs.left, pairs.right))  # d: one comparison
    gains = BradleyTerry().fit(X).next_pairs(6).set_index(["left", "right"]).gain
    assert max(gains["a", "b"], gains["b", "c"]) < gains["a", "c"] < gains["c", "d"]
    with pytest.raises(TypeError, match="pairwise model"):
        select_next_pairs(X, model=GridSearchCV(BradleyTerry(), {}))


# ---------------------------------------------------------------------------
# input
# ---------------------------------------------------------------------------


def test_without_worker_column_is_one_anonymous_worker():
    X, _, _ = simulate(0, n_comparisons=300)
    anonymous = CrowdBT().fit(X.drop(columns="worker"))
    assert list(anonymous.reliabilities_.index) == ["anonymous"]
    bt = BradleyTerry().fit(X.drop(columns="worker"))
    np.testing.assert_allclose(bt.scores_, BradleyTerry().fit(X).scores_, atol=1e-8)


def test_ids_of_any_hashable_type():
    X = pd.DataFrame({"worker": [("w", 1), ("w", 2), ("w", 1)],
                      "left": [1, "b", 1], "right": ["b", (3, 4), (3, 4)],
                      "label": [1, "b", (3, 4)]})
    for model in MODELS:
        scores = clone(model).fit(X).scores_
        assert set(scores.index) == {1, "b", (3, 4)}


@pytest.mark.parametrize("change, message", [
    (lambda X: X.assign(right=X.left), r"row 0 \(index 0\) compares item 30 with itself"),
    (lambda X: X.assign(label=np.where(X.index == 3, "zzz", X.label.astype(object))),
     r"row 3 \(index 3\): label 'zzz' is neither of the items compared"),
    (lambda X: X.drop(columns="label"), r"lack the column\(s\) \['label'\]"),
    (lambda X: X.assign(left=np.where(X.index == 2, None, X.left.astype(object))),
     r"row 2 \(index 2\): left is missing"),
    (lambda X: X.iloc[:0], "hold no row"),
])
def test_bad_comparisons_are_refused_naming_the_row(change, message):
    X, _, _ = simulate(0, n_comparisons=20)
    for model in MODELS:
        with pytest.raises(ValueError, match=message):
            clone(model).fit(change(X))


def test_ties_only_where_a_tie_label_is_given():
    X = duel(3, 2, 1)
    with pytest.raises(ValueError, match="label 'tie' is neither"):
        BradleyTerry().fit(X)
    with pytest.raises(ValueError, match="tie_label='tie'"):
        BradleyTerry(tie_label="tie").fit(X.replace({"tie": "draw"}))
    with pytest.raises(TypeError, match="pandas DataFrame"):
        BradleyTerry().fit(X.to_numpy())
    with pytest.raises(ValueError, match="reliability_prior"):
        CrowdBT(reliability_prior=(1.0, -1.0)).fit(duel(3, 2))


# ---------------------------------------------------------------------------
# estimator contract
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("model", MODELS, ids=lambda m: type(m).__name__)
def test_pickle_clone_idempotent_fit_and_not_fitted(model):
    X, _, _ = simulate(0, n_comparisons=300)
    with pytest.raises(NotFittedError):
        clone(model).predict_proba(X)
    fitted = clone(model).fit(X)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict_proba(X), fitted.predict_proba(X))
    refit = fitted.fit(X.iloc[:100]).fit(X)
    np.testing.assert_array_equal(refit.scores_, clone(model).fit(X).scores_)
    assert clone(model).get_params() == model.get_params()


def test_convergence_warning_at_max_iter():
    X, _, _ = simulate(0, n_comparisons=300)
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        CrowdBT(max_iter=2).fit(X)


class FirstRowCountsTwice(BradleyTerry):
    """Fits the first comparison twice: the scores depend on the order of the rows."""

    def fit(self, X, y=None):
        return super().fit(pd.concat([X.iloc[:1], X]))


class LeftIsBetter(BradleyTerry):
    """predict_proba leans to the left item."""

    def predict_proba(self, X):
        return 0.9 * super().predict_proba(X) + 0.1


@pytest.mark.parametrize("check, broken", [
    (check_comparison_order_invariance, FirstRowCountsTwice()),
    (check_side_swap, LeftIsBetter()),
])
def test_pairwise_domain_check_catches_its_breach(check, broken):
    check("BradleyTerry", BradleyTerry())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AssertionError, match=type(broken).__name__):
            check(type(broken).__name__, broken)


@parametrize_with_checks(MODELS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------------
# command line: python -m skcrowd pairwise
# ---------------------------------------------------------------------------


def test_cli_pairwise_writes_scores_intervals_and_next_pairs(tmp_path, capsys):
    from skcrowd._cli import main

    X, _, _ = simulate(0, n_items=10, n_comparisons=300, adversary=0.2)
    X = X.astype(str).assign(left=lambda f: "item" + f.left, right=lambda f: "item" + f.right,
                             label=lambda f: "item" + f.label)
    X.to_csv(tmp_path / "comparisons.csv", index=False)
    assert main([
        "pairwise", str(tmp_path / "comparisons.csv"), "--method", "crowdbt",
        "-o", str(tmp_path / "scores.csv"), "--next-pairs", str(tmp_path / "next.csv"),
        "--n-next", "3", "--param", "prior_strength=0.5"]) == 0
    scores = pd.read_csv(tmp_path / "scores.csv", index_col="item")
    expected = CrowdBT(prior_strength=0.5).fit(X).score_intervals()
    assert list(scores.columns) == ["score", "lower", "upper"]
    assert list(scores.index) == list(expected.index)
    np.testing.assert_allclose(scores.score, expected.score, rtol=1e-5, atol=1e-6)
    assert list(pd.read_csv(tmp_path / "next.csv").columns) == ["left", "right", "gain"]
    assert main(["pairwise", str(tmp_path / "comparisons.csv")]) == 0  # to stdout
    assert capsys.readouterr().out.startswith("item,score,lower,upper\n")


def test_cli_pairwise_bad_row_is_a_clean_error(tmp_path, capsys):
    from skcrowd._cli import main

    (tmp_path / "bad.csv").write_text("left,right,label\na,b,a\nc,c,c\n")
    assert main(["pairwise", str(tmp_path / "bad.csv")]) == 1
    assert "row 1 (index 1) compares item 'c' with itself" in capsys.readouterr().err
