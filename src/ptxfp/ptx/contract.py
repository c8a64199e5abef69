"""Contraction as ptxas does it: which ``mul`` + ``add``/``sub`` pairs ptxas fuses into one
fused multiply-add (SASS FFMA, HFMA2, DFMA), and the program rewritten the way the GPU runs it.

The PTX manual lets the code generator fuse a ``mul`` and an ``add``/``sub`` that carry no
rounding modifier ("mul/add sequences with no rounding modifiers may be optimized to use
fused-multiply-add instructions on the target device").  ptxas 13.5 (``-O3``, its default, and
``--fmad=true``, its default) does so by this rule, learned from its machine code by
tools/contraction_probe.py (the observations: tests/data/contraction/ptxas_13.5.json; the
same on sm_75, sm_80, sm_90 and sm_100; ``-O0`` and ``--fmad=false`` fuse nothing):

- the producer is ``mul{.ftz}.T`` (T: f32, f16, f16x2, bf16, bf16x2, f64) with no rounding
  modifier, no ``.sat`` and no guard, or an SFU form whose machine code on the target ends in
  an unguarded FMUL (``div.full{.ftz}.f32``, ``div.approx{.ftz}.f32``, ``rcp.approx.f32``:
  ``ops.sfu.sass_data``), whose final multiply is the product;
- the consumer is ``add``/``sub`` of the same type, no rounding modifier, the same ``.ftz`` as
  the product's multiply (``.sat`` on an f32 add is kept: FFMA.SAT), guarded or not, in the
  same basic block (no branch, and no label a branch jumps to, in between), reading the product in exactly one of its
  two sources, directly or through ``mov``/``neg`` copies;
- every use of the product must be such a consumer: then each is fused and the multiply
  disappears (for a scalar f16/bf16 product, only a single use is fused) (a product that is also stored, compared, or used in another block is rounded and
  nothing is fused);
- an add of two products fuses the product of its first source (the other one is rounded).

:func:`fusions` finds the pairs; :func:`rewrite` gives the statements as ptxas runs them (each
consumer an ``fma.rn`` of the product's factors; an SFU producer's factors computed by its
recorded sequence, spelled in PTX, in hidden registers named ``%__ct...``); :func:`apply` does
both under the policy's ``contract`` (``"ptxas"``, the default, or ``"as_written"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

import numpy as np

from ..ops.sfu.sass_data import SASS
from .reader import Addr, Imm, Instr, Pred, Reg, Vec

__all__ = ["Fusion", "fusions", "rewrite", "apply", "HIDDEN", "CONTRACT", "AS_WRITTEN"]

#: the policy values (``policy.Policy.contract``)
CONTRACT, AS_WRITTEN = "ptxas", "as_written"
#: the prefix of the registers the rewrite adds (never in the results of ``run``)
HIDDEN = "%__ct"

_FUSABLE = frozenset(("f32", "f16", "f16x2", "bf16", "bf16x2", "f64"))
_ROUND = frozenset(("rn", "rz", "rm", "rp"))
_NO_DEST = frozenset(("st", "red", "bra", "bar", "barrier", "ret", "exit", "prefetch",
                      "prefetchu", "cp", "stmatrix", "trap", "membar", "fence", "call",
                      "brx", "wmma", "cp.async", "tcgen05", "mbarrier", "nanosleep", "discard"))
_END_BLOCK = frozenset(("bra", "brx", "ret", "exit", "call", "trap"))
#: the types whose product ptxas fuses into several adds (then the multiply is gone); a scalar
#: f16/bf16 product with more than one use is left rounded
_MULTI_USE = frozenset(("f32", "f64", "f16x2", "bf16x2"))
_BITS = {"f32": 32, "f16": 16, "f16x2": 32, "bf16": 16, "bf16x2": 32, "f64": 64}


@dataclass(frozen=True)
class Fusion:
    """One pair ptxas fuses: ``consumer`` (an add/sub) takes the unrounded product of
    ``producer`` (a mul, or an SFU form's final multiply) in its source ``operand`` (1 or 2),
    negated when ``negated`` (a ``neg`` on the way, or the subtrahend of a sub)."""
    producer: Instr
    consumer: Instr
    operand: int
    negated: bool
    via: tuple[Instr, ...] = ()

    def note(self) -> str:
        """One line: what ptxas makes of the pair."""
        p, c = self.producer, self.consumer
        what = "multiply" if p.opcode == "mul" else f"final multiply of {p.opcode_spelling}"
        return (f"line {c.line}: ptxas fuses '{c.opcode_spelling}' with the {what} of line "
                f"{p.line} into one fma (the product is not rounded)")


def _parts(ins: Instr) -> tuple[str, set[str], str]:
    parts = ins.opcode_spelling.split(".")
    return parts[0], set(parts[1:-1]), parts[-1]


def _regs(o: Any) -> list[str]:
    if isinstance(o, Reg):
        return [o.name]
    if isinstance(o, Vec):
        return [n for i in o.items for n in _regs(i)]
    if isinstance(o, Addr):
        out = _regs(o.base) if o.base is not None else []
        for e in o.extra:
            out += _regs(e)
        return out
    return []


def _has_dest(ins: Instr) -> bool:
    op = ins.opcode
    return bool(ins.operands) and op not in _NO_DEST and not (
        op == "cp" or ins.opcode_spelling.startswith(("cp.async", "mbarrier", "tcgen05")))


def _reads(ins: Instr) -> list[tuple[int, str]]:
    """(operand index, register) of every register the statement reads."""
    out = []
    start = 1 if _has_dest(ins) else 0
    for k, o in enumerate(ins.operands):
        if k < start and not isinstance(o, Addr):
            continue
        out += [(k, n) for n in _regs(o)]
    return out


def _writes(ins: Instr) -> list[str]:
    if not _has_dest(ins):
        return []
    o = ins.operands[0]
    return [o.name] if isinstance(o, Reg) else (_regs(o) if isinstance(o, Vec) else [])


#: SFU forms -> (the SASS before the final multiply, its two factor registers, its .FTZ),
#: per target; None where the sequence does not end in an unguarded FMUL
_SPLIT: dict[tuple[str, str], Any] = {}


def sfu_split(form: str, target: str) -> tuple[tuple[str, ...], str, str, bool] | None:
    """(the SASS lines before the final FMUL, its factor registers x and y, whether it is
    .FTZ) of an SFU form on ``target``, or None when its sequence ends otherwise."""
    key = (form, target)
    if key not in _SPLIT:
        lines = [s for s in SASS.get(key, ()) if not s.startswith("STG")]
        _SPLIT[key] = None
        stg = [s for s in SASS.get(key, ()) if s.startswith("STG")]
        if lines and stg:
            m = re.fullmatch(r"FMUL((?:\.\w+)*) (R\d+), (R\d+), (R\d+)", lines[-1])
            if m and stg[-1].rsplit(",", 1)[1].strip() == m.group(2) and \
                    ".RZ" not in m.group(1):
                _SPLIT[key] = (tuple(lines[:-1]), m.group(3), m.group(4),
                               ".FTZ" in m.group(1))
    return _SPLIT[key]


def _producer(ins: Instr, target: str) -> tuple[str, bool] | None:
    """(type, ftz of its multiply) when ``ins`` can give its product to an add, else None."""
    if ins.predicate is not None or not ins.operands or not isinstance(ins.operands[0], Reg):
        return None
    op, mods, t = _parts(ins)
    if op == "mul" and t in _FUSABLE and not mods & _ROUND and "sat" not in mods and \
            len(ins.operands) == 3:
        return t, "ftz" in mods
    if op in ("div", "rcp") and t == "f32":
        split = sfu_split(ins.opcode_spelling, target)
        if split is not None:
            return t, split[3]
    return None


def _consumer(ins: Instr, typ: str, ftz: bool) -> bool:
    op, mods, t = _parts(ins)
    if op not in ("add", "sub") or t != typ or mods & _ROUND or ("ftz" in mods) != ftz:
        return False
    if "sat" in mods and typ != "f32":
        return False                     # not observed: left as written
    return len(ins.operands) == 3 and isinstance(ins.operands[0], Reg)


def _is_copy(ins: Instr, typ: str) -> bool | None:
    """None: not a copy; else whether it negates (``mov``/``neg`` of the product's bits)."""
    op, mods, t = _parts(ins)
    if ins.predicate is not None or len(ins.operands) != 2 or not isinstance(
            ins.operands[0], Reg) or not isinstance(ins.operands[1], Reg):
        return None
    if op == "mov" and (t == typ or t == f"b{_BITS[typ]}") and not mods:
        return False
    if op == "neg" and t == typ and not mods:
        return True
    return None


def _blocks(statements: Sequence[Instr], labels: dict[str, tuple[int, int]]) -> list[int]:
    """The basic block of each statement: a branch, and a label some branch jumps to, start a
    new one (ptxas fuses across a label nothing jumps to)."""
    targets = {o.name for s in statements if s.opcode in ("bra", "brx")
               for o in s.operands if isinstance(o, Reg)}
    marks = sorted(pos for name, pos in labels.items() if name in targets)
    out, b, k, prev_end = [], 0, 0, False
    for s in statements:
        pos = (s.line, s.col)
        new = prev_end
        while k < len(marks) and marks[k] < pos:
            new, k = True, k + 1
        if new and out:
            b += 1
        out.append(b)
        prev_end = s.opcode in _END_BLOCK
    return out


def fusions(statements: Sequence[Instr], *, labels: dict[str, tuple[int, int]] | None = None,
            target: str = "sm_90") -> list[Fusion]:
    """The (producer, consumer) pairs ptxas 13.5 fuses in one function body (or snippet),
    ``labels`` its labels (name -> (line, col)), ``target`` the architecture (for the SFU
    forms' sequences)."""
    stm = list(statements)
    block = _blocks(stm, labels or {})
    n = len(stm)
    # uses of the value each statement writes: index -> [(use index, operand, reg)]
    users: dict[tuple[int, str], list[tuple[int, int]]] = {}
    live: dict[str, int] = {}
    for i, s in enumerate(stm):
        for k, r in _reads(s):
            d = live.get(r)
            if d is not None:
                users.setdefault((d, r), []).append((i, k))
        if s.predicate is not None:
            d = live.get(s.predicate.name)
            if d is not None:
                users.setdefault((d, s.predicate.name), []).append((i, -1))
        for r in _writes(s):
            d = live.get(r)
            if s.predicate is not None and d is not None:
                # a guarded write merges two values: the earlier one is used (not fusable)
                users.setdefault((d, r), []).append((i, -1))
            live[r] = i
    # reads before the definition (a loop's back edge) make it unfusable
    first_def: dict[str, int] = {}
    early: set[str] = set()
    for i, s in enumerate(stm):
        for _, r in _reads(s):
            if r not in first_def:
                early.add(r)
        for r in _writes(s):
            first_def.setdefault(r, i)

    def ends(i: int, reg: str, typ: str, neg: bool, path: tuple[int, ...]):
        """The consumers the value (i, reg) reaches, or None where some use cannot fuse."""
        out = []
        for j, k in users.get((i, reg), ()):
            if block[j] != block[i] or k < 0:
                return None
            s = stm[j]
            c = _is_copy(s, typ)
            if c is not None and k == 1:
                more = ends(j, s.operands[0].name, typ, neg ^ c, path + (j,))
                if more is None:
                    return None
                out += more
                continue
            out.append((j, k, neg, path))
        return out

    cand: dict[int, list] = {}
    for i, s in enumerate(stm):
        p = _producer(s, target)
        if p is None:
            continue
        reg = s.operands[0].name
        if reg in early or reg in _regs(Vec(list(s.operands[1:]))):
            continue
        uses = ends(i, reg, p[0], False, ())
        if not uses:
            continue
        per: dict[int, int] = {}
        ok = True
        for j, k, neg, path in uses:
            c = stm[j]
            if k not in (1, 2) or not _consumer(c, p[0], p[1]):
                ok = False
                break
            per[j] = per.get(j, 0) + 1
        if ok and all(v == 1 for v in per.values()) and (len(uses) == 1 or
                                                          p[0] in _MULTI_USE):
            cand[i] = uses
    # each consumer takes the product of its first source where both are candidates; a
    # producer keeps its fusion only if every consumer takes it
    while True:
        take: dict[int, int] = {}
        for i, uses in cand.items():
            for j, k, _, _ in uses:
                if j not in take or k < take[j][1]:
                    take[j] = (i, k)
        drop = [i for i, uses in cand.items() if any(take[j][0] != i for j, _, _, _ in uses)]
        if not drop:
            break
        for i in drop:
            del cand[i]
    out = []
    for i, uses in cand.items():
        for j, k, neg, path in uses:
            c = stm[j]
            sub2 = c.opcode == "sub" and k == 2
            out.append(Fusion(stm[i], c, k, neg ^ sub2, tuple(stm[x] for x in path)))
    out.sort(key=lambda f: (f.consumer.line, f.consumer.col))
    return out


# --- the rewrite -------------------------------------------------------------------------

_CMP = {"LT": "lt", "EQ": "eq", "LE": "le", "GT": "gt", "NE": "ne", "GE": "ge", "LTU": "ltu",
        "EQU": "equ", "LEU": "leu", "GTU": "gtu", "NEU": "neu", "GEU": "geu"}


def _mufu_forms(target: str) -> dict[str, str]:
    """MUFU.X -> the f32 form whose whole sequence on ``target`` is that instruction."""
    out = {}
    for (form, t), lines in SASS.items():
        if t != target or not form.endswith(".f32"):
            continue
        body = [s for s in lines if not s.startswith(("LDG", "STG"))]
        if len(body) == 1 and re.fullmatch(r"MUFU\.\w+ R\d+, R\d+", body[0]):
            out.setdefault(body[0].split()[0], form)
    return out


def _imm32(tok: str) -> Imm:
    if tok.startswith("0x"):
        v = int(tok, 16)
    else:
        v = int(np.float32(float(tok)).view(np.uint32))
    return Imm(f"0f{v:08X}", v, "hexfloat")


class _Builder:
    """New statements at the position of one statement."""

    def __init__(self, at: Instr, tag: str):
        self.at, self.tag, self.out, self.n = at, tag, [], 0

    def reg(self, name: str) -> Reg:
        return Reg(f"{HIDDEN}{self.tag}_{name}", self.at.line, self.at.col)

    def emit(self, spelling: str, ops: list, pred: Pred | None = None) -> None:
        ins = Instr(spelling, ops, pred, None, self.at.line, self.at.col, "",
                    self.at.function, self.at.scope)
        ins.text = str(ins).rstrip(";")
        self.out.append(ins)


def _sass_to_ptx(b: _Builder, lines: tuple[str, ...], srcs: list, target: str) -> dict:
    """Spell the SASS ``lines`` (the sequence before its final FMUL) in PTX; returns the map
    SASS register -> PTX operand."""
    env: dict[str, Any] = {}
    mufu = _mufu_forms(target)

    def src(tok: str):
        tok = tok.strip()
        if tok == "RZ":
            return _imm32("0x0")
        m = re.fullmatch(r"(-?)\|?(R\d+)\|?", tok)
        if m:
            v = env[m.group(2)]
            if "|" in tok:
                r = b.reg(f"abs{b.n}")
                b.n += 1
                b.emit("abs.f32", [r, v])
                v = r
            if m.group(1):
                r = b.reg(f"neg{b.n}")
                b.n += 1
                b.emit("neg.f32", [r, v])
                v = r
            return v
        return _imm32(tok)

    for line in lines:
        pred = None
        m = re.match(r"@(!?)(P\d) (.*)$", line)
        if m:
            pred = Pred(b.reg(m.group(2)).name, bool(m.group(1)))
            line = m.group(3)
        op, _, rest = line.partition(" ")
        args = [a.strip() for a in re.split(r",\s*(?![^\[]*\])", rest)]
        parts = op.split(".")
        if parts[0] == "LDG":
            env[args[0]] = srcs[1] if re.search(r"\+0x4\]", rest) else srcs[0]
            continue
        dst = b.reg(args[0])
        if pred is not None and not parts[0] == "FSETP":
            # a guarded write keeps the register's value where the guard is false
            cur = env.get(args[0])
            if not (isinstance(cur, Reg) and cur.name == dst.name):
                b.emit("mov.b32", [dst, cur if cur is not None else _imm32("0x0")])
        if parts[0] == "FSETP":
            cmp = _CMP[parts[1]]
            ftz = ".ftz" if "FTZ" in parts else ""
            b.emit(f"setp.{cmp}{ftz}.f32", [Reg(dst.name), src(args[2]), src(args[3])], pred)
        elif parts[0] in ("FMUL", "FADD"):
            rnd = ".rz" if "RZ" in parts else ".rn"
            ftz = ".ftz" if "FTZ" in parts else ""
            x, y = src(args[1]), src(args[2])
            b.emit(f"{'mul' if parts[0] == 'FMUL' else 'add'}{rnd}{ftz}.f32", [dst, x, y], pred)
        elif parts[0] == "FSEL":
            p = args[3]
            x, y = src(args[1]), src(args[2])
            if p.startswith("!"):
                x, y, p = y, x, p[1:]
            b.emit("selp.f32", [dst, x, y, b.reg(p)], pred)
        elif parts[0] == "MUFU" and op in mufu:
            b.emit(mufu[op], [dst, src(args[1])], pred)
        elif op == "IMAD.MOV.U32" and args[1:3] == ["RZ", "RZ"] or op == "MOV":
            b.emit("mov.b32", [dst, _imm32(args[-1])], pred)
        else:
            raise ValueError(f"no PTX spelling of '{line}'")
        env[args[0]] = dst
    return env


def rewrite(statements: Sequence[Instr], found: Sequence[Fusion], *,
            target: str = "sm_90") -> list[Instr]:
    """``statements`` with each fused consumer an ``fma.rn`` of its product's factors (the
    factors saved in hidden registers where the program writes them before the consumer, an
    SFU producer's computed by its sequence before it)."""
    if not found:
        return list(statements)
    stm = list(statements)
    index = {id(s): i for i, s in enumerate(stm)}
    before: dict[int, list[Instr]] = {}
    factors: dict[int, tuple[Any, Any]] = {}
    new_consumer: dict[int, Instr] = {}
    for n, f in enumerate(found):
        i = index[id(f.producer)]
        j = index[id(f.consumer)]
        p = f.producer
        op, mods, t = _parts(p)
        if i not in factors:
            b = _Builder(p, str(i))
            if op == "mul":
                x, y = p.operands[1], p.operands[2]
                late = max(index[id(g.consumer)] for g in found if g.producer is p)
                written = {r for s in stm[i:late + 1] for r in _writes(s)}
                w = f"b{_BITS[t]}"
                if isinstance(x, Reg) and x.name in written:
                    b.emit(f"mov.{w}", [b.reg("x"), x])
                    x = b.reg("x")
                if isinstance(y, Reg) and y.name in written:
                    b.emit(f"mov.{w}", [b.reg("y"), y])
                    y = b.reg("y")
            else:
                lines, rx, ry, _ = sfu_split(p.opcode_spelling, target)
                env = _sass_to_ptx(b, lines, list(p.operands[1:]), target)
                x, y = env[rx], env[ry]
            factors[i] = (x, y)
            before.setdefault(i, []).extend(b.out)
        x, y = factors[i]
        c = f.consumer
        cop, cmods, ct = _parts(c)
        other = c.operands[3 - f.operand]
        b = _Builder(c, f"{i}_{n}")
        neg_c = cop == "sub" and f.operand == 1
        if f.negated:
            src = x if isinstance(x, Reg) else y
            if isinstance(src, Reg):
                b.emit(f"neg.{t}", [b.reg("nx"), src])
                if src is x:
                    x = b.reg("nx")
                else:
                    y = b.reg("nx")
            else:
                b.emit(f"mov.b{_BITS[t]}", [b.reg("ix"), x])
                b.emit(f"neg.{t}", [b.reg("nx"), b.reg("ix")])
                x = b.reg("nx")
        if neg_c:
            if not isinstance(other, Reg):
                b.emit(f"mov.b{_BITS[t]}", [b.reg("ic"), other])
                other = b.reg("ic")
            b.emit(f"neg.{t}", [b.reg("nc"), other])
            other = b.reg("nc")
        mod = "".join(f".{m}" for m in ("ftz", "sat") if m in cmods)
        fma = replace(c, opcode_spelling=f"fma.rn{mod}.{t}",
                      operands=[c.operands[0], x, y, other])
        fma.text = str(fma).rstrip(";")
        before.setdefault(j, []).extend(b.out)
        new_consumer[j] = fma
    out: list[Instr] = []
    for i, s in enumerate(stm):
        out += before.get(i, [])
        out.append(new_consumer.get(i, s))
    return out


def run_target(target: str | int | None, module_target: str | None) -> str:
    """The target ``run`` computes the SFU forms and contractions for: ``target`` (checked),
    else the module's .target where ptxfp has its sequences, else ops.sfu.DEFAULT_TARGET."""
    from ..ops import sfu
    from ..ops.sfu.model import check_target
    if target is not None:
        return check_target(target)
    m = re.fullmatch(r"sm_(\d+)[af]?", module_target or "")
    if m and f"sm_{m.group(1)}" in sfu.TARGETS:
        return f"sm_{m.group(1)}"
    return sfu.DEFAULT_TARGET


def apply(statements: Sequence[Instr], *, labels: dict[str, tuple[int, int]] | None = None,
          target: str = "sm_90", mode: str | None = None) -> tuple[list[Instr], list[Fusion]]:
    """(the statements as the GPU runs them, the fused pairs) under ``mode`` (the policy's
    ``contract`` when None): ``"as_written"`` changes nothing."""
    if mode is None:
        from .. import policy
        mode = policy.current().contract
    if mode == AS_WRITTEN:
        return list(statements), []
    found = fusions(statements, labels=labels, target=target)
    return rewrite(statements, found, target=target), found
