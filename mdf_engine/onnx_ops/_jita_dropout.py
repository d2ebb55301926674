"""Nopython twins of Dropout in inference (the compiled backend's): the output is a copy of the
input and the mask all true (before opset 10: ones in the input's dtype), as the Python kernels
give them; ``ratio`` is checked as they check it. Training mode draws its mask from the Python
kernel's random stream, so a kernel told to train raises (and the run goes on interpreted)."""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ._shape_jit import _flat


def _pair(data):  # pragma: no cover - replaced by the overload
    """(a copy of ``data``, an all-true mask of its shape)."""


@overload(_pair)
def _pair_ov(data):
    if isinstance(data, (types.Number, types.Boolean)):
        return lambda data: (data, True)
    return lambda data: (data.copy(), np.ones(data.shape, np.bool_))


def _pair_of_ones(data):  # pragma: no cover - replaced by the overload
    """(a copy of ``data``, a mask of ones in its dtype: Dropout before opset 10)."""


@overload(_pair_of_ones)
def _pair_of_ones_ov(data):
    if isinstance(data, (types.Number, types.Boolean)):
        return lambda data: (data, data - data + 1)
    return lambda data: (data.copy(), np.ones_like(data))


def _training(training_mode):  # pragma: no cover - replaced by the overload
    """Whether ``training_mode`` (None: absent) asks for training."""


@overload(_training)
def _training_ov(training_mode):
    if training_mode is None or isinstance(training_mode, (types.NoneType, types.Omitted)):
        return lambda training_mode: False
    return lambda training_mode: _flat(training_mode)[0] != 0


def _ratio(ratio):  # pragma: no cover - replaced by the overload
    """``ratio`` as a float64 (None: 0.5)."""


@overload(_ratio)
def _ratio_ov(ratio):
    if ratio is None or isinstance(ratio, (types.NoneType, types.Omitted)):
        return lambda ratio: 0.5
    return lambda ratio: np.float64(_flat(ratio)[0])


@numba.njit(cache=True)
def _inference(data, ratio, training):
    r = _ratio(ratio)
    if not 0.0 <= r <= 1.0:
        raise ValueError("Dropout: ratio must be in [0, 1]")
    if training and r != 0.0:
        raise ValueError("Dropout: training mode draws its mask in Python, not compiled")
    return _pair(data)


@numba.njit(cache=True)
def dropout_jit(data, ratio, training_mode, seed):
    """Dropout (opset 12): ``ratio`` and ``training_mode`` inputs."""
    return _inference(data, ratio, _training(training_mode))


@numba.njit(cache=True)
def dropout10_jit(data, ratio):
    """Dropout (opsets 10-11): inference."""
    return _inference(data, ratio, False)


@numba.njit(cache=True)
def dropout1_jit(data, ratio, is_test):
    """Dropout (opsets 1-9): inference, the mask in the input's dtype."""
    return _pair_of_ones(data)
