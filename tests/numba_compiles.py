"""A pytest plugin that says where the suite's Numba compilation goes (docs/performance.md,
"The test suite").  Opt-in:

    PYTHONPATH=src:tests PTXFP_COMPILE_REPORT=compiles.json python -m pytest -n 0 -p numba_compiles

Numba announces every compilation that misses its disk cache ("numba:compile" events; a cache
hit announces nothing).  The plugin adds up, per test and per compiled function (its name with
jit_cached's tag cut off), the process CPU time of the outermost compilations (the nested ones,
callees compiled on the way, are inside them), prints the largest at the end and writes the lot
as JSON to ``PTXFP_COMPILE_REPORT``.  CPU time, not wall time: the figures hold on a shared
machine.  With xdist workers each worker reports its own file (``<name>.<worker>.json``).
"""

import collections
import json
import os
import re
import time

import pytest
from numba.core import event

_TAG = re.compile(r"_[0-9a-f]{8}$")


class _Listener(event.Listener):
    def __init__(self):
        super().__init__()
        self.depth = 0
        self.start = 0.0
        self.test = "<collection>"
        self.by_test = collections.Counter()
        self.by_function = collections.Counter()
        self.count = collections.Counter()

    def on_start(self, event):
        if self.depth == 0:
            self.start = time.process_time()
        self.depth += 1

    def on_end(self, event):
        self.depth -= 1
        if self.depth == 0:
            dt = time.process_time() - self.start
            disp = event.data["dispatcher"]
            name = _TAG.sub("", getattr(disp.py_func, "__qualname__", str(disp)))
            name = f"{disp.py_func.__module__}.{name}"
            self.by_test[self.test] += dt
            self.by_function[name] += dt
            self.count[name] += 1


_listener = None


def pytest_configure(config):
    global _listener
    _listener = _Listener()
    event.register("numba:compile", _listener)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _listener is not None:
        _listener.test = item.nodeid
    yield
    if _listener is not None:
        _listener.test = "<between tests>"


def pytest_terminal_summary(terminalreporter):
    lst = _listener
    if lst is None:
        return
    total = sum(lst.by_function.values())
    tr = terminalreporter
    tr.section(f"Numba compilation: {total:.1f} s CPU, {sum(lst.count.values())} compilations")
    for name, t in lst.by_function.most_common(25):
        tr.write_line(f"{t:8.1f} s  {lst.count[name]:4d}x  {name}")
    tr.write_line("by test:")
    for name, t in lst.by_test.most_common(25):
        tr.write_line(f"{t:8.1f} s  {name}")
    path = os.environ.get("PTXFP_COMPILE_REPORT")
    if path:
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        if worker:
            path = f"{path}.{worker}.json"
        with open(path, "w") as f:
            json.dump({"total_cpu_s": total, "by_function": dict(lst.by_function),
                       "count": dict(lst.count), "by_test": dict(lst.by_test),
                       "process_cpu_s": time.process_time()}, f, indent=1)
