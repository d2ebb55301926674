"""The ``onnx-legacy`` namespace: how the early ONNX operator forms are declared and registered.

The early operator documents (seeds 000 and 002, ONNX opsets 1-6) differ from the later forms that
the standard ``onnx`` family modules implement mostly in *how arguments arrive*: attributes where
later opsets take inputs, the limited broadcast, ``initial_h`` before ``sequence_lens``, ... Each
``legacy_*`` module of this package declares those forms with :func:`legacy_op` as thin adapters
that translate the arguments and call the family kernel.

Every legacy version is declared with ``since=1`` (a few also ``since=7``) under the standard name
``onnx::Op``; the registry picks the newest ``since <= opset`` across namespaces, so the standard
kernels (registered from the opset where the semantics changed, e.g. ``since=7`` for Add) take
over from there. To avoid an ambiguous tie, a legacy version is *not* registered when the standard
``onnx`` namespace already has a version with the same ``since`` (it is then listed in
:data:`SHADOWED`); :func:`legacy_schema` and :func:`call` still give it for direct calls and tests.

Declaring and registering are two steps: :func:`legacy_op` only records a schema in
:data:`SCHEMAS`; :func:`register_all`, called once by :func:`mdf_engine.onnx_ops.variants.load`
after every standard family module is imported, decides the ties. The registry's resolution thus
does not depend on which module was imported first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ...errors import MDFError
from ...registry import REGISTRY, OpSchema

NAMESPACE = "onnx-legacy"

#: (op, since) of legacy versions not registered because the standard namespace has the same since.
SHADOWED: list[tuple[str, int]] = []

#: Every legacy schema declared, registered or not: (op, since) -> OpSchema.
SCHEMAS: dict[tuple[str, int], OpSchema] = {}

_state = {"registered": False}


def keep_half(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """Kernels compute float16 inputs in float32; this gives their float outputs back as float16
    (the early documents allow float16 everywhere)."""

    @functools.wraps(kernel)
    def wrapped(*args: Any, **kw: Any) -> Any:
        out = kernel(*args, **kw)
        if not any(isinstance(a, np.ndarray) and a.dtype == np.float16 for a in args):
            return out
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(
            o.astype(np.float16) if isinstance(o, np.ndarray) and o.dtype.kind == "f" else o
            for o in outs
        )

    return wrapped


def legacy_op(
    op: str,
    inputs: Iterable[str] = (),
    attributes: dict[str, Any] | None = None,
    outputs: Iterable[str] = ("Y",),
    optional: Iterable[str] = (),
    variadic: bool = False,
    since: int = 1,
    python_only: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the legacy schema of ``onnx::op`` (registered later by :func:`register_all`)."""

    def deco(kernel: Callable[..., Any]) -> Callable[..., Any]:
        if _state["registered"]:
            raise RuntimeError(
                f"legacy onnx::{op} declared after the legacy forms were registered: list its "
                "module in mdf_engine.onnx_ops.variants.MODULES"
            )
        if (op, since) in SCHEMAS:
            raise ValueError(f"legacy onnx::{op} (since {since}) is declared twice")
        SCHEMAS[(op, since)] = OpSchema(
            namespace=NAMESPACE,
            op=op,
            inputs=tuple(inputs),
            attributes=dict(attributes or {}),
            outputs=tuple(outputs),
            kernel=keep_half(kernel),
            optional=frozenset(optional),
            variadic=variadic,
            since=since,
            python_only=python_only,
            doc=(kernel.__doc__ or "").strip(),
        )
        return kernel

    return deco


def register_all() -> None:
    """Register every declared legacy schema that does not tie with a standard ``onnx`` version
    (those are listed in :data:`SHADOWED`). Runs once; the standard families must be loaded."""
    if _state["registered"]:
        return
    _state["registered"] = True
    for key in sorted(SCHEMAS):
        sch = SCHEMAS[key]
        std = {v.since for v in REGISTRY.versions(sch.name) if v.namespace == "onnx"}
        if sch.since in std:
            SHADOWED.append(key)
        else:
            REGISTRY.add(sch)


def legacy_schema(op: str, since: int = 1) -> OpSchema:
    """The legacy schema of ``op`` (registered or shadowed)."""
    try:
        return SCHEMAS[(op, since)]
    except KeyError:
        raise MDFError(f"no legacy form of onnx::{op} since opset {since}") from None


def call(
    op: str, inputs: Sequence[Any], attributes: dict[str, Any] | None = None, since: int = 1
) -> list[Any]:
    """Run the legacy form of ``op`` directly (whatever the registry would pick)."""
    return list(legacy_schema(op, since).call(list(inputs), attributes))


def standard(op: str, since: int | None = None) -> OpSchema:
    """The standard ``onnx`` version of ``op`` that a legacy adapter delegates to: the one of
    ``since`` if given, else the earliest."""
    std = [v for v in REGISTRY.versions("onnx::" + op) if v.namespace == "onnx"]
    if since is not None:
        std = [v for v in std if v.since == since]
    if not std:
        at = "" if since is None else f" (since {since})"
        raise MDFError(
            f"onnx::{op} at an early opset runs the standard kernel{at}, which is not registered"
        )
    return std[0]


# ---------------------------------------------------------------- shared argument helpers


def arr(x: Any) -> np.ndarray:
    """An input as an ndarray."""
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def given(**kw: Any) -> dict[str, Any]:
    """The keyword arguments that are not None."""
    return {k: v for k, v in kw.items() if v is not None}


def float_dtype(x: np.ndarray) -> np.ndarray:
    """float32/float64 stay as they are, float16 is computed in float32, anything else in
    float64."""
    if x.dtype == np.float32 or x.dtype == np.float64:
        return x
    return x.astype(np.float32 if x.dtype == np.float16 else np.float64)


def text(v: Any) -> str:
    """A string attribute (bytes from protobuf are decoded)."""
    return v.decode() if isinstance(v, bytes) else str(v)


def coerce_2d(shape: tuple[int, ...], axis: int) -> tuple[int, int]:
    """(N, D) of the legacy 2-D coercion: N = prod(shape[:axis]), D = prod(shape[axis:])."""
    r = len(shape)
    a = axis + r if axis < 0 else axis
    if not 0 <= a <= r:
        raise MDFError(f"axis {axis} is out of range for a tensor of rank {r}")
    return int(np.prod(shape[:a], dtype=np.int64)), int(np.prod(shape[a:], dtype=np.int64))
