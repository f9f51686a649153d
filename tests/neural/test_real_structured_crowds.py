"""The fetched regression and sequence crowds go into their estimators as they come.

``movie_reviews_rodrigues`` into :class:`CrowdLayerRegressor` (sparse word counts, NaN for no
answer) and ``conll2003_ner_mturk`` into :class:`SequenceCrowdLayerClassifier` (int8 tags, -1 for
no tag and padding; a net fitted on the training split predicts the test split, padded alike), on
slices of the real files; skipped when the shared data's pinned files are absent.
"""

import numpy as np
import pytest

from skcrowd.datasets import fetch_crowd_dataset
from skcrowd.datasets._fetchers import CROWD_DATASETS

pytest.importorskip("skorch")

from skcrowd.neural import CrowdLayerRegressor, SequenceCrowdLayerClassifier  # noqa: E402


def _real(shared_data, name):
    dataset = CROWD_DATASETS[name]
    if not all(remote.local_path(shared_data).is_file() for remote in dataset.remote_files()):
        pytest.skip(f"the pinned files of {name} are not in {shared_data / 'sources'}")
    return fetch_crowd_dataset(name, data_home=shared_data, download_if_missing=False)


def test_movie_reviews_fit_the_crowd_layer_regressor(shared_data):
    ds = _real(shared_data, "movie_reviews_rodrigues")
    X, answers = ds.data[:300], ds.votes[:300]
    reg = CrowdLayerRegressor(max_epochs=3, train_split=None, module__hidden_units=8,
                              random_state=0).fit(X, answers)
    assert reg.n_workers_ == 135 and reg.n_features_in_ == 26735
    pred = reg.predict(ds.data_test[:50])
    assert pred.shape == (50,) and np.isfinite(pred).all()
    # workers with no answer in the slice keep their initial (free) bias and weigh nothing in the
    # mean bias the layer holds at 0
    unseen = np.isnan(answers).all(axis=0)
    free = reg.noise_model_.bias.detach().numpy()
    assert unseen.any() and (free[unseen] == 0).all()
    assert (reg.annotator_answer_counts_[unseen] == 0).all() and (free[~unseen] != 0).all()
    assert np.average(reg.annotator_biases_, weights=reg.annotator_answer_counts_) == (
        pytest.approx(0, abs=1e-6))


def test_conll_fits_the_sequence_crowd_layer(shared_data):
    ds = _real(shared_data, "conll2003_ner_mturk")

    def capitalized(tokens):  # one float feature per token: capitalized or not
        return np.array([[[t[:1].isupper()] for t in s] for s in tokens], dtype=np.float32)

    X, votes = capitalized(ds.data[:60]), ds.votes[:60]
    clf = SequenceCrowdLayerClassifier(max_epochs=2, train_split=None, module__hidden_units=4,
                                       classes=np.arange(len(ds.class_names)),
                                       random_state=0).fit(X, votes)
    assert clf.n_workers_ == 47 and clf.annotator_confusions_.shape == (47, 9, 9)
    pred = clf.predict(capitalized(ds.data_test[:20]))
    assert pred.shape == (20, 60) and set(np.unique(pred)) <= set(range(9))
