"""Accuracy on gold labels of real crowdsourced datasets (skipped when the data are absent).

Floors are the accuracies measured with the default parameters, rounded down by about 0.005
(``MajorityVote(random_state=0)``, whose ties are random, is the reference that Dawid-Skene must
not lose to).
"""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from skcrowd.aggregation import GLAD, DawidSkene, MajorityVote, WeightedDawidSkene

DATA = Path(__file__).resolve().parents[2] / "../shared/data"

# dataset: measured accuracy of MV, DS, WDS, GLAD (data-chosen priors, the defaults)
MEASURED = {
    "labelme": (0.763, 0.796, 0.770, 0.769),
    "sentiment_polarity_rodrigues": (0.885, 0.9146, 0.8956, 0.9158),
    "snow2008_rte": (0.890, 0.925, 0.9025, 0.9275),
    "snow2008_temp": (0.9372, 0.9416, 0.9481, 0.9394),
    "zheng_d_Duck_Identification": (0.7593, 0.8981, 0.7593, 0.7222),
    "zheng_d_jn_product": (0.8966, 0.9382, 0.8968, 0.9275),
    "zheng_d_sentiment": (0.935, 0.960, 0.950, 0.948),
    "zheng_s4_Dog_data": (0.8228, 0.8414, 0.8327, 0.8327),
    "zheng_s4_Face_Sentiment_Identification": (0.637, 0.6524, 0.6318, 0.6318),
    "cifar10n": (0.9116, 0.9148, 0.9108, 0.9114),
}
MARGIN = 0.005


def _load(name):
    folder = DATA / name
    if not (folder / "votes.csv").is_file():
        pytest.skip(f"real dataset {folder} is absent")
    pd = pytest.importorskip("pandas")
    votes = pd.read_csv(folder / "votes.csv")
    truth = pd.read_csv(folder / "truth.csv")
    shape = (int(votes.task.max()) + 1, int(votes.worker.max()) + 1)
    X = sp.coo_array((votes.label.to_numpy(), (votes.task.to_numpy(), votes.worker.to_numpy())),
                     shape=shape)
    return X, truth.task.to_numpy(), truth.label.to_numpy()


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if name == "cifar10n" else name
    for name in MEASURED
])
def test_accuracy_on_gold_labels(name):
    X, tasks, gold = _load(name)
    accuracy = {}
    for model in (MajorityVote(random_state=0), DawidSkene(), WeightedDawidSkene(), GLAD()):
        accuracy[type(model).__name__] = np.mean(model.fit_predict(X)[tasks] == gold)
    floors = dict(zip(accuracy, MEASURED[name]))
    for method, value in accuracy.items():
        assert value >= floors[method] - MARGIN, (method, value)
    assert accuracy["DawidSkene"] >= accuracy["MajorityVote"] - MARGIN
