"""Instances of every aggregator for the tests that cover them all.

:func:`seeded_aggregators` builds every aggregator that
:func:`skcrowd.utils.discovery.all_estimators` finds, with its defaults (or the factory a test
gives for a meta-estimator), seeded where it takes a ``random_state``. Used by
``tests/aggregation/test_estimator_checks.py`` and ``tests/test_notebook_habits.py``.
"""

from skcrowd.utils.discovery import all_estimators


def seeded_aggregators(factories):
    """Every aggregator, built by ``factories[name]()`` where given (those that cannot be built
    with default arguments, or not cheaply), else with its defaults; ``random_state=0`` where it
    has a ``random_state`` left at None."""
    models = []
    for name, cls in all_estimators(type_filter="aggregator"):
        model = factories.get(name, cls)()
        if model.get_params().get("random_state", 0) is None:
            model.set_params(random_state=0)
        models.append(model)
    return models
