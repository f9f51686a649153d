"""torch and skorch, or an ImportError that names the ``deep`` extra.

Imported first by :mod:`skcrowd.neural`: every net, and every name of ``skcrowd`` exported from
it, then fails at import with that error rather than a bare ``ModuleNotFoundError``.
"""

from .._optional import import_optional

WHAT = "skcrowd.neural (CrowdLayerClassifier, CoNALClassifier, DeepEMClassifier and the other nets)"
import_optional("torch", WHAT)
import_optional("skorch", WHAT)
