"""What a user gets from the package around the API: ``python -m ptxfp``, ``--version``, the
license file the metadata names."""

import os
import pathlib
import subprocess
import sys

import ptxfp

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_module(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "ptxfp", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_python_m_ptxfp_is_the_command():
    r = run_module("eval", "fma.rn.bf16", "0x3F82", "0x3FA0", "0x0001")
    assert r.returncode == 0, r.stderr
    assert "0x3fa3" in r.stdout                   # one rounding (docs/semantics.md)
    assert run_module().returncode == 2           # no command: usage, exit 2


def test_version():
    r = run_module("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"ptxfp {ptxfp.__version__}"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'version = "{ptxfp.__version__}"' in pyproject


def test_license_is_the_apache_text():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert 'license = {text = "Apache-2.0"}' in (ROOT / "pyproject.toml").read_text()
