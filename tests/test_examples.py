"""examples/bf16_dot.py runs, small: its fused f32 accumulation equals float64 arithmetic rounded
to f32 at every step (NumPy, the oracle here; the example asserts it), and the errors come out
in the order one rounding < two roundings < a bf16 accumulator."""

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bf16_dot_example(tmp_path):
    ex = load("bf16_dot")
    checkpoints, errors = ex.dot_errors(n=256, trials=32, seed=3)
    assert checkpoints.tolist() == [16, 32, 64, 128, 256]
    fused, products, bf16_acc = errors.values()
    assert (fused < 1e-6).all() and (products > 1e-5).all() and (bf16_acc > 1e-3).all()
    assert (fused < products).all() and (products < bf16_acc).all()
    pytest.importorskip("matplotlib")
    ex.plot(checkpoints, errors, str(tmp_path / "err.png"))
    assert (tmp_path / "err.png").stat().st_size > 1000


def test_fp8_gemm_example_without_matplotlib_says_how_to_install(monkeypatch, capsys, tmp_path):
    # issue #29 item 7: without matplotlib the example prints its table and the install line
    # (the 'plot' extra), not a ModuleNotFoundError
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)          # import matplotlib fails
    monkeypatch.setattr(sys, "argv", ["fp8_gemm_error.py", "--m", "2",
                                      "--out", str(tmp_path / "p.png")])
    load("fp8_gemm_error").main()
    out = capsys.readouterr().out
    assert "median relative error" in out
    assert "pip install 'ptxfp[plot]'" in out and not (tmp_path / "p.png").exists()
