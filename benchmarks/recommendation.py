"""Which aggregator to recommend for a crowd you do not know, validated across crowds.

A recommendation chosen on a pool of crowds is a guess about the crowds outside it: the
selector led on the 19 shared crowds and trailed DawidSkene on 10 crowds nobody here had seen
(issue 37, section 4). This script scores the *choice* of a recommendation the way it will be
used, out of the pool it was chosen on: the crowds of a ``benchmarks/realdata.py --json`` run
are cut into groups (crowds that share tasks or come from one collection are one group: the
three ZenCrowd crowds, the two CrowdFlower/AMT weather crowds, the two TREC relevance crowds),
and for every split of the groups into a choosing half and a scoring half, each rule picks a
method on the choosing crowds and is scored on the others.

Rules
    ``best mean``: the method of best mean gold accuracy on the choosing crowds;
    ``best worst gap``: the method whose worst gap to majority vote there is the least negative
    (a cautious user's rule); ``best mean rank``: the method of best mean rank across them.
    Each fixed method is printed too (its mean on the scoring crowds of the same splits).

Splits
    Every leave-one-group-out split (choose on all groups but one), and ``--halves`` random
    halvings of the groups (choose on half, score on the other; seeded, ``--seed``).

Usage::

    python benchmarks/realdata.py --competitor-python '' --json realdata.json
    python benchmarks/recommendation.py realdata.json [--halves 2000] [--seed 0]
    python benchmarks/recommendation.py realdata.json --exclude AggregatorSelector

``--exclude AggregatorSelector`` leaves the selector out of the candidates: its candidates and
scoring rule were chosen by looking at every shared crowd, so no split of those crowds scores it
out of the pool it was designed on (on 10 crowds outside that pool it averaged 0.8137 against
DawidSkene's 0.8189 and MACE's 0.8203; issue 37).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import numpy as np

#: crowds that share tasks or a collection: held out together
GROUPS = {
    "act_ZenCrowd_all": "ZenCrowd", "act_ZenCrowd_in": "ZenCrowd", "act_ZenCrowd_us": "ZenCrowd",
    "act_CF": "weather", "act_CF_amt": "weather",
    "zhang2014_trec": "TREC", "zheng_s4_Relevance": "TREC",
}
#: methods that are not candidates: binary only, or not a method a user can run
EXCLUDED = ("skcrowd:KOS", "oracle:best skcrowd model")


def load(path, exclude=()):
    """``(crowd names, method names, accuracy matrix crowds x methods, MV accuracies)``."""
    crowds = json.loads(open(path).read())["crowds"]
    methods = [m for m in crowds[0]["results"] if m not in EXCLUDED
               and m.split(":")[1] not in exclude
               and all("accuracy" in c["results"].get(m, {}) for c in crowds)]
    acc = np.array([[c["results"][m]["accuracy"] for m in methods] for c in crowds])
    mv = acc[:, methods.index("skcrowd:MajorityVote")]
    return [c["name"] for c in crowds], methods, acc, mv


def rules(acc, mv):
    """The index of the method each rule picks on these crowds (ties: the first, stable)."""
    ranks = np.argsort(np.argsort(-acc, axis=1, kind="stable"), axis=1, kind="stable")
    return {
        "best mean": int(np.argmax(acc.mean(axis=0))),
        "best worst gap": int(np.argmax((acc - mv[:, None]).min(axis=0))),
        "best mean rank": int(np.argmin(ranks.mean(axis=0))),
    }


def splits(groups, halves, seed):
    """``(choosing crowd mask, scoring crowd mask)`` of every split."""
    names = sorted(set(groups))
    groups = np.array(groups)
    for held in names:  # leave one group out
        yield "leave one group out", groups != held, groups == held
    rng = np.random.default_rng(seed)
    for _ in range(halves):
        chosen = rng.permutation(names)[: len(names) // 2]
        mask = np.isin(groups, chosen)
        yield "halves", mask, ~mask


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", help="the --json output of benchmarks/realdata.py")
    parser.add_argument("--halves", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exclude", nargs="+", default=(), metavar="NAME",
                        help="methods that are not candidates (class names)")
    args = parser.parse_args(argv)
    crowds, methods, acc, mv = load(args.json, args.exclude)
    groups = [GROUPS.get(c, c) for c in crowds]
    print(f"{len(crowds)} crowds in {len(set(groups))} groups; {len(methods)} candidate methods")
    for scheme in ("leave one group out", "halves"):
        scored = {}  # rule or method -> [(accuracy on scoring crowds, gap to MV there), ...]
        picks = {}
        for name, choose, score in splits(groups, args.halves, args.seed):
            if name != scheme:
                continue
            # a split's score: the mean over its scoring crowds (leave-one-group-out: per crowd)
            for rule, j in rules(acc[choose], mv[choose]).items():
                scored.setdefault(rule, []).append((acc[score, j].mean(),
                                                    (acc[score, j] - mv[score]).min()))
                picks.setdefault(rule, Counter())[methods[j]] += 1
            for j, m in enumerate(methods):
                scored.setdefault(m, []).append((acc[score, j].mean(),
                                                 (acc[score, j] - mv[score]).min()))
        n = len(next(iter(scored.values())))
        print(f"\n{scheme} ({n} splits): mean over splits of the scoring crowds' mean accuracy, "
              "and of their worst gap to MV (points)")
        print(f"{'rule or method':38s} {'accuracy':>9s} {'worst gap':>10s}  picks")
        order = sorted(scored, key=lambda k: -np.mean([s[0] for s in scored[k]]))
        for key in order:
            a = np.array(scored[key])
            chosen = picks.get(key, Counter()).most_common()
            pick = ", ".join(f"{m.split(':')[1]} {c}" for m, c in chosen)
            print(f"{key:38s} {a[:, 0].mean():9.4f} {100 * a[:, 1].mean():+10.2f}  {pick}")


if __name__ == "__main__":
    main()
