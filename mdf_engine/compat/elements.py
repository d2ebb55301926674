"""The per-element classes of ``modeci_mdf.execution_engine``: :class:`EvaluableParameter`,
:class:`EvaluableFunction`, :class:`EvaluableInput` and :class:`EvaluableOutput`.

Each wraps one model element (a ``modeci_mdf.mdf`` object or an mdf_engine one, or a dict for
parameter conditions) and has a ``curr_value``. Used on its own, an element is evaluated against
a dict of values with the reference's rules (see each ``evaluate``); expressions go through
mdf_engine's expression compiler. Inside an :class:`~mdf_engine.compat.EvaluableGraph` (or a
standalone :class:`~mdf_engine.compat.EvaluableNode`) the element is *bound*: ``curr_value`` is
the engine's live value, and ``evaluate`` belongs to the graph.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from ..errors import MDFError
from .expressions import FORMAT_DEFAULT, check_array_format, evaluate_expr


class Runtime(Protocol):
    """What a bound element reads its value from and sends input values to."""

    def value(self, node: str, name: str) -> Any: ...

    def send(self, node: str, port: str, value: Any, reduce: str) -> None: ...

    def sent(self, node: str, port: str) -> Any: ...

    def has_run(self, node: str) -> bool: ...


def field(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a model element, which may be an object or (parameter conditions) a dict."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


class _Evaluable:
    """A ``curr_value`` that is the element's own, or the engine's when bound to a node."""

    _element_attr = "element"

    def __init__(self, verbose: bool = False):
        self.verbose = verbose
        self._value: Any = None
        self._runtime: Runtime | None = None
        self._node: str | None = None

    @property
    def _id(self) -> str:
        return str(field(getattr(self, self._element_attr), "id"))

    def bind(self, runtime: Runtime, node_id: str) -> None:
        """Make ``curr_value`` the live value of this element in ``node_id`` of ``runtime``."""
        self._runtime, self._node = runtime, node_id

    @property
    def bound(self) -> bool:
        return self._runtime is not None

    @property
    def curr_value(self) -> Any:
        if self._runtime is not None:
            return self._runtime.value(self._node, self._id)
        return self._value

    @curr_value.setter
    def curr_value(self, value: Any) -> None:
        if self._runtime is not None:
            raise MDFError(
                f"curr_value of '{self._id}' in node '{self._node}' is the engine's "
                "state and cannot be set; use an initializer of evaluate()"
            )
        self._value = value

    def _standalone(self) -> None:
        if self._runtime is not None:
            raise MDFError(
                f"'{self._id}' belongs to node '{self._node}' of an evaluable graph; "
                "call the graph's evaluate() instead"
            )


def _function_name(owner: Any) -> tuple[str | None, dict]:
    """The registered function an element calls, and its args (the ``{name: args}`` form too)."""
    fn, args = field(owner, "function"), field(owner, "args")
    if isinstance(fn, Mapping) and len(fn) == 1:
        fn, args = next(iter(fn.items()))
    return fn, dict(args or {})


def _lookup(name: str, where: str) -> Any:
    """The registered function ``name`` (also matched case-insensitively), else None."""
    from ..plan import load_function_libraries
    from ..registry import REGISTRY

    load_function_libraries([name])
    if name not in REGISTRY:
        lowered = {n.lower(): n for n in REGISTRY.names()}
        if name.lower() not in lowered:
            return None
        name = lowered[name.lower()]
    return REGISTRY.lookup(name, None, where)


def call_function(
    schema: Any, args: Mapping[str, Any], params: Mapping[str, Any], array_format: str, where: str
) -> Any:
    """Call a registered function: each arg is evaluated in order over the params and the args
    before it; a string attribute that is not an expression is passed as the string."""
    fp = dict(params)
    for k, v in args.items():
        if isinstance(v, str) and k in schema.attributes:
            fp[k] = evaluate_expr(v, fp, array_format, allow_strings_returned=True)
        else:
            fp[k] = evaluate_expr(v, fp, array_format)
    inputs, attrs = schema.bind({k: k for k in args}, f"{where}.args")
    out = schema.call([fp[n] if n is not None else None for n in inputs], {n: fp[n] for n in attrs})
    return out[0] if len(out) == 1 else out


class EvaluableParameter(_Evaluable):
    """A :class:`Parameter` and its current value: a constant or expression ``value``, a
    ``function`` with ``args``, or a ``time_derivative`` integrated by ``time_increment``; then
    each of its ``conditions`` whose ``test`` holds sets it to the condition's ``value``."""

    DEFAULT_INIT_VALUE = 0.0
    _element_attr = "parameter"

    def __init__(self, parameter: Any, verbose: bool = False):
        super().__init__(verbose)
        self.parameter = parameter

    def _is_stateful(self) -> bool:
        p = self.parameter
        if field(p, "time_derivative") is not None or field(p, "default_initial_value") is not None:
            return True
        value = field(p, "value")
        if isinstance(value, str):
            from ..expressions import names_in

            return self._id in names_in(value)
        return False

    def get_current_value(
        self, parameters: Mapping[str, Any], array_format: str = FORMAT_DEFAULT
    ) -> Any:
        """The current value, evaluating the parameter's initial value first if it has none
        yet (a stateful parameter's ``default_initial_value`` is returned, not kept)."""
        if self.bound:
            return self.curr_value
        p = self.parameter
        value, initial = field(p, "value"), field(p, "default_initial_value")
        if self._value is None and (value is not None or initial is not None):
            if self._is_stateful():
                if initial is not None:
                    return evaluate_expr(initial, parameters, array_format)
                return self.DEFAULT_INIT_VALUE
            env = dict(parameters)
            env[self._id] = self.DEFAULT_INIT_VALUE
            self._value = evaluate_expr(value, env, array_format)
        return self._value

    def evaluate(
        self,
        parameters: Mapping[str, Any],
        time_increment: float | None = None,
        array_format: str = FORMAT_DEFAULT,
    ) -> Any:
        """Update and return the value, given the values of the names it uses."""
        self._standalone()
        check_array_format(array_format)
        p, where = self.parameter, f"parameters.{self._id}"
        fn, args = _function_name(p)
        if field(p, "value") is not None:
            self._value = evaluate_expr(field(p, "value"), parameters, array_format)
        elif fn:
            schema = _lookup(fn, f"{where}.function")
            if schema is None:
                raise MDFError(f"unknown function '{fn}'", f"{where}.function")
            self._value = call_function(schema, args, parameters, array_format, where)
        elif field(p, "time_derivative") is not None:
            initial = field(p, "default_initial_value")
            if time_increment is None:
                self._value = evaluate_expr(initial, parameters, array_format)
            else:
                td = evaluate_expr(field(p, "time_derivative"), parameters, array_format)
                base = self._value
                if base is None:
                    base = (
                        evaluate_expr(initial, parameters, array_format)
                        if initial is not None
                        else self.DEFAULT_INIT_VALUE
                    )
                self._value = np.add(base, td * time_increment, casting="safe")
        for cond in field(p, "conditions") or []:
            mask = evaluate_expr(field(cond, "test"), parameters, array_format)
            val = evaluate_expr(field(cond, "value"), parameters, array_format)
            if self.verbose:
                print(f"    Condition {field(cond, 'id')}: {field(cond, 'test')} -> {mask}")
            if self._value is None:
                self._value = self.DEFAULT_INIT_VALUE
            self._value = np.where(mask, val, self._value)
        if self.verbose:
            print(f"    Evaluated parameter {self._id} = {self._value!r}")
        return self._value


class EvaluableFunction(_Evaluable):
    """A node :class:`Function`: a registered ``function`` called with ``args`` (it wins over
    ``value`` when both are given), or a ``value`` expression over the params and ``args``."""

    _element_attr = "function"

    def __init__(self, function: Any = False, verbose: bool = False):
        super().__init__(verbose)
        self.function = function

    def evaluate(
        self, parameters: Mapping[str, Any] | None = None, array_format: str = FORMAT_DEFAULT
    ) -> Any:
        """Evaluate with the values in ``parameters``, keep and return the result."""
        self._standalone()
        check_array_format(array_format)
        where = f"functions.{self._id}"
        fn, args = _function_name(self.function)
        params = dict(parameters or {})
        schema = _lookup(fn, f"{where}.function") if fn else None
        if schema is not None:
            self._value = call_function(schema, args, params, array_format, where)
        elif field(self.function, "value") is not None:
            for k, v in args.items():
                params[k] = evaluate_expr(v, params, array_format)
            self._value = evaluate_expr(field(self.function, "value"), params, array_format)
        elif fn:
            raise MDFError(f"unknown function '{fn}'", f"{where}.function")
        else:
            raise MDFError("a function needs a 'function' name or a 'value'", where)
        if self.verbose:
            print(f"    Evaluated function {self._id} = {self._value!r}")
        return self._value


def _port_shape(port: Any) -> tuple:
    shape = field(port, "shape")
    if shape is None:
        return ()
    if isinstance(shape, str):
        try:
            shape = ast.literal_eval(shape.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise MDFError(
                f"shape {shape!r} is not a tuple of ints", f"input_ports.{field(port, 'id')}.shape"
            ) from None
    return tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)


class EvaluableInput(_Evaluable):
    """An :class:`InputPort` and the value waiting in it. Before anything is sent it holds its
    ``default_value`` or zeros of its ``shape`` (under ``reduce: overwrite``); values sent in
    one step combine by ``reduce`` (overwrite, add, multiply); reading it empties it."""

    _element_attr = "input_port"

    def __init__(self, input_port: Any, verbose: bool = False):
        super().__init__(verbose)
        self.input_port = input_port
        if self._reduce == "overwrite":
            default = field(input_port, "default_value")
            if default is None:
                kind = field(input_port, "type")
                default = np.full(_port_shape(input_port), 0.0 if kind and "float" in kind else 0)
            self._value = default

    @property
    def _reduce(self) -> str:
        return field(self.input_port, "reduce") or "overwrite"

    @property
    def curr_value(self) -> Any:
        """Standalone: what the port holds. Bound: a value sent since the last evaluate(),
        else the value the node last read (the reference empties the port to None there),
        else, before the node first runs, the port's initial value."""
        rt = self._runtime
        if rt is None:
            return self._value
        sent = rt.sent(self._node, self._id)
        if sent is not None:
            return sent
        if rt.has_run(self._node):
            return rt.value(self._node, self._id)
        return self._value

    @curr_value.setter
    def curr_value(self, value: Any) -> None:
        _Evaluable.curr_value.fset(self, value)

    def set_input_value(self, value: Any) -> None:
        """Send a value to the port (combined with what it holds by the port's ``reduce``)."""
        if self.bound:
            self._runtime.send(self._node, self._id, value, self._reduce)
            return
        self._value = combine(self._value, value, self._reduce)

    def evaluate(
        self, parameters: Mapping[str, Any] | None = None, array_format: str = FORMAT_DEFAULT
    ) -> Any:
        """Read the port: its value (or its default / zeros if empty), which empties it."""
        self._standalone()
        value = self._value
        if value is None:
            default = field(self.input_port, "default_value")
            value = default if default is not None else np.full(_port_shape(self.input_port), 0.0)
        self._value = None
        return value


def combine(current: Any, value: Any, reduce: str) -> Any:
    """``value`` arriving at a port that holds ``current`` (None: nothing yet)."""
    if current is None or reduce == "overwrite":
        return value
    if reduce in ("add", "multiply"):
        result = current + value if reduce == "add" else current * value
        # the reference combines in place, so an array port stays an array (0-d included)
        return np.asarray(result) if isinstance(current, np.ndarray) else result
    raise MDFError(f"unknown reduce '{reduce}' (expected overwrite, add or multiply)")


class EvaluableOutput(_Evaluable):
    """An :class:`OutputPort`: its ``value`` expression over the node's values."""

    _element_attr = "output_port"

    def __init__(self, output_port: Any, verbose: bool = False):
        super().__init__(verbose)
        self.output_port = output_port

    def evaluate(
        self, parameters: Mapping[str, Any] | None = None, array_format: str = FORMAT_DEFAULT
    ) -> Any:
        """Evaluate the port's value with the values in ``parameters``."""
        self._standalone()
        self._value = evaluate_expr(
            field(self.output_port, "value"), parameters or {}, array_format
        )
        return self._value
