"""Which mul/add pairs ptxas contracts into one fused multiply-add, read from its machine code.

ptxas (``--fmad=true``, its default) may fuse a ``mul`` and an ``add``/``sub`` that carry no
rounding modifier into one FFMA (f32), HFMA2 (f16, f16x2, bf16, bf16x2) or DFMA (f64).  This
tool learns its rule from what it emits: each pattern of PATTERNS is a small kernel (inputs
loaded from global memory, the pattern's statements one to a line, its results stored) compiled
with ``ptxas -lineinfo``; ``nvdisasm -gp`` then names, for every SASS instruction, the PTX line
it came from, so an FMA-class instruction on an ``add``/``sub`` line says that ptxas fused it,
and the ``mul`` line that defined its operand is the other half of the pair.

    python tools/contraction_probe.py [--ptxas PATH] [--nvdisasm PATH] [--out FILE]

writes the observations (per pattern, target, -O level and --fmad) to
tests/data/contraction/ptxas_13.5.json; tests/test_contract.py holds ptxfp.ptx.contract to
them.  ``sass_by_line`` and ``fused_pairs`` are used by tools/contraction_check.py on whole
modules too.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests/data/contraction/ptxas_13.5.json"
PTXAS = "/work/tools/cuda135/nvidia/cu13/bin/ptxas"
NVDISASM = "/work/tools/sfu_bin/nvdisasm"

#: SASS opcodes that are a fused multiply-add of floating-point values
FMA_SASS = re.compile(r"^(FFMA|HFMA2|DFMA|FFMA2)\b")
_LINE = re.compile(r'//## File "\.nv_debug_ptx_txt", line (\d+)')
_INS = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")


def sass_by_line(ptx: str, target: str, *, ptxas: str = PTXAS, nvdisasm: str = NVDISASM,
                 opt: int = 3, fmad: bool = True) -> dict[int, list[str]]:
    """PTX line (1-based) -> the SASS instructions ptxas made of it (opcode and operands,
    the predicate guard kept), for the first target `target`."""
    with tempfile.TemporaryDirectory() as d:
        src, cubin = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(ptx)
        subprocess.run([ptxas, f"-arch={target}", f"-O{opt}", f"--fmad={str(fmad).lower()}",
                        "-lineinfo", str(src), "-o", str(cubin)], check=True,
                       capture_output=True, text=True)
        text = subprocess.run([nvdisasm, "-gp", "-c", str(cubin)], check=True,
                              capture_output=True, text=True).stdout
    out: dict[int, list[str]] = {}
    line = 0
    for raw in text.splitlines():
        m = _LINE.search(raw)
        if m:
            line = int(m.group(1))
            continue
        m = _INS.search(raw)
        if m and line:
            ins = re.sub(r"\s+", " ", m.group(1).replace(".reuse", "")).strip()
            out.setdefault(line, []).append(ins)
    return out


_STMT = re.compile(r"^\s*(@!?%\w+\s+)?([a-z][\w.:]*)\s+(.*?);\s*(//.*)?$")
_REG = re.compile(r"%[\w.]+")


def statements(ptx: str) -> dict[int, tuple[str, list[str]]]:
    """line -> (opcode spelling, operand texts) for the lines holding one PTX statement."""
    out = {}
    for i, raw in enumerate(ptx.splitlines(), 1):
        m = _STMT.match(raw)
        if m and not m.group(2).startswith("."):
            out[i] = (m.group(2), [o.strip() for o in m.group(3).split(",")])
    return out


def _is_float(sp: str) -> bool:
    return sp.rsplit(".", 1)[-1] in ("f32", "f16", "f16x2", "bf16", "bf16x2", "f64")


def fused_pairs(ptx: str, by_line: dict[int, list[str]]) -> list[tuple[int, int]]:
    """The (producer line, add line) pairs ptxas fused: every float add/sub whose SASS holds an
    FMA-class instruction, paired with the line that produced the operand it fused: of the
    lines that last defined (in text order) its two sources, followed back through
    ``mov``/``neg`` copies, the one whose own multiply (an unguarded FMUL, HMUL2 or DMUL) is
    gone from the SASS; the producer is 0 where none is."""
    stm = statements(ptx)
    last_def: dict[str, int] = {}
    pairs = []

    def origin(reg: str) -> int | None:
        line = last_def.get(reg)
        while line is not None:
            sp, ops = stm[line]
            if sp.split(".", 1)[0] in ("mov", "neg") and len(ops) == 2 and \
                    _REG.fullmatch(ops[1]) and ops[1] in last_def:
                line = last_def[ops[1]]
                continue
            return line
        return None

    def absorbed(line: int) -> bool:
        """Is the line's own multiply gone (for an SFU form: no FMUL after its MUFU)?"""
        sass = by_line.get(line, [])
        mufu = [k for k, s in enumerate(sass) if s.startswith("MUFU")]
        tail = sass[mufu[-1] + 1:] if mufu else sass
        return not any(re.match(r"(FMUL|HMUL2|DMUL)\b", s) for s in tail)

    for line in sorted(stm):
        sp, ops = stm[line]
        op = sp.split(".", 1)[0]
        if op in ("add", "sub") and _is_float(sp) and any(
                FMA_SASS.match(s.split(" ", 1)[-1] if s.startswith("@") else s)
                for s in by_line.get(line, ())):
            prods = [p for p in (origin(o) for o in ops[1:3]) if p is not None]
            gone = [p for p in prods if absorbed(p)
                    and stm[p][0].split(".", 1)[0] in ("mul", "div", "rcp")]
            pairs.append((gone[0] if gone else 0, line))
        if ops and _REG.fullmatch(ops[0]):
            last_def[ops[0]] = line
    return pairs


# ---------------------------------------------------------------------------------------------
# The patterns.  Each is (type, number of inputs, statements, stored registers); inputs are
# %x1..%xN (loaded), temporaries anything else.  Statements are one per line.

def _p(t, n, body, outs, targets=None):
    return {"type": t, "inputs": n, "body": body, "outs": outs, "targets": targets}


PATTERNS: dict[str, dict] = {}
for _t in ("f32", "f16", "f16x2", "f64", "bf16", "bf16x2"):
    _tg = ("sm_90",) if _t.startswith("bf16") else None
    _ftz = ".ftz" if _t in ("f32",) else ""
    PATTERNS.update({
        f"{_t}/first": _p(_t, 3, [f"mul.{_t} %t1, %x1, %x2;", f"add.{_t} %d1, %t1, %x3;"],
                          ["%d1"], _tg),
        f"{_t}/second": _p(_t, 3, [f"mul.{_t} %t1, %x1, %x2;", f"add.{_t} %d1, %x3, %t1;"],
                           ["%d1"], _tg),
        f"{_t}/sub_first": _p(_t, 3, [f"mul.{_t} %t1, %x1, %x2;", f"sub.{_t} %d1, %t1, %x3;"],
                              ["%d1"], _tg),
        f"{_t}/sub_second": _p(_t, 3, [f"mul.{_t} %t1, %x1, %x2;",
                                       f"sub.{_t} %d1, %x3, %t1;"], ["%d1"], _tg),
        f"{_t}/mul_rn": _p(_t, 3, [f"mul.rn.{_t} %t1, %x1, %x2;", f"add.{_t} %d1, %t1, %x3;"],
                           ["%d1"], _tg),
        f"{_t}/add_rn": _p(_t, 3, [f"mul.{_t} %t1, %x1, %x2;", f"add.rn.{_t} %d1, %t1, %x3;"],
                           ["%d1"], _tg),
        f"{_t}/two_uses_store": _p(_t, 3, [f"mul.{_t} %t1, %x1, %x2;",
                                           f"add.{_t} %d1, %t1, %x3;"], ["%d1", "%t1"], _tg),
        f"{_t}/two_adds": _p(_t, 4, [f"mul.{_t} %t1, %x1, %x2;", f"add.{_t} %d1, %t1, %x3;",
                                     f"add.{_t} %d2, %t1, %x4;"], ["%d1", "%d2"], _tg),
        f"{_t}/two_muls": _p(_t, 4, [f"mul.{_t} %t1, %x1, %x2;", f"mul.{_t} %t2, %x3, %x4;",
                                     f"add.{_t} %d1, %t1, %t2;"], ["%d1"], _tg),
        f"{_t}/two_muls_rev": _p(_t, 4, [f"mul.{_t} %t2, %x3, %x4;", f"mul.{_t} %t1, %x1, %x2;",
                                         f"add.{_t} %d1, %t1, %t2;"], ["%d1"], _tg),
        f"{_t}/square_add": _p(_t, 2, [f"mul.{_t} %t1, %x1, %x2;", f"add.{_t} %d1, %t1, %t1;"],
                               ["%d1"], _tg),
        f"{_t}/chain": _p(_t, 4, [f"mul.{_t} %t1, %x1, %x2;", f"add.{_t} %t2, %t1, %x3;",
                                  f"mul.{_t} %t3, %t2, %x4;", f"add.{_t} %d1, %t3, %x1;"],
                          ["%d1"], _tg),
        f"{_t}/mul_into_fma": _p(_t, 4, [f"mul.{_t} %t1, %x1, %x2;",
                                         f"fma.rn.{_t} %d1, %x3, %x4, %t1;"], ["%d1"], _tg),
    })
    if _ftz:
        PATTERNS.update({
            f"{_t}/ftz_both": _p(_t, 3, [f"mul.ftz.{_t} %t1, %x1, %x2;",
                                         f"add.ftz.{_t} %d1, %t1, %x3;"], ["%d1"]),
            f"{_t}/ftz_mul": _p(_t, 3, [f"mul.ftz.{_t} %t1, %x1, %x2;",
                                        f"add.{_t} %d1, %t1, %x3;"], ["%d1"]),
            f"{_t}/ftz_add": _p(_t, 3, [f"mul.{_t} %t1, %x1, %x2;",
                                        f"add.ftz.{_t} %d1, %t1, %x3;"], ["%d1"]),
            f"{_t}/sat_add": _p(_t, 3, [f"mul.{_t} %t1, %x1, %x2;",
                                        f"add.sat.{_t} %d1, %t1, %x3;"], ["%d1"]),
            f"{_t}/sat_mul": _p(_t, 3, [f"mul.sat.{_t} %t1, %x1, %x2;",
                                        f"add.{_t} %d1, %t1, %x3;"], ["%d1"]),
            f"{_t}/mul_rz": _p(_t, 3, [f"mul.rz.{_t} %t1, %x1, %x2;",
                                       f"add.{_t} %d1, %t1, %x3;"], ["%d1"]),
        })

# across control flow: the product made before a branch, the add after the join or in one arm
for _t in ("f32", "f16"):
    PATTERNS[f"{_t}/across_branch"] = _p(_t, 3, [
        f"mul.{_t} %t1, %x1, %x2;", "setp.ne.s32 %p1, %i0, 0;", "@%p1 bra L1;",
        f"add.{_t} %d1, %t1, %x3;", "bra L2;", "L1:", f"sub.{_t} %d1, %t1, %x3;", "L2:"],
        ["%d1"])
    PATTERNS[f"{_t}/across_join"] = _p(_t, 3, [
        f"mul.{_t} %t1, %x1, %x2;", "setp.ne.s32 %p1, %i0, 0;", "@%p1 bra L1;",
        f"mov.b{16 if _t == 'f16' else 32} %x3, %x1;", "L1:", f"add.{_t} %d1, %t1, %x3;"],
        ["%d1"])
    PATTERNS[f"{_t}/predicated_add"] = _p(_t, 3, [
        f"mul.{_t} %t1, %x1, %x2;", "setp.ne.s32 %p1, %i0, 0;", f"mov.{_t} %d1, %x3;",
        f"@%p1 add.{_t} %d1, %t1, %x3;"], ["%d1"])
    PATTERNS[f"{_t}/predicated_mul"] = _p(_t, 3, [
        "setp.ne.s32 %p1, %i0, 0;", f"mov.{_t} %t1, %x3;", f"@%p1 mul.{_t} %t1, %x1, %x2;",
        f"add.{_t} %d1, %t1, %x3;"], ["%d1"])
    PATTERNS[f"{_t}/far"] = _p(_t, 4, [f"mul.{_t} %t1, %x1, %x2;"] + [
        f"{'add' if i % 2 else 'mul'}.rn.{_t} %x4, %x4, %x3;" for i in range(24)] + [
        f"add.{_t} %d1, %t1, %x4;"], ["%d1"])
    PATTERNS[f"{_t}/loop_invariant"] = _p(_t, 3, [
        f"mul.{_t} %t1, %x1, %x2;", "mov.u32 %r1, 0;", "L1:", f"add.{_t} %x3, %t1, %x3;",
        "add.u32 %r1, %r1, 1;", "setp.lt.u32 %p1, %r1, %i0;", "@%p1 bra L1;",
        f"mov.{_t} %d1, %x3;"], ["%d1"])

# through the SFU and division expansions: the form's result, then an add/sub
for _form in ("div.full.f32", "div.full.ftz.f32", "div.approx.f32", "div.approx.ftz.f32",
              "rcp.approx.f32", "rcp.approx.ftz.f32", "ex2.approx.f32", "ex2.approx.ftz.f32",
              "rsqrt.approx.f32", "sqrt.approx.f32", "lg2.approx.f32", "div.rn.f32",
              "rcp.rn.f32", "sqrt.rn.f32", "sin.approx.f32", "tanh.approx.f32"):
    _two = _form.startswith("div")
    _src = "%x1, %x2" if _two else "%x1"
    PATTERNS[f"sfu/{_form}/sub_second"] = _p("f32", 3, [f"{_form} %t1, {_src};",
                                                        "sub.f32 %d1, %x3, %t1;"], ["%d1"])
    PATTERNS[f"sfu/{_form}/add_first"] = _p("f32", 3, [f"{_form} %t1, {_src};",
                                                       "add.f32 %d1, %t1, %x3;"], ["%d1"])
    PATTERNS[f"sfu/{_form}/add_ftz"] = _p("f32", 3, [f"{_form} %t1, {_src};",
                                                     "add.ftz.f32 %d1, %t1, %x3;"], ["%d1"])
    PATTERNS[f"sfu/{_form}/two_uses"] = _p("f32", 3, [f"{_form} %t1, {_src};",
                                                      "add.f32 %d1, %t1, %x3;"], ["%d1", "%t1"])
for _t in ("f32", "f16"):
    PATTERNS[f"{_t}/sub_two_muls"] = _p(_t, 4, [f"mul.{_t} %t1, %x1, %x2;",
                                                f"mul.{_t} %t2, %x3, %x4;",
                                                f"sub.{_t} %d1, %t1, %t2;"], ["%d1"])
    PATTERNS[f"{_t}/two_muls_first_stored"] = _p(_t, 4, [
        f"mul.{_t} %t1, %x1, %x2;", f"mul.{_t} %t2, %x3, %x4;", f"add.{_t} %d1, %t1, %t2;"],
        ["%d1", "%t1"])
    PATTERNS[f"{_t}/use_in_other_block"] = _p(_t, 4, [
        f"mul.{_t} %t1, %x1, %x2;", f"add.{_t} %d1, %t1, %x3;", "setp.ne.s32 %p1, %i0, 0;",
        "@%p1 bra L1;", f"add.{_t} %d1, %t1, %x4;", "L1:"], ["%d1"])
    PATTERNS[f"{_t}/add_then_mul_use"] = _p(_t, 3, [
        f"mul.{_t} %t1, %x1, %x2;", f"add.{_t} %d1, %t1, %x3;", f"mul.{_t} %d2, %t1, %x3;"],
        ["%d1", "%d2"])
    PATTERNS[f"{_t}/add_before_label"] = _p(_t, 3, [
        f"mul.{_t} %t1, %x1, %x2;", "L0:", f"add.{_t} %d1, %t1, %x3;"], ["%d1"])
PATTERNS["f32/mixed_ftz_uses"] = _p("f32", 4, [
    "mul.f32 %t1, %x1, %x2;", "add.f32 %d1, %t1, %x3;", "add.ftz.f32 %d2, %t1, %x4;"],
    ["%d1", "%d2"])
PATTERNS["f32/neg_two_uses"] = _p("f32", 3, [
    "mul.f32 %t1, %x1, %x2;", "neg.f32 %t2, %t1;", "add.f32 %d1, %t2, %x3;",
    "add.f32 %d2, %t1, %x3;"], ["%d1", "%d2"])
PATTERNS["f32/abs_between"] = _p("f32", 3, ["mul.f32 %t1, %x1, %x2;", "abs.f32 %t2, %t1;",
                                            "add.f32 %d1, %t2, %x3;"], ["%d1"])
PATTERNS["sfu/mul_then_div"] = _p("f32", 3, ["mul.f32 %t1, %x1, %x2;",
                                             "div.full.f32 %d1, %t1, %x3;"], ["%d1"])
PATTERNS["f32/neg_between"] = _p("f32", 3, ["mul.f32 %t1, %x1, %x2;", "neg.f32 %t2, %t1;",
                                            "add.f32 %d1, %t2, %x3;"], ["%d1"])
PATTERNS["f32/imm_mul"] = _p("f32", 2, ["mul.f32 %t1, %x1, 0f3FC00000;",
                                        "add.f32 %d1, %t1, %x2;"], ["%d1"])
PATTERNS["f32/imm_add"] = _p("f32", 2, ["mul.f32 %t1, %x1, %x2;",
                                        "add.f32 %d1, %t1, 0f3FC00000;"], ["%d1"])
PATTERNS["f32/mul_by_two"] = _p("f32", 2, ["mul.f32 %t1, %x1, 0f40000000;",
                                           "add.f32 %d1, %t1, %x2;"], ["%d1"])
PATTERNS["f32/mad_f32"] = _p("f32", 3, ["mad.rn.f32 %d1, %x1, %x2, %x3;"], ["%d1"])
PATTERNS["f32/mul_cvt_add"] = _p("f32", 3, ["mul.f32 %t1, %x1, %x2;",
                                            "mov.b32 %r9, %t1;", "mov.b32 %t2, %r9;",
                                            "add.f32 %d1, %t2, %x3;"], ["%d1"])
PATTERNS["f32/mixed_f16_mul"] = _p("f32", 3, ["cvt.rn.f16.f32 %h1, %x1;",
                                              "cvt.rn.f16.f32 %h2, %x2;",
                                              "mul.f16 %h3, %h1, %h2;",
                                              "cvt.f32.f16 %t1, %h3;",
                                              "add.f32 %d1, %t1, %x3;"], ["%d1"])

TARGETS = ("sm_75", "sm_80", "sm_90", "sm_100")
_WIDTH = {"f32": 32, "f16": 16, "f16x2": 32, "f64": 64, "bf16": 16, "bf16x2": 32}


def kernel(pat: dict, target: str) -> tuple[str, int]:
    """The PTX of a pattern and the line of its first statement."""
    t, n = pat["type"], pat["inputs"]
    w = _WIDTH[t]
    size = w // 8
    regs = sorted({r for s in pat["body"] for r in _REG.findall(s)} | set(pat["outs"])
                  | {f"%x{i}" for i in range(1, n + 1)} | {"%i0"})
    decl = []
    for r in regs:
        if r.startswith("%p"):
            decl.append(f".reg .pred {r};")
        elif r.startswith("%r") or r == "%i0":
            decl.append(f".reg .u32 {r};")
        elif r.startswith("%h"):
            decl.append(f".reg .b16 {r};")
        else:
            decl.append(f".reg .{'b' + str(w) if t.endswith('x2') or t.startswith('bf') else t}"
                        f" {r};")
    lines = [".version 8.7", f".target {target}", ".address_size 64",
             ".visible .entry k(.param .u64 p, .param .u32 q) {",
             ".reg .b64 %rd<3>;", *decl, "ld.param.u64 %rd1, [p];", "ld.param.u32 %i0, [q];",
             "cvta.to.global.u64 %rd2, %rd1;"]
    ld = f"b{w}" if t.endswith("x2") or t.startswith("bf") or t == "f16" else t
    for i in range(1, n + 1):
        lines.append(f"ld.global.{ld} %x{i}, [%rd2+{(i - 1) * size}];")
    first = len(lines) + 1
    lines += pat["body"]
    for j, r in enumerate(pat["outs"]):
        lines.append(f"st.global.{ld} [%rd2+{(n + j) * size}], {r};")
    if not any("%i0" in s for s in pat["body"]):
        lines.insert(lines.index("ld.param.u32 %i0, [q];"), "// (q unused)")
        lines.remove("ld.param.u32 %i0, [q];")
        decl.remove(".reg .u32 %i0;")
        lines.remove(".reg .u32 %i0;")
    lines += ["ret;", "}", ""]
    first = lines.index(pat["body"][0]) + 1
    return "\n".join(lines), first


def observe(pat: dict, target: str, opt: int = 3, fmad: bool = True, **tools) -> dict:
    text, first = kernel(pat, target)
    try:
        by_line = sass_by_line(text, target, opt=opt, fmad=fmad, **tools)
    except subprocess.CalledProcessError as e:
        return {"sass": {}, "fused": [], "error": (e.stderr or "").strip()}
    body = {str(i - first): by_line.get(i, []) for i in range(first, first + len(pat["body"]))}
    pairs = [(m - first, a - first) for m, a in fused_pairs(text, by_line)]
    return {"sass": body, "fused": pairs}


#: the patterns also compiled for sm_75 and sm_100, and with -O0 and --fmad=false on sm_90
WIDE = ("f32/first", "f32/two_adds", "f16/first", "f16x2/first", "f64/first",
        "sfu/div.full.f32/sub_second", "sfu/rcp.approx.f32/add_first", "f32/neg_between")


def configs(name: str, pat: dict) -> list[tuple[str, int, bool]]:
    """(target, -O level, --fmad) to compile a pattern with: sm_90 at -O3, sm_80 too for the
    division forms, and sm_75, sm_100, -O0 and --fmad=false for the patterns of WIDE."""
    if pat["targets"]:
        return [(t, 3, True) for t in pat["targets"]]
    out = [("sm_90", 3, True)]
    if name in WIDE or name.startswith("sfu/div") or name.startswith("sfu/rcp.approx"):
        out.append(("sm_80", 3, True))
    if name in WIDE:
        out += [("sm_75", 3, True), ("sm_100", 3, True), ("sm_90", 0, True),
                ("sm_90", 3, False)]
    return out


def version(ptxas: str) -> str:
    return subprocess.run([ptxas, "--version"], check=True, capture_output=True,
                          text=True).stdout.strip().splitlines()[-2].strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptxas", default=PTXAS)
    ap.add_argument("--nvdisasm", default=NVDISASM)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--reuse", default=str(OUT),
                    help="an earlier output whose runs of unchanged patterns are kept")
    ap.add_argument("--jobs", type=int, default=2, help="ptxas runs at once")
    ap.add_argument("--only", default="", help="a substring of the pattern names to run")
    a = ap.parse_args()
    tools = {"ptxas": a.ptxas, "nvdisasm": a.nvdisasm}
    jobs = [(name, pat, *cfg) for name, pat in PATTERNS.items() if a.only in name
            for cfg in configs(name, pat)]
    # runs of an earlier output whose pattern is unchanged are kept, their pairs re-read
    done = {}
    if a.reuse and Path(a.reuse).exists():
        old = json.loads(Path(a.reuse).read_text())
        for r in old["runs"]:
            pat = PATTERNS.get(r["pattern"])
            if pat is not None and old["patterns"][r["pattern"]]["body"] == pat["body"] and \
                    old["patterns"][r["pattern"]]["outs"] == pat["outs"]:
                text, first = kernel(pat, r["target"])
                by_line = {first + int(k): v for k, v in r["sass"].items()}
                r["fused"] = [(m - first, x - first) for m, x in fused_pairs(text, by_line)]
                done[(r["pattern"], r["target"], r["opt"], r["fmad"])] = r

    def one(job: tuple) -> dict:
        name, pat, target, opt, fmad = job
        if (name, target, opt, fmad) in done:
            return done[(name, target, opt, fmad)]
        obs = observe(pat, target, opt, fmad, **tools)
        print(f"{name:40s} {target} -O{opt} fmad={fmad!s:5s} fused={obs['fused']}", flush=True)
        return {"pattern": name, "target": target, "opt": opt, "fmad": fmad, **obs}
    with ThreadPoolExecutor(a.jobs) as ex:
        runs = list(ex.map(one, jobs))
    pats = {}
    for k, v in PATTERNS.items():
        if a.only in k:
            text, first = kernel(v, "TARGET")
            pats[k] = {**v, "ptx": text, "first": first}
    out = {"ptxas": version(a.ptxas), "patterns": pats, "runs": runs}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
