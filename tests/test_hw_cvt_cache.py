"""The cvt kernels are disk-cached one signature per cache name (kernels.jit_cached's rule)."""

import numpy as np

import ptxfp
from ptxfp.ops import cvt


def test_each_cvt_kernel_signature_has_a_cache_name_of_its_own():
    a = np.array([0x3F800000, 0x7F7FFFFF], np.uint32)
    # 1.0 and f32 max: f16 1.0 is 0x3C00 and max overflows to inf under .rn (IEEE 754)
    assert ptxfp.convert("cvt.rn.f16.f32", a).tolist() == [0x3C00, 0x7C00]
    # packed: a -> d[31:16], b -> d[15:0] (PTX ISA, cvt)
    assert ptxfp.convert("cvt.rn.f16x2.f32", a, a[::-1].copy()).tolist() == [0x3C007C00,
                                                                            0x7C003C00]
    assert ptxfp.convert("cvt.f32.bf16", np.array([0x3F80], np.uint16)).tolist() == [0x3F800000]
    kinds = {}
    for (kind, types), k in cvt._compiled.items():
        assert len(k.signatures) == 1, (kind, types, k.signatures)
        kinds.setdefault(kind, set()).add(k.py_func.__qualname__)
    assert len(kinds["narrow"]) >= 2           # uint16 and uint32 results: two names
    names = [k.py_func.__qualname__ for k in cvt._compiled.values()]
    assert len(names) == len(set(names))
