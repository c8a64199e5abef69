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


#: the layers of docs/architecture.md, bottom first: a module may import its own layer and below
LAYERS = {"policy": 0, "errors": 0, "limits": 0, "outputs": 0, "core": 1, "isa": 2, "ops": 3,
          "tensor": 3, "encode": 4, "dispatch": 4, "ptx": 5, "vectors": 5, "conformance": 6,
          "hw": 7, "cli": 8, "triton": 8, "__main__": 8}


def test_imports_point_down_the_layers():
    """Read every module's relative imports (ast): none reaches a higher layer than its own
    (the package root, for ``__version__``, excepted), and the top holds only the faces and the
    floor."""
    import ast
    pkg_dir = ROOT / "src" / "ptxfp"
    tops = {p.stem for p in pkg_dir.glob("*.py")} | {p.name for p in pkg_dir.iterdir()
                                                      if (p / "__init__.py").exists()}
    assert tops - {"__init__"} <= set(LAYERS), sorted(tops - set(LAYERS))
    up = []
    for path in pkg_dir.rglob("*.py"):
        rel = path.relative_to(pkg_dir).with_suffix("").parts
        pkg = list(rel[:-1])
        me = rel[0] if rel[0] != "__init__" else None
        if me is None:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.level):
                continue
            base = pkg[:len(pkg) - (node.level - 1)]
            names = base + ([node.module] if node.module else [])
            targets = [names[0]] if names else [a.name for a in node.names]
            for t in targets:
                if t in LAYERS and LAYERS[t] > LAYERS[me]:
                    up.append(f"{'.'.join(rel)} imports {t}")
    assert not up, up
