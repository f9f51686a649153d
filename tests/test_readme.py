"""README.md's and doc/quickstart.rst's Python blocks run as written, so they cannot drift.

Each distinct block (blocks with the same syntax tree run once) runs in a fresh interpreter, in
an empty working folder, with the environment a user has (no thread pinning); it must succeed and
leave that folder empty.
"""

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import skcrowd

ROOT = Path(skcrowd.__file__).resolve().parents[1]
PAGES = ["README.md", "doc/quickstart.rst"]


def markdown_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def rst_blocks(text):
    """The bodies of the ``.. code-block:: python`` directives, dedented."""
    blocks, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"(\s*)\.\. code-block:: python\s*$", line)
        if not match:
            continue
        indent, body = len(match.group(1)), []
        for following in lines[i + 1:]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            body.append(following)
        code = re.sub(r"\A(:\w[\w-]*:.*\n)+", "",  # options such as :caption:
                      textwrap.dedent("\n".join(body)).strip("\n"))
        blocks.append(code.strip("\n"))
    return blocks


def page_blocks():
    """``{syntax tree dump: (code, [where, ...])}`` of every page's Python blocks."""
    found = {}
    for page in PAGES:
        path = ROOT / page
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        blocks = markdown_blocks(text) if page.endswith(".md") else rst_blocks(text)
        for number, code in enumerate(blocks, 1):
            entry = found.setdefault(ast.dump(ast.parse(code)), (code, []))
            entry[1].append(f"{page}:{number}")
    return found


BLOCKS = list(page_blocks().values())


def test_the_pages_have_python_blocks():
    if not (ROOT / "README.md").is_file():
        pytest.skip("an installed skcrowd, without its README.md")
    assert {where.split(":")[0] for _, wheres in BLOCKS for where in wheres} == set(PAGES)


def test_rst_blocks_are_read_whole():
    text = ("Intro::\n\n    not python\n\n.. code-block:: python\n    :caption: x\n\n"
            "    a = 1\n    if a:\n\n        b = 2\n\nAfter.\n")
    assert rst_blocks(text) == ["a = 1\nif a:\n\n    b = 2"]


@pytest.mark.deep
@pytest.mark.parametrize("code, wheres", BLOCKS, ids=["+".join(w) for _, w in BLOCKS])
def test_block_runs_as_written_and_leaves_no_file(code, wheres, tmp_path):
    pytest.importorskip("torch")  # the Quick start trains nets
    pytest.importorskip("skorch")
    work, temp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, f"{wheres}:\n{done.stderr[-4000:]}"
    assert sorted(p.name for p in work.iterdir()) == [], wheres
