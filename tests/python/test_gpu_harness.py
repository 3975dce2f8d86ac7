"""The GPU suites' harness (gpu_harness.py) on the CPU: each reason a suite skips for, from fake
tilecraft and torch modules; the kernel keys compiled once; the markers and skips it puts on the
items of its folder only; the header, the seeded fixtures and the compile report."""

import sys
from types import SimpleNamespace

import pytest

import gpu_harness
from gpu_harness import Operations, Suite, probe

pytest_plugins = ["pytester"]


def fake_tilecraft(monkeypatch, reason=None, cc=90):
    core = SimpleNamespace(cuda_device_available=lambda: reason,
                           device_compute_capability=lambda: cc)
    monkeypatch.setitem(sys.modules, "tilecraft", SimpleNamespace(_core=core))


def fake_torch(monkeypatch, available=True, float8=True, capabilities=((9, 0),)):
    cuda = SimpleNamespace(is_available=lambda: available,
                           device_count=lambda: len(capabilities),
                           get_device_capability=lambda i: capabilities[i],
                           get_device_name=lambda i: f"GPU{i} sm{capabilities[i]}")
    torch = SimpleNamespace(__version__="2.0.1", cuda=cuda)
    if float8:
        torch.float8_e4m3fn = object()
    monkeypatch.setitem(sys.modules, "torch", torch)


def test_without_tilecraft(monkeypatch):
    monkeypatch.setitem(sys.modules, "tilecraft", None)
    reason, cc = probe()
    assert reason.startswith("tilecraft is not importable (ModuleNotFoundError: ")
    assert cc is None


@pytest.mark.parametrize("said, reason", [
    ("no NVIDIA GPU", "no usable CUDA device: no NVIDIA GPU"),
    ("CUDA driver too old", "CUDA driver too old")], ids=["prefixed", "as-said"])
def test_without_a_usable_device(monkeypatch, said, reason):
    fake_tilecraft(monkeypatch, reason=said)
    fake_torch(monkeypatch)
    assert probe() == (reason, None)


def test_without_torch(monkeypatch):
    fake_tilecraft(monkeypatch)
    monkeypatch.setitem(sys.modules, "torch", None)
    reason, cc = probe()
    assert reason.startswith("torch is not importable (ModuleNotFoundError: ")


def test_torch_without_cuda(monkeypatch):
    fake_tilecraft(monkeypatch)
    fake_torch(monkeypatch, available=False)
    assert probe() == ("torch sees no CUDA device", None)


def test_float8_only_where_needed(monkeypatch):
    fake_tilecraft(monkeypatch, cc=90)
    fake_torch(monkeypatch, float8=False)
    assert probe(float8=True) == (
        "torch 2.0.1 has no float8 dtypes (needs torch >= 2.1)", None)
    assert probe() == (None, 90)


@pytest.mark.parametrize("cc, sm90, reason", [
    (75, False, "the device has compute capability 75; the suite's kernels need >= 80"),
    (80, False, None),
    (90, False, None),
    (80, True, "the device has compute capability 80; arch=90 kernels are built for sm_90a "
               "(wgmma, TMA), which runs only on compute capability 9.0"),
    (100, True, "the device has compute capability 100; arch=90 kernels are built for sm_90a "
                "(wgmma, TMA), which runs only on compute capability 9.0"),
    (90, True, None)], ids=["75", "80", "90", "80-sm90", "100-sm90", "90-sm90"])
def test_compute_capability(monkeypatch, cc, sm90, reason):
    fake_tilecraft(monkeypatch, cc=cc)
    fake_torch(monkeypatch)
    assert probe(sm90=sm90) == (reason, cc)


@pytest.mark.parametrize("capabilities, reason", [
    (((9, 0),), "needs 2 CUDA devices, this machine has 1"),
    (((9, 0), (8, 0)), "needs 2 compute capability 9.0 devices (SM90 kernels), got "
                       "['GPU0 sm(9, 0)', 'GPU1 sm(8, 0)']"),
    (((9, 0), (9, 0)), None)], ids=["one", "sm90-sm80", "two-sm90"])
def test_two_devices(monkeypatch, capabilities, reason):
    fake_tilecraft(monkeypatch, cc=90)
    fake_torch(monkeypatch, capabilities=capabilities)
    assert probe(sm90=True, devices=2)[0] == reason


def mark(name, *args, **kwargs):
    return SimpleNamespace(name=name, args=args, kwargs=kwargs)


class Item:
    """What the harness reads of a pytest item; ``markers``: ``mark(...)`` objects."""

    def __init__(self, path, params=None, markers=()):
        self.path = path
        self.callspec = SimpleNamespace(params=params) if params is not None else None
        self.markers = list(markers)

    def add_marker(self, marker):
        self.markers.append(marker.mark if isinstance(marker, pytest.MarkDecorator)
                            else mark(marker))

    def iter_markers(self, name=None):
        return (m for m in self.markers if name is None or m.name == name)

    def get_closest_marker(self, name):
        return next(self.iter_markers(name), None)


def test_kernel_keys_of_an_item(tmp_path):
    suite = Suite(tmp_path / "conftest.py", "s", is_key={"k1", "k2", "k3", "k4"}.__contains__,
                  key_marker="uses")
    item = Item(tmp_path / "test_a.py",
                params={"key": "k1", "pair": ("k2", "other"), "case": SimpleNamespace(key="k3"),
                        "n": 3},
                markers=[mark("uses", "k4", "k5")])
    assert suite.keys_of(item) == {"k1", "k2", "k3", "k4", "k5"}
    assert suite.keys_of(Item(tmp_path / "test_a.py")) == set()
    only = Suite(tmp_path / "conftest.py", "s", is_key=lambda k: True, key_params=("op_key",))
    assert only.keys_of(Item(tmp_path / "t.py", params={"op_key": "a", "arch": "b"})) == {"a"}


def test_items_that_need_sm90(tmp_path):
    suite = Suite(tmp_path / "conftest.py", "s", sm90_prefix="g90_", key_marker="uses")
    assert suite.needs_sm90(Item(tmp_path / "t.py", params={"key": "g90_bf16"}))
    assert suite.needs_sm90(Item(tmp_path / "t.py", markers=[mark("uses", "g90_x")]))
    assert suite.needs_sm90(Item(tmp_path / "t.py", markers=[mark("sm90")]))
    assert not suite.needs_sm90(Item(tmp_path / "t.py", params={"key": "g80_f16"}))


def _marked(suite, items, state):
    suite._state = state
    suite.pytest_collection_modifyitems(None, items)
    return [([m.name for m in item.iter_markers()],
             [m.kwargs.get("reason") for m in item.iter_markers("skip")]) for item in items]


def test_markers_and_skips_on_the_suites_items_only(tmp_path):
    (tmp_path / "suite").mkdir()
    suite = Suite(tmp_path / "suite" / "conftest.py", "tilecraft X suite", sm90_prefix="sm90",
                  item_marks=lambda keys: ["fp8"] if "e4m3" in keys else [],
                  is_key={"e4m3", "sm90-a", "sm80-a"}.__contains__)
    items = [Item(tmp_path / "suite" / "test_x.py", params={"k": "e4m3"}),
             Item(tmp_path / "suite" / "test_x.py", params={"k": "sm90-a"}),
             Item(tmp_path / "suite" / "test_x.py", params={"k": "sm80-a"}),
             Item(tmp_path / "elsewhere" / "test_y.py", params={"k": "sm90-a"})]
    assert _marked(suite, items, ("no GPU", None)) == [
        (["gpu", "fp8", "skip"], ["tilecraft X suite: no GPU"]),
        (["gpu", "skip"], ["tilecraft X suite: no GPU"]),
        (["gpu", "skip"], ["tilecraft X suite: no GPU"]),
        ([], [])]
    for item in items:
        item.markers.clear()
    sm90_skip = ("tilecraft X suite: arch=90 kernels are built for sm_90a, which runs only on "
                 "compute capability 9.0; this device has 80")
    assert _marked(suite, items, (None, 80)) == [
        (["gpu", "fp8"], []), (["gpu", "skip"], [sm90_skip]), (["gpu"], []), ([], [])]


def test_no_probe_without_items(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_harness, "probe", lambda **needs: pytest.fail("probed"))
    suite = Suite(tmp_path / "conftest.py", "s")
    suite.pytest_collection_modifyitems(None, [Item(tmp_path.parent / "test_z.py")])


def test_only_selected_not_skipped_items_compile(tmp_path):
    suite = Suite(tmp_path / "conftest.py", "s", is_key=lambda k: k.startswith("k"))
    a, b = tmp_path / "test_a.py", tmp_path / "test_b.py"
    items = [Item(a, {"key": "k1"}), Item(a, {"key": "k2"}, [mark("skip", reason="no")]),
             Item(b, {"key": "k3"}), Item(tmp_path.parent / "test_c.py", {"key": "k4"})]
    suite.pytest_collection_finish(SimpleNamespace(items=items))
    assert suite.used_keys() == {"k1", "k3"}
    assert suite.used_keys(a) == {"k1"}
    assert suite.used_keys(tmp_path / "test_none.py") == set()


def test_compile_once_and_the_report(tmp_path, monkeypatch, capsys):
    calls = []
    fake_tilecraft(monkeypatch)
    sys.modules["tilecraft"].compiler = SimpleNamespace(add_module=calls.append)

    def build(key):
        if key == "bad":
            raise ValueError("no such tile")
        return f"op:{key}"

    suite = Suite(tmp_path / "conftest.py", "tilecraft X suite")
    operations = suite.compile(Operations(build), keys={"b", "a", "bad"})
    assert calls == [["op:a", "op:b"]]  # ONE add_module, in key order
    assert operations.get("a") == "op:a"
    with pytest.raises(AssertionError, match="bad: the description was refused: ValueError"):
        operations.get("bad")
    line = suite.reports[0]
    assert line.startswith("tilecraft X suite: add_module of 3 kernels took ")
    assert line.endswith("; 1 descriptions refused: bad (ValueError: no such tile)")
    assert line in capsys.readouterr().err


def test_header(tmp_path):
    suite = Suite(tmp_path / "conftest.py", "tilecraft X suite", header="7 kernels")
    suite._state = ("no GPU", None)
    seed = gpu_harness.SEED
    assert suite.pytest_report_header(None) == [
        f"tilecraft X suite: SKIPPED: no GPU; seed {seed} (TILECRAFT_GPU_TEST_SEED={seed}); "
        f"7 kernels"]
    suite.sm90_prefix, suite._state = "g90_", (None, 80)
    assert "running the SM80 items (compute capability 80; SM90 items skipped)" in (
        suite.pytest_report_header(None)[0])


def test_a_suite_in_a_session(pytester, monkeypatch):
    """A conftest that declares a suite: its hooks and fixtures work as pytest finds them."""
    monkeypatch.setattr(gpu_harness, "probe", lambda **needs: (f"needs {needs['devices']}", None))
    pytester.makeconftest("""
        from gpu_harness import Suite
        SUITE = Suite(__file__, "tilecraft test suite", devices=3)
        globals().update(SUITE.hooks())
    """)
    pytester.makepyfile("""
        def test_skipped():
            pass
    """)
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    seed = gpu_harness.SEED
    result.stdout.fnmatch_lines([
        f"tilecraft test suite: SKIPPED: needs 3; seed {seed} (TILECRAFT_GPU_TEST_SEED={seed})",
        "SKIPPED * tilecraft test suite: needs 3"])


def test_seeded_fixtures(pytester, monkeypatch):
    monkeypatch.setattr(gpu_harness, "probe", lambda **needs: (None, 90))
    pytester.makeconftest("""
        from gpu_harness import Suite
        SUITE = Suite(__file__, "tilecraft test suite")
        globals().update(SUITE.hooks())
    """)
    pytester.makepyfile(f"""
        import random

        def test_seeded(rng, seed_note, request):
            assert rng.random() == random.Random(f"{gpu_harness.SEED}/{{request.node.nodeid}}").random()
            assert "TILECRAFT_GPU_TEST_SEED={gpu_harness.SEED} python -m pytest" in seed_note
    """)
    pytester.runpytest().assert_outcomes(passed=1)
