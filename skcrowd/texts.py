"""Aggregators of free-text answers: one text per task from a votes matrix of strings.

The votes matrix is ``X`` as for the class aggregators (tasks are rows, workers are columns),
but an entry is a string (a transcription, a translation), ``None`` or NaN where the worker did
not answer. ``predict`` gives one string per task, as a class aggregator gives one label.

- :class:`ROVER` (Fiscus 1997): the answers are aligned word by word into a word transition
  network, then each slot of the network is decided by a vote.
- :class:`WeightedROVER`: ROVER with a reliability per worker learned jointly with the
  consensus (a worker whose words often differ from the consensus counts less).
- :class:`ClosestToAverage`, :class:`RASA` (Li and Fukumoto 2019) and :class:`HRRASA` (Li 2020):
  the answers are embedded (by an ``encoder``), and the answer closest to a (weighted) mean
  embedding of its task is chosen; RASA and HRRASA weigh the workers by how close their
  answers are to those means.

Input policy (:func:`check_texts`): ``None`` and NaN mark a missing answer; an empty or
whitespace-only string is an error (it is not a missing answer, which is ``None``), as is an
entry that is not a string, and a task (row) without any answer: each message names the row and
the worker.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections import Counter
from itertools import combinations

import numpy as np
import scipy.sparse as sp
from scipy.stats import chi2
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from .aggregation._continuous import _cell
from .base import _as_it_was_on_error
from .metrics._texts import _edit_distance, word_error_rate

__all__ = ["ROVER", "WeightedROVER", "ClosestToAverage", "RASA", "HRRASA", "check_texts"]

_EPS = 1e-5  # floor of a worker's summed squared distance and of a local reliability


def _entry_kind(value):
    """0: a string, 1: missing (None, NaN, pandas.NA), 2: anything else."""
    if isinstance(value, str):
        return 0
    if value is None or type(value).__name__ == "NAType":
        return 1
    return 1 if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) \
        and math.isnan(value) else 2


_ENTRY_KINDS = np.frompyfunc(_entry_kind, 1, 1)


def check_texts(X, *, feature_names=None, name="X"):
    """Votes matrix of strings of ``X``: ``None`` where a worker did not answer a task.

    Parameters
    ----------
    X : array-like of shape (n_tasks, n_workers)
        Answers: strings, ``None`` or NaN (or ``pandas.NA``) for no answer. A pandas
        DataFrame of strings (tasks x workers) is taken as is.
    feature_names : array-like of str or None, default=None
        Worker names for the messages.
    name : str, default="X"
        Argument name for the messages.

    Returns
    -------
    texts : ndarray of shape (n_tasks, n_workers), dtype object
        The answers, ``None`` where missing.

    Raises
    ------
    TypeError
        If an entry is neither a string nor missing (the message names the row and worker).
    ValueError
        If ``X`` is not 2-D, if an answer is empty or only whitespace (mark a missing answer
        with ``None``), or if a task has no answer: the message names the row (and the worker).

    Examples
    --------
    >>> from skcrowd.texts import check_texts
    >>> check_texts([["a cat", None], [float("nan"), "the dog"]])
    array([['a cat', None],
           [None, 'the dog']], dtype=object)
    >>> try:
    ...     check_texts([["a cat", " "]])
    ... except ValueError as exc:
    ...     print(exc)
    X row 0, worker 1 (column 1): the answer ' ' is empty; mark a missing answer with None or NaN.
    """
    array = np.asarray(X, dtype=object)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D votes matrix of strings (tasks x workers), got "
                         f"an array of shape {array.shape}.")
    kinds = _ENTRY_KINDS(array).astype(np.int8) if array.size else np.ones(array.shape, np.int8)
    for i, j in np.argwhere(kinds == 2)[:1]:
        raise TypeError(f"{name} {_cell(i, j, feature_names)}: {array[i, j]!r} is not a "
                        "string; answers must be strings (None or NaN for no answer).")
    is_text = kinds == 0
    for i, j in zip(*np.nonzero(is_text)):
        if not array[i, j].strip():
            raise ValueError(f"{name} {_cell(i, j, feature_names)}: the answer {array[i, j]!r} "
                             "is empty; mark a missing answer with None or NaN.")
    empty = np.flatnonzero(~is_text.any(axis=1))
    if len(empty):
        raise ValueError(f"{name} row {empty[0]} has no answer (every entry is None or NaN); "
                         "drop the tasks without answers first.")
    texts = np.full(array.shape, None, dtype=object)
    texts[is_text] = [str(value) for value in array[is_text]]
    return texts


class _Answers:
    """The observed answers of a votes matrix of strings, in task order (row-major).

    ``task``, ``worker``: the row and column of each answer; ``texts``: the answers (a list);
    ``starts``: answers ``starts[i]:starts[i + 1]`` are those of task ``i``.
    """

    def __init__(self, matrix):
        self.n_tasks, self.n_workers = matrix.shape
        self.task, self.worker = np.nonzero(np.not_equal(matrix, None))
        self.texts = matrix[self.task, self.worker].tolist()
        self.starts = np.searchsorted(self.task, np.arange(self.n_tasks + 1))

    def tasks(self):
        """``(start, stop)`` of each task's answers."""
        return zip(self.starts[:-1].tolist(), self.starts[1:].tolist())


class _BaseTextAggregator(BaseEstimator):
    """Common validation of the text aggregators (votes matrix of strings ``X``, no ``y``)."""

    _parameter_constraints: dict = {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        tags.target_tags.required = False
        return tags

    def _answers(self, X, *, reset):
        checked = validate_data(self, X, reset=reset, dtype=None, ensure_all_finite=False,
                                ensure_min_samples=1)
        return _Answers(check_texts(checked,
                                    feature_names=getattr(self, "feature_names_in_", None)))

    def fit(self, X, y=None):
        """Fit the aggregator on the answers ``X``.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_workers)
            Answers (strings), ``None`` or NaN where a worker did not answer a task.
        y : None
            Ignored (the reference texts are for ``score``).

        Returns
        -------
        self : object
        """
        self._fit_texts(X)
        return self

    def _fit_texts(self, X):
        """Fit on ``X`` and return the aggregated texts of its tasks (``_fit``'s result)."""
        with _as_it_was_on_error(self):
            self._validate_params()
            return self._fit(self._answers(X, reset=True))

    def fit_predict(self, X, y=None):
        """Fit on the answers ``X`` and return the aggregated text of each task.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_workers)
            Answers.
        y : None
            Ignored.

        Returns
        -------
        texts : ndarray of shape (n_tasks,), dtype object
            The same as ``fit(X).predict(X)``, without aggregating twice.
        """
        return self._fit_texts(X)

    def predict(self, X):
        """Aggregated text of each task of ``X`` (with the fitted workers' model).

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_workers)
            Answers of the fitted workers (columns); tasks may be new.

        Returns
        -------
        texts : ndarray of shape (n_tasks,), dtype object
        """
        check_is_fitted(self)
        return self._predict(self._answers(X, reset=False))

    def score(self, X, y):
        """Word accuracy, ``1 - word_error_rate(y, self.predict(X))``, against reference texts.

        Parameters
        ----------
        X : array-like of shape (n_tasks, n_workers)
            Answers.
        y : array-like of shape (n_tasks,)
            Reference text of each task.

        Returns
        -------
        score : float
            One minus the word error rate (normalized: lowercase, no punctuation); higher is
            better, 1 for no error.
        """
        return 1.0 - word_error_rate(y, self.predict(X))


# ---------------------------------------------------------------------------
# ROVER: word alignment into a word transition network, a vote per slot
# ---------------------------------------------------------------------------

def _align(slots, members, hypothesis, n_before):
    """Align ``hypothesis`` (a token tuple) to the network and return the new network.

    ``slots[j]`` lists the token of each of the ``n_before`` hypotheses already aligned in
    slot ``j`` (None: the null word), ``members[j]`` the set of those tokens. Edit distance
    with a null word: a token in a slot that holds it costs 0, in another slot 1 (a
    substitution); leaving a slot (the null word) costs 0 where the slot holds the null word,
    else 1; a new slot (null word for the earlier hypotheses) costs 1. Ties prefer a
    match or substitution, then a null word, then a new slot.
    """
    n, m = len(hypothesis), len(slots)
    null_cost = [0 if None in s else 1 for s in members]
    previous = [0] * (m + 1)
    back = [[1] * (m + 1)]  # 0: diagonal, 1: null word (left), 2: new slot (up)
    for j in range(m):
        previous[j + 1] = previous[j] + null_cost[j]
    for i in range(1, n + 1):
        word = hypothesis[i - 1]
        current = [i] + [0] * m
        pointers = [2] + [0] * m
        for j in range(1, m + 1):
            best = previous[j - 1] + (word not in members[j - 1])
            move = 0
            left = current[j - 1] + null_cost[j - 1]
            if left < best:
                best, move = left, 1
            if previous[j] + 1 < best:
                best, move = previous[j] + 1, 2
            current[j], pointers[j] = best, move
        back.append(pointers)
        previous = current
    new_slots, new_members = [], []
    i, j = n, m
    while i or j:
        move = back[i][j]
        if move == 0:
            slot, token = slots[j - 1], hypothesis[i - 1]
            i, j = i - 1, j - 1
        elif move == 1:
            slot, token = slots[j - 1], None
            j -= 1
        else:
            slot, token = [None] * n_before, hypothesis[i - 1]
            i -= 1
        new_slots.append(slot + [token])
        new_members.append(set(new_slots[-1]))
    return new_slots[::-1], new_members[::-1]


class _Network:
    """Word transition network of one task's answers.

    The distinct token sequences (hypotheses) are aligned one after the other, the most
    central first: in increasing order of their summed word edit distance to the task's
    answers, ties by token sequence. ``hypothesis_of[a]`` is the hypothesis of the task's
    ``a``-th answer, ``slots[j][h]`` the token of hypothesis ``h`` in slot ``j`` (None: the
    null word).
    """

    def __init__(self, token_lists):
        distinct = sorted(set(token_lists))
        count = Counter(token_lists)
        distance = dict.fromkeys(distinct, 0)
        for a, b in combinations(distinct, 2):
            d = _edit_distance(a, b)
            distance[a] += d * count[b]
            distance[b] += d * count[a]
        order = sorted(distinct, key=lambda h: distance[h])  # stable: ties by token sequence
        position = {h: k for k, h in enumerate(order)}
        self.hypothesis_of = np.array([position[t] for t in token_lists], dtype=np.intp)
        self.n_hypotheses = len(order)
        slots = [[token] for token in order[0]]
        members = [{token} for token in order[0]]
        for k, hypothesis in enumerate(order[1:], start=1):
            slots, members = _align(slots, members, hypothesis, k)
        self.slots = slots

    def vote(self, weights, current=None):
        """The token of each slot with the largest summed weight of its hypotheses.

        Ties go to ``current``'s token where it is among the best, else to the token of the
        first hypothesis (the most central) holding one of the best.
        """
        result = []
        for j, slot in enumerate(self.slots):
            totals = {}
            for token, weight in zip(slot, weights):
                totals[token] = totals.get(token, 0.0) + weight
            best = max(totals, key=totals.__getitem__)  # the first of the best, in order
            if current is not None and totals.get(current[j], -np.inf) == totals[best]:
                best = current[j]
            result.append(best)
        return result

    def mismatches(self, consensus):
        """Number of slots where each hypothesis's token differs from ``consensus``."""
        counts = np.zeros(self.n_hypotheses)
        for slot, token in zip(self.slots, consensus):
            for h, own in enumerate(slot):
                counts[h] += own != token
        return counts


def _whitespace_tokens(text):
    return text.split()


def _space_join(tokens):
    return " ".join(tokens)


class _BaseROVER(_BaseTextAggregator):
    _parameter_constraints: dict = {
        "tokenizer": [callable, None],
        "detokenizer": [callable, None],
    }

    def __init__(self, *, tokenizer=None, detokenizer=None):
        self.tokenizer = tokenizer
        self.detokenizer = detokenizer

    def _networks(self, answers):
        tokenize = self.tokenizer or _whitespace_tokens
        networks = []
        for start, stop in answers.tasks():
            tokens = []
            for a in range(start, stop):
                words = tuple(tokenize(answers.texts[a]))
                if not words:
                    raise ValueError(
                        f"X row {answers.task[a]}, worker {answers.worker[a]}: the tokenizer "
                        f"gave no token for the answer {answers.texts[a]!r}.")
                tokens.append(words)
            networks.append(_Network(tokens))
        return networks

    def _hypothesis_weights(self, network, worker_weights):
        return np.bincount(network.hypothesis_of, worker_weights,
                           minlength=network.n_hypotheses)

    def _texts(self, consensus):
        detokenize = self.detokenizer or _space_join
        return np.array([detokenize([t for t in tokens if t is not None])
                         for tokens in consensus], dtype=object)

    def _vote(self, answers, networks, weights, current=None):
        """The consensus tokens of each task, ``weights`` per worker."""
        return [network.vote(self._hypothesis_weights(network, weights[answers.worker[start:stop]]),
                             None if current is None else current[i])
                for i, (network, (start, stop)) in enumerate(zip(networks, answers.tasks()))]

    def _predict(self, answers):
        return self._texts(self._vote(answers, self._networks(answers),
                                      self._worker_weights(answers)))


class ROVER(_BaseROVER):
    """Recognizer Output Voting Error Reduction (ROVER): a vote per slot of aligned words.

    The answers of a task are tokenized (``tokenizer``, whitespace by default) and aligned into
    a word transition network (Fiscus 1997): one answer after the other is aligned to the
    network by an edit distance with a null word (a word in a slot that holds it costs 0,
    another word 1, leaving a slot 1 unless it already holds the null word, a new slot 1).
    Each slot then takes its most frequent word (or the null word, which drops the slot), and
    the words are joined (``detokenizer``, a space by default).

    Identical answers are aligned once (their votes add up), and the answers are aligned in a
    fixed order, the most central first: by increasing summed word edit distance to the task's
    answers, ties by their words. So the result does not depend on the order of the workers
    (columns). A tie in a slot goes to the word of the most central answer holding one of the
    tied words. ``fit`` learns nothing but the number of workers; ``predict`` aggregates the
    answers it is given.

    Parameters
    ----------
    tokenizer : callable or None, default=None
        ``tokenizer(text) -> list of str``; None splits on whitespace.
    detokenizer : callable or None, default=None
        ``detokenizer(list of str) -> str``; None joins with a space.

    Attributes
    ----------
    n_features_in_ : int
        Number of workers (columns) seen during fit.
    feature_names_in_ : ndarray of str
        Worker names, when ``X`` was a DataFrame with string column names.

    See Also
    --------
    WeightedROVER : ROVER with a reliability per worker.
    skcrowd.metrics.word_error_rate : The word error rate of aggregated texts.

    References
    ----------
    J. G. Fiscus, "A post-processing system to yield reduced word error rates: Recognizer
    Output Voting Error Reduction (ROVER)", IEEE Workshop on Automatic Speech Recognition and
    Understanding, 1997, 347-354.

    Examples
    --------
    >>> from skcrowd.texts import ROVER
    >>> X = [["the cat sat", "a cat sat down", "the cat sat down"],
    ...      ["hello world", "hello word", None]]
    >>> ROVER().fit_predict(X).tolist()
    ['the cat sat down', 'hello word']

    The second task is a tie: both answers are as central, so the first by its words
    (``"word" < "world"``) decides.
    """

    def _fit(self, answers):
        return self._predict(answers)

    def _worker_weights(self, answers):
        return np.ones(answers.n_workers)


class WeightedROVER(_BaseROVER):
    """ROVER with a word error rate per worker, learned jointly with the consensus.

    The answers are aligned as by :class:`ROVER` (once). Worker ``j`` writes, in each slot of
    the networks of its tasks, the consensus word with probability ``1 - e_j`` (else another
    word or the null word). The model is fitted by coordinate ascent of its log posterior
    (a Beta prior of mean ``prior_error_rate`` and weight ``prior_strength`` slots on each
    ``e_j``): given the consensus, ``e_j`` is the MAP rate of slots where the worker differs
    from it; given the rates, each slot takes the word with the largest summed weight
    ``log((1 - e_j) / e_j)`` of the workers who wrote it (the consensus that maximizes the
    posterior, among the words of the slot). The iteration starts from the plain ROVER vote.

    **Guarantee**: the log posterior (``log_posterior_``) never decreases, and the consensus
    changes only where a word's weight is strictly larger (a tie keeps the current word), so
    the iteration stops at a fixed point after finitely many iterations (the networks are fixed
    and have finitely many consensus choices); ``max_iter`` only bounds the count. Workers
    whose words often differ from the consensus (noisy or careless workers) get small or
    negative weights.

    Parameters
    ----------
    tokenizer : callable or None, default=None
        ``tokenizer(text) -> list of str``; None splits on whitespace.
    detokenizer : callable or None, default=None
        ``detokenizer(list of str) -> str``; None joins with a space.
    prior_error_rate : float in (0, 1), default=0.1
        Mean of the Beta prior of each worker's error rate per slot.
    prior_strength : float >= 0, default=10.0
        Weight of the prior, in slots: a worker with few answers stays near
        ``prior_error_rate``.
    max_iter : int, default=100
        Maximum number of iterations (a ConvergenceWarning if reached).

    Attributes
    ----------
    error_rates_ : ndarray of shape (n_workers,)
        MAP error rate of each worker per slot (``prior_error_rate``'s MAP for a worker
        without answers).
    weights_ : ndarray of shape (n_workers,)
        Vote weight ``log((1 - e_j) / e_j)`` of each worker.
    log_posterior_ : list of float
        Log posterior (up to a constant) after each iteration's rate update; non-decreasing.
    n_iter_ : int
        Number of iterations run.
    n_features_in_ : int
        Number of workers (columns) seen during fit.
    feature_names_in_ : ndarray of str
        Worker names, when ``X`` was a DataFrame with string column names.

    See Also
    --------
    ROVER : The same alignment with a vote of equal weights.

    Examples
    --------
    >>> from skcrowd.texts import WeightedROVER
    >>> X = [["the cat sat", "the cat sat", "a dog ran"],
    ...      ["hello world", "hello world", "hi word"],
    ...      ["one two", "one too", "one two"]]
    >>> model = WeightedROVER().fit(X)
    >>> model.predict(X).tolist()
    ['the cat sat', 'hello world', 'one two']
    >>> bool(model.weights_[2] < model.weights_[0])
    True
    """

    _parameter_constraints: dict = {
        **_BaseROVER._parameter_constraints,
        "prior_error_rate": [Interval(numbers.Real, 0, 1, closed="neither")],
        "prior_strength": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, *, tokenizer=None, detokenizer=None, prior_error_rate=0.1,
                 prior_strength=10.0, max_iter=100):
        super().__init__(tokenizer=tokenizer, detokenizer=detokenizer)
        self.prior_error_rate = prior_error_rate
        self.prior_strength = prior_strength
        self.max_iter = max_iter

    def _fit(self, answers):
        networks = self._networks(answers)
        n_workers = answers.n_workers
        slots = np.bincount(answers.worker, np.repeat(
            [len(network.slots) for network in networks], np.diff(answers.starts)),
            minlength=n_workers)
        prior_errors = self.prior_strength * self.prior_error_rate
        prior_right = self.prior_strength - prior_errors
        consensus = self._vote(answers, networks, np.ones(n_workers))
        history = []
        for n_iter in range(1, self.max_iter + 1):
            errors = np.bincount(answers.worker, np.concatenate([
                network.mismatches(tokens)[network.hypothesis_of]
                for network, tokens in zip(networks, consensus)]), minlength=n_workers)
            rates = np.clip((errors + prior_errors) / (slots + self.prior_strength),
                            np.finfo(float).tiny, 1 - np.finfo(float).eps)
            weights = np.log1p(-rates) - np.log(rates)
            history.append(float(np.sum((errors + prior_errors) * np.log(rates)
                                        + (slots - errors + prior_right) * np.log1p(-rates))))
            updated = self._vote(answers, networks, weights, consensus)
            if updated == consensus:
                break
            consensus = updated
        else:
            warnings.warn(f"WeightedROVER did not reach a fixed point in max_iter="
                          f"{self.max_iter} iterations.", ConvergenceWarning)
        self.error_rates_, self.weights_ = rates, weights
        self.log_posterior_, self.n_iter_ = history, n_iter
        return self._texts(self._vote(answers, networks, weights))

    def _worker_weights(self, answers):
        return self.weights_


# ---------------------------------------------------------------------------
# Embeddings: the answer closest to a (weighted) mean embedding
# ---------------------------------------------------------------------------

def _default_encoder():
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4))


def _ngram_counts(tokens, max_n=4):
    return Counter(tuple(tokens[i:i + n]) for n in range(1, max_n + 1)
                   for i in range(len(tokens) - n + 1))


def _gleu(a, b):
    """GLEU of two n-gram counts (1- to 4-grams): matches over the larger n-gram total, the
    minimum of precision and recall (Wu et al. 2016), so symmetric."""
    total = max(sum(a.values()), sum(b.values()))
    return sum((a & b).values()) / total if total else 0.0


class _Grams:
    """Inner products of the embeddings of the answers of each task, and the weighted means.

    Every quantity the embedding aggregators need (distances of the answers to their task's
    weighted mean embedding, cosines, the mean's norm) is a product of a task's Gram matrix
    with the answers' weights, so the means are never formed: ``gram`` is the block-diagonal
    (answers x answers) sparse matrix of the tasks' Gram matrices.
    """

    def __init__(self, answers, embeddings):
        self.answers = answers
        blocks, self.norms = [], np.empty(len(answers.texts))
        for start, stop in answers.tasks():
            block = embeddings[start:stop]
            block = block @ block.T
            block = block.toarray() if sp.issparse(block) else np.asarray(block)
            blocks.append(block)
            self.norms[start:stop] = np.diag(block)
        self.blocks = blocks
        self.gram = sp.block_diag(blocks, format="csr") if blocks else None

    def proportions(self, weights):
        """Each answer's weight over its task's total weight."""
        return weights / np.bincount(self.answers.task, weights)[self.answers.task]

    def mean_norms(self, proportions):
        """Squared norm of each task's mean for the weights ``proportions``, and each answer's
        inner product with its task's mean."""
        dots = self.gram @ proportions
        return np.bincount(self.answers.task, proportions * dots), dots

    def squared_distances(self, proportions):
        """Squared distance of each answer to its task's mean."""
        mean_norms, dots = self.mean_norms(proportions)
        return np.maximum(self.norms - 2 * dots + mean_norms[self.answers.task], 0.0)

    def closest(self, proportions):
        """The answer of each task of the smallest cosine distance to its mean (a zero vector
        is at distance 1 of anything), ties by text."""
        answers = self.answers
        mean_norms, dots = self.mean_norms(proportions)
        norms = np.sqrt(self.norms * mean_norms[answers.task])
        cosine = 1.0 - np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
        texts = np.array(answers.texts, dtype=object)
        rank = np.unique(texts, return_inverse=True)[1]
        order = np.lexsort((rank, cosine, answers.task))
        return texts[order[answers.starts[:-1]]]


class _BaseEmbeddingAggregator(_BaseTextAggregator):
    _parameter_constraints: dict = {
        "encoder": [callable, HasMethods(["transform"]), None],
    }

    def __init__(self, *, encoder=None):
        self.encoder = encoder

    def _fit_grams(self, answers):
        """Fit the encoder (``encoder_``) on the answers and return their :class:`_Grams`."""
        encoder = _default_encoder() if self.encoder is None else self.encoder
        embeddings = None
        if hasattr(encoder, "fit_transform"):
            encoder = clone(encoder)
            embeddings = encoder.fit_transform(answers.texts)
        elif hasattr(encoder, "fit") and hasattr(encoder, "transform"):
            encoder = clone(encoder).fit(answers.texts)
        self.encoder_ = encoder
        return self._grams(answers, embeddings)

    def _grams(self, answers, embeddings=None):
        """The :class:`_Grams` of the answers' ``embeddings`` (None: by the fitted encoder)."""
        texts = answers.texts
        encoder = self.encoder_
        if embeddings is None:
            embeddings = encoder.transform(texts) if hasattr(encoder, "transform") \
                else encoder(texts)
        if sp.issparse(embeddings):
            embeddings = sp.csr_array(embeddings, dtype=np.float64)
            values = embeddings.data
        else:
            embeddings = np.asarray(embeddings, dtype=np.float64)
            values = embeddings
            if embeddings.ndim != 2:
                raise ValueError(f"The encoder must return a 2-D array (one row per answer), "
                                 f"got shape {embeddings.shape}.")
        if embeddings.shape[0] != len(texts):
            raise ValueError(f"The encoder returned {embeddings.shape[0]} rows for "
                             f"{len(texts)} answers.")
        if not np.isfinite(values).all():
            raise ValueError("The encoder returned NaN or infinite values.")
        return _Grams(answers, embeddings)


class ClosestToAverage(_BaseEmbeddingAggregator):
    """The answer closest (cosine) to the mean embedding of its task's answers.

    Parameters
    ----------
    encoder : callable, transformer or None, default=None
        Embeds a list of answers into a 2-D array (one row per answer, dense or sparse): a
        callable ``encoder(list of str)``, or a scikit-learn transformer (cloned and fitted on
        the answers at ``fit`` if it has ``fit``, then ``transform`` is used). None: a
        character 2- to 4-gram TF-IDF (``TfidfVectorizer(analyzer="char_wb",
        ngram_range=(2, 4))``), which needs no download; pass sentence embeddings for meaning.

    Attributes
    ----------
    encoder_ : object
        The encoder used (fitted on the answers of ``fit`` when it has ``fit``).
    n_features_in_ : int
        Number of workers (columns) seen during fit.
    feature_names_in_ : ndarray of str
        Worker names, when ``X`` was a DataFrame with string column names.

    See Also
    --------
    RASA : The same with the mean weighted by worker reliabilities.

    Examples
    --------
    >>> from skcrowd.texts import ClosestToAverage
    >>> X = [["the cat sat", "the cat sat down", "a cat sat"], ["hello", "hello", "hullo"]]
    >>> ClosestToAverage().fit_predict(X).tolist()
    ['the cat sat', 'hello']
    """

    def _fit(self, answers):
        return self._aggregate(self._fit_grams(answers))

    def _predict(self, answers):
        return self._aggregate(self._grams(answers))

    @staticmethod
    def _aggregate(grams):
        return grams.closest(grams.proportions(np.ones(len(grams.answers.texts))))


class RASA(_BaseEmbeddingAggregator):
    """Reliability Aware Sequence Aggregation (Li and Fukumoto 2019).

    The answers are embedded by ``encoder``; then, until the means settle, each task's mean
    embedding is the mean of its answers weighted by their workers' reliabilities ``beta_k``,
    and ``beta_k = chi2.isf(alpha / 2, n_k) / sum_i ||e_ik - mean_i||^2`` (``n_k``: the
    worker's number of answers; the sum is floored at 1e-5). Each task gets the answer closest
    (cosine) to its mean, ties by text.

    Parameters
    ----------
    encoder : callable, transformer or None, default=None
        Embeds a list of answers (see :class:`ClosestToAverage`); None: a character 2- to
        4-gram TF-IDF, which needs no download.
    alpha : float in (0, 1), default=0.05
        Significance level of the chi-squared quantile of the reliabilities.
    max_iter : int, default=100
        Maximum number of iterations (a ConvergenceWarning if reached).
    tol : float, default=1e-9
        Stop when the means move by less than ``tol`` (squared, relative to their squared
        norm).

    Attributes
    ----------
    skills_ : ndarray of shape (n_workers,)
        Reliability ``beta_k`` of each worker (a worker without answers gets the median of
        the others).
    encoder_ : object
        The encoder used.
    n_iter_ : int
        Number of iterations run.
    n_features_in_ : int
        Number of workers (columns) seen during fit.
    feature_names_in_ : ndarray of str
        Worker names, when ``X`` was a DataFrame with string column names.

    See Also
    --------
    HRRASA : RASA with a local reliability of each answer.

    References
    ----------
    J. Li and F. Fukumoto, "A Dataset of Crowdsourced Word Sequences: Collections and Answer
    Aggregation for Ground Truth Creation", Workshop on Aggregating and Analysing Crowdsourced
    Annotations for NLP, 2019, 24-28.

    Examples
    --------
    >>> from skcrowd.texts import RASA
    >>> X = [["the cat sat", "the cat sat", "a dog ran"], ["hello world", "hello world", "hi"]]
    >>> model = RASA().fit(X)
    >>> model.predict(X).tolist()
    ['the cat sat', 'hello world']
    >>> bool(model.skills_[2] < model.skills_[0])
    True
    """

    _parameter_constraints: dict = {
        **_BaseEmbeddingAggregator._parameter_constraints,
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, *, encoder=None, alpha=0.05, max_iter=100, tol=1e-9):
        super().__init__(encoder=encoder)
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol

    def _local(self, grams):
        """Local reliability of each answer (1 for RASA)."""
        return np.ones(len(grams.answers.texts))

    def _fit(self, answers):
        grams = self._fit_grams(answers)
        local = self._local(grams)
        counts = np.bincount(answers.worker, minlength=answers.n_workers)
        seen = counts > 0
        prior = chi2.isf(self.alpha / 2, np.maximum(counts, 1))
        skills = np.ones(answers.n_workers)
        proportions = grams.proportions(local)
        for n_iter in range(1, self.max_iter + 1):
            distances = grams.squared_distances(proportions) / local
            skills = prior / np.maximum(
                np.bincount(answers.worker, distances, minlength=answers.n_workers), _EPS)
            updated = grams.proportions(skills[answers.worker] * local)
            change = updated - proportions
            proportions = updated
            if change @ (grams.gram @ change) <= self.tol * grams.mean_norms(updated)[0].sum():
                break
        else:
            warnings.warn(f"{type(self).__name__} did not converge in max_iter="
                          f"{self.max_iter} iterations.", ConvergenceWarning)
        skills[~seen] = np.median(skills[seen])
        self.skills_, self.n_iter_ = skills, n_iter
        return grams.closest(proportions)

    def _predict(self, answers):
        grams = self._grams(answers)
        weights = self.skills_[answers.worker] * self._local(grams)
        return grams.closest(grams.proportions(weights))


class HRRASA(RASA):
    """Hybrid Reliability and Representation Aware Sequence Aggregation (Li 2020).

    RASA with a *local* reliability ``gamma_ik`` of each answer, its mean similarity to the
    other answers of its task: ``lambda_emb`` times the mean of
    ``exp(-||e_ik - e_ik'||^2 / (||e_ik||^2 ||e_ik'||^2))`` plus ``1 - lambda_emb`` times the
    mean GLEU (word 1- to 4-grams, Wu et al. 2016) of the answers (floored at 1e-5; 1 for the
    answer of a task with one answer). Each answer weighs ``beta_k * gamma_ik`` in its task's
    mean and ``beta_k = chi2.isf(alpha / 2, n_k) / sum_i ||e_ik - mean_i||^2 / gamma_ik``.

    Parameters
    ----------
    encoder : callable, transformer or None, default=None
        Embeds a list of answers (see :class:`ClosestToAverage`); None: a character 2- to
        4-gram TF-IDF, which needs no download.
    lambda_emb : float in [0, 1], default=0.5
        Weight of the embeddings' similarity in the local reliability (the words' GLEU has
        ``1 - lambda_emb``).
    alpha : float in (0, 1), default=0.05
        Significance level of the chi-squared quantile of the reliabilities.
    max_iter : int, default=100
        Maximum number of iterations (a ConvergenceWarning if reached).
    tol : float, default=1e-9
        Stop when the means move by less than ``tol`` (squared, relative).

    Attributes
    ----------
    skills_ : ndarray of shape (n_workers,)
        Global reliability ``beta_k`` of each worker.
    encoder_ : object
        The encoder used.
    n_iter_ : int
        Number of iterations run.
    n_features_in_ : int
        Number of workers (columns) seen during fit.
    feature_names_in_ : ndarray of str
        Worker names, when ``X`` was a DataFrame with string column names.

    References
    ----------
    J. Li, "Crowdsourced Text Sequence Aggregation based on Hybrid Reliability and
    Representation", SIGIR 2020, 1761-1764.

    Examples
    --------
    >>> from skcrowd.texts import HRRASA
    >>> X = [["the cat sat", "the cat sat", "a dog ran"], ["hello world", "hello world", "hi"]]
    >>> HRRASA().fit_predict(X).tolist()
    ['the cat sat', 'hello world']
    """

    _parameter_constraints: dict = {
        **RASA._parameter_constraints,
        "lambda_emb": [Interval(numbers.Real, 0, 1, closed="both")],
    }

    def __init__(self, *, encoder=None, lambda_emb=0.5, alpha=0.05, max_iter=100, tol=1e-9):
        super().__init__(encoder=encoder, alpha=alpha, max_iter=max_iter, tol=tol)
        self.lambda_emb = lambda_emb

    def _local(self, grams):
        answers = grams.answers
        local = np.ones(len(answers.texts))
        words = [_ngram_counts(text.split()) for text in answers.texts]
        for block, (start, stop) in zip(grams.blocks, answers.tasks()):
            if stop - start < 2:
                continue
            norms = np.diag(block)
            squared = np.maximum(norms[:, None] + norms[None, :] - 2 * block, 0.0)
            scale = norms[:, None] * norms[None, :]
            similar = np.exp(-np.divide(squared, scale, out=np.zeros_like(squared),
                                        where=scale > 0))
            gleu = np.eye(stop - start)
            for a, b in combinations(range(stop - start), 2):
                gleu[a, b] = gleu[b, a] = _gleu(words[start + a], words[start + b])
            mixed = self.lambda_emb * similar + (1 - self.lambda_emb) * gleu
            np.fill_diagonal(mixed, 0.0)
            local[start:stop] = mixed.sum(axis=1) / (stop - start - 1)
        return np.maximum(local, _EPS)
