"""Text aggregation on CrowdSpeech: skcrowd's text aggregators against crowd-kit (issue 38, sec. 2).

Crowds: the four CrowdSpeech splits (:func:`skcrowd.datasets.fetch_crowd_dataset`,
``crowdspeech_{dev,test}-{clean,other}``): 7 transcriptions of each LibriSpeech recording
(2620-2939 recordings, 748-1441 workers), with the reference transcripts.

Methods: skcrowd's ``ROVER``, ``WeightedROVER`` (ROVER with a word error rate per worker),
``ClosestToAverage``, ``RASA`` and ``HRRASA`` with their default encoder (character 2- to 4-gram
TF-IDF, sparse; its fit is timed with them), and ``RASA``/``HRRASA`` "(dense)" on dense
embeddings (the same TF-IDF reduced to 128 dimensions by a seeded TruncatedSVD, rows normalized,
computed once per split and looked up, so not timed), the embeddings handed to crowd-kit 1.4.2's
``RASA`` and ``HRRASA`` (in its own interpreter, ``--competitor-python``; left out with a note
when it cannot run; its HRRASA with the pandas-3 fix of
``_competitors.patch_crowdkit_hrrasa_means``), with its ``ROVER`` (tokens split on spaces).
Score: corpus word error rate against the references after the usual normalization (lowercase,
no punctuation; :func:`skcrowd.metrics.word_error_rate`), and the seconds of each
``fit_predict`` (crowd-kit: of its ``fit_predict``, in its process).

Usage::

    python benchmarks/texts.py                           # the four splits, a few minutes
    python benchmarks/texts.py --splits test-clean --json results.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from _competitors import run_json_child  # benchmarks/, first on the script's path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SPLITS = ("dev-clean", "dev-other", "test-clean", "test-other")


def dense_encoder():
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    return make_pipeline(TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4)),
                         TruncatedSVD(n_components=128, random_state=0), Normalizer())


class Lookup:
    """An encoder that looks the answers up among precomputed embeddings."""

    def __init__(self, texts, embeddings):
        self.row = {text: i for i, text in enumerate(texts)}
        self.embeddings = embeddings

    def __call__(self, texts):
        return self.embeddings[[self.row[text] for text in texts]]


def skcrowd_methods(lookup):
    from skcrowd.texts import HRRASA, RASA, ROVER, ClosestToAverage, WeightedROVER

    return {
        "ROVER": ROVER(),
        "WeightedROVER": WeightedROVER(),
        "ClosestToAverage": ClosestToAverage(),
        "RASA": RASA(),
        "HRRASA": HRRASA(),
        "RASA (dense)": RASA(encoder=lookup),
        "HRRASA (dense)": HRRASA(encoder=lookup),
    }


def crowdkit_child(path):
    import pandas as pd
    from _competitors import patch_crowdkit_hrrasa_means
    from crowdkit.aggregation import HRRASA, RASA, ROVER

    patch_crowdkit_hrrasa_means()
    warnings.simplefilter("ignore")
    data = np.load(path, allow_pickle=True)
    texts = data["text"].tolist()
    frame = pd.DataFrame({"task": data["task"], "worker": data["worker"], "text": texts})
    embedded = pd.DataFrame({"task": data["task"], "worker": data["worker"], "output": texts,
                             "embedding": list(data["embedding"])})
    n_tasks = int(data["n_tasks"])
    out = {}

    def store(name, series, seconds):
        pred = [""] * n_tasks
        for task, text in series.items():
            pred[int(task)] = text
        out[name] = {"pred": pred, "seconds": seconds}

    start = time.perf_counter()
    result = ROVER(tokenizer=lambda s: s.split(" "), detokenizer=" ".join).fit_predict(frame)
    store("crowd-kit ROVER", result, time.perf_counter() - start)
    for name, model in (("crowd-kit RASA (dense)", RASA()),
                        ("crowd-kit HRRASA (dense)", HRRASA())):
        start = time.perf_counter()
        result = model.fit_predict(embedded)
        store(name, result["output"], time.perf_counter() - start)
    print(json.dumps(out))


def run_crowdkit(python, answers, embeddings, n_tasks):
    task, worker, text = answers
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "answers.npz"
        np.savez(path, task=task, worker=worker, text=np.array(text, dtype=object),
                 embedding=embeddings, n_tasks=n_tasks)
        return run_json_child([python, str(Path(__file__).resolve()), "--crowdkit-child",
                               str(path)], timeout=3600)


def evaluate(split, data_home, python):
    from skcrowd.datasets import fetch_crowd_dataset
    from skcrowd.metrics import word_error_rate

    crowd = fetch_crowd_dataset(f"crowdspeech_{split}", data_home=data_home,
                                download_if_missing=False)
    votes, reference = crowd.votes, crowd.target.to_numpy()
    matrix = votes.to_numpy(dtype=object)
    task, worker = np.nonzero(votes.notna().to_numpy())
    text = matrix[task, worker].tolist()
    embeddings = dense_encoder().fit_transform(text)
    results = {}
    for name, model in skcrowd_methods(Lookup(text, embeddings)).items():
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pred = model.fit_predict(votes)
        seconds = time.perf_counter() - start
        results[name] = {"wer": word_error_rate(reference, pred), "seconds": seconds}
        print(f"{split:11s} {name:26s} WER {results[name]['wer']:.4f}  {seconds:6.1f} s",
              flush=True)
    notes = []
    for name, got in run_crowdkit(python, (task, worker, text), embeddings, len(votes)).items():
        if isinstance(got, str):
            notes.append(f"{split}: {name}: {got}")
            continue
        results[name] = {"wer": word_error_rate(reference, got["pred"]),
                         "seconds": got["seconds"]}
        print(f"{split:11s} {name:26s} WER {results[name]['wer']:.4f}  "
              f"{got['seconds']:6.1f} s", flush=True)
    return results, notes


def table(results):
    names = list(dict.fromkeys(name for split in results.values() for name in split))
    splits = list(results)
    lines = ["| method | " + " | ".join(splits) + " | seconds (" + ", ".join(splits) + ") |",
             "|---" * (len(splits) + 2) + "|"]
    for name in names:
        wers = [f"{results[s][name]['wer']:.4f}" if name in results[s] else "-" for s in splits]
        secs = [f"{results[s][name]['seconds']:.1f}" if name in results[s] else "-"
                for s in splits]
        lines.append(f"| {name} | " + " | ".join(wers) + " | " + ", ".join(secs) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--splits", nargs="*", default=list(SPLITS), choices=SPLITS)
    parser.add_argument("--competitor-python", default="/tmp/benchenv/bin/python")
    parser.add_argument("--json", default=None)
    parser.add_argument("--crowdkit-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.crowdkit_child:
        crowdkit_child(args.crowdkit_child)
        return
    home = args.data_home or (SHARED if (SHARED / "sources").is_dir() else None)
    results, notes = {}, []
    for split in args.splits:
        results[split], n = evaluate(split, home, args.competitor_python)
        notes += n
    print(table(results))
    for note in notes:
        print("note:", note)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
