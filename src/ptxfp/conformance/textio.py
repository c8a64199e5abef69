"""TestFloat's text layout, fast both ways: hex tokens separated by one space, one vector per
line, ``#`` lines are comments.  Writing builds the characters of a whole chunk at once with
NumPy.  Reading decodes a block of fixed-width lines the same way; a block laid out otherwise
(any blanks, optional ``0x``, any widths, blank lines) by a second vectorized reader; a block
with comments or a malformed line by a line-by-line reader, which is also the one that names
a malformed line and token."""

from __future__ import annotations

from typing import BinaryIO, Iterator

import numpy as np

from ..errors import PtxfpError

_HEX = np.frombuffer(b"0123456789ABCDEF", np.uint8)
_VAL = np.full(256, 255, np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _VAL[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _VAL[_c] = 10 + _i

BLOCK = 1 << 24


class VectorFileError(PtxfpError):
    """A malformed line of a vector file (names the line number and the token)."""


def format_lines(cols, widths) -> bytes:
    """Columns of bits (widths in bits) to lines of zero-padded upper-case hex."""
    n = int(np.shape(cols[0])[0])
    digits = [w // 4 for w in widths]
    L = sum(digits) + len(digits)
    buf = np.empty((n, L), np.uint8)
    pos = 0
    for col, d in zip(cols, digits):
        v = np.asarray(col).astype(np.uint32)
        for k in range(d):
            buf[:, pos + k] = _HEX[(v >> np.uint32(4 * (d - 1 - k))) & np.uint32(0xF)]
        pos += d
        buf[:, pos] = 0x20
        pos += 1
    buf[:, L - 1] = 0x0A
    return buf.tobytes()


def _fast(block: bytes, digits) -> list | None:
    """Decode a block of fixed-width lines, or None when it is not laid out so."""
    nl = block.find(b"\n")
    crlf = nl > 0 and block[nl - 1:nl] == b"\r"
    L = sum(digits) + len(digits) + (1 if crlf else 0)
    if nl + 1 != L or len(block) % L:
        return None
    buf = np.frombuffer(block, np.uint8).reshape(-1, L)
    if not (buf[:, L - 1] == 0x0A).all() or (crlf and not (buf[:, L - 2] == 0x0D).all()):
        return None
    cols, pos = [], 0
    for i, d in enumerate(digits):
        vals = _VAL[buf[:, pos:pos + d]]
        if (vals == 255).any():
            return None
        v = np.zeros(buf.shape[0], np.uint32)
        for k in range(d):
            v = (v << np.uint32(4)) | vals[:, k]
        cols.append(v)
        pos += d
        if i < len(digits) - 1:
            if not (buf[:, pos] == 0x20).all():
                return None
            pos += 1
    return cols


_BLANKS = bytes.maketrans(b"\t\r\v\f", b"    ")


def _ragged(block: bytes, widths, first_line: int):
    """Decode a block of lines with any blanks between tokens, tokens of any width (with or
    without 0x), blank lines; None when a line does not fit (a comment, a wrong token count, a
    bad digit, a value too wide): the line-by-line reader then names it."""
    k = len(widths)
    if b"#" in block:
        return None
    buf = np.frombuffer(block.translate(_BLANKS), np.uint8)
    if not buf.size:
        return np.zeros(0, np.int64), [np.zeros(0, np.uint32) for _ in widths]
    nl = buf == 0x0A
    blank = (buf == 0x20) | nl
    prev = np.concatenate([[True], blank[:-1]])
    starts = np.nonzero(~blank & prev)[0]
    nxt = np.concatenate([blank[1:], [True]])
    ends = np.nonzero(~blank & nxt)[0] + 1
    line = np.cumsum(nl)[starts] - nl[starts]          # line index of each token
    per = np.bincount(line, minlength=int(nl.sum()) + 1)
    if ((per != 0) & (per != k)).any():
        return None
    top = buf.size - 1
    prefixed = (buf[starts] == 0x30) & ((buf[np.minimum(starts + 1, top)] | 0x20) == 0x78) \
        & (ends - starts > 1)
    starts = starts + 2 * prefixed                     # 0x3f82: the digits after 0x
    length = ends - starts
    if length.size and (length.max() > 8 or length.min() < 1):
        return None
    v = np.zeros(starts.size, np.uint64)
    for j in range(8):
        live = j < length
        if not live.any():
            break
        d = _VAL[buf[np.minimum(starts + j, top)]]
        if (live & (d == 255)).any():
            return None
        v = np.where(live, (v << np.uint64(4)) | d.astype(np.uint64), v)
    v = v.reshape(-1, k)
    for i, w in enumerate(widths):
        if (v[:, i] >> np.uint64(w)).any():
            return None
    nos = first_line + line[::k].astype(np.int64)
    return nos, [v[:, i].astype(np.uint32) for i in range(k)]


def _slow(block: bytes, widths, first_line: int, names) -> tuple:
    """Line by line: (line numbers, columns); raises VectorFileError on a malformed line."""
    rows, lines = [], []
    k = len(widths)
    for j, raw in enumerate(block.split(b"\n")):
        line = raw.strip()
        if not line or line.startswith(b"#"):
            continue
        toks = line.split()
        no = first_line + j
        if len(toks) != k:
            what = " ".join(names)
            extra = f" (first extra token '{toks[k].decode(errors='replace')}')" \
                if len(toks) > k else ""
            raise VectorFileError(f"line {no}: expected {k} hex tokens ({what}), got "
                                  f"{len(toks)}{extra}")
        row = []
        for t, w, nm in zip(toks, widths, names):
            s = t.decode(errors="replace")
            h = s[2:] if s[:2] in ("0x", "0X") else s
            try:
                if not h or not all(c in "0123456789abcdefABCDEF" for c in h):
                    raise ValueError
                v = int(h, 16)
            except ValueError:
                raise VectorFileError(f"line {no}: token '{s}' ({nm}) is not hex") from None
            if v >> w:
                raise VectorFileError(f"line {no}: token '{s}' ({nm}) does not fit in {w} "
                                      "bits")
            row.append(v)
        rows.append(row)
        lines.append(no)
    if not rows:
        return np.zeros(0, np.int64), [np.zeros(0, np.uint32) for _ in widths]
    arr = np.array(rows, dtype=np.uint64)
    return np.array(lines, np.int64), [arr[:, i].astype(np.uint32) for i in range(k)]


def read_columns(f: BinaryIO, widths, names, block: int = BLOCK,
                 comments: list | None = None) -> Iterator[tuple]:
    """Chunks of a vector file: (line number of each row, [column arrays as uint32]).
    ``comments``: a list that gets the '#' lines found before the first vector of a block (a
    file's header), as text."""
    digits = [w // 4 for w in widths]
    line = 1                                  # number of the first line of ``pending``
    pending = b""
    while True:
        data = f.read(block)
        if isinstance(data, str):
            data = data.encode()
        if data:
            pending += data
            cut = pending.rfind(b"\n")
            if cut < 0:
                continue
            chunk, pending = pending[:cut + 1], pending[cut + 1:]
        else:
            if not pending:
                return
            chunk, pending = pending + b"\n", b""
        # peel comment and blank lines off the front (a file's header)
        while chunk and (chunk[:1] in (b"#", b"\n", b"\r") or chunk[:1].isspace()):
            nl = chunk.find(b"\n")
            head = chunk[:nl].strip() if nl >= 0 else chunk.strip()
            if head and not head.startswith(b"#"):
                break
            if head and comments is not None:
                comments.append(head.decode(errors="replace"))
            chunk = chunk[nl + 1:]
            line += 1
        nlines = chunk.count(b"\n")
        if nlines:
            cols = _fast(chunk, digits)
            if cols is not None:
                yield np.arange(line, line + nlines, dtype=np.int64), cols
            else:
                got = _ragged(chunk, widths, line)
                nos, cols = got if got is not None else _slow(chunk, widths, line, names)
                if nos.size:
                    yield nos, cols
        line += nlines
        if not data:
            return
