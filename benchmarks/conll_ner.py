"""CoNLL-2003 named entities from crowd tags (seed 001, Rodrigues & Pereira 2018, table 3).

The crowd ``conll2003_ner_mturk`` of :func:`skcrowd.datasets.fetch_crowd_dataset`: the release's
``val`` documents (2997 sentences, 11545 of them tagged by 1-several of 47 workers) train, its
``test`` documents (3256 sentences) are scored against their gold tags: entity-level precision,
recall and F1 (CoNLL's rule: an entity is a maximal B-X I-X ... run, or an I-X run, of one type,
and counts only if its span and type are exact). Every method fits the same tagger with the same
training (:class:`~skcrowd.neural.SequenceCrowdLayerClassifier`'s defaults: Adam, batches of 64,
the learning rate and weight decay chosen on 20 % of the training sentences held out, the number
of epochs chosen on the same sentences, then refit on all; ``--settings fixed``: lr 1e-2 and no
weight decay, the crowd layer's constants before they were chosen per fit):

- ``CrowdLayer MW``, ``VW``, ``VW+B``: ``SequenceCrowdLayerClassifier(crowd_layer=...)`` on the
  crowd tags (a per-worker matrix, vector, vector and bias on each token's tag distribution), the
  paper's variants, started at ``crowd_layer_scale="auto"`` times the identity map (7.9 here),
  and ``CrowdLayer softmax``, skcrowd's softmax-CrowdLayer (each worker's map a
  confusion matrix, the vote probabilities a mixture over the tags);
- ``MV + tagger``: the tagger alone (no crowd layer) on each token's majority-vote tag (ties broken
  at random, seeded; tokens of sentences nobody tagged have no label);
- ``DS + tagger``: the same on each token's :class:`~skcrowd.aggregation.DawidSkene` tag (every
  tagged token one task, its defaults), the two-stage baseline of issue 24's section 2
  (``--two-stage-only``: only these two taggers);
- ``gold + tagger``: the tagger alone on the gold tags of the training sentences (upper bound);
- with ``--identity``, ``CrowdLayer MW, identity start``: ``crowd_layer_scale=1``, the paper's
  identity initialization of the crowd layer instead of the default ``"auto"`` scale (7.9 on
  this crowd, where 87 % of the votes are ``O``): it tags every token ``O`` (see the benchmarks
  page);
- with ``--pretrained``, ``CrowdLayer MW``, ``VW``, ``VW+B`` again, their backbone starting from
  the weights of the ``MV + tagger`` fit instead of a random initialization.

skcrowd has no deep EM for sequences (the paper's DL-EM, F1 .575), so it is not compared.

The tagger (this script's module; no pre-trained embeddings can be downloaded here): embeddings of
the lowercased word (50-d, words of the training sentences; others share an unknown-word vector),
of its last three letters (16-d, the suffixes of the training words) and of its shape (8-d:
digits, capitalized, all caps, punctuation, ...), a convolution over 5 tokens (100 filters, ReLU),
a bidirectional GRU (50 units per direction) over each sentence's tokens (padding excluded),
dropout 0.5 and a linear layer to the 9 tags. The paper's: 300-d GloVe embeddings, a convolution
over 5 tokens with 512 filters and a GRU of 50 units. The paper trained on 5985 crowd-tagged
sentences and tested on the 3250 sentences of CoNLL's test set; this release holds 2997 + 3256
crowd-tagged sentences (the CoNLL test set is not in it), so half of them train here.

To fit the time on one CPU core, one seed by default, at most 15 epochs (``--max-epochs``) and
3 epochs of patience (``--patience``) instead of the nets' 50 and 10. The search of the learning
rate and weight decay runs each fit about 3 times over (MW, seed 0: 497 s against 173 s at load
3-4); on MW, VW and VW+B (seed 0) it chose lr 1e-2 and no weight decay, the ``--settings fixed``
values, and gave the same nets.

Usage::

    python benchmarks/conll_ner.py --settings fixed --identity  # 1 seed, 19 min at load 3-4
    python benchmarks/conll_ner.py                      # lr and weight decay searched: 50 min
    python benchmarks/conll_ner.py --pretrained         # + MW, VW, VW+B from the MV backbone
    python benchmarks/conll_ner.py --seeds 3 --json results.json
    python benchmarks/conll_ner.py --data-home DIR      # DIR/sources/... holds task1.zip

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
from torch import nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run from a checkout without installing
SHARED_DATA = REPO.parent / "shared" / "data"

from skcrowd.aggregation import DawidSkene, MajorityVote  # noqa: E402
from skcrowd.neural import NoNoise, SequenceCrowdLayerClassifier  # noqa: E402

#: Rodrigues & Pereira (2018), table 3: test precision, recall, F1 (GloVe + CNN + GRU, 30 runs)
PAPER = {
    "CrowdLayer MW": (0.660, 0.593, 0.624),
    "CrowdLayer VW": (0.709, 0.472, 0.566),
    "CrowdLayer VW+B": (0.603, 0.609, 0.606),
    "MV + tagger": (0.664, 0.464, 0.546),
    "gold + tagger": (0.711, 0.740, 0.725),
}
#: The paper's crowd layers, and skcrowd's softmax-CrowdLayer (a proper mixture over the classes).
PAPER_LAYERS = ("MW", "VW", "VW+B")
LAYERS = (*PAPER_LAYERS, "softmax")
#: Token shapes: 0 is padding.
SHAPES = 8


def shape(token):
    """Shape class of a token: digits, with digits, all caps, capitalized, lower, punctuation."""
    if token.isdigit():
        return 1
    if any(c.isdigit() for c in token):
        return 2
    if token.isupper():
        return 3
    if token[0].isupper():
        return 4
    if token.islower():
        return 5
    if not any(c.isalnum() for c in token):
        return 6
    return 7


def encode(tokens, words, suffixes):
    """Token ids ``(n, seq_len, 3)``: word, shape and suffix; 0 for padding, 1 for unknown."""
    def ids(token):
        if not token:
            return 0, 0, 0
        low = token.lower()
        return words.get(low, 1), shape(token), suffixes.get(low[-3:], 1)

    return np.array([[ids(t) for t in sentence] for sentence in tokens], dtype=np.int64)


def load(data_home):
    """Encoded tokens, crowd and gold tags of the training sentences; test tokens and gold tags."""
    from skcrowd.datasets import fetch_crowd_dataset

    ds = fetch_crowd_dataset("conll2003_ner_mturk", data_home=data_home)
    train = sorted({t.lower() for t in ds.data.ravel() if t})
    words = {w: i for i, w in enumerate(train, start=2)}
    suffixes = {s: i for i, s in enumerate(sorted({w[-3:] for w in train}), start=2)}
    return dict(X=encode(ds.data, words, suffixes), votes=ds.votes, target=ds.target,
                X_test=encode(ds.data_test, words, suffixes), target_test=ds.target_test,
                class_names=ds.class_names, n_words=len(words) + 2,
                n_suffixes=len(suffixes) + 2)


class Tagger(nn.Module):
    """Word, suffix and shape embeddings, a convolution and a bidirectional GRU, per-token logits.

    ``X`` holds ``(word, shape, suffix)`` ids per token, word id 0 for padding; the GRU runs over
    each sentence's tokens only (packed sequences). ``initial_state``: a state dict to start from
    (a backbone trained before) instead of a random initialization.
    """

    def __init__(self, n_words, n_suffixes, n_classes, *, word_dim=50, suffix_dim=16,
                 shape_dim=8, filters=100, hidden_units=50, dropout=0.5, initial_state=None):
        super().__init__()
        self.word = nn.Embedding(n_words, word_dim, padding_idx=0)
        self.shape = nn.Embedding(SHAPES, shape_dim, padding_idx=0)
        self.suffix = nn.Embedding(n_suffixes, suffix_dim, padding_idx=0)
        self.conv = nn.Conv1d(word_dim + shape_dim + suffix_dim, filters, 5, padding=2)
        self.gru = nn.GRU(filters, hidden_units, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.output = nn.Linear(2 * hidden_units, n_classes)
        if initial_state is not None:
            self.load_state_dict(initial_state)

    def forward(self, X):
        e = torch.cat([self.word(X[..., 0]), self.shape(X[..., 1]), self.suffix(X[..., 2])], -1)
        h = torch.relu(self.conv(self.dropout(e).transpose(1, 2))).transpose(1, 2)
        lengths = (X[..., 0] > 0).sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(h, lengths, batch_first=True,
                                                   enforce_sorted=False)
        states, _ = self.gru(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(states, batch_first=True,
                                                     total_length=X.shape[1])
        return self.output(self.dropout(states))


class PlainTagger(SequenceCrowdLayerClassifier):
    """The tagger with the sequence crowd layer's training, without a noise model.

    skcrowd has no plain sequence tagger: fitted on one tag per token (majority vote, gold), this
    is the tagger trained on them by cross-entropy.
    """

    def _make_noise_model(self):
        return NoNoise()


def entities(tags):
    """Set of ``(start, end, type)`` entities of a BIO tag sequence, by CoNLL's rule."""
    found, start, kind = set(), None, None
    for i, tag in enumerate([*tags, "O"]):
        if tag == "O" or tag.startswith("B-") or tag[2:] != kind:
            if start is not None:
                found.add((start, i, kind))
            start, kind = (None, None) if tag == "O" else (i, tag[2:])
    return found


def entity_scores(pred, gold, class_names):
    """Entity-level precision, recall and F1 of predicted tag indices against the gold (-1: pad)."""
    hits = n_pred = n_gold = 0
    for p, g in zip(pred, gold):
        real = g >= 0
        predicted, true = (entities(class_names[t[real]].tolist()) for t in (p, g))
        hits, n_pred, n_gold = hits + len(predicted & true), n_pred + len(predicted), \
            n_gold + len(true)
    precision, recall = hits / max(n_pred, 1), hits / max(n_gold, 1)
    return precision, recall, 2 * precision * recall / max(precision + recall, 1e-12)


def aggregated_tags(votes, aggregator):
    """Each token's tag by ``aggregator`` fitted on the tagged tokens' votes, every token one
    task (-1 where nobody tagged it)."""
    flat = votes.reshape(-1, votes.shape[-1]).astype(np.int64)
    tagged = (flat >= 0).any(axis=1)
    tags = np.full(len(flat), -1)
    tags[tagged] = aggregator.fit_predict(flat[tagged])
    return tags.reshape(votes.shape[:-1])


def run(data, seed, training, pretrained, identity, two_stage_only=False):
    """{method: (precision, recall, F1, seconds)} of every method for one seed.

    With ``pretrained``, the crowd layers are also fitted from the backbone of ``MV + tagger``
    (each of their initializations, the refit's too, starts from its weights); with
    ``identity``, MW also from the paper's identity map (``crowd_layer_scale=1``); with
    ``two_stage_only``, only the MV- and DS-trained taggers.
    """
    settings = dict(module=Tagger, module__n_words=data["n_words"],
                    module__n_suffixes=data["n_suffixes"],
                    module__n_classes=len(data["class_names"]),
                    classes=np.arange(len(data["class_names"])), random_state=seed, **training)
    out = {}

    def fit(method, net, y):
        start = time.perf_counter()
        net.fit(data["X"], y)
        seconds = time.perf_counter() - start
        out[method] = (*entity_scores(net.predict(data["X_test"]), data["target_test"],
                                      data["class_names"]), seconds)
        scale = "" if isinstance(net, PlainTagger) else \
            f"crowd layer scale {net.crowd_layer_scale_:.2f}, "
        print(f"  seed {seed} {method}: F1 {out[method][2]:.3f} (best epoch {net.best_epoch_}, "
              f"lr {net.lr_}, weight decay {net.weight_decay_}, {scale}{seconds:.0f} s)",
              flush=True)
        return net

    mv = fit("MV + tagger", PlainTagger(**settings),
             aggregated_tags(data["votes"], MajorityVote(random_state=seed)))
    fit("DS + tagger", PlainTagger(**settings), aggregated_tags(data["votes"], DawidSkene()))
    if two_stage_only:
        return out
    fit("gold + tagger", PlainTagger(**settings), data["target"])
    for layer in LAYERS:
        fit(f"CrowdLayer {layer}", SequenceCrowdLayerClassifier(crowd_layer=layer, **settings),
            data["votes"])
    if identity:
        fit("CrowdLayer MW, identity start", SequenceCrowdLayerClassifier(
            crowd_layer_scale=1.0, **settings), data["votes"])
    if pretrained:
        weights = {name: w.detach().clone() for name, w in mv.module_.state_dict().items()}
        for layer in PAPER_LAYERS:
            fit(f"CrowdLayer {layer}, MV-pretrained",
                SequenceCrowdLayerClassifier(crowd_layer=layer, module__initial_state=weights,
                                             **settings), data["votes"])
    return out


def table(results):
    """Markdown-ish table: mean +- sd over seeds beside the paper's numbers."""
    lines = ["| method | precision | recall | F1 | paper P / R / F1 | s per fit |",
             "|---|---|---|---|---|---|"]
    for method in results[0]:
        runs = np.array([r[method] for r in results])
        (precision, recall, f1, seconds), sd = runs.mean(axis=0), runs.std(axis=0)
        paper = PAPER.get(method)
        paper = " / ".join(f"{v:.3f}" for v in paper) if paper else "-"
        lines.append(f"| {method} | {precision:.3f} | {recall:.3f} | {f1:.3f} ± {sd[2]:.3f} "
                     f"| {paper} | {seconds:.0f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--max-epochs", type=int, default=15)
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--settings", choices=["auto", "fixed"], default="auto",
                        help="auto: the nets' defaults (lr and weight decay chosen per fit); "
                             "fixed: lr 1e-2 and no weight decay")
    parser.add_argument("--identity", action="store_true",
                        help="also fit MW from the paper's identity map (crowd_layer_scale=1)")
    parser.add_argument("--pretrained", action="store_true",
                        help="also fit MW, VW and VW+B from the MV-trained tagger's backbone")
    parser.add_argument("--two-stage-only", action="store_true",
                        help="only the taggers trained on the MV and DS tags")
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
    print(f"CoNLL-2003 NER crowd: {len(data['X'])} training sentences, "
          f"{data['votes'].shape[-1]} workers, {len(data['X_test'])} test sentences; "
          f"{args.seeds} seed(s), at most {args.max_epochs} epochs, patience {args.patience}, "
          f"settings {args.settings}, torch threads {args.threads}", flush=True)
    print("skcrowd has no deep EM for sequences: the paper's DL-EM is not compared.")
    training = dict(max_epochs=args.max_epochs, patience=args.patience)
    if args.settings == "fixed":
        training.update(lr=1e-2, weight_decay=0.0)
    results = [run(data, seed, training, args.pretrained, args.identity, args.two_stage_only)
               for seed in range(args.seeds)]
    print()
    print(f"Entity-level scores on the {len(data['X_test'])} test sentences, mean (F1 ± sd) over "
          f"{args.seeds} seed(s); paper: Rodrigues & Pereira 2018, table 3 (GloVe + CNN + GRU, "
          "30 runs, trained on 5985 crowd-tagged sentences, scored on the 3250 CoNLL test "
          "sentences).")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps({"seeds": args.seeds, **training,
                                         "settings": args.settings, "identity": args.identity,
                                         "pretrained": args.pretrained, "results": results,
                                         "paper": PAPER}, indent=1))


if __name__ == "__main__":
    main()
