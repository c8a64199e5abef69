"""The package is typed for its users: py.typed ships, and ``mypy --strict`` (the settings in
pyproject.toml) passes on the public modules and on a typed user script (tests/typed_user.py),
and fails on a script that misuses the API.  Skipped where mypy is not installed (it is in the
``test`` extra)."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytest.importorskip("mypy")


def mypy(*args):
    env = dict(os.environ, MYPYPATH=str(ROOT / "src"))
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(ROOT / ".mypy_cache"), "--no-error-summary", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_py_typed_ships():
    assert (ROOT / "src" / "ptxfp" / "py.typed").is_file()
    import re
    data = re.search(r'^ptxfp = \[(.*)\]$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert data and '"py.typed"' in data.group(1).split(", ")


def test_mypy_strict_on_the_package_and_a_user_script():
    r = mypy("tests/typed_user.py", "src/ptxfp")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_catches_misuse():
    bad = ("import ptxfp\n"
           "x: str = ptxfp.parse('add.f16')\n"
           "ptxfp.execute(3, 0x3C00, 0x3C00)\n"
           "y: str = ptxfp.to_bits(1.0, 'f16')\n"
           "ptxfp.check('add.f16', target=90)\n")
    r = mypy("-c", bad)
    assert r.returncode == 1
    lines = [ln for ln in r.stdout.splitlines() if ": error:" in ln]
    assert [ln.split(":")[1] for ln in lines] == ["2", "3", "4", "5"], r.stdout


def test_the_typed_user_script_runs():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "typed_user.py")], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "illegal-modifier" in r.stdout
