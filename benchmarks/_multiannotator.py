"""Shared pieces of benchmarks/consensus.py and benchmarks/active.py.

- :func:`load_task_features`: a shared-data crowd folder with the features of its tasks: the
  ``features_*_train.npy`` arrays when the folder has them, else the raw text of
  ``*_text_train.txt`` (one line per task), and the classifier both methods use on them.
- :class:`Cleanlab`: cleanlab 2.9.0's ``cleanlab.multiannotator`` (CROWDLAB and ActiveLab) in
  a child process of the competitor environment (``--competitor-python``; cleanlab is never
  imported by skcrowd). The child is this file run as a script: it reads one request file name
  per line on stdin and answers ``ok`` or ``error: ...`` on stdout (cleanlab's own prints are
  swallowed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------
# data and classifier (parent side)
# ---------------------------------------------------------------------------


def load_task_features(folder):
    """``(X, votes, gold, kind)`` of a crowd folder; ``kind`` is "numeric" or "text"."""
    from skcrowd.datasets import load_crowd_dataset

    folder = Path(folder)
    data = load_crowd_dataset(folder)
    if not data.target_mask.all():
        raise ValueError(f"{folder}: these benchmarks need gold labels for every task.")
    if data.data is not None:
        return data.data, data.votes, data.target, "numeric"
    texts = sorted(folder.glob("*text_train.txt"))
    if not texts:
        raise ValueError(f"{folder} has neither features_*_train.npy nor *text_train.txt.")
    lines = texts[0].read_text(encoding="utf-8", errors="replace").split("\n")
    if len(lines) == len(data.votes) + 1 and lines[-1] == "":
        lines = lines[:-1]
    if len(lines) != len(data.votes):
        raise ValueError(f"{texts[0]} has {len(lines)} lines for {len(data.votes)} tasks.")
    return np.array(lines, dtype=object), data.votes, data.target, "text"


TEXT_C_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)


def make_classifier(kind, X=None, votes=None, C=None):
    """The classifier of both methods.

    Numeric features: skcrowd's default (None). Raw text: TF-IDF (words and word pairs seen
    twice, sublinear term frequencies) and a logistic regression whose ``C`` is ``C``, or, when
    None, the value of ``TEXT_C_GRID`` with the best 5-fold cross-validated log-loss against
    the majority vote of ``votes`` (no gold label is used). Returns ``(classifier, note)``.
    """
    if kind == "numeric":
        return None, "skcrowd's default classifier"
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    from skcrowd import MajorityVote

    def text_classifier(C):
        return make_pipeline(TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=2),
                             LogisticRegression(C=C, max_iter=1000))

    if C is not None:
        return text_classifier(C), f"TF-IDF + logistic regression, C={C:g} (given)"
    majority = MajorityVote(random_state=0).fit(votes).predict(votes)
    cv = KFold(5, shuffle=True, random_state=0)
    loss = {C: -cross_val_score(text_classifier(C), X, majority, cv=cv,
                                scoring="neg_log_loss").mean() for C in TEXT_C_GRID}
    best = min(loss, key=loss.get)
    return text_classifier(best), (
        f"TF-IDF + logistic regression, C={best:g} (log-loss against the majority vote: "
        + ", ".join(f"C={C:g} {value:.4f}" for C, value in loss.items()) + ")")


# ---------------------------------------------------------------------------
# cleanlab in the competitor environment
# ---------------------------------------------------------------------------


class Cleanlab:
    """A persistent child process of ``python`` answering CROWDLAB and ActiveLab requests."""

    def __init__(self, python):
        self.process = subprocess.Popen(
            [python, str(Path(__file__).resolve())], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        self.folder = tempfile.mkdtemp(prefix="skcrowd-cleanlab-")
        self.version = self._call("version")["version"].item()

    def _call(self, what, **arrays):
        path = os.path.join(self.folder, "request.npz")
        np.savez(path, what=what, **arrays)
        self.process.stdin.write(path + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if answer != "ok":
            raise RuntimeError(f"cleanlab child ({what}): {answer or 'no answer (it died)'}")
        with np.load(path + ".out.npz", allow_pickle=False) as out:
            return dict(out)

    def crowdlab(self, votes, pred_probs):
        """CROWDLAB's consensus labels and annotator qualities (NaN for a worker without
        votes, whom cleanlab does not accept)."""
        return self._call("crowdlab", votes=votes, pred_probs=pred_probs)

    def activelab(self, votes, pred_probs):
        """ActiveLab's score of every task (lower: label next); rows without votes are the
        unlabelled tasks."""
        return self._call("activelab", votes=votes, pred_probs=pred_probs)["scores"]

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def _child_answer(request):
    """Run one request in the competitor environment; write ``<request>.out.npz``."""
    import contextlib
    import io
    import warnings

    warnings.simplefilter("ignore")
    import cleanlab
    from cleanlab.multiannotator import (get_active_learning_scores,
                                         get_label_quality_multiannotator)

    with np.load(request, allow_pickle=False) as data:
        data = dict(data)
    what = str(data["what"])
    if what == "version":
        return {"version": np.array(cleanlab.__version__)}
    votes = data["votes"].astype(float)
    votes[votes < 0] = np.nan  # cleanlab's missing marker
    pred_probs = data["pred_probs"]
    with_votes = ~np.isnan(votes).all(axis=0)  # cleanlab rejects workers without votes
    labelled = ~np.isnan(votes).all(axis=1)
    with contextlib.redirect_stdout(io.StringIO()):
        if what == "crowdlab":
            result = get_label_quality_multiannotator(votes[:, with_votes], pred_probs,
                                                      verbose=False)
            quality = np.full(votes.shape[1], np.nan)
            stats = result["annotator_stats"].sort_index()
            quality[np.flatnonzero(with_votes)[stats.index.to_numpy()]] = (
                stats["annotator_quality"].to_numpy())
            return {"labels": result["label_quality"]["consensus_label"].to_numpy(),
                    "annotator_quality": quality}
        scores = np.empty(len(votes))
        scored, scored_unlabelled = get_active_learning_scores(
            votes[labelled][:, with_votes], pred_probs[labelled],
            pred_probs[~labelled] if (~labelled).any() else None)
        scores[labelled] = scored
        scores[~labelled] = scored_unlabelled
        return {"scores": scores}


def _serve():
    for line in sys.stdin:
        request = line.strip()
        try:
            out = _child_answer(request)
        except Exception as exc:  # reported to the parent, which raises
            print(f"error: {type(exc).__name__}: {exc}".replace("\n", " "), flush=True)
            continue
        np.savez(request + ".out.npz", **out)
        print("ok", flush=True)


if __name__ == "__main__":
    _serve()
