"""``python -m ptxfp.hw`` (and ``ptxfp verify``): verify ptxfp against a GPU, settle the policies.

``main(argv)`` parses the options, runs, writes the report and returns the exit status:

- 0 ``agrees``: every selected form, sweep and probe ran to the end, 0 mismatches, every probe
  as ptxfp predicts;
- 1 ``differs``: a mismatch, or a probe contradicting the policy in force (whatever else was
  cut short: the report lists that too);
- 2 it cannot run at all: a bad option, no GPU, no CUDA backend (one line);
- 3 ``incomplete``: nothing differs, but something was cut short by the budget or could not run
  (listed by name): no claim of agreement.

The report (and the JSON) is rewritten atomically after every form, sweep and batch of probes:
a run killed at any point leaves a valid report that says it is partial.
"""

import argparse
import datetime
import fnmatch
import hashlib
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

_IMPORTED = time.time()

from .. import policy, vectors as package_vectors  # noqa: E402
from ..errors import PtxfpError  # noqa: E402
from .forms import all_spellings, parse_form as parse, sfu_spellings  # noqa: E402
from .probes import (POLICY_FIELDS, informative, not_run, policy_answers, probes,  # noqa: E402
                     run_probe, suggested_policy)
from .defects import toolchain_defect  # noqa: E402
import ptxfp.hw.report as report  # noqa: E402  (a module: tests spy on report.write)
from ..vectors.harness import exhaustive_eligible  # noqa: E402
from .kernels import DEFAULT_SM, kernel_for  # noqa: E402
from .resume import SweepState, judged_under  # noqa: E402
from .runner import HardwareUnavailable, get_runner  # noqa: E402
from .verify import EXAMPLES, FormResult, could_not_run, sweep_form, verify_form  # noqa: E402
import ptxfp.hw.record as record_mod  # noqa: E402
from .provenance import _git_revision, _version, source_checksum  # noqa: E402,F401

DEFAULT_VECTORS = 1_000_000
#: vectors per form of the package's targeted families (ptxfp.vectors.targeted)
TARGETED = 20_000
#: the most random vectors per form one call accepts (checked before anything runs)
MAX_VECTORS = 10 ** 12
MAX_EXAMPLES = 1000
#: vectors per chunk of an exhaustive sweep (the unit --resume records)
CHUNK = 1 << 26

EXIT_AGREES, EXIT_DIFFERS, EXIT_UNUSABLE, EXIT_INCOMPLETE = 0, 1, 2, 3
VERDICTS = {"agrees": EXIT_AGREES, "differs": EXIT_DIFFERS, "incomplete": EXIT_INCOMPLETE}


class UsageError(PtxfpError):
    """A bad option: one line for the user, exit status 2."""


def process_start():
    """``time.time()`` when this process started (Linux: /proc), else when this module was
    imported: ``--budget`` counts from here, interpreter and imports included."""
    try:
        with open("/proc/self/stat") as f:
            after = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        age = uptime - int(after[19]) / os.sysconf("SC_CLK_TCK")    # field 22: starttime
        if 0 <= age < 7 * 86400:
            return min(_IMPORTED, time.time() - age)
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    return _IMPORTED


def _cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


def _parser(prog):
    p = argparse.ArgumentParser(
        prog=prog or "python -m ptxfp.hw",
        description="Verify ptxfp bit for bit against an NVIDIA GPU, and measure the open "
                    "policies (docs/conformance.md).  Exit status: 0 agrees, 1 differs, "
                    "2 cannot run, 3 incomplete.")
    p.add_argument("--forms", default="all", metavar="LIST",
                   help="comma-separated spellings or globs over the canonical spellings "
                        "of the arithmetic, cvt and SFU tables (e.g. 'fma.*.bf16*,add.rn.f16,"
                        "cvt.*,*.approx.f32'); 'all' (default: the arithmetic and cvt tables), "
                        "'sfu' (every .approx and div.full form, modeled for the GPU's own sm) "
                        "or 'none'")
    p.add_argument("--vectors", type=int, default=None, metavar="N",
                   help=f"random vectors per form, besides the special grid and the targeted "
                        f"ones (default {DEFAULT_VECTORS:,}; with --record 0)")
    p.add_argument("--targeted", "--test-vectors", dest="targeted", type=int, default=None,
                   metavar="N",
                   help="vectors per form from ptxfp.vectors' targeted families (ties, "
                        "double rounding, cancellation, far exponents, subnormal and overflow "
                        f"boundaries; default {TARGETED:,}; with --record "
                        f"{record_mod.TARGETED:,} or fewer to fit --max-mb; 0 to skip)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--exhaustive", action="store_true",
                   help="also sweep all 2^32 (a, b) pairs of every selected 16-bit binary form "
                        "(fma: per fixed c), all 2^32 inputs of every narrowing cvt and all "
                        "2^16 of every widening cvt")
    p.add_argument("--exhaustive-only", action="store_true",
                   help="the sweeps alone (implies --exhaustive; no vector sets, no probes "
                        "unless --probes names some)")
    p.add_argument("--exhaustive-c", default=None, metavar="LIST",
                   help="fixed c values (hex bits) for exhaustive fma sweeps "
                        "(default -0 and 1.0 of the c format)")
    p.add_argument("--chunk", type=int, default=CHUNK, metavar="N",
                   help=f"vectors per sweep chunk, a power of two from 2^16 to 2^30 "
                        f"(default 2^{CHUNK.bit_length() - 1})")
    p.add_argument("--resume", metavar="FILE",
                   help="record finished sweep chunks in FILE and skip those it lists: repeated "
                        "calls with the same FILE add up to the full sweeps")
    p.add_argument("--chunks-per-call", type=int, default=None, metavar="K",
                   help="run at most K sweep chunks in this call (pieces of a sweep plan)")
    p.add_argument("--probes", default=None, metavar="LIST",
                   help="comma-separated globs over probe names ('nan/*', 'ftz-*', ...); "
                        "'all' (default) or 'none'")
    p.add_argument("--out", metavar="PATH", help="write the Markdown report here")
    p.add_argument("--json", metavar="PATH", help="write the full results as JSON here")
    p.add_argument("--examples", type=int, default=EXAMPLES, metavar="K",
                   help=f"mismatching vectors kept per form (default {EXAMPLES})")
    p.add_argument("--backend", choices=("auto", "cupy", "cuda-python", "model", "interp"),
                   default="auto", help="'model' is a dry run without a GPU (ptxfp plays it); "
                                        "'interp' runs the kernels in ptxfp's PTX interpreter")
    p.add_argument("--device", type=int, default=0, help="GPU index (default 0)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="processes verifying forms in parallel (default: CPUs / 2, at most 8)")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="finish within SECONDS of the process's start, report included: work "
                        "not done by then is reported as incomplete")
    p.add_argument("--preflight", action="store_true",
                   help="print the GPU, driver, CUDA and library versions and whether each "
                        "backend loads and runs one kernel, then exit (2 when none can)")
    p.add_argument("--list", action="store_true",
                   help="list the forms and how the GPU (--sm) runs them, then exit")
    p.add_argument("--emit-ptx", metavar="DIR",
                   help="write every selected kernel's PTX into DIR, then exit (no GPU needed)")
    p.add_argument("--sm", type=int, default=None,
                   help=f"architecture for --list/--emit-ptx (default: the GPU's, else "
                        f"{DEFAULT_SM})")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    g = p.add_argument_group(
        "recording", "keep the GPU's answers (no model runs) and hold ptxfp to them later")
    g.add_argument("--record", metavar="DIR",
                   help="write the GPU's answers for every selected form it runs natively, "
                        "and for the .approx forms its target accepts, into DIR "
                        "(gpu_<family>.npz), then exit")
    g.add_argument("--grid-cap", type=int, default=None, metavar="N",
                   help=f"--record: special-grid vectors kept per form (sampled; default "
                        f"{record_mod.GRID_CAP:,} or fewer to fit --max-mb)")
    g.add_argument("--approx-f32", type=int, default=None, metavar="N",
                   help="--record: inputs per .f32 .approx form (default 16,384 or fewer to "
                        "fit --max-mb; the 16-bit ones get all 2^16)")
    g.add_argument("--no-approx", action="store_true",
                   help="--record: leave the .approx forms out")
    g.add_argument("--no-mma", action="store_true",
                   help="--record: leave the matrix forms (gpu_mma.npz) out")
    g.add_argument("--max-mb", type=float, default=record_mod.MAX_BYTES / 1e6, metavar="MB",
                   help=f"--record: refuse a run whose files could exceed MB megabytes "
                        f"(default {record_mod.MAX_BYTES / 1e6:.0f})")
    g.add_argument("--replay", metavar="DIR",
                   help="compare ptxfp (the policy in force) with the answers recorded in DIR "
                        "(--forms selects), no GPU needed; exit 0 when every one agrees, 1 "
                        "when one differs")
    return p


def _split(text):
    return [t.strip() for t in text.split(",") if t.strip()]


def select_forms(text):
    """The canonical spellings a --forms value names (spellings or globs), in table order.
    ``all`` is the elementwise table; ``sfu`` every SFU form (``.approx``, ``div.full``),
    which globs reach too (``'*.approx.f32'``)."""
    if text.strip().lower() == "none":
        return []
    table = all_spellings()
    if text.strip().lower() in ("all", "*"):
        return list(table)
    sfu = sfu_spellings()
    if text.strip().lower() == "sfu":
        return list(sfu)
    table = list(table) + [s for s in sfu if s not in table]
    out = []
    for item in _split(text):
        if any(ch in item for ch in "*?["):
            hits = [s for s in table if fnmatch.fnmatchcase(s, item)]
            if not hits:
                raise UsageError(f"--forms: '{item}' matches no form (see --list)")
        else:
            try:
                hits = [str(parse(item))]
            except PtxfpError as exc:
                raise UsageError(f"--forms: {exc}") from None
        out += [h for h in hits if h not in out]
    return out


def select_probes(text, forms):
    if text.strip().lower() == "none":
        return []
    built = probes(forms or None)
    if text.strip().lower() not in ("all", "*"):
        pats = _split(text)
        built = [p for p in built if any(fnmatch.fnmatchcase(p.name, x) for x in pats)]
        if not built:
            raise UsageError(f"--probes: '{text}' matches no probe")
    return informative(built)


def _c_values(text):
    if text is None:
        return None
    try:
        return tuple(int(t, 0) for t in _split(text))
    except ValueError:
        raise UsageError(f"--exhaustive-c: expected bit patterns like 0x8000, got '{text}'") \
            from None


# ---- where the code comes from ----------------------------------------------------------------


def _say(opts, text):
    if not opts.get("quiet"):
        print(text, flush=True)


def _form_line(r):
    status = f"error: {r['error']}" if r["error"] else (
        "ok" if not r["mismatches"] else f"{r['mismatches']:,} MISMATCHES")
    cut = "" if r["complete"] else " (incomplete)"
    judged = judged_under(r.get("sources"))
    return (f"  {r['spelling']:<34} {r['mode']:<10} {r['kind']:<10} {r['vectors']:>14,} vectors"
            f"  {status}{cut}  ({r['seconds']:.1f} s)" + (f"  [{judged}]" if judged else ""))


# ---- the tasks ---------------------------------------------------------------------------------


def not_reached(kind, spelling, why="not reached: time budget spent"):
    """The result of a form or sweep that did not run."""
    r = FormResult(spelling, kind="exhaustive" if kind == "sweep" else "vectors")
    r.complete = False
    r.error = why
    return r.to_dict()


def _vector_task(runner, spelling, opts):
    return verify_form(runner, spelling, opts["vectors"], opts["seed"], opts["examples"],
                       deadline=opts["deadline"], n_targeted=opts["targeted"]).to_dict()


_WORKER = {}


def _worker_init(cache_base, threads, backend, device, sm=None):
    # A private Numba cache per process: Numba's cache index is not safe against several
    # processes adding entries at once.
    d = tempfile.mkdtemp(prefix="numba-", dir=cache_base)
    os.environ["NUMBA_CACHE_DIR"] = d
    os.environ["PTXFP_NUM_THREADS"] = str(threads)
    import numba
    numba.config.CACHE_DIR = d
    _WORKER.update(backend=backend, device=device, sm=sm, runner=None)


def _worker_task(spelling, opts):
    if opts["deadline"] is not None and time.time() > opts["deadline"]:
        return not_reached("vectors", spelling)
    try:
        if _WORKER.get("runner") is None:
            _WORKER["runner"] = get_runner(_WORKER["backend"], _WORKER["device"],
                                           sm=_WORKER["sm"])
    except Exception as exc:               # HardwareUnavailable in this worker: this form only
        return not_reached("vectors", spelling, could_not_run(exc))
    return _vector_task(_WORKER["runner"], spelling, opts)


class Run:
    """One run: its tasks, what has finished, and the report written after each of them."""

    def __init__(self, runner, forms, probe_list, opts, command="", md=None, js=None,
                 t0=None):
        self.runner, self.opts, self.command = runner, opts, command
        self.md, self.js = md, js
        self.t0 = process_start() if t0 is None else t0
        self.forms = {s: None for s in (() if opts.get("exhaustive_only") else forms)}
        self.sweep_forms = [s for s in forms if exhaustive_eligible(s)] \
            if (opts.get("exhaustive") or opts.get("exhaustive_only")) else []
        self.sweeps = {s: None for s in self.sweep_forms}
        self.probe_list = list(probe_list)
        self.probes = {p.name: None for p in self.probe_list}
        self.interrupted = None
        self.state = None                  #: the --resume file (resume.SweepState)
        self.final = False
        self.dev = None
        self._last_write = 0.0
        self._answers = (None, [])
        self._dicts = {}
        self._provenance = {"ptxfp": _version(), "git": _git_revision(),
                            "source": source_checksum()}

    # -- the dict the report and the JSON are made of

    def result(self):
        opts = self.opts
        why = ("not reached: " + (self.interrupted or "time budget spent")) if self.final \
            else "not reached (yet)"
        forms = [r if r is not None else not_reached("vectors", s, why)
                 for s, r in self.forms.items()]
        sweeps = [r if r is not None else not_reached("sweep", s, why)
                  for s, r in self.sweeps.items()]
        probe_results = [r for r in self.probes.values() if r is not None]
        pending = [n for n, r in self.probes.items() if r is None]
        native = [r for r in probe_results if r.mode != "decomposed" and not r.defect]
        defect_probes = [r for r in probe_results if r.mode != "decomposed" and r.defect]
        decomposed = [r for r in probe_results if r.mode == "decomposed"]
        if self._answers[0] != len(probe_results):        # cached: probes only get added
            self._answers = (len(probe_results), policy_answers(probe_results))
        answers = self._answers[1]
        dev = self.dev or {}

        incomplete = []
        for r in forms:
            if r["error"] or not r["complete"]:
                incomplete.append({"item": f"form {r['spelling']}",
                                   "why": r["error"] or r.get("cut") or "cut short"})
        for r in sweeps:
            if r["error"] or not r["complete"]:
                incomplete.append({"item": f"sweep {r['spelling']}",
                                   "why": r["error"] or r.get("cut") or "cut short"})
        for r in probe_results:
            if r.error:
                incomplete.append({"item": f"probe {r.name}", "why": r.error})
        for n in pending:
            incomplete.append({"item": f"probe {n}", "why": why})
        mism = sum(r["mismatches"] for r in forms)
        sweep_mism = sum(r["mismatches"] for r in sweeps)
        disagree = [r.name for r in native if r.agrees is False and not r.error]
        contradicted = [a["field"] for a in answers if a["contradicting"]]
        differs = bool(mism or sweep_mism or disagree or contradicted)
        if differs:
            verdict = "differs"
            text = "ptxfp and the GPU differ"
            if incomplete:
                text += f" (and {len(incomplete)} item(s) incomplete)"
        elif incomplete or not self.final:
            verdict = "incomplete"
            text = (f"incomplete: {len(incomplete)} item(s) not checked to the end; "
                    "no claim of agreement")
        else:
            verdict = "agrees"
            text = "ptxfp agrees with the GPU on everything this run selected"
        if not self.final:
            text += " (PARTIAL: the run had not finished when this was written)"
        if not self.runner.hardware:
            text = "dry run (no hardware): " + text
        sets = {}
        for r in forms:
            for name, k in r.get("sets", {}).items():
                sets.setdefault(name, {"vectors": 0, "forms": 0})
                sets[name]["vectors"] += k
                sets[name]["forms"] += 1
        done_items = (sum(r is not None for r in self.forms.values())
                      + sum(r is not None for r in self.sweeps.values()) + len(probe_results))
        total = len(self.forms) + len(self.sweeps) + len(self.probes)
        return {
            "meta": {**dev, "hardware": self.runner.hardware,
                     "date": datetime.datetime.now(datetime.timezone.utc)
                     .strftime("%Y-%m-%d %H:%M UTC"),
                     **self._provenance, "command": self.command, "vectors": opts["vectors"],
                     "targeted": opts["targeted"], "families": list(package_vectors.families()),
                     "seed": opts["seed"], "exhaustive": bool(self.sweep_forms),
                     "budget_s": opts.get("budget"), "chunk": opts.get("chunk"),
                     "resume": opts.get("resume"),
                     "policy": {**{f: getattr(policy.current(), f) for f in POLICY_FIELDS},
                                "per_form": [list(e) for e in policy.current().per_form]},
                     "elapsed_s": time.time() - self.t0,
                     "partial": not self.final, "interrupted": self.interrupted,
                     "progress": f"{done_items} of {total} items done"},
            "summary": {
                "forms": len(forms),
                "decomposed": sum(1 for r in forms if r["mode"] == "decomposed"),
                "vectors": sum(r["vectors"] for r in forms), "mismatches": mism,
                "forms_with_mismatches": sum(1 for r in forms if r["mismatches"]),
                "errors": sum(1 for r in forms if r["error"]),
                "sets": sets,
                "exhaustive_vectors": sum(r["vectors"] for r in sweeps),
                "exhaustive_mismatches": sweep_mism,
                "exhaustive_complete": all(r["complete"] and not r["error"] for r in sweeps),
                "probes": sum(1 for r in native if not r.error),
                "probes_disagree": len(disagree),
                "probe_errors": sum(1 for r in probe_results if r.error),
                "decomposed_probes": len(decomposed),
                "defect_probes": len(defect_probes),
                "defect_forms": [r["spelling"] for r in forms if toolchain_defect(r["spelling"])],
                "suggested_policy": suggested_policy(answers),
                "decomposed_probes_disagree": sum(1 for r in decomposed
                                                  if r.agrees is False and not r.error),
                "contradicted": contradicted,
                "incomplete": incomplete,
                "agrees": verdict == "agrees", "verdict_kind": verdict, "verdict": text,
                "exit_status": VERDICTS[verdict],
            },
            "forms": forms, "exhaustive": sweeps,
            "probes": [self._probe_dict(r) for r in native],
            "decomposed_probes": [self._probe_dict(r) for r in decomposed],
            "defect_probes": [self._probe_dict(r) for r in defect_probes],
            "policies": answers,
        }

    def _probe_dict(self, r):
        d = self._dicts.get(r.name)
        if d is None or d[0] is not r:
            d = self._dicts[r.name] = (r, r.to_dict())
        return d[1]

    def checkpoint(self, every=0.0):
        """Rewrite the report (atomically) with what has finished; at most every ``every``
        seconds."""
        now = time.monotonic()
        if (self.md or self.js) and now - self._last_write >= every:
            self._last_write = now
            try:
                report.write(self.result(), self.md, self.js)
            except (OSError, PtxfpError) as exc:   # a full disk must not end the run
                # (ptxfp.outputs says it as an OutputError naming the file)
                print(f"ptxfp.hw: could not write the report: {exc}", file=sys.stderr,
                      flush=True)

    # -- running

    def _past(self):
        d = self.opts["deadline"]
        return d is not None and time.time() > d

    def run(self, jobs=1, backend="auto", device=0):
        try:
            self.dev = self.runner.device()
        except Exception as exc:
            self.dev = {"gpu": f"unknown ({could_not_run(exc)})", "sm": None,
                        "backend": backend}
        dev = self.dev
        _say(self.opts, f"ptxfp.hw: {dev.get('gpu')} (sm_{dev.get('sm')}), "
                        f"{dev.get('backend')}; {len(self.forms)} forms, "
                        f"{len(self.sweeps)} sweeps, {len(self.probes)} probes")
        self.checkpoint()
        pool = None
        try:
            futures = {}
            forms = list(self.forms)
            if jobs > 1 and len(forms) > 1 and not self._past():
                pool, futures = self._start_pool(forms, jobs, backend, device)
            else:
                self._serial_forms(forms)          # before the probes: the pool's case differs
            self._run_probes()                     # while the pool (if any) verifies forms
            if futures:
                self._collect(pool, futures)
            self._run_sweeps()
        except (KeyboardInterrupt, SystemExit) as exc:
            self.interrupted = ("interrupted" if isinstance(exc, KeyboardInterrupt)
                                else f"stopped (exit {exc.code})")
        finally:
            if pool is not None:
                _stop_pool(pool)
            self.final = True
            self._last_write = float("-inf")
            self.checkpoint()                  # the final report (an OSError is printed)
        return self.result()

    def _serial_forms(self, forms):
        for s in forms:
            if self._past():
                self.forms[s] = not_reached("vectors", s)
                continue
            r = _vector_task(self.runner, s, self.opts)
            _say(self.opts, _form_line(r))
            self.forms[s] = r
            self.checkpoint()

    def _start_pool(self, forms, jobs, backend, device):
        import concurrent.futures as cf
        import multiprocessing as mp
        jobs = min(jobs, len(forms))
        threads = worker_threads(_cpus(), jobs, len(forms))
        self._cache = tempfile.TemporaryDirectory(prefix="ptxfp-hw-numba-")
        pool = cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                                      initializer=_worker_init,
                                      initargs=(self._cache.name, threads, backend, device,
                                                # a dry run's GPU (--sm) in every worker too
                                                None if self.runner.hardware else
                                                self.runner.sm))
        futures = {pool.submit(_worker_task, s, self.opts): s for s in forms}
        return pool, futures

    def _collect(self, pool, futures):
        import concurrent.futures as cf
        end = self.opts.get("end")
        pending = set(futures)
        stop = None if end is None else end - self.opts["reserve"]
        while pending:
            timeout = None if stop is None else max(0.0, stop - time.time())
            done, pending = cf.wait(pending, timeout=timeout, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                s = futures[fut]
                try:
                    r = fut.result()
                except Exception as exc:
                    r = not_reached("vectors", s, could_not_run(exc))
                _say(self.opts, _form_line(r))
                self.forms[s] = r
            past = stop is not None and time.time() >= stop
            self.checkpoint(every=0.0 if not past else float("inf"))
            if pending and past:               # the budget's end: what still runs is cut
                for fut in pending:
                    s = futures[fut]
                    self.forms[s] = not_reached(
                        "vectors", s, "cut short: still running when the time budget ended")
                break

    def _run_probes(self):
        for p in self.probe_list:
            if self._past():
                self.probes[p.name] = not_run(p, "not reached: time budget spent")
                continue
            r = run_probe(self.runner, p)
            self.probes[p.name] = r
            if r.agrees is False or r.error:
                _say(self.opts, f"  probe {r.name} ({r.mode or '?'}): {r.verdict}"
                     + (" (ptxfp now disagrees)" if r.agrees is False else ""))
            self.checkpoint(every=5.0)
        self.checkpoint()

    def _run_sweeps(self):
        opts = self.opts
        state = self.state
        if state is None and opts.get("resume") and self.sweeps:
            state = resume_state(opts["resume"], self.runner, opts["chunk"])
        left = opts.get("chunks_per_call")
        for s in self.sweeps:
            # called even past the budget: with --resume it counts the earlier calls' chunks
            r = sweep_form(self.runner, s, opts["exhaustive_c"], chunk=opts["chunk"],
                           limit=opts["examples"], deadline=opts["deadline"],
                           progress=lambda *a: self.checkpoint(every=30.0), state=state,
                           threads=_cpus(), max_chunks=left).to_dict()
            if left is not None:
                left = max(0, left - r["chunks"])
            _say(opts, _form_line(r))
            self.sweeps[s] = r
            self.checkpoint()


def resume_state(path, runner, chunk):
    """The --resume file for this GPU (or dry-run backend) and this chunk size, its new chunks
    recorded under this code's source; a ResumeError (one line) when the file was written for
    other hardware or another chunk size."""
    dev = runner.device()
    return SweepState(path, {"source": source_checksum(), "hardware": runner.hardware,
                             "gpu": dev.get("gpu"), "backend": dev.get("backend"),
                             "chunk": chunk})


def worker_threads(cpus, jobs, tasks):
    """Threads per worker process: the cores divided among the processes that will run (never
    more than there are tasks), so that a few forms on many cores still use them all."""
    return max(1, cpus // max(1, min(jobs, tasks)))


def _stop_pool(pool):
    """Shut the pool down at once: cancel what has not started and end the worker processes
    this run started (by their handles), so that the report is not held up by a task that
    overran the budget."""
    procs = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(5)


def run(runner, forms, probe_list, opts, jobs=1, backend="auto", device=0, command="",
        md=None, js=None, t0=None):
    """Verify ``forms``, run ``probe_list``, sweep if asked; the run as a dict (written to
    ``md``/``js`` after every item and at the end)."""
    opts = _with_defaults(opts, t0)
    return Run(runner, forms, probe_list, opts, command, md, js, t0).run(jobs, backend, device)


def _with_defaults(opts, t0=None):
    opts = dict(opts)
    opts.setdefault("targeted", 0)
    opts.setdefault("chunk", CHUNK)
    opts.setdefault("examples", EXAMPLES)
    opts.setdefault("exhaustive_c", None)
    opts.setdefault("seed", 0)
    if "deadline" not in opts:
        opts["deadline"] = None
    opts.setdefault("end", None)
    opts.setdefault("reserve", 0.0)
    return opts


def deadlines(budget, t0):
    """(end, deadline, reserve): the budget's end counted from ``t0`` (the process start), the
    time after which no new work starts, and the reserve between them for the work that is
    running to finish and the report to be written."""
    if budget is None:
        return None, None, 0.0
    reserve = min(20.0, max(1.0, 0.05 * budget))
    end = t0 + budget
    return end, end - reserve, reserve / 2


# ---- --preflight --------------------------------------------------------------------------------


def _module_version(name, dist=None):
    try:
        import importlib
        mod = importlib.import_module(name)
        v = getattr(mod, "__version__", None)
        if v is None and dist:
            from importlib import metadata
            v = metadata.version(dist)
        return str(v or "?"), None
    except Exception as exc:
        return None, could_not_run(exc).replace("could not run: ", "")


#: add.rn.f16 on three vectors, with the IEEE 754 results: 1 + 1 = 2, 1 + -1 = +0,
#: 65504 + 65504 overflows to +inf under round to nearest
PREFLIGHT_VECTORS = ((0x3C00, 0x3C00, 0x4000), (0x3C00, 0xBC00, 0x0000),
                     (0x7BFF, 0x7BFF, 0x7C00))


def _preflight_backend(backend, device):
    import numpy as np
    t = time.monotonic()
    runner = None
    try:
        runner = get_runner(backend, device)
        dev = runner.device()
        k = kernel_for("add.rn.f16", dev["sm"])
        a, b, want = (np.array(col, np.uint16) for col in zip(*PREFLIGHT_VECTORS))
        got = runner.run(k, {"a": a, "b": b})
        ok = np.array_equal(got, want)
        text = (f"{dev['gpu']} (sm_{dev['sm']}), driver {dev.get('driver') or '?'}, CUDA "
                f"{dev.get('cuda_driver_api') or '?'}, {dev.get('backend')}: "
                + ("loads and runs one kernel, its bits right" if ok else
                   f"runs one kernel but returns {[hex(int(x)) for x in got]} for "
                   f"{[hex(int(x)) for x in want]}"))
        return ok, f"{text} ({time.monotonic() - t:.1f} s)"
    except Exception as exc:
        return False, f"unavailable: {could_not_run(exc).replace('could not run: ', '')} " \
                      f"({time.monotonic() - t:.1f} s)"
    finally:
        if runner is not None:
            runner.close()


def preflight(backend="auto", device=0, name="python -m ptxfp.hw"):
    """Print what a run would use and whether it works; exit status 0, or 2 with one line on
    stderr saying what is missing."""
    import platform
    t0 = time.monotonic()
    print(f"ptxfp {_version()} (git {_git_revision() or 'none'}; source sha256 "
          f"{source_checksum()})")
    print(f"Python {platform.python_version()} ({sys.executable})")
    missing = []
    for mod, dist in (("numpy", None), ("numba", None), ("cupy", None),
                      ("cuda.bindings", "cuda-bindings")):
        v, err = _module_version(mod, dist)
        print(f"{mod}: {v}" if v else f"{mod}: not importable ({err})")
        if v is None and mod in ("numpy", "numba"):
            missing.append(mod)
    t = time.monotonic()
    try:
        from ..ops.arith import execute
        got = [execute("add.rn.f16", a, b) for a, b, _ in PREFLIGHT_VECTORS]
        ok = got == [w for _, _, w in PREFLIGHT_VECTORS]
        print(f"ptxfp's model: {'computes' if ok else 'WRONG on'} add.rn.f16 "
              f"({time.monotonic() - t:.1f} s, compilation included)")
        if not ok:
            missing.append("a working ptxfp model")
    except Exception as exc:
        print(f"ptxfp's model: {could_not_run(exc)}")
        missing.append("a working ptxfp model")
    names = ("cupy", "cuda-python") if backend == "auto" else (backend,)
    working = []
    for b in names:
        ok, text = _preflight_backend(b, device)
        print(f"backend {b}: {text}")
        if ok:
            working.append(b)
    print(f"preflight took {time.monotonic() - t0:.1f} s")
    if not working:
        missing.append("a backend that runs a kernel (" + ", ".join(names) + ")")
    if missing:
        print(f"{name}: preflight: missing {'; '.join(missing)}", file=sys.stderr)
        return EXIT_UNUSABLE
    print(f"preflight ok: {', '.join(working)} can run the harness")
    return 0


def _list(forms, sm):
    for s in forms:
        k = kernel_for(s, sm)
        ins = parse(s)
        sweep = "exhaustive-ok" if exhaustive_eligible(ins) else ""
        print(f"{s:<34} {k.mode:<10} .target {k.target:<7} .version {k.version_str:<4} "
              f"needs {ins.min_target}  {sweep}")


def _emit(forms, sm, directory):
    from ..outputs import output_dir, write_text
    output_dir(directory, "--emit-ptx")
    for s in forms:
        k = kernel_for(s, sm)
        write_text(os.path.join(directory, f"{s}.ptx"), k.ptx, what="--emit-ptx")
    print(f"wrote {len(forms)} kernels to {directory}")


def _check_counts(args):
    """Every count from the command line, checked before anything is allocated or started."""
    from ..vectors import MAX_N, check_count
    if not args.record:
        args.vectors = DEFAULT_VECTORS if args.vectors is None else args.vectors
        args.targeted = TARGETED if args.targeted is None else args.targeted
    check_count(args.vectors or 0, "--vectors", MAX_VECTORS)
    check_count(args.targeted or 0, "--targeted", MAX_N)
    for opt, v in (("--grid-cap", args.grid_cap), ("--approx-f32", args.approx_f32)):
        if v is not None:
            check_count(v, opt, MAX_N)
    if not args.max_mb > 0:
        raise UsageError("--max-mb takes a number of megabytes > 0")
    if args.record and args.replay:
        raise UsageError("--record and --replay: one at a time")
    check_count(args.examples, "--examples", MAX_EXAMPLES)
    if args.jobs is not None and not 1 <= args.jobs <= 256:
        raise UsageError("--jobs takes a count from 1 to 256")
    if args.chunk < (1 << 16) or args.chunk > (1 << 30) or args.chunk & (args.chunk - 1):
        raise UsageError("--chunk takes a power of two from 65536 (2^16) to 2^30")
    if args.chunks_per_call is not None:
        check_count(args.chunks_per_call, "--chunks-per-call", 1 << 30)
    if args.budget is not None and not args.budget > 0:
        raise UsageError("--budget takes a number of seconds > 0")


def _record(args, argv, forms, name):
    """--record DIR: the GPU's answers into DIR; 0 when every form ran, 3 when some could not
    (named), 2 (one line) when nothing can be written."""
    runner = get_runner(args.backend, args.device, sm=args.sm)
    try:
        meta = record_mod.record(
            runner, args.record, forms, command=" ".join([name] + argv),
            grid_cap=args.grid_cap, targeted=args.targeted, random=args.vectors or 0,
            f32_sample=args.approx_f32,
            # the .approx forms are not in the tables --forms selects from: all or none
            with_approx=not args.no_approx and args.forms.strip().lower() in ("all", "*"),
            max_bytes=int(args.max_mb * 1e6),
            # the matrix forms, like the .approx ones: with --forms all only
            with_mma=not args.no_mma and args.forms.strip().lower() in ("all", "*"),
            say=(lambda *a: None) if args.quiet else print)
    finally:
        runner.close()
    for s, why in list(meta["not_run"].items())[:20]:
        print(f"  not recorded: {s}: {why}")
    return EXIT_INCOMPLETE if meta["not_run"] else 0


class _Progress:
    """Progress of a replay on stderr: a line at the start, then at most one every `every`
    seconds (the first replay compiles each form's kernels, minutes of otherwise silence)."""

    def __init__(self, name, every=5.0):
        import time
        self.name, self.every, self.clock = name, every, time.monotonic
        self.t0 = self.last = self.clock()

    def __call__(self, done, total, spelling):
        now = self.clock()
        if done == 0:
            print(f"{self.name}: replaying {total} recorded forms (the first replay compiles "
                  "their kernels: a few minutes; later ones reuse the cache)", file=sys.stderr,
                  flush=True)
        elif now - self.last >= self.every:
            print(f"{self.name}: {done}/{total} forms, {now - self.t0:.0f} s ({spelling})",
                  file=sys.stderr, flush=True)
            self.last = now


def _replay(directory, forms, name, quiet=False):
    """--replay DIR: ptxfp against recorded answers; 0 agrees, 1 differs."""
    results = record_mod.replay(directory, forms,
                                progress=None if quiet else _Progress(name))
    compared = [r for r in results if not r.note]
    bad = [r for r in compared if r.mismatches]
    for r in bad:
        ex = r.examples[0]
        print(f"  {r.spelling}: {r.mismatches:,} of {r.vectors:,} differ, e.g. "
              + " ".join(f"{k}={v}" for k, v in ex.items()))
    skipped = {}
    for r in results:
        if r.note:
            skipped[r.note] = skipped.get(r.note, 0) + 1
    print(f"{name}: replay {directory}: {len(compared)} forms, "
          f"{sum(r.vectors for r in compared):,} vectors, "
          f"{sum(r.mismatches for r in compared):,} mismatches in {len(bad)} form(s)"
          + "".join(f"; {n} {why}" for why, n in skipped.items()))
    return EXIT_DIFFERS if bad else EXIT_AGREES


def _on_sigterm(signum, frame):
    raise SystemExit(128 + signum)        # unwinds through Run.run, which writes the report


def main(argv=None, prog=None):
    """The command line; returns the exit status (0 agrees, 1 differs, 2 cannot run,
    3 incomplete)."""
    t0 = process_start()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:           # argparse has printed its one-line usage error
        return 0 if exc.code == 0 else 2
    name = parser.prog
    try:
        _check_counts(args)
        if args.preflight:
            return preflight(args.backend, args.device, name)
        forms = select_forms(args.forms)
        if args.replay:
            return _replay(args.replay, forms if args.forms != "all" else None, name,
                           quiet=args.quiet)
        if args.record:
            return _record(args, argv, forms, name)
        if args.list or args.emit_ptx:
            sm = args.sm or DEFAULT_SM
            if args.list:
                _list(forms, sm)
            if args.emit_ptx:
                _emit(forms, sm, args.emit_ptx)
            return 0
        # the options that are quick to check first: building every probe takes a minute
        c_values = _c_values(args.exhaustive_c)
        for opt, path in (("--out", args.out), ("--json", args.json)):
            d = os.path.dirname(os.path.abspath(path)) if path else None
            if d and not (os.path.isdir(d) and os.access(d, os.W_OK)):
                raise UsageError(f"{opt} {path}: no writable directory {d}")
        if args.resume and not (args.exhaustive or args.exhaustive_only):
            raise UsageError("--resume records exhaustive sweeps: add --exhaustive")
        probes_text = args.probes or ("none" if args.exhaustive_only else "all")
        probe_list = select_probes(probes_text, forms)
        if args.exhaustive_only and not any(exhaustive_eligible(s) for s in forms) \
                and not probe_list:
            raise UsageError("--exhaustive-only: none of the selected forms can be swept")
        if not forms and not probe_list:
            raise UsageError("nothing to run (--forms none and --probes none)")
        runner = get_runner(args.backend, args.device, sm=args.sm)
    except (PtxfpError, HardwareUnavailable) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    jobs = args.jobs or max(1, min(8, _cpus() // 2))
    end, deadline, reserve = deadlines(args.budget, t0)
    opts = {"vectors": args.vectors, "targeted": args.targeted, "seed": args.seed,
            "examples": args.examples, "exhaustive": args.exhaustive or args.exhaustive_only,
            "exhaustive_only": args.exhaustive_only, "exhaustive_c": c_values,
            "quiet": args.quiet, "chunk": args.chunk, "chunks_per_call": args.chunks_per_call,
            "resume": args.resume, "budget": args.budget, "deadline": deadline, "end": end,
            "reserve": reserve}
    command = " ".join([name] + argv)
    old = None
    try:
        old = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:                     # not the main thread: no handler
        pass
    try:
        the_run = Run(runner, forms, probe_list, opts, command, args.out, args.json, t0)
        if args.resume and the_run.sweeps:
            the_run.state = resume_state(args.resume, runner, args.chunk)
        result = the_run.run(jobs, args.backend, args.device)
    except PtxfpError as exc:              # a --resume file of another run
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    finally:
        runner.close()
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    s = result["summary"]
    print(f"{name}: {s['verdict']}: {s['forms']} forms, {s['vectors']:,} vectors, "
          f"{s['mismatches']:,} mismatches; {s['probes']} probes, {s['probes_disagree']} "
          f"disagree" + (f" ({s['decomposed_probes']} decomposed probes reported apart)"
                         if s["decomposed_probes"] else "")
          + (f"; exhaustive {s['exhaustive_vectors']:,} vectors, "
             f"{s['exhaustive_mismatches']:,} mismatches" if result["exhaustive"] else "")
          + (f"; report: {args.out}" if args.out else ""))
    for item in s["incomplete"][:20]:
        print(f"  incomplete: {item['item']}: {item['why']}")
    if len(s["incomplete"]) > 20:
        print(f"  ... and {len(s['incomplete']) - 20} more (see the report)")
    for p in result["policies"]:
        if p["status"] != "not probed":
            print(f"  {p['field']}: ptxfp {p['current']}, measured {p['measured'] or 'by form'}"
                  f" ({p['status']})")
    if s.get("suggested_policy"):
        print(f"  what the GPU measured, as a policy: {s['suggested_policy']}")
    if s.get("defect_probes") or s.get("defect_forms"):
        print(f"  toolchain defects: {len(s['defect_forms'])} form(s), {s['defect_probes']} "
              "probe(s) of them reported apart (see docs/ptxas-findings.md)")
    return s["exit_status"]
