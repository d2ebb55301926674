"""From a generated module's ``run`` to a tier 0 program (:mod:`.ops`).

The compiled backend's generator writes ``run`` (the whole graph, scheduler included) as
Python source over engine-made names only. Tier 0 reads that source's syntax tree instead of
compiling it: every name gets a place in the heap (arguments at the offsets the caller packs
them to, locals and temporaries after them, the module's constants last), and each statement
becomes instructions. Shapes are fixed (the compiled state's), so every instruction's size is
known here; anything this translator does not know (a helper, a function, a broadcast other
than a scalar against an array, integer arithmetic, a registered kernel that is more than one
``return`` expression) raises :class:`NotTier0` naming it, and the generated code runs as
before. Model text never reaches this module: the source it reads is the generator's, whose
model values are constant-table entries (``c<k>``), read here as values.
"""

from __future__ import annotations

import ast
import inspect
import os
import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import ops as m
from .expressions import ExpressionTranslator, NotTier0, Operand


@dataclass
class Program:
    """A tier 0 program: its instructions, the heap's initial contents, where each argument
    of ``run`` lives in the heap (name -> offset, shape), the ``meta`` row, and which slots
    of the scalar table are integers."""

    code: np.ndarray
    heap: np.ndarray
    args: dict[str, tuple[int, tuple[int, ...]]]
    meta: np.ndarray
    #: the scalar table's integer slots (indices into ``S``, whose elements hold int64 bits)
    int_slots: tuple[int, ...] = ()


class Translator(ExpressionTranslator):
    """Statements of ``run`` into instructions (expressions: :class:`ExpressionTranslator`)."""

    def __init__(self, module: Any, arg_shapes: dict[str, tuple[int, ...]]):
        super().__init__()
        self.module = module
        self.globals_ = vars(module)
        for name, shape in arg_shapes.items():
            if name not in ("logbuf", "rng"):  # (rng: random draws are not translated)
                self.params[name] = Operand(self.heap.alloc(int(np.prod(shape))), tuple(shape))
        self.loops: list[tuple[list[int], list[int]]] = []  # (breaks, continues) to patch
        self.returns: list[int] = []
        self.line = 0  # of the statement being translated (for the log line)

    # -- the module -------------------------------------------------------------------------
    def program(self) -> Program:
        """The program of the module's ``run``."""
        path = getattr(self.module, "__file__", None)
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        run = next(
            (s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "run"), None
        )
        if run is None:
            raise NotTier0("the generated module has no run function")
        for s in run.body:
            try:
                self.stmt(s)
            except NotTier0 as e:
                if " line " in str(e):
                    raise
                name = os.path.basename(path)
                raise NotTier0(f"{e} at line {self.line} of {name}") from None
        end = len(self.code)
        for k in self.returns:
            self.code[k][m.D] = end
        self.emit(m.HALT)
        meta = np.zeros(2, dtype=np.int64)
        meta[m.META_ERR] = self.params["err"].off
        meta[m.META_STEP] = self.local("q_c2", ()).off
        return Program(
            np.array(self.code, dtype=np.int64).reshape(-1, m.WIDTH),
            self.heap.image(),
            {k: (v.off, v.shape) for k, v in self.params.items()},
            meta,
            tuple(sorted(h - self.params["S"].off for h in self.int_slots)),
        )

    # -- statements -------------------------------------------------------------------------
    def body(self, stmts: list[ast.stmt]) -> None:
        """A statement body: a block of its own (see ``local``)."""
        outer = self.block
        self._blocks += 1
        self.block = self._blocks
        for x in stmts:
            self.stmt(x)
        self.block = outer

    def stmt(self, s: ast.stmt) -> None:
        self.line = s.lineno
        kind = type(s).__name__
        handler = getattr(self, "_s_" + kind, None)
        if handler is None:
            raise NotTier0(f"a {kind} statement")
        handler(s)

    def _s_Expr(self, s: ast.Expr) -> None:
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return  # a docstring
        call = s.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            if call.func.id == "_put" and len(call.args) == 2:
                dst = self.expr(call.args[0])
                self.copy_into(dst, self.expr(call.args[1]))
                return
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "np"
            and call.func.attr == "dot"
            and len(call.args) == 3
            and not call.keywords
        ):
            a, b, out = (self.expr(x) for x in call.args)
            self.dot(a, b, into=out)
            return
        raise NotTier0("a call as a statement")

    def _s_Pass(self, s: ast.Pass) -> None:
        return

    def _s_Assign(self, s: ast.Assign) -> None:
        if len(s.targets) != 1:
            raise NotTier0("an assignment to several targets")
        target = s.targets[0]
        if isinstance(target, ast.Name):
            if target.id in self.params:
                raise NotTier0(f"an assignment to the argument {target.id}")
            value = self.expr(s.value)
            var = self.local(target.id, value.shape, value.is_int)
            self.copy_into(var, value)
        elif isinstance(target, ast.Subscript):
            self.store(target, s.value)
        else:
            raise NotTier0("an assignment to a " + type(target).__name__)

    def _s_AugAssign(self, s: ast.AugAssign) -> None:
        if not isinstance(s.target, ast.Name) or s.target.id not in self.locals:
            raise NotTier0("an augmented assignment to something other than a local")
        var = self.locals[s.target.id]
        value = self.expr(s.value)
        if var.is_int and value.is_int and not isinstance(s.op, (ast.Add, ast.Sub)):
            raise NotTier0("integer arithmetic")
        self.binary(self.binop_name(s.op), var, value, into=var)

    def _s_If(self, s: ast.If) -> None:
        test = self.condition(s.test)
        jz = self.emit(m.JZ, a=test.off)
        self.body(s.body)
        if s.orelse:
            jmp = self.emit(m.JMP)
            self.code[jz][m.D] = len(self.code)
            self.body(s.orelse)
            self.code[jmp][m.D] = len(self.code)
        else:
            self.code[jz][m.D] = len(self.code)

    def _s_While(self, s: ast.While) -> None:
        if s.orelse:
            raise NotTier0("while ... else")
        top = len(self.code)
        test = self.condition(s.test)
        jz = self.emit(m.JZ, a=test.off)
        self.loops.append(([jz], []))
        self.body(s.body)
        self.emit(m.JMP, d=top)
        self._close_loop(top)

    def _s_For(self, s: ast.For) -> None:
        it = s.iter
        if (
            s.orelse
            or not isinstance(s.target, ast.Name)
            or not isinstance(it, ast.Call)
            or not isinstance(it.func, ast.Name)
            or it.func.id not in ("range", "prange")
            or not 1 <= len(it.args) <= 2
        ):
            raise NotTier0("a for loop other than over range()")
        start = self.expr(it.args[0]) if len(it.args) == 2 else self.const(0, True)
        stop = self.expr(it.args[-1])
        bound = self.temp(())
        self.copy_into(bound, stop)
        var = self.local(s.target.id, (), True)
        self.copy_into(var, start)
        top = len(self.code)
        test = self.temp(())
        self.binary("lt", var, bound, into=test)
        jz = self.emit(m.JZ, a=test.off)
        self.loops.append(([jz], []))
        self.body(s.body)
        step = len(self.code)
        self.binary("add", var, self.const(1, True), into=var)
        self.emit(m.JMP, d=top)
        self._close_loop(step)

    def _close_loop(self, again: int) -> None:
        breaks, continues = self.loops.pop()
        for k in breaks:
            self.code[k][m.D] = len(self.code)
        for k in continues:
            self.code[k][m.D] = again

    def _s_Break(self, s: ast.Break) -> None:
        self.loops[-1][0].append(self.emit(m.JMP))

    def _s_Continue(self, s: ast.Continue) -> None:
        self.loops[-1][1].append(self.emit(m.JMP))

    def _s_Return(self, s: ast.Return) -> None:
        if s.value is not None:
            raise NotTier0("a return with a value")
        self.returns.append(self.emit(m.JMP))

    def store(self, target: ast.Subscript, value_node: ast.expr) -> None:
        """``X[...] = value``: a fixed place, the schedule log, or an element at a computed
        index (of an array's flat view)."""
        base = target.value
        if isinstance(base, ast.Name) and base.id == "logbuf":
            index = self.expr(target.slice)
            value = self.expr(value_node)
            self.emit(m.LOG, a=self.scalar(value).off, b=self.scalar(index).off)
            return
        place = self.subscript(target, store=True)
        value = self.expr(value_node)
        if isinstance(place, Operand):
            self.copy_into(place, value)
            return
        arr, index = place  # an element of a flat view at a computed index
        value = self.scalar(value)
        self.emit(m.STX, d=value.off, a=arr.off, b=index.off, c=-1, n=1, e=1)


def kernel_function(dispatcher: Any) -> tuple[list[str], tuple, ast.expr, list[ast.stmt]]:
    """A registered Numba kernel as (parameters, defaults, return expression, assignments
    before it): it must be straight-line code (assignments to names, then one ``return``)."""
    py = getattr(dispatcher, "py_func", None)
    if py is None:
        raise NotTier0("a kernel without Python source")
    fn = ast.parse(textwrap.dedent(inspect.getsource(py))).body[0]
    if not isinstance(fn, ast.FunctionDef) or fn.args.vararg or fn.args.kwonlyargs:
        raise NotTier0(f"kernel {py.__name__} has a signature tier 0 does not take")
    body = [
        s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        raise NotTier0(f"kernel {py.__name__} is not straight-line code")
    for s in body[:-1]:
        if not (
            isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
        ):
            raise NotTier0(f"kernel {py.__name__} is not straight-line code")
    params = [a.arg for a in fn.args.args]
    return params, tuple(py.__defaults__ or ()), body[-1].value, body[:-1]
