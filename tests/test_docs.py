"""The API reference (docs/api.md) and the examples in the public docstrings are real output:
run them as doctests, as tests/test_readme.py does for the README's tour."""

import doctest
import importlib
import pathlib

import pytest

import ptxfp

API = pathlib.Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_api_reference():
    result = doctest.testfile(str(API), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 30
    assert result.failed == 0


@pytest.mark.parametrize("name", ["ptxfp", "ptxfp.ops.arith", "ptxfp.ops.cvt", "ptxfp.core.formats",
                                  "ptxfp.isa.spelling", "ptxfp.encode"])
def test_docstring_examples(name):
    # (ptxfp.execute is also the function's name in the package: import the module by name)
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 1
    assert result.failed == 0


def test_every_public_name_is_in_the_reference():
    text = API.read_text()
    for name in ptxfp.__all__:
        assert f"`{name}" in text or f"{name}(" in text, name


@pytest.mark.parametrize("heading", ["## compute:", "## Policies"])
def test_sections_show_their_imports(heading):
    # a reader who starts at this section can paste its first example as it stands (issue #29)
    sec = API.read_text().split(heading, 1)[1]
    block = sec.split("```python\n>>>", 1)[1].split("```", 1)[0]
    first = [ln for ln in (">>>" + block).splitlines() if ln.startswith(">>> ")]
    imports = [ln for ln in first if ln.startswith((">>> import ", ">>> from "))]
    assert first[0] in imports, first[0]
    text = " ".join(imports)
    assert "ptxfp" in text and ("np." not in block or "numpy as np" in text)
    assert "policy." not in block or "from ptxfp import policy" in text


DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def test_tensor_md_examples():
    """docs/tensor.md's examples are real output too (issue #29: every docs example runs)."""
    result = doctest.testfile(str(DOCS / "tensor.md"), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted >= 5
    assert result.failed == 0


def test_interpreter_md_first_example_runs():
    """docs/interpreter.md's opening example (a python block) runs from the repository root and
    computes y = 2x + y (y starts at zero there)."""
    import os
    import numpy as np
    text = (DOCS / "interpreter.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    cwd = os.getcwd()
    os.chdir(DOCS.parent)
    try:
        ns: dict = {}
        exec(compile(code, "interpreter.md", "exec"), ns)
    finally:
        os.chdir(cwd)
    x = np.arange(1024, dtype=np.float32)
    assert np.array_equal(ns["y"], x * 2)
