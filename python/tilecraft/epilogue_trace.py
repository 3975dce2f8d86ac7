"""``tilecraft.epilogue.trace``: a Python function of the accumulator read as an epilogue graph.

The function's source is parsed (as CUTLASS's Python interface does), not run::

    def epi(accum, alpha, C, beta, bias):
        D = relu(alpha * accum + beta * C + bias)
        return D, D.abs().max()

    graph = tilecraft.epilogue.trace(epi, accum=acc, alpha=1.0, C=c, beta=0.5, bias=b, D=d)

Its first parameter is the accumulator (M x N); every other parameter is an input: a number
(a runtime scalar) or a tensor, which broadcasts as torch broadcasts it: (M, N) full, (M, 1) one
value per row, (1, N) or (N,) one value per column. The example tensors give the shapes and
element types, the outputs' too: a returned variable is stored under its name with the dtype of
the example tensor of that name (float32 without one); a returned expression that is not a
variable is named ``out<i>`` (its position). The body is assignments and one ``return``.
Expressions: numbers, + - * / and unary -, one comparison (< <= > >= == !=), the activations
``relu, leaky_relu(x, slope), tanh, sigmoid, silu, hardswish, gelu, gelu_tanh, clamp(x, lo,
hi)``, ``abs, maximum, minimum, where(condition, a, b)``, and the methods ``x.abs()``,
``x.max() / x.amax() / x.sum()`` (the whole tensor; ``dim=1`` one value per row, ``dim=0`` one
per column), ``x.abs().max()`` (the absolute maximum), ``x.to(dtype)``. Anything else is refused
with the function's name and line; so is a graph the kernels cannot take (a reduction of an fp8
output, an input of the wrong length, an example output the function does not return).
"""

import ast
import inspect
import textwrap

from tilecraft import _core
from tilecraft._core import Activation, BinaryOp, Broadcast, DataType, ReduceAxis, ReduceOp

_BINARY = {ast.Add: BinaryOp.add, ast.Sub: BinaryOp.sub, ast.Mult: BinaryOp.mul,
           ast.Div: BinaryOp.div}
_COMPARE = {ast.Lt: BinaryOp.less, ast.LtE: BinaryOp.less_equal, ast.Gt: BinaryOp.greater,
            ast.GtE: BinaryOp.greater_equal, ast.Eq: BinaryOp.equal,
            ast.NotEq: BinaryOp.not_equal}
_ACTIVATIONS = {"relu": Activation.relu, "leaky_relu": Activation.leaky_relu,
                "tanh": Activation.tanh, "sigmoid": Activation.sigmoid, "silu": Activation.silu,
                "hardswish": Activation.hardswish, "gelu": Activation.gelu,
                "gelu_tanh": Activation.gelu_tanh, "clamp": Activation.clamp}
_ACTIVATION_ARGS = {"leaky_relu": 1, "clamp": 2}
_BINARY_CALLS = {"maximum": BinaryOp.max, "max": BinaryOp.max, "minimum": BinaryOp.min,
                 "min": BinaryOp.min}
_REDUCTIONS = {"max": ReduceOp.max, "amax": ReduceOp.max, "sum": ReduceOp.sum}
_DTYPES = {"float16": DataType.f16, "half": DataType.f16, "bfloat16": DataType.bf16,
           "float32": DataType.f32, "float": DataType.f32, "float64": DataType.f64,
           "double": DataType.f64, "int8": DataType.s8, "uint8": DataType.u8,
           "int32": DataType.s32, "float8_e4m3fn": DataType.e4m3, "float8_e5m2": DataType.e5m2}


class _Reduction:
    """A reduction in the body: written where it is returned."""

    def __init__(self, source, op, axis, line):
        self.source, self.op, self.axis, self.line = source, op, axis, line


class _Tracer:
    def __init__(self, fn, examples):
        self.fn = fn
        self.examples = examples
        try:
            source = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError) as error:
            raise ValueError(f"epilogue {getattr(fn, '__name__', fn)}: its source code is not "
                             f"available ({error}); define the function in a file (not in a "
                             f"REPL, python -c or exec)") from None
        self.first_line = fn.__code__.co_firstlineno
        tree = ast.parse(source)
        self.definition = next(node for node in tree.body
                               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
        self.graph = _core.EpilogueGraph()
        self.values = {}      # variable name -> node id (or _Reduction)
        self.shape = None     # (M, N) of the accumulator

    # ---- errors -------------------------------------------------------------------------------
    def fail(self, node, text):
        line = self.first_line + getattr(node, "lineno", 1) - 1
        raise ValueError(f"epilogue {self.fn.__name__}, line {line}: {text}")

    # ---- parameters ---------------------------------------------------------------------------
    def bind_parameters(self):
        args = self.definition.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            self.fail(self.definition, "expected plain positional parameters (accum first)")
        names = [a.arg for a in args.args]
        if not names:
            self.fail(self.definition, "expected the accumulator as the first parameter")
        accum = self.examples.get(names[0])
        if accum is None:
            raise ValueError(f"{names[0]}: an example accumulator (an M x N tensor) is "
                             f"required to trace {self.fn.__name__}")
        self.shape = _shape_of(names[0], accum, 2)
        self.values[names[0]] = self.graph.accumulator()
        for name in names[1:]:
            if name not in self.examples:
                raise ValueError(f"{name}: an example value for this parameter of "
                                 f"{self.fn.__name__} is required (a number or a tensor)")
            value = self.examples[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) and \
                    not hasattr(value, "shape"):
                raise TypeError(f"{name}: expected a number or a tensor, got "
                                f"{_core.given(value)}")
            if isinstance(value, (int, float)) or len(getattr(value, "shape", (0,))) == 0:
                self.values[name] = self.graph.scalar(name)  # a number, or a 0-d tensor
            else:
                self.values[name] = self.graph.tensor(name, _dtype_of(name, value),
                                                      self.broadcast_of(name, value))
        return names

    def broadcast_of(self, name, tensor):
        m, n = self.shape
        shape = tuple(int(s) for s in tensor.shape)
        if shape == (m, n):
            return Broadcast.full
        if shape == (m, 1):
            return Broadcast.row
        if shape in ((1, n), (n,)):
            return Broadcast.column
        raise ValueError(f"{name}: expected ({m}, {n}) like the accumulator, ({m}, 1) for one "
                         f"value per row, or ({n},) / (1, {n}) for one per column; got {shape}")

    # ---- expressions --------------------------------------------------------------------------
    def value(self, node):
        result = self.expression(node)
        if isinstance(result, _Reduction):
            self.fail(node, "a reduction's result can only be returned: its values are complete "
                            "only after every tile")
        return result

    def expression(self, node):
        g = self.graph
        if isinstance(node, ast.Name):
            if node.id not in self.values:
                self.fail(node, f"'{node.id}' is not a parameter or an earlier variable")
            return self.values[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
                not isinstance(node.value, bool):
            return g.constant(float(node.value))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left = self.value(node.left)
            right = self.value(node.right)
            return g.binary(_BINARY[type(node.op)], left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return g.unary(_core.UnaryOp.negate, self.value(node.operand))
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
                self.fail(node, "one comparison (<, <=, >, >=, ==, !=) at a time")
            left = self.value(node.left)
            right = self.value(node.comparators[0])
            return g.binary(_COMPARE[type(node.ops[0])], left, right)
        if isinstance(node, ast.Call):
            return self.call(node)
        self.fail(node, f"{type(node).__name__} is not an epilogue expression (numbers, "
                        f"arithmetic, comparisons, activations and reductions)")

    def call(self, node):
        g = self.graph
        if node.keywords and not isinstance(node.func, ast.Attribute):
            self.fail(node, "keyword arguments are taken by the reduction methods only")
        if isinstance(node.func, ast.Name):
            name = node.func.id
            args = node.args
            if name in _ACTIVATIONS:
                wanted = 1 + _ACTIVATION_ARGS.get(name, 0)
                if len(args) != wanted:
                    self.fail(node, f"{name} takes {wanted} argument(s), got {len(args)}")
                x = self.value(args[0])
                extra = [self.value(a) for a in args[1:]]
                return g.activation(_ACTIVATIONS[name], x, extra)
            if name == "abs" and len(args) == 1:
                return g.unary(_core.UnaryOp.abs, self.value(args[0]))
            if name in _BINARY_CALLS and len(args) == 2:
                a = self.value(args[0])
                b = self.value(args[1])
                return g.binary(_BINARY_CALLS[name], a, b)
            if name == "where" and len(args) == 3:
                condition = self.value(args[0])
                if_true = self.value(args[1])
                if_false = self.value(args[2])
                return g.select(condition, if_true, if_false)
            self.fail(node, f"'{name}' with {len(args)} argument(s) is not an epilogue function")
        if isinstance(node.func, ast.Attribute):
            return self.method(node)
        self.fail(node, "calls are to the epilogue's functions and methods by name")

    def method(self, node):
        g = self.graph
        method, target = node.func.attr, node.func.value
        if method == "abs" and not node.args and not node.keywords:
            return g.unary(_core.UnaryOp.abs, self.value(target))
        if method == "to" and len(node.args) == 1 and not node.keywords:
            return g.convert(self.value(target), self.dtype_literal(node.args[0]))
        if method in _REDUCTIONS:
            op = _REDUCTIONS[method]
            if method in ("max", "amax") and isinstance(target, ast.Call) and \
                    isinstance(target.func, ast.Attribute) and target.func.attr == "abs" and \
                    not target.args:
                op, target = ReduceOp.abs_max, target.func.value
            return _Reduction(target, op, self.reduce_axis(node), node)
        self.fail(node, f"the method '.{method}()' is not an epilogue operation")

    def reduce_axis(self, node):
        dims = [k for k in node.keywords if k.arg in ("dim", "axis")]
        others = [k.arg for k in node.keywords if k.arg not in ("dim", "axis")]
        if others or len(node.args) > 1 or (node.args and dims):
            self.fail(node, "a reduction takes dim=0 (one value per column), dim=1 (one per "
                            "row) or no dim (the whole tensor)")
        dim = node.args[0] if node.args else dims[0].value if dims else None
        if dim is None:
            return ReduceAxis.all
        if isinstance(dim, ast.UnaryOp) and isinstance(dim.op, ast.USub) and \
                isinstance(dim.operand, ast.Constant) and dim.operand.value == 1:
            return ReduceAxis.row
        if isinstance(dim, ast.Constant) and dim.value in (0, 1) and \
                not isinstance(dim.value, bool):
            return ReduceAxis.row if dim.value == 1 else ReduceAxis.column
        self.fail(node, "dim: expected 0 (one value per column) or 1 (one per row)")

    def dtype_literal(self, node):
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
        if name not in _DTYPES:
            self.fail(node, "to(): expected a dtype such as torch.float8_e4m3fn or "
                            "torch.bfloat16")
        return _DTYPES[name]

    # ---- statements ---------------------------------------------------------------------------
    def run(self):
        params = self.bind_parameters()
        body = self.definition.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # a docstring
        returned = None
        for statement in body:
            if returned is not None:
                self.fail(statement, "the return must be the last statement")
            if isinstance(statement, ast.Assign):
                if len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
                    self.fail(statement, "assign to one variable at a time")
                name = statement.targets[0].id
                if name in params:
                    self.fail(statement, f"'{name}' is a parameter: inputs are read-only")
                self.values[name] = self.expression(statement.value)
            elif isinstance(statement, ast.Return):
                returned = statement
            else:
                self.fail(statement, f"{type(statement).__name__} statements are not epilogue "
                                     f"code (assignments and one return)")
        if returned is None or returned.value is None:
            self.fail(self.definition, "the function returns nothing: return its outputs")
        items = returned.value.elts if isinstance(returned.value, ast.Tuple) else \
            [returned.value]
        outputs = []
        for i, item in enumerate(items):
            name = item.id if isinstance(item, ast.Name) else f"out{i}"
            if name in params:
                self.fail(item, f"'{name}' is an input; return computed values")
            outputs.append((name, item))
        results = [(name, item, self.expression(item)) for name, item in outputs]
        stored = {}
        for name, item, value in results:
            if isinstance(value, _Reduction):
                continue
            dtype = self.output_dtype(name, (self.shape[0], self.shape[1]))
            stored[name] = dtype
            self.graph.store(value, name, dtype)
        for name, item, value in results:
            if not isinstance(value, _Reduction):
                continue
            source = value.source
            if isinstance(source, ast.Name) and stored.get(source.id) in (DataType.e4m3,
                                                                          DataType.e5m2):
                self.fail(value.line, f"reduces '{source.id}', an fp8 output: reduce the value "
                                      f"before it is rounded to fp8")
            m, n = self.shape
            extent = {ReduceAxis.row: (m,), ReduceAxis.column: (n,), ReduceAxis.all: ()}
            dtype = self.output_dtype(name, extent[value.axis])
            self.graph.reduce(self.value(source), value.op, value.axis, name, dtype)
        produced = {name for name, _ in outputs}
        for name in self.examples:
            if name not in params and name not in produced:
                raise ValueError(f"{name}: an example output {self.fn.__name__} does not return "
                                 f"(it returns {', '.join(sorted(produced))})")
        try:
            self.graph.validate()
        except ValueError as error:
            raise ValueError(f"epilogue {self.fn.__name__}: {error}") from None
        return self.graph

    def output_dtype(self, name, extent):
        """The example output's element type (float32 without one), its extent checked: (M, N)
        for a store, (M,) / (N,) for row / column reductions (or with a 1 beside), one value for
        a whole-tensor one."""
        if name not in self.examples:
            return DataType.f32
        tensor = self.examples[name]
        shape = tuple(int(s) for s in getattr(tensor, "shape", ()))
        squeezed = tuple(s for s in shape if s != 1)
        if squeezed != tuple(e for e in extent if e != 1):
            raise ValueError(f"{name}: expected an output of {extent or 'one value'}, got "
                             f"{shape}")
        return _dtype_of(name, tensor)


def _shape_of(name, tensor, rank):
    shape = getattr(tensor, "shape", None)
    if shape is None or len(shape) != rank:
        raise ValueError(f"{name}: expected a {rank}-D tensor (M, N), got {_core.given(tensor)}")
    return tuple(int(s) for s in shape)


def _dtype_of(name, tensor):
    dtype = str(getattr(tensor, "dtype", "")).replace("torch.", "")
    if dtype not in _DTYPES:
        raise TypeError(f"{name}: expected a tensor of a GEMM element type, got dtype {dtype!r}")
    return _DTYPES[dtype]


def trace(fn, **example_tensors):
    """The epilogue graph of ``fn`` (see the module's documentation); raises ValueError naming
    the function's line for a construct an epilogue cannot have. Nothing compiles or launches."""
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"fn: expected a Python function, got {_core.given(fn)}")
    return _Tracer(fn, example_tensors).run()


__all__ = ["trace"]
