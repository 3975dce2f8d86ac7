"""The GPU test suites' harness, written once. A suite's conftest declares what it needs and
takes its hooks and fixtures from here::

    SUITE = Suite(__file__, "tilecraft GPU suite", is_key=KERNELS.__contains__, ...)
    globals().update(SUITE.hooks())   # pytest finds a conftest's hooks and fixtures by name

What every suite gets:

* skip with a printed reason: when the suite cannot run (tilecraft not importable, no usable
  CUDA device, no torch, no float8 dtypes, too few devices, the wrong compute capability) every
  item of its folder is skipped with ``<suite name>: <reason>``, also shown in the session header;
  in a suite that runs on compute capability >= 8.0, the items that need 9.0 (``sm90`` marker or
  a word with the suite's ``sm90_prefix``) are skipped on other devices;
* seeding: one seed per run, TILECRAFT_GPU_TEST_SEED or fresh, shown in the header; the fixtures
  ``rng``, ``gen`` and ``seed_note`` derive from it and the test's id;
* compile-once: the kernel keys that the selected, not skipped items use (their parameters that
  are kernel keys and their ``key_marker``'s arguments), for ONE add_module before the tests run
  (``Suite.compile`` and ``Operations``), and the compile report at the end of the run;
* the live-object check (TILECRAFT_TEST_CHECK_LIVE / TILECRAFT_TEST_REPORT_LIVE,
  tests/python/live_objects.py): this module's ``pytest_configure`` and
  ``pytest_sessionfinish``, which tests/python/conftest.py takes for the whole session.
"""

import os
import random
import sys
import time
import warnings
from pathlib import Path

import pytest

SEED = int(os.environ.get("TILECRAFT_GPU_TEST_SEED") or random.SystemRandom().randrange(2 ** 31))
TESTS = Path(__file__).resolve().parent


def on_path(conftest, *suites):
    """Puts a suite's folder and the named sibling suites' folders on sys.path: their helpers
    are plain modules that tests and conftests import by name."""
    for folder in (Path(conftest).resolve().parent, *(TESTS / suite for suite in suites)):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))


def probe(sm90=False, float8=False, devices=1):
    """(why a suite with these needs cannot run or None, the device's compute capability or
    None). Without ``sm90`` a suite needs compute capability >= 8.0."""
    try:
        import tilecraft
    except Exception as error:  # not built / not installed
        return f"tilecraft is not importable ({type(error).__name__}: {error})", None
    reason = tilecraft._core.cuda_device_available()
    if reason is not None:
        return (reason if "CUDA" in reason else f"no usable CUDA device: {reason}"), None
    try:
        import torch
    except Exception as error:
        return f"torch is not importable ({type(error).__name__}: {error})", None
    if not torch.cuda.is_available():
        return "torch sees no CUDA device", None
    if float8 and not hasattr(torch, "float8_e4m3fn"):
        return f"torch {torch.__version__} has no float8 dtypes (needs torch >= 2.1)", None
    if devices > 1:
        count = torch.cuda.device_count()
        if count < devices:
            return f"needs {devices} CUDA devices, this machine has {count}", None
        if sm90 and {torch.cuda.get_device_capability(i) for i in range(devices)} != {(9, 0)}:
            names = sorted({torch.cuda.get_device_name(i) for i in range(devices)})
            return (f"needs {devices} compute capability 9.0 devices (SM90 kernels), got "
                    f"{names}"), None
    cc = tilecraft._core.device_compute_capability()
    if sm90 and cc != 90:
        return (f"the device has compute capability {cc}; arch=90 kernels are built for sm_90a "
                f"(wgmma, TMA), which runs only on compute capability 9.0"), cc
    if cc < 80:
        return f"the device has compute capability {cc}; the suite's kernels need >= 80", cc
    return None, cc


def _params(item):
    callspec = getattr(item, "callspec", None)
    return callspec.params if callspec else {}


def _words(value):
    """The strings a test parameter holds: itself, its ``key``, or those of a tuple / list."""
    for v in value if isinstance(value, (tuple, list)) else (value,):
        word = v if isinstance(v, str) else getattr(v, "key", None)
        if isinstance(word, str):
            yield word


class Suite:
    """One GPU suite: the items under its conftest's folder and what they need.

    name: starts the header line, the skip reasons and the report lines.
    sm90, float8, devices: what ``probe`` checks. sm90_prefix: in a suite that runs on >= 8.0,
    the items with a parameter or key starting so (or an ``sm90`` marker) need 9.0.
    marker: added to every item. markers: marker lines to register (as in pytest's ini).
    is_key: whether a parameter is a kernel key (compile-once); key_params: only these parameters
    name kernels; key_marker: the marker whose arguments name more.
    item_marks: marker names for an item, from its kernel keys. header: added to the header.
    device: where ``gen`` draws.
    """

    def __init__(self, conftest, name, *, sm90=False, float8=False, devices=1, sm90_prefix=None,
                 marker="gpu", markers=(), is_key=None, key_params=None, key_marker=None,
                 item_marks=None, header="", device="cuda"):
        self.folder = Path(conftest).resolve().parent
        self.name = name
        self.needs = dict(sm90=sm90, float8=float8, devices=devices)
        self.sm90_prefix, self.marker, self.markers = sm90_prefix, marker, markers
        self.is_key, self.key_params, self.key_marker = is_key, key_params, key_marker
        self.item_marks, self.header, self.device = item_marks, header, device
        self.keys_by_file = {}   # item file -> kernel keys its selected, not skipped items use
        self.reports = []        # lines printed at the end of the run
        self._state = None

    def state(self):
        """(reason the suite cannot run or None, compute capability or None), probed once."""
        if self._state is None:
            self._state = probe(**self.needs)
        return self._state

    def owns(self, item):
        path = getattr(item, "path", None) or getattr(item, "fspath", None)
        try:
            return Path(str(path)).resolve().is_relative_to(self.folder)
        except (TypeError, ValueError, OSError):
            return False

    def _marker_args(self, item):
        if not self.key_marker:
            return []
        return [key for marker in item.iter_markers(self.key_marker) for key in marker.args]

    def keys_of(self, item):
        """The kernel keys an item uses: its parameters that are keys, its key_marker's args."""
        keys = set(self._marker_args(item))
        for name, value in _params(item).items():
            if self.is_key and (self.key_params is None or name in self.key_params):
                keys.update(word for word in _words(value) if self.is_key(word))
        return keys

    def needs_sm90(self, item):
        """Whether an item needs compute capability 9.0 in a suite that runs on >= 8.0."""
        words = [word for value in _params(item).values() for word in _words(value)]
        return item.get_closest_marker("sm90") is not None or any(
            word.startswith(self.sm90_prefix) for word in words + self._marker_args(item))

    def used_keys(self, path=None):
        """The kernel keys the selected, not skipped items use: all, or those of one file."""
        if path is not None:
            return set(self.keys_by_file.get(str(Path(path).resolve()), ()))
        return set().union(*self.keys_by_file.values())

    def report(self, line):
        """A line for the end of the run, written to stderr at once too."""
        self.reports.append(line)
        sys.stderr.write("\n" + line + "\n")

    def compile(self, operations, keys=None):
        """Compiles the used keys' operations in ONE add_module (``Operations.compile``) and
        reports how long it took and what failed; returns ``operations``."""
        keys = sorted(self.used_keys() if keys is None else keys)
        operations.compile(keys)
        line = (f"{self.name}: add_module of {len(keys)} kernels took "
                f"{operations.compile_seconds:.1f} s")
        if operations.build_errors:
            line += f"; {len(operations.build_errors)} descriptions refused: " + "; ".join(
                f"{k} ({e})" for k, e in operations.build_errors.items())
        if operations.compile_error:
            line += f"; add_module raised: {operations.compile_error[:4000]}"
        self.report(line)
        return operations

    # ---- the hooks and fixtures a conftest takes (``hooks``) ----

    def pytest_configure(self, config):
        for line in self.markers:
            config.addinivalue_line("markers", line)

    def pytest_report_header(self, config):
        reason, cc = self.state()
        if reason:
            status = f"SKIPPED: {reason}"
        elif self.sm90_prefix and cc != 90:
            status = f"running the SM80 items (compute capability {cc}; SM90 items skipped)"
        else:
            status = "running"
        extra = f"; {self.header}" if self.header else ""
        return [f"{self.name}: {status}; seed {SEED} (TILECRAFT_GPU_TEST_SEED={SEED}){extra}"]

    def pytest_collection_modifyitems(self, config, items):
        mine = [item for item in items if self.owns(item)]
        if not mine:
            return
        reason, cc = self.state()
        for item in mine:
            if self.marker:
                item.add_marker(self.marker)
            for name in self.item_marks(self.keys_of(item)) if self.item_marks else ():
                item.add_marker(name)
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"{self.name}: {reason}"))
            elif self.sm90_prefix and cc != 90 and self.needs_sm90(item):
                item.add_marker(pytest.mark.skip(
                    reason=f"{self.name}: arch=90 kernels are built for sm_90a, which runs only "
                           f"on compute capability 9.0; this device has {cc}"))

    def pytest_collection_finish(self, session):
        for item in session.items:  # after -k / -m deselection: compile only what will run
            if self.owns(item) and item.get_closest_marker("skip") is None:
                path = str(Path(str(item.path)).resolve())
                self.keys_by_file.setdefault(path, set()).update(self.keys_of(item))

    def pytest_terminal_summary(self, terminalreporter):
        for line in self.reports:
            terminalreporter.write_line(line)
        if self.reports:
            terminalreporter.write_line(f"{self.name}: seed {SEED}")

    def hooks(self):
        """The conftest's hooks and the seeded fixtures, by the names pytest looks for."""
        device = self.device

        @pytest.fixture
        def rng(request):
            """A random.Random seeded by the run's seed and the test's id."""
            return random.Random(f"{SEED}/{request.node.nodeid}")

        @pytest.fixture
        def gen(rng):
            """A torch.Generator on the suite's device, seeded from ``rng``."""
            import torch

            g = torch.Generator(device=device)
            g.manual_seed(rng.getrandbits(62))
            return g

        @pytest.fixture
        def seed_note(request):
            return (f"[seed {SEED}: rerun with TILECRAFT_GPU_TEST_SEED={SEED} python -m pytest "
                    f"'{request.node.nodeid}']")

        names = ("pytest_configure", "pytest_report_header", "pytest_collection_modifyitems",
                 "pytest_collection_finish", "pytest_terminal_summary")
        return {**{name: getattr(self, name) for name in names},
                "rng": rng, "gen": gen, "seed_note": seed_note}


class Operations:
    """Operations by kernel key, each built once by ``build(key)``; ``compile`` runs ONE
    add_module over all of them. A key whose description was refused fails its tests in
    ``get``; an add_module that raised is reported, and its failing kernels fail their tests."""

    def __init__(self, build):
        self._build = build
        self._ops = {}
        self.build_errors = {}
        self.compile_error = None
        self.compile_seconds = 0.0

    def get(self, key):
        if key in self.build_errors:
            raise AssertionError(f"{key}: the description was refused: {self.build_errors[key]}")
        if key not in self._ops:
            self._ops[key] = self._build(key)
        return self._ops[key]

    def compile(self, keys):
        import tilecraft

        ops = []
        for key in keys:
            try:
                ops.append(self.get(key))
            except Exception as error:  # text only: no traceback (and its frames) kept
                self.build_errors[key] = f"{type(error).__name__}: {error}"
        start = time.monotonic()
        try:
            tilecraft.compiler.add_module(ops)
        except Exception as error:  # the others are attached; the failing ones fail their tests
            self.compile_error = f"{type(error).__name__}: {error}"
            warnings.warn(f"compiler.add_module failed for some kernels: {error}")
        self.compile_seconds = time.monotonic() - start


# ---- the live-object check, for the whole session (tests/python/conftest.py takes these) ----

def pytest_configure(config):
    config.addinivalue_line("markers", "sanitizer: a GPU suite's compute-sanitizer subset")
    if os.environ.get("TILECRAFT_TEST_REPORT_LIVE"):
        import live_objects

        live_objects.count_raised_exceptions()


def pytest_sessionfinish(session, exitstatus):
    """After the last teardown: with TILECRAFT_TEST_CHECK_LIVE=1 the session fails if any
    tilecraft object (other than enum members) is still referenced; with
    TILECRAFT_TEST_REPORT_LIVE=1 what holds them is reported, in depth."""
    check = os.environ.get("TILECRAFT_TEST_CHECK_LIVE")
    report = os.environ.get("TILECRAFT_TEST_REPORT_LIVE")
    if not (check or report):
        return
    import live_objects

    if os.environ.get("TILECRAFT_TEST_RELEASE_HELD_FRAMES"):  # under compute-sanitizer
        cleared = live_objects.release_frames_held_outside_python()
        sys.stderr.write(f"\ncleared {cleared} frames held outside Python\n")

    try:  # the one-call plans live for the process by design: not a leak
        import tilecraft

        tilecraft.clear_plans()
    except ImportError:
        pass
    alive = live_objects.report(sys.stderr, deep=bool(report))
    if check and alive and session.exitstatus == 0:
        session.exitstatus = 1
