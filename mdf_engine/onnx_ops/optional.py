"""ONNX optional-value operators (opset 15+): Optional, OptionalHasElement, OptionalGetElement.

An ONNX *optional* holds either one element (a tensor or a sequence) or nothing. Here an optional
holding an element is that element itself (an ndarray or a Python list of arrays) and an empty
optional is ``None`` -- the same value an omitted input has, so an omitted input and an empty
optional read alike. All three operators are ``python_only`` (their values need not be arrays).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MDFError
from . import onnx_op


@onnx_op(
    "Optional",
    inputs=("input",),
    optional=("input",),
    attributes={"type": None},
    outputs=("output",),
    since=15,
    python_only=True,
)
def optional(input: Any = None, *, type: Any = None) -> tuple:
    """An optional holding ``input``, or an empty optional (``None``) when the input is omitted
    (the ``type`` attribute then names the element type; values carry no static type here)."""
    if input is None and type is None:
        raise MDFError("Optional: an empty optional needs the attribute 'type'")
    return (input,)


@onnx_op("OptionalHasElement", inputs=("input",), outputs=("output",), since=15, python_only=True)
def optional_has_element_15(input: Any) -> tuple:
    """A bool scalar: whether the optional ``input`` holds an element."""
    return (np.array(input is not None),)


@onnx_op(
    "OptionalHasElement",
    inputs=("input",),
    optional=("input",),
    outputs=("output",),
    since=18,
    python_only=True,
)
def optional_has_element(input: Any = None) -> tuple:
    """A bool scalar: whether ``input`` (an optional, a tensor or a sequence; may be omitted)
    holds an element. A tensor or a sequence always does."""
    return (np.array(input is not None),)


@onnx_op("OptionalGetElement", inputs=("input",), outputs=("output",), since=15, python_only=True)
def optional_get_element(input: Any) -> tuple:
    """The element of the optional ``input`` (from opset 18 a plain tensor or sequence is
    passed through); an MDFError for an empty optional."""
    if input is None:
        raise MDFError("OptionalGetElement: the optional is empty (it holds no element)")
    return (input,)
