"""Seeded results do not depend on the CPU or the thread count (issue 22).

``tests/determinism_outputs.py`` writes seeded outputs (simulated crowds, every aggregator on a
serial-sized and a parallel-sized crowd with both engines, agreement intervals, the consensus
classifier, a CrowdLayer net) in a fresh process. This test runs it under the default CPU
dispatch and under settings that make this machine compute what another one would:

- numpy without its highest SIMD group (``NPY_DISABLE_CPU_FEATURES``; on an AVX-512 machine that
  is an AVX2 machine, the case of issue 22) and one numba thread;
- numpy without any of its dispatched SIMD groups (the baseline kernels), numba compiled for a
  generic CPU (``NUMBA_CPU_NAME=generic``), one numba thread and torch's baseline kernels
  (``ATEN_CPU_CAPABILITY=default``).

Votes and labels must be identical, probabilities and objectives within 1e-6. An unstable sort
whose tie order decides a random draw, or a reduction whose order follows the thread count, fails
here on any machine.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).with_name("determinism_outputs.py")
sys.path.insert(0, str(SCRIPT.parent))
from determinism_outputs import compare  # noqa: E402


def _dispatched_simd_groups():
    """numpy's dispatched SIMD groups that this CPU has, lowest first (``[]`` on a baseline CPU)."""
    try:  # numpy >= 2
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy 1.x (the lower bound in pyproject.toml)
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [group for group in __cpu_dispatch__ if __cpu_features__.get(group)]


def _variants():
    groups = _dispatched_simd_groups()
    variants = {}
    if groups:
        variants["without numpy's highest SIMD group, one numba thread"] = {
            "NPY_DISABLE_CPU_FEATURES": groups[-1], "NUMBA_NUM_THREADS": "1"}
    variants["numpy baseline kernels, numba generic CPU, one thread, torch baseline"] = {
        "NPY_DISABLE_CPU_FEATURES": " ".join(groups), "NUMBA_CPU_NAME": "generic",
        "NUMBA_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "default"}
    return variants


def _run(path, extra_env):
    env = {key: value for key, value in os.environ.items()
           if key not in ("NPY_DISABLE_CPU_FEATURES", "NUMBA_CPU_NAME", "NUMBA_NUM_THREADS",
                          "ATEN_CPU_CAPABILITY")}
    env.update({key: value for key, value in extra_env.items() if value})
    result = subprocess.run([sys.executable, str(SCRIPT), str(path)], env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{SCRIPT.name} failed under {extra_env}:\n{result.stderr}"


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("determinism") / "default.npz"
    _run(path, {})
    return path


@pytest.mark.parametrize("variant", list(_variants()))
def test_seeded_outputs_are_the_same_on_another_cpu(reference, variant, tmp_path):
    other = tmp_path / "variant.npz"
    _run(other, _variants()[variant])
    problems = compare(reference, other)
    assert not problems, (
        f"seeded outputs depend on the machine ({variant}):\n"
        + "\n".join(f"  {key}: {what}" for key, what in problems))


def test_the_outputs_cover_every_aggregator_and_the_parallel_drivers(reference):
    from determinism_outputs import _crowds
    from skcrowd.aggregation.kernels._common import PARALLEL_MIN_VOTES
    from skcrowd.utils.discovery import all_estimators

    keys = set(np.load(reference).files)
    for model, _ in all_estimators(type_filter="rating"):  # rating aggregators (issue 27)
        assert f"ratings/{model}" in keys
    for model, _ in all_estimators(type_filter="aggregator"):
        assert f"aggregate/numba/large/{model}/proba" in keys
        assert f"aggregate/numpy/small/{model}/labels" in keys or model == "KOS"
    assert _crowds()["large"].nnz >= PARALLEL_MIN_VOTES
    try:
        import torch  # noqa: F401
    except ImportError:
        return
    assert "net/crowdlayer/proba" in keys


def test_compare_reports_a_changed_vote_and_a_drifted_probability(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    np.savez(a, votes=np.array([[0, 1], [1, -1]]), proba=np.array([0.25, 0.75]))
    np.savez(b, votes=np.array([[0, 1], [0, -1]]), proba=np.array([0.25, 0.75 + 2e-6]))
    assert dict(compare(a, b)) == {"proba": "max abs difference 2e-06 > 1e-06",
                                   "votes": "1 of 4 entries differ"}
    np.savez(b, votes=np.array([[0, 1], [1, -1]]), proba=np.array([0.25, 0.75 + 5e-7]))
    assert compare(a, b) == []
