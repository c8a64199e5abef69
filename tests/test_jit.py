"""The disk cache's key covers every module whose code can end up in a cached kernel.

A kernel's machine code contains its callees (decode, the rounding core, NVIDIA's rules...):
a changed callee must change the cache key, or a stale kernel computes the old bits.  The key is
built from the kernel modules' imports, read statically (_jit.kernel_modules); these tests hold
that list to what Python really imports."""

import importlib
import os
import subprocess
import sys
import types

from ptxfp.core import _jit

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def test_every_module_a_kernel_module_imports_is_in_the_key():
    """Read each keyed module's namespace as Python built it (an independent reading of the
    imports): every ptxfp module, function, class or Numba function it holds comes from a
    keyed module."""
    keyed = set(_jit.kernel_modules())
    for root in _jit.KERNEL_ROOTS:
        assert root in keyed
    missing = {}
    for name in sorted(keyed):
        mod = importlib.import_module("ptxfp." + name)
        for attr, v in vars(mod).items():
            if hasattr(mod, "__path__") and isinstance(v, types.ModuleType) \
                    and v.__name__.startswith(mod.__name__ + "."):
                continue            # a package's namespace lists every submodule anyone loaded
            if isinstance(v, types.ModuleType):
                origin = v.__name__
            else:
                origin = getattr(getattr(v, "py_func", v), "__module__", None) or ""
            if origin.startswith("ptxfp.") and origin[len("ptxfp."):] not in keyed:
                missing.setdefault(name, []).append(f"{attr} from {origin}")
    assert not missing, f"names a kernel module holds from modules the key leaves out: {missing}"


def test_the_kernel_modules_import_no_more_than_the_key():
    """In a fresh interpreter, the kernel modules (loaded without the package's own __init__,
    which imports everything) pull in only keyed modules."""
    code = ("import sys, types, importlib.util, os\n"
            "src = sys.argv[1]\n"
            "pkg = types.ModuleType('ptxfp'); pkg.__path__ = [os.path.join(src, 'ptxfp')]\n"
            "sys.modules['ptxfp'] = pkg\n"
            "import ptxfp.ops.kernels, ptxfp.ops.cvt, ptxfp.core._jit\n"
            "print(' '.join(m[6:] for m in sys.modules if m.startswith('ptxfp.')))\n")
    out = subprocess.run([sys.executable, "-c", code, os.path.abspath(SRC)], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out
    assert not sorted(set(out) - set(_jit.kernel_modules()))


def test_the_callees_are_keyed():
    keyed = set(_jit.kernel_modules())
    assert {"core.exact", "core.rounding", "core.nvidia", "core._bitcast", "core.formats",
            "core.types"} <= keyed


def test_the_key_follows_the_sources(tmp_path, monkeypatch):
    """Changing one byte of a callee changes the key."""
    before = _jit._source_key()
    real = _jit._module_path

    def patched(name):
        p = real(name)
        if name == "core.nvidia":
            copy = tmp_path / "nvidia.py"
            copy.write_bytes(open(p, "rb").read() + b"\n# changed\n")
            return str(copy)
        return p

    monkeypatch.setattr(_jit, "_module_path", patched)
    assert _jit._source_key() != before


def test_no_kernel_keeps_the_old_never_true_branch():
    for name in _jit.kernel_modules():
        text = open(_jit._module_path(name)).read()
        assert "SOURCE_KEY < 0" not in text or name == "kernels", name


def test_lane_functions_unpack_the_lane_fields_in_order():
    """The lane functions read a form's constants by position (kernels._build says why): every
    unpacking of K names the Lane's fields, in the Lane's order."""
    import inspect
    import re

    from ptxfp.ops import kernels
    src = inspect.getsource(kernels)
    unpacks = re.findall(r"\(([A-Za-z_,\s]+)\) = K\n", src)
    assert len(unpacks) >= 3
    for u in unpacks:
        assert tuple(x.strip() for x in u.split(",")) == kernels.Lane._fields
