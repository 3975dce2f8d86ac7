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
output, an input of the wrong length, an example output the function does not return), a graph
past the core's bounds (``EpilogueGraph.max_nodes`` nodes, ``EpilogueGraph.max_depth`` deep:
refused at the line that crosses them), a definition longer than 4096 lines (before its source is
read), a number outside float32's range, a lambda, an ``async def`` and a generator.
"""

import ast
import inspect
import math
import re
import textwrap
import types

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
# The core's bounds on a graph (kMaxEpilogueGraphNodes, kMaxEpilogueGraphDepth), checked as nodes are made.
_MAX_NODES = _core.EpilogueGraph.max_nodes
_MAX_DEPTH = _core.EpilogueGraph.max_depth
# A body of at most _MAX_NODES nodes fits in far fewer lines: a longer definition is refused before
# its source is read (reading back and parsing 100,000 lines took minutes).
_MAX_SOURCE_LINES = 4096
# Constants are float32 in the kernel: magnitudes above this would be infinities.
_FLOAT32_MAX = 3.4028234663852886e38


def _last_line(code):
    """The last source line with code of ``code`` and the functions defined inside it."""
    lines = [line for _, _, line in code.co_lines() if line is not None]
    lines += [_last_line(const) for const in code.co_consts if isinstance(const, types.CodeType)]
    return max(lines, default=code.co_firstlineno)


class _Reduction:
    """A reduction in the body: written where it is returned."""

    def __init__(self, source, op, axis, line):
        self.source, self.op, self.axis, self.line = source, op, axis, line


class _Tracer:
    def __init__(self, fn, examples):
        self.fn = fn
        self.examples = examples
        self.name = fn.__name__
        try:
            self.target = inspect.unwrap(fn)  # a decorated function: the one whose source it is
        except ValueError:
            self.target = fn
        if not hasattr(self.target, "__code__"):
            self.target = fn
        code = self.target.__code__
        self.first_line = code.co_firstlineno
        self.refuse_kind(code)
        self.definition = self.parse_definition(code)
        self.graph = _core.EpilogueGraph()
        self.values = {}      # variable name -> node id (or _Reduction)
        self.shape = None     # (M, N) of the accumulator
        self.depths = []      # node id -> its depth (a leaf is 1 deep)
        self.lines = []       # node id -> the source line that made it
        self.nesting = 0      # expressions being read, one inside the other

    # ---- errors -------------------------------------------------------------------------------
    def line_of(self, node):
        return self.first_line + getattr(node, "lineno", 1) - 1

    def fail(self, node, text):
        raise ValueError(f"epilogue {self.name}, line {self.line_of(node)}: {text}")

    def fail_at(self, line, text):
        raise ValueError(f"epilogue {self.name}, line {line}: {text}")

    # ---- the function's source ----------------------------------------------------------------
    def refuse_kind(self, code):
        """Functions whose source is not one plain def: refused before their source is read."""
        if code.co_name == "<lambda>":
            self.fail_at(self.first_line, "a lambda cannot be traced (its source is the whole "
                                          "line around it); define the epilogue with def")
        if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR |
                            inspect.CO_ITERABLE_COROUTINE):
            self.fail_at(self.first_line, "an async def is not an epilogue; define it with a "
                                          "plain def (assignments and one return)")
        if code.co_flags & inspect.CO_GENERATOR:
            self.fail_at(self.first_line, "a generator (it yields) is not an epilogue; return "
                                          "the outputs")

    def parse_definition(self, code):
        last = _last_line(code)
        if last - self.first_line + 1 > _MAX_SOURCE_LINES:
            self.fail_at(self.first_line, f"the definition spans {last - self.first_line + 1} "
                                          f"lines ({self.first_line} to {last}); an epilogue of "
                                          f"at most {_MAX_NODES} nodes fits in far fewer and at "
                                          f"most {_MAX_SOURCE_LINES} are read: split the "
                                          f"epilogue or simplify it")
        source, problem = None, None
        try:
            source = textwrap.dedent(inspect.getsource(self.target))
        except Exception as error:  # OSError, TypeError, or a tokenizer error on a changed file
            problem = (f"its source code is not available ({error}); define the function in a "
                       f"file (not in a REPL, python -c or exec)")
        tree = None
        if source is not None:
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
                problem = f"its source cannot be read back ({type(error).__name__}: {error})"
        if problem is not None:
            self.fail_at(self.first_line, problem)
        first = tree.body[0] if tree.body else None
        if not isinstance(first, ast.FunctionDef) or first.name != code.co_name:
            self.fail_at(self.first_line, f"the source found there is not the def of "
                                          f"'{code.co_name}' (was its file edited after it was "
                                          f"imported?)")
        return first

    # ---- nodes ---------------------------------------------------------------------------------
    def made(self, where, node, inputs=()):
        """Records graph node ``node`` (made from the nodes ``inputs`` by the code at ``where``, an
        AST node) and refuses, naming that line, a graph past the core's bounds."""
        depth = 1 + max((self.depths[i] for i in inputs), default=0)
        self.depths.append(depth)
        self.lines.append(self.line_of(where))
        if node + 1 > _MAX_NODES:
            self.fail(where, f"the epilogue graph needs more than {_MAX_NODES} nodes "
                             f"(EpilogueGraph.max_nodes); split the epilogue or simplify it")
        if depth > _MAX_DEPTH:
            self.fail(where, f"this makes a value {depth} nodes deep (its longest chain of "
                             f"inputs); at most {_MAX_DEPTH} are allowed "
                             f"(EpilogueGraph.max_depth)")
        return node

    def constant(self, node):
        """A number of the body as a graph constant: finite in float32, which the kernel uses."""
        value = node.value
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number) or abs(number) > _FLOAT32_MAX:
            self.fail(node, f"the constant {_number_text(value)} is outside float32's range "
                            f"(magnitudes up to {_FLOAT32_MAX:.8g}): the epilogue computes in "
                            f"float32")
        return self.made(node, self.graph.constant(number))

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
        self.values[names[0]] = self.made(self.definition, self.graph.accumulator())
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
                node = self.graph.scalar(name)  # a number, or a 0-d tensor
            else:
                node = self.graph.tensor(name, _dtype_of(name, value),
                                         self.broadcast_of(name, value))
            self.values[name] = self.made(self.definition, node)
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
        # Each level of nesting makes a node one deeper than its operand's: an expression nested
        # past the depth bound is refused before it is read further (no deep recursion).
        self.nesting += 1
        try:
            if self.nesting > _MAX_DEPTH:
                self.fail(node, f"the expression nests more than {_MAX_DEPTH} operations deep; "
                                f"an epilogue graph is at most {_MAX_DEPTH} nodes deep "
                                f"(EpilogueGraph.max_depth)")
            return self.read(node)
        finally:
            self.nesting -= 1

    def read(self, node):
        g = self.graph
        if isinstance(node, ast.Name):
            if node.id not in self.values:
                self.fail(node, f"'{node.id}' is not a parameter or an earlier variable")
            return self.values[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
                not isinstance(node.value, bool):
            return self.constant(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left = self.value(node.left)
            right = self.value(node.right)
            return self.made(node, g.binary(_BINARY[type(node.op)], left, right), (left, right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            x = self.value(node.operand)
            return self.made(node, g.unary(_core.UnaryOp.negate, x), (x,))
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
                self.fail(node, "one comparison (<, <=, >, >=, ==, !=) at a time")
            left = self.value(node.left)
            right = self.value(node.comparators[0])
            return self.made(node, g.binary(_COMPARE[type(node.ops[0])], left, right),
                             (left, right))
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
                inputs = [self.value(a) for a in args]
                return self.made(node, g.activation(_ACTIVATIONS[name], inputs[0], inputs[1:]),
                                 inputs)
            if name == "abs" and len(args) == 1:
                x = self.value(args[0])
                return self.made(node, g.unary(_core.UnaryOp.abs, x), (x,))
            if name in _BINARY_CALLS and len(args) == 2:
                a = self.value(args[0])
                b = self.value(args[1])
                return self.made(node, g.binary(_BINARY_CALLS[name], a, b), (a, b))
            if name == "where" and len(args) == 3:
                condition = self.value(args[0])
                if_true = self.value(args[1])
                if_false = self.value(args[2])
                return self.made(node, g.select(condition, if_true, if_false),
                                 (condition, if_true, if_false))
            self.fail(node, f"'{name}' with {len(args)} argument(s) is not an epilogue function")
        if isinstance(node.func, ast.Attribute):
            return self.method(node)
        self.fail(node, "calls are to the epilogue's functions and methods by name")

    def method(self, node):
        g = self.graph
        method, target = node.func.attr, node.func.value
        if method == "abs" and not node.args and not node.keywords:
            x = self.value(target)
            return self.made(node, g.unary(_core.UnaryOp.abs, x), (x,))
        if method == "to" and len(node.args) == 1 and not node.keywords:
            x = self.value(target)
            return self.made(node, g.convert(x, self.dtype_literal(node.args[0])), (x,))
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
            self.made(item, self.graph.store(value, name, dtype), (value,))
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
            x = self.value(source)
            self.made(value.line, self.graph.reduce(x, value.op, value.axis, name, dtype), (x,))
        produced = {name for name, _ in outputs}
        for name in self.examples:
            if name not in params and name not in produced:
                raise ValueError(f"{name}: an example output {self.fn.__name__} does not return "
                                 f"(it returns {', '.join(sorted(produced))})")
        try:
            self.graph.validate()
        except ValueError as error:
            self.fail_at(self.line_of_error(str(error)), str(error))
        return self.graph

    def line_of_error(self, message):
        """The line that made the node a core refusal names ("node 7 (binary): ..."), else the
        def's."""
        match = re.match(r"node (\d+) ", message)
        node = int(match.group(1)) if match else -1
        return self.lines[node] if 0 <= node < len(self.lines) else self.first_line

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
    if inspect.ismethod(fn):
        raise TypeError(f"fn: expected a plain function, got the bound method "
                        f"{fn.__qualname__} (its first parameter is taken); pass a def")
    tracer = _Tracer(fn, example_tensors)
    try:
        graph = tracer.run()
        graph.fast_math = bool(getattr(fn, _FAST_MATH, False))
        return graph
    except RecursionError:
        # Bounded nesting keeps the tracer's own recursion shallow: the caller was already near
        # Python's recursion limit.
        pass
    tracer.fail_at(tracer.first_line, "Python's recursion limit was reached while reading it; "
                                      "trace it from a shallower call stack")


_FAST_MATH = "__tilecraft_fast_math__"


def fast_math(fn):
    """Marks an epilogue function for fast math (a decorator): ``trace``, and the one call
    ``gemm(A, B, epilogue=fn)``, build its graph with tanh, sigmoid, silu and gelu_tanh in the
    hardware's approximate forms (``tanh.approx.f32``, relative error at most 2^-11; ``__expf``
    and ``__fdividef``), as nvcc's --use_fast_math would, and gelu's erf by a rational
    approximation (Abramowitz and Stegun 7.1.26, absolute error at most 1.5e-7). Returns ``fn``."""
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"fn: expected a Python function, got {_core.given(fn)}")
    setattr(fn, _FAST_MATH, True)
    return fn


def _number_text(value):
    """A constant for a message: huge integers by their size, not their digits."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    return repr(value)


__all__ = ["fast_math", "trace"]
