"""The sequences ptxas wraps around MUFU, from the recorded machine code (``sass_data.SASS``) to
ptxfp kernels: each SASS instruction becomes one statement of a Numba kernel over its
registers, in the order the GPU runs them (``generate``); ``kernels_gen.py`` is that source,
written by ``tools/sfu_sequences.py --codegen`` and held to the recorded SASS by the tests.

What a statement computes: ``sass_ops`` (FMUL/FADD rounded to nearest or ``.RZ``, ``.FTZ``,
FSETP's comparisons, FSEL) and ``primitives`` (MUFU).  A sequence with an instruction ptxfp has
no model of (``MUFU.TANH``, ``MUFU.RCP64H``, the f64 arithmetic) is recorded and refused
(``UNMODELED``) with the instruction named.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from .primitives import MUFU
from .sass_ops import CMP

__all__ = ["translate", "generate", "Unmodeled"]


class Unmodeled(Exception):
    """A SASS instruction ptxfp has no model of (the message names it)."""


_GUARD = re.compile(r"^@(!?)(P\d)\s+(.*)$")
_MEM = re.compile(r"\[(?:[^\]]*\]\[)?[^\]+]*(?:\+(0x[0-9a-f]+))?\]")


def _const(tok: str) -> str:
    """A literal operand as the binary32 bits it holds."""
    if tok == "RZ":
        return "f32(0)"
    if tok.startswith("0x"):
        return "f32(%s)" % hex(int(tok, 16))
    v = float(tok)
    f = np.float32(v)
    if float(f) != v:
        raise Unmodeled(f"literal {tok} is not a binary32 value")
    return "f32(%s)" % hex(int(f.view(np.uint32)))


def _src(tok: str, used: set[str]) -> str:
    tok = tok.strip()
    if re.fullmatch(r"R\d+", tok):
        used.add(tok)
        return tok
    m = re.fullmatch(r"\|(R\d+)\|", tok)
    if m:
        used.add(m.group(1))
        return f"abs({m.group(1)})"
    m = re.fullmatch(r"-(R\d+)", tok)
    if m:
        used.add(m.group(1))
        return f"-{m.group(1)}"
    return _const(tok)


def _pred(tok: str) -> str:
    tok = tok.strip()
    if tok == "PT":
        return "True"
    if tok.startswith("!"):
        return f"not {tok[1:]}"
    return tok


def translate(lines: tuple[str, ...]) -> list[str]:
    """The statements of one sequence (loop body, indented by 8), or Unmodeled."""
    out: list[str] = []
    used: set[str] = set()
    defined: set[str] = set()
    for line in lines:
        guard = ""
        m = _GUARD.match(line)
        if m:
            guard = ("not " if m.group(1) else "") + m.group(2)
            line = m.group(3)
        op, _, rest = line.partition(" ")
        args = [a.strip() for a in re.split(r",\s*(?![^\[]*\])", rest)] if rest else []
        parts = op.split(".")
        name = parts[0]
        mods = set(parts[1:])
        if name == "LDG":
            if "64" in mods:
                raise Unmodeled(f"'{line}': 64-bit operands")
            mem = _MEM.search(rest)
            off = int(mem.group(1), 16) if mem and mem.group(1) else 0
            src = {0: "a", 4: "b"}.get(off)
            if src is None:
                raise Unmodeled(f"'{line}': a load at offset {off}")
            stmt = f"{args[0]} = f32({src}[i])"
        elif name == "STG":
            if "64" in mods:
                raise Unmodeled(f"'{line}': 64-bit result")
            reg = args[-1]
            stmt = f"r = bits({_src(reg, used)})"
        elif name == "FSETP":
            cmp = parts[1]
            if cmp not in CMP or "AND" not in mods or args[1] != "PT" or args[4] != "PT":
                raise Unmodeled(f"'{line}'")
            stmt = (f"{args[0]} = fsetp({CMP[cmp]}, {_src(args[2], used)}, "
                    f"{_src(args[3], used)}, {'FTZ' in mods})")
        elif name == "FSEL":
            stmt = (f"{args[0]} = {_src(args[1], used)} if {_pred(args[3])} else "
                    f"{_src(args[2], used)}")
        elif name in ("FMUL", "FADD"):
            if mods - {"FTZ", "RZ"} or (name == "FADD" and "RZ" in mods):
                raise Unmodeled(f"'{line}'")
            x, y = _src(args[1], used), _src(args[2], used)
            stmt = (f"{args[0]} = fmul({x}, {y}, {'FTZ' in mods}, {'RZ' in mods})"
                    if name == "FMUL" else f"{args[0]} = fadd({x}, {y}, {'FTZ' in mods})")
        elif name == "MUFU":
            fn = parts[1] if len(parts) > 1 else ""
            if fn not in MUFU:
                raise Unmodeled(f"MUFU.{fn}: no public model of the primitive")
            stmt = f"{args[0]} = f32(mufu_{fn.lower()}(bits({_src(args[1], used)})))"
        elif line.startswith("IMAD.MOV.U32") and args[1:3] == ["RZ", "RZ"]:
            stmt = f"{args[0]} = {_const(args[3])}"
        elif name == "MOV" and len(args) == 2:
            stmt = f"{args[0]} = {_const(args[1])}"
        else:
            raise Unmodeled(f"'{line}' (no model of {op})")
        if name not in ("STG",) and args and re.fullmatch(r"[RP]\d+", args[0]):
            defined.add(args[0])
        out.append(f"        if {guard}:\n            {stmt}" if guard else f"        {stmt}")
    if not any(s.strip().startswith("r = ") for s in out):
        raise Unmodeled("no store")
    # registers renamed in order of first appearance (x0, x1 ...; p0 ...): the same sequence
    # under another register allocation is the same kernel
    ren: dict[str, str] = {}

    def name(m: re.Match[str]) -> str:
        t = m.group(1)
        if t not in ren:
            pre = "x" if t[0] == "R" else "p"
            ren[t] = pre + str(sum(v[0] == pre for v in ren.values()))
        return ren[t]
    return [re.sub(r"\b([RP]\d+)\b", name, s) for s in out]


def kernel_name(body: list[str]) -> str:
    return "seq_%08x" % (zlib.crc32("\n".join(body).encode()) & 0xFFFFFFFF)


def generate(sass: dict[tuple[str, str], tuple[str, ...]], ptxas: str) -> str:
    """The source of kernels_gen.py: one kernel per distinct sequence, the (form, target) ->
    kernel map, and the refused (form, target) -> reason."""
    bodies: dict[str, list[str]] = {}
    table: dict[tuple[str, str], str] = {}
    refused: dict[tuple[str, str], str] = {}
    for key, lines in sass.items():
        try:
            body = translate(lines)
        except Unmodeled as e:
            refused[key] = str(e)
            continue
        name = kernel_name(body)
        bodies[name] = body
        table[key] = name
    src = ['"""The SFU sequences as kernels: written by tools/sfu_sequences.py --codegen from',
           f'sass_data.py ({ptxas}); do not edit.  One function per distinct',
           'sequence: a loop over the elements whose body is the SASS, one statement per',
           'instruction (sequence.translate), with the primitives and the instructions inlined:',
           'one loop of straight-line code per sequence, which LLVM vectorizes."""', "",
           "from __future__ import annotations", "",
           "import numpy as np", "",
           "from ...core._jit import fpenv_enter, fpenv_leave",
           "from .primitives import MUFU, inlined",
           "from .sass_ops import bits, f32, fadd, fmul, fsetp  # noqa: F401", "",
           "# every primitive, compiled inline into the kernels that call it",
           *(f"mufu_{p.lower()} = inlined(MUFU[{p!r}])" for p in sorted(MUFU)), ""]
    for name in sorted(bodies):
        src += ["", f"def {name}(a, b, out, nan_bits):  # type: ignore[no-untyped-def]",
                "    saved = fpenv_enter()           # the IEEE default environment",
                "    for i in range(out.size):", *bodies[name],
                "        if (r & 0x7FFFFFFF) > 0x7F800000:",
                "            r = nan_bits",
                "        out[i] = np.uint32(r)",
                "    fpenv_leave(saved)", ""]
    src += ["", "#: kernel name -> kernel", "FUNCS = {"]
    src += [f"    {n!r}: {n}," for n in sorted(bodies)]
    src += ["}", "#: (form, target) -> the kernel of its sequence", "KERNELS = {"]
    src += [f"    {k!r}: {v!r}," for k, v in sorted(table.items())]
    src += ["}", "#: (form, target) -> why its recorded sequence is not computed", "REFUSED = {"]
    src += [f"    {k!r}: {v!r}," for k, v in sorted(refused.items())]
    src += ["}", ""]
    return "\n".join(src)
