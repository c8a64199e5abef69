"""The tensor core: mma.sync over whole warps (fragments gathered into matrices, computed by
ptxfp.mma at the module's target, scattered back)."""

from __future__ import annotations

import numpy as np

from ....errors import InterpError, PtxfpError, SpellingError
from ...reader import Vec
from ..base import WIDTH, _DTYPE, _bad, _unsupported
from ..operands import _dst, _src
from ..program import _Step


#: targets without tensor-core numerics of their own -> the member of their architecture
#: family that has them (sm_86/sm_87 are Ampere like sm_80; sm_72 Volta; sm_101/103/110
#: Blackwell; sm_121 RTX Blackwell): named in the error that asks for run(target=)
_KIN = {"sm_72": "sm_70", "sm_86": "sm_80", "sm_87": "sm_80", "sm_88": "sm_80",
        "sm_101": "sm_100", "sm_103": "sm_100", "sm_110": "sm_100", "sm_121": "sm_120"}


def _c_mma(prog, ins):
    """mma.sync d, a, b, c over whole warps: each warp's registers gathered into matrices by
    the fragment layouts (ptxfp.tensor.fragments), D = ptxfp.mma(form, A, B, C) at the
    module's target, scattered back into the warp's d registers."""
    if ins.opcode != "mma" or "sync" not in ins.suffixes:
        raise _unsupported(ins, NOT_WIRED["wmma"])
    try:
        import importlib
        fr = importlib.import_module("ptxfp.tensor.fragments")
        tensor = importlib.import_module("ptxfp.tensor")
        form = tensor.resolve(ins.opcode_spelling)
        frags = fr.fragments(form)
    except ImportError:
        raise _unsupported(ins, "mma.sync needs ptxfp.tensor (fragment layouts and ptxfp.mma), "
                                "not installed in this tree") from None
    except SpellingError as e:                # not a legal mma: say so, as ptxas would
        raise InterpError(f"'{ins.opcode_spelling}' is not a legal mma spelling: "
                          f"{' '.join(str(e).split())}", ins.line, ins.col,
                          rule=getattr(e, "rule", None) or "illegal-type") from None
    except (PtxfpError, ValueError, KeyError) as e:
        raise _unsupported(ins, f"no fragment layout or tensor-core model for it ({e})") \
            from None
    if any(k not in frags for k in "abcd") or len(ins.operands) != 4:
        raise _unsupported(ins, "only the d, a, b, c form of mma.sync is wired (no sparse "
                                "or block-scaled operands)")
    reads, writes = [], []
    regs = {}
    for name, op in zip("dabc", ins.operands):
        f = frags[name]
        items = list(op.items) if isinstance(op, Vec) else [op]
        if len(items) != f.regs:
            raise _bad(ins, f"operand {name} needs {f.regs} registers, got {len(items)}", op)
        regs[name] = ("b64" if f.reg_bits == 64 else "b32", items)
    srcs = {k: [_src(prog, ins, o, regs[k][0], reads) for o in regs[k][1]] for k in "abc"}
    dt = regs["d"][0]
    dests = [_dst(prog, ins, o, dt, writes) for o in regs["d"][1]]
    module_target = (prog.prog.target or "sm_90") if prog.function is not None else "sm_90"

    def run(st):
        m = st.mask
        warp = st.ids("warp")
        whole = st.all_on and m is st.active and st.geom.bsize % 32 == 0
        if whole:              # every thread of the grid, whole warps: no gather of lanes
            idx, ws = slice(None), None
            W = st.n // 32
        else:
            idx = np.flatnonzero(m)
            counts = np.bincount(warp[idx])
            ws = np.flatnonzero(counts)                 # the warps running it, in order
            W = ws.size
        if ws is not None and (counts[ws] != 32).any():
            w = int(ws[np.nonzero(counts[ws] != 32)[0][0]])
            raise InterpError(f"'{ins.opcode_spelling}': warp {w} runs it with "
                              f"{int(counts[w])} of its threads; mma.sync needs all 32",
                              ins.line, ins.col, rule="membermask")
        mats = {}
        for k in "abc":
            R = np.stack([s(st)[idx] for s in srcs[k]], axis=-1).reshape(W, 32, -1)
            mats[k] = fr.gather(form, k, R)
        target = st.mma_target or module_target
        try:
            D = tensor.mma(form, mats["a"], mats["b"], mats["c"], target=target)
        except PtxfpError as e:
            hint = ""
            kin = _KIN.get(target.rstrip("af"))
            if st.mma_target is None and kin is not None:
                hint = (f"; run(..., target='{kin}') computes it with {kin}'s numerics, the "
                        f"model of {target}'s architecture family")
            raise InterpError(f"'{ins.opcode_spelling}': {e}{hint}", ins.line, ins.col,
                              rule="mma") from None
        Rd = fr.scatter(form, "d", np.asarray(D)).reshape(W * 32, -1)
        for k, d in enumerate(dests):
            if whole:
                st.write(d, dt, np.ascontiguousarray(Rd[:, k], _DTYPE[WIDTH[dt]]))
                continue
            full = np.zeros(st.n, _DTYPE[WIDTH[dt]])
            full[idx] = Rd[:, k]
            st.write(d, dt, full)
    return _Step(ins, run, reads, writes)


COMPILERS = {"mma": _c_mma}

#: instructions the interpreter knows but does not run: opcode -> why (the error says it);
#: wgmma runs (insns/wgmma.py)
NOT_WIRED = {"wmma": "wmma is not wired into the interpreter (ptxfp.mma computes it from "
                     "whole matrices)"}
