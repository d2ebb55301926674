"""The trigonometric and hyperbolic standard functions that modeci-mdf 0.4.15 adds to the
spec (``tan, sinh, cosh, tanh, arcsin, arccos, arctan``): ``f(variable0, scale) = scale*f(variable0)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..registry import register


def _make(np_fn):
    def kernel(variable0, scale):
        return scale * np_fn(variable0)

    return kernel


for _name, _np_fn in (
    ("tan", np.tan),
    ("sinh", np.sinh),
    ("cosh", np.cosh),
    ("tanh", np.tanh),
    ("arcsin", np.arcsin),
    ("arccos", np.arccos),
    ("arctan", np.arctan),
):
    _k = _make(_np_fn)
    _k.__doc__ = f"{_name}(variable0, scale) = scale * {_name}(variable0)"
    _k.__name__ = _name
    register("mdf", _name, inputs=("variable0", "scale"), outputs=("out",), jit=njit(_k))(_k)
