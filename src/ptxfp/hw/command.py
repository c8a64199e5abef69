"""``python -m ptxfp.hw`` (and ``ptxfp verify``): verify ptxfp against a GPU, settle the policies.

``main(argv)`` parses the options, runs, writes the report and returns the exit status:
0 everything agrees, 1 something differs (or could not run), 2 a user error (no GPU, no CuPy,
a bad option), printed as one line.
"""

import argparse
import datetime
import fnmatch
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from .. import policy
from ..errors import PtxfpError
from .forms import all_spellings, parse_form as parse
from . import probes as P
from . import report
from . import vectors as V
from .kernels import DEFAULT_SM, kernel_for
from .runner import HardwareUnavailable, get_runner
from .verify import EXAMPLES, sweep_form, verify_form

DEFAULT_VECTORS = 1_000_000
#: vectors taken from tests/vectors.py per form, when the repository is there
TEST_VECTORS = 20_000


class UsageError(Exception):
    """A bad option: one line for the user, exit status 2."""


def _parser(prog):
    p = argparse.ArgumentParser(
        prog=prog or "python -m ptxfp.hw",
        description="Verify ptxfp bit for bit against an NVIDIA GPU, and measure the open "
                    "policies (docs/conformance.md).")
    p.add_argument("--forms", default="all", metavar="LIST",
                   help="comma-separated spellings or globs over the canonical spellings "
                        "of the arithmetic and cvt tables (e.g. 'fma.*.bf16*,add.rn.f16,cvt.*'); "
                        "'all' (default) or 'none'")
    p.add_argument("--vectors", type=int, default=DEFAULT_VECTORS, metavar="N",
                   help=f"random vectors per form, besides the targeted ones "
                        f"(default {DEFAULT_VECTORS:,})")
    p.add_argument("--test-vectors", type=int, default=TEST_VECTORS, metavar="N",
                   help="vectors per form from tests/vectors.py when the repository is there "
                        f"(default {TEST_VECTORS:,}; 0 to skip)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--exhaustive", action="store_true",
                   help="also sweep all 2^32 (a, b) pairs of every selected 16-bit binary form "
                        "(fma: per fixed c)")
    p.add_argument("--exhaustive-c", default=None, metavar="LIST",
                   help="fixed c values (hex bits) for exhaustive fma sweeps "
                        "(default -0 and 1.0 of the c format)")
    p.add_argument("--probes", default="all", metavar="LIST",
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
                   help="stop starting new work after this long, and report what ran")
    p.add_argument("--list", action="store_true",
                   help="list the forms and how the GPU (--sm) runs them, then exit")
    p.add_argument("--emit-ptx", metavar="DIR",
                   help="write every selected kernel's PTX into DIR, then exit (no GPU needed)")
    p.add_argument("--sm", type=int, default=None,
                   help=f"architecture for --list/--emit-ptx (default: the GPU's, else "
                        f"{DEFAULT_SM})")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def _split(text):
    return [t.strip() for t in text.split(",") if t.strip()]


def select_forms(text):
    """The canonical spellings a --forms value names (spellings or globs), in table order."""
    if text.strip().lower() == "none":
        return []
    table = all_spellings()
    if text.strip().lower() in ("all", "*"):
        return list(table)
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
    built = P.probes(forms or None)
    if text.strip().lower() not in ("all", "*"):
        pats = _split(text)
        built = [p for p in built if any(fnmatch.fnmatchcase(p.name, x) for x in pats)]
        if not built:
            raise UsageError(f"--probes: '{text}' matches no probe")
    return P.informative(built)


def _c_values(text):
    if text is None:
        return None
    try:
        return tuple(int(t, 0) for t in _split(text))
    except ValueError:
        raise UsageError(f"--exhaustive-c: expected bit patterns like 0x8000, got '{text}'") \
            from None


# ---- tests/vectors.py, when the repository is there --------------------------------------------

_test_vectors_module = False


def _tests_vectors():
    """tests/vectors.py of the repository checkout, or None."""
    global _test_vectors_module
    if _test_vectors_module is not False:
        return _test_vectors_module
    mod = None
    tests = pathlib.Path(__file__).resolve().parents[3] / "tests"
    if (tests / "vectors.py").is_file():
        sys.path.insert(0, str(tests))
        try:
            spec = importlib.util.spec_from_file_location("ptxfp_hw_tests_vectors",
                                                          tests / "vectors.py")
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            if not hasattr(mod, "for_instruction"):
                mod = None
        except Exception:
            mod = None
        finally:
            sys.path.remove(str(tests))
    _test_vectors_module = mod
    return mod


def extra_sets(spelling, n):
    """[('tests/vectors.py', operands)] when that module is there and works, else []."""
    if n <= 0:
        return []
    mod = _tests_vectors()
    if mod is None:
        return []
    try:
        ins = parse(spelling)
        ops = tuple(mod.for_instruction(ins, n))
        if len(ops) != len(ins.operand_names):
            return []
        fixed = []
        for x, f in zip(ops, ins.operand_formats):
            dt = "uint16" if f in ("f16", "bf16") else "uint32"
            fixed.append(x.astype(dt))
        return [("tests/vectors.py", tuple(fixed))]
    except Exception:
        return []


# ---- the run -------------------------------------------------------------------------------------


def _git_revision():
    root = pathlib.Path(__file__).resolve().parents[3]
    try:
        r = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True, timeout=10)
        rev = r.stdout.strip() if r.returncode == 0 else None
        if rev:
            d = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no", "src"], capture_output=True, text=True,
                               timeout=10)
            if d.stdout.strip():
                rev += " + uncommitted changes in src/"
        return rev
    except (OSError, subprocess.SubprocessError):
        return None


def _say(opts, text):
    if not opts.get("quiet"):
        print(text, flush=True)


def _form_line(r):
    status = f"error: {r['error']}" if r["error"] else (
        "ok" if not r["mismatches"] else f"{r['mismatches']:,} MISMATCHES")
    cut = "" if r["complete"] else " (cut short)"
    return (f"  {r['spelling']:<34} {r['mode']:<10} {r['kind']:<10} {r['vectors']:>14,} vectors"
            f"  {status}{cut}  ({r['seconds']:.1f} s)")


def _task(runner, kind, spelling, opts):
    if kind == "vectors":
        r = verify_form(runner, spelling, opts["vectors"], opts["seed"], opts["examples"],
                        deadline=opts["deadline"],
                        extra_sets=extra_sets(spelling, opts["test_vectors"]))
    else:
        r = sweep_form(runner, spelling, opts["exhaustive_c"], limit=opts["examples"],
                       deadline=opts["deadline"])
    return r.to_dict()


_WORKER = {}


def _worker_init(cache_base, threads, backend, device):
    # A private Numba cache per process: Numba's cache index is not safe against several
    # processes adding entries at once.
    d = tempfile.mkdtemp(prefix="numba-", dir=cache_base)
    os.environ["NUMBA_CACHE_DIR"] = d
    os.environ["PTXFP_NUM_THREADS"] = str(threads)
    import numba
    numba.config.CACHE_DIR = d
    _WORKER.update(backend=backend, device=device, runner=None)


def _worker_task(kind, spelling, opts):
    if _WORKER.get("runner") is None:
        _WORKER["runner"] = get_runner(_WORKER["backend"], _WORKER["device"])
    return _task(_WORKER["runner"], kind, spelling, opts)


def _run_tasks(runner, tasks, opts, jobs, backend, device):
    results = {}
    if jobs <= 1 or len(tasks) <= 1:
        for kind, s in tasks:
            if opts["deadline"] is not None and time.time() > opts["deadline"]:
                results[(kind, s)] = _skipped(kind, s)
                continue
            r = _task(runner, kind, s, opts)
            _say(opts, _form_line(r))
            results[(kind, s)] = r
        return [results[t] for t in tasks]
    import concurrent.futures as cf
    import multiprocessing as mp
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = max(1, (cpus or 1) // jobs)
    with tempfile.TemporaryDirectory(prefix="ptxfp-hw-numba-") as base, \
            cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                                   initializer=_worker_init,
                                   initargs=(base, threads, backend, device)) as pool:
        futures = {pool.submit(_worker_task, kind, s, opts): (kind, s) for kind, s in tasks}
        for fut in cf.as_completed(futures):
            key = futures[fut]
            try:
                r = fut.result()
            except HardwareUnavailable:
                raise
            except Exception as exc:
                r = _skipped(*key)
                r["error"] = f"worker failed: {type(exc).__name__}: {exc}"
            _say(opts, _form_line(r))
            results[key] = r
    return [results[t] for t in tasks]


def _skipped(kind, s):
    from .verify import FormResult
    r = FormResult(s, kind="exhaustive" if kind == "sweep" else "vectors")
    r.complete = False
    r.error = "not run: time budget spent"
    return r.to_dict()


def run(runner, forms, probe_list, opts, jobs=1, backend="auto", device=0, command=""):
    """Verify ``forms``, sweep them if asked, run ``probe_list``; the run as a dict."""
    t0 = time.time()
    dev = runner.device()
    _say(opts, f"ptxfp.hw: {dev['gpu']} (sm_{dev['sm']}), {dev['backend']}; "
               f"{len(forms)} forms, {len(probe_list)} probes")
    tasks = [("vectors", s) for s in forms]
    if opts.get("exhaustive"):
        tasks += [("sweep", s) for s in forms if V.exhaustive_eligible(s)]
    done = _run_tasks(runner, tasks, opts, jobs, backend, device)
    form_results = [r for r in done if r["kind"] == "vectors"]
    sweeps = [r for r in done if r["kind"] == "exhaustive"]
    probe_results = []
    for p in probe_list:
        r = P.run_probe(runner, p)
        probe_results.append(r)
        if r.agrees is False or r.error:
            _say(opts, f"  probe {r.name}: {r.verdict}" + (" (ptxfp now disagrees)"
                                                          if r.agrees is False else ""))
    answers = P.policy_answers(probe_results)
    probes = [r.to_dict() for r in probe_results]
    mism = sum(r["mismatches"] for r in form_results)
    errors = sum(1 for r in form_results if r["error"])
    sweep_mism = sum(r["mismatches"] for r in sweeps)
    sweep_err = sum(1 for r in sweeps if r["error"])
    disagree = sum(1 for r in probe_results if r.agrees is False)
    probe_err = sum(1 for r in probe_results if r.error)
    agrees = not (mism or errors or sweep_mism or sweep_err or disagree or probe_err)
    verdict = "ptxfp agrees with the GPU" if agrees else "ptxfp and the GPU differ"
    if not runner.hardware:
        verdict = "dry run (no hardware): " + verdict
    return {
        "meta": {**dev, "hardware": runner.hardware,
                 "date": datetime.datetime.now(datetime.timezone.utc)
                 .strftime("%Y-%m-%d %H:%M UTC"),
                 "ptxfp": _version(), "git": _git_revision(), "command": command,
                 "vectors": opts["vectors"], "test_vectors": opts["test_vectors"],
                 "seed": opts["seed"], "exhaustive": bool(opts.get("exhaustive")),
                 "policy": {f: getattr(policy.current(), f) for f in P.POLICY_FIELDS},
                 "elapsed_s": time.time() - t0},
        "summary": {
            "forms": len(form_results),
            "decomposed": sum(1 for r in form_results if r["mode"] == "decomposed"),
            "vectors": sum(r["vectors"] for r in form_results), "mismatches": mism,
            "forms_with_mismatches": sum(1 for r in form_results if r["mismatches"]),
            "errors": errors,
            "exhaustive_vectors": sum(r["vectors"] for r in sweeps),
            "exhaustive_mismatches": sweep_mism,
            "exhaustive_complete": all(r["complete"] for r in sweeps),
            "probes": len(probe_results), "probes_disagree": disagree,
            "probe_errors": probe_err, "agrees": agrees, "verdict": verdict,
        },
        "forms": form_results, "exhaustive": sweeps, "probes": probes, "policies": answers,
    }


def _version():
    from .. import __version__
    return __version__


def _list(forms, sm):
    for s in forms:
        k = kernel_for(s, sm)
        ins = parse(s)
        sweep = "exhaustive-ok" if V.exhaustive_eligible(ins) else ""
        print(f"{s:<34} {k.mode:<10} .target {k.target:<7} .version {k.version_str:<4} "
              f"needs sm_{ins.min_sm}  {sweep}")


def _emit(forms, sm, directory):
    os.makedirs(directory, exist_ok=True)
    for s in forms:
        k = kernel_for(s, sm)
        with open(os.path.join(directory, f"{s}.ptx"), "w") as f:
            f.write(k.ptx)
    print(f"wrote {len(forms)} kernels to {directory}")


def main(argv=None, prog=None):
    """The command line; returns the exit status (0 agree, 1 differ, 2 user error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:           # argparse has printed its one-line usage error
        return 0 if exc.code == 0 else 2
    name = parser.prog
    try:
        if args.vectors < 0 or args.test_vectors < 0 or args.examples < 0:
            raise UsageError("--vectors, --test-vectors and --examples take counts >= 0")
        if args.jobs is not None and args.jobs < 1:
            raise UsageError("--jobs takes a count >= 1")
        forms = select_forms(args.forms)
        if args.list or args.emit_ptx:
            sm = args.sm or DEFAULT_SM
            if args.list:
                _list(forms, sm)
            if args.emit_ptx:
                _emit(forms, sm, args.emit_ptx)
            return 0
        probe_list = select_probes(args.probes, forms)
        if not forms and not probe_list:
            raise UsageError("nothing to run (--forms none and --probes none)")
        c_values = _c_values(args.exhaustive_c)
        runner = get_runner(args.backend, args.device, sm=args.sm)
    except UsageError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except HardwareUnavailable as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    jobs = args.jobs or max(1, min(8, (cpus or 1) // 2))
    opts = {"vectors": args.vectors, "test_vectors": args.test_vectors, "seed": args.seed,
            "examples": args.examples, "exhaustive": args.exhaustive,
            "exhaustive_c": c_values, "quiet": args.quiet,
            "deadline": None if args.budget is None else time.time() + args.budget}
    command = " ".join([name] + argv)
    try:
        result = run(runner, forms, probe_list, opts, jobs=jobs, backend=args.backend,
                     device=args.device, command=command)
    except HardwareUnavailable as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    finally:
        runner.close()
    report.write(result, args.out, args.json)
    s = result["summary"]
    print(f"{name}: {s['verdict']}: {s['forms']} forms, {s['vectors']:,} vectors, "
          f"{s['mismatches']:,} mismatches, {s['errors']} errors; "
          f"{s['probes']} probes, {s['probes_disagree']} disagree"
          + (f"; exhaustive {s['exhaustive_vectors']:,} vectors, "
             f"{s['exhaustive_mismatches']:,} mismatches" if result["exhaustive"] else "")
          + (f"; report: {args.out}" if args.out else ""))
    for p in result["policies"]:
        if p["status"] != "not probed":
            print(f"  {p['field']}: ptxfp {p['current']}, measured {p['measured'] or '—'} "
                  f"({p['status']})")
    return 0 if s["agrees"] else 1
