"""The README's examples run as written: every ```python block, in order, in one namespace.

Every plain ``` block that shows a program (it starts with "{ lambda") must also appear verbatim
in what the Python blocks print, so the IR shown in the README is the IR adarray prints.
"""
import contextlib
import io
import linecache
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _blocks(language):
    return [body for lang, body in FENCE.findall(README.read_text()) if lang == language]


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


def test_readme_has_python_examples():
    assert len(_blocks("python")) >= 3


def test_readme_python_blocks_run_and_printed_programs_match():
    printed = _run_python_blocks()
    programs = [block for block in _blocks("") if block.startswith("{ lambda")]
    assert programs, "the README shows no program"
    for program in programs:
        assert program in printed, f"README shows a program that the examples do not print:\n{program}"


def test_every_example_line_is_inside_a_python_block():
    # A lost fence turns an example into prose (never run) and the following prose into code.
    inside, lines = False, []
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
        elif not inside and line.startswith(("assert ", "print(", "import ", "ad.", "def ")):
            lines.append(line)
    assert not inside and not lines, lines
