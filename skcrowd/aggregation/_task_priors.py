"""Per-task priors of the EM aggregators: known tasks (``y``) and ``task_prior``.

Validation of ``y`` and ``task_prior`` against the tasks of the votes, and the
``log_task_priors`` argument that the driver (:mod:`._em`) hands to each
block's E-step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..votes import _fmt
from ._base import _aggregators_with, _is_pandas_frame


class _TaskPriors(NamedTuple):
    """What a fit (or a prediction) knows of its tasks beside their votes, in task order."""

    known_rows: np.ndarray | None
    """Tasks whose label is known (None: no known task)."""
    known_classes: np.ndarray | None
    """Their class indices."""
    log_prior: np.ndarray | None
    """(n_tasks, K): log of ``task_prior`` (-inf for a zero), None when not given."""

    @classmethod
    def of(cls, known, log_prior):
        """From the class index of each task (-1: unknown) and the log task priors; None when
        neither tells anything (no known task, no prior): a plain fit."""
        rows = None if known is None else np.flatnonzero(known >= 0)
        if rows is not None and len(rows) == 0:
            rows = None
        if rows is None and log_prior is None:
            return None
        return cls(rows, None if rows is None else known[rows], log_prior)


def _log_task_priors(model, priors, layout, params):
    """The ``log_task_priors`` of a block's E-step: the task priors (or else the model's
    class log-priors, 0 before the first M-step) with every class but a known task's label at
    ``-inf``, the label keeping its log-prior (EM for a model whose known tasks' classes are
    observed)."""
    if priors.known_rows is None:
        return priors.log_prior
    out = layout.scratch("log_task_priors", (layout.n_tasks, layout.n_classes))
    if priors.log_prior is not None:
        out[:] = priors.log_prior
    elif params is None:
        out[:] = 0.0
    else:
        out[:] = model._class_log_priors(params)
    rows, classes = priors.known_rows, priors.known_classes
    kept = out[rows, classes]
    out[rows] = -np.inf
    out[rows, classes] = kept
    return out


def _models_with_task_priors():
    """skcrowd's public aggregators that take known tasks and ``task_prior``, as "A, B and
    C" in name order (those whose ``_supports_task_priors`` is set)."""
    return _aggregators_with("_supports_task_priors")


def _prior_kwargs(model, priors, layout, params):
    """``{"log_task_priors": ...}`` for a block's hooks, or ``{}`` without per-task priors."""
    if priors is None:
        return {}
    return {"log_task_priors": _log_task_priors(model, priors, layout, params)}


def _task_keys(source, X):
    """The keys of the tasks of ``X`` that a pandas ``y`` / ``task_prior`` is read by (None:
    by position), and how error messages name the tasks."""
    ids = source.task_ids()
    if ids is not None:
        return ids, "tasks (task ids of X)"
    return (X.index if _is_pandas_frame(X) else None), "tasks (rows of X)"


def _by_task(values, keys, name, what):
    """``values`` (a pandas Series or DataFrame) put in the order of the tasks ``keys``: a
    Series task missing from its index is unknown (NaN); a DataFrame needs every task."""
    if keys is None or not hasattr(values, "index") or not hasattr(values, "reindex"):
        return values
    import pandas as pd

    keys = pd.Index(keys)
    for index, whose in ((values.index, name), (keys, "X")):
        if not index.is_unique:
            raise ValueError(
                f"{whose}'s index repeats task {_fmt(index[index.duplicated()][0])}, so {name} "
                "cannot be matched to the tasks by index; give each task once, or pass "
                f"{name} as an array in the order of the {what}."
            )
    foreign = ~values.index.isin(keys)
    if foreign.any():
        raise ValueError(
            f"{name} is indexed by task, but its index holds {_fmt(values.index[foreign][0])}, "
            f"which is not one of the {what}."
        )
    if hasattr(values, "columns"):
        absent = ~keys.isin(values.index)
        if absent.any():
            raise ValueError(f"{name} has no row for task {_fmt(keys[absent][0])}; give a row "
                             "for every task.")
    return values.reindex(keys)


def _check_task_prior(task_prior, n_tasks, classes, what, known):
    """Log of the validated ``task_prior`` (n_tasks, K) in ``classes`` order (-inf for zeros)."""
    K = len(classes)
    if hasattr(task_prior, "columns"):  # DataFrame: columns are classes
        columns = list(task_prior.columns)
        order = [next((c for c in columns if _same_label(c, k)), None) for k in classes.tolist()]
        if None in order or len(columns) != K:
            raise ValueError(
                f"task_prior's columns {columns!r} must be the classes {classes.tolist()!r} "
                "(one column per class, in any order)."
            )
        task_prior = task_prior[order]
    try:
        prior = np.array(task_prior, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"task_prior must hold probabilities: {exc}") from exc
    if prior.shape != (n_tasks, K):
        raise ValueError(
            f"task_prior must have shape (n_tasks, n_classes) = ({n_tasks}, {K}) for the "
            f"{n_tasks} {what} and the classes {classes.tolist()!r}, got {prior.shape}."
        )
    bad = ~np.isfinite(prior) | (prior < 0)
    if bad.any():
        i, k = np.argwhere(bad)[0]
        raise ValueError(f"task_prior must hold probabilities, got {_fmt(prior[i, k])} at task "
                         f"{i}, class {_fmt(classes[k])}.")
    total = prior.sum(axis=1)
    off = np.abs(total - 1.0) > 1e-5
    if off.any():
        i = int(np.argmax(off))
        raise ValueError(f"task_prior's rows must sum to one; the row of task {i} sums to "
                         f"{float(total[i]):.6g}.")
    prior /= total[:, None]
    if known is not None:
        rows = np.flatnonzero(known >= 0)
        ruled_out = prior[rows, known[rows]] <= 0
        if ruled_out.any():
            i = rows[np.argmax(ruled_out)]
            raise ValueError(f"task_prior gives probability 0 to the known label "
                             f"{_fmt(classes[known[i]])} of task {i} (y).")
    with np.errstate(divide="ignore"):
        return np.log(prior)


def _same_label(column, label):
    """Whether a DataFrame column names the class ``label`` (same value, str or not alike)."""
    return isinstance(column, str) == isinstance(label, str) and column == label


def _weigh_by_priors(resp, log_task_priors):
    """In place: rows of ``resp`` times ``exp(log_task_priors)``, normalized (the prior alone
    where the product vanishes)."""
    weights = np.exp(log_task_priors - log_task_priors.max(axis=1, keepdims=True))
    resp *= weights
    total = resp.sum(axis=1, keepdims=True)
    empty = total[:, 0] <= 0
    resp[empty] = weights[empty]
    total[empty] = weights[empty].sum(axis=1, keepdims=True)
    resp /= total
