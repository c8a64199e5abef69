"""Tensor maps for the TMA (``cp.async.bulk.tensor``): :func:`tensor_map` builds the 128 bytes
a kernel takes as a ``.param .align 64 .b8 [128]`` (or reads from global memory), from
``cuTensorMapEncodeTiled``'s parameters in its order (snake case), with CUDA's enum integers
or their names.  CUDA keeps ``CUtensorMap`` opaque, so the bytes are ptxfp's own encoding
(little-endian):

======  ======================================================================
bytes   field
======  ======================================================================
0-3     ``b"PXTM"``
4       encoding version (1)
5       data type (``CUtensorMapDataType``)
6       rank (1-5)
7       interleave, 8 swizzle, 9 L2 promotion, 10 out-of-bounds fill (enums)
16-23   global address (u64)
24-63   global dimensions, five u64 (unused ranks 0)
64-95   global strides in bytes of dimensions 1-4, four u64
96-105  box dimensions, five u16
106-110 element strides, five u8
======  ======================================================================

The checks are those the CUDA driver API documents for ``cuTensorMapEncodeTiled`` (a
refused map raises one line naming the parameter and the rule)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Sequence

from ..errors import OperandError

#: CUtensorMapDataType: name -> (value, element bytes)
DATA_TYPES = {"UINT8": (0, 1), "UINT16": (1, 2), "UINT32": (2, 4), "INT32": (3, 4),
              "UINT64": (4, 8), "INT64": (5, 8), "FLOAT16": (6, 2), "FLOAT32": (7, 4),
              "FLOAT64": (8, 8), "BFLOAT16": (9, 2), "FLOAT32_FTZ": (10, 4),
              "TFLOAT32": (11, 4), "TFLOAT32_FTZ": (12, 4)}
INTERLEAVE = {"NONE": 0, "16B": 1, "32B": 2}
SWIZZLE = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}
L2_PROMOTION = {"NONE": 0, "L2_64B": 1, "L2_128B": 2, "L2_256B": 3}
OOB_FILL = {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1}

#: swizzle enum -> its span in bytes (0: none)
SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}

MAGIC = b"PXTM"


def _enum(value: object, table: dict, prefix: str, what: str) -> int:
    if isinstance(value, str):
        key = value.upper()
        for p in (prefix, "CU_TENSOR_MAP_"):
            if key.startswith(p):
                key = key[len(p):]
        if key in table:
            v = table[key]
            return v[0] if isinstance(v, tuple) else v
        raise OperandError(f"{what}={value!r}: expected one of "
                           f"{', '.join(prefix + k for k in table)} (or its integer)")
    values = [v[0] if isinstance(v, tuple) else v for v in table.values()]
    if isinstance(value, bool) or not isinstance(value, int) or value not in values:
        raise OperandError(f"{what}={value!r}: expected one of {values} or a name "
                           f"({prefix}{next(iter(table))} ...)")
    return value


def _ints(v: object, n: int, what: str) -> list[int]:
    if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
        raise OperandError(f"{what}: expected a sequence of {n} integers, got {v!r}")
    out = list(v)  # type: ignore[call-overload]
    if len(out) != n or not all(isinstance(x, int) and not isinstance(x, bool) for x in out):
        raise OperandError(f"{what}: expected {n} integers, got {v!r}")
    return out


def tensor_map(data_type: int | str, rank: int, global_address: int,
               global_dim: Sequence[int], global_strides: Sequence[int],
               box_dim: Sequence[int], element_strides: Sequence[int],
               interleave: int | str = 0, swizzle: int | str = 0, l2_promotion: int | str = 0,
               oob_fill: int | str = 0) -> bytes:
    """The 128 bytes of a tiled tensor map (``cuTensorMapEncodeTiled``'s parameters, in its
    order).  ``global_strides`` has ``rank - 1`` entries, in bytes (dimension 0 is dense);
    enums as CUDA's integers or names (``"CU_TENSOR_MAP_SWIZZLE_128B"``, ``"128B"``).

        >>> tm = tensor_map("BFLOAT16", 2, 0x1000, [64, 32], [128], [64, 16], [1, 1],
        ...                 swizzle="128B")
        >>> len(tm), tm[:4]
        (128, b'PXTM')
    """
    dt = _enum(data_type, DATA_TYPES, "CU_TENSOR_MAP_DATA_TYPE_", "data_type")
    esize = next(b for v, b in DATA_TYPES.values() if v == dt)
    if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= 5:
        raise OperandError(f"rank={rank!r}: a tensor map has rank 1 to 5")
    il = _enum(interleave, INTERLEAVE, "CU_TENSOR_MAP_INTERLEAVE_", "interleave")
    sw = _enum(swizzle, SWIZZLE, "CU_TENSOR_MAP_SWIZZLE_", "swizzle")
    l2 = _enum(l2_promotion, L2_PROMOTION, "CU_TENSOR_MAP_L2_PROMOTION_", "l2_promotion")
    oob = _enum(oob_fill, OOB_FILL, "CU_TENSOR_MAP_FLOAT_OOB_FILL_", "oob_fill")
    if isinstance(global_address, bool) or not isinstance(global_address, int) or \
            not 0 <= global_address < 1 << 64:
        raise OperandError(f"global_address={global_address!r}: expected a 64-bit address")
    if global_address % (32 if il == 2 else 16):
        raise OperandError(f"global_address={global_address:#x}: must be "
                           f"{32 if il == 2 else 16}-byte aligned")
    dims = _ints(global_dim, rank, "global_dim")
    strides = _ints(global_strides, rank - 1, "global_strides")
    box = _ints(box_dim, rank, "box_dim")
    es = _ints(element_strides, rank, "element_strides")
    if il != 0 and rank < 3:
        raise OperandError(f"rank={rank}: an interleaved tensor map has rank 3 or more")
    for i, d in enumerate(dims):
        if not 1 <= d <= 1 << 32:
            raise OperandError(f"global_dim[{i}]={d}: must be 1 .. 2^32")
    for i, s in enumerate(strides):
        if s % (32 if il == 2 else 16) or not 0 < s < 1 << 40:
            raise OperandError(f"global_strides[{i}]={s}: must be a multiple of "
                               f"{32 if il == 2 else 16} below 2^40")
    for i, b in enumerate(box):
        if not 1 <= b <= 256:
            raise OperandError(f"box_dim[{i}]={b}: must be 1 .. 256")
    if il == 0 and box[0] * esize % 16:
        raise OperandError(f"box_dim[0]={box[0]}: the inner box ({box[0] * esize} bytes) "
                           "must be a multiple of 16 bytes")
    for i, e in enumerate(es):
        if not 1 <= e <= 8:
            raise OperandError(f"element_strides[{i}]={e}: must be 1 .. 8")
    if il == 0 and sw and box[0] * esize > SWIZZLE_BYTES[sw]:
        raise OperandError(f"box_dim[0]={box[0]}: the inner box ({box[0] * esize} bytes) is "
                           f"over the {SWIZZLE_BYTES[sw]}-byte swizzle span")
    if oob and dt in (0, 1, 2, 3, 4, 5):
        raise OperandError("oob_fill=NAN_REQUEST_ZERO_FMA needs a floating-point data_type")
    out = bytearray(128)
    out[0:4] = MAGIC
    out[4:11] = bytes([1, dt, rank, il, sw, l2, oob])
    struct.pack_into("<Q", out, 16, global_address)
    struct.pack_into("<5Q", out, 24, *(dims + [0] * (5 - rank)))
    struct.pack_into("<4Q", out, 64, *(strides + [0] * (5 - rank)))
    struct.pack_into("<5H", out, 96, *(box + [0] * (5 - rank)))
    struct.pack_into("<5B", out, 106, *(es + [0] * (5 - rank)))
    return bytes(out)


@dataclass(frozen=True)
class TensorMap:
    """A decoded tensor map."""
    data_type: int
    esize: int
    rank: int
    interleave: int
    swizzle: int
    l2_promotion: int
    oob_fill: int
    global_address: int
    global_dim: tuple
    global_strides: tuple         #: bytes, dimension 0 first (its stride: esize)
    box_dim: tuple
    element_strides: tuple


def decode(raw: bytes) -> TensorMap:
    """The tensor map in 128 bytes made by :func:`tensor_map` (OperandError otherwise)."""
    raw = bytes(raw)
    if len(raw) != 128 or raw[:4] != MAGIC or raw[4] != 1:
        raise OperandError("not a tensor map made by ptxfp.tensor_map (its 128 bytes start "
                           f"with {raw[:4]!r}, version {raw[4] if len(raw) > 4 else None})")
    dt, rank, il, sw, l2, oob = raw[5:11]
    esize = next((b for v, b in DATA_TYPES.values() if v == dt), None)
    if esize is None or not 1 <= rank <= 5:
        raise OperandError(f"a tensor map with data type {dt} and rank {rank} is corrupt")
    (ga,) = struct.unpack_from("<Q", raw, 16)
    dims = struct.unpack_from("<5Q", raw, 24)[:rank]
    strides = (esize,) + struct.unpack_from("<4Q", raw, 64)[:rank - 1]
    box = struct.unpack_from("<5H", raw, 96)[:rank]
    es = struct.unpack_from("<5B", raw, 106)[:rank]
    return TensorMap(dt, esize, rank, il, sw, l2, oob, ga, tuple(dims), tuple(strides),
                     tuple(box), tuple(es))
