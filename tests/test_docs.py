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
