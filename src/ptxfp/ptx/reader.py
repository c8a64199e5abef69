"""Read PTX text: a bare spelling, a snippet of instructions, or a whole module.

``read(text, mode="auto")`` returns a :class:`Program`.  The reader knows the *shape* of PTX
(directives, declarations, functions, labels, predicates, operands), not the meaning of any
opcode: every instruction, modeled by ptxfp or not, becomes an :class:`Instr` with its opcode
spelling as written (``fma.rn.f16``, ``ld.global.b32``).  Lines and columns are 1-based.

Immediates (:class:`Imm`) keep their text and a ``value`` read from it:

* ``hexfloat`` ``0f3F800000`` / ``0d3FF0000000000000``: the bits as written (32 / 64 bit);
* ``hex`` ``0x1F`` (also ``0b101`` and octal ``017``, all kind ``hex``/``dec``): the integer;
* ``dec`` ``42``, ``-1``: the (signed) integer;
* ``float`` ``1.5``, ``1e-3``: the bit pattern of the IEEE binary64 value (PTX reads decimal
  floating-point literals as .f64).

Syntax errors raise :class:`PtxSyntaxError` with ``line``, ``col`` and a message naming the
offending token.
"""

from __future__ import annotations

import re
import struct
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core import types
from ..errors import PtxSyntaxError
from ..limits import paused_gc

__all__ = [
    "read", "Program", "Function", "Param", "Decl", "Instr", "Reg", "Imm", "Vec", "Addr",
    "Pred", "Scope", "Names", "PtxSyntaxError", "MODES",
]

MODES = ("auto", "spelling", "snippet", "module")


# ---------------------------------------------------------------------------------------------
# the data model

@dataclass(slots=True)
class Reg:
    """A name used as an operand: a register, a parameter, a label, ``%tid.x``, ``_``."""
    name: str
    line: int = 0
    col: int = 0

    def __str__(self):
        return self.name


@dataclass(slots=True)
class Imm:
    """An immediate operand; see the module docstring for ``kind`` and ``value``."""
    text: str
    value: int | None
    kind: str                     #: 'hexfloat' | 'hex' | 'dec' | 'float'
    line: int = 0
    col: int = 0

    @property
    def width(self):
        """32 for 0f..., 64 for 0d... and decimal floats, None for integers."""
        if self.kind == "hexfloat":
            return 32 if self.text.lstrip("-")[1] in "fF" else 64
        return 64 if self.kind == "float" else None

    def __str__(self):
        return self.text


@dataclass(slots=True)
class Vec:
    """A vector operand ``{a, b}``; ``brackets`` is '{}' (also '()' for call argument lists and
    '|' for ``setp`` predicate pairs ``%p|%q``)."""
    items: list
    line: int = 0
    col: int = 0
    brackets: str = "{}"

    def __str__(self):
        inner = ", ".join(str(i) for i in self.items)
        if self.brackets == "|":
            return "|".join(str(i) for i in self.items)
        return self.brackets[0] + inner + self.brackets[1]


@dataclass(slots=True)
class Addr:
    """A memory operand ``[base]``, ``[base+imm]``, ``[param]``, ``[imm]`` (base None).

    ``extra``: the operands after the first inside the brackets, as the tensor instructions
    write them: ``[%rd1, {%r2, %r3}]`` (a tensor map and its coordinates, TMA's
    ``cp.async.bulk.tensor``), ``[tex, sampler, {f1, f2}]``; empty for a plain address."""
    base: Reg | None
    offset: int = 0
    line: int = 0
    col: int = 0
    extra: tuple = ()

    def __str__(self):
        tail = "".join(f", {o}" for o in self.extra)
        if self.base is None:
            return f"[{self.offset}{tail}]"
        if self.offset:
            return f"[{self.base}{'+' if self.offset > 0 else '-'}{abs(self.offset)}{tail}]"
        return f"[{self.base}{tail}]"


@dataclass(slots=True)
class Pred:
    """A guard predicate ``@%p1`` / ``@!%p1``."""
    name: str
    negated: bool = False
    line: int = 0
    col: int = 0

    def __str__(self):
        return "@" + ("!" if self.negated else "") + self.name


@dataclass
class Decl:
    """One declared name: ``type`` is the type token without the dot ('b16', 'f32', 'pred')."""
    type: str
    line: int
    col: int
    space: str = "reg"            #: state space: reg, param, local, shared, global, const
    vector: int = 1               #: 2 / 4 for .v2 / .v4
    array: tuple = ()             #: array dimensions, e.g. (16,)
    align: int | None = None      #: .align N, where given
    #: the initializer of a variable (``= {1, 2}``): its tokens (kind, text, line, col)
    init: tuple | None = None


#: bumped by every declaration, so that Scope.lookup's memory of lookups stays right
_DECLARED = [0]


class Names(Mapping):
    """Declared names -> Decl, as a read-only mapping in declaration order, where a range
    declaration (``.reg .b16 %h<1000000000>;``) is kept as one entry and a name of it is made
    only when asked for: looking a name up costs its length, not the range's size.

    Like ``dict.setdefault``, the first declaration of a name wins.  Iterating (and ``len``)
    walks every name, so it costs the size of the ranges; :meth:`entries` gives the
    declarations themselves and :meth:`candidates` a bounded sample for suggestions."""
    __slots__ = ("_one", "_ranges", "_order", "_seq", "_digits", "_memo")

    def __init__(self):
        self._one = {}            # name -> (seq, Decl)
        self._ranges = {}         # prefix -> ([count, ...] strictly increasing, [(seq, Decl)])
        self._order = []          # (seq, name or prefix, count or None, Decl)
        self._seq = 0
        self._digits = 0          # digits of the largest count
        self._memo = {}           # name -> _find(name), for names of ranges looked up again

    # -- building
    def setdefault(self, name, decl):
        """Declare one name (unless declared already); return the Decl in force."""
        have = self.get(name)
        if have is not None:
            return have
        self._seq += 1
        self._memo.clear()
        _DECLARED[0] += 1
        self._one[name] = (self._seq, decl)
        self._order.append((self._seq, name, None, decl))
        return decl

    def add_range(self, prefix, count, decl):
        """Declare ``prefix0`` .. ``prefix{count-1}`` (names declared already keep theirs)."""
        if count <= 0:
            return
        counts, entries = self._ranges.setdefault(prefix, ([], []))
        if counts and counts[-1] >= count:
            return                                  # every name is declared already
        self._seq += 1
        self._memo.clear()
        _DECLARED[0] += 1
        counts.append(count)
        entries.append((self._seq, decl))
        self._order.append((self._seq, prefix, count, decl))
        self._digits = max(self._digits, len(str(count)))

    # -- reading
    def _find(self, name):
        """(seq, Decl) of the declaration in force for ``name``, or None."""
        best = self._one.get(name)
        if self._ranges and type(name) is str:
            memo = self._memo
            if name in memo:
                return memo[name]
            if len(memo) >= 65536:
                memo.clear()
            best = memo[name] = self._find_range(name, best)
        return best

    def _find_range(self, name, best):
        """_find for the ranges: each split of the trailing digits into prefix and number."""
        i = n = len(name)
        while i > 0 and "0" <= name[i - 1] <= "9":
            i -= 1
        for j in range(max(i, n - self._digits), n):
            if name[j] == "0" and j != n - 1:
                continue                        # %r01 is not a name of %r<..>
            hit = self._ranges.get(name[:j])
            if hit is None:
                continue
            counts, entries = hit
            k = bisect_right(counts, int(name[j:]))
            if k < len(counts) and (best is None or entries[k][0] < best[0]):
                best = entries[k]
        return best

    def get(self, name, default=None):
        hit = self._find(name)
        return default if hit is None else hit[1]

    def __getitem__(self, name):
        hit = self._find(name)
        if hit is None:
            raise KeyError(name)
        return hit[1]

    def __contains__(self, name):
        return self._find(name) is not None

    def __bool__(self):
        return bool(self._order)

    def __iter__(self):
        for seq, name, count, _ in self._order:
            if count is None:
                yield name
                continue
            for k in range(count):
                full = name + str(k)
                if self._find(full)[0] == seq:
                    yield full

    def __len__(self):
        return sum(1 for _ in self)

    def entries(self):
        """The declarations in order: (name or prefix, count or None, Decl)."""
        return [(name, count, decl) for _, name, count, decl in self._order]

    def size_bound(self):
        """At least the number of names (cheap: the counts added up)."""
        return sum(1 if c is None else c for _, _, c, _ in self._order)

    def candidates(self, near=None, limit=1000):
        """Every name when there are at most ``limit``; else a bounded sample in declaration
        order: the single names, and of each range its first names and those numbered
        around the number ``near`` ends in (for "did you mean" hints)."""
        if self.size_bound() <= limit:
            return list(self)
        num = None
        if near:
            i = len(near)
            while i > 0 and "0" <= near[i - 1] <= "9":
                i -= 1
            if i < len(near) and len(near) - i <= self._digits:
                num = int(near[i:])
        out, seen = [], set()
        for seq, name, count, _ in self._order:
            if count is None:
                ks = [None]
            else:
                ks = list(range(min(count, 20)))
                if num is not None:
                    ks += range(max(0, num - 20), min(count, num + 21))
            for k in ks:
                full = name if k is None else name + str(k)
                if full not in seen and self._find(full)[0] == seq:
                    seen.add(full)
                    out.append(full)
                    if len(out) >= limit:
                        return out
        return out

    def __repr__(self):
        parts = [name if count is None else f"{name}<{count}>"
                 for _, name, count, _ in self._order[:8]]
        more = ", ..." if len(self._order) > 8 else ""
        return f"Names({', '.join(parts)}{more})"


class Scope:
    """Names declared in one block (``{ ... }``), with the enclosing block as ``parent``: PTX
    scopes ``.reg`` declarations by block, and nvcc's inline-asm blocks reuse names."""
    __slots__ = ("parent", "names", "_memo", "_stamp")

    def __init__(self, parent=None):
        self.parent = parent
        self.names = Names()
        self._memo = {}
        self._stamp = -1

    def lookup(self, name):
        # remembered per scope (blocks may nest MAX_BLOCKS deep), until any name is declared
        if self._stamp != _DECLARED[0]:
            self._memo = {}
            self._stamp = _DECLARED[0]
        memo = self._memo
        if name in memo:
            return memo[name]
        s, d = self, None
        while s is not None:
            d = s.names.get(name)
            if d is not None:
                break
            s = s.parent
        if len(memo) < 65536:
            memo[name] = d
        return d

    def __repr__(self):
        return f"Scope({self.names!r})"


@dataclass(slots=True)
class Instr:
    """One instruction statement."""
    opcode_spelling: str
    operands: list
    predicate: Pred | None = None
    label: str | None = None       #: a label that names this instruction (``L1: add ...``)
    line: int = 0
    col: int = 0                   #: position of the opcode
    text: str = ""                 #: the statement's source text, without the ``;``
    function: str | None = None    #: the enclosing function's name (modules)
    scope: Scope | None = field(default=None, repr=False, compare=False)  #: names visible here

    @property
    def opcode(self):
        """The base opcode: ``fma`` for ``fma.rn.f16``."""
        return self.opcode_spelling.split(".", 1)[0]

    @property
    def suffixes(self):
        return tuple(self.opcode_spelling.split(".")[1:])

    def __str__(self):
        ops = ", ".join(str(o) for o in self.operands)
        pre = f"{self.predicate} " if self.predicate else ""
        return f"{pre}{self.opcode_spelling}{' ' + ops if ops else ''};"


@dataclass
class Param:
    name: str
    type: str                      #: 'b64', 'u32', 'b8' (with array) ...
    line: int = 0
    col: int = 0
    space: str = "param"
    array: tuple = ()
    align: int | None = None


@dataclass
class Function:
    name: str
    kind: str                      #: 'entry' | 'func'
    params: list = field(default_factory=list)
    returns: list = field(default_factory=list)   #: .func return parameters
    body: list = field(default_factory=list)      #: Instr statements in source order
    line: int = 0
    col: int = 0
    linkage: str | None = None     #: 'visible' | 'extern' | 'weak' | None
    has_body: bool = True
    registers: Names = field(default_factory=lambda: Names())  #: .reg declared in this function
    labels: dict = field(default_factory=dict)     #: label -> (line, col)
    #: label -> [(line, col, Scope)] of every definition (inline-asm blocks reuse names)
    label_defs: dict = field(default_factory=dict)
    #: performance directives with numbers: 'reqntid' -> ((128,), line, col), 'maxntid' ...
    launch: dict = field(default_factory=dict)


@dataclass
class Program:
    kind: str                      #: 'spelling' | 'snippet' | 'module'
    text: str = ""
    version: tuple | None = None   #: (major, minor) from .version
    version_pos: tuple | None = None      #: (line, col) of the version number
    target: str | None = None      #: first .target entry that names an architecture, 'sm_90a'
    target_pos: tuple | None = None
    target_options: list = field(default_factory=list)  #: the whole .target list
    address_size: int | None = None
    address_size_pos: tuple | None = None
    functions: list = field(default_factory=list)
    statements: list = field(default_factory=list)   #: every Instr in source order
    registers: Names = field(default_factory=lambda: Names())  #: name -> Decl, from .reg
    variables: Names = field(default_factory=lambda: Names())  #: other spaces (.shared ...)
    label_defs: dict = field(default_factory=dict)   #: outside functions: see Function
    labels: dict = field(default_factory=dict)       #: label -> (line, col)
    #: (label, line, col) of each label defined a second time in one function (or snippet):
    #: ptxas' "Duplicate definition of label 'L1'" (name_errors())
    duplicate_labels: list = field(default_factory=list)
    directives: list = field(default_factory=list)   #: other directives: (name, line, col)
    scope: Scope = field(default_factory=Scope, repr=False)  #: the outermost scope

    def lookup(self, name, at=None):
        """The Decl of ``name`` as seen from statement ``at`` (its block scopes first), else
        from the whole program (registers, then other variables); None when undeclared."""
        if at is not None and at.scope is not None:
            d = at.scope.lookup(name)
            if d is not None:
                return d
        return self.registers.get(name) or self.variables.get(name)


#: PTX's special registers (PTX ISA, chapter 10): never declared
SPECIAL_REGISTER = re.compile(
    r"%(tid|ntid|ctaid|nctaid|clusterid|nclusterid|cluster_ctaid|cluster_nctaid)(\.[xyz])?$"
    r"|%(laneid|warpid|nwarpid|smid|nsmid|gridid|is_explicit_cluster|cluster_ctarank"
    r"|cluster_nctarank|lanemask_(eq|le|lt|ge|gt)|clock|clock_hi|clock64|globaltimer"
    r"|globaltimer_lo|globaltimer_hi|total_smem_size|aggr_smem_size|dynamic_smem_size"
    r"|current_graph_exec|warpsize|reserved_smem_offset_\w+|pm[0-7](_64)?|envreg\d+)$")


def _operand_names(o):
    if isinstance(o, Reg):
        yield o
    elif isinstance(o, Vec):
        for i in o.items:
            yield from _operand_names(i)
    elif isinstance(o, Addr):
        if o.base is not None:
            yield o.base
        for i in o.extra:
            yield from _operand_names(i)


def undeclared_registers(prog, ins):
    """The ``%`` names among the operands (and guard) of ``ins`` that no ``.reg`` (or other
    declaration) in scope declares and that are no special register: ptxas' "Unknown symbol
    '%r64'" (``%r64`` past ``.reg .b32 %r<64>`` too).  Names without ``%`` (labels, parameters,
    functions) are not looked at.  For modules; a snippet may leave its registers undeclared."""
    out = []
    names = list(_operand_names_all(ins))
    for r in names:
        n = r.name.lstrip("!")
        if not n.startswith("%") or SPECIAL_REGISTER.match(n):
            continue
        if prog.lookup(n, ins) is None:
            out.append(r)
    return out


def _operand_names_all(ins):
    if ins.predicate is not None:
        yield Reg(ins.predicate.name, ins.predicate.line, ins.predicate.col)
    for o in ins.operands:
        yield from _operand_names(o)


def name_errors(prog):
    """[(line, col, ptxas' message)] of what ptxas rejects in a module's names: a label
    defined twice in one function, a ``%`` register no declaration in scope names (see
    :func:`undeclared_registers`).  ``ptxfp.check`` reports these; the interpreter calls this
    to refuse the same modules."""
    out = [(line, col, f"Duplicate definition of label '{name}'")
           for name, line, col in prog.duplicate_labels]
    if prog.kind == "module":
        for ins in prog.statements:
            for r in undeclared_registers(prog, ins):
                out.append((r.line or ins.line, r.col or ins.col, f"Unknown symbol '{r.name}'"))
    return sorted(out)


def range_hint(prog, name):
    """' (.reg .b16 %h<4> declares %h0 to %h3)' for a register past the range its prefix
    declares (the widest such range), else ''."""
    m = re.fullmatch(r"(.*?)(\d+)", name)
    if not m:
        return ""
    ranges = [(c, d) for pre, c, d in prog.registers.entries()
              if pre == m.group(1) and c is not None]
    if not ranges:
        return ""
    c, d = max(ranges, key=lambda r: r[0])
    return f" (.reg .{d.type} {m.group(1)}<{c}> declares {m.group(1)}0 to {m.group(1)}{c - 1})"


# ---------------------------------------------------------------------------------------------
# lexer

@dataclass(slots=True)
class Tok:
    kind: str                      #: word dir num str punct eof
    text: str
    line: int
    col: int
    pos: int                       #: offset in the source
    end: int
    nl_before: bool = False        #: a newline separates this token from the previous one


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*)
  | (?P<num>0[fF][0-9a-fA-F]{8}(?![\w$])|0[dD][0-9a-fA-F]{16}(?![\w$])
           |0[xX][0-9a-fA-F]+U?|0[bB][01]+U?
           |\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|(?:0[0-7]*|[1-9]\d*)U?)
  | (?P<dir>\.[A-Za-z_$][\w$]*(?:::[\w$]+)*)
  | (?P<word>[A-Za-z_$%][\w$]*(?:(?:\.|::)[\w$]+)*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<punct>[,;:{}\[\]()<>+\-@!|=*])
""", re.VERBOSE)


def _describe(tok):
    if tok.kind == "eof":
        return "end of input"
    return f"'{tok.text}'"


#: the longest number token read (Python's int() refuses more than 4300 digits; no PTX number
#: needs more than a few dozen)
MAX_NUMBER_DIGITS = 1000


#: how deep vector operands may nest ({a, {b, c}}: 2); PTX itself nests one level
MAX_NESTING = 32
#: how deep { } blocks may nest (nvcc's inline asm adds a level or two); a name is looked up
#: through every enclosing block, so the depth bounds the cost of each lookup
MAX_BLOCKS = 256


def tokenize(text):
    lx = _Lexer(text)
    lx.lex(True)
    return lx.toks


class _Lexer:
    """Tokens of ``text``, made on demand: ``lex()`` appends the tokens up to the end of the
    line of the next token to ``toks`` (the 'eof' token last), ``lex(True)`` all the rest.  ``pos``, ``line``, ``line_start`` and ``nl``
    say where the next token starts; the parser's fast statement path (``_Parser.fast``) reads
    a plain statement line from there itself and moves them past it."""
    __slots__ = ("text", "n", "pos", "line", "line_start", "nl", "toks", "done")

    def __init__(self, text):
        self.text = text
        self.n = len(text)
        self.pos, self.line, self.line_start = 0, 1, 0
        self.nl = True
        self.toks = []
        self.done = False

    def lex(self, everything=False):
        if self.done:
            return
        text, n, toks = self.text, self.n, self.toks
        pos, line, line_start, nl = self.pos, self.line, self.line_start, self.nl
        made = len(toks)
        while pos < n:
            m = _TOKEN.match(text, pos)
            col = pos - line_start + 1
            if m is None:
                ch = text[pos]
                if ch.isprintable() and ord(ch) < 128:
                    raise PtxSyntaxError(f"syntax error near '{ch}': unexpected character",
                                         line, col, ch)
                # ptxas: "Unexpected non-ASCII character encountered on line N" (a UTF-8 BOM
                # too); name the character, which a terminal may not show
                import unicodedata
                name = "byte order mark" if ch == "\ufeff" else unicodedata.name(ch, "")
                what = f"U+{ord(ch):04X}" + (f" ({name.lower()})" if name else "")
                kind = "non-ASCII" if ord(ch) >= 128 else "control"
                raise PtxSyntaxError(f"unexpected {kind} character {what}", line, col, ch)
            kind = m.lastgroup
            if kind == "ws" or kind == "lc":
                pos = m.end()
                continue
            if kind == "nl":
                pos = m.end()
                line += 1
                line_start = pos
                nl = True
                if not everything and len(toks) > made:       # a line's tokens at a time
                    self.pos, self.line, self.line_start, self.nl = pos, line, line_start, nl
                    return
                continue
            if kind == "bc":
                end = text.find("*/", pos + 2)
                if end < 0:
                    raise PtxSyntaxError("unterminated comment '/*'", line, col, "/*")
                chunk = text[pos:end + 2]
                k = chunk.count("\n")
                if k:
                    line += k
                    line_start = pos + chunk.rfind("\n") + 1
                    nl = True
                pos = end + 2
                continue
            if kind == "num" and m.end() - pos > MAX_NUMBER_DIGITS:
                raise PtxSyntaxError(f"syntax error near '{text[pos:pos + 12]}...': a number "
                                     f"of {m.end() - pos} characters (at most "
                                     f"{MAX_NUMBER_DIGITS})", line, col, text[pos:m.end()])
            toks.append(Tok(kind, m.group(), line, col, pos, m.end(), nl))
            nl = False
            pos = m.end()
        toks.append(Tok("eof", "", line, pos - line_start + 1, pos, pos, True))
        self.pos, self.line, self.line_start, self.nl = pos, line, line_start, nl
        self.done = True


# ---------------------------------------------------------------------------------------------
# immediates

def parse_number(text):
    """(kind, value) of a number token's text (sign included)."""
    neg = text.startswith("-")
    body = text[1:] if neg else text
    low = body.lower()
    if re.fullmatch(r"0f[0-9a-f]{8}", low) or re.fullmatch(r"0d[0-9a-f]{16}", low):
        v = int(low[2:], 16)
        if neg:
            v ^= 1 << (31 if low[1] == "f" else 63)
        return "hexfloat", v
    if low.endswith("u"):
        low = low[:-1]
    if low.startswith("0x"):
        v = int(low[2:], 16)
        return "hex", -v if neg else v
    if low.startswith("0b"):
        v = int(low[2:], 2)
        return "dec", -v if neg else v
    if re.fullmatch(r"\d+", low):
        v = int(low, 8) if len(low) > 1 and low[0] == "0" else int(low)
        return "dec", -v if neg else v
    try:
        f = float(("-" if neg else "") + low)
    except ValueError:
        return "float", None
    return "float", struct.unpack("<Q", struct.pack("<d", f))[0]


# ---------------------------------------------------------------------------------------------
# parser

_SPACES = {".reg": "reg", ".param": "param", ".local": "local", ".shared": "shared",
           ".global": "global", ".const": "const", ".tex": "tex"}
_MODULE_DIRECTIVES = (".version", ".target", ".address_size", ".entry", ".func", ".visible",
                      ".extern", ".weak", ".common")
_LINE_DIRECTIVES = (".loc", ".file")
_LINKAGE = (".visible", ".extern", ".weak", ".common")
#: declaration type tokens: the type table's, and the opaque types of textures and surfaces
_DECL_TYPES = types.TYPE_TOKENS | {"texref", "samplerref", "surfref"}


class _Parser:
    """The parser.  Given ``toks`` (every token of the text) it reads them; given a lexer
    (``lexer``, tokens made on demand) it reads a plain statement line with one regular
    expression instead (``fast``), and the tokens of everything else."""

    def __init__(self, text, kind, toks=None, lexer=None):
        self.text = text
        if lexer is None:
            lexer = _Lexer(text)
            if toks is None:
                lexer.lex(True)
            else:
                lexer.toks, lexer.done = toks, True
        self.lexer = lexer
        self.toks = lexer.toks
        self.i = 0
        self.prog = Program(kind=kind, text=text)
        self.func = None
        self.scope = self.prog.scope
        self._block_labels = {}          #: id(scope) -> (scope, labels defined in that block)

    # -- token helpers
    @property
    def tok(self):
        try:
            return self.toks[self.i]
        except IndexError:
            self.lexer.lex()
            return self.toks[self.i]

    def peek(self, k=1):
        while len(self.toks) <= self.i + k and not self.lexer.done:
            self.lexer.lex()
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self):
        t = self.tok
        if t.kind != "eof":
            self.i += 1
        return t

    def error(self, tok, what=None):
        msg = f"syntax error near {_describe(tok)}"
        if what:
            msg += f": {what}"
        raise PtxSyntaxError(msg, tok.line, tok.col, tok.text)

    def expect(self, text, what=None):
        t = self.tok
        if t.text != text or t.kind in ("str", "eof"):
            self.error(t, what or f"expected '{text}'")
        return self.next()

    def at(self, text):
        return self.tok.text == text and self.tok.kind in ("punct", "dir", "word")

    # -- top level
    def parse(self):
        try:
            return self._parse()
        except Exception as e:                  # noqa: BLE001 (raised again below)
            err = e
        # The text's first unreadable character is the error, as when every token was made
        # before parsing (tokens are made on demand): read the rest for one.
        self.lexer.lex(True)
        raise err

    def _parse(self):
        p = self.prog
        depth = 0
        fast = p.kind != "module" and not self.lexer.done
        while True:
            if fast and self.i == len(self.toks) and self.fast():
                continue
            t = self.tok
            if t.kind == "eof":
                break
            if t.kind == "dir":
                if t.text == ".version":
                    self.version()
                elif t.text == ".target":
                    self.target()
                elif t.text == ".address_size":
                    self.next()
                    n = self.next()
                    if n.kind != "num" or not n.text.isdigit():
                        self.error(n, "expected an address size (32 or 64)")
                    p.address_size, p.address_size_pos = int(n.text), (n.line, n.col)
                elif t.text in _LINKAGE or t.text in (".entry", ".func"):
                    self.function()
                elif t.text in _LINE_DIRECTIVES:
                    self.line_directive()
                elif t.text in _SPACES:
                    self.declaration(self.prog.variables if t.text != ".reg" else None)
                elif t.text == ".section":
                    self.skip_section()
                else:
                    self.other_directive()
            elif p.kind == "module":
                self.error(t, "expected a directive (.version, .target, .entry, .func ...)"
                           if t.text not in "{}" else "braces outside a function")
            elif t.text == "{":
                if depth >= MAX_BLOCKS:
                    self.error(t, f"blocks nested more than {MAX_BLOCKS} deep")
                self.next()
                depth += 1
                self.scope = Scope(self.scope)
            elif t.text == "}":
                if depth == 0:
                    self.error(t, "unbalanced '}'")
                self.next()
                depth -= 1
                self.scope = self.scope.parent
            else:
                self.statement()
        if depth:
            self.error(self.tok, "missing '}'")
        return p

    def version(self):
        self.next()
        n = self.next()
        m = re.fullmatch(r"(\d+)\.(\d+)", n.text) if n.kind == "num" else None
        if not m:
            self.error(n, "expected a version number like 8.6")
        self.prog.version = (int(m.group(1)), int(m.group(2)))
        self.prog.version_pos = (n.line, n.col)

    def target(self):
        self.next()
        p = self.prog
        while True:
            n = self.next()
            if n.kind != "word":
                self.error(n, "expected a target name like sm_90a")
            p.target_options.append((n.text, n.line, n.col))
            if p.target is None and re.fullmatch(r"(sm|compute)_\w+", n.text):
                p.target, p.target_pos = n.text, (n.line, n.col)
            if not self.at(","):
                break
            self.next()
        if p.target is None and p.target_options:
            name, line, col = p.target_options[0]
            p.target, p.target_pos = name, (line, col)

    def line_directive(self):
        t = self.next()
        self.prog.directives.append((t.text, t.line, t.col))
        while True:
            if self.i == len(self.toks) and self.line_ends():
                return                                  # (the next token is made later)
            if self.tok.kind == "eof" or self.tok.nl_before:
                break
            self.next()
        if self.at(";"):                                # tolerate '.loc 1 2 3;'
            self.next()

    def line_ends(self):
        """With no token made ahead: does the line end before the next token, and is that
        token no ';' (what line_directive looks for)?  Then it need not be made now, and the
        fast path may read the statement that follows."""
        lx = self.lexer
        if lx.done:
            return False
        m = _BLANK.match(self.text, lx.pos)
        end = m.end()
        # at a block comment the tokens decide (one may hide a ';' or end on this line)
        return end == lx.n or (self.text[end] not in ";/" and (lx.nl or "\n" in m.group()))

    def other_directive(self):
        """An unknown directive: skip it up to ';' (or a brace block)."""
        t = self.next()
        self.prog.directives.append((t.text, t.line, t.col))
        while self.tok.kind != "eof" and not self.at(";"):
            if self.at("{"):
                self.skip_braces()
                return
            if self.at("}"):
                return
            self.next()
        if self.at(";"):
            self.next()

    def skip_braces(self):
        depth = 0
        while self.tok.kind != "eof":
            t = self.next()
            if t.text == "{" and t.kind == "punct":
                depth += 1
            elif t.text == "}" and t.kind == "punct":
                depth -= 1
                if depth == 0:
                    return
        self.error(self.tok, "missing '}'")

    def skip_section(self):
        t = self.next()
        self.prog.directives.append((t.text, t.line, t.col))
        while self.tok.kind != "eof" and not self.at("{"):
            self.next()
        self.skip_braces()

    # -- declarations
    def declaration(self, into=None, params=None):
        """``.reg .b16 %rs<8>;``, ``.shared .align 4 .b8 buf[128];``, ``.param .b64 p``.

        Without ``params``: reads to the ';' and records names in ``into`` (registers by
        default).  With ``params`` (a list): reads one parameter, stops before ',' or ')'."""
        sp = self.next()
        space = _SPACES[sp.text]
        typ, vector, align = None, 1, None
        names = []
        while True:
            t = self.tok
            if t.kind == "dir":
                self.next()
                if t.text.startswith(".") and t.text[1:] in _DECL_TYPES:
                    typ = t.text[1:]
                elif t.text in (".v2", ".v4", ".v8"):
                    vector = int(t.text[2:])
                elif t.text == ".align":
                    n = self.next()
                    if n.kind != "num":
                        self.error(n, "expected an alignment")
                    align = int(parse_number(n.text)[1] or 0)
                elif t.text == ".ptr":
                    pass
                # state space qualifiers after .ptr (.global, .shared ...) and others: ignored
                continue
            break
        if typ is None:
            self.error(self.tok, f"expected a type in '{sp.text}' declaration")
        while True:
            n = self.tok
            if n.kind != "word" or "." in n.text:
                self.error(n, f"expected a name in '{sp.text}' declaration")
            self.next()
            count, dims = None, []
            if self.at("<"):
                self.next()
                c = self.next()
                if c.kind != "num" or not c.text.isdigit():
                    self.error(c, "expected a register count")
                count = int(c.text)
                self.expect(">")
            while self.at("["):
                self.next()
                if self.at("]"):
                    dims.append(0)
                else:
                    c = self.next()
                    if c.kind != "num":
                        self.error(c, "expected an array size")
                    dims.append(parse_number(c.text)[1] or 0)
                self.expect("]")
            if params is not None:
                params.append(Param(n.text, typ, n.line, n.col, space, tuple(dims), align))
                return
            init = None
            if self.at("="):                               # initializer: its tokens kept
                self.next()
                depth = 0
                toks = []
                while self.tok.kind != "eof":
                    if self.at("{"):
                        depth += 1
                    elif self.at("}"):
                        depth -= 1
                    elif depth == 0 and (self.at(",") or self.at(";")):
                        break
                    t = self.next()
                    toks.append((t.kind, t.text, t.line, t.col))
                init = tuple(toks)
            names.append((n, count, tuple(dims), init))
            if self.at(","):
                self.next()
                continue
            break
        self.expect(";", f"expected ';' after '{sp.text}' declaration")
        for n, count, dims, init in names:
            # a range %r<N> stays one entry of each table (Names): no name is made up front
            d = Decl(typ, n.line, n.col, space, vector, dims, align, init)
            tables = [self.scope.names]
            if space == "reg" and into is None:
                tables.append(self.prog.registers)
                if self.func is not None:
                    tables.append(self.func.registers)
            else:
                tables.append(into if into is not None else self.prog.variables)
            for table in tables:
                if count is None:
                    table.setdefault(n.text, d)
                else:
                    table.add_range(n.text, count, d)

    # -- functions
    def function(self):
        linkage = None
        while self.tok.text in _LINKAGE:
            linkage = self.next().text[1:]
        kw = self.tok
        if kw.text not in (".entry", ".func"):
            if kw.kind == "dir" and kw.text in _SPACES:       # .visible .global .b32 x;
                self.declaration(self.prog.variables if kw.text != ".reg" else None)
                return
            self.error(kw, "expected '.entry' or '.func'")
        self.next()
        kind = kw.text[1:]
        returns = []
        if kind == "func" and self.at("("):
            returns = self.param_list()
        name = self.next()
        if name.kind != "word":
            self.error(name, f"expected a function name after '{kw.text}'")
        fn = Function(name.text, kind, returns=returns, line=name.line, col=name.col,
                      linkage=linkage)
        if self.at("("):
            fn.params = self.param_list()
        # performance directives (.maxntid 1, 1, 1 / .noreturn / .pragma "...";) until { or ;
        while self.tok.kind != "eof" and not self.at("{") and not self.at(";"):
            t = self.next()
            if t.kind == "dir":
                self.prog.directives.append((t.text, t.line, t.col))
                nums = []
                while self.tok.kind == "num":
                    nums.append(parse_number(self.next().text)[1] or 0)
                    if self.at(","):
                        self.next()
                if nums:
                    fn.launch[t.text[1:]] = (tuple(nums), t.line, t.col)
            if t.text == ".pragma":
                while self.tok.kind == "str" or self.at(","):
                    self.next()
                if self.at(";"):
                    self.next()
        self.prog.functions.append(fn)
        if self.at(";"):
            self.next()
            fn.has_body = False
            return
        if self.tok.kind == "eof":
            self.error(self.tok, f"expected '{{' to open the body of '{fn.name}'")
        self.func = fn
        outer = self.scope
        self.scope = Scope(outer)
        for q in fn.params + fn.returns:
            self.scope.names.setdefault(q.name, Decl(q.type, q.line, q.col, q.space, 1, q.array))
        self.body()
        self.func = None
        self.scope = outer

    def param_list(self):
        self.expect("(")
        params = []
        if self.at(")"):
            self.next()
            return params
        while True:
            t = self.tok
            if t.kind != "dir" or t.text not in _SPACES:
                self.error(t, "expected '.param' or '.reg' in a parameter list")
            self.declaration(params=params)
            if self.at(","):
                self.next()
                continue
            self.expect(")", "expected ',' or ')' in a parameter list")
            return params

    def body(self):
        self.expect("{")
        depth = 1
        fast = not self.lexer.done
        while True:
            if fast and self.i == len(self.toks) and self.fast():
                continue
            t = self.tok
            if t.kind == "eof":
                self.error(t, f"missing '}}' at the end of '{self.func.name}'")
            if t.text == "{" and t.kind == "punct":
                if depth > MAX_BLOCKS:
                    self.error(t, f"blocks nested more than {MAX_BLOCKS} deep")
                self.next()
                depth += 1
                if depth > 1:
                    self.scope = Scope(self.scope)
            elif t.text == "}" and t.kind == "punct":
                self.next()
                depth -= 1
                if depth == 0:
                    return
                self.scope = self.scope.parent
            elif t.kind == "dir":
                if t.text in _SPACES:
                    self.declaration(None if t.text == ".reg" else self.prog.variables)
                elif t.text in _LINE_DIRECTIVES:
                    self.line_directive()
                elif t.text in (".entry", ".func", ".version", ".target"):
                    self.error(t, f"'{t.text}' inside the body of '{self.func.name}'")
                else:
                    self.other_directive()
            else:
                self.statement()

    # -- statements
    pending_label = None

    def statement(self):
        t = self.tok
        if t.kind == "word" and self.peek().text == ":" and self.peek().kind == "punct":
            self.next()
            self.next()
            labels = self.func.labels if self.func is not None else None
            # labels are scoped by block as registers are: nvcc's inline-asm blocks reuse them
            block = self._block_labels.setdefault(id(self.scope), (self.scope, set()))[1]
            if t.text in block:
                self.prog.duplicate_labels.append((t.text, t.line, t.col))
            block.add(t.text)
            self.prog.labels.setdefault(t.text, (t.line, t.col))
            if labels is not None:
                labels.setdefault(t.text, (t.line, t.col))
            (self.func or self.prog).label_defs.setdefault(t.text, []).append(
                (t.line, t.col, self.scope))
            self.pending_label = t.text
            return
        start = t
        pred = None
        if t.text == "@" and t.kind == "punct":
            self.next()
            neg = False
            if self.at("!"):
                self.next()
                neg = True
            r = self.next()
            if r.kind != "word":
                self.error(r, "expected a predicate register after '@'")
            pred = Pred(r.text, neg, r.line, r.col)
        op = self.tok
        if op.kind != "word":
            if op.kind == "eof":
                self.error(op, "expected an instruction after the predicate")
            self.error(op, "expected an instruction")
        self.next()
        operands = []
        last_line_ok = self.prog.kind != "module"
        if not (self.at(";") or (last_line_ok and self.tok.kind == "eof")):
            while True:
                operands.append(self.operand())
                if self.at(","):
                    self.next()
                    continue
                break
        end_tok = self.tok
        if self.at(";"):
            self.next()
        elif not (last_line_ok and end_tok.kind == "eof"):
            if end_tok.kind == "eof":
                self.error(end_tok, f"expected ';' after '{op.text}'")
            self.error(end_tok, f"expected ',' or ';' in '{op.text}'")
        text = self.text[start.pos:end_tok.pos].strip()
        ins = Instr(op.text, operands, pred, self.pending_label, op.line, op.col, text,
                    self.func.name if self.func is not None else None, self.scope)
        self.pending_label = None
        self.prog.statements.append(ins)
        if self.func is not None:
            self.func.body.append(ins)

    def fast(self):
        """Read a plain statement (``@%p add.s32 %r1, %r2, 4;``: registers, numbers, ``{a, b}``
        vectors and ``[reg+imm]`` addresses, on one line) with one regular expression, as
        ``statement`` reads its tokens, when the next token starts one; False (nothing read)
        otherwise.  Called only when no token is made ahead."""
        lx = self.lexer
        pos = lx.pos
        text = self.text
        m = _FAST.match(text, pos)
        if m is None:
            return False
        line, line_start = lx.line, lx.line_start
        lead = m.end(1)
        if lead > pos:
            k = text.count("\n", pos, lead)
            if k:
                line += k
                line_start = text.rindex("\n", pos, lead) + 1
        pred = None
        if m.start(3) >= 0:
            pred = Pred(m.group(3), m.start(2) >= 0, line, m.start(3) - line_start + 1)
        ops = []
        a0, a1 = m.span(5)
        args = text[a0:a1] if a0 >= 0 else ""
        if args and "{" not in args and "[" not in args:
            # names and numbers only (checked by _FAST): split at the commas
            at = a0 - line_start + 1
            for piece in args.split(","):
                tok = piece.lstrip()                  # spaces are _S's, which strip() takes
                col = at + len(piece) - len(tok)
                tok = tok.rstrip()
                if tok[0] in "0123456789-":
                    ops.append(Imm(tok, *parse_number(tok)[::-1], line, col))
                else:
                    ops.append(Reg(tok, line, col))
                at += len(piece) + 1
        elif args:
            for o in _FAST_OPERAND.finditer(text, a0, a1):
                kind = o.lastgroup
                at = o.start(kind)
                col = at - line_start + 1
                if kind == "reg":
                    ops.append(Reg(o.group(kind), line, col))
                elif kind == "num":
                    t = o.group(kind)
                    ops.append(Imm(t, *parse_number(t)[::-1], line, col))
                elif kind == "vec":
                    items = [Reg(r.group(), line, r.start() - line_start + 1)
                             for r in _FAST_WORD.finditer(text, at + 1, o.end(kind) - 1)]
                    ops.append(Vec(items, line, col, "{}"))
                else:
                    a = _FAST_ADDR.match(text, at + 1, o.end(kind) - 1)
                    base = None
                    if a.start(1) >= 0:
                        base = Reg(a.group(1), line, a.start(1) - line_start + 1)
                        off = 0
                        if a.start(3) >= 0:
                            off = parse_number(a.group(3))[1]
                            if a.group(2) == "-":
                                off = -off
                    else:
                        off = parse_number(a.group(4))[1]
                    ops.append(Addr(base, off, line, col))
        semi = m.end() - 1
        start = m.start(2) - 1 if m.start(2) >= 0 else (
            m.start(3) - 1 if m.start(3) >= 0 else m.start(4))
        lx.pos, lx.line, lx.line_start, lx.nl = m.end(), line, line_start, False
        ins = Instr(m.group(4), ops, pred, self.pending_label, line, m.start(4) - line_start + 1,
                    self.text[start:semi].strip(),
                    self.func.name if self.func is not None else None, self.scope)
        self.pending_label = None
        self.prog.statements.append(ins)
        if self.func is not None:
            self.func.body.append(ins)
        return True

    def operand(self):
        first = self.simple_operand()
        if self.at("|"):                                  # setp ... %p|%q, a, b
            items = [first]
            while self.at("|"):
                self.next()
                items.append(self.simple_operand())
            return Vec(items, first.line, first.col, "|")
        return first

    depth = 0                                             #: vector operands open now

    def simple_operand(self):
        t = self.tok
        if t.kind == "punct" and t.text in "{(":
            if self.depth >= MAX_NESTING:
                self.error(t, f"vector operands nested more than {MAX_NESTING} deep")
            close = "}" if t.text == "{" else ")"
            self.next()
            self.depth += 1
            items = []
            if not self.at(close):
                while True:
                    items.append(self.operand())
                    if self.at(","):
                        self.next()
                        continue
                    break
            self.expect(close, f"expected ',' or '{close}' in a vector operand")
            self.depth -= 1
            return Vec(items, t.line, t.col, t.text + close)
        if t.kind == "punct" and t.text == "[":
            return self.address()
        if t.kind == "punct" and t.text in "-!" and self.peek().kind in ("num", "word"):
            self.next()
            n = self.tok
            if t.text == "-" and n.kind == "num":
                self.next()
                kind, value = parse_number("-" + n.text)
                return Imm("-" + n.text, value, kind, t.line, t.col)
            if n.kind == "word":                              # !%p (negated predicate source)
                self.next()
                return Reg(t.text + n.text, t.line, t.col)
            self.error(n)
        if t.kind == "num":
            self.next()
            kind, value = parse_number(t.text)
            return Imm(t.text, value, kind, t.line, t.col)
        if t.kind == "word":
            self.next()
            if self.at("+") and self.peek().kind == "num":    # symbol+offset (mov.u64 %rd, g+4)
                self.next()
                off = self.next()
                return Addr(Reg(t.text, t.line, t.col), parse_number(off.text)[1] or 0,
                            t.line, t.col)
            return Reg(t.text, t.line, t.col)
        self.error(t, "expected an operand")

    def address(self):
        lb = self.next()
        base, offset = None, 0
        t = self.tok
        if t.kind == "word":
            self.next()
            base = Reg(t.text, t.line, t.col)
        elif t.kind == "num":
            self.next()
            offset = parse_number(t.text)[1] or 0
        else:
            self.error(t, "expected a register, a name or an address in '[...]'")
        while self.at("+") or self.at("-"):
            sign = -1 if self.next().text == "-" else 1
            if self.at("-"):
                self.next()
                sign = -sign
            n = self.next()
            if n.kind != "num":
                self.error(n, "expected an integer offset in '[...]'")
            v = parse_number(n.text)[1]
            if v is None:
                self.error(n, "expected an integer offset in '[...]'")
            offset += sign * v
        extra = []
        while self.at(","):                                # [tmap, {x, y}] (tensor coordinates)
            self.next()
            extra.append(self.operand())
        self.expect("]", "expected ']' to close the address")
        return Addr(base, offset, lb.line, lb.col, tuple(extra))


_SPELLING = re.compile(r"[A-Za-z_][\w$]*(?:(?:\.|::)[\w$]+)*")

# The fast statement path (_Parser.fast).  Its pieces are the lexer's (_TOKEN): a name is a
# 'word' token, a number a 'num' token (an atomic group, so that the alternative taken is the
# first that matches, as in the lexer, and at most 100 digits, well inside MAX_NUMBER_DIGITS),
# and every token ends where the next piece cannot continue it; anything else (comments inside
# a statement, strings, '|' pairs, '-' before a name, symbol+offset, nesting, a statement over
# several lines or without its ';') is left to the tokens.
_W = r"[A-Za-z_$%][\w$]*(?:(?:\.|::)[\w$]+)*"
_INT = (r"(?>0[xX][0-9a-fA-F]{1,100}U?|0[bB][01]{1,100}U?"
        r"|(?:0[0-7]{0,100}|[1-9]\d{0,99})U?)(?![\w$.])")
_NUM = (r"-?(?>0[fF][0-9a-fA-F]{8}(?![\w$])|0[dD][0-9a-fA-F]{16}(?![\w$])"
        r"|0[xX][0-9a-fA-F]{1,100}U?|0[bB][01]{1,100}U?"
        r"|\d{1,100}\.\d{0,100}(?:[eE][+-]?\d{1,100})?|\d{1,100}[eE][+-]?\d{1,100}"
        r"|(?:0[0-7]{0,100}|[1-9]\d{0,99})U?)(?![\w$.])")
_S = r"[ \t\r\f\v]"
_VEC = rf"\{{{_S}*{_W}(?:{_S}*,{_S}*{_W})*{_S}*\}}"
_ADDR = rf"\[{_S}*(?:{_W}(?:{_S}*[+-]{_S}*{_INT})?|{_INT}){_S}*\]"
_OPND = rf"(?:!?{_W}|{_NUM}|{_VEC}|{_ADDR})"
_FAST = re.compile(
    rf"((?>(?:{_S}|\n|//[^\n]*)*))"                           # 1: spaces, newlines, comments
    rf"(?:@(!)?({_W}){_S}+)?"                                  # 2, 3: the guard
    rf"([A-Za-z_][\w$]*(?:(?:\.|::)[\w$]+)*)"                  # 4: the opcode
    rf"(?:{_S}+({_OPND}(?:{_S}*,{_S}*{_OPND})*))?"               # 5: the operands
    rf"{_S}*;")
_FAST_OPERAND = re.compile(
    rf"{_S}*(?:(?P<reg>!?{_W})|(?P<num>{_NUM})|(?P<vec>{_VEC})|(?P<addr>{_ADDR})){_S}*,?")
_FAST_WORD = re.compile(_W)
_FAST_ADDR = re.compile(rf"{_S}*(?:({_W})(?:{_S}*([+-]){_S}*({_INT}))?|({_INT})){_S}*")
#: spaces, newlines and line comments (what the lexer skips, block comments aside)
_BLANK = re.compile(r"(?>(?:[ \t\r\f\v]|\n|//[^\n]*)*)")
#: a module directive could be in the text (else 'auto' reads a snippet, tokens on demand)
_MODULE_HINT = re.compile(r"\.(?:version|target|address_size|entry|func|visible|extern|weak"
                          r"|common)(?![\w$])")


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def read(text, *, mode="auto"):
    """Read PTX text into a :class:`Program`.

    ``mode``: 'spelling' (one bare instruction spelling such as ``fma.rn.oob.relu.bf16x2``),
    'snippet' (instructions, ``.reg`` lines, labels, braces; undeclared registers allowed; the
    last statement may omit its ';'), 'module' (a PTX module: ``.version``, ``.target``,
    functions), or 'auto' (the default: a spelling when the text is one dotted word, a module
    when it has module directives, a snippet otherwise)."""
    if not isinstance(text, str):
        raise PtxSyntaxError(f"PTX text must be a string, got {type(text).__name__}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    with paused_gc():             # (as check and run do: reading makes no cycles)
        return _read(text, mode)


def _read(text, mode):
    lexer = _Lexer(text)
    if mode == "auto":
        bare = _strip_comments(text).strip()
        if _SPELLING.fullmatch(bare.rstrip(";").strip()):
            mode = "spelling"
        elif _MODULE_HINT.search(text) is None:
            mode = "snippet"
        else:
            # a module when any token is a module directive: made one by one until one is
            # (usually the first, .version), so that the rest is made on demand
            mode = "snippet"
            seen = 0
            while mode == "snippet" and not lexer.done:
                lexer.lex()
                if any(t.kind == "dir" and t.text in _MODULE_DIRECTIVES
                       for t in lexer.toks[seen:]):
                    mode = "module"
                seen = len(lexer.toks)
    if mode == "spelling":
        toks = tokenize(text)
        words = [t for t in toks if t.kind != "eof"]
        if words and words[-1].text == ";":
            words = words[:-1]
        if len(words) != 1 or words[0].kind != "word":
            bad = words[1] if len(words) > 1 else (words[0] if words else toks[-1])
            raise PtxSyntaxError(f"syntax error near {_describe(bad)}: expected one instruction "
                                 "spelling such as 'fma.rn.f16'", bad.line, bad.col, bad.text)
        w = words[0]
        prog = Program(kind="spelling", text=text)
        prog.statements.append(Instr(w.text, [], None, None, w.line, w.col, w.text))
        return prog
    return _Parser(text, mode, lexer=lexer).parse()
