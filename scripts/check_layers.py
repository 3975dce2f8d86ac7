#!/usr/bin/env python3
"""Checks the layering rules of the design ("Layers": a folder each, dependencies point down only),
printing each offending line as FILE:LINE: RULE: TEXT.

C++ (src/ and include/tilecraft/; #include lines outside string literals and comments):
  down-only      a layer includes only its own headers and those of the layers below it
                 (public headers under include/tilecraft/<layer>/ count as that layer's);
  private        a header under src/<layer>/ is included only from src/<layer>/;
  shared-emit    the shared emitters (files directly in src/emit/) include no family folder
                 (src/emit/<family>/);
  no-cutlass     no CUTLASS or CuTe header in the core: those appear only in generated text
                 and in the headers it includes (include/tilecraft/jit/);
  jit            those headers include only each other, tilecraft/abi/, CUTLASS, CuTe and
                 system headers (they are installed without the rest of tilecraft).
Python (python/tilecraft/, every import, also inside functions):
  no-cycle       the package's modules import each other without a circle;
  no-private     a module imports no underscored name of another of the package's modules
                 (the extension, tilecraft._core, and the package's own __init__ excepted).

--root DIR: the tree to check (default: this script's repository).
--known FILE: the problems listed there (one "FILE: RULE: TEXT" a line, without the line number;
# comments) are reported but do not fail the check, so that the list only shrinks: a listed problem
that no longer occurs fails it too, until its line is removed.

Exit status: 0 when nothing is found beyond the known list, 1 otherwise.
"""

import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent  # --root replaces it
# From the bottom up: a layer may include its own and lower layers (DESIGN.md, "Layers").
LAYERS = ["abi", "core", "describe", "emit", "compile", "runtime", "discover", "tune", "python"]
RANK = {name: rank for rank, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
RAW_STRING = re.compile(r'R"([^()\\\s]{0,16})\(.*?\)\1"', re.S)
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def blank_keeping_lines(match):
    return re.sub(r"[^\n]", " ", match.group(0))


def code_lines(path):
    """The file's lines with raw string literals and block comments blanked (lines kept)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    text = RAW_STRING.sub(blank_keeping_lines, text)
    text = BLOCK_COMMENT.sub(blank_keeping_lines, text)
    return text.splitlines()


def layer_of(path):
    """(layer, family folder or None, is_public) of a C++ file, or None outside the layers."""
    parts = path.relative_to(ROOT).parts
    if parts[0] == "src" and len(parts) > 2 and parts[1] in RANK:
        family = parts[2] if len(parts) > 3 else None
        return parts[1], family, False
    if parts[:2] == ("include", "tilecraft") and len(parts) > 3 and parts[2] in RANK:
        return parts[2], None, True
    return None


def included_layer(target):
    """(layer, family folder or None, is_public) that an #include names, or None."""
    parts = pathlib.PurePosixPath(target).parts
    if len(parts) > 2 and parts[0] == "tilecraft" and parts[1] in RANK:
        return parts[1], None, True
    if len(parts) > 1 and parts[0] in RANK:
        return parts[0], parts[1] if len(parts) > 2 else None, False
    return None


def check_jit(path, problems):
    """Headers of generated modules include only each other, the ABI, CUTLASS and system headers:
    they are installed without the rest of tilecraft."""
    for number, line in enumerate(code_lines(path), 1):
        match = QUOTED_INCLUDE.match(line)
        if not match:
            continue
        target = match.group(1)
        if not target.startswith(("tilecraft/jit/", "tilecraft/abi/", "cutlass/", "cute/")):
            problems.append(f"{path.relative_to(ROOT)}:{number}: jit: a header of generated "
                            f"modules includes what is not installed with them: {line.strip()}")


def check_cpp(problems):
    files = sorted(p for folder in ("src", "include/tilecraft") for p in (ROOT / folder).rglob("*")
                   if p.suffix in (".cpp", ".hpp", ".h", ".cu", ".cuh"))
    for path in files:
        if path.relative_to(ROOT).parts[:3] == ("include", "tilecraft", "jit"):
            check_jit(path, problems)
        own = layer_of(path)
        if own is None:
            continue
        layer, family, _ = own
        for number, line in enumerate(code_lines(path), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = match.group(1)
            where = f"{path.relative_to(ROOT)}:{number}"
            if target.split("/")[0] in ("cutlass", "cute"):
                problems.append(f"{where}: no-cutlass: {line.strip()}")
                continue
            other = included_layer(target)
            if other is None:
                continue
            other_layer, other_family, public = other
            if RANK[other_layer] > RANK[layer]:
                problems.append(f"{where}: down-only: {layer} includes {other_layer}: "
                                f"{line.strip()}")
            elif not public and other_layer != layer:
                problems.append(f"{where}: private: {layer} reaches a private header of "
                                f"{other_layer}: {line.strip()}")
            if layer == "emit" and not public and family is None and other_layer == "emit" \
                    and other_family is not None:
                problems.append(f"{where}: shared-emit: a shared emitter includes the family "
                                f"folder '{other_family}': {line.strip()}")


def python_modules():
    package = ROOT / "python" / "tilecraft"
    modules = {}
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def resolve(module, is_package, node):
    """The absolute module name an ImportFrom node names."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def check_python(problems):
    modules = python_modules()
    edges = {name: {} for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [(alias.name, None) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = resolve(name, is_package, node)
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    targets.append((submodule, None) if submodule in modules
                                   else (source, alias.name))
            for target, imported_name in targets:
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target not in modules or target == name:
                    continue
                if target != "tilecraft" and not name.startswith(target + "."):
                    edges[name].setdefault(target, where)
                if imported_name and imported_name.startswith("_") \
                        and not imported_name.startswith("__") and target != "tilecraft":
                    problems.append(f"{where}: no-private: {name} imports {target}."
                                    f"{imported_name}")
    for cycle in find_cycles(edges):
        steps = " -> ".join(f"{a} ({edges[a][b]})" for a, b in zip(cycle, cycle[1:]))
        problems.append(f"{edges[cycle[0]][cycle[1]]}: no-cycle: {steps} -> {cycle[0]}")


def find_cycles(edges):
    """One cycle for each strongly connected component of more than one module."""
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(cycle_in(edges, set(component)))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return cycles


def cycle_in(edges, component):
    """A path start -> ... -> start inside a strongly connected component (breadth first)."""
    start = min(component)
    previous, frontier = {start: None}, [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(edges[node]):
                if nxt == start:
                    path = [node]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if nxt in component and nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return [start, start]


def without_line(problem):
    """ "FILE:LINE: RULE: TEXT" -> "FILE: RULE: TEXT" (a known problem moves with its file)."""
    where, rest = problem.split(": ", 1)
    return f"{where.rsplit(':', 1)[0]}: {rest}"


def read_known(path):
    lines = pathlib.Path(path).read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def main(argv):
    global ROOT
    known = set()
    while argv:
        if len(argv) >= 2 and argv[0] == "--known":
            known = read_known(argv[1])
        elif len(argv) >= 2 and argv[0] == "--root":
            ROOT = pathlib.Path(argv[1]).resolve()
        else:
            print(f"check_layers.py: expected [--root DIR] [--known FILE], got {argv[0]!r}",
                  file=sys.stderr)
            return 2
        argv = argv[2:]
    problems = []
    check_cpp(problems)
    check_python(problems)
    new = [p for p in problems if without_line(p) not in known]
    gone = sorted(known - {without_line(p) for p in problems})
    for problem in problems:
        print(("known: " if problem not in new else "") + problem)
    for entry in gone:
        print(f"fixed, remove it from the known list: {entry}")
    print(f"check_layers: {len(new)} new problem(s), {len(problems) - len(new)} known, "
          f"{len(gone)} known ones gone")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
