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
]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
templates_path = ["_templates"]
exclude_patterns = ["_build", "generated/*.examples"]
html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
html_title = f"skcrowd {release}"

intersphinx_mapping = {}  # no network in CI: keep cross-references local
nitpicky = False
