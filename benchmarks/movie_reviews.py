"""MovieReviews rating regression from crowd answers (seed 001, Rodrigues & Pereira 2018, table 2).

The crowd ``movie_reviews_rodrigues`` of :func:`skcrowd.datasets.fetch_crowd_dataset`: 1500
reviews with 4-5 ratings each from 135 workers, 3506 test reviews with true ratings. Every method
fits the same backbone with the same training (skcrowd's default :class:`~skcrowd.neural.MLP`,
128 hidden units, dropout 0.5; Adam at lr 1e-3, batches of 64, the number of epochs chosen on 20 %
of the training reviews held out, then refit on all): :class:`CrowdLayerRegressor`'s defaults.

- ``CrowdLayer S``, ``B``, ``S+B``: ``CrowdLayerRegressor(crowd_layer=...)`` on the answers
  (annotator scale ``s_r mu``, bias ``mu + b_r``, or both);
- ``mean + net``: the backbone alone on each review's mean answer;
- ``BiasPrecisionEM + net``: the backbone alone on each review's
  :class:`~skcrowd.aggregation.BiasPrecisionEM` rating (workers with a bias and a precision, its
  defaults), the two-stage baseline of issue 24's section 2 (as the DS-trained net is for
  classes);
- ``Raykar EM + net`` (benchmark-local, **not in skcrowd**: skcrowd has no deep EM for
  regression): Raykar et al. (2010)'s EM for Gaussian annotators with the net as the regressor, as
  the paper adapts it: starting from the ``mean + net`` fit, each worker's precision is the inverse
  of their mean squared residual on the training reviews, and the net is refit on the
  precision-weighted mean answer (``--em-rounds`` times; the per-review total precision, which
  Raykar's M-step also weighs the reviews by, is left out);
- ``true + net``: the backbone alone on the true ratings of the training reviews (upper bound).

Features: the word counts of words that occur in at least two training reviews, TF-IDF weighted
(sublinear tf) on the training reviews. The paper's backbone was a CNN (two convolutional layers
of 128 features with max pooling, a fully connected layer of 32 units) on the review text; the
release gives word ids without a vocabulary, so neither its text nor pre-trained embeddings are
available here. The paper counts 137 workers; the release's answers matrix has 135 columns.

Scores on the 3506 test reviews: MAE on the paper's 1-10 scale (the release's 0-1 ratings times
10), R^2 (the same on either scale), the offset (mean prediction minus mean true rating, 1-10
scale) and Pearson's correlation of predictions and true ratings (blind to offset and scale),
mean +- standard deviation over seeds, beside the paper's numbers (30 runs).

Usage::

    python benchmarks/movie_reviews.py                      # 3 seeds, 11 min on a shared core
    python benchmarks/movie_reviews.py --seeds 1 --json results.json
    python benchmarks/movie_reviews.py --data-home DIR      # DIR/sources/... holds the files

By default the data are read from the project's shared data folder when it holds the pinned
source files (``../shared/data/sources``), else from skcrowd's data home (downloaded there).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
SHARED_DATA = REPO.parent / "shared" / "data"

from skcrowd.aggregation import BiasPrecisionEM  # noqa: E402
from skcrowd.neural import CrowdLayerRegressor  # noqa: E402

#: Rodrigues & Pereira (2018), table 2, on a 1-10 scale: (MAE, R^2)
PAPER = {
    "CrowdLayer S": (1.228, 0.306),
    "CrowdLayer B": (1.130, 0.393),
    "CrowdLayer S+B": (1.163, 0.371),
    "mean + net": (1.215, 0.315),
    "Raykar EM + net": (1.201, 0.330),
    "true + net": (1.050, 0.460),
}
#: The release's ratings are on a 0-1 scale; the paper reports on a 1-10 scale.
SCALE = 10.0


def load(data_home):
    """Training TF-IDF features, answers, true ratings; test features and true ratings."""
    from sklearn.feature_extraction.text import TfidfTransformer

    from skcrowd.datasets import fetch_crowd_dataset

    ds = fetch_crowd_dataset("movie_reviews_rodrigues", data_home=data_home)
    words = np.flatnonzero((ds.data > 0).sum(axis=0).A1 >= 2)
    tfidf = TfidfTransformer(sublinear_tf=True).fit(ds.data[:, words])
    X, X_test = (tfidf.transform(d[:, words]).astype(np.float32)
                 for d in (ds.data, ds.data_test))
    return dict(X=X, answers=ds.votes, target=ds.target, X_test=X_test,
                target_test=ds.target_test)


class IdentityNoise(torch.nn.Module):
    """The noise model of a net fitted on one target per review: ``mu`` itself."""

    def forward(self, mu, x, task, worker):
        return mu.reshape(len(mu))[task]


class PlainNetRegressor(CrowdLayerRegressor):
    """The backbone with CrowdLayerRegressor's training, without annotator parameters.

    skcrowd has no plain net regressor; fitted on a single column (the mean answer, the true
    rating), this is the backbone trained on it by least squares.
    """

    def _make_noise_model(self):
        return IdentityNoise()


def plain_regressor(seed):
    return PlainNetRegressor(random_state=seed)


def raykar_em(data, seed, first, rounds):
    """Refit the net on precision-weighted mean answers, ``rounds`` times, from ``first``."""
    answers, net = data["answers"], first
    for _ in range(rounds):
        residual = answers - net.predict(data["X"])[:, None]
        precision = 1.0 / np.maximum(np.nanmean(residual ** 2, axis=0), 1e-6)
        weight = np.where(np.isnan(answers), 0.0, precision)
        target = np.nansum(answers * weight, axis=1) / weight.sum(axis=1)
        net = plain_regressor(seed).fit(data["X"], target[:, None])
    return net


def run(data, seed, em_rounds):
    """{method: (MAE x 10, R^2, offset x 10, correlation, seconds)} of every method for one seed.

    The offset is the mean test prediction minus the mean true test rating; the correlation
    (Pearson's, of predictions and true ratings) ignores offset and scale.
    """
    from sklearn.metrics import mean_absolute_error, r2_score

    def score(net, seconds):
        pred, truth = net.predict(data["X_test"]), data["target_test"]
        return (SCALE * mean_absolute_error(truth, pred), r2_score(truth, pred),
                SCALE * (pred.mean() - truth.mean()), np.corrcoef(pred, truth)[0, 1], seconds)

    out = {}
    for layer in ("S", "B", "S+B"):
        start = time.perf_counter()
        net = CrowdLayerRegressor(crowd_layer=layer, random_state=seed).fit(
            data["X"], data["answers"])
        out[f"CrowdLayer {layer}"] = score(net, time.perf_counter() - start)
    start = time.perf_counter()
    mean_net = plain_regressor(seed).fit(data["X"], np.nanmean(data["answers"], axis=1)[:, None])
    out["mean + net"] = score(mean_net, time.perf_counter() - start)
    start = time.perf_counter()
    target = BiasPrecisionEM().fit_predict(data["answers"])
    net = plain_regressor(seed).fit(data["X"], target[:, None])
    out["BiasPrecisionEM + net"] = score(net, time.perf_counter() - start)
    start = time.perf_counter()
    net = raykar_em(data, seed, mean_net, em_rounds)
    out["Raykar EM + net"] = score(net, time.perf_counter() - start + out["mean + net"][-1])
    start = time.perf_counter()
    net = plain_regressor(seed).fit(data["X"], data["target"][:, None])
    out["true + net"] = score(net, time.perf_counter() - start)
    return out


def table(results):
    """Markdown-ish table: mean +- sd over seeds beside the paper's numbers."""
    lines = ["| method | MAE (1-10 scale) | R^2 (%) | offset | correlation | paper MAE "
             "| paper R^2 (%) | s per fit |", "|---|---|---|---|---|---|---|---|"]
    for method in results[0]:
        runs = np.array([r[method] for r in results])
        mae, r2, offset, correlation, seconds = runs.mean(axis=0)
        sd = runs.std(axis=0)
        paper = (f"{PAPER[method][0]:.3f} | {100 * PAPER[method][1]:.1f}" if method in PAPER
                 else "- | -")
        lines.append(f"| {method} | {mae:.3f} ± {sd[0]:.3f} | {100 * r2:.1f} ± {100 * sd[1]:.1f} "
                     f"| {offset:+.2f} | {correlation:.3f} | {paper} | {seconds:.0f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--em-rounds", type=int, default=2,
                        help="refits of the Raykar EM baseline after the mean-trained net")
    parser.add_argument("--data-home", type=Path, default=None,
                        help="skcrowd data home (default: the shared data folder if it holds "
                             "the pinned files, else SKCROWD_DATA or ~/skcrowd_data)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    home = args.data_home
    if home is None and (SHARED_DATA / "sources").is_dir():
        home = SHARED_DATA
    data = load(home)
    print(f"MovieReviews: {data['X'].shape[0]} training reviews ({data['X'].shape[1]} TF-IDF "
          f"words), {data['answers'].shape[1]} workers, {data['X_test'].shape[0]} test reviews; "
          f"{args.seeds} seeds, torch threads {args.threads}", flush=True)
    print("skcrowd has no deep EM for regression (Raykar et al. 2010): 'Raykar EM + net' is "
          "this script's own loop around the mean-trained net, not a skcrowd estimator.")
    results = []
    for seed in range(args.seeds):
        results.append(run(data, seed, args.em_rounds))
        print(f"seed {seed}: " + ", ".join(f"{m} {mae:.3f}/{r2:.3f}"
                                           for m, (mae, r2, *_) in results[-1].items()),
              flush=True)
    print()
    print("MAE on the 1-10 scale (0-1 ratings x 10) and R^2 on the 3506 test reviews, "
          f"mean ± sd over {args.seeds} seeds; offset: mean test prediction minus mean true "
          "rating (1-10 scale); correlation: Pearson's, of predictions and true ratings; "
          "paper: Rodrigues & Pereira 2018, table 2 (a CNN on the review text, 30 runs). "
          "Seconds per fit: Raykar EM includes its mean-trained start.")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps({"seeds": args.seeds, "em_rounds": args.em_rounds,
                                         "results": results, "paper": PAPER}, indent=1))


if __name__ == "__main__":
    main()
