"""Numba kernels shared by the elementwise ONNX families (arithmetic, logic, activations, variadic).

One generic loop per family, dispatched by a small integer op code, keeps the number of compiled
specializations small (float64, float32, int64, uint64 and bool only):

* ``arith_core``   binary arithmetic (Add Sub Mul Div Pow Mod Max Min PRelu) with broadcasting;
* ``compare_core`` comparisons and boolean logic (output bool) with broadcasting;
* ``shift_core``   BitShift on int64/uint64 with the width of the original dtype;
* ``unary_core``   float unary math and activations (three float parameters);
* ``unary_int_core`` the unary ops that are defined on integers (Abs Neg Sign Relu Clip ...);
* ``axis_core``    Softmax/LogSoftmax/Hardmax over the middle axis of an (outer, n, inner) view;
* ``where_core``   Where with three-way broadcasting.

Broadcast operands are passed flat (1-D, C-contiguous) with ``shape`` (of the output) and element
strides per operand (0 along broadcast dimensions); equal-size operands and size-1 operands take
fast linear paths and need no shape information (pass empty arrays). The ``*_nb`` functions are
nopython entry points taking whole arrays (any rank, or scalars) for the compiled MDF backend.

This module is the one name the families import (``from . import _ew_kernels as K``): it gathers
the op codes (:mod:`._ew_codes`), the binary loops (:mod:`._ew_binary`, over the scalar ops of
:mod:`._ew_scalar`) and the unary and axis loops (:mod:`._ew_unary`), and defines
:func:`jit_entry`, which turns a family's kernel into the registry's ``jit=`` callable.
"""

from __future__ import annotations

from numba.extending import overload

from ._ew_binary import (
    arith_core,
    arith_nb,
    broadcast_nb,
    bshape_nb,
    bstrides_nb,
    compare_core,
    compare_nb,
    shape_array_nb,
    shift_core,
    where_core,
)
from ._ew_codes import *  # noqa: F403  (the op codes, read as K.ADD, K.RELU, ...)
from ._ew_codes import __all__ as _CODES
from ._ew_unary import axis_core, classify_core, unary_core, unary_int_core, unary_nb

__all__ = [
    *_CODES,
    "arith_core",
    "arith_nb",
    "axis_core",
    "broadcast_nb",
    "bshape_nb",
    "bstrides_nb",
    "classify_core",
    "compare_core",
    "compare_nb",
    "jit_entry",
    "shape_array_nb",
    "shift_core",
    "unary_core",
    "unary_int_core",
    "unary_nb",
    "where_core",
]

# ---- jit= entries: plain functions that compile inline into nopython callers -------------------


_NB_NAMES: set[str] = set()


def jit_entry(nb, name: str, kernel, n_inputs: int | None):
    """A function named ``name`` for the registry's ``jit=``.

    Called from nopython code it compiles ``nb`` (a plain Python function taking the inputs then
    the attributes positionally) inline into the caller; called from Python it runs the Python
    ``kernel`` (``n_inputs`` positional inputs, the remaining arguments as its attributes, or
    all arguments as inputs when ``n_inputs`` is None) and returns its one output array.

    A Numba ``overload`` rather than one ``njit`` dispatcher per op keeps compilation cheap: a
    compiled model links each shared core above once, however many ops use it.
    """
    import inspect

    # ``nb`` is often a closure made by a factory (one per op, same source line). Numba names
    # the compiled function and its disk-cache file after ``__qualname__`` (+ line), so two ops
    # from one factory got the same symbol and, once cached, a graph calling both (e.g. Selu
    # and HardSigmoid) linked one op's code for the other. A unique, deterministic name per
    # entry point keeps them apart.
    base = f"{name}_nb_{nb.__module__.rsplit('.', 1)[-1]}"
    unique = base
    while unique in _NB_NAMES:
        unique = f"{base}{len(_NB_NAMES)}"
    _NB_NAMES.add(unique)
    nb.__qualname__ = nb.__name__ = unique
    params = list(inspect.signature(nb).parameters.values())
    attr_names = [p.name for p in params][n_inputs or 0 :] if n_inputs is not None else []

    def py(*args):
        if n_inputs is None:
            out = kernel(*args)
        else:
            out = kernel(*args[:n_inputs], **dict(zip(attr_names, args[n_inputs:])))
        return out[0] if isinstance(out, tuple) else out

    sig = ", ".join(str(p) for p in params)
    call = ", ".join(("*" if p.kind == p.VAR_POSITIONAL else "") + p.name for p in params)
    ns: dict = {"_py": py, "_nb": nb}
    exec(f"def {name}({sig}):\n    return _py({call})\n", ns)
    exec(f"def _typer({sig}):\n    return _nb\n", ns)
    entry = ns[name]
    entry.__doc__ = f"nopython-callable form of {getattr(kernel, '__name__', name)}"
    overload(entry, jit_options={"cache": True})(ns["_typer"])
    return entry
