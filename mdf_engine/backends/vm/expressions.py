"""Expressions of generated code as tier 0 instructions (:mod:`.ops`).

Every value is an :class:`Operand`: a run of heap elements with a shape. Scalars and arrays
are handled alike (a scalar is one element); an operation between a scalar and an array, or
two arrays of one size, is one element-wise instruction. Subscripts by constant indices are
views (no instruction), by computed indices a bounds-checked load, as the generated code's
``_ix1``/``_ix2`` do. A registered kernel (``F<k>``) is inlined from its Numba twin's Python
source when that is straight-line code over operations tier 0 has.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from . import ops as m
from .heap import Heap, NotTier0, Operand

_BINOPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.Pow: "pow",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
#: numpy functions of one argument by their tier 0 operation
_NP_UNARY = {name: name for name in m.UNARY if name not in ("copy", "not", "bool", "neg")}
_NP_UNARY.update({"absolute": "abs", "fabs": "abs", "negative": "neg", "logical_not": "not"})
_NP_BINARY = {
    "arctan2": "arctan2",
    "maximum": "maximum",
    "minimum": "minimum",
    "power": "pow",
    "hypot": "hypot",
    "fmod": "fmod",
    "copysign": "copysign",
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "true_divide": "div",
    "floor_divide": "floordiv",
    "mod": "mod",
    "remainder": "mod",
}
_NP_REDUCE = {"sum": "sum", "prod": "prod", "max": "max", "amax": "max", "min": "min"}
_NP_REDUCE.update({"amin": "min", "mean": "mean"})
#: generated code's helpers of two operands (the rest of their arguments report errors)
_HELPERS = {"_iadd": "add", "_isub": "sub", "_imul": "mul", "_ipow": "pow"}
_HELPERS.update({"_floordiv": "floordiv", "_mod": "mod", "_ifloordiv": "floordiv", "_imod": "mod"})
_HELPERS["_iipow"] = "pow"
_HELPERS.update({f"_c{op}": op for op in ("lt", "le", "gt", "ge", "eq", "ne")})


class ExpressionTranslator:
    """Expressions into instructions; :class:`~.translate.Translator` adds statements."""

    def __init__(self) -> None:
        self.heap = Heap()
        self.code: list[list[int]] = []
        self.params: dict[str, Operand] = {}
        self.locals: dict[str, Operand] = {}
        self.globals_: dict[str, Any] = {}
        #: names of an inlined kernel's parameters and locals
        self.scopes: list[dict[str, Operand]] = []
        self._consts: dict[tuple, Operand] = {}
        self._kernels: dict[str, Any] = {}
        #: heap offsets of the scalar table's integer slots (``S.view(np.int64)[k]``)
        self.int_slots: set[int] = set()
        #: the block being translated (a new number for every statement body), and the
        #: block where each local was last bound
        self.block = 0
        self._blocks = 0
        self._block_of: dict[str, int] = {}

    # -- heap and code ------------------------------------------------------------------------
    def emit(self, op: int, **cols: int) -> int:
        row = [0] * m.WIDTH
        row[m.OP] = op
        for name, v in cols.items():
            row[getattr(m, name.upper())] = int(v)
        self.code.append(row)
        return len(self.code) - 1

    def temp(self, shape: tuple[int, ...], is_int: bool = False) -> Operand:
        return Operand(self.heap.alloc(int(np.prod(shape)) if shape else 1), shape, is_int)

    def local(self, name: str, shape: tuple[int, ...], is_int: bool = False) -> Operand:
        """The local ``name`` (made on its first assignment, of that value's shape)."""
        var = self.locals.get(name)
        if var is not None and tuple(shape) != var.shape:
            # Python rebinds the name: fine in the block that defined it (straight-line code,
            # as Numba types it), not across blocks (a branch would decide the shape)
            if self._block_of.get(name) != self.block:
                raise NotTier0(f"local {name} changes shape")
            var = None
        if var is None:
            var = self.locals[name] = self.temp(shape, is_int)
            self._block_of[name] = self.block
        else:
            var.is_int = var.is_int and is_int
        return var

    def const(self, value: Any, is_int: bool = False) -> Operand:
        """A constant (a number, or an array of float64)."""
        a = np.asarray(value)
        if a.dtype.kind not in "biuf" or (a.dtype.kind == "f" and a.dtype != np.float64):
            raise NotTier0(f"a constant of dtype {a.dtype}")
        a = a.astype(np.float64)
        key = (a.shape, a.tobytes(), is_int)
        if key not in self._consts:
            self._consts[key] = Operand(self.heap.alloc(a.size, a), a.shape, is_int)
        return self._consts[key]

    # -- operations ---------------------------------------------------------------------------
    def copy_into(self, dst: Operand, src: Operand) -> None:
        if src.off == dst.off and src.size == dst.size:
            return
        mode = _mode(src, dst.shape)
        self.emit(m.UN, sub=m.U["copy"], d=dst.off, a=src.off, n=dst.size, fl=mode, e=src.size)

    def unary(self, name: str, a: Operand) -> Operand:
        out = self.temp(a.shape, a.is_int and name in ("neg", "abs", "copy"))
        self.emit(m.UN, sub=m.U[name], d=out.off, a=a.off, n=out.size, fl=_mode(a, a.shape))
        return out

    def binary(self, name: str, a: Operand, b: Operand, into: Operand | None = None) -> Operand:
        try:
            shape = tuple(np.broadcast_shapes(a.shape, b.shape))
        except ValueError:
            raise NotTier0(f"operands of shapes {a.shape} and {b.shape}") from None
        n = int(np.prod(shape)) if shape else 1
        fl = _mode(a, shape) | (_mode(b, shape) << 2)
        out = into if into is not None else self.temp(shape, a.is_int and b.is_int)
        if out.size != n:
            raise NotTier0(f"a value of shape {shape} stored into shape {out.shape}")
        self.emit(
            m.BIN, sub=m.BI[name], d=out.off, a=a.off, b=b.off, n=n, fl=fl, e=a.size, f=b.size
        )
        if name in ("div", "pow") or name in m.BINARY[7:]:
            out.is_int = False
        return out

    def where(self, c: Operand, a: Operand, b: Operand) -> Operand:
        shape = tuple(np.broadcast_shapes(c.shape, a.shape, b.shape))
        n = int(np.prod(shape)) if shape else 1
        if any(x.size not in (1, n) for x in (a, b, c)):
            raise NotTier0("a where() of shapes that broadcast")
        out = self.temp(shape, a.is_int and b.is_int)
        fl = _mode(a, shape) | (_mode(b, shape) << 2) | (_mode(c, shape) << 4)
        self.emit(m.WHERE, d=out.off, a=a.off, b=b.off, c=c.off, n=n, fl=fl)
        return out

    def dot(self, a: Operand, b: Operand, into: Operand | None = None) -> Operand:
        """``np.dot`` / ``@`` of vectors and matrices (into ``into``, which must not overlap
        the operands, as np.dot's ``out``)."""
        if not (1 <= len(a.shape) <= 2 and 1 <= len(b.shape) <= 2):
            raise NotTier0(f"a matrix product of shapes {a.shape} and {b.shape}")
        rows = a.shape[0] if len(a.shape) == 2 else 1
        inner = a.shape[-1]
        if b.shape[0] != inner:
            raise NotTier0(f"a matrix product of shapes {a.shape} and {b.shape}")
        cols = b.shape[1] if len(b.shape) == 2 else 1
        shape = (a.shape[:1] if len(a.shape) == 2 else ()) + (
            b.shape[1:] if len(b.shape) == 2 else ()
        )
        out = self.temp(shape) if into is None else into
        if into is not None and (
            into.size != rows * cols or _overlap(into, a) or _overlap(into, b)
        ):
            raise NotTier0("np.dot into an array of another size, or into an operand")
        self.emit(m.DOT, d=out.off, a=a.off, b=b.off, c=rows, e=inner, f=cols)
        return out

    def scalar(self, x: Operand) -> Operand:
        if x.size != 1:
            raise NotTier0(f"an array of shape {x.shape} where a number is needed")
        return Operand(x.off, (), x.is_int)

    def condition(self, node: ast.expr) -> Operand:
        return self.scalar(self.expr(node))

    @staticmethod
    def binop_name(op: ast.operator) -> str:
        if type(op) not in _BINOPS:
            raise NotTier0(f"the operator {type(op).__name__}")
        return _BINOPS[type(op)]

    # -- expressions --------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> Operand:
        handler = getattr(self, "_e_" + type(node).__name__, None)
        if handler is None:
            raise NotTier0(f"a {type(node).__name__} expression")
        return handler(node)

    def _e_Constant(self, node: ast.Constant) -> Operand:
        v = node.value
        if isinstance(v, bool) or isinstance(v, int):
            return self.const(int(v), True)
        if isinstance(v, float):
            return self.const(v)
        raise NotTier0(f"a constant of type {type(v).__name__}")

    def _e_Name(self, node: ast.Name) -> Operand:
        name = node.id
        for scope in reversed(self.scopes[-1:]):
            if name in scope:
                return scope[name]
        if self.scopes:  # a kernel sees its own names only
            raise NotTier0(f"a kernel reads the global {name}")
        if name in self.locals:
            return self.locals[name]
        if name in self.params:
            return self.params[name]
        value = self.globals_.get(name)
        if isinstance(value, (int, float, np.ndarray, np.integer, np.floating)):
            return self.const(value, isinstance(value, (int, np.integer)))
        raise NotTier0(f"the name {name}")

    def _e_BinOp(self, node: ast.BinOp) -> Operand:
        a, b = self.expr(node.left), self.expr(node.right)
        if isinstance(node.op, ast.MatMult):
            return self.dot(a, b)
        return self.binary(self.binop_name(node.op), a, b)

    def _e_UnaryOp(self, node: ast.UnaryOp) -> Operand:
        a = self.expr(node.operand)
        if isinstance(node.op, ast.UAdd):
            return a
        if isinstance(node.op, ast.USub):
            return self.unary("neg", a)
        if isinstance(node.op, ast.Not):
            return self.unary("not", self.scalar(a))
        raise NotTier0(f"the operator {type(node.op).__name__}")

    def _e_Compare(self, node: ast.Compare) -> Operand:
        left, out = self.expr(node.left), None
        for op, right_node in zip(node.ops, node.comparators):
            if type(op) not in _CMPOPS:
                raise NotTier0(f"the comparison {type(op).__name__}")
            right = self.expr(right_node)
            res = self.binary(_CMPOPS[type(op)], left, right)
            out = res if out is None else self.binary("and", out, res)
            left = right
        return out

    def _e_BoolOp(self, node: ast.BoolOp) -> Operand:
        """``a and b`` / ``a or b`` as truth values, short-circuit as in Python (a later
        operand may hold a bounds check that must not run)."""
        is_and = isinstance(node.op, ast.And)
        out = self.temp((), True)
        ends = []
        for k, v in enumerate(node.values):
            self.emit(m.UN, sub=m.U["bool"], d=out.off, a=self.scalar(self.expr(v)).off, n=1)
            if k == len(node.values) - 1:
                break
            if is_and:  # stop at the first false operand
                ends.append(self.emit(m.JZ, a=out.off))
            else:  # stop at the first true one
                stop = self.unary("not", out)
                ends.append(self.emit(m.JZ, a=stop.off))
        for k in ends:
            self.code[k][m.D] = len(self.code)
        return out

    def _e_IfExp(self, node: ast.IfExp) -> Operand:
        test = self.condition(node.test)
        jz = self.emit(m.JZ, a=test.off)
        yes = self.expr(node.body)
        out = self.temp(yes.shape)
        self.copy_into(out, yes)
        jmp = self.emit(m.JMP)
        self.code[jz][m.D] = len(self.code)
        self.copy_into(out, self.expr(node.orelse))
        self.code[jmp][m.D] = len(self.code)
        return out

    def _e_Subscript(self, node: ast.Subscript) -> Operand:
        place = self.subscript(node)
        if isinstance(place, Operand):
            return place
        arr, index = place
        out = self.temp(())
        self.emit(m.LDX, d=out.off, a=arr.off, b=index.off, c=-1, n=1, e=1)
        return out

    def subscript(self, node: ast.Subscript, store: bool = False) -> Any:
        """A subscript: a view (constant indices), or (array, index) for an element of a
        one-axis array at a computed index."""
        base_node = node.value
        if isinstance(base_node, ast.Attribute) and base_node.attr == "shape" and not store:
            axis = self._int_constant(node.slice)
            if isinstance(base_node.value, ast.Name) and base_node.value.id == "logbuf":
                out = self.temp((), True)
                self.emit(m.LOGLEN, d=out.off)
                return out
            shape = self.expr(base_node.value).shape
            return self.const(shape[axis], True)
        base = self.expr(base_node)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        consts = [self._int_constant(p, None) for p in parts]
        if all(c is not None for c in consts) and len(consts) <= len(base.shape):
            off, stride = base.off, base.size
            for axis, i in enumerate(consts):
                n = base.shape[axis]
                stride //= n
                if not -n <= i < n:
                    raise NotTier0("a constant index out of bounds")
                off += (i % n) * stride
            if base.is_int and base.off == self.params.get("S", base).off:
                self.int_slots.add(off)  # an integer slot of the scalar table
            return Operand(off, base.shape[len(consts) :], base.is_int)
        if len(parts) == 1 and len(base.shape) == 1 and not isinstance(parts[0], ast.Slice):
            return base, self.scalar(self.expr(parts[0]))
        lead = consts[:-1]
        if (  # a[0, i_]: an element of a (1, n) array (compiled element-wise loops)
            len(parts) == len(base.shape) > 1
            and all(c is not None for c in lead)
            and not isinstance(parts[-1], ast.Slice)
        ):
            row = self.subscript(ast.Subscript(base_node, ast.Tuple(parts[:-1], ast.Load())))
            return row, self.scalar(self.expr(parts[-1]))
        raise NotTier0("a subscript by slices or computed indices of a multi-axis array")

    def _int_constant(self, node: ast.expr, missing: Any = "raise") -> Any:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self._int_constant(node.operand, None)
            if inner is not None:
                return -inner
        if isinstance(node, ast.Name) and not self.scopes and node.id not in self.locals:
            v = self.globals_.get(node.id)
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                return int(v)
        if missing == "raise":
            raise NotTier0("an index that is not a constant")
        return missing

    def _e_Call(self, node: ast.Call) -> Operand:
        f = node.func
        if node.keywords:
            raise NotTier0("a call with keyword arguments")
        if (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id
            in (
                "np",
                "math",
            )
        ):
            return self._numpy_call(f.attr, node.args)
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "view"
            and isinstance(f.value, ast.Name)
            and f.value.id == "S"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Attribute)
            and node.args[0].attr == "int64"
        ):  # the scalar table's integer slots: their int64 bits (see Tier0.run)
            base = self.params["S"]
            return Operand(base.off, base.shape, True)
        if isinstance(f, ast.Attribute) and f.attr == "reshape" and len(node.args) == 1:
            a = self.expr(f.value)
            size = self._int_constant(node.args[0])
            if size != a.size:
                raise NotTier0("a reshape to another size")
            return Operand(a.off, (size,))
        if not isinstance(f, ast.Name):
            raise NotTier0("a call of a computed function")
        name, args = f.id, node.args
        if name in ("_scalar", "float") and len(args) == 1:
            x = self.scalar(self.expr(args[0]))
            return Operand(x.off, (), False)
        if name == "_iscalar" and len(args) == 4:
            x = self.scalar(self.expr(args[0]))
            if not x.is_int:  # (the generated code checks a float is whole: err -6)
                raise NotTier0("an integer slot given a float")
            return x
        if name in _HELPERS:
            return self.binary(_HELPERS[name], self.expr(args[0]), self.expr(args[1]))
        if name == "_i53":  # (its guard: tier 0 holds no integer beyond 2**53)
            return self.expr(args[0])
        if name == "_fma" and len(args) == 3:  # (rounded twice here: docs/compiled.md, Tier 0)
            prod = self.binary("mul", self.expr(args[0]), self.expr(args[1]))
            return self.binary("add", prod, self.expr(args[2]))
        if name == "_where":
            return self.where(*(self.expr(a) for a in args))
        if name in ("_ix1", "_ix2"):
            return self._checked_index(args, 1 if name == "_ix1" else 2)
        if name == "abs" and len(args) == 1:
            return self.unary("abs", self.expr(args[0]))
        if name.startswith("F") and name[1:].isdigit() and name in self.globals_:
            return self._kernel(name, [self.expr(a) for a in args])
        raise NotTier0(f"a call of {name}")

    def _checked_index(self, args: list[ast.expr], k: int) -> Operand:
        arr = self.expr(args[0])
        field_k = self._int_constant(args[1 + k])
        if len(arr.shape) < k:
            raise NotTier0("an index of a value with fewer axes")
        idx = []
        for axis in range(k):
            i = self.scalar(self.expr(args[1 + axis]))
            out = self.temp((), True)
            self.emit(m.CHK, d=out.off, b=i.off, n=arr.shape[axis], c=field_k, f=axis)
            idx.append(out)
        rest = arr.shape[k:]
        n = int(np.prod(rest)) if rest else 1
        strides = [int(np.prod(arr.shape[a + 1 :])) for a in range(k)]
        out = self.temp(rest)
        c, f = (idx[1].off, strides[1]) if k == 2 else (-1, 0)
        self.emit(m.LDX, d=out.off, a=arr.off, b=idx[0].off, e=strides[0], c=c, f=f, n=n)
        return out

    def _numpy_call(self, name: str, arg_nodes: list[ast.expr]) -> Operand:
        if name == "stack" and len(arg_nodes) == 1 and isinstance(arg_nodes[0], ast.Tuple):
            items = [self.expr(e) for e in arg_nodes[0].elts]
            if len({x.shape for x in items}) != 1:
                raise NotTier0("np.stack of values of different shapes")
            out = self.temp((len(items), *items[0].shape))
            for k, x in enumerate(items):
                self.copy_into(Operand(out.off + k * x.size, x.shape), x)
            return out
        args = [self.expr(a) for a in arg_nodes]
        if name == "where" and len(args) == 3:
            return self.where(*args)
        if name in ("ascontiguousarray", "asarray") and len(args) == 1:
            return args[0]  # (slots are C-contiguous float64 already)
        if name in _NP_UNARY and len(args) == 1:
            return self.unary(_NP_UNARY[name], args[0])
        if name in _NP_BINARY and len(args) == 2:
            return self.binary(_NP_BINARY[name], args[0], args[1])
        if name in ("dot", "matmul") and len(args) == 2:
            return self.dot(*args)
        if name in _NP_REDUCE and len(args) == 1:
            out = self.temp(())
            a = args[0]
            self.emit(m.RED, sub=m.R[_NP_REDUCE[name]], d=out.off, a=a.off, n=a.size)
            return out
        raise NotTier0(f"np.{name} with {len(args)} arguments")

    def _kernel(self, name: str, args: list[Operand]) -> Operand:
        """A registered kernel, inlined from its Numba twin's source."""
        from .translate import kernel_function

        if name not in self._kernels:
            self._kernels[name] = kernel_function(self.globals_[name])
        params, defaults, body, assigns = self._kernels[name]
        if len(args) > len(params) or len(args) < len(params) - len(defaults):
            raise NotTier0(f"kernel {name} called with {len(args)} arguments")
        scope = dict(zip(params, args))
        for p, d in zip(params[len(params) - len(defaults) :], defaults):
            if p not in scope:
                scope[p] = self.const(d, isinstance(d, int))
        self.scopes.append(scope)
        try:
            for s in assigns:
                scope[s.targets[0].id] = self.expr(s.value)
            return self.expr(body)
        finally:
            self.scopes.pop()


def _overlap(x: Operand, y: Operand) -> bool:
    return x.off < y.off + y.size and y.off < x.off + x.size


def _mode(x: Operand, shape: tuple[int, ...]) -> int:
    """How an element-wise instruction over ``shape`` reads operand ``x`` (see
    :mod:`.ops`): 0 one element for all, 1 element by element, 2 repeated (``x``'s shape
    is the trailing axes of ``shape``)."""
    n = int(np.prod(shape)) if shape else 1
    if x.size == 1 or n == 1:
        return 0
    if x.size == n:
        return 1
    inner = tuple(x.shape)
    while inner and inner[0] == 1:
        inner = inner[1:]
    if inner and tuple(shape[len(shape) - len(inner) :]) == inner:
        return 2
    raise NotTier0(f"a broadcast of shape {x.shape} to {shape}")
