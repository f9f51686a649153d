"""Sphinx configuration for the skcrowd documentation."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

import skcrowd  # noqa: E402

project = "skcrowd"
author = "skcrowd developers"
copyright = "2026, skcrowd developers"
release = skcrowd.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
templates_path = ["_templates"]
exclude_patterns = ["_build", "generated/*.examples"]
html_theme = "pydata_sphinx_theme"
html_title = f"skcrowd {release}"

# Example gallery: examples/plot_*.py are run and their figures embedded.
# SKCROWD_GALLERY=0 builds the example pages without running them (fast CI).
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "/plot_",
    "plot_gallery": os.environ.get("SKCROWD_GALLERY", "1") != "0",
    "within_subsection_order": "FileNameSortKey",
    "write_computation_times": False,
    "matplotlib_animations": False,
}

intersphinx_mapping = {}  # no network in CI: keep cross-references local
nitpicky = False


def _skip_metadata_request_methods(app, what, name, obj, skip, options):
    """Hide scikit-learn's generated ``set_*_request`` methods (metadata routing plumbing)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def _write_datasets_table(app):
    """generated/crowd_datasets_table.txt: list_crowd_datasets() as a list-table (datasets.rst)."""
    from skcrowd.datasets import list_crowd_datasets

    columns = {"name": "name", "tasks": "tasks", "workers": "workers", "classes": "K",
               "votes": "votes", "gold": "gold", "duplicates": "duplicates dropped",
               "mv_accuracy": "MV acc.", "features": "features", "same_crowd_as": "same crowd as",
               "download_mb": "MB", "source": "source (repository@commit)"}
    lines = [".. list-table::", "   :header-rows: 1", ""]
    lines.append("   * - " + "\n     - ".join(columns.values()))
    for row in list_crowd_datasets().itertuples(index=False):
        cells = []
        for column in columns:
            value = getattr(row, column)
            text = "–" if value is None or str(value) in ("<NA>", "", "-") else str(value)
            if column in ("name", "same_crowd_as") and text != "–":
                text = f"``{text}``"
            if column == "source":
                repository, commit = text.split("@")
                text = f"`{text} <https://github.com/{repository}/tree/{commit}>`__"
            cells.append(text)
        lines.append("   * - " + "\n     - ".join(cells))
    out = os.path.join(app.srcdir, "generated", "crowd_datasets_table.txt")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def _write_estimators_by_kind(app):
    """generated/estimators_by_kind.txt: every estimator that all_estimators() finds, by kind,
    with the first line of its docstring (api.rst, comparison.rst), so a new model is listed
    without editing the docs."""
    from skcrowd.utils.discovery import KINDS, all_estimators

    titles = {"aggregator": "Aggregators", "rating": "Aggregators of continuous ratings",
              "multilabel": "Aggregators of multi-label votes", "feature_model": "Feature models"}
    titles["pairwise"] = "Models of pairwise comparisons"
    lines = []
    for kind, takes in KINDS.items():
        lines += [f"**{titles[kind]}** (``type_filter=\"{kind}\"``: {takes}):", ""]
        for name, cls in all_estimators(type_filter=kind):
            summary = (cls.__doc__ or "").strip().splitlines()[0].rstrip(".")
            lines.append(f"- :class:`~skcrowd.{name}`: {summary}.")
        lines.append("")
    out = os.path.join(app.srcdir, "generated", "estimators_by_kind.txt")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines))


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_request_methods)
    app.connect("builder-inited", _write_datasets_table)
    app.connect("builder-inited", _write_estimators_by_kind)
