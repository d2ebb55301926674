"""Calls of registered functions in generated code: kernels, Python calls, arguments.

A call binds to one registered function version; its Numba kernel becomes a module global
``F<k> = _jit(name, since, namespace)`` (the strings from the constant table), a function
without a kernel a global ``PY<k> = _python_kernel(...)`` called in Numba's object mode with the
kind of value the warm-up saw. Namespaces whose kernels compute by their inputs' dtype are
refused integer inputs (every compiled value is float64).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...errors import MDFError, NotCompilable
from ...plan import CallPlan, ValuePlan
from ...registry import REGISTRY
from . import helpers, runtime
from .cache import files_digest
from .layout import Slot, Storage
from .runtime import _jit, _schema

#: Function namespaces whose kernels compute by their inputs' dtype (integer division,
#: bitwise and logical ops, quantized arithmetic): integer or boolean inputs keep such a graph
#: off the compiled backend, which holds every value as float64.
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


class CallEmitter:
    """Code for calls of registered functions: Numba kernels as globals ``F<k>``, functions
    without one as ``PY<k>`` called through Python, argument temporaries, dtype checks."""

    def _check_call_inputs(self) -> None:
        """Refuse a function call whose inputs were integer or boolean arrays in the warm-up:
        the compiled backend holds every value as float64, and such a function (onnx::Div on
        integers, bitwise and logical ops, ...) would silently compute something else."""
        for nid, np_ in self.plan.nodes.items():
            st = self.interp.states[nid]
            env = {
                **st.inputs_read,
                **{k: st.lookup(k) for k in st.params},
                **{k: v for k, v in st.funcs.items() if v is not None},
            }
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
                for name in cp.input_names:
                    if constant_axes(cp, name, dict(cp.args).get(name)) is not None:
                        continue  # written as a tuple of integer literals
                    v = fp.get(name) if name is not None else None
                    kind = np.asarray(v).dtype.kind if v is not None else "f"
                    if kind in "biu":
                        raise NotCompilable(
                            f"{np_.where}.{where}: {cp.schema.name} gets {np.asarray(v).dtype} "
                            f"input '{name}'; the compiled backend computes in float64"
                        )

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
    ) -> str | None:
        """Code computing a call's value (argument temporaries appended to ``out``); ``slot``
        is where the value goes, whose kind a function without a Numba kernel must return.
        None when the code appended to ``out`` already wrote the value into ``slot`` (a
        sequence item by item, or element-wise when ``fuse``)."""
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
                and isinstance(vp.const, (int, np.integer))
                and not isinstance(vp.const, (bool, np.bool_))
            ):
                src = self.consts.literal(int(vp.const))  # an integer attribute stays an integer
            if src in self.tuple_of_var:  # a tuple is its items' variables: no copy
                local[argname] = src
                continue
            out.append(f"{ind}{t} = {src}")
            local[argname] = t
        if cp.schema is None:
            lines = self.seq_assign(slot, cp.value, local, ind) if slot is not None else None
            if lines is not None:
                out += lines
                return None
            return self.value(cp.value, local)
        fn = self.function_schema(cp) if cp.schema.jit is not None else None
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
            return self.python_call(cp, args, out, ind, tag, slot)
        return f"{fn}({', '.join(args)})"

    def python_call(
        self, cp: CallPlan, args: list[str], out: list[str], ind: str, tag: str, slot: Slot | None
    ) -> str:
        """A function without a Numba kernel, called through Python from the compiled loop
        (Numba's object mode) with the kind of value its slot had in the warm-up."""
        sch = cp.schema
        # one value: a one-output function, or the first output of one whose others the
        # model does not use (MaxPool's Indices, BatchNormalization's running statistics)
        first_only = cp.outputs_wanted == 1 and not cp.keep_tuple
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
        shape = None if slot.kind is Storage.SCALAR else tuple(slot.shape)
        key = (sch.name, sch.since, sch.namespace, shape)
        if key not in self.python_functions:
            var = f"PY{len(self.python_functions)}"
            self.python_functions[key] = var
            shape_src = (
                "None" if shape is None else "(" + "".join(f"{int(d)}, " for d in shape) + ")"
            )
            self.consts.kernel_global(var, "_python_kernel", sch, f", {shape_src}")
            self.functions[KernelKey(sch.name, sch.since, sch.namespace, python=True)] = var
        var = self.python_functions[key]
        if shape is None:
            typ = "float64"
        else:
            typ = "float64[" + ", ".join([":"] * (len(shape) - 1) + ["::1"]) + "]"
        res = f"r_{tag}"
        out += [f"{ind}with objmode({res}={typ!r}):", f"{ind}    {res} = {var}({', '.join(args)})"]
        return res

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
