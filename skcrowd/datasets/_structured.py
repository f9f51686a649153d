"""Converters of the crowds whose answers are not one class per task: ratings, token tags,
ordinal grades, pairwise comparisons and texts.

skcrowd's dataset folders (``votes.csv`` of class votes, see
``skcrowd.datasets._loaders``) hold one class label per task and worker, so
these crowds are converted in memory, from their sha256-verified source
files, at each call of :func:`~skcrowd.datasets.fetch_crowd_dataset` (well
under a second each), into the arrays the estimators take:

- **regression** (:func:`convert_movie_reviews`): answers as a float matrix
  ``(n_tasks, n_workers)``, NaN where a worker did not answer, the input of
  :class:`~skcrowd.neural.CrowdLayerRegressor`; features as a scipy.sparse
  matrix;
- **sequence labelling** (:func:`convert_conll2003_ner`): sentences padded
  to one length, tokens ``(n_sentences, seq_len)`` and tags ``(n_sentences,
  seq_len, n_workers)``, ``-1`` for no tag or padding, the input of
  :class:`~skcrowd.neural.SequenceCrowdLayerClassifier`;
- **pairwise comparisons** (:func:`convert_reading_level`): a pandas frame of
  ``worker, left, right, label`` rows;
- **texts** (:func:`convert_crowdspeech`): a pandas frame of strings, tasks x
  workers, None where a worker did not answer.

As for the other converters, errors name the file (or archive member), the
line and the value, and archives are read member by member in memory.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from ._converters import _column_indices, _lines, _require, archive_member, csv_rows, read_text

__all__ = ["convert_movie_reviews", "convert_conll2003_ner", "convert_snow2008_affect",
           "SNOW2008_AFFECTS", "convert_metaphor_novelty", "convert_reading_level",
           "convert_crowdspeech", "CROWDSPEECH_SPLITS"]


# ---------------------------------------------------------------------------
# movie_reviews_rodrigues: answers matrix, one rating per line, LDA-C bag of words
# ---------------------------------------------------------------------------

#: Marker of a missing answer in MA-sLDAr's answers.txt.
NO_ANSWER = "999999999"


def _numbered_lines(path):
    """``(line number, text)`` of the lines of a text file that are not blank."""
    return [(line, text) for line, text in enumerate(_lines(read_text(path)), start=1)
            if text.strip()]


def _float(value, where):
    try:
        number = float(value)
    except ValueError:
        number = np.nan
    if not np.isfinite(number):
        raise ValueError(f"{where}: {value!r} is not a finite number.")
    return number


def _answers(path):
    """Answers matrix of ``answers.txt``: a row per task, a column per worker, NaN missing."""
    name = Path(path).name
    rows = [(line, text.split()) for line, text in _numbered_lines(path)]
    if not rows:
        raise ValueError(f"{name} holds no answers.")
    width = len(rows[0][1])
    for line, fields in rows:
        if len(fields) != width:
            raise ValueError(f"{name} line {line}: {len(fields)} columns, expected {width} (one "
                             "per worker, as on line 1).")
    return np.array([
        [np.nan if value == NO_ANSWER else _float(value, f"{name} line {line} column {j + 1}")
         for j, value in enumerate(fields)]
        for line, fields in rows
    ])


def _ratings(path, n_rows=None, rows_of=None):
    """One rating per line; ``n_rows`` of them when given (``rows_of``: whose row count)."""
    name = Path(path).name
    ratings = np.array([_float(text.strip(), f"{name} line {line}")
                        for line, text in _numbered_lines(path)])
    if n_rows is not None and len(ratings) != n_rows:
        raise ValueError(f"{name} has {len(ratings)} ratings but {rows_of} has {n_rows} rows: "
                         "one rating per review is expected.")
    return ratings


def _bag_of_words(path):
    """Rows of an LDA-C file (``n id:count id:count ...``) as ``(ids, counts)`` per line."""
    name = Path(path).name
    rows = []
    # reviews with no word are lines "0": every line is a review, blank lines too are errors
    lines = _lines(read_text(path))
    while lines and not lines[-1].strip():
        lines.pop()
    for line, text in enumerate(lines, start=1):
        fields = text.split()
        try:
            n_terms = int(fields[0])
            pairs = [field.split(":") for field in fields[1:]]
            ids = np.array([int(i) for i, _ in pairs], dtype=np.int64)
            counts = np.array([int(c) for _, c in pairs], dtype=np.int64)
        except (ValueError, IndexError):
            shown = text if len(text) <= 60 else text[:57] + "..."
            raise ValueError(f"{name} line {line}: expected 'n id:count id:count ...' "
                             f"(LDA-C, integers), got {shown!r}.") from None
        if n_terms != len(ids) or (ids < 0).any() or (counts <= 0).any() or (
                len(np.unique(ids)) != len(ids)):
            raise ValueError(f"{name} line {line}: expected {n_terms} distinct word ids "
                             f"(>= 0) with positive counts, got {len(ids)} pairs: "
                             f"{text[:60]!r}.")
        rows.append((ids, counts))
    return rows


def _csr(rows, n_features):
    indptr = np.cumsum([0] + [len(ids) for ids, _ in rows])
    indices = np.concatenate([ids for ids, _ in rows] or [np.zeros(0, np.int64)])
    counts = np.concatenate([c for _, c in rows] or [np.zeros(0, np.int64)])
    return sp.csr_matrix((counts.astype(np.float64), indices, indptr),
                         shape=(len(rows), n_features))


def convert_movie_reviews(paths):
    """MovieReviews of MA-sLDAr: crowd ratings, true ratings, bag-of-words counts.

    Parameters
    ----------
    paths : dict
        Local path of each file, by name: ``answers.txt`` (a row per review, a
        column per worker, ``999999999`` for no answer), ``labels_train_amt.txt``
        and ``labels_test.txt`` (one true rating per line),
        ``data_train_amt.txt`` and ``data_test.txt`` (one review per line,
        LDA-C: ``n id:count ...``).

    Returns
    -------
    sklearn.utils.Bunch
        ``votes`` (float answers, NaN missing), ``target``, ``data`` (csr
        counts; ``n_features`` is the largest word id of both splits + 1: the
        release has no vocabulary), ``data_test``, ``target_test``,
        ``task_ids``, ``worker_ids``, ``stats``, ``DESCR``. Ratings are on
        the release's 0-1 scale, kept as published (a few answers are -0.1 or
        1.1).
    """
    answers = _answers(paths["answers.txt"])
    target = _ratings(paths["labels_train_amt.txt"], len(answers), "answers.txt")
    train = _bag_of_words(paths["data_train_amt.txt"])
    if len(train) != len(answers):
        raise ValueError(f"data_train_amt.txt has {len(train)} reviews but answers.txt has "
                         f"{len(answers)} rows.")
    test = _bag_of_words(paths["data_test.txt"])
    target_test = _ratings(paths["labels_test.txt"], len(test), "data_test.txt")
    n_features = 1 + max((int(ids.max()) for ids, _ in train + test if len(ids)), default=-1)
    observed = ~np.isnan(answers)
    per_task, per_worker = observed.sum(axis=1), observed.sum(axis=0)
    outside = int(((answers[observed] < 0) | (answers[observed] > 1)).sum())
    stats = {
        "name": "movie_reviews_rodrigues", "kind": "regression",
        "n_tasks": len(answers), "n_workers": answers.shape[1], "n_answers": int(observed.sum()),
        "answers_per_task_mean": round(float(per_task.mean()), 2),
        "answers_per_task_min": int(per_task.min()), "answers_per_task_max": int(per_task.max()),
        "answers_per_worker_min": int(per_worker.min()),
        "answers_per_worker_max": int(per_worker.max()),
        "answers_outside_0_1": outside, "n_features": n_features, "n_test": len(test),
    }
    descr = (
        f"movie_reviews_rodrigues: {stats['n_tasks']} reviews, {stats['n_workers']} workers, "
        f"{stats['n_answers']} answers ({stats['answers_per_task_min']}-"
        f"{stats['answers_per_task_max']} per review), true ratings of every review; "
        f"{len(test)} test reviews with true ratings; {n_features} word ids. Ratings on a 0-1 "
        f"scale (the paper reports MAE on a 1-10 scale: multiply by 10); {outside} answers "
        "outside 0-1 (-0.1 or 1.1) are kept as published."
    )
    return Bunch(
        votes=answers, target=target, data=_csr(train, n_features),
        data_test=_csr(test, n_features), target_test=target_test,
        task_ids=np.arange(len(answers)), worker_ids=np.arange(answers.shape[1]),
        stats=stats, DESCR=descr,
    )


# ---------------------------------------------------------------------------
# snow2008 affect: one tab-separated file per emotion in the snow2008 archive, a row per rating
# ---------------------------------------------------------------------------

#: The affect ratings of Snow et al. 2008, in the archive's member names: 0-100 for the six
#: emotions, -100..100 for valence.
SNOW2008_AFFECTS = ("anger", "disgust", "fear", "joy", "sadness", "surprise", "valence")


def _integer(value, where):
    number = _float(value, where)
    if number != int(number):
        raise ValueError(f"{where}: {value!r} is not an integer rating.")
    return number


def convert_snow2008_affect(archive, emotion):
    """Ratings and gold ratings of ``{emotion}.standardized.tsv`` in Snow et al.'s archive.

    Parameters
    ----------
    archive : path-like
        ``all_collected_data.tgz`` (read in memory).
    emotion : str
        One of :data:`SNOW2008_AFFECTS`.

    Returns
    -------
    sklearn.utils.Bunch
        ``votes`` (float ratings ``(n_headlines, n_workers)``, NaN where a worker did not
        rate a headline), ``target`` (the experts' rating of each headline), ``task_ids``
        (the headlines' ``orig_id``, sorted as integers), ``worker_ids`` (sorted), ``stats``,
        ``DESCR``. Tab-separated, header ``!amt_annotation_ids, !amt_worker_ids, orig_id,
        response, gold``: one row per rating, the gold rating repeated on each row of its
        headline; a headline whose rows disagree on the gold, a worker rating a headline twice
        or a value that is not an integer raises (naming the line).
    """
    member = f"{emotion}.standardized.tsv"
    text = archive_member(archive, member).decode("utf-8")
    header, rows = csv_rows(None, delimiter="\t", text=text, name=member)
    i_worker, i_task, i_response, i_gold = _column_indices(
        header, ["!amt_worker_ids", "orig_id", "response", "gold"], member)
    records = []
    for line, fields in rows:
        if len(fields) <= max(i_worker, i_task, i_response, i_gold):
            raise ValueError(f"{member} line {line}: {len(fields)} fields, expected "
                             f"{len(header)} ({', '.join(header)}).")
        where = f"{member} line {line}"
        records.append((line, int(_integer(fields[i_task], where + " orig_id")),
                        fields[i_worker], _integer(fields[i_response], where + " response"),
                        _integer(fields[i_gold], where + " gold")))
    if not records:
        raise ValueError(f"{member} holds no ratings.")
    tasks = np.array(sorted({r[1] for r in records}))
    workers = np.array(sorted({r[2] for r in records}), dtype=object)
    task_index = {t: i for i, t in enumerate(tasks.tolist())}
    worker_index = {w: j for j, w in enumerate(workers.tolist())}
    votes = np.full((len(tasks), len(workers)), np.nan)
    target = np.full(len(tasks), np.nan)
    for line, task, worker, response, gold in records:
        i, j = task_index[task], worker_index[worker]
        if not np.isnan(votes[i, j]):
            raise ValueError(f"{member} line {line}: worker {worker} rates headline {task} a "
                             "second time.")
        if not np.isnan(target[i]) and target[i] != gold:
            raise ValueError(f"{member} line {line}: headline {task} has gold {gold:g} here "
                             f"and {target[i]:g} on an earlier line.")
        votes[i, j], target[i] = response, gold
    observed = ~np.isnan(votes)
    per_task, per_worker = observed.sum(axis=1), observed.sum(axis=0)
    name = f"snow2008_{emotion}"
    scale = "-100..100" if emotion == "valence" else "0-100"
    stats = {
        "name": name, "kind": "regression", "n_tasks": len(tasks), "n_workers": len(workers),
        "n_answers": int(observed.sum()), "answers_per_task_min": int(per_task.min()),
        "answers_per_task_max": int(per_task.max()),
        "answers_per_worker_min": int(per_worker.min()),
        "answers_per_worker_max": int(per_worker.max()), "scale": scale,
    }
    descr = (
        f"{name}: {len(tasks)} news headlines rated for {emotion} ({scale}) by {len(workers)} "
        f"workers, {stats['n_answers']} ratings ({stats['answers_per_task_min']}-"
        f"{stats['answers_per_task_max']} per headline, {stats['answers_per_worker_min']}-"
        f"{stats['answers_per_worker_max']} per worker), with the experts' rating of every "
        "headline (target). Snow et al. 2008, from the SemEval-2007 affective text task."
    )
    return Bunch(votes=votes, target=target, data=None, task_ids=tasks, worker_ids=workers,
                 stats=stats, DESCR=descr)


# ---------------------------------------------------------------------------
# metaphor_novelty_parde: MTurk results files, each Answer.* cell "<item> <score>"
# ---------------------------------------------------------------------------

#: The novelty grades of Parde and Nielsen 2017, in order.
METAPHOR_GRADES = (0, 1, 2, 3)


def _mturk_scores(path):
    """``[(line, item, worker, score)]`` of the ``Answer.<n>metaphorNovelty<m>`` cells."""
    import re

    name = Path(path).name
    header, rows = csv_rows(path, name=name)
    (i_worker,) = _column_indices(header, ["WorkerId"], name)
    answers = [i for i, c in enumerate(header) if re.fullmatch(r"Answer\.\d+metaphorNovelty\d+", c)]
    if not answers:
        raise ValueError(f"{name} has no Answer.<n>metaphorNovelty<m> column: is it a results "
                         "file of Parde and Nielsen's metaphor novelty HITs?")
    out = []
    for line, fields in rows:
        if fields[:len(header)] == header:  # the header repeated inside concatenated files
            continue
        for i in answers:
            cell = fields[i] if i < len(fields) else ""
            if not cell:
                continue
            item, _, score = cell.rpartition(" ")
            if not item or score not in {str(g) for g in METAPHOR_GRADES}:
                raise ValueError(f"{name} line {line} column {header[i]}: expected '<item> "
                                 f"<score>' with a score in 0-3, got {cell!r}.")
            out.append((line, item, fields[i_worker], int(score)))
    if not out:
        raise ValueError(f"{name} holds no scores.")
    return out


def _sorted_ids(ids):
    ids = sorted(set(ids))
    if all(i.isdigit() for i in ids):
        ids = sorted(ids, key=int)
    return ids


def convert_metaphor_novelty(paths):
    """Novelty scores 0-3 of word pairs by MTurk workers, and an expert's scores (the gold).

    Parameters
    ----------
    paths : dict
        Local path of ``anonymized_combined_hits_1-100.csv`` (the crowd) and
        ``expert_combined_hits_1-100.csv`` (the expert), by name. Both are Mechanical Turk
        results files, one row per assignment (``HITId, AssignmentId, WorkerId, ...``), each
        ``Answer.<n>metaphorNovelty<m>`` cell ``"<item> <score>"`` (several items a row; empty
        cells skipped; the header repeated inside a file is skipped).

    Returns
    -------
    sklearn.utils.Bunch
        ``votes`` (grade indices 0-3, ``(n_items, n_workers)``, -1 where a worker did not score
        an item), ``target`` (the expert's grade, -1 where none), ``target_mask``,
        ``class_names`` (``[0, 1, 2, 3]``, in order), ``data`` (None), ``task_ids`` (item ids,
        sorted), ``worker_ids``, ``stats``, ``DESCR``. A worker scoring an item twice, or the
        expert scoring it twice differently, raises (naming the file and line).
    """
    crowd_name, expert_name = "anonymized_combined_hits_1-100.csv", "expert_combined_hits_1-100.csv"
    crowd = _mturk_scores(paths[crowd_name])
    expert = _mturk_scores(paths[expert_name])
    tasks = _sorted_ids(item for _, item, _, _ in crowd)
    workers = _sorted_ids(worker for _, _, worker, _ in crowd)
    task_index = {t: i for i, t in enumerate(tasks)}
    worker_index = {w: j for j, w in enumerate(workers)}
    votes = np.full((len(tasks), len(workers)), -1, dtype=np.int64)
    for line, item, worker, score in crowd:
        i, j = task_index[item], worker_index[worker]
        if votes[i, j] >= 0:
            raise ValueError(f"{crowd_name} line {line}: worker {worker} scores item {item} a "
                             "second time.")
        votes[i, j] = score
    target = np.full(len(tasks), -1, dtype=np.int64)
    unknown = 0
    for line, item, _, score in expert:
        if item not in task_index:
            unknown += 1
            continue
        i = task_index[item]
        if target[i] >= 0 and target[i] != score:
            raise ValueError(f"{expert_name} line {line}: item {item} has expert score {score} "
                             f"here and {target[i]} on an earlier line.")
        target[i] = score
    observed = votes >= 0
    per_task, per_worker = observed.sum(axis=1), observed.sum(axis=0)
    gold = target >= 0
    stats = {
        "name": "metaphor_novelty_parde", "kind": "ordinal", "n_tasks": len(tasks),
        "n_workers": len(workers), "n_classes": len(METAPHOR_GRADES),
        "n_votes": int(observed.sum()), "n_gold": int(gold.sum()),
        "votes_per_task_min": int(per_task.min()), "votes_per_task_max": int(per_task.max()),
        "votes_per_worker_min": int(per_worker.min()),
        "votes_per_worker_max": int(per_worker.max()),
        "vote_class_counts": np.bincount(votes[observed], minlength=4).tolist(),
        "gold_class_counts": np.bincount(target[gold], minlength=4).tolist(),
        "expert_items_without_votes": unknown,
    }
    descr = (
        f"metaphor_novelty_parde: {len(tasks)} word pairs scored for metaphor novelty (0-3, "
        f"ordinal) by {len(workers)} workers, {stats['n_votes']} scores "
        f"({stats['votes_per_task_min']}-{stats['votes_per_task_max']} per item); the expert's "
        f"score of {stats['n_gold']} items (target; grades {stats['gold_class_counts']} of 0, 1, "
        f"2, 3 against the crowd's {stats['vote_class_counts']})."
    )
    return Bunch(votes=votes, target=target, target_mask=gold,
                 class_names=np.array(METAPHOR_GRADES), data=None,
                 task_ids=np.array(tasks, dtype=object),
                 worker_ids=np.array(workers, dtype=object), stats=stats, DESCR=descr)


# ---------------------------------------------------------------------------
# conll2003_ner_mturk: task1.zip of seqcrowd-acl17, one file per document (and worker)
# ---------------------------------------------------------------------------

#: The release's two splits of the crowd-tagged documents, in the Bunch's order: training, test.
CONLL_SPLITS = ("val", "test")


def _member_text(archive, member):
    try:
        return archive.read(member).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"task1.zip: {member} is not UTF-8 text: {exc}") from exc


def _sentences(text):
    """Sentences of a ``token TAG`` file: lists of ``(line, fields)``, split at blank lines."""
    sentences, current = [], []
    for line, fields in enumerate((t.split() for t in _lines(text)), start=1):
        if fields:
            current.append((line, fields))
        elif current:
            sentences.append(current)
            current = []
    return sentences + ([current] if current else [])


def _gold_document(archive, member):
    """``[(tokens, tags), ...]`` of a ground-truth document; a line not ``token TAG`` raises."""
    out = []
    for sentence in _sentences(_member_text(archive, member)):
        for line, fields in sentence:
            if len(fields) != 2:
                raise ValueError(f"task1.zip: {member} line {line}: expected 'token TAG', got "
                                 f"{' '.join(fields)!r}.")
        out.append((tuple(f[0] for _, f in sentence), tuple(f[1] for _, f in sentence)))
    return out


def _worker_tags(archive, member, gold, tags):
    """A worker's tags of each sentence of a document, None where they cannot be aligned.

    A worker's sentence is kept only if it has the gold sentence's tokens, one
    ``token TAG`` line each, with tags of the gold tag set: the release's
    tagging interface split or merged tokens in some sentences (``Chile/LOC``,
    a tag on a line of its own), whose tags then fit no token.
    """
    sentences = _sentences(_member_text(archive, member))
    if len(sentences) != len(gold):
        raise ValueError(f"task1.zip: {member} has {len(sentences)} sentences but the document's "
                         f"ground truth has {len(gold)}: a worker's file is aligned with the "
                         "ground truth sentence by sentence.")
    out = []
    for sentence, (tokens, _) in zip(sentences, gold):
        fields = [f for _, f in sentence]
        aligned = (len(fields) == len(tokens)
                   and all(len(f) == 2 and f[0] == t and f[1] in tags
                           for f, t in zip(fields, tokens)))
        out.append(tuple(f[1] for f in fields) if aligned else None)
    return out


def _read_split(archive, names, split):
    """Gold sentences of a split's documents, by document name, and its workers' files."""
    gold_prefix, crowd_prefix = f"task1/{split}/ground_truth/", f"task1/{split}/mturk_train_data/"
    documents = {
        name[len(gold_prefix):]: _gold_document(archive, name) for name in names
        if name.startswith(gold_prefix) and name.count("/") == 3 and name.endswith(".txt")
    }
    if not documents:
        raise ValueError(f"task1.zip has no {gold_prefix}<document>.txt: is it the release of "
                         "seqcrowd-acl17?")
    crowd = [name for name in names
             if name.startswith(crowd_prefix) and name.count("/") == 4 and name.endswith(".txt")]
    return documents, crowd


def convert_conll2003_ner(paths):
    """The CoNLL-2003 NER crowd of seqcrowd-acl17's ``task1.zip``: tokens, crowd and gold tags.

    Parameters
    ----------
    paths : dict
        Local path of ``task1.zip``, under that name. It holds
        ``task1/{val,test}/ground_truth/<document>.txt`` (one ``token TAG`` a
        line, a blank line between sentences) and
        ``task1/{val,test}/mturk_train_data/<worker>/<document>.txt`` (a
        worker's tags of a document, in the same format).

    Returns
    -------
    sklearn.utils.Bunch
        The ``val`` documents as the training split, ``test`` as the test
        split, sentences in document-name order, every sentence padded to the
        longest of both splits: ``data`` and ``data_test`` (tokens, object
        arrays ``(n_sentences, seq_len)``, ``""`` for padding), ``votes`` and
        ``votes_test`` (int8 tag indices ``(n_sentences, seq_len,
        n_workers)``, -1 for no tag or padding), ``target`` and
        ``target_test`` (gold tag indices, -1 for padding), ``class_names``
        (the gold tags, sorted), ``task_ids`` and ``task_ids_test``
        (``"<document>:<sentence>"``), ``worker_ids``, ``stats``, ``DESCR``.
    """
    path = Path(paths["task1.zip"])
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{path.name} is not a readable zip archive: {exc}") from exc
    with archive:
        names = archive.namelist()
        read = {split: _read_split(archive, names, split) for split in CONLL_SPLITS}
        tags = sorted({tag for documents, _ in read.values()
                       for sentences in documents.values() for _, tags in sentences
                       for tag in tags})
        workers = sorted({name.split("/")[3] for _, crowd in read.values() for name in crowd})
        seq_len = max(len(tokens) for documents, _ in read.values()
                      for sentences in documents.values() for tokens, _ in sentences)
        tag_index = {tag: k for k, tag in enumerate(tags)}
        worker_index = {worker: j for j, worker in enumerate(workers)}
        splits, dropped, kept = {}, {}, {}
        for split, (documents, crowd) in read.items():
            order = sorted(documents)
            first = np.cumsum([0] + [len(documents[d]) for d in order])
            start = dict(zip(order, first))
            n = int(first[-1])
            data = np.full((n, seq_len), "", dtype=object)
            target = np.full((n, seq_len), -1, dtype=np.int64)
            votes = np.full((n, seq_len, len(workers)), -1, dtype=np.int8)
            for i, (tokens, gold) in enumerate(s for d in order for s in documents[d]):
                data[i, :len(tokens)] = tokens
                target[i, :len(tokens)] = [tag_index[t] for t in gold]
            dropped[split] = kept[split] = 0
            for name in crowd:
                worker, document = name.split("/")[3:]
                if document not in documents:
                    raise ValueError(f"task1.zip: {name} tags document {document}, which has no "
                                     f"ground truth task1/{split}/ground_truth/{document}.")
                j = worker_index[worker]
                aligned = _worker_tags(archive, name, documents[document], tag_index)
                for i, worker_tags in enumerate(aligned, start=start[document]):
                    if worker_tags is None:
                        dropped[split] += 1
                    else:
                        kept[split] += 1
                        votes[i, :len(worker_tags), j] = [tag_index[t] for t in worker_tags]
            task_ids = np.array([f"{d[:-len('.txt')]}:{k}" for d in order
                                 for k in range(len(documents[d]))], dtype=object)
            splits[split] = (data, votes, target, task_ids)
    (data, votes, target, task_ids), test = splits["val"], splits["test"]
    stats = {
        "name": "conll2003_ner_mturk", "kind": "sequence",
        "n_sentences": len(data), "n_sentences_test": len(test[0]),
        "n_tokens": int((target >= 0).sum()), "n_tokens_test": int((test[2] >= 0).sum()),
        "n_workers": len(workers), "n_classes": len(tags), "seq_len": seq_len,
        "tagged_sentences": kept["val"], "tagged_sentences_test": kept["test"],
        "tagged_sentences_dropped": dropped["val"],
        "tagged_sentences_dropped_test": dropped["test"],
        "class_names": tags,
    }
    descr = (
        f"conll2003_ner_mturk: training split (the release's val documents) {len(data)} "
        f"sentences, {stats['n_tokens']} tokens, {kept['val']} sentences tagged by a worker; "
        f"test split (its test documents) {len(test[0])} sentences, {stats['n_tokens_test']} "
        f"tokens, {kept['test']} sentences tagged by a worker (votes_test: for aggregation; a "
        f"model scored on target_test must not train on them); {len(workers)} workers, "
        f"{len(tags)} tags ({', '.join(tags)}); sentences padded to {seq_len} tokens. "
        f"{dropped['val'] + dropped['test']} tagged sentences of workers were dropped "
        f"({dropped['val']} training, {dropped['test']} test): their tokens differ from the "
        "ground truth's (the tagging interface split or merged tokens), so their tags fit no "
        "token."
    )
    return Bunch(
        data=data, votes=votes, target=target, data_test=test[0], votes_test=test[1],
        target_test=test[2], class_names=np.array(tags), task_ids=task_ids,
        task_ids_test=test[3], worker_ids=np.array(workers, dtype=object), stats=stats,
        DESCR=descr,
    )


# ---------------------------------------------------------------------------
# readinglevel_chen2013: pairwise comparisons 'worker winner loser', grade levels as gold
# crowdspeech_*: transcriptions of LibriSpeech recordings, tab-separated, reference texts
# ---------------------------------------------------------------------------

def _pandas(name):
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - pandas is in the datasets extra
        raise ImportError(f"{name} is returned as pandas objects: pip install \".[datasets]\" "
                          "from a checkout of skcrowd (or pip install pandas).") from exc
    return pd


def _int_id(value, where):
    if not value.isdigit():
        raise ValueError(f"{where}: expected a non-negative integer id, got {value!r}.")
    return int(value)


def convert_reading_level(paths):
    """Pairwise comparisons of text passages by reading difficulty, and their grade levels.

    Parameters
    ----------
    paths : dict
        Local path of ``all_pair.txt`` (one comparison a line, ``worker winner loser``,
        whitespace-separated integer ids; the winner is the passage judged harder to read) and
        ``doc_info.txt`` (``passage level``, the passage's grade level 1-12), by name.

    Returns
    -------
    sklearn.utils.Bunch
        ``comparisons``, a pandas DataFrame with one row per comparison and the columns
        ``worker, left, right, label`` (``left`` the smaller passage id of the pair,
        ``right`` the larger, ``label`` the passage judged harder, so the file's
        winner-first order does not make every label the left item), in file order;
        ``target``, a pandas Series of grade levels indexed by passage id; ``data``
        (None), ``item_ids``, ``worker_ids`` (sorted), ``stats``, ``DESCR``. The rows that
        compare a passage with itself carry no preference and are dropped (counted in
        ``stats["self_comparisons_dropped"]``); repeated comparisons are kept (counted in
        ``stats["repeated_rows"]``).
    """
    pd = _pandas("readinglevel_chen2013")
    pairs_name, levels_name = "all_pair.txt", "doc_info.txt"
    rows, self_rows = [], 0
    for line, text in _numbered_lines(paths[pairs_name]):
        fields = text.split()
        if len(fields) != 3:
            raise ValueError(f"{pairs_name} line {line}: expected 'worker winner loser', got "
                             f"{text!r}.")
        worker, winner, loser = (_int_id(f, f"{pairs_name} line {line}") for f in fields)
        if winner == loser:
            self_rows += 1
            continue
        rows.append((worker, min(winner, loser), max(winner, loser), winner))
    if not rows:
        raise ValueError(f"{pairs_name} holds no comparisons.")
    levels = {}
    for line, text in _numbered_lines(paths[levels_name]):
        fields = text.split()
        if len(fields) != 2:
            raise ValueError(f"{levels_name} line {line}: expected 'passage level', got "
                             f"{text!r}.")
        passage, level = (_int_id(f, f"{levels_name} line {line}") for f in fields)
        if passage in levels:
            raise ValueError(f"{levels_name} line {line}: passage {passage} has a level already.")
        levels[passage] = level
    comparisons = pd.DataFrame(rows, columns=["worker", "left", "right", "label"])
    items = np.unique(comparisons[["left", "right"]].to_numpy())
    unknown = np.setdiff1d(items, list(levels))
    if unknown.size:
        raise ValueError(f"{levels_name} has no level for the compared passages "
                         f"{unknown[:5].tolist()}{' ...' if unknown.size > 5 else ''}.")
    target = pd.Series(levels, name="level").sort_index()
    target.index.name = "item"
    stats = {
        "name": "readinglevel_chen2013", "kind": "pairwise", "n_items": int(items.size),
        "n_workers": int(comparisons["worker"].nunique()), "n_comparisons": len(comparisons),
        "n_gold": len(target), "self_comparisons_dropped": self_rows,
        "repeated_rows": int(comparisons.duplicated().sum()),
    }
    descr = (
        f"readinglevel_chen2013: {stats['n_comparisons']} comparisons of {stats['n_items']} "
        f"passages by {stats['n_workers']} workers (which of two passages is harder to read), "
        f"with each passage's grade level (target, 1-12); {self_rows} rows comparing a passage "
        f"with itself dropped, {stats['repeated_rows']} repeated rows kept."
    )
    return Bunch(comparisons=comparisons, target=target, data=None, item_ids=items,
                 worker_ids=np.sort(comparisons["worker"].unique()), stats=stats, DESCR=descr)


#: The four splits of CrowdSpeech (Pavlichenko et al. 2021), as in their file names.
CROWDSPEECH_SPLITS = ("dev-clean", "dev-other", "test-clean", "test-other")


def _recording(url, where):
    """The id of a recording: its file name without ``.mp3`` (``.../dev-clean/76.mp3`` -> 76)."""
    stem = url.rsplit("/", 1)[-1]
    if not stem.endswith(".mp3") or not stem[:-4]:
        raise ValueError(f"{where}: expected the URL of an .mp3 recording, got {url!r}.")
    return stem[:-4]


def convert_crowdspeech(paths, split):
    """Crowd transcriptions of LibriSpeech recordings (CrowdSpeech), and the reference texts.

    Parameters
    ----------
    paths : dict
        Local path of ``crowdspeech-<split>-crowd.tsv`` (tab-separated, header
        ``INPUT:audio OUTPUT:transcription ASSIGNMENT:worker_id``, one transcription a row;
        quoted fields may hold newlines) and ``crowdspeech-<split>-gt.txt`` (no header,
        ``audio<TAB>reference``), by name.
    split : {"dev-clean", "dev-other", "test-clean", "test-other"}

    Returns
    -------
    sklearn.utils.Bunch
        ``votes``, a pandas DataFrame of strings (recordings x workers, None where a worker
        did not transcribe a recording), indexed by recording id (the audio file's name
        without ``.mp3``, in numeric order) with the worker ids as columns (numeric order);
        ``target``, a pandas Series of the reference transcripts (lowercase, no punctuation,
        as published: normalize the crowd's texts the same way before computing word error
        rates) indexed like ``votes``; ``data`` (None), ``task_ids``, ``worker_ids``,
        ``audio`` (the recordings' URLs, indexed like ``votes``), ``stats``, ``DESCR``. A
        worker transcribing a recording twice, an empty transcription or a recording
        without reference raises, naming the file and line.
    """
    pd = _pandas(f"crowdspeech_{split}")
    crowd_name, gt_name = f"crowdspeech-{split}-crowd.tsv", f"crowdspeech-{split}-gt.txt"
    header, rows = csv_rows(paths[crowd_name], delimiter="\t", name=crowd_name)
    i_audio, i_text, i_worker = _column_indices(
        header, ["INPUT:audio", "OUTPUT:transcription", "ASSIGNMENT:worker_id"], crowd_name)
    answers, urls = {}, {}
    for line, fields in rows:
        where = f"{crowd_name} line {line}"
        if len(fields) <= max(i_audio, i_text, i_worker) or not fields[i_text]:
            raise ValueError(f"{where}: expected an audio URL, a transcription and a worker id, "
                             f"got {fields!r}.")
        task = _recording(fields[i_audio], where)
        urls[task] = fields[i_audio]
        key = (task, fields[i_worker])
        if key in answers:
            raise ValueError(f"{where}: worker {key[1]} transcribes recording {task} a second "
                             "time.")
        answers[key] = fields[i_text]
    _, gt_rows = csv_rows(paths[gt_name], delimiter="\t", header=False, name=gt_name)
    _require(gt_rows, gt_name, 2, "'audio<TAB>reference'")
    reference = {_recording(f[0], f"{gt_name} line {line}"): f[1] for line, f in gt_rows}
    tasks = _sorted_ids(task for task, _ in answers)
    workers = _sorted_ids(worker for _, worker in answers)
    missing = [t for t in tasks if t not in reference]
    if missing:
        raise ValueError(f"{gt_name} has no reference for the recordings {missing[:5]}.")
    task_index = {t: i for i, t in enumerate(tasks)}
    worker_index = {w: j for j, w in enumerate(workers)}
    matrix = np.full((len(tasks), len(workers)), None, dtype=object)
    for (task, worker), text in answers.items():
        matrix[task_index[task], worker_index[worker]] = text
    votes = pd.DataFrame(matrix, index=pd.Index(tasks, name="task"),
                         columns=pd.Index(workers, name="worker"), dtype=object)
    target = pd.Series([reference[t] for t in tasks], index=votes.index, name="reference")
    per_task = votes.notna().sum(axis=1)
    stats = {
        "name": f"crowdspeech_{split}", "kind": "text", "n_tasks": len(tasks),
        "n_workers": len(workers), "n_votes": len(answers), "n_gold": len(target),
        "votes_per_task_min": int(per_task.min()), "votes_per_task_max": int(per_task.max()),
        "references_without_votes": len(reference) - len(tasks),
    }
    descr = (
        f"crowdspeech_{split}: {len(answers)} transcriptions of {len(tasks)} LibriSpeech "
        f"{split} recordings by {len(workers)} workers ({stats['votes_per_task_min']}-"
        f"{stats['votes_per_task_max']} a recording), with the reference transcripts (target)."
    )
    return Bunch(votes=votes, target=target, data=None, task_ids=np.array(tasks, dtype=object),
                 worker_ids=np.array(workers, dtype=object),
                 audio=pd.Series([urls[t] for t in tasks], index=votes.index, name="audio"),
                 stats=stats, DESCR=descr)
