"""GroupedDawidSkene: groups of correlated workers (model annotators) among the humans."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skcrowd.aggregation import AggregatorSelector, DawidSkene, GroupedDawidSkene


def humans_and_models(seed, n_tasks=400, n_classes=3, n_humans=12, per_task=3,
                      human_accuracy=0.7, n_models=4, reading_accuracy=0.75, copy=0.9):
    """Humans (``per_task`` votes a task, independent) and ``n_models`` models that copy one
    shared reading of each task with probability ``copy`` (else answer on their own with the
    reading's accuracy): a votes matrix, the truth and the number of human columns."""
    rng = np.random.default_rng(seed)
    K = n_classes
    truth = rng.integers(K, size=n_tasks)

    def answer(accuracy, size):
        wrong = (truth[:, None] + rng.integers(1, K, size=(n_tasks, size))) % K
        return np.where(rng.random((n_tasks, size)) < accuracy, truth[:, None], wrong)

    humans = np.full((n_tasks, n_humans), -1)
    for i in range(n_tasks):
        workers = rng.choice(n_humans, per_task, replace=False)
        humans[i, workers] = answer(human_accuracy, n_humans)[i, workers]
    reading = answer(reading_accuracy, 1)
    models = np.where(rng.random((n_tasks, n_models)) < copy, reading,
                      answer(reading_accuracy, n_models))
    return np.hstack([humans, models]), truth, n_humans


def groups_of(n_humans, n_models=4):
    return [None] * n_humans + ["model"] * n_models


def fit_quietly(model, X, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, *args, **kwargs)


# -- without groups it is Dawid-Skene --------------------------------------------------------


GROUP_MODELS = ["copy", "reading", "tempered"]


@pytest.mark.parametrize("group_model", GROUP_MODELS)
@pytest.mark.parametrize("groups", [None, "singletons"])
@pytest.mark.parametrize("params", [{}, {"smoothing": 2.0},
                                    {"init": "random", "random_state": 3, "n_init": 2}])
def test_every_worker_its_own_group_is_dawid_skene(group_model, groups, params):
    votes, _, _ = humans_and_models(0, n_tasks=120)
    if groups == "singletons":  # a label given to one worker only makes an independent worker
        groups = [f"w{j}" for j in range(votes.shape[1])]
    ds = fit_quietly(DawidSkene(**params), votes)
    grouped = fit_quietly(GroupedDawidSkene(worker_groups=groups, group_model=group_model,
                                            **params), votes)
    np.testing.assert_array_equal(grouped.predict_proba(votes), ds.predict_proba(votes))
    np.testing.assert_array_equal(grouped.confusion_matrices_, ds.confusion_matrices_)
    np.testing.assert_array_equal(grouped.class_priors_, ds.class_priors_)
    assert grouped.lower_bounds_ == ds.lower_bounds_
    assert grouped.smoothing_ == ds.smoothing_
    assert grouped.groups_.shape == (0,) and (grouped.worker_group_ == -1).all()
    assert grouped.group_confusions_.shape == (0, 3, 3)
    assert (grouped.copy_rates_ == 0).all()


def test_known_tasks_and_task_priors_without_groups_are_dawid_skene():
    votes, truth, _ = humans_and_models(1, n_tasks=100)
    known = np.where(np.arange(100) % 10 == 0, truth, -1)
    prior = np.full((100, 3), 0.2)
    prior[np.arange(100), truth] = 0.6
    for kwargs in ({"y": known}, {"task_prior": prior}):
        ds = fit_quietly(DawidSkene(), votes, **kwargs)
        grouped = fit_quietly(GroupedDawidSkene(), votes, **kwargs)
        np.testing.assert_array_equal(grouped.predict_proba(votes), ds.predict_proba(votes))


# -- the likelihood, by hand -------------------------------------------------------------------


def test_posterior_and_likelihood_by_hand():
    """One human and a group of two members on two classes, parameters set by hand."""
    votes = np.array([[0, 1, 1], [1, 0, -1], [-1, 0, 0]])
    model = fit_quietly(GroupedDawidSkene(worker_groups=[None, "g", "g"], group_model="reading",
                                          max_iter=2), votes)
    model.class_priors_ = np.array([0.6, 0.4])
    human = np.array([[0.8, 0.2], [0.3, 0.7]])  # [k, l]
    m1 = np.array([[0.9, 0.1], [0.2, 0.8]])  # [r, l]
    m2 = np.array([[0.7, 0.3], [0.1, 0.9]])
    C = np.array([[0.75, 0.25], [0.4, 0.6]])  # [k, r]
    model.confusion_matrices_ = np.stack([human, m1, m2])
    model.group_confusions_ = C[None]
    # task 0: human 0, members 1, 1: P(group | k) = sum_r C[k, r] m1[r, 1] m2[r, 1]
    group_0 = C @ (m1[:, 1] * m2[:, 1])  # k=0: .75*.1*.3 + .25*.8*.9 = .2025
    joint_0 = model.class_priors_ * human[:, 0] * group_0
    # task 1: human 1, member 1 answers 0, member 2 silent
    joint_1 = model.class_priors_ * human[:, 1] * (C @ m1[:, 0])
    # task 2: no human, members 0, 0
    joint_2 = model.class_priors_ * (C @ (m1[:, 0] * m2[:, 0]))
    joint = np.array([joint_0, joint_1, joint_2])
    np.testing.assert_allclose(group_0, [0.2025, 0.444])
    np.testing.assert_allclose(model.predict_proba(votes), joint / joint.sum(1, keepdims=True),
                               rtol=1e-12)
    np.testing.assert_allclose(model.score_samples(votes), np.log(joint.sum(1)), rtol=1e-12)
    # a held-out member vote given the other votes of its task: log p(all) - log p(others),
    # the group's other member included (the members are not independent given the class)
    others = np.array([[0, 1, -1]])
    expected = model.score_samples(votes[:1]) - model.score_samples(others)
    from skcrowd import check_votes

    context = check_votes(others, classes=model.classes_)
    held_out = model._vote_log_likelihood(context, np.array([0]), np.array([2]), np.array([1]))
    np.testing.assert_allclose(held_out, expected, rtol=1e-12)


def test_copying_members_by_hand():
    """``P(l | k, r) = rho 1{l == r} + (1 - rho) A[k, l]``, the group's reading summed out."""
    votes = np.array([[1, 1, 0], [0, 1, 1]])
    model = fit_quietly(GroupedDawidSkene(worker_groups=[None, "g", "g"], max_iter=2), votes)
    model.class_priors_ = np.array([0.5, 0.5])
    human = np.array([[0.8, 0.2], [0.3, 0.7]])
    a1, a2 = np.array([[0.6, 0.4], [0.2, 0.8]]), np.array([[0.9, 0.1], [0.5, 0.5]])
    C = np.array([[0.7, 0.3], [0.2, 0.8]])
    model.confusion_matrices_ = np.stack([human, a1, a2])
    model.group_confusions_ = C[None]
    model.copy_rates_ = np.array([0.0, 0.5, 0.25])

    def member(a, rho, label):  # [k, r]
        return rho * (np.arange(2) == label)[None, :] + (1 - rho) * a[:, label][:, None]

    # task 0: human 1, members 1 and 0
    group_0 = (C * member(a1, 0.5, 1) * member(a2, 0.25, 0)).sum(axis=1)
    # k=0: r=0: .7 * (.5 * .4) * (.25 + .75 * .9); r=1: .3 * (.5 + .5 * .4) * (.75 * .9)
    np.testing.assert_allclose(group_0[0], 0.7 * 0.2 * 0.925 + 0.3 * 0.7 * 0.675)
    joint_0 = 0.5 * human[:, 1] * group_0
    joint_1 = 0.5 * human[:, 0] * (C * member(a1, 0.5, 1) * member(a2, 0.25, 1)).sum(axis=1)
    joint = np.array([joint_0, joint_1])
    np.testing.assert_allclose(model.predict_proba(votes), joint / joint.sum(1, keepdims=True),
                               rtol=1e-12)
    np.testing.assert_allclose(model.score_samples(votes), np.log(joint.sum(1)), rtol=1e-12)


def test_tempered_members_count_one_over_the_group_size():
    votes = np.array([[0, 1, 1, 1], [1, 0, 0, 0]] * 5)
    model = fit_quietly(GroupedDawidSkene(worker_groups=[None, "g", "g", "g"],
                                          group_model="tempered"), votes)
    log_conf = np.log(model.confusion_matrices_)  # [j, k, l]
    logits = (np.log(model.class_priors_) + log_conf[0][:, 0]
              + sum(log_conf[j][:, 1] for j in (1, 2, 3)) / 3)
    expected = np.exp(logits - np.logaddexp.reduce(logits))
    np.testing.assert_allclose(model.predict_proba(votes[:1])[0], expected, rtol=1e-12)


# -- recovery ----------------------------------------------------------------------------------


@pytest.mark.parametrize("group_model", GROUP_MODELS)
def test_a_correlated_group_does_not_outvote_the_humans(group_model):
    """Four models copying one reading (75 % right) 90 % of the time: as independent workers
    they outvote three humans (70 % right); as a group they do not, on every seed."""
    gains = []
    for seed in range(3):
        votes, truth, n_humans = humans_and_models(seed)
        ds = fit_quietly(DawidSkene(), votes).predict(votes)
        humans = fit_quietly(DawidSkene(), votes[:, :n_humans]).predict(votes[:, :n_humans])
        model = GroupedDawidSkene(worker_groups=groups_of(n_humans), group_model=group_model)
        grouped = fit_quietly(model, votes).predict(votes)
        accuracy = {name: np.mean(labels == truth) for name, labels in
                    [("ds", ds), ("humans", humans), ("grouped", grouped)]}
        assert accuracy["grouped"] > accuracy["ds"] + 0.03, (seed, accuracy)
        assert accuracy["grouped"] > accuracy["humans"], (seed, accuracy)
        gains.append(accuracy["grouped"] - accuracy["ds"])
    assert np.mean(gains) > 0.05


@pytest.mark.parametrize("group_model", ["copy", "reading"])
def test_the_group_confusion_and_how_members_follow_it_are_learned(group_model):
    """The group's confusion given the truth is the shared reading's (75 % right); the members
    copy it 90 % of the time (and answer on their own, 75 % right, else)."""
    diagonals, rates = [], []
    for seed in range(3):
        votes, truth, n_humans = humans_and_models(seed, n_tasks=600)
        model = fit_quietly(GroupedDawidSkene(worker_groups=groups_of(n_humans),
                                              group_model=group_model), votes)
        diagonals.append(np.diag(model.group_confusions_[0]).mean())
        members = np.diagonal(model.confusion_matrices_[n_humans:], axis1=1, axis2=2)
        if group_model == "reading":  # P(answer = reading): about .9 + .1 * .75 * .75
            assert (members > 0.9).all()
        else:  # own answers (about 60 per member): 75 % right
            assert members.mean() == pytest.approx(0.75, abs=0.1)
            rates.append(model.copy_rates_[n_humans:])
    assert np.mean(diagonals) == pytest.approx(0.75, abs=0.05)
    if rates:
        assert np.mean(rates) == pytest.approx(0.9, abs=0.05)
        assert (model.copy_rates_[:n_humans] == 0).all()


def test_held_out_votes_prefer_the_grouped_model():
    """Without gold, held-out votes see that the models are not independent: the selector
    picks the grouped model over Dawid-Skene."""
    votes, truth, n_humans = humans_and_models(0, n_tasks=200)
    selector = AggregatorSelector([DawidSkene(), GroupedDawidSkene(
        worker_groups=groups_of(n_humans))], random_state=0)
    assert fit_quietly(selector, votes).best_index_ == 1


@pytest.mark.parametrize("group_model", GROUP_MODELS)
def test_em_never_decreases_its_objective(group_model):
    votes, _, n_humans = humans_and_models(5, n_tasks=200)
    model = fit_quietly(GroupedDawidSkene(worker_groups=groups_of(n_humans),
                                          group_model=group_model, tol=0, max_iter=40), votes)
    assert np.diff(model.lower_bounds_).min() > -1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(clone(model).fit_predict(votes), model.predict(votes))


# -- one copy rate a group, the humans' group added by a warm start, and the BIC ----------------


def test_one_copy_rate_a_group_is_shared_and_learned():
    """``copy_rate="group"``: the members share one rate, the pooled posterior mode; the models'
    (copying 90 % of the time) is recovered on every seed."""
    for seed in range(3):
        votes, truth, n_humans = humans_and_models(seed)
        model = fit_quietly(GroupedDawidSkene(worker_groups=groups_of(n_humans),
                                              copy_rate="group"), votes)
        rates = model.copy_rates_[n_humans:]
        assert np.ptp(rates) == 0 and rates[0] == pytest.approx(0.9, abs=0.05), (seed, rates)
        assert (model.copy_rates_[:n_humans] == 0).all()
        assert np.mean(model.predict(votes) == truth) > 0.84


@pytest.mark.parametrize("copy_rate", ["worker", "group", "auto"])
def test_em_never_decreases_its_objective_with_each_copy_rate(copy_rate):
    votes, _, n_humans = humans_and_models(6, n_tasks=200)
    groups = ["human"] * n_humans + ["model"] * 4
    model = fit_quietly(GroupedDawidSkene(worker_groups=groups, copy_rate=copy_rate, tol=0,
                                          max_iter=40), votes)
    assert np.diff(model.lower_bounds_).min() > -1e-10
    if copy_rate == "group":
        assert len(np.unique(model.copy_rates_[:n_humans])) == 1


def test_auto_copy_rates_keep_different_members_apart_and_pool_alike_ones():
    """``copy_rate="auto"``: in a group of four members that copy 90 % of the time and four that
    never copy, each keeps its own rate (one rate a group, 0.3, loses 15 points of accuracy);
    the humans of a crowd, sparse and alike (none copies), get one strong prior."""
    for seed in range(3):
        votes, truth, n_humans = humans_and_models(seed, n_models=8)
        rng = np.random.default_rng(100 + seed)
        wrong = (truth[:, None] + rng.integers(1, 3, (len(truth), 4))) % 3
        votes[:, n_humans + 4:] = np.where(rng.random((len(truth), 4)) < 0.75, truth[:, None],
                                           wrong)
        fits = {copy_rate: fit_quietly(GroupedDawidSkene(
            worker_groups=groups_of(n_humans, 8), copy_rate=copy_rate), votes)
            for copy_rate in ("group", "auto")}
        rates = fits["auto"].copy_rates_[n_humans:]
        assert (rates[:4] > 0.8).all() and (rates[4:] < 0.1).all(), (seed, rates)
        accuracy = {name: np.mean(model.predict(votes) == truth) for name, model in fits.items()}
        assert accuracy["auto"] > accuracy["group"] + 0.1, (seed, accuracy)
        humans = fit_quietly(GroupedDawidSkene(worker_groups=["human"] * n_humans
                                               + ["model"] * 8, copy_rate="auto"), votes)
        assert humans.copy_prior_[0].sum() > 100, humans.copy_prior_[0]
        assert np.ptp(humans.copy_rates_[:n_humans]) < 0.05


def test_a_warm_start_adds_the_humans_group_to_a_fit_without_it():
    """Good humans (90 %, 3 votes a task) grouped from a cold start can fall into an optimum
    where their group reads wrong (seed 1); added by a warm start to the fit of the models'
    group, they keep the accuracy of the fit without it."""
    gains = []
    for seed in range(3):
        votes, truth, n_humans = humans_and_models(seed, n_humans=30, human_accuracy=0.9)
        grouped = ["human"] * n_humans + ["model"] * 4
        cold = fit_quietly(GroupedDawidSkene(worker_groups=grouped, copy_rate="group"), votes)
        first = fit_quietly(GroupedDawidSkene(worker_groups=groups_of(n_humans),
                                              copy_rate="group"), votes)
        models_only = first.group_confusions_[0].copy()
        staged = fit_quietly(first.set_params(worker_groups=grouped, warm_start=True,
                                              max_iter=1), votes)
        # one iteration from the start: the models' group kept, the humans' group added
        assert staged.groups_.tolist() == ["human", "model"]
        np.testing.assert_allclose(staged.group_confusions_[1], models_only, atol=0.02)
        staged = fit_quietly(staged.set_params(max_iter=100), votes)
        accuracy = [np.mean(model.predict(votes) == truth) for model in (cold, staged)]
        assert accuracy[1] > 0.94 and accuracy[1] >= accuracy[0] - 0.005, (seed, accuracy)
        gains.append(accuracy[1] - accuracy[0])
    assert max(gains) > 0.1


def test_a_warm_start_without_a_group_makes_its_members_independent():
    votes, _, n_humans = humans_and_models(4, n_tasks=150)
    model = fit_quietly(GroupedDawidSkene(worker_groups=["h"] * n_humans + ["model"] * 4), votes)
    assert (model.copy_rates_[:n_humans] > 0).all()
    fit_quietly(model.set_params(worker_groups=groups_of(n_humans), warm_start=True), votes)
    assert model.groups_.tolist() == ["model"]
    assert (model.copy_rates_[:n_humans] == 0).all() and (model.worker_group_[:n_humans] < 0).all()
    cold = fit_quietly(GroupedDawidSkene(worker_groups=groups_of(n_humans)), votes)
    np.testing.assert_allclose(model.predict_proba(votes), cold.predict_proba(votes), atol=0.05)
    # a "tempered" fit has no group confusions to keep: a warm "copy" fit starts them cold
    fit_quietly(model.set_params(group_model="tempered", warm_start=False), votes)
    assert model.group_confusions_.shape == (0, 3, 3)
    fit_quietly(model.set_params(group_model="copy", warm_start=True), votes)
    assert model.group_confusions_.shape == (1, 3, 3) and model.copy_rates_[-1] > 0.5


@pytest.mark.parametrize("group_model, copy_rate, n_parameters", [
    ("copy", "worker", 11), ("copy", "group", 10), ("copy", "auto", 11), ("reading", "worker", 9),
    ("tempered", "worker", 7)])
def test_information_criteria_by_hand(group_model, copy_rate, n_parameters):
    """Two classes, one human and a group of two: the class prior (1), three workers' rows
    (3 x 2), the group's rows (2, not "tempered") and the copy rates (2, or 1 a group)."""
    votes = np.array([[0, 1, 1], [1, 0, 0], [0, 0, -1], [1, 1, 1]])
    model = fit_quietly(GroupedDawidSkene(worker_groups=[None, "g", "g"],
                                          group_model=group_model, copy_rate=copy_rate), votes)
    log_likelihood = model.score_samples(votes).sum()
    assert model.bic(votes) == pytest.approx(-2 * log_likelihood + n_parameters * np.log(4))
    assert model.aic(votes) == pytest.approx(-2 * log_likelihood + 2 * n_parameters)


def test_the_bic_chooses_the_grouped_models_and_independent_humans():
    """Independent humans, correlated models: of Dawid-Skene, the models grouped, and the
    humans grouped too, the BIC picks the models grouped on every seed."""
    for seed in range(3):
        votes, _, n_humans = humans_and_models(seed)
        candidates = [GroupedDawidSkene(),
                      GroupedDawidSkene(worker_groups=groups_of(n_humans), copy_rate="group")]
        candidates.append(clone(candidates[1]).set_params(
            worker_groups=["human"] * n_humans + ["model"] * 4, copy_rate="group"))
        bics = [fit_quietly(model, votes).bic(votes) for model in candidates]
        assert np.argmin(bics) == 1, (seed, bics)


# -- input forms and errors ---------------------------------------------------------------------


def test_a_mapping_by_column_name_is_the_aligned_array():
    votes, _, n_humans = humans_and_models(2, n_tasks=100)
    names = [f"h{j}" for j in range(n_humans)] + ["llm-a", "llm-b", "llm-c", "llm-d"]
    frame = pd.DataFrame(votes, columns=names)
    by_name = fit_quietly(GroupedDawidSkene(
        worker_groups={name: "llm" for name in names if name.startswith("llm")}), frame)
    aligned = fit_quietly(GroupedDawidSkene(worker_groups=groups_of(n_humans)), votes)
    np.testing.assert_array_equal(by_name.predict_proba(frame).to_numpy(),
                                  aligned.predict_proba(votes))
    assert by_name.groups_.tolist() == ["llm"]
    np.testing.assert_array_equal(by_name.worker_group_, [-1] * n_humans + [0] * 4)
    # without names, a mapping's keys are column indices
    by_index = fit_quietly(GroupedDawidSkene(
        worker_groups={j: "llm" for j in range(n_humans, n_humans + 4)}), votes)
    np.testing.assert_array_equal(by_index.predict_proba(votes), aligned.predict_proba(votes))


def test_two_groups_and_nan_labels():
    votes = np.array([[0, 1, 1, 0, 0], [1, 0, 0, 1, 1], [0, 0, 1, 0, 1]] * 4)
    model = fit_quietly(GroupedDawidSkene(worker_groups=[np.nan, "a", "a", 7, 7]), votes)
    assert model.groups_.tolist() == ["a", 7]
    np.testing.assert_array_equal(model.worker_group_, [-1, 0, 0, 1, 1])
    assert model.group_confusions_.shape == (2, 2, 2)
    np.testing.assert_allclose(model.group_confusions_.sum(axis=2), 1.0)


def test_errors_name_the_problem():
    votes = np.array([[0, 1, 1], [1, 0, 0]])
    frame = pd.DataFrame(votes, columns=["ann", "gpt-a", "gpt-b"])
    with pytest.raises(ValueError, match=r"names 2 worker\(s\) that X does not have: 'gpt-c', "
                                         r"'bob' \(X's workers: 'ann', 'gpt-a', 'gpt-b'\)"):
        GroupedDawidSkene(worker_groups={"gpt-a": 1, "gpt-c": 1, "bob": 2}).fit(frame)
    with pytest.raises(ValueError, match="the column indices 0 to 2"):
        GroupedDawidSkene(worker_groups={5: "g"}).fit(votes)
    with pytest.raises(ValueError, match="X has 3 workers, worker_groups has shape \\(2,\\)"):
        GroupedDawidSkene(worker_groups=["g", "g"]).fit(votes)
    with pytest.raises(ValueError, match="group_model"):
        GroupedDawidSkene(group_model="joint").fit(votes)
    with pytest.raises(ValueError, match="copy_rate"):
        GroupedDawidSkene(copy_rate="task").fit(votes)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        GroupedDawidSkene().bic(votes)


def test_long_format_votes_are_grouped_by_worker_id(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "votes.parquet"
    votes = pd.DataFrame({"task": [0, 0, 0, 1, 1, 2], "worker": ["a", "b", "c", "a", "c", "b"],
                          "label": [0, 1, 1, 1, 1, 0]})
    votes.to_parquet(path)
    model = fit_quietly(GroupedDawidSkene(worker_groups={"b": "g", "c": "g"}), str(path))
    assert model.worker_ids_.tolist() == ["a", "b", "c"]
    assert model.worker_group_.tolist() == [-1, 0, 0]
    matrix = votes.pivot(index="task", columns="worker", values="label").fillna(-1).astype(int)
    in_memory = fit_quietly(GroupedDawidSkene(worker_groups=[None, "g", "g"]), matrix.to_numpy())
    np.testing.assert_allclose(model.predict_proba(str(path)).to_numpy(),
                               in_memory.predict_proba(matrix.to_numpy()), rtol=1e-12)


def test_grouped_refuses_soft_votes_and_has_no_partial_fit():
    from skcrowd import soft_votes

    votes = np.array([[0, 1], [1, 1], [0, -1]])
    soft = soft_votes(votes, [np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])])
    with pytest.raises(TypeError, match="GroupedDawidSkene does not accept soft votes"):
        GroupedDawidSkene().fit(soft)
    assert not hasattr(GroupedDawidSkene(), "partial_fit")
    with pytest.raises(AttributeError, match="DawidSkene.partial_fit"):
        GroupedDawidSkene().partial_fit(votes)
