"""The ``tilecraft`` command: list kernels, profile and tune problems beside cuBLAS, and manage
the kernel and tuning caches. ``tilecraft <command> --help`` says more."""

import argparse
import json
import os
import sys
import time

from tilecraft import profiling


def _size(text):
    units = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "kib": 2**10, "m": 2**20, "mb": 2**20,
             "mib": 2**20, "g": 2**30, "gb": 2**30, "gib": 2**30}
    t = text.strip().lower()
    number = t.rstrip("kmgib")
    unit = t[len(number):]
    try:
        value = float(number)
    except ValueError:
        value = -1
    if unit not in units or not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a size such as 500M, 2G or 1048576, got "
                                         f"{text!r}")
    return int(value * units[unit])


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _table(rows, headers):
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths))]
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


# ---- list -------------------------------------------------------------------------------------

def cmd_list(args):
    from tilecraft import _core

    kernels = _core.api.get_kernels(None, args.cc)
    rows = []
    for kernel in kernels:
        m = kernel.metadata
        ops = m.operands
        name = m.kernel_name
        if args.name and args.name not in name:
            continue
        if args.dtype and str(ops.A.dtype).split(".")[-1] != args.dtype:
            continue
        if args.arch and m.design.arch != args.arch:
            continue
        rows.append({"kernel": name, "arch": m.design.arch,
                     "A": str(ops.A.dtype).split(".")[-1], "B": str(ops.B.dtype).split(".")[-1],
                     "out": str(ops.out.dtype).split(".")[-1],
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
                print(f"{label} cache: {s['folder']}: {s['entries']} entries{extra}, "
                      f"{_human(s['bytes'])}, {s['invalid']} invalid")
    elif args.action == "list":
        if "kernels" in which:
            out["kernels"] = tuning.list_kernel_cache()
        if "tuning" in which:
            out["tuning"] = tuning.list_cache()
        if not args.json:
            for e in out.get("kernels", []):
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e["last_used"]))
                state = "ok" if e["valid"] else "INVALID: " + e["invalid_reason"]
                print(f"kernel module {e['key'][:16]}  {_human(e['bytes']):>10}  {when}  {state}")
                for name in e["kernels"]:
                    print(f"    {name}")
            for e in out.get("tuning", []):
                print(f"tuned  {e['signature']}\n    -> {e['kernel_name']}  "
                      f"{e['tflops']:.1f} TFLOP/s  ({e['device']})")
    elif args.action == "clear":
        if "kernels" in which:
            out["kernels_removed"] = tuning.clear_kernel_cache()
        if "tuning" in which:
            out["tuning_removed"] = tuning.clear_cache()
        if not args.json:
            print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in out.items()))
    else:  # prune
        if args.max_size is None:
            raise SystemExit("tilecraft cache prune: --max-size is required (e.g. --max-size 2G)")
        if "kernels" in which:
            out["kernels_removed"] = tuning.prune_kernel_cache(args.max_size)
        if "tuning" in which:
            out["tuning_removed"] = tuning.prune_cache(args.max_size)
        if not args.json:
            print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in out.items()))
    if args.json:
        json.dump(out, sys.stdout, indent=1)
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
        raise ValueError(f"tilecraft archive {args.action}: expected the archive's path")
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
    return profiling.problems_from(args.shape or (), dtypes, args.epilogue, args.file)


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


def cmd_profile(args):
    problems = _problems(args)
    _need_gpu()
    os.makedirs(args.out, exist_ok=True)
    profiling.precompile(problems, args.max_candidates, args.force)
    timer = profiling.Timer()
    records = []
    for i, problem in enumerate(problems, 1):
        print(f"[{i}/{len(problems)}] {problem.label}", file=sys.stderr, flush=True)
        record = profiling.profile_problem(problem, args.top, args.max_candidates,
                                           args.max_seconds, args.force, args.repeats, timer)
        records.append(record)
        print(f"    tilecraft {record['tilecraft_tflops']:8.1f} TFLOP/s  cuBLAS "
              f"{record['cublas_tflops']:8.1f} TFLOP/s  ratio {record['ratio']:.3f}  "
              f"error {record['error']:.2e} (cuBLAS {record['cublas_error']:.2e})  "
              f"{record['kernel']}", file=sys.stderr, flush=True)
    stem = os.path.join(args.out, "profile")
    profiling.write_csv(records, stem + ".csv")
    profiling.write_json(records, stem + ".json")
    profiling.write_chart(records, stem + ".png")
    ratios = [r["ratio"] for r in records]
    print(f"geometric mean ratio {profiling.geometric_mean(ratios):.3f} over {len(records)} "
          f"problems; wrote {stem}.csv, {stem}.json, {stem}.png")
    return 0


def cmd_tune(args):
    problems = _problems(args)
    _need_gpu()
    rows = []
    profiling.precompile(problems, args.max_candidates, args.force)
    for i, problem in enumerate(problems, 1):
        import tilecraft

        A, B, extra = profiling.operands(problem)
        print(f"[{i}/{len(problems)}] tuning {problem.label}", file=sys.stderr, flush=True)
        plan = tilecraft.plan_gemm(A, B, tuning="force" if args.force else "blocking",
                                   max_candidates=args.max_candidates,
                                   max_seconds=args.max_seconds,
                                   **profiling.gemm_kwargs(problem, extra))
        state = plan.state
        rows.append({"problem": problem.label, "kernel": state["kernel_name"],
                     "reason": state["reason"]})
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
    else:
        print(_table([[r["problem"], r["kernel"], r["reason"]] for r in rows],
                     ["problem", "kernel", "why"]))
    return 0


def _problem_options(p):
    p.add_argument("--shape", action="append", metavar="MxNxK",
                   help="a problem (LxMxNxK for a batch); repeat for more")
    p.add_argument("--file", help="problems: JSON list of {m, n, k, batch, dtype, epilogue, "
                                  "name}, or lines 'MxNxK [dtype] [epilogue] [name]'")
    p.add_argument("--dtype", action="append", choices=profiling.DTYPES,
                   help="dtype of --shape problems (repeat for several; default bf16)")
    p.add_argument("--epilogue", default="none", choices=profiling.EPILOGUES)
    p.add_argument("--max-candidates", type=_positive_int, default=None,
                   help="candidates to compile and time per problem (default: "
                        "TILECRAFT_TUNING_CANDIDATES or 6)")
    p.add_argument("--max-seconds", type=_seconds, default=None,
                   help="tuning time per problem (0: no limit)")
    p.add_argument("--force", action="store_true", help="tune again even where a winner is stored")
    p.add_argument("--json", action="store_true", help="print JSON")


def parser():
    top = argparse.ArgumentParser(prog="tilecraft", description=__doc__)
    sub = top.add_subparsers(dest="command", metavar="{list,profile,tune,cache,archive}")
    sub.required = True

    p = sub.add_parser("list", help="kernels tilecraft can build, with filters")
    p.add_argument("--name", help="substring of the kernel name")
    p.add_argument("--dtype", help="A's dtype, e.g. f16, bf16, e4m3, s8, tf32, f32, f64")
    p.add_argument("--arch", type=int, choices=(80, 90))
    p.add_argument("--cc", type=int, default=None, help="compute capability (default: this GPU's)")
    p.add_argument("--limit", type=_positive_int, default=None)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_list)

    p = sub.add_parser("profile", help="tune each problem and time it beside cuBLAS: CSV, JSON, PNG")
    _problem_options(p)
    p.add_argument("--top", type=_positive_int, default=3,
                   help="the tuner's measured candidates to keep per problem")
    p.add_argument("--repeats", type=_positive_int, default=20)
    p.add_argument("--out", default="tilecraft-profile", help="folder for profile.{csv,json,png}")
    p.set_defaults(run=cmd_profile)

    p = sub.add_parser("tune", help="tune problems now and store their winners")
    _problem_options(p)
    p.set_defaults(run=cmd_tune)

    p = sub.add_parser("cache", help="the kernel and tuning caches: stats, list, clear, prune")
    p.add_argument("action", choices=("stats", "list", "clear", "prune"))
    p.add_argument("--which", choices=("all", "kernels", "tuning"), default="all")
    p.add_argument("--max-size", type=_size, default=None, help="prune: the size to keep (2G)")
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
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, TypeError, RuntimeError) as error:
        print(f"tilecraft {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
