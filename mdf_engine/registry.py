"""The one table of every function an MDF model can call, with its schema.

Every callable that a model names (``linear``, ``onnx::Gemm``, ``hexagon::QuantizedConv2d_8x8to32``,
an ACT-R function, ...) is registered here exactly once, by the :func:`register` decorator placed
on its kernel. The schema carried by the decorator says which arguments are inputs (positional, in
order, possibly optional or variadic) and which are attributes (keyword, with defaults), what the
outputs are called, and from which opset version the semantics apply.

Kernels are pure: arrays (or ``None`` for an omitted optional input) in, a tuple of arrays out,
attributes as keyword arguments, no I/O and no global state. A kernel may also carry ``jit``, a
Numba ``njit`` function with the same positional inputs followed by the attributes in schema
order, that the compiled backend can call from nopython code. A ``jit`` kernel registered with
``elementwise=True`` computes each element of its result from the same element of its inputs
and attributes alone (scalars in, a scalar out work too): the compiled backend then calls it
once per element of the result's slot, without a temporary array. The ``jit`` of a function of
several outputs returns them all as a tuple; one also registered with ``skips_outputs=True``
(MaxPool) takes one more argument last, the number of outputs the model uses.

Namespaces name the origin of a function, so that tools can say which library a model needs:

* ``std``      the MDF standard functions (``linear``, ``logistic``, ...), called by bare name;
* ``onnx``     ``onnx::Op`` operators, versioned by opset (``since``);
* ``onnx-legacy`` / ``onnx-exp`` / ``onnx-mod`` early, experimental and modified ONNX sets;
* ``actr``     ACT-R functions;
* ``hexagon``  quantized Hexagon NN operators, called as ``hexagon::Op``;
* ``mdf``      functions added by modeci-mdf 0.4.15 beyond the spec;
* ``pnl``      functions that PsyNeuLink writes into its MDF exports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .errors import MDFError

#: Marks an attribute that has no default and must be given.
REQUIRED = object()

#: The prefix with which each namespace's functions are called from MDF ("" = bare name).
NAMESPACE_PREFIX = {
    "std": "",
    "mdf": "",
    "pnl": "",
    "actr": "",
    "onnx": "onnx::",
    "onnx-legacy": "onnx::",
    "onnx-exp": "onnx::",
    "onnx-mod": "onnx_mod::",
    "hexagon": "hexagon::",
}


@dataclass(frozen=True)
class OpSchema:
    """What is known about one registered function: its signature and its kernel."""

    namespace: str
    op: str
    inputs: tuple[str, ...]
    attributes: Mapping[str, Any]
    outputs: tuple[str, ...]
    kernel: Callable[..., Any]
    optional: frozenset[str] = frozenset()
    variadic: bool = False
    since: int = 1
    jit: Callable[..., Any] | None = None
    python_only: bool = False
    doc: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The name a model uses to call this function, e.g. ``onnx::Gemm``."""
        return NAMESPACE_PREFIX.get(self.namespace, self.namespace + "::") + self.op

    @property
    def argument_names(self) -> tuple[str, ...]:
        """Inputs then attributes, the order in which ``jit`` takes them."""
        return tuple(self.inputs) + tuple(self.attributes)

    @cached_property
    def _defaults(self) -> dict[str, Any]:
        """The attributes that have a default, with it (worked out once: ``call`` is hot)."""
        return {k: v for k, v in self.attributes.items() if v is not REQUIRED}

    @cached_property
    def _required_attributes(self) -> tuple[str, ...]:
        return tuple(k for k, v in self.attributes.items() if v is REQUIRED)

    def required_inputs(self) -> list[str]:
        return [n for n in self.inputs if n not in self.optional]

    def bind(self, args: Mapping[str, Any], where: str = "") -> tuple[list[Any], dict[str, Any]]:
        """Split named MDF arguments into positional inputs and attributes.

        Raises :class:`MDFError` naming ``where`` for an unknown argument or a missing required
        input or attribute. For a variadic op, extra arguments named ``<last input><k>`` or any
        unknown name are taken as further inputs in the given order.
        """
        inputs: list[Any] = []
        attrs: dict[str, Any] = {}
        rest = dict(args)
        for n in self.inputs:
            if n in rest:
                inputs.append(rest.pop(n))
            elif n in self.optional or self.variadic:
                inputs.append(None)
            else:
                raise MDFError(
                    f"{self.name} needs input '{n}' (inputs: {', '.join(self.inputs)})", where
                )
        for n, default in self.attributes.items():
            if n in rest:
                attrs[n] = rest.pop(n)
            elif default is REQUIRED:
                raise MDFError(f"{self.name} needs attribute '{n}'", where)
        if rest:
            if self.variadic:
                if inputs and inputs[-1] is None:
                    inputs.pop()
                inputs.extend(rest.values())
            else:
                known = ", ".join(self.argument_names) or "none"
                raise MDFError(
                    f"{self.name} has no argument '{next(iter(rest))}' (known: {known})", where
                )
        while inputs and inputs[-1] is None:
            i = len(inputs) - 1
            if i < len(self.inputs) and self.inputs[i] not in self.optional and not self.variadic:
                break
            inputs.pop()
        return inputs, attrs

    def call(
        self,
        inputs: Iterable[Any],
        attributes: Mapping[str, Any] | None = None,
        outputs_wanted: int | None = None,
    ) -> tuple:
        """Run the kernel: fills attribute defaults, returns a tuple of outputs.

        ``outputs_wanted``: how many leading outputs the caller uses; a kernel registered with
        ``skips_outputs=True`` gets it and may leave the others out of its result."""
        attrs = dict(self._defaults)
        if attributes:
            for k in attributes:
                if k not in self.attributes:
                    raise MDFError(f"{self.name} has no attribute '{k}'")
            attrs.update(attributes)
        for k in self._required_attributes:
            if k not in attrs:
                raise MDFError(f"{self.name} needs attribute '{k}'")
        if outputs_wanted is not None and self.extra.get("skips_outputs"):
            attrs["outputs_wanted"] = int(outputs_wanted)
        out = self.kernel(*inputs, **attrs)
        if not isinstance(out, tuple):
            out = (out,)
        return out


class Registry:
    """Name -> versions of :class:`OpSchema`; lookup picks the newest version <= opset."""

    def __init__(self) -> None:
        self._ops: dict[str, list[OpSchema]] = {}
        #: (name, opset) -> schema, for lookups already made; emptied by every ``add``
        self._found: dict[tuple[str, int | None], OpSchema] = {}

    def add(self, schema: OpSchema) -> None:
        versions = self._ops.setdefault(schema.name, [])
        if any(v.since == schema.since and v.namespace == schema.namespace for v in versions):
            raise ValueError(f"{schema.name} (since {schema.since}) is registered twice")
        versions.append(schema)
        versions.sort(key=lambda s: s.since)
        self._found.clear()

    def __contains__(self, name: str) -> bool:
        return name in self._ops

    def lookup(self, name: str, opset: int | None = None, where: str = "") -> OpSchema:
        """The schema for ``name`` at ``opset`` (the newest version if opset is None)."""
        found = self._found.get((name, opset))
        if found is not None:
            return found
        versions = self._ops.get(name)
        if not versions:
            raise MDFError(f"unknown function '{name}'", where)
        if opset is None:
            found = versions[-1]
        else:
            usable = [v for v in versions if v.since <= opset]
            if not usable:
                raise MDFError(
                    f"{name} has no version at opset {opset} (earliest is {versions[0].since})",
                    where,
                )
            found = usable[-1]
        self._found[(name, opset)] = found
        return found

    def names(self, namespace: str | None = None) -> list[str]:
        """Registered names, optionally only those with a version in ``namespace``."""
        return sorted(
            n
            for n, vs in self._ops.items()
            if namespace is None or any(v.namespace == namespace for v in vs)
        )

    def versions(self, name: str) -> list[OpSchema]:
        return list(self._ops.get(name, []))


#: The process-wide registry. Family modules fill it at import time.
REGISTRY = Registry()


def register(
    namespace: str,
    op: str,
    inputs: Iterable[str] = (),
    attributes: Mapping[str, Any] | None = None,
    outputs: Iterable[str] = ("Y",),
    optional: Iterable[str] = (),
    variadic: bool = False,
    since: int = 1,
    jit: Callable[..., Any] | None = None,
    python_only: bool = False,
    **extra: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register the decorated kernel under ``namespace``/``op`` with this schema."""

    def deco(kernel: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.add(
            OpSchema(
                namespace=namespace,
                op=op,
                inputs=tuple(inputs),
                attributes=dict(attributes or {}),
                outputs=tuple(outputs),
                kernel=kernel,
                optional=frozenset(optional),
                variadic=variadic,
                since=since,
                jit=jit,
                python_only=python_only,
                doc=(kernel.__doc__ or "").strip(),
                extra=extra,
            )
        )
        return kernel

    return deco
