"""The docs and docstrings name no machine-specific path (a developer's data folder, a scratch
disk, a virtual environment under /tmp): they must read the same on every machine.

Checked: every docstring of skcrowd/ and benchmarks/ (parsed, not imported), the whole text of
examples/ (the gallery renders its comments too), doc/*.rst and the README. Paths relative to
the repository (``../shared/data``) and the user's home (``~/skcrowd_data``) are fine.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MACHINE_PATH = re.compile(
    r"(?<![\w.~])(?:/(?:work|tmp|root|home|Users|mnt|scratch|media|opt|private|var/folders)"
    r"(?:/|\b)|[A-Za-z]:\\\\?[\w.-]+\\)"
)


def docstrings(path):
    """``(line, text)`` of every docstring of a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(
                    getattr(body[0], "value", None), ast.Constant) and isinstance(
                    body[0].value.value, str):
                yield body[0].lineno, body[0].value.value


def whole_text(path):
    yield 1, path.read_text(encoding="utf-8")


def sources():
    for folder in ("skcrowd", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path, docstrings
    for path in sorted((ROOT / "examples").glob("*.py")):
        yield path, whole_text
    for path in [*sorted((ROOT / "doc").glob("*.rst")), ROOT / "README.md",
                 ROOT / "examples" / "README.txt"]:
        if path.exists():
            yield path, whole_text


def machine_paths(path, read):
    found = []
    for first_line, text in read(path):
        for i, line in enumerate(text.splitlines()):
            for match in MACHINE_PATH.finditer(line):
                found.append(f"{path.relative_to(ROOT)}:{first_line + i}: {match.group(0)!r} "
                             f"in {line.strip()!r}")
    return found


def cases():
    for path, read in sources():
        relative = path.relative_to(ROOT).as_posix()
        yield pytest.param(path, read, id=relative)


@pytest.mark.parametrize("path, read", cases())
def test_no_machine_specific_path(path, read):
    found = machine_paths(path, read)
    assert not found, "machine-specific paths:\n" + "\n".join(found)


@pytest.mark.parametrize("text, bad", [
    ("the nine datasets of ``/work/shared/data``", True),
    ("default ``/tmp/benchenv/bin/python``", True),
    ('tmp_dir="/scratch"', True),
    (r"C:\Users\me\votes.parquet", True),
    ("data in ``../shared/data/labelme`` next to the repository", False),
    ("default ``~/skcrowd_data``", False),
    ("https://example.org/tmp/x and ``skcrowd/datasets/_fetchers.py``", False),
    ("labels = votes / n; n_classes // 2", False),
])
def test_the_pattern_finds_absolute_machine_paths_only(text, bad):
    assert bool(MACHINE_PATH.search(text)) == bad
