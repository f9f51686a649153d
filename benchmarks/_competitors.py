"""What the benchmark scripts need to run competitor libraries in their own interpreter."""

import json
import os
import subprocess


def run_json_child(command, *, timeout, name="crowd-kit", env=None, width=80):
    """Run ``command``, a child process that prints its results as JSON on its last line:
    that dict, or ``{name: "not run: <why>"}`` when the child cannot start, runs past
    ``timeout`` seconds or fails (the last line of its stderr, cut to ``width``)."""
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                             env={**os.environ, "TQDM_DISABLE": "1", **(env or {})})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {name: f"not run: {exc}"}
    if out.returncode != 0:
        return {name: "not run: " + (out.stderr.strip().splitlines() or ["?"])[-1][:width]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def patch_crowdkit_fitted_check():
    """crowd-kit 1.4.2's Wawa, ZeroBasedSkill and GoldMajorityVote call scikit-learn's
    ``check_is_fitted`` on their attrs classes, which scikit-learn >= 1.6 rejects (they have no
    ``__sklearn_tags__``); give those modules a plain check of the named attribute instead."""
    import importlib

    def check_is_fitted(estimator, attributes):
        if getattr(estimator, attributes, None) is None:
            raise RuntimeError(f"{type(estimator).__name__} is not fitted")

    for module in ("wawa", "zero_based_skill", "gold_majority_vote"):
        module = importlib.import_module(f"crowdkit.aggregation.classification.{module}")
        if hasattr(module, "check_is_fitted"):
            module.check_is_fitted = check_is_fitted


# EBCC's reference: Li, Rubinstein & Cohn's procedure as ported in JieyuZ2/wrench
# (wrench/labelmodel/ebcc.py), which is not on PyPI. The benchmarks take a copy of that file
# (--ebcc-reference PATH; the commit read for skcrowd's comparison was 1ce3673a) and run its
# function ebcc_vb, unchanged, in the competitor's interpreter: the function alone is compiled
# from the file, with the module's numpy and scipy imports, without wrench's other modules.
EBCC_REFERENCE_REPEAT = 5  # wrench's EBCC(repeat=5): random starts, the best ELBO kept
EBCC_REFERENCE_ITER = 1000  # wrench's EBCC(inference_iter=1000)


def load_ebcc_reference(path):
    """The function ``ebcc_vb`` of a copy of wrench's ``ebcc.py``."""
    import ast

    def root(node):
        if isinstance(node, ast.ImportFrom):
            return (node.module or "").split(".")[0]
        return node.names[0].name.split(".")[0] if isinstance(node, ast.Import) else None

    tree = ast.parse(open(path).read(), filename=str(path))
    keep = [node for node in tree.body if root(node) in ("numpy", "scipy")
            or (isinstance(node, ast.FunctionDef) and node.name == "ebcc_vb")]
    if not any(isinstance(n, ast.FunctionDef) for n in keep):
        raise ValueError(f"{path} has no function ebcc_vb: not wrench's ebcc.py")
    namespace = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(path), "exec"), namespace)
    return namespace["ebcc_vb"]


def ebcc_reference_labels(ebcc_vb, task, worker, label, n_tasks, n_workers, n_classes, seed):
    """Class index of every task by wrench's ``EBCC().fit`` procedure: ``repeat`` runs of
    ``ebcc_vb`` (empirical class prior, ``inference_iter`` iterations at most) from seeds drawn
    with ``np.random.RandomState(seed)`` (wrench draws them from numpy's global state), the
    run of the best ELBO kept."""
    import numpy as np

    tuples = np.c_[task, worker, label]
    seeds = np.random.RandomState(seed).randint(1e8, size=EBCC_REFERENCE_REPEAT)
    best, labels = -np.inf, None
    for s in seeds:
        z, elbo, *_ = ebcc_vb(tuples, n_tasks, n_workers, n_classes, seed=int(s),
                              inference_iter=EBCC_REFERENCE_ITER, empirical_prior=True)
        if elbo > best:
            best, labels = elbo, z.argmax(axis=1)
    return labels


def patch_crowdkit_hrrasa_means():
    """crowd-kit 1.4.2's HRRASA builds its tasks' mean embeddings as ``pd.Series(...,
    dtype=np.float64)`` of arrays, which pandas 3 refuses ("setting an array element with a
    sequence"); give it the same weighted means without the cast."""
    import numpy as np
    from crowdkit.aggregation.embeddings import hrrasa

    def aggregate_embeddings(data, weights, true_embeddings=None):
        data = data.join(weights, on=["task", "worker"])
        data["weighted_embedding"] = data.weight * data.embedding
        group = data.groupby("task", group_keys=False)
        means = group.weighted_embedding.apply(np.sum) / group.weight.sum()
        if true_embeddings is not None:
            means.update(true_embeddings)
        return means

    hrrasa.HRRASA._aggregate_embeddings = staticmethod(aggregate_embeddings)
