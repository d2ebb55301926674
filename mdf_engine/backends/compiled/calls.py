"""Calls of registered functions in generated code: kernels, Python calls, arguments.

A call binds to one registered function version; its Numba kernel becomes a module global
``F<k> = _jit(name, since, namespace)`` (the strings from the constant table), a function
without a kernel a global ``PY<k> = _python_kernel(...)`` called in Numba's object mode with the
kind of value the warm-up saw. Compiled values keep their dtype, so kernels that compute by
their inputs' dtype get integers and booleans as the interpreter gives them; only an integer
computed by an expression in a call's arguments is refused (its dtype is not known).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ...errors import MDFError, NotCompilable
from ...plan import CallPlan, ValuePlan
from ...registry import REGISTRY
from . import helpers, runtime
from .cache import files_digest
from .call_slots import CallSlots
from .draws import draw_call
from .layout import Slot, Storage, numba_type, value_key
from .runtime import _jit, _schema

#: Function namespaces whose kernels compute by their inputs' dtype (integer division,
#: bitwise and logical ops, quantized arithmetic): their integer and boolean inputs must reach
#: them in that dtype (constants as integers, slots keep theirs; see _check_call_inputs).
DTYPE_AWARE = ("onnx", "onnx-exp", "onnx-legacy", "onnx-mod", "hexagon")


class KernelKey(NamedTuple):
    """A kernel the generated module binds to a global: the function ``name`` an expression
    calls (its registered version: ``since`` and ``namespace`` None), or one registered version
    of a function a call binds to; ``python``: called through Python (it has no Numba kernel)."""

    name: str
    since: int | None = None
    namespace: str | None = None
    python: bool = False


def constant_axes(cp: CallPlan, name: str | None, vp: ValuePlan | None) -> list[int] | None:
    """The integers of a registry function's ``axes`` given as a model constant (an integer
    or a list of them), which compiled code passes as a tuple of integer literals (the form
    the reduction kernels type); None for any other argument."""
    if (
        name != "axes"
        or vp is None
        or vp.expr is not None
        or cp.schema is None
        or cp.schema.namespace not in DTYPE_AWARE
    ):
        return None
    c = np.asarray(vp.const)
    if c.dtype.kind not in "iu" or c.ndim > 1:
        return None
    return [int(x) for x in c.reshape(-1)]


#: Inputs and attributes that decide the shape of a kernel's result (the Reduce* ops'
#: ``axes``, CumSum's ``axis``, Transpose's ``perm``): Numba kernels type them as
#: compile-time constants or tuples.
SHAPE_INPUTS = ("axes", "axis", "shape", "perm")


def shape_from_values(cp: CallPlan) -> bool:
    """A call whose shape-deciding argument (:data:`SHAPE_INPUTS`) is not a model constant
    but a value (an input port's, a parameter's): its Numba kernel cannot type it, so the
    compiled loop calls its Python kernel, which checks at every call that the result keeps
    the warm-up's shape (a value that changes it stops the run with a message)."""
    return any(name in SHAPE_INPUTS and vp.expr is not None for name, vp in cp.args)


class CallEmitter(CallSlots):
    """Code for calls of registered functions: Numba kernels as globals ``F<k>``, functions
    without one as ``PY<k>`` called through Python, argument temporaries, dtype checks."""

    def _check_call_inputs(self) -> None:
        """Refuse a function call whose integer or boolean input would reach its kernel as a
        float: array slots and constants keep their dtype (int64 stays int64, bool stays
        bool), but numbers live in the float64 table ``S``, so such a function (onnx::Div on
        integers, bitwise and logical ops, indices, ...) would compute something else when an
        integer comes from a number slot or from an expression over slots."""
        for nid, np_ in self.plan.nodes.items():
            env = self.warm_env(nid)
            calls = [(f"functions.{fid}", cp) for fid, cp in np_.functions]
            calls += [
                (f"parameters.{pp.id}", pp.call) for pp in np_.parameters if pp.call is not None
            ]
            for where, cp in calls:
                if cp.schema is None or cp.schema.namespace not in DTYPE_AWARE:
                    continue  # the standard functions are float arithmetic
                fp = dict(env)
                try:
                    for name, vp in cp.args:
                        fp[name] = vp.evaluate(fp)
                except Exception:  # noqa: BLE001 - not knowable: do not compile it
                    raise NotCompilable(
                        f"{np_.where}.{where}: its arguments could not be checked"
                    ) from None
                args = dict(cp.args)
                for name in cp.input_names:
                    kind = _integer_kind(fp.get(name)) if name is not None else ""
                    how = self._typed_source(nid, name, args) if kind else None
                    if how:
                        raise NotCompilable(
                            f"{np_.where}.{where}: {cp.schema.name} gets {kind} input "
                            f"'{name}' {how}; the compiled backend holds it as float64"
                        )

    def _typed_source(self, nid: str, name: str, args: Mapping[str, ValuePlan]) -> str | None:
        """None when the compiled code passes argument ``name`` of a call in node ``nid``
        in the dtype the interpreter gives it (a constant, or the name of a number or array
        slot or of such an argument); else how it comes (an expression, a tuple)."""
        seen = set()
        while name in args and name not in seen:
            seen.add(name)
            vp = args[name]
            if vp.expr is None:
                return None  # constants keep their dtype (see call)
            if not vp.expr.is_bare_name():
                return "from an expression"
            name = vp.expr.tree.body.id
        slot = self.slots.get(value_key(nid, name))
        return "as a tuple" if slot is not None and slot.kind is Storage.TUPLE else None

    def function(self, name: str) -> str:
        """The global of the Numba kernel of the function ``name`` of an expression."""
        key = KernelKey(name)
        if key not in self.functions:
            sch = REGISTRY.lookup(name)
            if sch.jit is None:
                raise NotCompilable(f"function '{name}' has no Numba kernel")
            var = f"F{len(self.functions)}"
            self.functions[key] = var
            self.consts.kernel_global(var, "_jit", sch)
        return self.functions[key]

    def call(
        self,
        cp: CallPlan,
        names: Mapping[str, str],
        out: list[str],
        ind: str,
        tag: str,
        slot: Slot | None = None,
        fuse: bool = True,
        into: list[str] | None = None,
    ) -> str | None:
        """Code computing a call's value (argument temporaries appended to ``out``); ``slot``
        is where the value goes, whose kind a function without a Numba kernel must return.
        None when the code appended to ``out`` already wrote the value into ``slot`` (a
        sequence item by item, or element-wise when ``fuse``). ``into``: slots passed after
        the attributes to a Numba kernel that writes its value there (``node_code.
        INTO_KERNELS``); the call's text then ends with them."""
        fused = self.call_elementwise(cp, names, slot, ind) if fuse else None
        if fused is not None:
            out += fused
            return None
        local = dict(names)
        for k, (argname, vp) in enumerate(cp.args):
            t = f"t_{tag}_{k}"
            axes = constant_axes(cp, argname, vp)
            src = (
                self.value(vp, local)
                if axes is None
                else "(" + "".join(f"{self.consts.literal(a)}, " for a in axes) + ")"
            )
            src = self.stacked(vp, local) or src
            if (
                axes is None
                and cp.schema is not None
                and cp.schema.namespace in DTYPE_AWARE
                and vp.expr is None
            ):
                src = self.typed_constant(vp.const) or src
            if src in self.tuple_of_var or self.consts.is_float(src):
                local[argname] = src  # a tuple is its items' variables, a number its entry:
                continue  # no copy (element-wise code then reads the number itself)
            out.append(f"{ind}{t} = {src}")
            local[argname] = t
        if cp.schema is None:
            lines = self.seq_assign(slot, cp.value, local, ind) if slot is not None else None
            if lines is not None:
                out += lines
                return None
            return self.value(cp.value, local)
        drawn = draw_call(self, cp, slot, local)  # (random operators: draws.py)
        if drawn is not None:
            return drawn
        like = self.like_template(cp, slot)  # (a kernel told its result's shape and dtype)
        jit = has_kernel(cp) and (like is not None or not shape_from_values(cp))
        jit = jit and (like is not None or not cp.schema.extra.get("jit_like"))
        jit = jit and not self.dtype_not_held(cp, slot)
        parts = self.parts_of(slot) if cp.schema.extra.get("jit_parts") else None
        jit = jit and (parts is not None or not cp.schema.extra.get("jit_parts"))
        fn = self.function_schema(cp) if jit else None
        args = [local[n] if n is not None else "None" for n in cp.input_names]
        if not cp.schema.variadic:  # trailing optional inputs that were not given
            args += ["None"] * (len(cp.schema.inputs) - len(args))
        # attributes go positionally in the schema's order, defaults for those not given
        unknown = [n for n in cp.attribute_names if n not in cp.schema.attributes]
        if unknown:
            raise NotCompilable(f"function '{cp.schema.name}' has no attribute '{unknown[0]}'")
        aware = cp.schema.namespace in DTYPE_AWARE  # (whose kernels type ints as literals)
        args += [
            local[a]
            if a in cp.attribute_names
            else self.consts.literal(default)
            if aware and type(default) is int
            else self.consts.const(default)
            for a, default in cp.schema.attributes.items()
        ]
        if fn is None:
            return None if into else self.python_call(cp, args, out, ind, tag, slot)
        if like is not None:
            args.append(like)
        if parts is not None:  # (Split: the kernel writes its parts into their slots)
            out.append(f"{ind}{fn}({', '.join(args)}, {parts})")
            return None
        if into:
            return f"{fn}({', '.join(args + into)})"
        if len(cp.schema.outputs) > 1:
            if cp.schema.extra.get("skips_outputs"):  # (MaxPool) told how many are used
                args.append(self.consts.literal(int(cp.outputs_wanted or len(cp.schema.outputs))))
            return self.kernel_outputs(cp, f"{fn}({', '.join(args)})", out, ind, tag, slot)
        return f"{fn}({', '.join(args)})"

    def like_template(self, cp: CallPlan, slot: Slot | None) -> str | None:
        """For a kernel registered with ``jit_like=True`` (its result's shape, from values
        such as Reshape's ``shape``, is the warm-up's), the last argument it takes: an array of
        its result's shape and dtype (the array slot itself; for a number slot a number of its
        kind, and the kernel returns a number); None for any other call, or a slot of another
        kind (then Python calls it)."""
        if cp.schema is None or not cp.schema.extra.get("jit_like") or slot is None:
            return None
        if slot.alts or slot.seq or slot.kind not in (Storage.ARRAY, Storage.SCALAR):
            return None
        if slot.kind is Storage.ARRAY:
            return slot.var
        if slot.dtype == "bool":
            return "False"
        return self.consts.literal(0 if slot.dtype == "int64" else 0.0)

    def typed_constant(self, value: Any) -> str | None:
        """A constant argument of a function that computes by its inputs' dtype, in that
        dtype: an integer stays an integer literal (an attribute, an index), a list or array
        of integers or booleans an array of its dtype; None for floats (as ``value``)."""
        if isinstance(value, (bool, np.bool_)) or value is None or isinstance(value, str):
            return None
        try:
            c = np.asarray(value)
        except (ValueError, TypeError):
            return None
        if c.dtype.kind not in "biu":
            return None
        if c.ndim == 0 and c.dtype.kind == "b":
            return "True" if c else "False"
        return self.consts.literal(int(c)) if c.ndim == 0 else self.consts.array(c)

    def kernel_outputs(
        self, cp: CallPlan, src: str, out: list[str], ind: str, tag: str, slot: Slot | None
    ) -> str | None:
        """The call ``src`` of a Numba kernel of several outputs (it returns them all, as a
        tuple): the one output a value uses, or None when the outputs the model keeps as a
        tuple were written into the parts of a tuple slot (or the items of an array slot)."""
        n = cp.outputs_wanted or len(cp.schema.outputs)
        if n == 1 and not cp.keep_tuple:
            return f"{src}[0]"
        res = f"r_{tag}"
        if slot is not None and slot.kind is Storage.TUPLE and len(slot.parts) == n:
            out.append(f"{ind}{res} = {src}")
            out += [self.assign(p, f"{res}[{k}]", ind) for k, p in enumerate(slot.parts)]
            return None
        if slot is not None and slot.kind is Storage.ARRAY and slot.seq and slot.shape[0] == n:
            out.append(f"{ind}{res} = {src}")
            out += [f"{ind}_put({slot.var}[{k}], {res}[{k}])" for k in range(n)]
            return None
        raise NotCompilable(
            f"function '{cp.schema.name}': its {n} outputs go into a value of another kind"
        )

    def python_call(
        self, cp: CallPlan, args: list[str], out: list[str], ind: str, tag: str, slot: Slot | None
    ) -> str:
        """A function without a Numba kernel, called through Python from the compiled loop
        (Numba's object mode) with the kind of value its slot had in the warm-up."""
        sch = cp.schema
        # one value: a one-output function, or the first output of one whose others the
        # model does not use (MaxPool's Indices, BatchNormalization's running statistics)
        first_only = cp.outputs_wanted == 1 and not cp.keep_tuple
        several = self.python_outputs(cp, slot) if not first_only else None
        if several is not None:
            return self.python_tuple_call(cp, args, out, ind, tag, slot, several)
        if (
            slot is None
            or not first_only
            and (sch.extra.get("skips_outputs") or len(sch.outputs) != 1)
        ):
            why = (
                f"{len(sch.outputs)} outputs"
                if len(sch.outputs) != 1
                else "optional outputs"
                if sch.extra.get("skips_outputs")
                else "a value of no fixed kind"
            )
            raise NotCompilable(
                f"function '{sch.name}' has no Numba kernel, and a call "
                f"through Python with {why} is not compiled"
            )
        for i, dtype in self.narrow_numbers(cp, slot).items():  # (a uint8 number: 0-d uint8)
            t = f"t_{tag}_{len(cp.args) + i}"  # (after the argument temporaries)
            kind = self.consts.array(np.zeros(1, dtype))
            out += [f"{ind}{t} = {kind}.copy().reshape(())", f"{ind}{t}[()] = {args[i]}"]
            args[i] = t
        var = self.python_kernel(cp, [slot], False)
        res = f"r_{tag}"
        out += [
            f"{ind}with objmode({res}={self.slot_type(slot)!r}):",
            f"{ind}    {res} = {var}({', '.join(args)})",
        ]
        return res

    def python_outputs(self, cp: CallPlan, slot: Slot | None) -> int | None:
        """How many outputs a call through Python gives its slot when that slot holds them
        all (a tuple slot with one part per output, or an array slot whose first axis are
        outputs of one shape); None when the call does not give several outputs so."""
        n = cp.outputs_wanted or len(cp.schema.outputs)
        if slot is None or not (cp.keep_tuple or n > 1):
            return None
        if slot.kind is Storage.TUPLE and len(slot.parts) == n:
            if all(p.kind is not Storage.TUPLE and not p.seq for p in slot.parts):
                return n
        if slot.kind is Storage.ARRAY and slot.seq and slot.shape[0] == n:
            return n
        return None

    def python_tuple_call(
        self, cp: CallPlan, args: list[str], out: list[str], ind: str, tag: str, slot: Slot, n: int
    ) -> None:
        """A call through Python giving ``n`` outputs: into the parts of a tuple slot (one
        object-mode result each), or stacked into an array slot; None (the slot is written)."""
        if slot.kind is Storage.ARRAY:
            var = self.python_kernel(cp, [slot], True)
            res = f"r_{tag}"
            out += [
                f"{ind}with objmode({res}={self.slot_type(slot)!r}):",
                f"{ind}    {res} = {var}({', '.join(args)})",
                self.assign(slot, res, ind),
            ]
            return None
        var = self.python_kernel(cp, slot.parts, False)
        res = [f"r_{tag}_{k}" for k in range(n)]
        types = ", ".join(f"{r}={self.slot_type(p)!r}" for r, p in zip(res, slot.parts))
        out += [
            f"{ind}with objmode({types}):",
            f"{ind}    {', '.join(res)}, = {var}({', '.join(args)})",
        ]
        out += [self.assign(p, r, ind) for p, r in zip(slot.parts, res)]
        return None

    def python_kernel(self, cp: CallPlan, slots: list[Slot], stacked: bool) -> str:
        """The global ``PY<k>`` calling ``cp``'s function through Python, giving one value
        per slot of ``slots`` (of its kind, shape and dtype; ``stacked``: the outputs stacked
        into the one array slot)."""
        sch = cp.schema
        kinds = tuple(
            (
                None if s.kind is Storage.SCALAR else tuple(int(d) for d in s.shape),
                self.slot_dtype(s),
            )
            for s in slots
        )
        key = (sch.name, sch.since, sch.namespace, kinds, stacked, cp.outputs_wanted)
        if key not in self.python_functions:
            var = f"PY{len(self.python_functions)}"
            self.python_functions[key] = var
            src = ", ".join(
                "("
                + ("None" if sh is None else "(" + "".join(f"{d}, " for d in sh) + ")")
                + f", {self.constants.text(dt)})"
                for sh, dt in kinds
            )
            many = "None" if len(slots) == 1 and not stacked else str(len(slots))
            wanted = "None" if cp.outputs_wanted is None else str(int(cp.outputs_wanted))
            self.consts.kernel_global(
                var, "_python_kernel", sch, f", ({src}, ), {many}, {stacked}, {wanted}"
            )
            self.functions[KernelKey(sch.name, sch.since, sch.namespace, python=True)] = var
        return self.python_functions[key]

    def slot_dtype(self, slot: Slot) -> str:
        """The dtype name of a slot's value."""
        if slot.kind is not Storage.ARRAY:
            return slot.dtype
        return self.arrays[slot.index].dtype.name

    def slot_type(self, slot: Slot) -> str:
        """Numba's name of the type of a slot's value (object mode's result type)."""
        dt = numba_type(self.slot_dtype(slot))
        if slot.kind is Storage.SCALAR:
            return dt
        return dt + "[" + ", ".join([":"] * (len(slot.shape) - 1) + ["::1"]) + "]"

    def function_schema(self, cp: CallPlan) -> str:
        """The global of the Numba kernel of the function version a call binds to."""
        sch = cp.schema
        key = KernelKey(sch.name, sch.since, sch.namespace)
        if key not in self.functions:  # (call() sends functions without a kernel elsewhere)
            var = f"F{len(self.functions)}"
            self.functions[key] = var
            self.consts.kernel_global(var, "_jit", sch)
        return self.functions[key]

    def kernel_digest(self) -> str:
        """A hash of the source files of the folders holding every jitted function this graph
        calls, and of the helpers every generated function uses."""
        files = {Path(runtime.__file__), Path(helpers.__file__)}
        for key in self.functions:
            try:
                if key.python:
                    fn = _schema(key.name, key.since, key.namespace).kernel
                elif key.since is None:
                    fn = _jit(key.name, REGISTRY.lookup(key.name).since)
                else:
                    fn = _jit(key.name, key.since, key.namespace or None)
            except (NotCompilable, KeyError, ValueError, MDFError):
                continue
            module = sys.modules.get(getattr(getattr(fn, "py_func", fn), "__module__", ""))
            if module is not None and getattr(module, "__file__", None):
                # the whole family folder: kernels call helpers in sibling modules
                files.update(Path(module.__file__).parent.glob("*.py"))
        self.kernel_files = sorted(str(f) for f in files)
        return files_digest(self.kernel_files)


def has_kernel(cp: CallPlan) -> bool:
    """The call runs the Numba kernel of its function: there is one, and the call names none
    of the attributes the kernel does not take (the schema's ``jit_unless``)."""
    sch = cp.schema
    if sch is None or sch.jit is None:
        return False
    return not any(a in cp.attribute_names for a in sch.extra.get("jit_unless", ()))


def _integer_kind(v: Any) -> str:
    """The integer or boolean dtype of ``v`` (a value, or a sequence of values of any shapes,
    such as an ONNX sequence), or "" when it holds floats (or nothing)."""
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return next((k for k in map(_integer_kind, v) if k), "")
    dtype = np.asarray(v).dtype
    return str(dtype) if dtype.kind in "biu" else ""
