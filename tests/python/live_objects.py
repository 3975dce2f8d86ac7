"""Which tilecraft C++ objects outlive a test session, and what holds them. nanobind reports
such objects as leaks at interpreter exit; a long-running process would hold them too.

``report`` lists them with the chain of references that keeps each alive; where a chain ends in
a frame that no Python object refers to, something outside Python (a C extension) holds that
frame, and through it everything its function and callers held. ``count_raised_exceptions``
(Python 3.12+) counts every raise, swallowed ones included: a leaked exception keeps its
traceback's frames alive."""

import enum
import gc
import sys
import types
import warnings

_RAISED = {}
_NOISE = ("/usr/lib/python3", "/_pytest/", "/pluggy/", "<frozen", "/lib/python3.1")


def count_raised_exceptions():
    if not hasattr(sys, "monitoring"):
        return
    tool = sys.monitoring.DEBUGGER_ID

    def raised(code, offset, exception):
        key = (f"{code.co_filename}:{code.co_name}", type(exception).__name__,
               str(exception)[:100])
        _RAISED[key] = _RAISED.get(key, 0) + 1

    sys.monitoring.use_tool_id(tool, "tilecraft-live-objects")
    sys.monitoring.register_callback(tool, sys.monitoring.events.RAISE, raised)
    sys.monitoring.set_events(tool, sys.monitoring.events.RAISE)


def _is_tilecraft_instance(obj):
    module = getattr(type(obj), "__module__", None)
    return (isinstance(module, str) and module.startswith("tilecraft._core")
            and not isinstance(obj, (enum.Enum, type)))


def _describe(obj):
    kind = type(obj).__name__
    if isinstance(obj, types.FrameType):
        return f"frame({obj.f_code.co_name}:{obj.f_lineno})"
    if isinstance(obj, dict):
        return f"dict(keys={list(obj)[:5]})"
    if isinstance(obj, (types.FunctionType, types.ModuleType, type)):
        return f"{kind}({getattr(obj, '__name__', '')})"
    return kind


def report(stream, deep=False):
    """Writes what holds the tilecraft objects still alive; returns how many holders there are."""
    with warnings.catch_warnings():  # touching every object's type wakes deprecation warnings
        warnings.simplefilter("ignore")
        return _report(stream, deep)


def _report(stream, deep):
    gc.collect()
    everything = gc.get_objects()
    holders = {}
    # Containers holding only objects the collector does not track (tilecraft's included) are not
    # tracked themselves: look one and two levels below the tracked ones too.
    seen = set()
    level = everything
    for _ in range(3):
        below = []
        for holder in level:
            for obj in gc.get_referents(holder):
                if _is_tilecraft_instance(obj):
                    holders.setdefault(id(holder), holder)
                elif (isinstance(obj, (dict, list, tuple, set)) and not gc.is_tracked(obj)
                      and id(obj) not in seen):
                    seen.add(id(obj))
                    below.append(obj)
        level = below
    if not holders:
        return 0
    stream.write(f"\ntilecraft objects alive after the session, in {len(holders)} holders:\n")
    targets = list(holders.values())[:8]
    ignore = {id(everything), id(holders), id(targets), id(sys._getframe())}
    for holder in targets:
        chain, current = [_describe(holder)], holder
        for _ in range(8):
            referrers = [r for r in gc.get_referrers(current) if id(r) not in ignore]
            if not referrers:
                break
            ignore.add(id(referrers))
            current = referrers[0]
            more = f" (+{len(referrers) - 1} more)" if len(referrers) > 1 else ""
            chain.append(_describe(current) + more)
        stream.write("  " + " <- ".join(chain) + "\n")
    if deep:
        _report_frames_held_outside_python(stream, everything)
        for (where, kind, text), count in sorted(_RAISED.items(), key=lambda kv: -kv[1]):
            if not any(n in where for n in _NOISE):
                stream.write(f"  raised {count}x {kind} at {where}: {text}\n")
    return len(holders)


def _frames_held_outside_python(everything):
    """Finished frames that no Python object refers to (a C extension holds them)."""
    stack = set()
    frame = sys._getframe()
    while frame is not None:
        stack.add(id(frame))
        frame = frame.f_back
    return [obj for obj in everything
            if isinstance(obj, types.FrameType) and id(obj) not in stack
            and not [r for r in gc.get_referrers(obj) if r is not everything]]


def release_frames_held_outside_python():
    """Clears the locals of finished frames held outside Python (compute-sanitizer holds some),
    so that what they held is freed; returns how many frames it cleared."""
    gc.collect()
    everything = gc.get_objects()
    cleared = 0
    for frame in _frames_held_outside_python(everything):
        while frame is not None:
            try:
                frame.clear()
                cleared += 1
            except RuntimeError:  # still executing: not ours to clear
                break
            frame = frame.f_back
    return cleared


def _report_frames_held_outside_python(stream, everything):
    leaves = {}
    for obj in _frames_held_outside_python(everything):
        key = (obj.f_code.co_filename, obj.f_code.co_name, obj.f_lineno)
        leaves[key] = leaves.get(key, 0) + 1
    for (filename, name, line), count in sorted(leaves.items(), key=lambda kv: -kv[1])[:12]:
        stream.write(f"  frame held outside Python: {count}x {name} at {filename}:{line}\n")
