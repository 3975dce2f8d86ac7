"""Every epilogue graph of evt_cases.py on its kernels, SM90 and SM80 (ids ``sm90-<kernel>-<case>``
and ``sm80-<kernel>-<case>``: ``-k sm80`` / ``-k sm90`` select an architecture): four problems
each (evt_run.shapes), every element of every output against the float64 reference. A graph
that arch 80 refuses has an ``sm80`` item asserting the refusal and its message instead."""

import pytest

from evt_cases import BY_NAME, CASES, make_graph, refused_keys, run_keys, split_key
from evt_kernels import KERNELS, describe
from evt_run import Run, shapes


def test_the_table_has_25_distinct_graphs():
    assert len(CASES) >= 25
    assert len({c.fn.__name__ for c in CASES}) == len(CASES)


@pytest.mark.parametrize("op_key", run_keys(), ids=run_keys())
def test_graph(evt_ops, op_key, rng, gen, seed_note):
    kernel_key, case = split_key(op_key)
    kernel = KERNELS[kernel_key]
    op = evt_ops.get(op_key)
    assert op.is_compiled(), f"{op_key} is not compiled after the session's add_module"
    for M, N, K, data in shapes(case, kernel, rng):
        run = Run(case, kernel, M, N, K, data, gen, rng)
        run.launch(op)
        run.check(kernel, f"{op_key} at {M}x{N}x{K} ({data} data) {seed_note}")


@pytest.mark.parametrize("refused_key", refused_keys(), ids=refused_keys())
def test_refused_on_sm80(refused_key):
    """validate_for(80) and the arch-80 description refuse the graph, naming why; nothing is
    compiled."""
    import tilecraft

    kernel_key, case = split_key(refused_key)
    graph = make_graph(case)
    graph.validate_for(90)
    with pytest.raises(tilecraft.UnsupportedError, match=case.refused80):
        graph.validate_for(80)
    with pytest.raises(tilecraft.UnsupportedError, match=case.refused80_op or case.refused80):
        describe(KERNELS[kernel_key], case, graph)


def test_refusals_are_declared():
    """Every case: validate_for(80) refuses it exactly when the table says so (an arch-80
    emitter that starts refusing a graph, or accepting one, must update the table)."""
    import tilecraft

    for case in BY_NAME.values():
        graph = make_graph(case)
        graph.validate_for(90)
        if case.refused80:
            with pytest.raises(tilecraft.UnsupportedError, match=case.refused80):
                graph.validate_for(80)
        else:
            graph.validate_for(80)
