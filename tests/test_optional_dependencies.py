"""Each optional dependency, hidden: every public entry point that needs it names the extra.

Each case runs in a fresh interpreter where ``sys.modules[name] = None`` makes ``import name``
fail as it does where the package is not installed.
"""

import re
import subprocess
import sys

import pytest

import skcrowd
from skcrowd._optional import EXTRAS

VOTES = "import numpy as np; votes = np.array([[0, 1, -1], [1, 1, 0], [0, -1, 0]])"
LONG = "long = {'task': ['t1', 't1', 't2'], 'worker': ['a', 'b', 'a'], 'label': [0, 1, 1]}"

CASES = [  # (modules hidden, code, extra the error must name)
    (["torch"], "from skcrowd import CoNALClassifier", "deep"),
    (["torch"], "import skcrowd.neural", "deep"),
    (["torch"], "from skcrowd.neural import CrowdLayerRegressor", "deep"),
    (["torch"], "from skcrowd.optim import SAM", "deep"),
    (["torch"], f"from skcrowd import SelfCrowdClassifier; {VOTES}\n"
                "SelfCrowdClassifier().fit(np.zeros((3, 2)), votes)", "deep"),
    (["skorch"], "from skcrowd import CrowdLayerClassifier", "deep"),
    (["pandas"], f"from skcrowd import MajorityVote, aggregate_long; {LONG}\n"
                 "aggregate_long(MajorityVote(), long)", "quality"),
    (["pandas"], f"from skcrowd import votes_to_long; {VOTES}\n"
                 "votes_to_long(votes, as_frame=True)", "quality"),
    (["pandas"], f"from skcrowd import DawidSkene, worker_report; {VOTES}\n"
                 "worker_report(DawidSkene().fit(votes), votes)", "quality"),
    (["pandas"], "from skcrowd import list_crowd_datasets; list_crowd_datasets()", "datasets"),
    (["matplotlib"], "import skcrowd.plotting", "plot"),
    (["pooch"], "from skcrowd import fetch_crowd_dataset\n"
                "fetch_crowd_dataset('zheng_d_sentiment', data_home='home')", "datasets"),
    (["dask", "distributed"], "from skcrowd import DawidSkene\n"
                              "DawidSkene(backend='dask').fit('votes.parquet')", "dask"),
    (["pyarrow"], "from skcrowd import DawidSkene; DawidSkene().fit('votes.parquet')", "dask"),
    (["numba"], f"from skcrowd import DawidSkene; from skcrowd.aggregation import kernels\n"
                f"kernels.ENGINE = 'numba'; {VOTES}; DawidSkene().fit(votes)", "fast"),
]

PROGRAM = """\
import importlib.abc
import sys


class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {hidden!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)


sys.meta_path.insert(0, NotInstalled())
for code in {codes!r}:
    try:
        exec(code, {{}})
    except ImportError as exc:
        print(type(exc).__name__, exc)
    else:
        print("no error")
"""


def run_hidden(hidden, codes, cwd):
    """One line per code run where the ``hidden`` packages are not installed."""
    done = subprocess.run([sys.executable, "-c", PROGRAM.format(hidden=hidden, codes=codes)],
                          capture_output=True, text=True, cwd=cwd, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


GROUPS = {}  # one interpreter per set of hidden packages
for hidden, code, extra in CASES:
    GROUPS.setdefault(tuple(hidden), []).append((code, extra))


@pytest.mark.parametrize("hidden", list(GROUPS), ids="+".join)
def test_a_missing_dependency_names_its_extra(hidden, tmp_path):
    pytest.importorskip(hidden[0])  # the entry points themselves must be importable here
    codes, extras = zip(*GROUPS[hidden])
    for code, extra, out in zip(codes, extras, run_hidden(hidden, codes, tmp_path)):
        assert out.startswith("ImportError"), (code, out)  # not a bare ModuleNotFoundError
        assert f'pip install ".[{extra}]"' in out and f"needs {hidden[0]}" in out, (code, out)
    assert list(tmp_path.iterdir()) == []  # nothing written (no download started)


def test_the_core_works_without_any_optional_dependency(tmp_path):
    hidden = sorted(EXTRAS)
    code = (f"import skcrowd; {VOTES}\n"
            "skcrowd.DawidSkene().fit(votes); skcrowd.MajorityVote().fit(votes)\n"
            "skcrowd.votes_to_long(votes); skcrowd.make_crowd_classification(20)\n"
            "import skcrowd.pruning")
    assert run_hidden(hidden, [code], tmp_path) == ["no error"]


def test_every_extra_named_is_one_of_pyproject_toml():
    tomllib = pytest.importorskip("tomllib")
    pyproject = skcrowd.__file__.rsplit("/", 2)[0] + "/pyproject.toml"
    try:
        with open(pyproject, "rb") as f:
            extras = tomllib.load(f)["project"]["optional-dependencies"]
    except FileNotFoundError:
        pytest.skip("an installed skcrowd, without its pyproject.toml")
    for module, extra in EXTRAS.items():  # distributed: in "dask[dataframe,distributed]"
        assert any(module in re.split(r"[][,<>=]", req) for req in extras[extra]), module
