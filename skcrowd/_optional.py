"""Optional dependencies: import one, or fail with an error that names the extra installing it.

The core needs numpy, scipy and scikit-learn only. Every other module is imported where a
public entry point first needs it, through :func:`import_optional`, so that a missing one
raises an :class:`ImportError` that says what needed it and which extra of
``pyproject.toml`` installs it.
"""

import importlib

# the extra of pyproject.toml's [project.optional-dependencies] that installs each module
EXTRAS = {
    "torch": "deep",
    "skorch": "deep",
    "numba": "fast",
    "matplotlib": "plot",
    "pandas": "quality",
    "pooch": "datasets",
    "dask": "dask",
    "distributed": "dask",
    "pyarrow": "dask",
}


def import_optional(name, what, *, extra=None):
    """Import the optional module ``name``, or explain which extra installs it.

    Parameters
    ----------
    name : str
        Module to import (``"pandas"``, ``"pyarrow.dataset"``...).
    what : str
        What needs it, as the error message begins (``"aggregate_long"``).
    extra : str or None, default=None
        The extra to name; None: the one that installs ``name``'s package (``EXTRAS``).

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    ImportError
        When ``name`` cannot be imported: the message names the package and the extra, and
        the import's own error is its ``__cause__``.

    Examples
    --------
    >>> from skcrowd._optional import import_optional
    >>> import_optional("numpy", "this example").__name__
    'numpy'
    >>> import_optional("no_such_module", "this example", extra="fast")
    Traceback (most recent call last):
    ...
    ImportError: this example needs no_such_module, which could not be imported (No module named 'no_such_module'): install skcrowd's fast extra, pip install ".[fast]" in skcrowd's source folder, or pip install no_such_module.
    """  # noqa: E501
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        package = name.partition(".")[0]
        extra = extra or EXTRAS[package]
        raise ImportError(
            f"{what} needs {package}, which could not be imported ({exc}): install skcrowd's "
            f'{extra} extra, pip install ".[{extra}]" in skcrowd\'s source folder, or pip '
            f"install {package}."
        ) from exc
