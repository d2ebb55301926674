"""Random operators inside the compiled loop (issue 22, goal 2).

A registered function whose schema has a ``draw`` entry (``onnx::RandomNormal``,
``RandomUniform``, their ``Like`` forms and ``Bernoulli``: ``onnx_ops/random_ops.py``) is not
called through Python from the compiled loop when its attributes are model constants:

* **with a ``seed`` attribute** every call gives the same values (but Bernoulli's, which
  follow its input: a seeded Bernoulli stays a call through Python) (ONNX's rule, and the
  interpreted kernel's: a fresh ``RandomState(seed)`` per call), so the call is a constant:
  the Python kernel runs once while the code is generated and its result (the interpreted
  call's value, bit for bit) goes into the constant table. PsyNeuLink's exports
  (``DriftDiffusionIntegrator``'s ``random_draw``, the distribution functions) are all of
  this kind.
* **without one** the call is the function's Numba twin (``draw[0]``), called with ``rng``,
  an argument of the generated functions (:data:`.runtime.RUN_ARGS`) that holds the
  generator the interpreted kernels draw from (:func:`compiled_stream`).
  Numba's ``Generator.normal``/``uniform`` are numpy's algorithms on the same bit generator:
  each call draws numpy's numbers in numpy's order and leaves the stream where numpy would.

Anything else (an attribute computed from a value, a float16 output, a value kept in a list
or a variant, a node-by-node graph, whose node functions take no ``rng``) keeps the call
through Python. A graph that draws runs its batch rows one after the other (they share the
one stream) and is not run on tier 0.
"""

from __future__ import annotations

import weakref
from typing import Any

import numba
import numpy as np

from ... import randomness
from ...registry import REGISTRY
from .layout import Slot, Storage, array_dtype

#: The prefix of the name under which a draw kernel's global is kept among the module's kernels
DRAW = "draw:"
#: dtypes a compiled draw writes (numpy's float64 draws, or rounded to float32)
_DTYPES = {1: "float32", 11: "float64"}


def _draw(name: str, since: int, namespace: str) -> Any:
    """The Numba twin (``draw[0]`` of the schema) of a registered random function."""
    for sch in REGISTRY.versions(name):
        if sch.since == since and sch.namespace == namespace and "draw" in sch.extra:
            return sch.extra["draw"][0]
    raise KeyError(f"{name} has no compiled draw")  # (a cache record of another engine)


def draw_call(em: Any, cp: Any, slot: Slot | None, local: dict[str, str]) -> str | None:
    """Source of the value of the call ``cp`` (into ``slot``) drawn inside the compiled loop,
    or None when it stays a call through Python (see the module docstring). ``em`` is the
    module's code generator, ``local`` the source of each of the call's arguments."""
    sch = cp.schema
    spec = sch.extra.get("draw") if sch is not None else None
    if spec is None or slot is None or slot.seq or slot.alts or em.node_by_node is not None:
        return None
    if slot.kind not in (Storage.ARRAY, Storage.SCALAR):
        return None
    like = bool(sch.inputs)  # (the Like forms take their shape from their input)
    args = dict(cp.args)
    attrs = dict(sch.attributes)
    for name in sch.attributes:
        if name in args:
            if args[name].expr is not None:
                return None  # computed from a value: Python checks it at every call
            attrs[name] = args[name].const
    dtype = em.slot_dtype(slot)
    if slot.kind is Storage.SCALAR:
        if like or attrs["dtype"] is None:
            return None
        dtype = _DTYPES.get(int(attrs["dtype"]))
        shape: tuple[int, ...] = (1,)
    else:
        shape = tuple(int(d) for d in slot.shape)
    kernel, params, check = spec
    if check is None:  # (Bernoulli: drawn against its input, in its output's dtype)
        if attrs["seed"] is not None or slot.kind is not Storage.ARRAY:
            return None  # (a seeded call's values follow its input: the Python call)
        if array_dtype(np.zeros(0, dtype=dtype)) is not np.dtype(dtype).type:
            return None
        names = [cp.input_names[sch.inputs.index(p)] for p in params]
        values = [local.get(n) for n in names if n is not None]
        if len(values) != len(params) or not shape or any(map(em.consts.is_float, values)):
            return None
    elif dtype not in _DTYPES.values():
        return None
    elif attrs["seed"] is not None:
        return _fixed(em, cp, attrs, slot, shape, dtype, like)
    else:
        try:
            a, b = (float(attrs[p]) for p in params)
            check(np.random.default_rng(0), a, b)  # (numpy's errors: the Python call's)
        except Exception:  # noqa: BLE001 - a bad attribute fails the Python call as interpreted
            return None
        values = [em.consts.const(a), em.consts.const(b)]
    from .calls import KernelKey  # (calls imports this module)

    key = KernelKey(DRAW + sch.name, sch.since, sch.namespace)
    var = em.functions.get(key)
    if var is None:
        var = em.functions[key] = f"F{len(em.functions)}"
        em.consts.kernel_global(var, "_draw", sch)
        # (the kernel digest hashes the folder of a python=True key's kernel: the twin's)
        em.functions.setdefault(KernelKey(sch.name, sch.since, sch.namespace, python=True), var)
    dims = "(" + "".join(f"{d}, " for d in shape) + ")"
    template = em.consts.array(np.zeros(0, dtype=dtype))
    src = f"{var}(rng, {dims}, {template}, {', '.join(values)})"
    return src + "[0]" if slot.kind is Storage.SCALAR else src


def _fixed(
    em: Any, cp: Any, attrs: dict, slot: Slot, shape: tuple, dtype: str, like: bool
) -> str | None:
    """The constant a seeded call gives at every call (its Python kernel run once), or None
    when it is not of the slot's kind."""
    inputs = [np.zeros(shape, dtype=dtype)] if like else []
    try:
        value = np.asarray(cp.schema.call(inputs, attrs)[0])
    except Exception:  # noqa: BLE001 - the Python call raises it as the interpreter does
        return None
    if slot.kind is Storage.SCALAR:
        return em.consts.const(float(value.reshape(-1)[0])) if value.size == 1 else None
    if value.shape != shape or value.dtype.name != dtype:
        return None
    return em.consts.array(value)


def module_draws(functions: dict) -> bool:
    """Whether a generated module (its kernel globals ``functions``) draws from ``rng``."""
    return any(k.name.startswith(DRAW) for k in functions)


#: the OS-entropy generator of unseeded compiled draws (made on first use)
_entropy: np.random.Generator | None = None
#: (generator, its Numba holder) of the last :func:`compiled_stream` call
_held: tuple[np.random.Generator, Any] | None = None


@numba.njit(cache=True)
def _hold(gen):
    """A one-item typed list holding ``gen`` (made in nopython code: Numba's cache keeps it)."""
    out = numba.typed.List()
    out.append(gen)
    return out


def compiled_stream() -> Any:
    """The generator compiled code draws from, as Numba takes it cheaply: a one-item typed
    list holding the seeded stream of :mod:`mdf_engine.randomness` (unseeded: one generator
    seeded from OS entropy once per process, rather than a fresh one per call; the draws are
    alike independent). A bare Generator argument costs ~30 us per call to unbox (three
    ``ctypes.cast`` calls); the list unboxes it once, when made, and shares its bit
    generator, so draws on either side advance the one stream."""
    global _entropy, _held
    gen = randomness._stream
    if gen is None:
        if _entropy is None:
            _entropy = np.random.default_rng()
        gen = _entropy
    if _held is None or _held[0] is not gen:
        _held = (gen, _hold(gen))
    return _held[1]


_memo: dict[int, tuple[Any, bool]] = {}


def _plan_draws(plan: Any) -> bool:
    """Whether a graph plan calls a function with a compiled draw and no ``seed`` (its
    compiled code may read ``rng``); remembered per plan."""
    hit = _memo.get(id(plan))
    if hit is not None and hit[0]() is plan:
        return hit[1]
    draws = False
    for np_ in plan.nodes.values():
        calls = [cp for _, cp in np_.functions]
        calls += [pp.call for pp in np_.parameters if pp.call is not None]
        for cp in calls:
            if cp.schema is None or "draw" not in cp.schema.extra:
                continue
            seed = dict(cp.args).get("seed")
            draws = draws or seed is None or seed.expr is not None or seed.const is None
    _memo[id(plan)] = (weakref.ref(plan), draws)
    return draws


def stream_for(plan: Any) -> Any:
    """The ``rng`` argument of a generated function of ``plan``'s graph: the stream's Numba
    holder when the graph may draw from it, else None (no per-call cost)."""
    return compiled_stream() if _plan_draws(plan) else None
