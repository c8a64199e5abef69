"""ptxfp.triton: @triton.jit kernels compiled by Triton for sm_80 and run by ptxfp.run, over
NumPy arrays and torch CPU tensors.  Expected values: MPFR (gmpy2) for the elementwise kernel,
ptxfp.matmul with the module's own mma.sync for the GEMM (held to MMA-Sim and recorded GPU
answers by tests/test_tensor*.py), and the docs' examples (docs/triton.md, docs/api.md) run as
written."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxfp

ROOT = Path(__file__).resolve().parents[1]


def test_without_triton_one_line_says_what_to_install(tmp_path):
    """(no Triton needed) A Python where `import triton` fails gets one TritonMissing line."""
    code = ("import sys; sys.modules['triton'] = None\n"
            "import ptxfp.triton as pt\n"
            "try:\n    pt.launch(None, 1)\n"
            "except pt.TritonMissing as e:\n    print('ERR', e)\n"
            "    assert isinstance(e, ImportError) and isinstance(e, ValueError)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
                       timeout=300)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert line.startswith("ERR ptxfp.triton needs Triton: pip install 'ptxfp[triton]'")
    assert "\n" not in line


triton = pytest.importorskip("triton", reason="ptxfp.triton needs Triton: pip install 'ptxfp[triton]'")
tl = pytest.importorskip("triton.language")
import ptxfp.triton as pt  # noqa: E402


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x * alpha + y, mask=m)


def _fma_f32(x, a, y):
    """MPFR: x * a + y rounded once to f32 (24 bits, subnormals as IEEE)."""
    import gmpy2
    ctx = gmpy2.ieee(32)
    return np.array([float(ctx.fma(xi, float(a), yi)) for xi, yi in zip(x.tolist(), y.tolist())],
                    np.float32)


def test_axpy_is_one_rounding_and_writes_in_place():
    rng = np.random.default_rng(2)
    n = 1000                                   # not a multiple of the block: the mask
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full(n + 8, 7.0, np.float32)      # a view: the tail is not the kernel's
    alpha = 1.0 / 3.0                          # a Python float: fp32, rounded as Triton packs it
    run = pt.launch(axpy, (triton.cdiv(n, 256),), x, y, out[:n], n, alpha, BLOCK=256)
    assert "fma.rn.f32" in run.ptx             # Triton contracts x * alpha + y
    assert run.compiled.signature["n"] == "i32" and run.compiled.signature["alpha"] == "fp32"
    assert run.block == 128 and run.grid == (4, 1, 1)
    want = _fma_f32(x, np.float32(alpha), y)
    assert np.array_equal(out[:n].view(np.uint32), want.view(np.uint32))
    assert (out[n:] == 7.0).all()


def test_jit_runner_grid_function_and_torch_tensors():
    torch = pytest.importorskip("torch")
    n = 512
    g = torch.Generator().manual_seed(3)
    x = torch.randn(n, generator=g).to(torch.bfloat16)
    y = torch.randn(n, generator=g).to(torch.bfloat16)
    out = torch.zeros(n, dtype=torch.bfloat16)
    run = pt.jit_runner(axpy, num_warps=2)[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](
        x, y, out, n, 2.0, BLOCK=128)
    assert run.compiled.signature["x_ptr"] == "*bf16" and run.block == 64 and run.grid[0] == 4
    # bf16 * 2 + bf16 in f32 (Triton computes bf16 arithmetic in f32), rounded to bf16
    xf, yf = x.float().numpy(), y.float().numpy()
    want = torch.from_numpy(_fma_f32(xf, np.float32(2.0), yf)).to(torch.bfloat16)
    assert torch.equal(out.view(torch.int16), want.view(torch.int16))


def test_triton_specialises_ints_as_triton_does():
    x = np.zeros(16, np.float32)
    c = pt.compile_kernel(axpy, x, x, x, 1, 1.0, BLOCK=16)
    assert c.signature["n"] == "constexpr"        # the int 1 is a constant
    c = pt.compile_kernel(axpy, x, x, x, 2**40, 1.0, BLOCK=16)
    assert c.signature["n"] == "i64"
    c = pt.compile_kernel(axpy, x, x, x[1:], 32, 1.0, BLOCK=16)
    assert c.attrs[(3,)] == [["tt.divisibility", 16]]      # 32: a multiple of 16
    assert c.attrs[(2,)] == []                              # 4 bytes into its array: not 16-aligned


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@pytest.mark.parametrize("dtype, ins", [
    ("bfloat16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
    ("float32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")])
@pytest.mark.parametrize("stages", [1, 3])
def test_gemm_through_launch_is_ptxfp_matmul(dtype, ins, stages):
    import ml_dtypes
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32
    rng = np.random.default_rng(5)
    M, N, K = 64, 32, 64
    A = (rng.standard_normal((M, K)) * np.exp2(rng.integers(-5, 6, (M, K)))).astype(dt)
    B = (rng.standard_normal((K, N)) * np.exp2(rng.integers(-5, 6, (K, N)))).astype(dt)
    C = np.zeros((M, N), np.float32)
    run = pt.launch(mm, (M // 32, N // 32), A, B, C, M, N, K, BM=32, BN=32, BK=32,
                    num_stages=stages)
    assert ins in run.ptx and ("cp.async" in run.ptx) == (stages > 1)
    D = np.asarray(ptxfp.matmul(A, B, instruction=ins, target="sm_80"), np.float32)
    assert np.array_equal(C.view(np.uint32), D.view(np.uint32))


def test_bad_arguments_are_one_line():
    x = np.zeros(16, np.float32)
    with pytest.raises(ptxfp.errors.OperandError, match="negative strides"):
        pt.launch(axpy, 1, x[::-1], x, x, 16, 1.0, BLOCK=16)
    with pytest.raises(ptxfp.errors.OperandError, match="expected a @triton.jit function"):
        pt.launch(lambda: None, 1)
    with pytest.raises(ptxfp.errors.OperandError, match="target='gfx90a'"):
        pt.launch(axpy, 1, x, x, x, 16, 1.0, BLOCK=16, target="gfx90a")


@triton.jit
def scalars(out_ptr, flag, h, big, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.where(flag, h.to(tl.float32), -1.0) + (big % 1024).to(tl.float32)
    tl.store(out_ptr + offs, v + offs * 0.0)


def test_launch_packs_from_public_information(monkeypatch):
    """No private Triton helper: the compile arguments come from the binder, the backend's
    parse_options / parse_attr and kernel.arg_names; the launch parameters are laid onto the
    .entry's own parameter list (a bool, an fp32 and an i64 scalar among them)."""
    def private(*a, **k):
        raise AssertionError("ptxfp.triton called JITFunction._pack_args")
    monkeypatch.setattr(type(scalars), "_pack_args", private, raising=False)
    out = np.zeros(32, np.float32)
    run = pt.launch(scalars, 1, out, True, 1.5, 2**40 + 7, BLOCK=32)
    sig = run.compiled.signature
    assert (sig["flag"], sig["h"], sig["big"]) == ("u1", "fp32", "i64")
    assert (out == 1.5 + 7).all()
    run = pt.launch(scalars, 1, out, False, 1.5, 2**40 + 3, BLOCK=32)
    assert (out == -1.0 + 3).all()


def test_launch_packing_errors_are_one_line():
    x = np.zeros(16, np.float32)
    with pytest.raises(ptxfp.errors.OperandError, match="neither a parameter of the kernel "
                                                          "nor a Triton option") as e:
        pt.launch(axpy, 1, x, x, x, 16, 1.0, BLOCK=16, num_wraps=2)
    assert "\n" not in str(e.value)
    from ptxfp.triton.launch import _pack
    c = pt.compile_kernel(axpy, x, x, x, 16, 1.0, BLOCK=16)
    with pytest.raises(ptxfp.errors.OperandError, match="calling convention") as e:
        _pack(c, [("x_ptr", "*fp32", 256)] * 7, [0, 0])
    assert "\n" not in str(e.value)
    with pytest.raises(ptxfp.errors.OperandError, match=r"argument 'n' \(fp64\) meets") as e:
        _pack(c, [("x", "*fp32", 0)] * 3 + [("n", "fp64", 0), ("alpha", "fp32", 0)], [0, 0])


def _python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


@pytest.mark.parametrize("doc, index", [("triton.md", 0), ("triton.md", 1), ("api.md", None)])
def test_docs_examples_run(doc, index, tmp_path, monkeypatch):
    """The examples run as written (from a file: Triton reads a kernel's source)."""
    blocks = _python_blocks(ROOT / "docs" / doc)
    if index is None:                          # api.md: the block that launches a kernel
        blocks = [b for b in blocks if "ptxfp.triton.launch(" in b and "@triton.jit" in b]
        assert blocks
        index = 0
    f = tmp_path / f"example_{doc.split('.')[0]}_{index}.py"
    f.write_text(blocks[index])
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    importlib.import_module(f.stem)
