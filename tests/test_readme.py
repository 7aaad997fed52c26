"""The examples of the README and of docs/*.md run as written.

README.md: every ```python block, in order, in one namespace. Every plain ``` block that shows a program
(it starts with "{ lambda") must also appear verbatim in what the Python blocks print, so the IR shown in
the README is the IR adarray prints.

docs/*.md: each page's ```python blocks, in order, in one namespace, in a Python process of their own (a page
may register a primitive or switch the backend).

Both: a plain ``` block that follows the line "This prints" must appear verbatim in what the page's blocks
print. A block opened with ```python from=PATH is an excerpt of a file of the repository: it is not run, and
its lines must appear one after the other in PATH (indentation aside).
"""
import contextlib
import io
import json
import linecache
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)


def _fenced(path):
    """(language, options, body, the line before the block) for every fenced block of a Markdown file."""
    text = path.read_text()
    blocks = []
    for match in FENCE.finditer(text):
        language, _, options = match.group(1).strip().partition(" ")
        before = [line for line in text[:match.start()].splitlines() if line.strip()]
        blocks.append((language, options.strip(), match.group(2), before[-1].strip() if before else ""))
    return blocks


def _blocks(language, path=README):
    return [body for lang, options, body, _ in _fenced(path) if lang == language and not options]


def _run_python_blocks():
    namespace = {"__name__": "readme"}
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        for index, block in enumerate(_blocks("python")):
            filename = f"README.md python block {index + 1}"
            # Scalar kernels are parsed from their source, which inspect finds through linecache.
            linecache.cache[filename] = (len(block), None, block.splitlines(True), filename)
            exec(compile(block, filename, "exec"), namespace)
    return output.getvalue()


def _check_printed(path, printed):
    shown = [body for lang, _, body, before in _fenced(path) if lang == "" and before == "This prints"]
    for block in shown:
        assert block in printed, f"{path.name} shows output that its examples do not print:\n{block}"


def _check_excerpts(path):
    for _language, options, body, _ in _fenced(path):
        if not options.startswith("from="):
            assert not options, f"{path.name}: unknown block option {options!r} (only from=PATH)"
            continue
        source = ROOT / options[len("from="):]
        assert source.is_file(), f"{path.name}: the excerpt's file {source} does not exist"
        wanted = [line.strip() for line in body.splitlines()]
        lines = [line.strip() for line in source.read_text().splitlines()]
        found = any(lines[start:start + len(wanted)] == wanted for start in range(len(lines)))
        assert found, f"{path.name}: this excerpt is not in {options[len('from='):]} (any more):\n{body}"


def test_readme_has_python_examples():
    assert len(_blocks("python")) >= 3


def test_readme_python_blocks_run_and_printed_programs_match():
    printed = _run_python_blocks()
    programs = [block for block in _blocks("") if block.startswith("{ lambda")]
    assert programs, "the README shows no program"
    for program in programs:
        assert program in printed, f"README shows a program that the examples do not print:\n{program}"
    _check_printed(README, printed)
    _check_excerpts(README)


def test_every_example_line_is_inside_a_python_block():
    # A lost fence turns an example into prose (never run) and the following prose into code.
    for path in [README] + DOCS:
        inside, lines = False, []
        for line in path.read_text().splitlines():
            if line.startswith("```"):
                inside = not inside
            elif not inside and line.startswith(("assert ", "print(", "import ", "ad.", "def ")):
                lines.append(line)
        assert not inside and not lines, (path.name, lines)


RUNNER = """
import json, linecache, sys
namespace = {"__name__": "docs"}
for filename, block in json.load(sys.stdin):
    linecache.cache[filename] = (len(block), None, block.splitlines(True), filename)  # kernels read their source
    exec(compile(block, filename, "exec"), namespace)
"""


@pytest.mark.parametrize("page", DOCS, ids=[page.name for page in DOCS])
def test_docs_python_blocks_run_as_written(page):
    _check_excerpts(page)
    blocks = _blocks("python", page)
    if not blocks:
        return  # a page of prose and printed programs
    named = [(f"docs/{page.name} python block {index + 1}", block) for index, block in enumerate(blocks)]
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT),
                                                               os.environ.get("PYTHONPATH", "")]))
    finished = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(named), capture_output=True, text=True,
                              env=environment, timeout=600)
    assert finished.returncode == 0, f"docs/{page.name}: a block failed\n{finished.stderr[-4000:]}"
    _check_printed(page, finished.stdout)
