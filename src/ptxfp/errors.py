"""The one exception hierarchy of ptxfp.

Every error a user can cause is a ``PtxfpError``, which is a ``ValueError``, so callers that
already catch ``ValueError`` keep working.  Messages name the offending token or operand and the
rule it breaks.
"""

from __future__ import annotations

import re
from typing import Iterable

#: the most characters of one piece of the user's input a message quotes
QUOTE_LIMIT = 80
#: the most characters of a whole message (a net under the quotes' limit)
MESSAGE_LIMIT = 1000


def shorten(text: object, limit: int = QUOTE_LIMIT) -> str:
    """``text`` as a message quotes it: whole when it has at most ``limit`` characters, else
    its head and tail around ``...(N characters)...`` (a 10 MB label name, a 1 MB spelling)."""
    s = text if isinstance(text, str) else str(text)
    if len(s) <= limit:
        return s
    head = max(limit * 2 // 3, 1)
    tail = max(limit - head - 3, 0)
    cut = len(s) - head - tail
    return f"{s[:head]}...({cut} characters)...{s[len(s) - tail:] if tail else ''}"


def names(items: Iterable[object], limit: int = 10) -> str:
    """A list of names as a message quotes it: the first ``limit``, then how many more."""
    out, more = [], 0
    for i, x in enumerate(items):
        if i < limit:
            out.append(shorten(x, 40))
        else:
            more += 1
    return ", ".join(out) + (f" ... ({more} more)" if more else "")


_QUOTE = re.compile(r"'([^'\n]*)'")
#: messages longer than this have their quotes cut (ptxfp's own messages are shorter)
_LONG = 400


def _cut(message: str) -> str:
    """In a long message, every quoted piece longer than QUOTE_LIMIT shortened, and the whole
    kept under MESSAGE_LIMIT: what a message repeats of huge input stays one readable line."""
    if len(message) <= _LONG:
        return message
    message = _QUOTE.sub(lambda m: m.group(0) if len(m.group(1)) <= QUOTE_LIMIT
                         else "'" + shorten(m.group(1)) + "'", message)
    return shorten(message, MESSAGE_LIMIT)


class PtxfpError(ValueError):
    """Base class of every error ptxfp raises for bad input.  A message's quotes of the
    user's input are cut (:func:`shorten`), so no message repeats megabytes of it."""

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(_cut(message) if isinstance(message, str) else message, *args)


class SpellingError(PtxfpError):
    """An instruction spelling that is unknown or illegal (names the token and the rule)."""

    def __init__(self, message: str, *, spelling: str | None = None, token: str | None = None,
                 rule: str | None = None) -> None:
        super().__init__(message)
        self.spelling = spelling
        self.token = token
        self.rule = rule


class OperandError(PtxfpError):
    """Wrong operand count, a value that does not fit the operand width, or non-integer bits."""


class NoModelError(PtxfpError):
    """A legal form ptxfp has no model of on the target asked for (the message names the form,
    the target and why: ``tanh.approx.f32`` has no public model of MUFU.TANH)."""


class FormatError(PtxfpError):
    """An unknown format name, or values that do not fit the format at the edge helpers."""


class PolicyError(PtxfpError):
    """A policy mistake (ptxfp.policy): an unknown field, a value the field does not take, a
    ``per_form`` entry that is malformed or whose glob matches no spelling."""


class ResourceError(PtxfpError):
    """A request for more memory than the machine has: ``option`` names what asked (an option
    such as ``threads``, or an operand), ``size`` its value, ``need``/``have`` bytes."""

    def __init__(self, message: str, *, option: str | None = None, size: object = None,
                 need: int | None = None, have: int | None = None) -> None:
        super().__init__(message)
        self.option = option
        self.size = size
        self.need = need
        self.have = have
        self.rule = "too-large"


class LocatedError(PtxfpError):
    """An error at a position of PTX text: ``line``/``col`` are 1-based (None: the text as a
    whole), ``rule`` the rule id it breaks (check.RULES), ``token`` the offending text."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None,
                 rule: str | None = None, token: str | None = None) -> None:
        where = f"{line}:{col}: " if line is not None else ""
        super().__init__(where + message)
        self.message = _cut(message)
        self.line = line
        self.col = col
        self.rule = rule
        self.token = token


class PtxSyntaxError(LocatedError):
    """PTX text that cannot be read; ``line``/``col`` point at the offending token."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None,
                 token: str | None = None) -> None:
        super().__init__(message, line, col, "syntax", token)


class InterpError(LocatedError):
    """An error while preparing or running PTX; ``line``/``col`` point at the cause."""


class UnsupportedInstruction(InterpError):
    """An instruction (or a form of one) the interpreter does not model."""


class UninitializedRegister(InterpError):
    """A register read before anything (an input or an instruction) set it."""


class OutputError(PtxfpError):
    """A file or folder that cannot be written where the user pointed (a missing folder, a
    folder as the target, permission denied, a full disk ...): ``path`` names it, ``reason``
    says why (ptxfp.outputs)."""

    def __init__(self, message: str, *, path: str | None = None,
                 reason: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason
        self.rule = "output"
