"""Shared fixtures of the oracle tests (tests/oracle.py, tests/vectors.py)."""

import os
import pathlib
import sys

import numpy as np
import pytest

# oracle.py and vectors.py live next to the tests: importable whatever pytest's import mode.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import oracle as _oracle  # noqa: E402

#: At most this many xdist workers for ``-n auto`` (pyproject's addopts): each holds its own
#: compiled kernels and up to about 2 GB at the suite's peak; past 4 the saving is small, since
#: each worker compiles again any kernel it meets before another has written it to the cache.
MAX_WORKERS = 4


@pytest.hookimpl(optionalhook=True)         # known only where pytest-xdist is installed
def pytest_xdist_auto_num_workers(config):
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:                     # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


@pytest.fixture
def rng():
    return np.random.default_rng(0x5EED_F16)


@pytest.fixture(scope="session")
def oracle():
    return _oracle


def _hex(x, width):
    return f"0x{int(x):0{width // 4}x}"


@pytest.fixture(scope="session")
def check():
    """check(spelling, operands, got, want): assert element-wise equality of result arrays,
    naming the first few differing inputs in hex with both results."""

    def check(spelling, operands, got, want, limit=8):
        got = np.asarray(got)
        want = np.asarray(want)
        assert got.shape == want.shape, (got.shape, want.shape)
        bad = np.nonzero(got.ravel() != want.ravel())[0]
        if bad.size:
            cols = [np.broadcast_to(np.asarray(x), got.shape).ravel() for x in operands]
            widths = [8 * x.dtype.itemsize if x.dtype.itemsize <= 4 else 32 for x in cols]
            rw = 8 * got.dtype.itemsize
            lines = [f"{spelling}: {bad.size} of {got.size} results differ from the oracle"]
            for i in bad[:limit]:
                ops = ", ".join(_hex(c[i], w) for c, w in zip(cols, widths))
                lines.append(f"  ({ops}) -> ptxfp {_hex(got.ravel()[i], rw)}, "
                             f"oracle {_hex(want.ravel()[i], rw)}")
            pytest.fail("\n".join(lines), pytrace=False)

    return check
