"""Memory the user's input sizes, checked before it is asked for.

Every allocation whose size comes from the caller (a thread count, a memory size, the
broadcast shape of operand arrays) is first weighed here: past the memory this machine has
free, :func:`check_bytes` raises a one-line :class:`~ptxfp.errors.ResourceError` naming the
option and the size, instead of NumPy's ``MemoryError`` (or the kernel's OOM killer) later.
"""

from __future__ import annotations

import os
from typing import Callable, ParamSpec, TypeVar

from .errors import ResourceError

T = TypeVar("T")
P = ParamSpec("P")

#: requests below this many bytes are never weighed (reading /proc/meminfo costs ~20 us)
FREE_PASS = 64 << 20


def available() -> int:
    """Bytes of memory free for this process: Linux's MemAvailable (also bounded by an
    address-space rlimit when one is set), else the physical memory."""
    have: int | None = None
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    have = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        have = None
    if have is None:
        try:
            have = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            have = 1 << 40
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY and soft > 0:
            have = min(have, soft)
    except (ImportError, OSError, ValueError):
        pass
    return have


def human(n: int) -> str:
    """Bytes as a short figure: '1.5 GB', '812 MB', '64 KB'."""
    for unit, scale in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:.3g} {unit}" if v < 1e4 else f"{v:.3e} {unit}"
    return f"{n} bytes"


def check_bytes(need: int, option: str, size: object, why: str = "") -> None:
    """Raise ResourceError when ``need`` bytes (asked for by ``option`` = ``size``) are more
    than the machine has free.  ``option`` is the name the user wrote (``threads``,
    ``memory``, ``operands of 'add.rn.f16'``); ``why`` says what the bytes are for."""
    if need <= FREE_PASS:
        return
    have = available()
    if need > have:
        raise ResourceError(
            f"{option} {size}: needs about {human(need)} of memory{why}, more than the "
            f"{human(have)} this machine has free", option=option, size=size, need=need,
            have=have)


def guarded(what: str) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Decorator for public entry points: a MemoryError (or a RecursionError from absurdly
    deep input) that still gets through the checks above becomes one ResourceError line."""
    import functools

    def wrap(fn: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                return fn(*args, **kwargs)
            except MemoryError:
                raise ResourceError(f"{what}: ran out of memory (the input asks for more than "
                                    f"the {human(available())} this machine has free)",
                                    option=what) from None
            except RecursionError:
                raise ResourceError(f"{what}: the input is nested too deeply to read",
                                    option=what) from None
        return call
    return wrap


class paused_gc:
    """``with paused_gc():`` the cyclic garbage collector is off while a program is read,
    checked or compiled: those build many objects and no cycles worth collecting, and the
    collector's passes over them cost more than the work (half of reading 200,000 lines).
    Reference counting still frees memory; the collector is turned back on (if it was on)."""

    __slots__ = ("was",)

    def __enter__(self) -> "paused_gc":
        import gc
        self.was = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.was:
            import gc
            gc.enable()
