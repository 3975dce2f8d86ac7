"""The ``tilecraft`` command: list kernels, profile and tune problems beside cuBLAS, and manage
the kernel and tuning caches. ``tilecraft <command> --help`` says more.

Exit status: 0 when everything asked for was done; 1 when something could not be (no GPU, or
problems that could not be profiled or tuned: each is named with its reason, and the others are
done); 2 for a usage error (a bad flag, value or problem file), before anything runs."""

import argparse
import json
import os
import re
import sys
import time

from tilecraft import family_problems, profiling
from tilecraft._chart import ChartsUnavailable


class UsageError(Exception):
    """A bad flag, value or file found after parsing: said on one line, exit status 2."""


_shown = profiling.shown


def _safe(value, limit=300):
    """Text from a file or the cache, for the terminal: non-printable characters (escape
    sequences, bidirectional overrides, ...) as escapes, and at most ``limit`` characters."""
    text = str(value)
    cut = text[:limit]
    safe = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in cut)
    return safe if len(text) <= limit else f"{safe}... ({len(text)} characters)"


# ---- values of flags (argparse names the flag in its message) ------------------------------

_SIZE = re.compile(r"(\d{1,30})(?:\.(\d{1,30}))?\s*([a-z]*)")
_UNITS = {"": 1, "b": 1}
for _i, _letter in enumerate("kmgtpe", 1):
    for _spelling in (_letter, _letter + "b", _letter + "ib"):
        _UNITS[_spelling] = 2 ** (10 * _i)
MAX_SIZE = 2**63 - 1  # bytes: what the cache's sizes are counted in


def _size(text):
    t = text.strip().lower()
    match = _SIZE.fullmatch(t)
    expected = ("expected a size from 0 to 8 EiB: a number of bytes or of K, M, G, T, P or E "
                "(powers of 1024), such as 0, 1048576, 500M, 2G or 1.5T; 0 keeps nothing")
    if t[:1] in ("-", "+"):
        raise argparse.ArgumentTypeError(f"{expected}; got {_shown(text)}, which has a sign")
    if not match or match.group(3) not in _UNITS:
        raise argparse.ArgumentTypeError(f"{expected}; got {_shown(text)}")
    whole, fraction, unit = match.groups()
    scale = _UNITS[unit]
    value = int(whole) * scale
    if fraction:
        value += int(fraction) * scale // 10 ** len(fraction)
    if value > MAX_SIZE:
        raise argparse.ArgumentTypeError(f"{expected}; got {_shown(text)}, which is more")
    return value


def _int_in(low, high):
    def parse(text):
        t = text.strip()
        if re.fullmatch(r"\d{1,30}", t) and low <= int(t) <= high:
            return int(t)
        raise argparse.ArgumentTypeError(f"expected an integer from {low} to {high}, got "
                                         f"{_shown(text)}")

    parse.__name__ = "integer"
    return parse


MAX_SECONDS = 7 * 24 * 3600


def _seconds(text):
    t = text.strip()
    if re.fullmatch(r"\d{1,30}(\.\d{1,30})?", t) and float(t) <= MAX_SECONDS:
        return float(t)
    raise argparse.ArgumentTypeError(f"expected a number of seconds from 0 to {MAX_SECONDS} "
                                     f"(a week; 0: no limit), got {_shown(text)}")


def _compute_capability(text):
    t = text.strip()
    match = re.fullmatch(r"(\d{1,2})\.(\d)|(\d{2,3})", t)
    cc = None
    if match:
        cc = int(match.group(3)) if match.group(3) else int(match.group(1)) * 10 + int(
            match.group(2))
    if cc is None or not 80 <= cc <= 129:  # 8.0 to 12.9: the devices CUDA 13 knows
        raise argparse.ArgumentTypeError(
            "expected a compute capability tilecraft has kernels for: 80 or more (8.0 and newer "
            "run the SM80 kernels; 90, the H100's, also the SM90 ones), such as 80, 86, 89, 90 or "
            f"9.0, got {_shown(text)}" + ("" if cc is None else ", which has none" if cc < 80 else
                                         ", which is no device's"))
    return cc


def _nonempty(what):
    def parse(text):
        if not text:
            raise argparse.ArgumentTypeError(f"expected {what}, got ''")
        return text

    parse.__name__ = what
    return parse


def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _table(rows, headers):
    rows = [[_safe(x) for x in row] for row in rows]
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths))]
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


# ---- list -------------------------------------------------------------------------------------

def _dtype_name(dtype):
    return str(dtype).split(".")[-1]


def cmd_list(args):
    from tilecraft import _core

    kernels = _core.api.get_kernels(None, args.cc)
    if args.dtype is not None:
        known = sorted({_dtype_name(k.metadata.operands.A.dtype) for k in kernels})
        if args.dtype not in known:
            where = f"compute capability {args.cc}" if args.cc is not None else "any device"
            raise UsageError(f"--dtype: expected the A type of a kernel for {where}: "
                             f"{', '.join(known)}; got {_shown(args.dtype)}")
    rows = []
    for kernel in kernels:
        m = kernel.metadata
        ops = m.operands
        name = m.kernel_name
        if args.name and args.name not in name:
            continue
        if args.dtype and _dtype_name(ops.A.dtype) != args.dtype:
            continue
        if args.arch and m.design.arch != args.arch:
            continue
        rows.append({"kernel": name, "arch": m.design.arch,
                     "A": _dtype_name(ops.A.dtype), "B": _dtype_name(ops.B.dtype),
                     "out": _dtype_name(ops.out.dtype),
                     "tile": "x".join(map(str, m.design.tile_shape)),
                     "facts": repr(m.facts)})
        if args.limit and len(rows) >= args.limit:
            break
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
    else:
        print(_table([[r["kernel"], r["arch"], r["tile"], r["facts"]] for r in rows],
                     ["kernel", "arch", "tile", "facts"]))
        print(f"{len(rows)} kernels")
    return 0


# ---- cache ------------------------------------------------------------------------------------

def cmd_cache(args):
    from tilecraft import tuning

    if args.max_size is not None and args.action != "prune":
        raise UsageError(f"--max-size: only 'cache prune' takes it, got it with "
                         f"'cache {args.action}'")
    which = {"kernels": ("kernels",), "tuning": ("tuning",), "all": ("kernels", "tuning")}[args.which]
    out = {}
    if args.action == "stats":
        if "kernels" in which:
            out["kernels"] = tuning.kernel_cache_stats()
        if "tuning" in which:
            out["tuning"] = tuning.cache_stats()
        if not args.json:
            for name, s in out.items():
                extra = f", {s['kernels']} kernels" if name == "kernels" else ""
                label = "kernel" if name == "kernels" else name
                print(f"{label} cache: {_safe(s['folder'])}: {s['entries']} entries{extra}, "
                      f"{_human(s['bytes'])}, {s['invalid']} invalid")
    elif args.action == "list":
        if "kernels" in which:
            out["kernels"] = tuning.list_kernel_cache()
        if "tuning" in which:
            out["tuning"] = tuning.list_cache()
        if not args.json:
            # Names come from files in the cache: printed with anything that could steer the
            # terminal shown as escapes.
            for e in out.get("kernels", []):
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e["last_used"]))
                state = "ok" if e["valid"] else "INVALID: " + _safe(e["invalid_reason"])
                print(f"kernel module {_safe(e['key'][:16])}  {_human(e['bytes']):>10}  {when}  "
                      f"{state}")
                for name in e["kernels"]:
                    print(f"    {_safe(name)}")
            for e in out.get("tuning", []):
                print(f"tuned  {_safe(e['signature'])}\n    -> {_safe(e['kernel_name'])}  "
                      f"{e['tflops']:.1f} TFLOP/s  ({_safe(e['device'])})")
    elif args.action == "clear":
        if "kernels" in which:
            out["kernels_removed"] = tuning.clear_kernel_cache()
        if "tuning" in which:
            out["tuning_removed"] = tuning.clear_cache()
        if not args.json:
            print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in out.items()))
    else:  # prune
        if args.max_size is None:
            raise UsageError("--max-size: 'cache prune' needs it (the size to keep, e.g. "
                             "--max-size 2G; 0 keeps nothing)")
        if "kernels" in which:
            out["kernels_removed"] = tuning.prune_kernel_cache(args.max_size)
        if "tuning" in which:
            out["tuning_removed"] = tuning.prune_cache(args.max_size)
        if not args.json:
            print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in out.items()))
    if args.json:
        json.dump(out, sys.stdout, indent=1)  # JSON escapes control characters itself
        print()
    return 0


# ---- archive -----------------------------------------------------------------------------------

def cmd_archive(args):
    from tilecraft import compiler

    if args.action == "key":
        key = (compiler.make_archive_key(args.key) if args.new
               else compiler.archive_public_key(args.key))
        print(key)
        return 0
    if not args.path:
        raise UsageError(f"path: 'archive {args.action}' needs the archive's path, got none")
    if args.action == "export":
        out = compiler.export_cache(args.path, args.key)
    else:
        out = compiler.import_cache(args.path, args.trust)
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return 0
    for note in out["notes"]:
        print(note, file=sys.stderr)
    if args.action == "export":
        print(f"wrote {out['entries']} modules to {args.path}"
              + (f" ({out['skipped']} left out)" if out["skipped"] else ""))
    else:
        print(f"imported {out['entries']} modules from {args.path}"
              + (f" ({out['already_present']} were already here)" if out["already_present"]
                 else ""))
    return 0


# ---- profile and tune -------------------------------------------------------------------------

def _problems(args):
    dtypes = args.dtype or ["bf16"]
    try:
        problems = profiling.problems_of_shapes(args.shape or (), dtypes, args.epilogue)
    except ValueError as error:
        raise UsageError(f"--shape: {error}") from None
    if args.file is not None:
        try:
            problems += profiling.problems_of_file(args.file, dtypes[0], args.epilogue)
        except ValueError as error:
            raise UsageError(f"--file: {error}") from None
    if not problems:
        raise UsageError("--shape, --file: expected at least one problem, got none")
    return problems


def _need_gpu():
    from tilecraft import _core

    reason = _core.cuda_device_available()
    if reason is not None:
        raise SystemExit(f"tilecraft: no GPU to run on ({reason})")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise SystemExit("tilecraft: profile and tune compare with cuBLAS through torch; "
                         "install torch") from None


def _first_line(error):
    text = str(error).strip() or type(error).__name__
    lines = text.splitlines()
    return _safe(lines[0] + (f" [... {len(lines) - 1} more lines]" if len(lines) > 1 else ""))


def _each_problem(problems, step, verb):
    """step(problem) for each problem in turn. A problem whose step raises one of
    profiling.PROBLEM_ERRORS is reported with its reason and the next one goes on. Returns one
    (problem, result, failure) per problem, in order: failure is None, or a dict (problem,
    failed: its first line, error: the exception's type, message: all of it)."""
    outcomes = []
    for i, problem in enumerate(problems, 1):
        print(f"[{i}/{len(problems)}] {verb} {problem.label}", file=sys.stderr, flush=True)
        try:
            outcomes.append((problem, step(problem), None))
        except profiling.PROBLEM_ERRORS as error:
            failure = {"problem": problem.label, "failed": _first_line(error),
                       "error": type(error).__name__, "message": str(error)}
            outcomes.append((problem, None, failure))
            print(f"    could not {verb} it: {failure['failed']}", file=sys.stderr, flush=True)
    return outcomes


def _report_failures(outcomes, verb):
    """Lists the problems that failed, with their reasons; the exit status (1 when any did)."""
    failures = [f for _, _, f in outcomes if f is not None]
    if not failures:
        return 0
    print(f"tilecraft {verb}: could not {verb} {len(failures)} of {len(outcomes)} problems:",
          file=sys.stderr)
    for f in failures:
        print(f"    {_safe(f['problem'])}: {f['failed']}", file=sys.stderr)
    return 1


_OUTPUTS = ("profile.csv", "profile.json", "profile.png")


def _check_out(folder):
    """--out: a folder (made when missing, under an existing one) whose profile.* are nothing
    yet or regular files. Checked before any work; made only when the work starts."""
    if not folder:
        raise UsageError("--out: expected a folder for profile.csv, .json and .png, got ''")
    shown = profiling.path_text(folder)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise UsageError(f"--out: expected a folder, got {shown}, which is not one")
    if not os.path.isdir(folder):
        parent = os.path.dirname(os.path.abspath(folder))
        if not os.path.isdir(parent):
            raise UsageError(f"--out: expected a folder or a new one in an existing folder, got "
                             f"{shown}, whose folder {profiling.path_text(parent)} does not exist")
        return
    for name in _OUTPUTS:
        try:
            profiling.check_output(os.path.join(folder, name))
        except ValueError as error:
            raise UsageError(f"--out: {error}") from None


def _problem_fields(p):
    if hasattr(p, "family"):
        return p.record_base()
    return {"problem": p.label, "dtype": p.dtype, "epilogue": p.epilogue, "m": p.m, "n": p.n,
            "k": p.k, "batch": p.batch}


def cmd_profile(args):
    problems = _problems(args)
    _check_out(args.out)
    _need_gpu()
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as error:
        raise UsageError(f"--out: cannot make the folder {profiling.path_text(args.out)}: "
                         f"{error.strerror}") from None
    profiling.precompile(problems, args.max_candidates, args.force)
    timer = None
    stem = os.path.join(args.out, "profile")
    so_far = []

    def profile(problem):
        nonlocal timer
        timer = timer or profiling.Timer()
        side = family_problems if hasattr(problem, "family") else profiling
        record = side.profile_problem(problem, args.top, args.max_candidates, args.max_seconds,
                                      args.force, args.repeats, timer)
        first = (f"  first pick {record['first_ratio']:.3f}"
                 if record.get("first_ratio") is not None else "")
        print(f"    tilecraft {record['tilecraft_tflops']:8.1f} TFLOP/s  cuBLAS "
              f"{record['cublas_tflops']:8.1f} TFLOP/s  ratio {record['ratio']:.3f}{first}  "
              f"error {record['error']:.2e} (cuBLAS {record['cublas_error']:.2e})  "
              f"{record['kernel']}", file=sys.stderr, flush=True)
        # The rows so far, so that a run stopped part way still leaves them (the final files,
        # with the failures and the chart, replace these).
        so_far.append(record)
        try:
            profiling.write_csv(so_far, stem + ".csv")
            profiling.write_json(so_far, stem + ".json")
        except ValueError as error:
            raise UsageError(f"--out: {error}") from None
        return record

    outcomes = _each_problem(problems, profile, "profile")
    records = [record for _, record, _ in outcomes if record is not None]
    if records:
        # The problems that failed stay in the files, with their reason and no timing.
        everything = [record if record is not None else
                      dict(_problem_fields(p), failed=failure["message"])
                      for p, record, failure in outcomes]
        written = [stem + ".csv", stem + ".json"]
        try:
            profiling.write_csv(everything, stem + ".csv")
            profiling.write_json(everything, stem + ".json")
            profiling.write_chart(everything, stem + ".png")
            written.append(stem + ".png")
        except ChartsUnavailable as error:
            print(f"tilecraft profile: no chart: {error}", file=sys.stderr)
        except ValueError as error:
            raise UsageError(f"--out: {error}") from None
        ratios = [r["ratio"] for r in records]
        print(f"geometric mean ratio {profiling.geometric_mean(ratios):.3f} over {len(records)} "
              f"problems; wrote {', '.join(written)}")
    return _report_failures(outcomes, "profile")


def cmd_tune(args):
    problems = _problems(args)
    _need_gpu()
    profiling.precompile(problems, args.max_candidates, args.force)
    outcomes = _each_problem(
        problems, lambda p: (family_problems if hasattr(p, "family") else profiling).tune_problem(
            p, args.max_candidates, args.max_seconds, args.force), "tune")
    rows = [row if row is not None else
            {"problem": p.label, "kernel": None, "reason": None, "failed": failure["message"]}
            for p, row, failure in outcomes]
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
    else:
        print(_table([[r["problem"], r["kernel"] or "-",
                       r["reason"] or "could not tune: " + _first_line(r["failed"])]
                      for r in rows], ["problem", "kernel", "why"]))
    return _report_failures(outcomes, "tune")


# ---- export -----------------------------------------------------------------------------------

def cmd_export(args):
    from tilecraft import _core, export

    problems = _problems(args)
    name = args.name
    if name is None:
        name = export.name_from_folder(args.out)
        if name is None:
            raise UsageError(f"--name: expected a C identifier for the library; none can be made "
                             f"from --out {_shown(args.out)}: give one")
    try:
        export.check_name(name, "--name")
        native = [export.gemm_problem(p) for p in problems]
    except ValueError as error:
        raise UsageError(str(error)) from None
    reason = _core.cuda_device_available()
    if reason is not None and args.cc is None:
        raise UsageError(f"--cc: expected the compute capability to build for, such as 80 or 90 "
                         f"(no GPU here to take it from: {reason}), got none")
    if reason is not None and not args.untuned:
        print(f"tilecraft export: no GPU here ({reason}): exporting the ranked first picks, NOT "
              f"TUNED", file=sys.stderr)
    try:
        out = _core.export.export_gemm_library(native, name, args.out, args.cc, args.untuned,
                                               args.max_candidates, args.max_seconds)
    except ValueError as error:  # the core names its arguments; the command's flags are these
        text = str(error)
        for core, flag in (("out_dir:", "--out:"), ("cc:", "--cc:"), ("name:", "--name:")):
            if text.startswith(core):
                text = flag + text[len(core):]
        raise UsageError(text) from None
    except RuntimeError as error:  # a compiler's failure: all of its words
        print(f"tilecraft export: {_safe(error, 20000)}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return 0
    print(_table([[r["problem"], r["kernel"], r["how"]] for r in out["problems"]],
                 ["problem", "kernel", "chosen"]))
    print(f"wrote {out['header']}, {out['library']} and {out['config']} (compute capability "
          f"{out['cc']})")
    if not out["tuned"]:
        print("NOT TUNED: some kernels are the ranked first picks, never measured; export again on "
              "the GPU (without --untuned) for tuned ones")
    return 0


def _problem_options(p):
    p.add_argument("--shape", action="append", metavar="MxNxK",
                   help="a problem (LxMxNxK for a batch); repeat for more")
    p.add_argument("--file", metavar="PATH",
                   help="problems: JSON list of {m, n, k, batch, dtype, epilogue, name}, or lines "
                        "'MxNxK [dtype] [epilogue] [name]', 'grouped DTYPE groups=G tokens=T "
                        "n=N k=K [routing=random|balanced|skewed] [name]' or 'conv2d KIND DTYPE "
                        "n= c= h= w= k= r= s= [stride=] [pad=] [dilation=] "
                        "[epilogue=none|bias_relu] [name]' ('#' comments; grouped GEMMs are timed "
                        "beside torch._grouped_mm, convolutions beside cuDNN); a regular UTF-8 "
                        f"file of at most {profiling.MAX_FILE_BYTES} bytes")
    p.add_argument("--dtype", action="append", choices=profiling.DTYPES,
                   help="dtype of --shape problems (repeat for several; default bf16)")
    p.add_argument("--epilogue", default="none", choices=profiling.EPILOGUES)
    p.add_argument("--max-candidates", type=_int_in(1, 64), default=None,
                   help="candidates to compile and time per problem, 1 to 64 (default: "
                        "TILECRAFT_TUNING_CANDIDATES or 6)")
    p.add_argument("--max-seconds", type=_seconds, default=None,
                   help="tuning time per problem (0: no limit)")
    p.add_argument("--force", action="store_true", help="tune again even where a winner is stored")
    p.add_argument("--json", action="store_true", help="print JSON")


def parser():
    top = argparse.ArgumentParser(prog="tilecraft", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="command", metavar="{list,profile,tune,cache,archive,export}")
    sub.required = True

    p = sub.add_parser("list", help="kernels tilecraft can build, with filters")
    p.add_argument("--name", help="substring of the kernel name")
    p.add_argument("--dtype", type=_nonempty("a type name"),
                   help="A's dtype, e.g. f16, bf16, e4m3, s8, tf32, f32, f64")
    p.add_argument("--arch", type=int, choices=(80, 90))
    p.add_argument("--cc", type=_compute_capability, default=None,
                   help="compute capability, 80 or more (default: this GPU's; every "
                        "architecture's kernels without one)")
    p.add_argument("--limit", type=_int_in(1, 10**9), default=None)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_list)

    p = sub.add_parser("profile", help="tune each problem and time it beside cuBLAS, "
                       "torch._grouped_mm or cuDNN: CSV, JSON, PNG")
    _problem_options(p)
    p.add_argument("--top", type=_int_in(1, 64), default=3,
                   help="the tuner's measured candidates to keep per problem")
    p.add_argument("--repeats", type=_int_in(1, 1000), default=20)
    p.add_argument("--out", default="tilecraft-profile", help="folder for profile.{csv,json,png}")
    p.set_defaults(run=cmd_profile)

    p = sub.add_parser("tune", help="tune problems now and store their winners")
    _problem_options(p)
    p.set_defaults(run=cmd_tune)

    p = sub.add_parser("cache", help="the kernel and tuning caches: stats, list, clear, prune")
    p.add_argument("action", choices=("stats", "list", "clear", "prune"))
    p.add_argument("--which", choices=("all", "kernels", "tuning"), default="all")
    p.add_argument("--max-size", type=_size, default=None,
                   help="prune: the size to keep (2G; 0 keeps nothing)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_cache)

    p = sub.add_parser("archive", help="move compiled kernels between machines as signed archives",
                       description="export: write the kernel cache into an archive signed with "
                       "your archive key; import: take an archive signed by a key you trust; "
                       "key: print your archive key's public key (--new makes one)")
    p.add_argument("action", choices=("export", "import", "key"))
    p.add_argument("path", nargs="?", help="the archive file")
    p.add_argument("--key", default=None,
                   help="your archive key pair file (default TILECRAFT_ARCHIVE_KEY_FILE)")
    p.add_argument("--trust", action="append", default=None, metavar="KEY_OR_FILE",
                   help="import: a public key (tilecraft-ed25519:...) or a file of them to trust")
    p.add_argument("--new", action="store_true", help="key: make a new key pair")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_archive)

    p = sub.add_parser("export", help="write the kernels of problems as a C++ library with a "
                       "header and a CMake package (docs/export.md)")
    p.add_argument("--shape", action="append", metavar="MxNxK",
                   help="a GEMM problem (LxMxNxK for a batch); repeat for more")
    p.add_argument("--file", metavar="PATH",
                   help="problems, as for tune (GEMM lines only: "
                        "'MxNxK [dtype] [epilogue] [name]')")
    p.add_argument("--dtype", action="append", choices=profiling.DTYPES,
                   help="dtype of --shape problems (repeat for several; default bf16)")
    p.add_argument("--epilogue", default="none", choices=profiling.EPILOGUES)
    p.add_argument("--out", required=True, type=_nonempty("a folder"),
                   help="folder for include/, lib/ and lib/cmake/ (new, empty or an earlier "
                        "export)")
    p.add_argument("--name", default=None,
                   help="the library's name, a C identifier (default: from --out's last part)")
    p.add_argument("--cc", type=_compute_capability, default=None,
                   help="compute capability to build for (default: this GPU's; needed without one)")
    p.add_argument("--untuned", action="store_true",
                   help="take each problem's ranked first pick without tuning")
    p.add_argument("--max-candidates", type=_int_in(1, 64), default=None,
                   help="candidates to time per problem that has no stored winner")
    p.add_argument("--max-seconds", type=_seconds, default=None,
                   help="tuning time per problem (0: no limit)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=cmd_export)
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as error:
        print(f"tilecraft {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tilecraft {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`tilecraft list | head`): nothing more to say to it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 1
    except (ValueError, TypeError) as error:
        # tilecraft's refusals of a value (a setting in the environment, say): one line.
        print(f"tilecraft {args.command}: {_first_line(error)}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError, MemoryError) as error:
        # What could not be done (the cache, the system): one line.
        print(f"tilecraft {args.command}: {_first_line(error)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
