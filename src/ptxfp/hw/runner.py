"""Runners: put a generated kernel on a GPU and bring the destination bits back.

``get_runner(backend)`` picks one:

- ``cupy``: CuPy loads the PTX text with the driver's PTX JIT (``cupy.RawModule(path=...)`` on
  the .ptx file) and launches it on CuPy arrays.
- ``cuda-python``: NVIDIA's ``cuda.bindings.driver`` (``cuModuleLoadData`` of the PTX text,
  ``cuLaunchKernel``), for machines with cuda-python and no CuPy.
- ``model``: no GPU at all; ptxfp itself plays the GPU (a dry run of the whole pipeline, whose
  report says so).  For testing the harness, never for conformance.
- ``interp``: no GPU either; ptxfp's PTX interpreter runs the generated kernel text (checks the
  kernels' indexing, loads and stores on the CPU; not the decomposed kernels: no f32 there).
- ``auto`` (default): CuPy, else cuda-python.

A missing backend or GPU raises ``HardwareUnavailable`` with one line for the user.
"""

import atexit
import os
import shutil
import subprocess
import tempfile

import numpy as np

from .kernels import BLOCK, DEFAULT_SM, ENTRY

#: elements per launch (the kernels index with 32-bit integers)
MAX_LAUNCH = 1 << 30


class HardwareUnavailable(RuntimeError):
    """No usable GPU or CUDA backend; the message is one line for the user."""


class BackendMissing(HardwareUnavailable):
    """The backend's Python package is not installed at all."""


class KernelError(RuntimeError):
    """A kernel failed to load (PTX JIT) or to run."""


def _dtype(width):
    """The host array dtype of a ``width``-bit kernel parameter (its ld/st.global.b<width>)."""
    return np.dtype(f"uint{width}")


class Constant:
    """An operand that is one value for every vector (the fixed c of an exhaustive fma sweep):
    runners keep it on the GPU, filled there once per (value, length), instead of uploading a
    chunk's worth of copies every launch."""

    def __init__(self, value, n=None):
        self.value = int(value)
        self.n = n

    def __repr__(self):
        return f"Constant(0x{self.value:X})"


def _host(x, dtype, n):
    """An operand as a host array (a Constant filled on the host: the CPU runners)."""
    if isinstance(x, Constant):
        return np.full(n, x.value, dtype)
    return x


class Runner:
    """Base: ``run(kernel, operands)`` where ``operands`` maps each source the kernel reads
    ('a', 'b', 'c', and for cvt.rs 'e', 'f', 'rbits': ``kernel.sources``) to an array."""
    name = "?"
    hardware = True

    def device(self):
        """Facts for the report: gpu, sm, driver, cuda (driver API), runtime, backend."""
        raise NotImplementedError

    @property
    def sm(self):
        return self.device()["sm"]

    def run(self, kernel, operands):
        n = None
        arrays = []
        for name, w in kernel.sources:
            if not w:
                arrays.append(None)
                continue
            if name not in operands:
                raise ValueError(f"'{kernel.spelling}' reads operand {name}: none was given")
            x = operands[name]
            if isinstance(x, Constant):
                arrays.append(Constant(x.value & ((1 << w) - 1)))
                continue
            x = np.ascontiguousarray(x, dtype=_dtype(w))
            n = x.size if n is None else n
            if x.size != n:
                raise ValueError("operands of one launch must have the same length")
            arrays.append(x)
        if n is None:
            raise ValueError("a launch needs at least one operand array")
        out = np.empty(n, _dtype(kernel.result_width))
        for s in range(0, out.size, MAX_LAUNCH):
            e = min(out.size, s + MAX_LAUNCH)
            part = [x if x is None or isinstance(x, Constant) else x[s:e] for x in arrays]
            out[s:e] = self.launch(kernel, part, e - s)
        return out

    def launch(self, kernel, arrays, n):
        """Run ``kernel`` on ``n`` elements; ``arrays``: one per ``kernel.sources`` (None where
        unused)."""
        raise NotImplementedError

    def close(self):
        pass


def _nvidia_smi_driver(index):
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        r = subprocess.run([exe, "--query-gpu=driver_version", "--format=csv,noheader",
                            "-i", str(index)], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    out = r.stdout.strip()
    return out.splitlines()[0] if r.returncode == 0 and out else None


def _cuda_version(v):
    return None if not v else f"{v // 1000}.{(v % 1000) // 10}"


class CupyRunner(Runner):
    name = "cupy"

    def __init__(self, index=0):
        try:
            import cupy
        except ImportError:
            raise BackendMissing(
                "CuPy is not installed (pip install 'ptxfp[hw]', or cuda-python with "
                "--backend cuda-python)") from None
        except Exception as exc:           # a CuPy wheel that cannot find its CUDA libraries
            raise HardwareUnavailable(f"CuPy cannot be imported: {exc}") from None
        self.cupy = cupy
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:
            raise HardwareUnavailable(f"no NVIDIA GPU available to CuPy: {_one_line(exc)}") \
                from None
        if count <= index:
            raise HardwareUnavailable(f"no NVIDIA GPU #{index} (CuPy sees {count})")
        self.index = index
        self._dev = cupy.cuda.Device(index)
        self._dev.use()
        self._dir = tempfile.mkdtemp(prefix="ptxfp-hw-")
        atexit.register(shutil.rmtree, self._dir, True)
        self._functions = {}
        self._info = None
        self._const = (None, None)          #: (key, device array) of the last Constant

    def _constant(self, x, dtype, n):
        key = (x.value, np.dtype(dtype).str, n)
        if self._const[0] != key:
            self._const = (None, None)      # free the old one before filling the new
            self._const = (key, self.cupy.full(n, x.value, dtype=dtype))
        return self._const[1]

    def device(self):
        if self._info is None:
            rt = self.cupy.cuda.runtime
            p = rt.getDeviceProperties(self.index)
            name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
            self._info = {
                "gpu": name, "sm": p["major"] * 10 + p["minor"],
                "compute_capability": f"{p['major']}.{p['minor']}",
                "driver": _nvidia_smi_driver(self.index),
                "cuda_driver_api": _cuda_version(rt.driverGetVersion()),
                "cuda_runtime": _cuda_version(rt.runtimeGetVersion()),
                "backend": f"CuPy {self.cupy.__version__}",
            }
        return self._info

    def _function(self, kernel):
        fn = self._functions.get(kernel.ptx)
        if fn is None:
            path = os.path.join(self._dir, f"k{len(self._functions)}.ptx")
            with open(path, "w") as f:
                f.write(kernel.ptx)
            try:
                fn = self.cupy.RawModule(path=path).get_function(ENTRY)
            except Exception as exc:
                raise KernelError(f"the driver refused the PTX of '{kernel.spelling}' "
                                  f"({kernel.mode}, {kernel.target}): {_one_line(exc)}") from None
            self._functions[kernel.ptx] = fn
        return fn

    def launch(self, kernel, arrays, n):
        cp = self.cupy
        fn = self._function(kernel)
        dummy = cp.zeros(1, cp.uint32)
        dev = [dummy if x is None else
               self._constant(x, _dtype(w), n) if isinstance(x, Constant) else cp.asarray(x)
               for x, w in zip(arrays, kernel.widths)]
        out = cp.empty(n, _dtype(kernel.result_width))
        if n:
            try:
                fn(((n + BLOCK - 1) // BLOCK,), (BLOCK,), (*dev, out, np.uint32(n)))
                cp.cuda.Device(self.index).synchronize()
            except Exception as exc:
                raise KernelError(f"'{kernel.spelling}' failed on the GPU: {_one_line(exc)}") \
                    from None
        return cp.asnumpy(out)

    def run_mma(self, kernel, arrays):
        """D's bits of a matrix kernel (hw/mma.py) over ``arrays`` a, b, c."""
        from .mma import cupy_launch
        self.cupy.cuda.Device(self.index).use()
        return cupy_launch(kernel, arrays)

    def close(self):
        self._const = (None, None)
        shutil.rmtree(self._dir, ignore_errors=True)


class CudaPythonRunner(Runner):
    """The same through cuda-python's driver bindings (``cuda.bindings.driver``)."""
    name = "cuda-python"

    def __init__(self, index=0):
        try:
            from cuda.bindings import driver as cu
        except ImportError:
            try:
                from cuda import cuda as cu          # cuda-python before 12.6
            except ImportError:
                raise BackendMissing(
                    "neither CuPy nor cuda-python is installed (pip install 'ptxfp[hw]')") \
                    from None
        except Exception as exc:                     # installed, but broken
            raise HardwareUnavailable(f"cuda-python cannot be imported: {_one_line(exc)}") \
                from None
        self.cu = cu
        try:
            self._check(cu.cuInit(0))
            count = self._check(cu.cuDeviceGetCount())
        except Exception as exc:           # a CUDA error, or no driver library at all
            raise HardwareUnavailable(f"no NVIDIA GPU available to cuda-python: "
                                      f"{_one_line(exc)}") from None
        if count <= index:
            raise HardwareUnavailable(f"no NVIDIA GPU #{index} (cuda-python sees {count})")
        self.index = index
        self._devh = self._check(cu.cuDeviceGet(index))
        self._ctx = self._check(cu.cuDevicePrimaryCtxRetain(self._devh))
        self._check(cu.cuCtxSetCurrent(self._ctx))
        self._functions = {}
        self._modules = []
        self._info = None
        self._const = (None, None)          #: (key, device pointer) of the last Constant

    def _constant(self, x, width, n):
        """A device array of n copies of x.value, filled on the GPU (cuMemsetD16/D32)."""
        key = (x.value, width, n)
        if self._const[0] != key:
            self._free_constant()
            cu = self.cu
            p = self._check(cu.cuMemAlloc(max(4, n * width // 8)))
            self._const = (key, p)
            fill = cu.cuMemsetD16 if width == 16 else cu.cuMemsetD32
            self._check(fill(p, x.value, n))
        return self._const[1]

    def _free_constant(self):
        if self._const[1] is not None:
            self.cu.cuMemFree(self._const[1])
        self._const = (None, None)

    def _check(self, result):
        err, rest = result[0], result[1:]
        if int(err) != 0:
            try:
                msg = self.cu.cuGetErrorString(err)[1]
                msg = msg.decode() if isinstance(msg, bytes) else str(msg)
            except Exception:
                msg = ""
            raise KernelError(f"CUDA error {int(err)} {msg}".strip())
        if not rest:
            return None
        return rest[0] if len(rest) == 1 else rest

    def device(self):
        if self._info is None:
            cu = self.cu
            attr = cu.CUdevice_attribute
            major = self._check(cu.cuDeviceGetAttribute(
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self._devh))
            minor = self._check(cu.cuDeviceGetAttribute(
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self._devh))
            name = self._check(cu.cuDeviceGetName(256, self._devh))
            name = name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name)
            try:
                import cuda.bindings as cb
                version = cb.__version__
            except Exception:
                version = "?"
            self._info = {
                "gpu": name, "sm": major * 10 + minor, "compute_capability": f"{major}.{minor}",
                "driver": _nvidia_smi_driver(self.index),
                "cuda_driver_api": _cuda_version(self._check(cu.cuDriverGetVersion())),
                "cuda_runtime": None, "backend": f"cuda-python {version}",
            }
        return self._info

    def _function(self, kernel):
        fn = self._functions.get(kernel.ptx)
        if fn is None:
            image = np.frombuffer(kernel.ptx.encode() + b"\0", dtype=np.uint8)
            try:
                mod = self._check(self.cu.cuModuleLoadData(image.ctypes.data))
                fn = self._check(self.cu.cuModuleGetFunction(mod, ENTRY.encode()))
            except KernelError as exc:
                raise KernelError(f"the driver refused the PTX of '{kernel.spelling}' "
                                  f"({kernel.mode}, {kernel.target}): {exc}") from None
            self._modules.append(mod)
            self._functions[kernel.ptx] = fn
        return fn

    def launch(self, kernel, arrays, n):
        cu = self.cu
        fn = self._function(kernel)
        out = np.empty(n, _dtype(kernel.result_width))
        if not n:
            return out
        ptrs = []
        try:
            dev = []
            for x, w in zip(arrays + [out], kernel.widths):
                if isinstance(x, Constant):
                    dev.append(self._constant(x, w, n))
                    continue
                nbytes = max(4, 0 if x is None else x.nbytes)
                p = self._check(cu.cuMemAlloc(nbytes))
                ptrs.append(p)
                if x is not None and x is not out:
                    self._check(cu.cuMemcpyHtoD(p, x.ctypes.data, x.nbytes))
                dev.append(p)
            # kernelParams: an array of pointers to each parameter's value
            values = [np.array([int(p)], dtype=np.uint64) for p in dev]
            values.append(np.array([n], dtype=np.uint32))
            params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
            try:
                stream = cu.CUstream(0)
            except Exception:
                stream = 0
            self._check(cu.cuLaunchKernel(fn, (n + BLOCK - 1) // BLOCK, 1, 1, BLOCK, 1, 1, 0,
                                          stream, params.ctypes.data, 0))
            self._check(cu.cuCtxSynchronize())
            self._check(cu.cuMemcpyDtoH(out.ctypes.data, dev[-1], out.nbytes))
        except KernelError as exc:
            raise KernelError(f"'{kernel.spelling}' failed on the GPU: {exc}") from None
        finally:
            for p in ptrs:
                cu.cuMemFree(p)
        return out

    def close(self):
        self._free_constant()
        for m in self._modules:
            self.cu.cuModuleUnload(m)
        self._modules = []
        self._functions = {}



def _no_hardware(sm, gpu, what):
    """``device()`` of a runner where ptxfp itself stands in for the GPU."""
    import ptxfp
    return {"gpu": gpu, "sm": sm, "compute_capability": f"{sm // 10}.{sm % 10}", "driver": None,
            "cuda_driver_api": None, "cuda_runtime": None,
            "backend": f"ptxfp {ptxfp.__version__} {what} (no hardware)"}

class ModelRunner(Runner):
    """ptxfp plays the GPU: a dry run of the harness with no hardware involved.

    ``flip``, for tests of the harness itself, is ``{spelling: (index, bit)}``: the result of
    vector ``index`` of every launch of that form comes back with ``bit`` flipped.
    """
    name = "model"
    hardware = False

    def __init__(self, sm=DEFAULT_SM, flip=None):
        self._sm = sm
        self.flip = dict(flip or {})

    def device(self):
        return _no_hardware(self._sm, "none (dry run: ptxfp plays the GPU)", "model")

    def run_mma(self, kernel, arrays):
        """A matrix kernel (hw/mma.py) played by ``ptxfp.mma`` on ``kernel.target``'s
        family at this runner's sm (wgmma: the arch-specific target)."""
        from ..tensor.api import mma
        target = f"sm_{self._sm}" + ("a" if kernel.target.endswith("a") else "")
        return np.asarray(mma(kernel.spelling, arrays["a"], arrays["b"], arrays["c"],
                              target=target))

    def launch(self, kernel, arrays, n):
        from .forms import model, parse_form
        ops = [_host(x, _dtype(w), n) for x, w in zip(arrays, kernel.widths) if x is not None]
        out = np.asarray(model(parse_form(kernel.spelling), *ops, sm=self._sm)).reshape(-1)
        out = out.copy()
        if kernel.spelling in self.flip and n:
            index, bit = self.flip[kernel.spelling]
            if index < n:
                out[index] ^= out.dtype.type(1 << bit)
        return out


class InterpRunner(Runner):
    """ptxfp's own PTX interpreter (ptxfp.ptx.interp) runs the generated kernel text, in one
    block of threads over a flat memory holding every array parameter (``kernel.names``): a
    CPU check that the kernels index, load, bound-check and store as intended.  The
    instructions themselves are ptxfp's (the decomposed kernels' f32 ones too), so this says
    nothing about hardware.
    """
    name = "interp"
    hardware = False

    def __init__(self, sm=DEFAULT_SM):
        self._sm = sm

    def device(self):
        return _no_hardware(self._sm, "none (ptxfp's PTX interpreter runs the kernels)",
                            "PTX interpreter")

    def launch(self, kernel, arrays, n):
        from ..errors import PtxfpError
        from ..ptx.interp import MEMORY_KEY, run
        out = np.zeros(n, _dtype(kernel.result_width))
        if not n:
            return out
        parts, addr, pos = [], {}, 0
        arrays = [None if x is None else _host(x, _dtype(w), n)
                  for x, w in zip(arrays, kernel.widths)]
        for name, x in zip(kernel.names, arrays + [out]):
            addr[name] = pos
            if x is not None:
                parts.append(np.ascontiguousarray(x).view(np.uint8))
                pos += x.nbytes
            pos += 8                                  # a gap: no two arrays touch
            parts.append(np.zeros(8, np.uint8))
        memory = np.concatenate(parts)
        inputs = {f"param_{k}": v for k, v in addr.items()}
        inputs["param_n"] = n
        threads = -(-n // BLOCK) * BLOCK + BLOCK      # more threads than n: the bound check runs
        try:
            mem = run(kernel.ptx, inputs, memory=memory, threads=threads)[MEMORY_KEY]
        except PtxfpError as exc:
            raise KernelError(f"the PTX interpreter cannot run '{kernel.spelling}' "
                              f"({kernel.mode}): {_one_line(exc)}") from None
        if mem[addr["d"] + out.nbytes:].any() or mem.size != memory.size:
            raise KernelError(f"'{kernel.spelling}' wrote outside d")
        return mem[addr["d"]:addr["d"] + out.nbytes].view(out.dtype).copy()


def _one_line(exc):
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def get_runner(backend="auto", index=0, sm=None):
    """A runner for ``backend`` ('auto', 'cupy', 'cuda-python', 'model')."""
    if backend == "model":
        return ModelRunner(sm or DEFAULT_SM)
    if backend == "interp":
        return InterpRunner(sm or DEFAULT_SM)
    if backend == "cupy":
        return CupyRunner(index)
    if backend == "cuda-python":
        return CudaPythonRunner(index)
    if backend != "auto":
        raise ValueError(f"unknown backend {backend!r}")
    try:
        return CupyRunner(index)
    except HardwareUnavailable as first:
        try:
            return CudaPythonRunner(index)
        except HardwareUnavailable as second:
            if isinstance(first, BackendMissing) and isinstance(second, BackendMissing):
                raise HardwareUnavailable(
                    "no CUDA backend: install CuPy (pip install 'ptxfp[hw]') or cuda-python, "
                    "on a machine with an NVIDIA GPU") from None
            raise (second if isinstance(first, BackendMissing) else first) from None
